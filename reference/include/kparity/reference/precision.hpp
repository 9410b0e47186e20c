#pragma once
#include <optional>
#include <string_view>

namespace kparity::reference {

// oracle: inputs widened exactly, every sum and dot product exact and rounded once to fp64
// (exact_sum.hpp), fp64 elsewhere (the truth; results are rounded once more, when stored into the
// output's dtype). faithful: fp32 arithmetic with the upstream
// rounding points (kda.md A.10, B.2.9; sparse_attention.md C.5).
enum class Precision { oracle, faithful };

std::string_view precision_name(Precision p) noexcept;
std::optional<Precision> parse_precision(std::string_view s) noexcept;

}  // namespace kparity::reference
