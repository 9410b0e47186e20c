#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kparity {

// Where a tensor lives. Host code never dereferences a cuda pointer.
struct Device {
  enum class Kind : unsigned char { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;

  static constexpr Device cpu() noexcept { return {Kind::cpu, 0}; }
  static constexpr Device cuda(int i = 0) noexcept { return {Kind::cuda, i}; }
  constexpr bool is_cpu() const noexcept { return kind == Kind::cpu; }
  constexpr bool is_cuda() const noexcept { return kind == Kind::cuda; }
  friend constexpr bool operator==(Device a, Device b) noexcept {
    return a.kind == b.kind && (a.kind == Kind::cpu || a.index == b.index);
  }

  // torch's spelling: "cpu", "cuda:0".
  std::string str() const;
  // Accepts "cpu", "cuda", "cuda:N".
  static std::optional<Device> parse(std::string_view s);
};

}  // namespace kparity
