// The properties of an implementation under test (implementation.hpp): the differential rule, determinism
// and the contract, each failure tagged with its class (failure.hpp).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <rapidcheck.h>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/fuzz/mutator/mutator.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace kparity::fuzz {
namespace {

std::string tag(FailureClass c) { return "[" + std::string(failure_class_name(c)) + "] "; }

// A call drawn inside the declared domain, and the edge buckets it noted (noted for the case only
// when the case passes: a redrawn call's buckets are not the case's).
struct Drawn {
  Call call;
  std::vector<std::string> buckets;
};

// A valid call of the spec's op inside the implementation's domain (adapt, supports): calls outside
// it are redrawn here, not discarded, so a narrow domain does not starve RapidCheck (which gives up
// past ten discards per passing case); each draw is counted (@drawn, @outside:<reason>). The same
// in search and shrinking (RapidCheck evaluates a case again while it shrinks, and must see the
// same outcome), so the domain must be a function of the call.
// The counters a case noted before RapidCheck discards it (the runner keeps the notes of passing
// cases only), kept in the ledger so that the report still counts its draws and declines.
void count_discarded_case(FindingLedger& ledger) {
  PropertyOutcome notes;
  for (auto& b : take_buckets()) ++notes.buckets[b];
  ledger.discarded_cases.add(strip_counters(notes));
}

Drawn draw_in_domain(const OpFuzzSpec& spec, const ImplPropertyOptions& o, bool special_values,
                     FindingLedger& ledger) {
  std::vector<std::string> notes = take_buckets();  // the counters this case noted so far
  GenConfig cfg;
  cfg.special_values = special_values;
  cfg.large = o.large;
  cfg.preset = o.preset;
  cfg.pins = o.pins;
  for (int i = 0; i < kMaxDraws; ++i) {
    Call c = spec.draw(cfg);
    std::vector<std::string> drawn = take_buckets();
    // Non-finite inputs are data that kparity's deep checks reject where upstream accepts them.
    if (special_values) c.options.deep = false;
    notes.emplace_back("@drawn");
    std::string outside;
    if (o.adapt && !o.adapt(c)) outside = "signature: the call needs an argument the implementation does not take";
    else if (o.supports) outside = o.supports(c);
    if (!outside.empty()) {
      notes.push_back("@outside:" + outside);
      continue;
    }
    for (auto& n : notes) note_bucket(std::move(n));
    return Drawn{std::move(c), std::move(drawn)};
  }
  for (auto& n : notes) note_bucket(std::move(n));
  count_discarded_case(ledger);
  RC_DISCARD("no call inside the implementation's domain in " + std::to_string(kMaxDraws) + " draws");
  return {};  // not reached: RC_DISCARD throws
}

// A call the property goes on with, recorded for the corpus and logged.
void use_call(const Call& c) {
  record_call(c);
  RC_LOG() << (c.description.empty() ? c.op : c.description) << "\n";
}

std::vector<std::string> edges_of(const std::vector<std::string>& buckets) {
  std::vector<std::string> e;
  for (const auto& b : buckets)
    if (is_edge_bucket(b)) e.push_back(b);
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  return e;
}

// The first line of a message, and its last when there are more (a Triton CompilationError names
// the source position first and the reason last), at most 300 characters.
std::string gist(std::string_view text) {
  const auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  const std::string_view first = trim(text.substr(0, text.find('\n')));
  std::string out(first);
  if (const std::size_t nl = text.rfind('\n'); nl != std::string_view::npos) {
    const std::string_view last = trim(text.substr(nl + 1));
    if (!last.empty() && last != first) out += " ... " + std::string(last);
  }
  if (out.size() > 300) out.resize(300);
  return out;
}

std::string backticked(std::string_view text) {
  const std::size_t a = text.find('`');
  if (a == std::string_view::npos) return "";
  const std::size_t b = text.find('`', a + 1);
  return b == std::string_view::npos ? "" : std::string(text.substr(a + 1, b - a - 1));
}

// The signature of a failure the backend run raised (findings.hpp).
FindingSignature failure_signature(const ImplFailure& e, const std::vector<std::string>& buckets) {
  FindingSignature s;
  s.cls = e.failure_class();
  std::string_view what = e.what();
  if (const std::size_t close = what.find("] "); what.rfind('[', 0) == 0 && close != std::string_view::npos)
    what.remove_prefix(close + 2);
  switch (s.cls) {
    case FailureClass::wrong_values:
    case FailureClass::not_deterministic:
      s.tensor = backticked(what);
      s.edges = edges_of(buckets);
      break;
    case FailureClass::wrote_outside_outputs:
      s.tensor = backticked(what);
      s.message = mask_numbers(gist(what));
      s.edges = edges_of(buckets);
      break;
    case FailureClass::timed_out:
      s.message = "no answer within the time limit";
      break;
    default:
      s.message = e.raised().empty() && e.raised_class().empty()
                      ? mask_numbers(gist(what))
                      : (e.raised_class().empty() ? "" : e.raised_class() + ": ") + mask_numbers(gist(e.raised()));
  }
  return s;
}

// A failing case that recurs an excluded finding (findings.hpp): counted, and the case passes
// unjudged (the run tops its budget up for such cases). Not redrawn: while RapidCheck shrinks
// another failure, such a candidate is simply no smaller case of it, and a redraw would replace it
// with an unrelated call.
bool recurring(const FindingLedger& ledger, const FindingSignature& s) {
  const std::string id = ledger.covering(s);
  if (!id.empty()) note_bucket("@known:" + id);
  return !id.empty();
}

// A failure of this check (RC_FAIL), unless RapidCheck is shrinking another one and this candidate
// fails differently: it then counts as passing (returns), so the shrunk call keeps the failure that
// was found instead of sliding to another (which gets its own round).
void settle(FindingLedger& ledger, const FindingSignature& s, const std::string& verdict) {
  if (ledger.steer_shrinking && ledger.target && !ledger.target->same_failure(s)) return;
  if (!ledger.target) ledger.target = s;
  ledger.last = s;
  RC_FAIL(verdict);
}

// Why the implementation declined its latest call (BackendUnsupported), for the report of a case
// that found nothing it would run.
std::string& last_declined() {
  static thread_local std::string why;
  return why;
}

// The backend on a poisoned clone. Returns nullopt when the case must draw again (the
// implementation declined the call) or end as passing (`stop` set: a recurrence of an excluded
// finding, or a shrink candidate that fails otherwise); failures of this check end the case.
std::optional<Call> run_or_settle(const Drawn& d, const Backend& backend, FindingLedger& ledger, bool& stop) {
  std::optional<ImplFailure> failure;
  try {
    return run_backend(d.call, backend);
  } catch (const BackendUnsupported& e) {
    note_bucket("@declined");  // like a call outside the domain: another is drawn
    last_declined() = e.what();
    return std::nullopt;
  } catch (const ImplFailure& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure.emplace(FailureClass::crashed, "running " + backend.name + ": " + e.what());
  }
  const FindingSignature s = failure_signature(*failure, d.buckets);
  if (recurring(ledger, s)) {
    stop = true;
    return std::nullopt;
  }
  use_call(d.call);
  settle(ledger, s, failure->what());
  stop = true;
  return std::nullopt;
}

void finish_case(const Drawn& d) {
  for (const auto& b : d.buckets) note_bucket(b);
  note_bucket("@judged");
}

// Calls run per case before it is discarded, each declined by the implementation: enough that a
// share of declines far above RapidCheck's one discard in ten still checks cases, few enough that
// an implementation that declines everything is given up on in seconds.
constexpr int kMaxAttempts = 10;

[[noreturn]] void give_up(FindingLedger& ledger) {
  count_discarded_case(ledger);
  RC_DISCARD("the implementation declined every call run in " + std::to_string(kMaxAttempts) + " tries (the last: " +
             last_declined() + ")");
  throw std::logic_error("unreachable");
}

void differential_case(const OpFuzzSpec& spec, const Backend& backend, const ImplPropertyOptions& o, bool special,
                       FindingLedger& ledger) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const Drawn d = draw_in_domain(spec, o, special, ledger);
    const Call& c = d.call;
    bool stop = false;
    const std::optional<Call> b = run_or_settle(d, backend, ledger, stop);
    if (stop) return;
    if (!b) continue;
    const Call f = run_faithful_written(c, o.profile);
    const DifferentialResult r = judge(c, run_oracle_written(c), f, *b, spec);
    if (!r.pass) {
      FindingSignature s;
      s.cls = FailureClass::wrong_values;
      for (const auto& t : r.tensors)
        if (!t.pass) {
          s.tensor = t.name;
          s.kind = t.mismatch ? "class" : "values";
          break;
        }
      s.edges = edges_of(d.buckets);
      if (recurring(ledger, s)) return;
      use_call(c);
      RC_LOG() << r.detail << "\n";
      settle(ledger, s, tag(FailureClass::wrong_values) + backend.name + " breaks the differential rule: " + r.detail);
      return;
    }
    use_call(c);
    note_errors(r);
    RC_LOG() << r.detail << "\n";
    finish_case(d);
    return;
  }
  give_up(ledger);
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

void deterministic_case(const OpFuzzSpec& spec, const Backend& backend, const ImplPropertyOptions& o,
                        FindingLedger& ledger) {
  // Calls found nondeterministic, by content: RapidCheck re-runs the shrunk counterexample last, and
  // a nondeterministic implementation may happen to agree with itself on that re-run.
  static thread_local std::map<std::pair<std::string, std::uint64_t>, std::pair<FindingSignature, std::string>> seen;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const Drawn d = draw_in_domain(spec, o, false, ledger);
    const Call& c = d.call;
    const auto key = std::make_pair(backend.name, call_fingerprint(c));
    bool stop = false;
    if (const auto it = seen.find(key); it != seen.end()) {
      if (recurring(ledger, it->second.first)) return;
      use_call(c);
      settle(ledger, it->second.first, it->second.second);
      return;
    }
    const std::optional<Call> first = run_or_settle(d, backend, ledger, stop);
    if (stop) return;
    if (!first) continue;
    const std::optional<Call> second = run_or_settle(d, backend, ledger, stop);
    if (stop) return;
    if (!second) continue;
    std::optional<std::pair<FindingSignature, std::string>> verdict;
    for (const auto& name : c.written) {
      const std::string diff = first_difference(name, first->at(name).view(), second->at(name).view());
      if (diff.empty()) continue;
      FindingSignature s;
      s.cls = FailureClass::not_deterministic;
      s.tensor = name;
      s.edges = edges_of(d.buckets);
      verdict.emplace(s, tag(FailureClass::not_deterministic) + backend.name + ": the same call twice, " + diff);
      break;
    }
    if (!verdict) {
      use_call(c);
      finish_case(d);
      return;
    }
    seen.emplace(key, *verdict);
    if (recurring(ledger, verdict->first)) return;
    use_call(c);
    settle(ledger, verdict->first, verdict->second);
    return;
  }
  give_up(ledger);
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
                   const std::vector<Mutation>& table, FindingLedger& ledger) {
  RC_PRE(!table.empty());
  const Drawn d = draw_in_domain(spec, o, false, ledger);
  const Call& c = d.call;
  use_call(c);
  const Mutation& m = *rc::gen::elementOf(table);
  const auto salt = *rc::gen::arbitrary<std::uint64_t>();
  // The mutant as the entry sees it: on a device implementation every tensor is a CUDA tensor (the
  // implementation gets them on the device), so a wrapper's "requires CUDA tensors" check does not
  // fire first on the host copies the harness holds.
  Mutant mu(c, o.on_device ? Device::cuda(0) : Device::cpu());
  if (!apply(mu, m, salt) || !mu.plain()) RC_DISCARD("mutation " + m.slug + " does not apply to this call");
  const Call hostile = mu.call;
  // What upstream says at this entry: exactly m's entry first, or the mutation does not stand for
  // it here (a CPU implementation is judged at the reference entry, without the CUDA-tensor check).
  ValidateOptions vo = m.options;
  vo.entry = o.on_device ? Entry::cuda_kernel : Entry::reference;
  std::string expected, expected_class;
  try {
    find_op_contract(c.op)->check(mu.bag(), vo);
  } catch (const ContractError& e) {
    if (e.id() != m.id) RC_DISCARD("mutation " + m.slug + " fires " + e.id() + " first at this entry");
    expected = e.what();
    expected_class = std::string(error_class_name(e.diagnostic().error_class));
  }
  if (expected.empty()) RC_DISCARD("mutation " + m.slug + " is accepted at this entry");
  RC_LOG() << "mutation " << m.id << " (" << m.slug << "): " << m.what << "\n";
  const std::string upstream = expected_class + ": " + expected;
  // A failure of this case, as a finding (its message names the mutation): a known one passes.
  const auto fail = [&](FailureClass cls, const std::string& verdict) {
    FindingSignature s;
    s.cls = cls;
    s.message = mask_numbers(gist(verdict.substr(verdict.find("] ") == std::string::npos ? 0 : verdict.find("] ") + 2)));
    if (recurring(ledger, s)) return;
    settle(ledger, s, verdict);
  };
  try {
    run_backend(hostile, backend);
  } catch (const ImplFailure& e) {
    if (e.failure_class() != FailureClass::rejected_valid_call) return fail(e.failure_class(), e.what());
    if (o.contract_messages) {
      const bool same_class = e.raised_class().empty() || e.raised_class() == expected_class;
      if (e.raised() != expected || !same_class)
        return fail(FailureClass::wrong_message,
                    tag(FailureClass::wrong_message) + backend.name + " refused " + m.slug + " with " +
                        (e.raised_class().empty() ? "" : e.raised_class() + ": ") + e.raised() + "; upstream raises " +
                        upstream);
    }
    note_bucket("@judged");
    return;
  } catch (const BackendUnsupported& e) {
    if (o.contract_messages)
      return fail(FailureClass::wrong_message, tag(FailureClass::wrong_message) + backend.name + " refused " + m.slug +
                                                   " as unsupported (" + e.what() + "); upstream raises " + upstream);
    note_bucket("@judged");
    return;
  } catch (const std::exception& e) {
    return fail(FailureClass::crashed,
                tag(FailureClass::crashed) + "running " + backend.name + " on a hostile call: " + e.what());
  }
  fail(FailureClass::accepted_hostile_call,
       tag(FailureClass::accepted_hostile_call) + backend.name + " returned normally from a call upstream rejects (" +
           m.id + " " + m.slug + ": " + m.what + "); upstream raises " + upstream);
}

Property make_property(const OpFuzzSpec& spec, const Backend& backend, const std::string& kind,
                       const ImplPropertyOptions& o) {
  Property p;
  p.op = spec.op;
  p.backend = backend.name;
  p.buckets = spec.buckets;
  // The bound on unchecked cases guards kparity's own generators against vacuity. Here the share
  // is the implementation's scope, not the harness's: calls outside its signature or its declared
  // domain, calls it declines (NotImplementedError, BackendUnsupported) and recurrences of known
  // findings are redrawn inside the case and counted (findings.hpp); a case that finds nothing to
  // check in kMaxDraws draws is discarded, and RapidCheck gives up past ten discards per checked
  // case, reported as `not-exercised`.
  p.max_discard_share = 1.0;
  p.discard_why = "the implementation's own scope: no call inside its domain that it runs";
  // Each property keeps what it found (findings.hpp), registered for the run around it.
  auto ledger = std::make_shared<FindingLedger>();
  if (kind == "differential" || kind == "differential-special-values") {
    const bool special = kind != "differential";
    p.name = spec.op + "/" + kind + "/" + backend.name;
    p.kind = "differential";
    p.body = [spec, backend, o, special, ledger] { differential_case(spec, backend, o, special, *ledger); };
  } else if (kind == "deterministic") {
    p.name = spec.op + "/deterministic/" + backend.name;
    p.kind = "metamorphic";
    p.body = [spec, backend, o, ledger] { deterministic_case(spec, backend, o, *ledger); };
  } else if (kind == "contract") {
    p.name = spec.op + "/rejects-hostile-calls/" + backend.name;
    p.kind = "hostile";
    p.buckets.clear();
    p.body = [spec, backend, o, ledger, table = hostile_mutations(spec.op)] {
      contract_case(spec, backend, o, table, *ledger);
    };
  } else {
    throw std::invalid_argument("unknown implementation property kind '" + kind +
                                "' (known: differential, differential-special-values, deterministic, contract)");
  }
  // The explain step after shrinking judges variants of a finding's call as this property does.
  ledger->check = implementation_check(spec, backend, kind, o.profile, o.adapt, o.supports);
  if (o.ledgers) (*o.ledgers)[p.name] = ledger;
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

FindingSignature signature_of_failure(const ImplFailure& e) { return failure_signature(e, {}); }

std::vector<Property> implementation_properties(const Backend& backend, const std::vector<OpFuzzSpec>& specs,
                                                const ImplPropertyOptions& options) {
  std::vector<Property> out;
  for (const auto& spec : specs) {
    if (!backend.implements(spec.op)) continue;
    for (const auto& kind : options.kinds) {
      // An op without upstream checks (kda/recurrent: fla's fused_recurrent_kda has no wrapper
      // checks, every catalog entry of it is kparity's own) has no contract to hold an
      // implementation to: no property, rather than one that discards every case.
      if (kind == "contract" && hostile_mutations(spec.op).empty()) continue;
      out.push_back(make_property(spec, backend, kind, options));
    }
  }
  return out;
}

}  // namespace kparity::fuzz
