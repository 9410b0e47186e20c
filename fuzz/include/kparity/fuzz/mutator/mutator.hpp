#pragma once
// The catalog-driven contract mutator (issue 7, "Contracts"): for every active catalog entry the
// contracts emit, a mutation that turns any valid call of its op into a call whose FIRST violation,
// in upstream order, is exactly that entry, from check() and from validate() alike.
//
// Mutations are written relative to the call they edit ("g_cache becomes bf16", "write_pos[r] = L
// for a live row r"), never as fixture values, so they apply to the random shapes the generators
// draw. A mutation that cannot be expressed on a given call (a cursor mutation on a call whose rows
// are all padding, a head-dim split when K = 1) says so by returning false; the caller draws again.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/device.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

enum class MutationKind { dtype, shape, rank, device, stride, index_value, cursor_value, scalar, flag, value, alias, absent };
std::string_view kind_name(MutationKind k) noexcept;

// A call under mutation. A Call holds owned host tensors only; two things a contract looks at do
// not fit in it: which device each tensor claims to be on, and whether one tensor's memory overlaps
// another's. Both live here and are applied when the argument views are built.
struct Mutant {
  Call call;
  // Every tensor is labelled with `device` unless `devices` names another one. The default is the
  // kernel entry's view of a valid call: everything on one CUDA device (the memory stays on the host,
  // as in the catalog's executable examples).
  Device device = Device::cuda(0);
  std::map<std::string, Device> devices;
  // name -> other: `name` keeps its own dtype, shape and strides but starts at other's first element.
  std::map<std::string, std::string> alias;

  Mutant() = default;
  explicit Mutant(Call c, Device d = Device::cuda(0)) : call(std::move(c)), device(d) {}
  ArgBag bag() const;
  // True when the mutant is a plain Call (no device label or alias differs from the call's own).
  bool plain() const { return devices.empty() && alias.empty(); }
};

// Deterministic choices inside a mutation (which row, which element), from a 64-bit salt, so the same
// (call, mutation, salt) always gives the same mutant and a RapidCheck-drawn salt shrinks toward 0.
class Pick {
 public:
  explicit Pick(std::uint64_t salt) : state_(salt) {}
  std::int64_t below(std::int64_t n);  // uniform in [0, n); n >= 1

 private:
  std::uint64_t state_;
};

struct Mutation {
  std::string id;    // catalog id (kparity::ids::<slug>)
  std::string slug;  // filled from the catalog
  std::vector<std::string> ops;  // where it applies; ops[0] is the entry's own op
  MutationKind kind = MutationKind::shape;
  std::string what;  // one line: what the edit does, relative to the call
  // The options under which the id is the first violation (most entries: every check on; a few need
  // a mode in which an earlier, more specific entry is off, e.g. ring-slots-fewer without deep).
  ValidateOptions options = ValidateOptions::strict(Entry::cuda_kernel);
  bool warning = false;  // a warning entry: validate() reports it, check() never throws it
  std::function<bool(Mutant&, Pick&)> edit;
};

// Every mutation, one or more per active contract-emitted catalog entry (kernel-dispatch entries,
// "emittedBy": "kernels", belong to tests/gpu_dispatch).
const std::vector<Mutation>& mutation_table();
std::vector<Mutation> mutations_for(std::string_view op);
// The active contract-emitted entries of the embedded catalog, by id: what the table must cover.
std::vector<std::string> contract_entry_ids();

// Applies `m` to the mutant; false (mutant unspecified, discard it) when `m` cannot be expressed on
// this call or does not apply to its op.
bool apply(Mutant& mutant, const Mutation& m, std::uint64_t salt = 0);
// The same on a plain Call, for backends that run calls (e.g. "no kernel launch on a rejected
// call"): false, with `call` unchanged, also when the mutation needs a device label or an alias,
// which a Call cannot carry.
bool apply(Call& call, const Mutation& m, std::uint64_t salt = 0);

// The catalog's base fixtures of `op` (catalog/fixtures/*.json, e.g. "kda.packed.minimal") as Calls,
// with the float tensors the fixture does not pin refilled from `seed`: valid calls with fixed,
// small shapes, a sample every mutation must fire on besides the generators' random calls.
std::vector<std::string> fixture_names(std::string_view op);
Call fixture_call(const std::string& fixture, std::uint64_t seed);

// What a contract said about a call: the id check() threw, the first error validate() reported, all
// warnings validate() reported, and any exception that is not a ContractError (always a bug).
struct ContractVerdict {
  std::string check_id;
  std::string validate_id;
  std::vector<std::string> warnings;
  std::string other;  // "<what()>" of a non-ContractError exception from check() or validate()
  bool clean() const { return check_id.empty() && validate_id.empty() && other.empty(); }
};
ContractVerdict judge_contract(const ArgBag& bag, std::string_view op, const ValidateOptions& o);

// "" when `mutated` (m applied to `valid`) fires exactly m's id first, else what went wrong. `valid`
// is judged too, under the same options, so a call that was already rejected is reported as such.
std::string check_fires(const Mutant& valid, const Mutant& mutated, const Mutation& m);

}  // namespace kparity::fuzz
