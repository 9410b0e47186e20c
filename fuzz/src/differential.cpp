// The shared differential rule (differential.hpp), written once for every op and backend.
#include "kparity/fuzz/differential.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/fuzz/property.hpp"

namespace kparity::fuzz {
namespace {

thread_local std::map<std::string, ErrorStat> t_errors;

bool narrow_float(DType t) { return t == DType::bf16 || t == DType::f16; }

bool has_error(const std::vector<Diagnostic>& ds) {
  return std::any_of(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
}

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
bool same_verdict(int a, int b) { return a == b || (a != 0 && b != 0 && (a == 1 || b == 1)); }

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

Call run_oracle(const Call& call) {
  Call o = call;
  bool widened = false;
  for (const auto& name : o.written) {
    auto it = o.tensors.find(name);
    if (it == o.tensors.end() || !narrow_float(it->second.dtype())) continue;
    Tensor wide(DType::f32, it->second.shape());
    wide.copy_from(it->second.view());
    it->second = std::move(wide);
    widened = true;
  }
  ValidateOptions options = o.options;
  if (widened) {
    const OpContract* c = find_op_contract(o.op);
    if (c == nullptr) throw std::invalid_argument("no contract for op '" + o.op + "'");
    // kparity's optional checks tie some outputs' dtypes to an input's (sparse out like q). The
    // call itself passing its own checks, the widened copy differs only in those dtypes, and the
    // oracle's results do not depend on them (it rounds once, when storing): then the copy runs
    // under upstream's checks alone. Otherwise the oracle stores in the call's dtypes, as
    // `kparity run --out-dtype f32` falls back.
    if (has_error(c->validate(o.bag(), options))) {
      ValidateOptions upstream = ValidateOptions::upstream();
      upstream.entry = Entry::reference;
      if (!has_error(c->validate(call.bag(), call.options)) && !has_error(c->validate(o.bag(), upstream)))
        options = upstream;
      else
        o = call;
    }
  }
  run_reference(o.op, o.bag(), reference::Precision::oracle, options);
  return o;
}

Call run_faithful(const Call& call) {
  Call f = call;
  run_reference(f.op, f.bag(), reference::Precision::faithful, f.options);
  return f;
}

Call run_backend(const Call& call, const Backend& backend) {
  Call b = call;
  for (const auto& name : b.pure_outputs)
    if (auto it = b.tensors.find(name); it != b.tensors.end()) it->second.poison();
  backend.run(b);
  return b;
}

DifferentialResult judge(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                         const OpFuzzSpec& spec) {
  DifferentialResult r;
  const TensorError* worst = nullptr;
  double worst_ratio = -1.0;
  r.tensors.reserve(input.written.size());
  for (const auto& name : input.written) {
    TensorError e = judge_tensor(name, oracle.at(name).view(), faithful.at(name).view(), backend.at(name).view());
    e.floor = spec.abs_floor ? spec.abs_floor(input, name) : 0.0;
    e.bound = std::max(2.0 * e.faithful, e.floor);
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

Backend faithful_backend(std::vector<std::string> ops) {
  return Backend{"faithful", std::move(ops), [](Call& c) {
                   run_reference(c.op, c.bag(), reference::Precision::faithful, c.options);
                 }};
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

}  // namespace kparity::fuzz
