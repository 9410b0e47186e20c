// The mutation engine: Mutant views, fixtures, the contract verdict and the "fires exactly its id"
// judgement. The tensor edits are in edits.cpp, the table in table.cpp and the *_mutations.cpp
// files.
#include "kparity/fuzz/mutator/mutator.hpp"

#include <algorithm>
#include <stdexcept>

#include "kparity/core/random.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/diagnostics/examples.hpp"

namespace kparity::fuzz {

std::string_view kind_name(MutationKind k) noexcept {
  switch (k) {
    case MutationKind::dtype: return "dtype";
    case MutationKind::shape: return "shape";
    case MutationKind::rank: return "rank";
    case MutationKind::device: return "device";
    case MutationKind::stride: return "stride";
    case MutationKind::index_value: return "index value";
    case MutationKind::cursor_value: return "cursor value";
    case MutationKind::scalar: return "scalar";
    case MutationKind::flag: return "flag";
    case MutationKind::value: return "value";
    case MutationKind::alias: return "alias";
    case MutationKind::absent: return "absent";
  }
  return "?";
}

std::int64_t Pick::below(std::int64_t n) {
  if (n <= 1) return 0;
  return static_cast<std::int64_t>(splitmix64(state_) % static_cast<std::uint64_t>(n));
}

ArgBag Mutant::bag() const {
  ArgBag b;
  for (const auto& [name, t] : call.tensors) {
    const auto d = devices.find(name);
    b.tensors.emplace(name, t.view_on(d == devices.end() ? device : d->second));
  }
  for (const auto& [name, other] : alias) {
    TensorView& v = b.tensors.at(name);
    v.data = call.tensors.at(other).view().data;
  }
  b.scalars = call.scalars;
  b.flags = call.flags;
  return b;
}


std::vector<std::string> fixture_names(std::string_view op) {
  std::vector<std::string> names;
  for (const auto& [name, fx] : embedded_fixtures().items())
    if (fx.value("op", std::string()) == op) names.push_back(name);
  return names;
}

Call fixture_call(const std::string& fixture, std::uint64_t seed) {
  const nlohmann::json& fx = embedded_fixtures().at(fixture);
  BuiltExample ex = build_example({{"fixture", fixture}});
  Call c;
  c.op = ex.op;
  c.description = "fixture " + fixture;
  for (const auto& [name, v] : ex.bag.tensors) {
    for (const auto& t : ex.storage) {
      if (t->view().data != v.data) continue;
      Tensor own = *t;
      const auto& spec = fx["tensors"][name];
      // Index, cursor and pinned values carry the fixture's meaning; free float values may vary.
      if (is_floating(own.dtype()) && !spec.contains("values") && !spec.contains("fill"))
        own.fill_normal(seed ^ std::hash<std::string>{}(name), 0.0, 0.5);
      c.tensors.emplace(name, std::move(own));
      break;
    }
  }
  c.scalars = ex.bag.scalars;
  c.flags = ex.bag.flags;
  return c;
}

std::vector<std::string> contract_entry_ids() {
  std::vector<std::string> ids;
  for (const auto& e : Catalog::embedded().entries())
    if (e.status == "active" && e.record.value("emittedBy", std::string("contracts")) != "kernels") ids.push_back(e.id);
  return ids;
}

std::vector<Mutation> mutations_for(std::string_view op) {
  std::vector<Mutation> out;
  for (const auto& m : mutation_table())
    if (std::find(m.ops.begin(), m.ops.end(), op) != m.ops.end()) out.push_back(m);
  return out;
}

bool apply(Mutant& mutant, const Mutation& m, std::uint64_t salt) {
  if (std::find(m.ops.begin(), m.ops.end(), mutant.call.op) == m.ops.end()) return false;
  Pick pick(salt);
  if (!m.edit(mutant, pick)) return false;
  mutant.call.description += (mutant.call.description.empty() ? "" : "; ") + std::string("mutated: ") + m.what;
  return true;
}

bool apply(Call& call, const Mutation& m, std::uint64_t salt) {
  Mutant mutant(call);
  if (!apply(mutant, m, salt) || !mutant.plain()) return false;
  call = std::move(mutant.call);
  return true;
}

ContractVerdict judge_contract(const ArgBag& bag, std::string_view op, const ValidateOptions& o) {
  ContractVerdict v;
  const OpContract* c = find_op_contract(op);
  if (!c) {
    v.other = "no contract for op '" + std::string(op) + "'";
    return v;
  }
  try {
    c->check(bag, o);
  } catch (const ContractError& e) {
    v.check_id = e.id();
  } catch (const std::exception& e) {
    v.other = std::string("check(): ") + e.what();
  }
  try {
    for (const auto& d : c->validate(bag, o)) {
      if (d.severity == Severity::error && v.validate_id.empty()) v.validate_id = d.id;
      if (d.severity == Severity::warning) v.warnings.push_back(d.id);
    }
  } catch (const std::exception& e) {
    v.other += std::string(v.other.empty() ? "" : "; ") + "validate(): " + e.what();
  }
  return v;
}

namespace {

std::string name_of(const std::string& id) {
  if (id.empty()) return "nothing";
  const CatalogEntry* e = Catalog::embedded().by_id(id);
  return id + (e ? " (" + e->slug + ")" : "");
}

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

std::string check_fires(const Mutant& valid, const Mutant& mutated, const Mutation& m) {
  const ContractVerdict before = judge_contract(valid.bag(), valid.call.op, m.options);
  if (!before.clean())
    return "the call before the mutation is already rejected: check " + name_of(before.check_id) + ", validate " +
           name_of(before.validate_id) + (before.other.empty() ? "" : ", " + before.other);
  const ContractVerdict after = judge_contract(mutated.bag(), mutated.call.op, m.options);
  const std::string tail = " (mutation " + m.slug + ": " + m.what + ")";
  if (!after.other.empty()) return "a non-contract exception: " + after.other + tail;
  if (!m.warning) {
    if (after.check_id != m.id) return "check() threw " + name_of(after.check_id) + ", expected " + name_of(m.id) + tail;
    if (after.validate_id != m.id)
      return "validate()'s first error is " + name_of(after.validate_id) + ", expected " + name_of(m.id) + tail;
    return "";
  }
  if (!after.check_id.empty() || !after.validate_id.empty())
    return "an error where only warning " + name_of(m.id) + " was expected: check " + name_of(after.check_id) +
           ", validate " + name_of(after.validate_id) + tail;
  if (contains(before.warnings, m.id)) return "the call already warned " + name_of(m.id) + " before the mutation" + tail;
  if (!contains(after.warnings, m.id)) return "validate() did not warn " + name_of(m.id) + tail;
  return "";
}

}  // namespace kparity::fuzz
