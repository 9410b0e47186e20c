#include "kparity/core/device.hpp"

#include <charconv>

namespace kparity {

std::string Device::str() const {
  if (is_cpu()) return "cpu";
  return "cuda:" + std::to_string(index);
}

std::optional<Device> Device::parse(std::string_view s) {
  if (s == "cpu") return Device::cpu();
  if (s == "cuda") return Device::cuda(0);
  constexpr std::string_view prefix = "cuda:";
  if (!s.starts_with(prefix)) return std::nullopt;
  std::string_view num = s.substr(prefix.size());
  // from_chars accepts neither '+' nor whitespace, so "cuda:+1" and "cuda: 1" are rejected too.
  int i = -1;
  auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), i);
  if (num.empty() || ec != std::errc() || end != num.data() + num.size() || i < 0) return std::nullopt;
  return Device::cuda(i);
}

}  // namespace kparity
