// The shared differential rule (differential.hpp), written once for every op and backend.
#include "kparity/fuzz/properties/differential.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <rapidcheck.h>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/fuzz/harness_mutant.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/error_bound.hpp"

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

// The row-major position of `idx` in `shape` (where the a-priori bounds keep that element's).
std::size_t flat_index(std::span<const std::int64_t> idx, const Shape& shape) {
  std::size_t f = 0;
  for (std::size_t k = 0; k < idx.size(); ++k) f = f * static_cast<std::size_t>(shape[k]) + static_cast<std::size_t>(idx[k]);
  return f;
}

// The stores' part of the a-priori term (S_i in the header).
double store_term(double o, double A, DType b, DType ot) {
  using reference::underflow_unit;
  using reference::unit_roundoff;
  return unit_roundoff(b) * (std::fabs(o) + A) + underflow_unit(b) + unit_roundoff(ot) * std::fabs(o) + underflow_unit(ot);
}

TensorError judge_tensor(const std::string& name, const TensorView& o, const TensorView& f, const TensorView& b,
                         double floor, const std::vector<double>* apriori) {
  TensorError e;
  e.name = name;
  e.floor = floor;
  if (o.shape() != b.shape() || o.shape() != f.shape() ||
      (apriori != nullptr && apriori->size() != static_cast<std::size_t>(o.numel()))) {
    e.mismatch = true;
    e.worst = fmt::format("shapes differ: backend {}, oracle {}, faithful {}", py_tuple(b.shape()),
                          py_tuple(o.shape()), py_tuple(f.shape()));
    e.pass = false;
    return e;
  }
  // One pass: err_f, the class checks, and for elements finite on both sides |b - o| and the
  // a-priori term; the ratios need err_f, so they are taken afterwards.
  const Shape shape = o.shape();
  const double b_overflow = reference::store_overflow(b.dtype);
  struct Finite {
    double d, a;
    std::size_t at;
  };
  std::vector<Finite> finite;
  finite.reserve(static_cast<std::size_t>(o.numel()));
  for_each_element(o, [&](std::span<const std::int64_t> idx, std::int64_t) {
    const double vo = o.load(idx), vf = f.load(idx), vb = b.load(idx);
    const int co = value_class(vo), cf = value_class(vf), cb = value_class(vb);
    const std::size_t at = flat_index(idx, shape);
    const double A = apriori ? (*apriori)[at] : 0.0;
    if (co == 0 && cf == 0) e.faithful = std::max(e.faithful, std::fabs(vf - vo));
    if (co == 0 && cb == 0) {
      const double d = std::fabs(vb - vo);
      e.backend = std::max(e.backend, d);
      finite.push_back({d, apriori ? A + store_term(vo, A, b.dtype, o.dtype) : 0.0, at});
      return;
    }
    // A non-finite value on either side: b must share o's class, or f's (see the header), or the
    // a-priori recipe must have seen an overflow coming.
    if (same_verdict(cb, co) || same_verdict(cb, cf)) return;
    if (A == INFINITY) return;  // the recipe sees fp32's range lost there: any value, any class
    if (co == 0 && cb != 1 && (cb == 2) == (vo > 0) && std::fabs(vo) + A >= b_overflow) return;
    if (!e.mismatch) {
      e.mismatch = true;
      e.worst = "class mismatch at " + element_text(idx, vb, vo, vf);
    }
  });
  const double factor = harness_mutant(HarnessMutant::rule_factor_one) ? 1.0 : 2.0;
  const double empirical = std::max(factor * e.faithful, floor);
  e.bound = empirical;
  const Finite* worst = nullptr;
  for (const Finite& x : finite) {
    const double allowed = std::max(empirical, x.a);
    const double ratio = allowed > 0 ? x.d / allowed : x.d > 0 ? INFINITY : 0.0;
    if (worst == nullptr || ratio > e.ratio) worst = &x, e.ratio = ratio, e.bound = allowed, e.apriori = x.a;
  }
  if (worst != nullptr && !e.mismatch) {
    std::vector<std::int64_t> idx(shape.size());
    std::size_t rest = worst->at;
    for (std::size_t k = shape.size(); k-- > 0;) {
      idx[k] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(shape[k]));
      rest /= static_cast<std::size_t>(shape[k]);
    }
    e.worst = element_text(idx, b.load(idx), o.load(idx), f.load(idx));
  }
  e.pass = !e.mismatch && e.ratio <= 1.0;
  return e;
}

// The a-priori bounds of the call's written tensors, or none for an op without them.
std::optional<reference::ErrorBounds> apriori_bounds(const Call& input) {
  try {
    return reference::error_bound(input.op, input.bag());
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

}  // namespace

DifferentialResult judge(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                         const OpFuzzSpec& spec) {
  DifferentialResult r;
  const std::optional<reference::ErrorBounds> bounds = apriori_bounds(input);
  const TensorError* worst = nullptr;
  double worst_ratio = -1.0;
  r.tensors.reserve(input.written.size());
  for (const auto& name : input.written) {
    const std::vector<double>* apriori = nullptr;
    if (bounds)
      if (auto it = bounds->find(name); it != bounds->end()) apriori = &it->second;
    double floor = spec.abs_floor ? spec.abs_floor(input, name, &oracle) : 0.0;
    if (harness_mutant(HarnessMutant::rule_no_floor)) floor = 0.0;
    if (harness_mutant(HarnessMutant::rule_floor_x100)) floor *= 100.0;
    TensorError e = judge_tensor(name, oracle.at(name).view(), faithful.at(name).view(), backend.at(name).view(),
                                 floor, apriori);
    r.pass = r.pass && e.pass;
    r.tensors.push_back(std::move(e));
  }
  for (const auto& e : r.tensors) {
    // A mismatch outranks any finite error; otherwise the largest share of the bound.
    const double ratio = e.mismatch ? INFINITY : e.ratio;
    if (ratio > worst_ratio) worst_ratio = ratio, worst = &e;
  }
  if (worst == nullptr) {
    r.detail = "no written tensors";
  } else if (worst->mismatch) {
    r.detail = fmt::format("{}: {}", worst->name, worst->worst);
  } else {
    r.detail = fmt::format("{}: |b-o| {:.3e} {} bound {:.3e} (2*err_f {:.3e}, floor {:.3e}, a-priori {:.3e}) at {}",
                           worst->name, worst->bound > 0 ? worst->ratio * worst->bound : worst->backend, worst->pass ? "<=" : ">", worst->bound,
                           2.0 * worst->faithful, worst->floor, worst->apriori, worst->worst.empty() ? "-" : worst->worst);
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
    s.ratio = std::max(s.ratio, e.ratio);
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
