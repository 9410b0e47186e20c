// The draw of one rejected-call case (rejected_case.hpp).
#include "kparity/fuzz/backends/rejected_case.hpp"

#include <rapidcheck.h>

#include <cstdint>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"

namespace kparity::fuzz {
namespace {

bool data_dependent(const std::string& id) {
  const CatalogEntry* e = Catalog::embedded().by_id(id);
  return e != nullptr && e->record.value("dataDependent", false);
}

// Mutations drawn for one call before the remaining ones are scanned in order. Drawn once per call,
// a mutation missed its call in 8.0% of kda/recurrent cases (175 of 2,175 at seed
// 0x39473b0f411e5190: the gate-shape mutations, g's on calls with the raw gate and a's, dt_bias's
// and A_log's on calls with g), 0.8-4.5% for the other ops; eight misses in a row at 8% happen
// about once in 10^9 calls, and the scan after them keeps even a call that admits a single mutation.
constexpr int kDraws = 8;

}  // namespace

std::vector<Mutation> rejected_call_mutations(const std::string& op, bool on_device) {
  std::vector<Mutation> out;
  for (const auto& m : mutations_for(op))
    if (!m.warning && (on_device || !data_dependent(m.id))) out.push_back(m);
  return out;
}

std::optional<RejectedCase> draw_rejected_case(const std::string& op, const std::vector<Mutation>& mutations) {
  if (mutations.empty()) return std::nullopt;
  const Mutant valid(spec_for(op).draw(GenConfig{}), Device::cuda(0));
  const auto salt = *rc::gen::arbitrary<std::uint64_t>();
  const auto attempt = [&](std::size_t i) -> std::optional<RejectedCase> {
    Mutant mu = valid;  // apply() leaves a mutant it refuses unspecified: each attempt starts afresh
    if (!apply(mu, mutations[i], salt)) return std::nullopt;
    return RejectedCase{mutations[i], std::move(mu)};
  };
  std::size_t i = 0;
  for (int d = 0; d < kDraws; ++d) {
    i = *rc::gen::inRange<std::size_t>(0, mutations.size());
    if (auto c = attempt(i)) return c;
  }
  for (std::size_t k = 1; k < mutations.size(); ++k)
    if (auto c = attempt((i + k) % mutations.size())) return c;
  return std::nullopt;
}

}  // namespace kparity::fuzz
