#pragma once
// Device-memory hygiene of a backend run, host side: the CUDA backend applies it to the bytes it
// downloads; kept apart from CUDA so it is testable without a device.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor_view.hpp"

namespace kparity::judging {

// Every device buffer sits between two guard bands of kGuardBytes filled with guard_pattern(dtype):
// one element, repeated, chosen to be a NaN for float dtypes (a read past the end then poisons the
// result) and a huge value for integers (an index read past the end faults).
inline constexpr std::size_t kGuardBytes = 256;
std::vector<std::byte> guard_pattern(DType t);
// Fills `band` with the pattern, repeated from the band's first byte.
void fill_guard(std::span<std::byte> band, std::span<const std::byte> pattern);
// "" when `band` still holds the pattern, else "<what> of `<tensor>` overwritten: N of M bytes
// changed, first at byte i". `what` is e.g. "guard band before" / "guard band after".
std::string check_guard(std::string_view tensor, std::string_view what, std::span<const std::byte> band,
                        std::span<const std::byte> pattern);
// The bytes of a tensor's memory span that a run must leave as they were: all of them for a tensor
// the op does not write, only those between elements (padding of strided layouts) for one it
// writes. `layout` gives the element offsets (its data pointer is not used); `before`/`after` are
// the span's bytes from its lowest to its highest element. "" when nothing forbidden changed.
std::string check_untouched(std::string_view tensor, const TensorView& layout, bool written,
                            std::span<const std::byte> before, std::span<const std::byte> after);

}  // namespace kparity::judging
