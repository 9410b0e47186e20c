// The references as the differential rule runs them (runs.hpp).
#include "kparity/judge/runs.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

#include "kparity/judge/harness_mutant.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/accumulate.hpp"
#include "kparity/reference/elements.hpp"
#include "kparity/reference/error_bound.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace kparity::judging {
namespace {

bool narrow_float(DType t) { return t == DType::bf16 || t == DType::f16; }

bool has_error(const std::vector<Diagnostic>& ds) {
  return std::any_of(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
}

// dst (f32, contiguous, src's shape) = src's values, exactly (a 16-bit float widens exactly): a row
// of the innermost dimension at a time instead of Tensor::copy_from's element-by-element conversion.
void widen_into(const TensorView& src, Tensor& dst) {
  const std::int64_t total = src.numel();
  if (total == 0) return;
  const int r = src.rank;
  const std::int64_t n = r == 0 ? 1 : src.sizes[r - 1], step = r == 0 ? 0 : src.strides[r - 1];
  std::vector<double> row(static_cast<std::size_t>(n));
  float* out = static_cast<float*>(dst.view().data);
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t off = 0;
  for (std::int64_t at = 0; at < total; at += n) {
    reference::elements::load_run(src, off, step, n, row.data());
    for (std::int64_t i = 0; i < n; ++i) out[at + i] = static_cast<float>(row[static_cast<std::size_t>(i)]);
    for (int d = r - 2; d >= 0; --d) {
      off += src.strides[d];
      if (++idx[d] < src.sizes[d]) break;
      off -= idx[d] * src.strides[d];
      idx[d] = 0;
    }
  }
}

// A copy of `call` whose tensors are recycled copies (core/tensor.hpp: same bytes and layout, their
// large buffers reused from the thread's store with their pages mapped; issue 32 B: mapping fresh
// pages for the faithful and backend copies of a kernel-sized case was a twentieth of its host time).
Call recycled_clone(const Call& call) {
  Call c;
  c.op = call.op, c.scalars = call.scalars, c.flags = call.flags, c.written = call.written;
  c.pure_outputs = call.pure_outputs, c.description = call.description, c.options = call.options;
  for (const auto& [name, t] : call.tensors) c.tensors.emplace(name, Tensor::recycled_copy(t));
  return c;
}

// The written tensors of `call` in a Call of their own (recycled copies), with every field but the
// inputs; bag_over gives the references their views and `call`'s views of the inputs.
Call written_clone(const Call& call) {
  Call c;
  c.op = call.op, c.scalars = call.scalars, c.flags = call.flags, c.written = call.written;
  c.pure_outputs = call.pure_outputs, c.description = call.description, c.options = call.options;
  for (const auto& name : call.written)
    if (auto it = call.tensors.find(name); it != call.tensors.end()) c.tensors.emplace(name, Tensor::recycled_copy(it->second));
  return c;
}
ArgBag bag_over(const Call& call, const Call& own) {
  ArgBag b = call.bag();
  for (const auto& [name, t] : own.tensors) b.tensors[name] = t.view();
  return b;
}

// run_oracle's body; inputs_too: the returned Call holds copies of the inputs as well; bounds
// (optional): the bounds from the oracle's pass where the op has one (run_oracle_written).
Call oracle_run(const Call& call, bool inputs_too, std::optional<reference::ErrorBounds>* bounds = nullptr,
                std::optional<reference::PrecisionProfile> profile = std::nullopt) {
  std::optional<reference::PlantedFaultScope> inexact;
  if (const auto fault = oracle_mutant_fault()) inexact.emplace(*fault);
  // The copy the oracle writes into: the call with every written 16-bit float tensor widened to
  // fp32 (its results are rounded once, into fp32, and judged there). Built tensor by tensor: the
  // narrow written tensors are never copied as they are (issue 25: copying a kernel-sized out and
  // then replacing it was a tenth of a sparse case, page faults included).
  Call o;
  o.op = call.op, o.scalars = call.scalars, o.flags = call.flags, o.written = call.written;
  o.pure_outputs = call.pure_outputs, o.description = call.description, o.options = call.options;
  bool widened = false;
  for (const auto& [name, t] : call.tensors) {
    const bool written = std::find(call.written.begin(), call.written.end(), name) != call.written.end();
    if (!written || !narrow_float(t.dtype())) {
      if (written || inputs_too) o.tensors.emplace(name, Tensor::recycled_copy(t));
      continue;
    }
    // A pure output's old contents are never read: poisoned, as the call's own buffer was, instead of
    // converted element by element (a kernel-sized out has up to 2^24 elements).
    const bool pure = std::find(call.pure_outputs.begin(), call.pure_outputs.end(), name) != call.pure_outputs.end();
    Tensor wide = Tensor::recycled_poisoned(DType::f32, t.shape());
    if (!pure) widen_into(t.view(), wide);
    o.tensors.emplace(name, std::move(wide));
    widened = true;
  }
  ValidateOptions options = o.options;
  ArgBag bag = inputs_too ? o.bag() : bag_over(call, o);
  if (widened) {
    const OpContract* c = find_op_contract(o.op);
    if (c == nullptr) throw std::invalid_argument("no contract for op '" + o.op + "'");
    // kparity's optional checks tie some outputs' dtypes to an input's (sparse out like q). The
    // call itself passing its own checks, the widened copy differs only in those dtypes, and the
    // oracle's results do not depend on them (it rounds once, when storing): then the copy runs
    // under upstream's checks alone. Otherwise the oracle stores in the call's dtypes, as
    // `kparity run --out-dtype f32` falls back.
    ValidateOptions upstream = ValidateOptions::upstream();
    upstream.entry = Entry::reference;
    // The data-dependent (deep) checks read the same values in the call and in the copy (the
    // copies hold the call's values, pure outputs aside, which no check reads), so they run once,
    // on the call (issue 25: three deep passes a case were a tenth of a kernel-sized sparse case).
    // With the call valid, the copy passing the shape and dtype checks is the copy passing them all,
    // and the reference's own validation then skips the deep pass that has run.
    if (!has_error(c->validate(call.bag(), call.options))) {
      ValidateOptions shallow = options;
      shallow.deep = false;
      shallow.deep_pass_follows = options.deep;
      if (!has_error(c->validate(bag, shallow))) options = shallow;
      else if (!has_error(c->validate(bag, upstream))) options = upstream;
      else o = call, bag = o.bag();
    } else if (has_error(c->validate(bag, options))) {
      o = call, bag = o.bag();  // an invalid call: the reference run on it reports what is wrong
    }
  }
  if (bounds && !inexact && reference::planted_fault() == reference::PlantedFault::none &&
      reference::has_oracle_and_bound(o.op)) {
    const reference::PrecisionProfileScope scope(profile.value_or(reference::precision_profile()));
    *bounds = reference::oracle_and_bound(o.op, bag, options);
    return o;
  }
  ops::run_reference(o.op, bag, reference::Precision::oracle, options);
  return o;
}

Call faithful_run(const Call& call, std::optional<reference::PrecisionProfile> profile, bool inputs_too) {
  const reference::PrecisionProfileScope scope(profile.value_or(reference::precision_profile()));
  Call f = inputs_too ? recycled_clone(call) : written_clone(call);
  ops::run_reference(f.op, inputs_too ? f.bag() : bag_over(call, f), reference::Precision::faithful, f.options);
  return f;
}

}  // namespace

std::optional<reference::PlantedFault> oracle_mutant_fault() {
  if (harness_mutant(HarnessMutant::oracle_not_exact)) return reference::PlantedFault::oracle_plain_sums;
  if (harness_mutant(HarnessMutant::oracle_fast_path_inexact)) return reference::PlantedFault::oracle_lanes_uncompensated;
  return std::nullopt;
}

Call run_oracle(const Call& call) {
  if (harness_mutant(HarnessMutant::oracle_is_faithful)) return run_faithful(call);
  return oracle_run(call, true);
}

Call run_oracle_written(const Call& call) {
  if (harness_mutant(HarnessMutant::oracle_is_faithful)) return run_faithful_written(call);
  return oracle_run(call, false);
}

Call run_oracle_written(const Call& call, std::optional<reference::ErrorBounds>& bounds,
                        std::optional<reference::PrecisionProfile> profile) {
  bounds.reset();
  if (harness_mutant(HarnessMutant::oracle_is_faithful)) return run_faithful_written(call);
  return oracle_run(call, false, &bounds, profile);
}

Call run_faithful(const Call& call, std::optional<reference::PrecisionProfile> profile) {
  return faithful_run(call, profile, true);
}

Call run_faithful_written(const Call& call, std::optional<reference::PrecisionProfile> profile) {
  return faithful_run(call, profile, false);
}

Call run_backend(const Call& call, const Backend& backend) {
  Call b = recycled_clone(call);
  for (const auto& name : b.pure_outputs)
    if (auto it = b.tensors.find(name); it != b.tensors.end() && !harness_mutant(HarnessMutant::poison_off))
      it->second.poison();
  backend.run(b);
  return b;
}

Backend faithful_backend(std::vector<std::string> ops) {
  return Backend{"faithful", std::move(ops), [](Call& c) {
                   ops::run_reference(c.op, c.bag(), reference::Precision::faithful, c.options);
                 }};
}

Backend control_backend(reference::Accumulation a, std::vector<std::string> ops) {
  return Backend{"control/" + std::string(reference::accumulation_name(a)), std::move(ops), [a](Call& c) {
                   const reference::AccumulationScope scope(a);
                   ops::run_reference(c.op, c.bag(), reference::Precision::faithful, c.options);
                 }};
}

std::vector<Backend> control_backends(const std::vector<std::string>& ops) {
  std::vector<Backend> out;
  for (const auto a : reference::control_accumulations()) out.push_back(control_backend(a, ops));
  return out;
}

}  // namespace kparity::judging
