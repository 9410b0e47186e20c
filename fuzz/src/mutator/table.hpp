#pragma once
// Private to the mutator: the mutation table's builder and what the per-op mutation files share
// (kda_decode_mutations.cpp, kda_replayssm_mutations.cpp, kda_recurrent_mutations.cpp,
// sparse_mutations.cpp; table.cpp puts them together).
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "edits.hpp"
#include "kparity/fuzz/mutator/mutator.hpp"

namespace kparity::fuzz::detail {

using Edit = std::function<bool(Mutant&, Pick&)>;
using K = MutationKind;

// Plain constants: the table may be built during another translation unit's static initialisation.
inline constexpr std::string_view kPacked = "kda/packed_decode", kReplay = "kda/replayssm_decode",
                                  kRecurrent = "kda/recurrent", kPrefill = "sparse/paged_prefill",
                                  kDecode = "sparse/paged_decode";
inline std::vector<std::string> ops(std::initializer_list<std::string_view> names) { return {names.begin(), names.end()}; }

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr std::int64_t k2Pow31 = std::int64_t{1} << 31;

// Upstream parity plus nothing else: for the entries an enabled kparity check would pre-empt.
inline constexpr ValidateOptions kUpstreamOnly{Entry::cuda_kernel, false, false, true};
// Every check but the data-dependent ones.
inline constexpr ValidateOptions kShapeExtras{Entry::cuda_kernel, true, false, true};

template <class T>
const T& one_of(const std::vector<T>& v, Pick& p) {
  return v[static_cast<std::size_t>(p.below(static_cast<std::int64_t>(v.size())))];
}

// Collects the mutations; add() fills the slug and severity from the catalog entry.
class Table {
 public:
  void add(std::string_view id, std::vector<std::string> ops, K kind, std::string what, Edit edit,
           ValidateOptions options = ValidateOptions::strict(Entry::cuda_kernel));
  std::vector<Mutation> v;
};

// A tensor made non-contiguous (innermost stride 2); false when it has fewer than two elements.
bool noncontiguous(Mutant& m, const std::string& name);
// `name` aliased onto one of `others` that the call has; false when overlap is impossible.
bool alias_one_of(Mutant& m, const std::string& name, std::initializer_list<const char*> others, Pick& p);

// The decode ops' sizes, read from the call as the contract reads them.
struct Kda {
  std::int64_t B = 0, W = 0, H = 0, HV = 0, K = 0, V = 0, slots = 0, L = 0;
};
Kda kda(const Mutant& m);
// Rows with a state slot (padding rows, slot < 0, are never read past their index).
std::vector<std::int64_t> live_rows(const Mutant& m);
void ensure_force_flush(Mutant& m);

// The mutations of each op family, in upstream order.
void add_kda_decode_mutations(Table& t);     // both decode ops' shared walk and extras
void add_kda_replayssm_mutations(Table& t);
void add_kda_recurrent_mutations(Table& t);
void add_sparse_mutations(Table& t);         // prefill, then decode

}  // namespace kparity::fuzz::detail
