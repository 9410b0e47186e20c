#include "kparity/reference/accumulate.hpp"

namespace kparity::reference {

constinit thread_local Accumulation detail::t_accumulation = Accumulation::index_order;
constinit thread_local OracleEvaluation detail::t_oracle_evaluation = OracleEvaluation::fast;
constinit thread_local bool detail::t_scalar_loops = false;

namespace {

constexpr std::pair<Accumulation, std::string_view> kNames[] = {
    {Accumulation::index_order, "index-order"}, {Accumulation::reversed, "reversed"},
    {Accumulation::pairwise, "pairwise"},       {Accumulation::tile16, "tile16"},
    {Accumulation::fma, "fma"},                 {Accumulation::fp64, "fp64"},
    {Accumulation::fma_exponent, "fma-exponent"},
};

}  // namespace

std::string_view accumulation_name(Accumulation a) noexcept {
  for (const auto& [id, name] : kNames)
    if (id == a) return name;
  return "?";
}

std::optional<Accumulation> parse_accumulation(std::string_view s) noexcept {
  for (const auto& [id, name] : kNames)
    if (name == s) return id;
  return std::nullopt;
}

const std::vector<Accumulation>& control_accumulations() {
  static const std::vector<Accumulation> all = {Accumulation::reversed, Accumulation::pairwise, Accumulation::tile16,
                                                Accumulation::fma, Accumulation::fp64, Accumulation::fma_exponent};
  return all;
}

AccumulationScope::AccumulationScope(Accumulation a) noexcept : previous_(detail::t_accumulation) {
  detail::t_accumulation = a;
}
AccumulationScope::~AccumulationScope() { detail::t_accumulation = previous_; }

OracleEvaluationScope::OracleEvaluationScope(OracleEvaluation e) noexcept : previous_(detail::t_oracle_evaluation) {
  detail::t_oracle_evaluation = e;
}
OracleEvaluationScope::~OracleEvaluationScope() { detail::t_oracle_evaluation = previous_; }

ScalarLoopsScope::ScalarLoopsScope() noexcept : previous_(detail::t_scalar_loops) { detail::t_scalar_loops = true; }
ScalarLoopsScope::~ScalarLoopsScope() { detail::t_scalar_loops = previous_; }

}  // namespace kparity::reference
