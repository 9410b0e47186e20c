// The properties of an implementation under test (implementation.hpp): the differential rule, determinism
// and the contract, each failure tagged with its class (failure.hpp).
#include <algorithm>
#include <map>
#include <cstring>
#include <rapidcheck.h>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/mutator/mutator.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace kparity::fuzz {
namespace {

std::string tag(FailureClass c) { return "[" + std::string(failure_class_name(c)) + "] "; }

// A valid call of the spec's op, adapted to the implementation, recorded for the corpus.
Call draw_call(const OpFuzzSpec& spec, const ImplPropertyOptions& o, bool special_values) {
  GenConfig cfg;
  cfg.special_values = special_values;
  cfg.large = o.large;
  Call c = spec.draw(cfg);
  // Non-finite inputs are data that kparity's deep checks reject where upstream accepts them.
  if (special_values) c.options.deep = false;
  if (o.adapt && !o.adapt(c)) RC_DISCARD("the implementation cannot be called with this call's arguments");
  record_call(c);
  RC_LOG() << (c.description.empty() ? c.op : c.description) << "\n";
  return c;
}

// The backend on a poisoned clone, its failures turned into tagged property failures; a declined
// call is discarded.
Call run_or_fail(const Call& c, const Backend& backend) {
  try {
    return run_backend(c, backend);
  } catch (const BackendUnsupported& e) {
    RC_DISCARD(std::string("unsupported by ") + backend.name + ": " + e.what());
  } catch (const ImplFailure& e) {
    RC_FAIL(e.what());
  } catch (const std::exception& e) {
    RC_FAIL(tag(FailureClass::crashed) + "running " + backend.name + ": " + e.what());
  }
  return c;  // not reached: the RC_ macros throw
}

void differential_case(const OpFuzzSpec& spec, const Backend& backend, const ImplPropertyOptions& o, bool special) {
  const Call c = draw_call(spec, o, special);
  const Call b = run_or_fail(c, backend);
  const Call f = [&] {
    const reference::PrecisionProfileScope profile(o.profile);
    return run_faithful(c);
  }();
  const DifferentialResult r = judge(c, run_oracle(c), f, b, spec);
  note_errors(r);
  RC_LOG() << r.detail << "\n";
  if (!r.pass) RC_FAIL(tag(FailureClass::wrong_values) + backend.name + " breaks the differential rule: " + r.detail);
}

// The first element whose bytes differ between two runs, or "".
std::string first_difference(const std::string& name, const TensorView& x, const TensorView& y) {
  const std::size_t es = x.element_size();
  std::int64_t differ = 0;
  std::string first;
  for_each_element(x, [&](std::span<const std::int64_t> idx, std::int64_t) {
    const auto* a = static_cast<const std::byte*>(x.data) + x.offset_of(idx) * static_cast<std::int64_t>(es);
    const auto* b = static_cast<const std::byte*>(y.data) + y.offset_of(idx) * static_cast<std::int64_t>(es);
    if (std::memcmp(a, b, es) == 0) return;
    if (differ++ == 0) {
      std::string at;
      for (std::size_t i = 0; i < idx.size(); ++i) at += fmt::format("{}{}", i ? ", " : "", idx[i]);
      first = fmt::format("[{}]: first run {}, second run {}", at, py_float(x.load(idx)), py_float(y.load(idx)));
    }
  });
  if (differ == 0) return {};
  return fmt::format("`{}` differs at {} ({} of {} elements differ)", name, first, differ, x.numel());
}

void deterministic_case(const OpFuzzSpec& spec, const Backend& backend, const ImplPropertyOptions& o) {
  // Calls found nondeterministic, by content: RapidCheck re-runs the shrunk counterexample last, and
  // a nondeterministic implementation may happen to agree with itself on that re-run.
  static thread_local std::map<std::pair<std::string, std::uint64_t>, std::string> seen;
  const Call c = draw_call(spec, o, false);
  const auto key = std::make_pair(backend.name, call_fingerprint(c));
  if (const auto it = seen.find(key); it != seen.end()) RC_FAIL(it->second);
  const Call first = run_or_fail(c, backend);
  const Call second = run_or_fail(c, backend);
  for (const auto& name : c.written) {
    const std::string d = first_difference(name, first.at(name).view(), second.at(name).view());
    if (d.empty()) continue;
    const std::string verdict = tag(FailureClass::not_deterministic) + backend.name + ": the same call twice, " + d;
    seen.emplace(key, verdict);
    RC_FAIL(verdict);
  }
}

// The mutations a hostile call can be made with: upstream's own checks (kparity's optional ones
// are not the implementation's business), errors only, expressible on a plain Call.
std::vector<Mutation> hostile_mutations(const std::string& op) {
  std::vector<Mutation> out;
  for (auto& m : mutations_for(op)) {
    const CatalogEntry* e = Catalog::embedded().by_id(m.id);
    if (!e || e->origin != "upstream" || m.warning || m.kind == MutationKind::device || m.kind == MutationKind::alias)
      continue;
    out.push_back(std::move(m));
  }
  return out;
}

void contract_case(const OpFuzzSpec& spec, const Backend& backend, const ImplPropertyOptions& o,
                   const std::vector<Mutation>& table) {
  RC_PRE(!table.empty());
  const Call c = draw_call(spec, o, false);
  const Mutation& m = *rc::gen::elementOf(table);
  const auto salt = *rc::gen::arbitrary<std::uint64_t>();
  Call hostile = c;
  if (!apply(hostile, m, salt)) RC_DISCARD("mutation " + m.slug + " does not apply to this call");
  // What upstream says at this entry: exactly m's entry first, or the mutation does not stand for
  // it here (a CPU implementation is judged at the reference entry, without the CUDA-tensor check).
  ValidateOptions vo = m.options;
  vo.entry = o.on_device ? Entry::cuda_kernel : Entry::reference;
  std::string expected, expected_class;
  try {
    find_op_contract(c.op)->check(hostile.bag(), vo);
  } catch (const ContractError& e) {
    if (e.id() != m.id) RC_DISCARD("mutation " + m.slug + " fires " + e.id() + " first at this entry");
    expected = e.what();
    expected_class = std::string(error_class_name(e.diagnostic().error_class));
  }
  if (expected.empty()) RC_DISCARD("mutation " + m.slug + " is accepted at this entry");
  RC_LOG() << "mutation " << m.id << " (" << m.slug << "): " << m.what << "\n";
  const std::string upstream = expected_class + ": " + expected;
  try {
    run_backend(hostile, backend);
  } catch (const ImplFailure& e) {
    if (e.failure_class() != FailureClass::rejected_valid_call) RC_FAIL(e.what());
    if (!o.contract_messages) return;
    const bool same_class = e.raised_class().empty() || e.raised_class() == expected_class;
    if (e.raised() != expected || !same_class)
      RC_FAIL(tag(FailureClass::wrong_message) + backend.name + " refused " + m.slug + " with " +
              (e.raised_class().empty() ? "" : e.raised_class() + ": ") + e.raised() + "; upstream raises " + upstream);
    return;
  } catch (const BackendUnsupported& e) {
    if (o.contract_messages)
      RC_FAIL(tag(FailureClass::wrong_message) + backend.name + " refused " + m.slug + " as unsupported (" + e.what() +
              "); upstream raises " + upstream);
    return;
  } catch (const std::exception& e) {
    RC_FAIL(tag(FailureClass::crashed) + "running " + backend.name + " on a hostile call: " + e.what());
  }
  RC_FAIL(tag(FailureClass::accepted_hostile_call) + backend.name + " returned normally from a call upstream rejects (" +
          m.id + " " + m.slug + ": " + m.what + "); upstream raises " + upstream);
}

Property make_property(const OpFuzzSpec& spec, const Backend& backend, const std::string& kind,
                       const ImplPropertyOptions& o) {
  Property p;
  p.op = spec.op;
  p.backend = backend.name;
  p.buckets = spec.buckets;
  // The bound on unchecked cases guards kparity's own generators against vacuity. Here the share
  // is the implementation's scope, not the harness's: calls its signature cannot express and calls
  // it declines (NotImplementedError, BackendUnsupported) are discarded, and both are reported. An
  // implementation that checks almost nothing still fails: RapidCheck gives up past ten discards
  // per checked case, reported as `not-exercised`.
  p.max_discard_share = 1.0;
  p.discard_why = "the implementation's own scope: calls outside its signature or declined by it";
  if (kind == "differential" || kind == "differential-special-values") {
    const bool special = kind != "differential";
    p.name = spec.op + "/" + kind + "/" + backend.name;
    p.kind = "differential";
    p.body = [spec, backend, o, special] { differential_case(spec, backend, o, special); };
  } else if (kind == "deterministic") {
    p.name = spec.op + "/deterministic/" + backend.name;
    p.kind = "metamorphic";
    p.body = [spec, backend, o] { deterministic_case(spec, backend, o); };
  } else if (kind == "contract") {
    p.name = spec.op + "/rejects-hostile-calls/" + backend.name;
    p.kind = "hostile";
    p.buckets.clear();
    p.body = [spec, backend, o, table = hostile_mutations(spec.op)] { contract_case(spec, backend, o, table); };
  } else {
    throw std::invalid_argument("unknown implementation property kind '" + kind +
                                "' (known: differential, differential-special-values, deterministic, contract)");
  }
  return p;
}

}  // namespace

std::uint64_t call_fingerprint(const Call& c) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  };
  auto mix_str = [&](const std::string& s) { mix(s.data(), s.size() + 1); };
  mix_str(c.op);
  for (const auto& [name, t] : c.tensors) {
    mix_str(name);
    const TensorView v = t.view();
    mix(&v.dtype, sizeof v.dtype);
    mix(v.sizes.data(), sizeof(std::int64_t) * static_cast<std::size_t>(v.rank));
    mix(v.strides.data(), sizeof(std::int64_t) * static_cast<std::size_t>(v.rank));
    mix(t.storage().data(), t.storage().size());
  }
  for (const auto& [name, v] : c.scalars) mix_str(name), mix(&v, sizeof v);
  for (const auto& [name, v] : c.flags) mix_str(name), mix(&v, sizeof v);
  return h;
}

std::vector<Property> implementation_properties(const Backend& backend, const std::vector<OpFuzzSpec>& specs,
                                                const ImplPropertyOptions& options) {
  std::vector<Property> out;
  for (const auto& spec : specs) {
    if (!backend.implements(spec.op)) continue;
    for (const auto& kind : options.kinds) out.push_back(make_property(spec, backend, kind, options));
  }
  return out;
}

}  // namespace kparity::fuzz
