// Guard bands and untouched bytes (guard.hpp).
#include "kparity/judge/guard.hpp"

#include <fmt/format.h>

#include "kparity/judge/harness_mutant.hpp"

namespace kparity::judging {

std::vector<std::byte> guard_pattern(DType t) {
  // Float patterns are quiet NaNs with a recognisable payload (0xDE..), so a guard value read by
  // mistake surfaces as NaN in the output; integer patterns are huge positive values, so a guard
  // read as an index is out of range. Bytes little-endian, one element long.
  switch (t) {
    case DType::f32: return {std::byte{0xAD}, std::byte{0xDE}, std::byte{0xC0}, std::byte{0x7F}};
    case DType::f16:
    case DType::bf16: return {std::byte{0xDE}, std::byte{0x7F}};
    case DType::i32: return {std::byte{0xAD}, std::byte{0xDE}, std::byte{0xDE}, std::byte{0x7E}};
    case DType::i64:
      return {std::byte{0xAD}, std::byte{0xDE}, std::byte{0xAD}, std::byte{0xDE},
              std::byte{0xAD}, std::byte{0xDE}, std::byte{0xDE}, std::byte{0x7E}};
    case DType::boolean: return {std::byte{0xA5}};
  }
  return {std::byte{0xA5}};
}

void fill_guard(std::span<std::byte> band, std::span<const std::byte> pattern) {
  for (std::size_t i = 0; i < band.size(); ++i) band[i] = pattern[i % pattern.size()];
}

std::string check_guard(std::string_view tensor, std::string_view what, std::span<const std::byte> band,
                        std::span<const std::byte> pattern) {
  if (harness_mutant(HarnessMutant::guard_band_off)) return {};
  std::size_t changed = 0, first = 0;
  for (std::size_t i = 0; i < band.size(); ++i) {
    if (band[i] == pattern[i % pattern.size()]) continue;
    if (changed++ == 0) first = i;
  }
  if (changed == 0) return {};
  return fmt::format("{} of `{}` overwritten: {} of {} bytes changed, first at byte {}", what, tensor, changed,
                     band.size(), first);
}

std::string check_untouched(std::string_view tensor, const TensorView& layout, bool written,
                            std::span<const std::byte> before, std::span<const std::byte> after) {
  if (harness_mutant(HarnessMutant::write_set_off)) return {};
  if (before.size() != after.size())
    return fmt::format("`{}`: {} bytes uploaded, {} downloaded", tensor, before.size(), after.size());
  std::vector<bool> element(before.size(), false);
  if (written && layout.numel() > 0) {
    const auto lo = layout.offset_range().first;
    const std::size_t es = layout.element_size();
    for_each_element(layout, [&](std::span<const std::int64_t>, std::int64_t off) {
      const std::size_t at = static_cast<std::size_t>(off - lo) * es;
      for (std::size_t b = 0; b < es && at + b < element.size(); ++b) element[at + b] = true;
    });
  }
  std::size_t changed = 0, first = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (element[i] || before[i] == after[i]) continue;
    if (changed++ == 0) first = i;
  }
  if (changed == 0) return {};
  return fmt::format("`{}`: {} {} bytes changed by the run, first at byte {} of its memory span", tensor, changed,
                     written ? "padding (non-element)" : "input", first);
}

}  // namespace kparity::judging
