// The check the explain step runs each variant through (campaign/explain.hpp): the implementation
// property's own judgement of one call, without RapidCheck. A variant is first held to what the
// property would have drawn: inside the implementation's signature (adapt) and declared domain
// (supports), and valid under the op's contract; otherwise it is skipped, never run.
#include <algorithm>
#include <cstring>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace kparity::fuzz {
namespace {

void failed_with(CallVerdict& v, const ImplFailure& e) {
  const FindingSignature s = signature_of_failure(e);
  v.failed = true;
  v.cls = s.cls;
  v.tensor = s.tensor;
  v.kind = s.kind;
  v.message = s.message;
  v.detail = e.what();
}

// The backend's run of `c`, or nullopt with `v` saying why not (declined) or how it failed.
std::optional<Call> run_once(const Call& c, const Backend& backend, CallVerdict& v) {
  try {
    return run_backend(c, backend);
  } catch (const BackendUnsupported& e) {
    v.skipped = std::string("declined: ") + e.what();
  } catch (const ImplFailure& e) {
    failed_with(v, e);
  } catch (const std::exception& e) {
    failed_with(v, ImplFailure(FailureClass::crashed, "running " + backend.name + ": " + e.what()));
  }
  return std::nullopt;
}

bool same_bytes(const TensorView& x, const TensorView& y) {
  const std::size_t es = x.element_size();
  bool same = true;
  for_each_element(x, [&](std::span<const std::int64_t> idx, std::int64_t) {
    if (!same) return;
    const auto* a = static_cast<const std::byte*>(x.data) + x.offset_of(idx) * static_cast<std::int64_t>(es);
    const auto* b = static_cast<const std::byte*>(y.data) + y.offset_of(idx) * static_cast<std::int64_t>(es);
    same = std::memcmp(a, b, es) == 0;
  });
  return same;
}

}  // namespace

CallCheck implementation_check(const OpFuzzSpec& spec, const Backend& backend, const std::string& kind,
                               std::optional<reference::PrecisionProfile> profile, std::function<bool(Call&)> adapt,
                               std::function<std::string(const Call&)> supports) {
  if (kind != "differential" && kind != "differential-special-values" && kind != "deterministic") return {};
  return [spec, backend, kind, profile, adapt, supports](const Call& in) -> CallVerdict {
    CallVerdict v;
    Call c = in;
    if (adapt && !adapt(c)) {
      v.skipped = "outside the implementation's signature";
      return v;
    }
    if (supports)
      if (const std::string why = supports(c); !why.empty()) {
        v.skipped = "outside the declared domain: " + why;
        return v;
      }
    if (const OpContract* contract = find_op_contract(c.op)) {
      for (const auto& d : contract->validate(c.bag(), c.options))
        if (d.severity == Severity::error) {
          v.skipped = "not a valid call: " + d.message;
          return v;
        }
    }
    if (kind == "deterministic") {
      const std::optional<Call> first = run_once(c, backend, v);
      if (!first) return v;
      const std::optional<Call> second = run_once(c, backend, v);
      if (!second) return v;
      for (const auto& name : c.written)
        if (!same_bytes(first->at(name).view(), second->at(name).view())) {
          v.failed = true;
          v.cls = FailureClass::not_deterministic;
          v.tensor = name;
          v.detail = "`" + name + "` differs between two runs of the same call";
          break;
        }
      return v;
    }
    std::optional<Call> b = run_once(c, backend, v);
    if (!b) return v;
    Call f = [&] {
      const reference::PrecisionProfileScope scope(profile.value_or(reference::precision_profile()));
      return run_faithful(c);
    }();
    Call o = run_oracle(c);
    const DifferentialResult r = judge(c, o, f, *b, spec);
    v.detail = r.detail;
    if (!r.pass) {
      v.failed = true;
      v.cls = FailureClass::wrong_values;
      for (const auto& t : r.tensors)
        if (!t.pass) {
          v.tensor = t.name;
          v.kind = t.mismatch ? "class" : "values";
          break;
        }
    }
    v.oracle = std::move(o);
    v.faithful = std::move(f);
    v.backend = std::move(b);
    return v;
  };
}

}  // namespace kparity::fuzz
