// The self-test's planted bugs and its driver. Where a bug can be reproduced exactly by transforming
// the call around the faithful reference (a flag, a permutation of heads, a rewritten index list, a
// second run), it is planted that way; the bugs that live inside the reference's loops use the
// test-only switch of kparity/reference/planted_fault.hpp.
#include "kparity/fuzz/campaign/selftest.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <rapidcheck.h>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/core/random.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace kparity::fuzz {
namespace {

using reference::PlantedFault;
using reference::PlantedFaultScope;

constexpr const char* kPacked = "kda/packed_decode";
constexpr const char* kReplay = "kda/replayssm_decode";
constexpr const char* kPrefill = "sparse/paged_prefill";
constexpr const char* kDecode = "sparse/paged_decode";

// What the fake kernels start from: the faithful reference, in place, validated like the oracle.
void faithful(Call& c) { ops::run_reference(c.op, c.bag(), reference::Precision::faithful, c.options); }

PlantedBug with_fault(std::string name, std::string op, std::string what, PlantedFault fault) {
  Backend b{"selftest/" + name, {op}, [fault](Call& c) {
              const PlantedFaultScope scope(fault);
              faithful(c);
            }};
  return {std::move(name), std::move(op), std::move(what), std::move(b)};
}

PlantedBug wrapped(std::string name, std::string op, std::string what, std::function<void(Call&)> run) {
  Backend b{"selftest/" + name, {op}, std::move(run)};
  return {std::move(name), std::move(op), std::move(what), std::move(b)};
}

// ---- wrong GQA head mapping -------------------------------------------------------------------
// The bug reads q/k head hv % H for value head hv instead of hv / G (kda.md A.1). Running the correct
// reference on inputs whose value heads are permuted by pi(hv) = (hv % H) * G + hv / H makes value
// head pi(hv) read q/k head hv % H with hv's own data; un-permuting what it wrote gives exactly the
// buggy kernel's result.

// A run of value-head blocks along one axis: block h covers [offset + h*width, offset + (h+1)*width).
struct HeadAxis {
  std::string name;
  int axis;
  std::int64_t offset, width;
};

// dst = src with block h moved to block perm[h] (everything outside the blocks copied as is).
void move_heads(const TensorView& src, const TensorView& dst, const HeadAxis& ax, const std::vector<std::int64_t>& perm) {
  const std::int64_t end = ax.offset + static_cast<std::int64_t>(perm.size()) * ax.width;
  std::vector<std::int64_t> to;
  for_each_element(src, [&](std::span<const std::int64_t> idx, std::int64_t) {
    to.assign(idx.begin(), idx.end());
    const std::int64_t x = idx[static_cast<std::size_t>(ax.axis)];
    if (x >= ax.offset && x < end) {
      const std::int64_t h = (x - ax.offset) / ax.width, within = (x - ax.offset) % ax.width;
      to[static_cast<std::size_t>(ax.axis)] = ax.offset + perm[static_cast<std::size_t>(h)] * ax.width + within;
    }
    dst.store(to, src.load(idx));  // through fp64: exact for every float storage dtype
  });
}

void wrong_gqa_mapping(Call& c) {
  const TensorView st = c.at("initial_state").view(), mq = c.at("mixed_qkv").view();
  const std::int64_t HV = st.size(1), V = st.size(2), K = st.size(3);
  const std::int64_t H = (mq.size(1) - HV * V) / (2 * K), G = HV / H;
  std::vector<std::int64_t> pi(static_cast<std::size_t>(HV)), inverse(pi.size());
  for (std::int64_t hv = 0; hv < HV; ++hv) {
    pi[static_cast<std::size_t>(hv)] = (hv % H) * G + hv / H;
    inverse[static_cast<std::size_t>(pi[static_cast<std::size_t>(hv)])] = hv;
  }
  // a and dt_bias come flattened ([.., HV*K]) or split ([.., HV, K], rank `split`).
  const auto per_head = [&](const std::string& name, int split) {
    const TensorView v = c.at(name).view();
    return v.ndim() == split ? HeadAxis{name, split - 2, 0, 1} : HeadAxis{name, v.ndim() - 1, 0, K};
  };
  const std::vector<HeadAxis> inputs = {
      {"mixed_qkv", 1, 2 * H * K, V}, per_head("a", 3), {"b", 1, 0, 1}, {"A_log", 0, 0, 1}, per_head("dt_bias", 2),
      {"initial_state", 1, 0, 1},     {"out", 2, 0, 1}};
  Call permuted = c;
  for (const auto& ax : inputs) move_heads(c.at(ax.name).view(), permuted.at(ax.name).view(), ax, pi);
  faithful(permuted);
  for (const auto& ax : inputs)
    if (ax.name == "initial_state" || ax.name == "out")
      move_heads(permuted.at(ax.name).view(), c.at(ax.name).view(), ax, inverse);
}

// ---- a missed padding row -----------------------------------------------------------------------
// The kernel skips rows with a negative slot entirely, so their output keeps whatever was in the
// buffer (the harness poisons pure outputs with NaN); the spec wants zeros (kda.md B.1 item 1).
void missed_padding_row(Call& c) {
  const Tensor before = c.at("out");
  faithful(c);
  const TensorView idx = c.at("ssm_state_indices").view();
  for (std::int64_t r = 0; r < idx.size(0); ++r)
    if (idx.load_int_flat(r) < 0) copy_convert(before.view().select(0, r), c.at("out").view().select(0, r));
}

// ---- state written on a non-flush step ----------------------------------------------------------
// The kernel writes the checkpoint on every step (kda.md B.2.6 says append steps leave it alone).
// What it writes on an append step is what a flush of that row would write, so the state comes from
// a second run with every row forced to flush; outputs and rings come from the normal run.
void state_written_on_append(Call& c) {
  Call flushed = c;
  Tensor all(DType::i32, {c.at("mixed_qkv").view().size(0)});
  all.fill(1);
  flushed.tensors.insert_or_assign("force_flush", std::move(all));
  faithful(flushed);
  faithful(c);
  copy_convert(flushed.at("initial_state").view(), c.at("initial_state").view());
}

// ---- beta not rounded ----------------------------------------------------------------------------
// The Helion ReplaySSM rounds beta through b's dtype (kda.md A.4 item 3); the bug keeps it in fp32,
// which is the reference's own BetaRounding::fp32 knob ("beta_in_fp32").
void beta_not_rounded(Call& c) {
  const auto had = c.flags.find("beta_in_fp32");
  const std::optional<bool> old = had == c.flags.end() ? std::nullopt : std::optional<bool>(had->second);
  c.flags["beta_in_fp32"] = true;
  faithful(c);
  if (old) c.flags["beta_in_fp32"] = *old;
  else c.flags.erase("beta_in_fp32");
}

// ---- duplicate indices dropped -------------------------------------------------------------------
// The kernel keeps only the first occurrence of a row in a token's list; a row listed twice must
// count twice (sparse_attention.md C.1). The rewritten CSR lists are what such a kernel attends to.
void duplicates_dropped(Call& c) {
  const Tensor indices = c.at("kv_indices"), indptr = c.at("kv_indptr");
  const std::int64_t T = c.at("q").view().size(0);
  std::vector<std::int64_t> kept, ptr{0};
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t a = indptr.view().load_int_flat(t), b = indptr.view().load_int_flat(t + 1);
    std::set<std::int64_t> seen;
    for (std::int64_t j = a; j < b; ++j)
      if (const std::int64_t row = indices.view().load_int_flat(j); seen.insert(row).second) kept.push_back(row);
    ptr.push_back(static_cast<std::int64_t>(kept.size()));
  }
  Tensor new_indices(indices.dtype(), {static_cast<std::int64_t>(kept.size())});
  Tensor new_indptr(indptr.dtype(), {static_cast<std::int64_t>(ptr.size())});
  for (std::size_t i = 0; i < kept.size(); ++i) new_indices.view().store_flat(static_cast<std::int64_t>(i), static_cast<double>(kept[i]));
  for (std::size_t i = 0; i < ptr.size(); ++i) new_indptr.view().store_flat(static_cast<std::int64_t>(i), static_cast<double>(ptr[i]));
  c.tensors.insert_or_assign("kv_indices", std::move(new_indices));
  c.tensors.insert_or_assign("kv_indptr", std::move(new_indptr));
  faithful(c);
  c.tensors.insert_or_assign("kv_indices", indices);
  c.tensors.insert_or_assign("kv_indptr", indptr);
}

// ---- the driver ------------------------------------------------------------------------------

// splitmix64 of a copy: a hash of `x`.
std::uint64_t mix(std::uint64_t x) { return splitmix64(x); }

// Case i of an op: the same call for every backend, drawn once. Sizes cycle through 0..100 so that
// small shapes come first and larger ones keep coming back.
class Cases {
 public:
  Cases(const OpFuzzSpec& spec, std::uint64_t seed) : spec_(spec), seed_(seed) {
    for (unsigned char ch : spec.op) seed_ = mix(seed_ ^ ch);
  }
  const Call& at(int i) {
    while (static_cast<int>(calls_.size()) <= i) {
      const int k = static_cast<int>(calls_.size());
      const auto gen = rc::gen::exec([this] { return spec_.draw(GenConfig{}); });
      calls_.push_back(gen(rc::Random(mix(seed_ + static_cast<std::uint64_t>(k))), k % 101).value());
      take_buckets();
    }
    return calls_[static_cast<std::size_t>(i)];
  }

 private:
  const OpFuzzSpec& spec_;
  std::uint64_t seed_;
  std::vector<Call> calls_;
};

SelfTestOutcome evaluate(const Backend& backend, const std::string& op, bool control, Cases& cases, int max_cases) {
  SelfTestOutcome out;
  out.backend = backend.name;
  out.op = op;
  out.control = control;
  const OpFuzzSpec& spec = spec_for(op);
  for (int i = 0; i < max_cases; ++i) {
    const Call& call = cases.at(i);
    try {
      const DifferentialResult r = differential(call, backend, spec);
      out.cases = i + 1;
      if (!r.pass) {
        out.flagged = true;
        out.detail = r.detail + " [" + call.description + "]";
        return out;
      }
    } catch (const BackendUnsupported&) {
      ++out.unsupported;
    } catch (const std::exception& e) {
      out.cases = i + 1;
      out.flagged = out.threw = true;
      out.detail = std::string("threw: ") + e.what() + " [" + call.description + "]";
      return out;
    }
  }
  return out;
}

std::string bare(const std::string& name) { return name.rfind("selftest/", 0) == 0 ? name.substr(9) : name; }

// The controls of an op (backends/reference.hpp: correct fp32 kernels in other accumulation orders)
// through the campaign's path: each one's differential properties, finite and special values, run
// by run_property (RapidCheck, chunk seeds, discards bounded, failures shrunk). The op's control
// budget is `max_cases` (what the faithful control had), split evenly: 500 gives each of the 10
// properties 50 cases; `kparity fuzz --backend control` (ctest fuzz.controls) runs more. Unlike the faithful reference as a backend, a control errs differently from the faithful
// model, so a rule that is too tight shows here as a flagged control.
std::vector<SelfTestOutcome> run_controls(const std::string& op, const SelfTestOptions& o) {
  std::vector<SelfTestOutcome> out;
  if (o.max_cases <= 0) return out;
  const std::vector<Backend> controls = control_backends({op});
  const int each = std::max(1, o.max_cases / static_cast<int>(2 * controls.size()));
  for (const Backend& b : controls)
    for (const bool special : {false, true}) {
      const Property p = differential_property(spec_for(op), b, special);
      PropertyOutcome po = run_property(p, o.seed, each, 100, true);
      SelfTestOutcome r;
      r.backend = b.name + (special ? " (special values)" : "");
      r.op = op;
      r.control = true;
      r.flagged = !po.passed;
      r.cases = po.cases;
      r.unsupported = po.discarded;
      if (r.flagged)
        r.detail = po.message + fmt::format(" [repro: kparity fuzz --property {} --seed 0x{:x} --cases {}]", p.name, po.seed,
                                            std::max(po.repro_cases, 1));
      out.push_back(std::move(r));
    }
  return out;
}

}  // namespace

std::vector<PlantedBug> planted_bugs() {
  return {
      with_fault("inclusive-suffix-decay", kReplay,
                 "ReplaySSM replay decays ring entry i by its own gate too: W_i = exp(sum_{i'>=i} g_i')",
                 PlantedFault::inclusive_suffix_decay),
      with_fault("sink-in-numerator", kPrefill, "the sink's weight is added to every output channel's numerator",
                 PlantedFault::sink_in_numerator),
      wrapped("beta-not-rounded", kReplay, "ReplaySSM keeps beta in fp32 instead of rounding it through b's dtype",
              beta_not_rounded),
      with_fault("cursor-off-by-one", kReplay, "ReplaySSM replay folds ring positions 0..c instead of 0..c-1",
                 PlantedFault::ring_read_past_cursor),
      wrapped("duplicate-indices-dropped", kDecode, "a row listed twice in a token's list counts once",
              duplicates_dropped),
      wrapped("wrong-gqa-head-mapping", kPacked, "value head hv reads q/k head hv % H instead of hv / G",
              wrong_gqa_mapping),
      wrapped("missed-padding-row", kPacked, "rows with a negative slot are skipped: their output is never written",
              missed_padding_row),
      wrapped("state-written-on-append", kReplay, "ReplaySSM writes the state checkpoint on append steps too",
              state_written_on_append),
  };
}

const std::vector<BlindSpot>& blind_spots() {
  // Empty: every planted bug is caught. An entry names a bug the rule cannot see and why, so the
  // self-test passes while it stays invisible and fails once it is caught (then remove the entry).
  static const std::vector<BlindSpot> ledger = {};
  return ledger;
}

std::vector<SelfTestOutcome> self_test(const SelfTestOptions& o, std::ostream& log) {
  const auto all = planted_bugs();
  std::vector<const PlantedBug*> chosen;
  for (const auto& want : o.bugs) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const PlantedBug& b) { return b.name == bare(want); });
    if (it == all.end()) {
      std::string known;
      for (const auto& b : all) known += (known.empty() ? "" : ", ") + b.name;
      throw std::invalid_argument("unknown planted bug '" + want + "' (known: " + known + ")");
    }
    chosen.push_back(&*it);
  }
  if (o.bugs.empty())
    for (const auto& b : all) chosen.push_back(&b);

  log << fmt::format("kparity fuzz --self-test: seed=0x{:x}, up to {} cases per planted bug and per op for its controls\n",
                     o.seed, o.max_cases);
  std::map<std::string, Cases> cases;
  auto cases_of = [&](const std::string& op) -> Cases& {
    return cases.try_emplace(op, spec_for(op), o.seed).first->second;
  };
  std::vector<SelfTestOutcome> outcomes;
  std::vector<std::string> ops;
  for (const PlantedBug* b : chosen) {
    auto r = evaluate(b->backend, b->op, false, cases_of(b->op), o.max_cases);
    for (const auto& spot : blind_spots())
      if (spot.bug == b->name) r.blind = spot.reason;
    if (!r.blind.empty() && r.flagged)
      log << fmt::format("{} ({}): caught after {} cases, but the ledger lists it as a blind spot: remove its entry "
                         "from blind_spots() in fuzz/src/campaign/selftest.cpp: {}\n", r.backend, r.op, r.cases, r.detail);
    else if (!r.blind.empty())
      log << fmt::format("{} ({}): not caught in {} cases, as the ledger expects: {}\n", r.backend, r.op, r.cases, r.blind);
    else if (r.flagged && !r.threw)
      log << fmt::format("{} ({}): caught after {} cases: {}\n", r.backend, r.op, r.cases, r.detail);
    else if (r.flagged)
      log << fmt::format("{} ({}): NOT caught by the rule; case {} {}\n", r.backend, r.op, r.cases, r.detail);
    else
      log << fmt::format("{} ({}): NOT caught in {} cases ({})\n", r.backend, r.op, r.cases, b->what);
    outcomes.push_back(std::move(r));
    if (std::find(ops.begin(), ops.end(), b->op) == ops.end()) ops.push_back(b->op);
  }
  for (const auto& op : ops)
    for (auto& r : run_controls(op, o)) {
      if (r.flagged) log << fmt::format("control {} ({}): FLAGGED after {} cases: {}\n", r.backend, r.op, r.cases, r.detail);
      else log << fmt::format("control {} ({}): clean over {} cases\n", r.backend, r.op, r.cases);
      outcomes.push_back(std::move(r));
    }
  return outcomes;
}

int run_self_test(std::ostream& log, const SelfTestOptions& o) {
  const auto outcomes = self_test(o, log);
  log << "\n| backend | op | result | cases |\n|---|---|---|---|\n";
  int bugs = 0, caught = 0, blind = 0, still_blind = 0, controls = 0, clean = 0;
  for (const auto& r : outcomes) {
    std::string result;
    if (r.control) result = r.flagged ? "FLAGGED (control)" : "clean (control)";
    else if (!r.blind.empty()) result = r.flagged ? "caught, but ledgered as blind: REMOVE the entry" : "not caught (ledgered blind spot)";
    else if (r.flagged && !r.threw) result = fmt::format("caught after {}", r.cases);
    else result = r.flagged ? "NOT caught (threw)" : "NOT caught";
    log << fmt::format("| {} | {} | {} | {}{} |\n", r.backend, r.op, result, r.cases,
                       r.unsupported ? fmt::format(" (+{} unsupported)", r.unsupported) : "");
    if (r.control) ++controls, clean += r.ok();
    else if (!r.blind.empty()) ++blind, still_blind += r.ok();
    else ++bugs, caught += r.ok();
  }
  const bool ok = caught == bugs && still_blind == blind && clean == controls;
  log << fmt::format("\n{} of {} planted bugs caught by the rule; {} of {} ledgered blind spots still blind; {} of {} "
                     "controls clean: {}\n",
                     caught, bugs, still_blind, blind, clean, controls, ok ? "self-test passed" : "SELF-TEST FAILED");
  return ok ? 0 : 1;
}

}  // namespace kparity::fuzz
