// The oracle held against an independent evaluation of itself (issue 25): `<op>/oracle/long-accumulator`.
//
// Why a property: the differential rule cannot see a wrong oracle, because its bound contains
// 2 max|faithful - oracle|, so an inexact oracle widens its own tolerance (and the a-priori term
// admits anything where sums cancel). Here the oracle runs twice on one small drawn call, its
// written tensors stored in fp64 (ops/wide_outputs.hpp: the oracle's values before any rounding to
// the call's dtypes, so a last-bit difference of an fp64 sum shows): once as shipped (the certified
// fast paths of exact_lanes.hpp and sparse/exact_logits.hpp), once under
// OracleEvaluation::long_sums (accumulate.hpp), where every sum is added into the long accumulator
// and rounded once, no certificate and no fast path: slow and obviously right. The two must agree
// bit for bit (NaN with NaN) on every element.
//
// Each case is one of three kinds, each a bucket: `oracle:plain` (the op's generator as drawn),
// `oracle:special-values` (its special-values draw) and `oracle:cancelling`: terms of +-2^k around
// small ones, so that a sum taken in plain fp64 loses the small ones. Sparse ops: q gets the same
// small integer c in its first and last channel and every row +B s_r and -B s_r there, so q.k
// cancels exactly to the other channels and P.V's first and last channels are weighted sums of +-B
// (B = 2^60 for bf16 inputs, 2^15 for f16). KDA ops: every state row gets +B and -B in its first
// and last columns and the K-channel inputs (q, k, the gate's a or g, dt_bias, the rings' k and g) a
// copy of channel 0 in channel K - 1, so that those two columns cancel in S k and S q.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <rapidcheck.h>
#include <string>

#include <fmt/format.h>

#include "kparity/core/random.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/ops/wide_outputs.hpp"
#include "kparity/reference/accumulate.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

// ---- cancelling calls ----------------------------------------------------------------------------

// Element `k` of the last dimension copied into element `to` of it, in every block of `width`
// elements starting at `first` (a [.., blocks * width] layout), for every leading index.
void copy_channel(const TensorView& v, I first, I blocks, I width, I k, I to) {
  for_each_element(v, [&](std::span<const I> idx, I) {
    const I last = idx.back();
    if (last < first || last >= first + blocks * width || (last - first) % width != to) return;
    std::vector<I> from(idx.begin(), idx.end());
    from.back() = last - to + k;
    v.store(idx, v.load(from));
  });
}

// Every row of `v` (last dimension K at stride 1 of the index) gets +B s and -B s in columns 0 and K-1.
void cancel_pair(const TensorView& v, double B, Rng& rng) {
  const I K = v.size(-1);
  if (K < 3) return;
  for_each_element(v, [&](std::span<const I> idx, I) {
    if (idx.back() != 0) return;
    const double s = rng.integer(0, 1) ? B : -B;
    std::vector<I> other(idx.begin(), idx.end());
    other.back() = K - 1;
    v.store(idx, s);
    v.store(other, -s);
  });
}

double big_for(DType t) { return t == DType::f16 ? 0x1p15 : t == DType::bf16 ? 0x1p60 : 0x1p100; }

bool cancel_sparse(Call& c, std::uint64_t seed) {
  const TensorView q = c.at("q").view();
  const I D = q.size(2);
  if (D < 3) return false;
  Rng rng(seed);
  const double cq = static_cast<double>(rng.integer(1, 3));
  for_each_element(q, [&](std::span<const I> idx, I) {
    if (idx[2] == 0 || idx[2] == D - 1) q.store(idx, cq);
  });
  for (const char* name : {"unified_kv", "kv"}) {
    auto it = c.tensors.find(name);
    if (it == c.tensors.end()) continue;
    cancel_pair(it->second.view(), big_for(it->second.dtype()), rng);
  }
  return true;
}

bool cancel_kda(Call& c, std::uint64_t seed) {
  if (c.op == "kda/chunk") return false;  // its state layout varies; its oracle is kda/recurrent's
  auto it_state = c.tensors.find("initial_state");
  if (it_state == c.tensors.end()) return false;  // a recurrent call from zeros: nothing to cancel against
  const TensorView st = it_state->second.view();
  const I K = st.size(-1);
  if (K < 3) return false;
  Rng rng(seed);
  const I HV = st.size(1);
  if (c.op == "kda/recurrent") {
    for (const char* name : {"q", "k", "g"})
      if (auto it = c.tensors.find(name); it != c.tensors.end()) copy_channel(it->second.view(), 0, 1, K, 0, K - 1);
  } else {
    const TensorView m = c.at("mixed_qkv").view();
    const I H = (m.size(1) - HV * st.size(2)) / 2 / K;
    copy_channel(m, 0, 2 * H, K, 0, K - 1);  // the q and k parts
    for (const char* name : {"k_cache", "g_cache"})
      if (auto it = c.tensors.find(name); it != c.tensors.end()) copy_channel(it->second.view(), 0, 1, K, 0, K - 1);
  }
  for (const char* name : {"a", "dt_bias"}) {
    auto it = c.tensors.find(name);
    if (it == c.tensors.end()) continue;
    const TensorView v = it->second.view();
    const I last = v.size(-1);
    copy_channel(v, 0, last == K ? 1 : last / K, K, 0, K - 1);
  }
  cancel_pair(st, big_for(st.dtype) / 0x1p20, rng);  // room for the state's growth over the steps
  return true;
}

// ---- the comparison --------------------------------------------------------------------------------

// The oracle's results of `c` in fp64 where the contract lets the written tensors be copied so
// (else in the call's dtypes), under the given evaluation.
std::map<std::string, Tensor> oracle_results(const Call& c, reference::OracleEvaluation e) {
  const reference::OracleEvaluationScope scope(e);
  // A harness mutant's planted oracle fault reaches the shipped evaluation, as it reaches run_oracle.
  std::optional<reference::PlantedFaultScope> fault;
  if (e == reference::OracleEvaluation::fast)
    if (const auto f = oracle_mutant_fault()) fault.emplace(*f);
  Call x = c;
  std::map<std::string, Tensor> out;
  try {
    const ops::WideCall wide = ops::widen_written(x.op, x.bag(), DType::f64, x.options);
    ops::run_reference(x.op, wide, reference::Precision::oracle, x.options);
    for (const auto& name : x.written) {
      auto it = wide.copies.find(name);
      out[name] = it != wide.copies.end() ? it->second : x.at(name);
    }
    return out;
  } catch (const std::invalid_argument&) {  // a copy the contract cannot waive: the call's own dtypes
  }
  x = c;
  ops::run_reference(x.op, x.bag(), reference::Precision::oracle, x.options);
  for (const auto& name : x.written) out[name] = x.at(name);
  return out;
}

// "" when a and b hold the same values bit for bit (any NaN equal to any NaN), else the first difference.
std::string first_difference(const std::string& name, const TensorView& a, const TensorView& b) {
  std::string diff;
  for_each_element(a, [&](std::span<const I> idx, I) {
    if (!diff.empty()) return;
    const double x = a.load(idx), y = b.load(idx);
    if (std::isnan(x) && std::isnan(y)) return;
    std::uint64_t bx, by;
    std::memcpy(&bx, &x, 8), std::memcpy(&by, &y, 8);
    if (bx == by) return;
    std::string at;
    for (I i : idx) at += (at.empty() ? "" : ", ") + std::to_string(i);
    diff = fmt::format("{}[{}]: fast {} ({:016x}), long accumulator {} ({:016x})", name, at, x, bx, y, by);
  });
  return diff;
}

Property oracle_property(const OpFuzzSpec& spec) {
  Property p;
  p.name = spec.op + "/oracle/long-accumulator";
  p.kind = "oracle";
  p.op = spec.op;
  p.buckets = spec.buckets;
  for (const char* b : {"oracle:plain", "oracle:special-values"}) p.buckets.emplace_back(b);
  if (spec.op != "kda/chunk") p.buckets.emplace_back("oracle:cancelling");  // cancel_kda leaves chunk calls as drawn
  p.body = [spec] {
    enum class Kind { plain, cancelling, special };
    const Kind kind = *rc::gen::element(Kind::plain, Kind::cancelling, Kind::special);
    GenConfig cfg;
    cfg.special_values = kind == Kind::special;
    Call c = spec.draw(cfg);
    if (cfg.special_values) c.options.deep = false;  // as the differential properties run such calls
    bool cancelled = false;
    if (kind == Kind::cancelling) {
      const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
      cancelled = spec.op.rfind("sparse/", 0) == 0 ? cancel_sparse(c, seed) : cancel_kda(c, seed);
      // Cancelling values are data that kparity's deep checks may refuse where upstream accepts them.
      if (cancelled) c.options.deep = false;
    }
    note_bucket(kind == Kind::special ? "oracle:special-values" : cancelled ? "oracle:cancelling" : "oracle:plain");
    record_call(c);
    RC_LOG() << (c.description.empty() ? c.op : c.description) << (cancelled ? " (cancelling)" : "") << "\n";
    const auto fast = oracle_results(c, reference::OracleEvaluation::fast);
    const auto slow = oracle_results(c, reference::OracleEvaluation::long_sums);
    for (const auto& name : c.written) {
      const std::string d = first_difference(name, fast.at(name).view(), slow.at(name).view());
      if (!d.empty()) RC_FAIL("the oracle differs from its long-accumulator evaluation: " + d);
    }
  };
  return p;
}

}  // namespace

std::vector<Property> oracle_properties() {
  std::vector<Property> out;
  for (const auto& spec : op_specs()) out.push_back(oracle_property(spec));
  return out;
}

}  // namespace kparity::fuzz
