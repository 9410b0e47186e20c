#include "kparity/reference/precision.hpp"

namespace kparity::reference {

std::string_view precision_name(Precision p) noexcept {
  switch (p) {
    case Precision::oracle: return "oracle";
    case Precision::faithful: return "faithful";
  }
  return "unknown";
}

std::optional<Precision> parse_precision(std::string_view s) noexcept {
  if (s == "oracle") return Precision::oracle;
  if (s == "faithful") return Precision::faithful;
  return std::nullopt;
}

}  // namespace kparity::reference
