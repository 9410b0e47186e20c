// The shared differential rule (differential.hpp), written once for every op and backend.
#include "kparity/fuzz/properties/differential.hpp"

#include <algorithm>
#include <cmath>
#include <rapidcheck.h>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/fuzz/harness_mutant.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::fuzz {
namespace {

thread_local std::map<std::string, ErrorStat> t_errors;

// 0 finite, then the three non-finite classes the rule tells apart.
int value_class(double x) {
  if (std::isnan(x)) return 1;
  if (std::isinf(x)) return x > 0 ? 2 : 3;
  return 0;
}

// Two non-finite classes agree when equal, or when one is NaN: an infinite input meets a zero
// factor (0 * Inf = NaN) in one association of a sum of products and not in another (the kernels'
// factored ReplaySSM readout; an fp32 overflow the oracle does not see), so NaN and +-Inf are the
// same verdict, "non-finite", while +Inf against -Inf is still a sign error.
bool same_verdict(int a, int b) {
  if (harness_mutant(HarnessMutant::classes_merged)) return a == b || (a != 0 && b != 0);
  if (harness_mutant(HarnessMutant::classes_split)) return a == b;
  return a == b || (a != 0 && b != 0 && (a == 1 || b == 1));
}

std::string index_text(std::span<const std::int64_t> idx) {
  std::string s = "[";
  for (std::size_t i = 0; i < idx.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", idx[i]);
  return s + "]";
}

std::string element_text(std::span<const std::int64_t> idx, double b, double o, double f) {
  return fmt::format("{}: b={}, o={}, f={}", index_text(idx), py_float(b), py_float(o), py_float(f));
}

TensorError judge_tensor(const std::string& name, const TensorView& o, const TensorView& f, const TensorView& b) {
  TensorError e;
  e.name = name;
  if (o.shape() != b.shape() || o.shape() != f.shape()) {
    e.mismatch = true;
    e.worst = fmt::format("shapes differ: backend {}, oracle {}, faithful {}", py_tuple(b.shape()),
                          py_tuple(o.shape()), py_tuple(f.shape()));
    return e;
  }
  double worst_b = -1.0;
  for_each_element(o, [&](std::span<const std::int64_t> idx, std::int64_t) {
    const double vo = o.load(idx), vf = f.load(idx), vb = b.load(idx);
    const int co = value_class(vo), cf = value_class(vf), cb = value_class(vb);
    if (co == 0 && cf == 0) e.faithful = std::max(e.faithful, std::fabs(vf - vo));
    if (co == 0 && cb == 0) {
      const double d = std::fabs(vb - vo);
      e.backend = std::max(e.backend, d);
      if (!e.mismatch && d > worst_b) {
        worst_b = d;
        e.worst = element_text(idx, vb, vo, vf);
      }
      return;
    }
    // A non-finite value on either side: b must share o's class, or f's (see the header).
    if (same_verdict(cb, co) || same_verdict(cb, cf)) return;
    if (!e.mismatch) {
      e.mismatch = true;
      e.worst = "class mismatch at " + element_text(idx, vb, vo, vf);
    }
  });
  return e;
}

}  // namespace

DifferentialResult judge(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                         const OpFuzzSpec& spec) {
  DifferentialResult r;
  const TensorError* worst = nullptr;
  double worst_ratio = -1.0;
  r.tensors.reserve(input.written.size());
  for (const auto& name : input.written) {
    TensorError e = judge_tensor(name, oracle.at(name).view(), faithful.at(name).view(), backend.at(name).view());
    e.floor = spec.abs_floor ? spec.abs_floor(input, name) : 0.0;
    if (harness_mutant(HarnessMutant::rule_no_floor)) e.floor = 0.0;
    if (harness_mutant(HarnessMutant::rule_floor_x100)) e.floor *= 100.0;
    const double factor = harness_mutant(HarnessMutant::rule_factor_one) ? 1.0 : 2.0;
    e.bound = std::max(factor * e.faithful, e.floor);
    e.pass = !e.mismatch && e.backend <= e.bound;
    r.pass = r.pass && e.pass;
    r.tensors.push_back(std::move(e));
  }
  for (const auto& e : r.tensors) {
    // A mismatch outranks any finite error; otherwise the largest share of the bound.
    const double ratio = e.mismatch ? INFINITY : e.bound > 0 ? e.backend / e.bound : e.backend > 0 ? 1e300 : 0.0;
    if (ratio > worst_ratio) worst_ratio = ratio, worst = &e;
  }
  if (worst == nullptr) {
    r.detail = "no written tensors";
  } else if (worst->mismatch) {
    r.detail = fmt::format("{}: {}", worst->name, worst->worst);
  } else {
    r.detail = fmt::format("{}: |b-o| {:.3e} {} bound {:.3e} (2*err_f {:.3e}, floor {:.3e}) at {}", worst->name,
                           worst->backend, worst->pass ? "<=" : ">", worst->bound, 2.0 * worst->faithful,
                           worst->floor, worst->worst.empty() ? "-" : worst->worst);
  }
  return r;
}

DifferentialResult differential(const Call& call, const Backend& backend, const OpFuzzSpec& spec) {
  // The backend first: a call it does not support (BackendUnsupported) costs no reference runs.
  const Call b = run_backend(call, backend);
  const Call o = run_oracle(call);
  const Call f = run_faithful(call);
  return judge(call, o, f, b, spec);
}

void note_errors(const DifferentialResult& r) {
  for (const auto& e : r.tensors) {
    ErrorStat& s = t_errors[e.name];
    s.backend = std::max(s.backend, e.backend);
    s.faithful = std::max(s.faithful, e.faithful);
    s.bound = std::max(s.bound, e.bound);
    if (e.bound > 0) s.ratio = std::max(s.ratio, e.backend / e.bound);
  }
}

std::map<std::string, ErrorStat> take_noted_errors() {
  std::map<std::string, ErrorStat> out;
  out.swap(t_errors);
  return out;
}

Property differential_property(const OpFuzzSpec& spec, const Backend& backend, bool special_values) {
  GenConfig cfg;
  cfg.special_values = special_values;
  // Kernels reject the small shapes the CPU tiers use (head dims below 16, say); drawing
  // kernel-sized ones keeps discards rare.
  cfg.large = backend.name == "cuda";
  Property p;
  p.name = spec.op + (special_values ? "/differential-special-values/" : "/differential/") + backend.name;
  p.kind = "differential";
  p.op = spec.op;
  p.backend = backend.name;
  p.buckets = spec.buckets;
  p.body = [spec, backend, cfg] {
    Call c = spec.draw(cfg);
    // Non-finite inputs are data that kparity's deep checks reject even where upstream accepts
    // them (a NaN in a selected row must propagate, not be refused).
    if (cfg.special_values) c.options.deep = false;
    record_call(c);
    RC_LOG() << (c.description.empty() ? c.op : c.description) << "\n";
    DifferentialResult r;
    try {
      r = differential(c, backend, spec);
    } catch (const BackendUnsupported& e) {
      RC_DISCARD(std::string("unsupported by ") + backend.name + ": " + e.what());
    }
    note_errors(r);
    RC_LOG() << r.detail << "\n";
    if (!r.pass) RC_FAIL(backend.name + " breaks the differential rule: " + r.detail);
  };
  return p;
}

std::vector<Property> differential_properties(const std::vector<Backend>& backends,
                                              const std::vector<OpFuzzSpec>& specs) {
  std::vector<Property> out;
  for (const auto& b : backends)
    for (const auto& s : specs) {
      if (!b.implements(s.op)) continue;
      out.push_back(differential_property(s, b, false));
      out.push_back(differential_property(s, b, true));
    }
  return out;
}

}  // namespace kparity::fuzz
