// The mutation table: at least one mutation per active contract-emitted catalog entry, keyed by the
// entry's id. Each edit is written against the call it receives (its B, HV, K, L, T, ..., its live
// rows and selected index entries), and breaks exactly one contract while keeping every check that
// comes earlier in upstream order satisfied. The catalog entries' erroneousExample overrides are the
// fixture-sized version of the same intent.
#include "table.hpp"

#include <stdexcept>

#include "kparity/diagnostics/catalog.hpp"

namespace kparity::fuzz {
namespace detail {

void Table::add(std::string_view id, std::vector<std::string> ops, K kind, std::string what, Edit edit,
              ValidateOptions options) {
  const CatalogEntry* e = Catalog::embedded().by_id(id);
  if (!e) throw std::logic_error("mutation table: no catalog entry " + std::string(id));
  Mutation m;
  m.id = std::string(id);
  m.slug = e->slug;
  m.ops = std::move(ops);
  m.kind = kind;
  m.what = std::move(what);
  m.options = options;
  m.warning = e->severity == Severity::warning;
  m.edit = std::move(edit);
  v.push_back(std::move(m));
  }

Kda kda(const Mutant& m) {
  Kda d;
  d.B = dim(m, "mixed_qkv", 0), d.W = dim(m, "mixed_qkv", 1);
  d.slots = dim(m, "initial_state", 0), d.HV = dim(m, "initial_state", 1);
  d.V = dim(m, "initial_state", 2), d.K = dim(m, "initial_state", 3);
  d.H = (d.W - d.HV * d.V) / (2 * d.K);
  if (has(m, "d_cache")) d.L = dim(m, "d_cache", 2);
  return d;
}

std::vector<std::int64_t> live_rows(const Mutant& m) {
  std::vector<std::int64_t> rows;
  const std::int64_t B = dim(m, "ssm_state_indices", 0);
  for (std::int64_t r = 0; r < B; ++r)
    if (get_int(m, "ssm_state_indices", r) >= 0) rows.push_back(r);
  return rows;
}

void ensure_force_flush(Mutant& m) {
  if (!has(m, "force_flush")) make(m, "force_flush", DType::i32, {dim(m, "mixed_qkv", 0)}, {});
}

bool noncontiguous(Mutant& m, const std::string& name) {
  const TensorView v = view(m, name);
  if (v.numel() < 2) return false;  // one element is contiguous under any strides
  restride(m, name, padded_strides(v.shape(), 2));
  return true;
}

// Memory overlap needs bytes on both sides: an empty tensor overlaps nothing.
bool alias_one_of(Mutant& m, const std::string& name, std::initializer_list<const char*> others, Pick& p) {
  if (view(m, name).numel() == 0) return false;
  std::vector<std::string> candidates;
  for (const char* o : others)
    if (has(m, o) && view(m, o).numel() > 0) candidates.push_back(o);
  if (candidates.empty()) return false;
  alias(m, name, one_of(candidates, p));
  return true;
}

}  // namespace detail

const std::vector<Mutation>& mutation_table() {
  static const std::vector<Mutation> table = [] {
    detail::Table t;
    add_kda_decode_mutations(t);
    add_kda_replayssm_mutations(t);
    add_kda_recurrent_mutations(t);
    add_sparse_mutations(t);
    return std::move(t.v);
  }();
  return table;
}

}  // namespace kparity::fuzz
