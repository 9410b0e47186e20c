// The shared differential rule (rule.hpp), written once for every op and backend.
#include "kparity/judge/rule.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/judge/floors.hpp"
#include "kparity/judge/harness_mutant.hpp"
#include "kparity/judge/runs.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/elements.hpp"
#include "kparity/reference/error_bound.hpp"
#include "row_max.hpp"
#include "rule_serial.hpp"

namespace kparity::judging {
namespace {

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

// The stores' part of the a-priori term (S_i in the header), with the dtypes' constants looked up
// once per tensor: u_b (|o| + A) + f_b + u_o |o| + f_o.
struct StoreTerm {
  double ub, fb, uo, fo;
  StoreTerm(DType b, DType ot)
      : ub(reference::unit_roundoff(b)), fb(reference::underflow_unit(b)), uo(reference::unit_roundoff(ot)),
        fo(reference::underflow_unit(ot)) {}
  double operator()(double o, double A) const { return ub * (std::fabs(o) + A) + fb + uo * std::fabs(o) + fo; }
};

// The rule's ratio |b - o| / max(empirical, a-priori term) of n finite elements (A: their a-priori
// bounds, or null), each as the element loop in judge_tensor takes it. The quotient is taken in every
// lane and used only where allowed > 0 (the same value there), so the loop stays in vector lanes.
JUDGE_CLONES
void row_ratios(std::int64_t n, const double* __restrict ro, const double* __restrict rb, const double* __restrict A,
                double empirical, StoreTerm st, double* __restrict out) {
  const double e0 = std::max(empirical, 0.0);
  if (A == nullptr) {
    for (std::int64_t i = 0; i < n; ++i) {
      const double d = std::fabs(rb[i] - ro[i]), q = d / e0;
      out[i] = e0 > 0 ? q : d > 0 ? INFINITY : 0.0;
    }
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const double ao = std::fabs(ro[i]);
    const double x = A[i] + (st.ub * (ao + A[i]) + st.fb + st.uo * ao + st.fo);
    const double allowed = empirical < x ? x : empirical;  // std::max(empirical, x)
    const double d = std::fabs(rb[i] - ro[i]), q = d / allowed;
    out[i] = allowed > 0 ? q : d > 0 ? INFINITY : 0.0;
  }
}

// Calls fn(at, n, ro, rf, rb) for every row of the innermost dimension of the shape of `o`, in
// row-major order: `at` the row-major position of the row's first element and ro/rf/rb its n values
// in o, f and b (same shape, any strides and dtypes), widened as TensorView::load widens them. One
// dtype dispatch per row, not per element. Without WithF, f is not read (rf is null).
template <bool WithF = true, class Fn, class Want>
void for_each_row(const TensorView& o, const TensorView& f, const TensorView& b, Fn&& fn, Want&& want) {
  const std::int64_t total = o.numel();
  if (total == 0) return;
  const int r = o.rank;
  const std::int64_t n = r == 0 ? 1 : o.sizes[r - 1];
  const std::int64_t so = r == 0 ? 0 : o.strides[r - 1], sf = r == 0 ? 0 : f.strides[r - 1], sb = r == 0 ? 0 : b.strides[r - 1];
  thread_local std::vector<double> ro, rf, rb;
  ro.resize(static_cast<std::size_t>(n)), rf.resize(ro.size()), rb.resize(ro.size());
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t oo = 0, of = 0, ob = 0;
  for (std::int64_t at = 0; at < total; at += n) {
    if (want(at)) {
      reference::elements::load_run(o, oo, so, n, ro.data());
      if constexpr (WithF) reference::elements::load_run(f, of, sf, n, rf.data());
      reference::elements::load_run(b, ob, sb, n, rb.data());
      fn(at, n, ro.data(), WithF ? rf.data() : nullptr, rb.data());
    }
    for (int d = r - 2; d >= 0; --d) {
      oo += o.strides[d], of += f.strides[d], ob += b.strides[d];
      if (++idx[d] < o.sizes[d]) break;
      oo -= idx[d] * o.strides[d], of -= idx[d] * f.strides[d], ob -= idx[d] * b.strides[d];
      idx[d] = 0;
    }
  }
}

template <bool WithF = true, class Fn>
void for_each_row(const TensorView& o, const TensorView& f, const TensorView& b, Fn&& fn) {
  for_each_row<WithF>(o, f, b, fn, [](std::int64_t) { return true; });
}

// Whether the n values of each row are finite: a sum of x - x is 0 exactly when they are (inf - inf
// and NaN give NaN), in eight independent sums (one vector; a test a value kept the loop scalar, and
// the compiler does not reorder one sum).
JUDGE_CLONES
bool all_finite(std::int64_t n, const double* __restrict a, const double* __restrict b) {
  double s[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) s[l] += (a[i + l] - a[i + l]) + (b[i + l] - b[i + l]);
  double r = 0;
  for (; i < n; ++i) r += (a[i] - a[i]) + (b[i] - b[i]);
  for (double v : s) r += v;
  return r == 0;
}

// Whether o, f and b are finite (as all_finite) and, when they are, max |f - o| and max |b - o|, in one pass
// over the three rows: eight lanes each, combined at the end (a max is order-free, the finiteness
// sum of zeros and NaNs too).
JUDGE_CLONES
bool finite_diffs(std::int64_t n, const double* __restrict o, const double* __restrict f, const double* __restrict b,
                  double& df, double& db) {
  double s[8] = {}, mf[8] = {}, mb[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const double x = o[i + l], y = f[i + l], z = b[i + l];
      s[l] += (x - x) + (y - y) + (z - z);
      const double a = std::fabs(y - x), c = std::fabs(z - x);
      mf[l] = mf[l] < a ? a : mf[l];
      mb[l] = mb[l] < c ? c : mb[l];
    }
  double r = 0, rf = 0, rb = 0;
  for (; i < n; ++i) {
    r += (o[i] - o[i]) + (f[i] - f[i]) + (b[i] - b[i]);
    rf = std::max(rf, std::fabs(f[i] - o[i])), rb = std::max(rb, std::fabs(b[i] - o[i]));
  }
  for (int l = 0; l < 8; ++l) r += s[l], rf = std::max(rf, mf[l]), rb = std::max(rb, mb[l]);
  df = rf, db = rb;
  return r == 0;
}

// The multi-index of row-major position `at` in `shape`.
std::vector<std::int64_t> unflat(std::int64_t at, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  std::size_t rest = static_cast<std::size_t>(at);
  for (std::size_t k = shape.size(); k-- > 0;) {
    idx[k] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(shape[k]));
    rest /= static_cast<std::size_t>(shape[k]);
  }
  return idx;
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
  // Two passes over the elements, a row of the innermost dimension at a time (issue 25: the rule's
  // per-element cost was a large share of a kernel-sized case): the first takes err_f, the class
  // checks and the largest |b - o|, the second the ratios, which need err_f. Same values and the
  // same first-in-order worst element as one pass with the ratios taken afterwards.
  const Shape shape = o.shape();
  const double b_overflow = reference::store_overflow(b.dtype);
  // Rows whose b equals o everywhere (finite): every ratio there is exactly 0 (issue 32 (3): a state
  // pool's untouched slots are most of a decode op's written elements).
  thread_local std::vector<char> b_is_o;
  b_is_o.clear();
  for_each_row(o, f, b, [&](std::int64_t at0, std::int64_t n, const double* ro, const double* rf, const double* rb) {
    double df = 0, db = 0;
    if (finite_diffs(n, ro, rf, rb, df, db)) {
      // Every class is finite: only the two maxima (the order of a max does not change its value).
      e.faithful = std::max(e.faithful, df);
      e.backend = std::max(e.backend, db);
      b_is_o.push_back(db == 0);
      return;
    }
    b_is_o.push_back(0);
    for (std::int64_t i = 0; i < n; ++i) {
      const double vo = ro[i], vf = rf[i], vb = rb[i];
      const int co = value_class(vo), cf = value_class(vf), cb = value_class(vb);
      if (co == 0 && cf == 0) e.faithful = std::max(e.faithful, std::fabs(vf - vo));
      if (co == 0 && cb == 0) {
        e.backend = std::max(e.backend, std::fabs(vb - vo));
        continue;
      }
      // A non-finite value on either side: b must share o's class, or f's (see the header), or the
      // a-priori recipe must have seen an overflow coming.
      if (same_verdict(cb, co) || same_verdict(cb, cf)) continue;
      const double A = apriori ? (*apriori)[static_cast<std::size_t>(at0 + i)] : 0.0;
      if (A == INFINITY) continue;  // the recipe sees fp32's range lost there: any value, any class
      if (co == 0 && cb != 1 && (cb == 2) == (vo > 0) && std::fabs(vo) + A >= b_overflow) continue;
      if (!e.mismatch) {
        e.mismatch = true;
        e.worst = "class mismatch at " + element_text(unflat(at0 + i, shape), vb, vo, vf);
      }
    }
  });
  const double factor = harness_mutant(HarnessMutant::rule_factor_one) ? 1.0 : 2.0;
  const double empirical = std::max(factor * e.faithful, floor);
  e.bound = empirical;
  std::int64_t worst = -1;
  const StoreTerm store_term(b.dtype, o.dtype);
  // The second pass reads o and b only (f's part, err_f, is known).
  thread_local std::vector<double> ratios;
  for_each_row<false>(o, f, b, [&](std::int64_t at0, std::int64_t n, const double* ro, const double*, const double* rb) {
    if (all_finite(n, ro, rb)) {
      // The row's ratios in vector lanes (the same expressions), then the first largest in order.
      ratios.resize(static_cast<std::size_t>(n));
      row_ratios(n, ro, rb, apriori ? apriori->data() + at0 : nullptr, empirical, store_term, ratios.data());
      for (std::int64_t i = 0; i < n; ++i) {
        if (worst >= 0 && !(ratios[i] > e.ratio)) continue;
        worst = at0 + i, e.ratio = ratios[i];
        const double x = apriori ? (*apriori)[static_cast<std::size_t>(at0 + i)] + store_term(ro[i], (*apriori)[static_cast<std::size_t>(at0 + i)]) : 0.0;
        e.bound = std::max(empirical, x), e.apriori = x;
      }
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const double vo = ro[i], vb = rb[i];
      if (value_class(vo) != 0 || value_class(vb) != 0) continue;
      const double d = std::fabs(vb - vo);
      double x = 0.0;
      if (apriori) {
        const double A = (*apriori)[static_cast<std::size_t>(at0 + i)];
        x = A + store_term(vo, A);
      }
      const double allowed = std::max(empirical, x);
      const double ratio = allowed > 0 ? d / allowed : d > 0 ? INFINITY : 0.0;
      if (worst < 0 || ratio > e.ratio) worst = at0 + i, e.ratio = ratio, e.bound = allowed, e.apriori = x;
    }
  }, [&](std::int64_t at0) {
    // A row of zero ratios cannot follow a first worst element (ratio > e.ratio >= 0 never holds
    // there): skipped, unread, once one is found. A row with a non-finite value is always read.
    const std::int64_t n = o.rank == 0 ? 1 : o.sizes[o.rank - 1];
    return worst < 0 || !b_is_o[static_cast<std::size_t>(at0 / n)];
  });
  if (worst >= 0 && !e.mismatch) {
    const std::vector<std::int64_t> idx = unflat(worst, shape);
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

std::uint64_t& detail::rule_serial() {
  thread_local std::uint64_t serial = 0;
  return serial;
}

namespace {

// rule() with the a-priori bounds already taken (given: from the oracle's pass, run_oracle_written),
// else computed here.
DifferentialResult rule_given(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                              const RuleOptions& options, std::optional<reference::ErrorBounds> given) {
  ++detail::rule_serial();
  DifferentialResult r;
  const std::optional<reference::ErrorBounds> bounds = [&] {
    if (given) return given;
    const reference::PrecisionProfileScope scope(options.profile.value_or(reference::precision_profile()));
    return apriori_bounds(input);
  }();
  const TensorError* worst = nullptr;
  double worst_ratio = -1.0;
  r.tensors.reserve(input.written.size());
  for (const auto& name : input.written) {
    const std::vector<double>* apriori = nullptr;
    if (bounds)
      if (auto it = bounds->find(name); it != bounds->end()) apriori = &it->second;
    double floor = options.floor ? options.floor(input, name, &oracle) : abs_floor(input, name, &oracle);
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

}  // namespace

DifferentialResult rule(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                        const RuleOptions& options) {
  return rule_given(input, oracle, faithful, backend, options, std::nullopt);
}

DifferentialResult run_and_judge(const Call& call, const Backend& backend, const RuleOptions& options) {
  // The backend first: a call it does not support (BackendUnsupported) costs no reference runs.
  const Call b = run_backend(call, backend);
  std::optional<reference::ErrorBounds> bounds;  // the sparse ops': from the oracle's pass
  const Call o = run_oracle_written(call, bounds, options.profile);
  const Call f = run_faithful_written(call, options.profile);
  return rule_given(call, o, f, b, options, std::move(bounds));
}

}  // namespace kparity::judging
