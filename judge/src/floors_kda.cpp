// The KDA ops' floors of the differential rule (floors.hpp); the recipes are next to the numbers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/judge/floors.hpp"
#include "row_max.hpp"
#include "kparity/judge/runs.hpp"
#include "runs_of.hpp"

namespace kparity::judging {

using I = std::int64_t;

namespace {

// One unit in the last place of dtype `t` at magnitude m (the subnormal spacing below the normal
// range).
double ulp(DType t, double m) {
  const int p = t == DType::bf16 ? 8 : t == DType::f16 ? 11 : 24;
  const int emin = t == DType::f16 ? -14 : -126;
  const int e = m > 0 && std::isfinite(m) ? std::max(std::ilogb(m), emin) : emin;
  return std::ldexp(1.0, e - p + 1);
}

double max_abs(const TensorView& v) {
  double m = 0;
  for_each_run(v, [&](const double* x, std::int64_t n) { m = rows::finite_abs_max(n, x, m); });
  return m;
}

std::uint64_t content_hash(const Call& c) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&](std::uint64_t x) { h = (h ^ x) * 0x100000001b3ull; };
  for (const auto& [name, t] : c.tensors) {
    for (unsigned char ch : name) mix(ch);
    const auto& bytes = t.storage();
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, bytes.data() + i, 8);
      mix(w);
    }
    for (; i < bytes.size(); ++i) mix(static_cast<std::uint64_t>(bytes[i]));
  }
  for (const auto& [name, v] : c.scalars) mix(std::hash<std::string>{}(name) ^ std::hash<double>{}(v));
  for (const auto& [name, v] : c.flags) mix(std::hash<std::string>{}(name) + v);
  return h;
}

// The largest finite |value| of every written tensor of the oracle's result of `input` (run_oracle,
// as the differential rule runs it). Callers without that result ask for one floor per written
// tensor of the same input, so one run serves them all.
const std::map<std::string, double>& oracle_magnitudes(const Call& input) {
  thread_local std::uint64_t key = 0;
  thread_local bool valid = false;
  thread_local std::map<std::string, double> mags;
  const std::uint64_t h = content_hash(input);
  if (valid && h == key) return mags;
  mags.clear();
  try {
    const Call o = run_oracle(input);
    for (const auto& name : o.written) mags[name] = max_abs(o.at(name).view());
  } catch (const std::exception&) {
    mags.clear();  // a call the oracle rejects gets the bare subnormal floor
  }
  key = h;
  valid = true;
  return mags;
}

double oracle_magnitude(const Call& input, std::string_view name, const Call* oracle) {
  if (oracle != nullptr) {
    const auto it = oracle->tensors.find(std::string(name));
    return it == oracle->tensors.end() ? 0.0 : max_abs(it->second.view());
  }
  const auto& mags = oracle_magnitudes(input);
  const auto it = mags.find(std::string(name));
  return it == mags.end() ? 0.0 : it->second;
}

// The recurrence's floor (recipes above): a tensor stored in `st` with largest oracle magnitude M,
// K-term dot products, the state carried over `longest` tokens.
double recurrence_floor(double M, DType st, I K, I longest) {
  const double ftz = 2.0 * std::numeric_limits<float>::min();
  const double store = st == DType::f32 ? 0.0 : 2.0 * ulp(st, M);
  return std::max(store, 2.0 * static_cast<double>(K * (longest + 1)) * ulp(DType::f32, M)) + ftz;
}

}  // namespace

// Recipes, with M = the largest finite |value| of the tensor in the oracle's result and u(dt) =
// one ulp of dt at M:
//  * 16-bit stored values: the kernel's fp32 value may land on the other side of a rounding tie
//    from the faithful reference's, one ulp of the storage dtype: 2 u(dt).
//  * fp32 dot products over K terms summed in another order (tiles, warp shuffles) differ by up to
//    K roundings of the running sum: 2 K u(f32). The recurrent state carries that error from token
//    to token, so a sequence of n tokens allows (n + 1) times it.
//  * ReplaySSM also sums over the L ring entries, and kda.md B.2.4 leaves the grouping open (the
//    kernel folds the ring into per-entry dot products instead of materialising S_prev):
//    2 (K + L) u(f32). No TF32 allowance: upstream budgets one (B.2.4 item 2), but the kparity
//    kernel does the ring product in fp32 (kernels/kda/replayssm_decode_kernel.cuh), and a floor
//    that loose would hide its fp32 errors.
//  * The g ring is the fp32 gate itself: exp, log and sigmoid of the kernel's math library differ
//    by a few ulps each, 8 u(f32); the k ring is the key times the norm's rsqrt, 4 u(f32).
//  * Every floor adds 2 FLT_MIN: fp32 arithmetic may flush subnormal results to zero on the GPU.
double kda_abs_floor(const Call& call, std::string_view name, const Call* oracle) {
  const double M = oracle_magnitude(call, name, oracle);
  const DType st = call.at(std::string(name)).dtype();
  if (call.op == kda::kRecurrentOp) {
    const TensorView q = call.at("q").view();
    I longest = q.size(0);
    if (const auto cu_it = call.tensors.find("cu_seqlens"); cu_it != call.tensors.end()) {
      const TensorView cu = cu_it->second.view();
      longest = 0;
      for (I i = 0; i + 1 < cu.size(0); ++i) longest = std::max(longest, cu.at_int({i + 1}) - cu.at_int({i}));
    }
    return recurrence_floor(M, st, q.size(2), longest);
  }
  const double ftz = 2.0 * std::numeric_limits<float>::min();
  const double store = st == DType::f32 ? 0.0 : 2.0 * ulp(st, M);
  const I K = call.at("initial_state").view().size(3);
  const double reduce = 2.0 * static_cast<double>(K) * ulp(DType::f32, M);
  if (call.op == kda::kReplaySsmDecodeOp) {
    if (name == "g_cache") return 8.0 * ulp(DType::f32, M) + ftz;
    if (name == "k_cache") return std::max(store, 4.0 * ulp(DType::f32, M)) + ftz;
    const I L = call.at("d_cache").view().size(2);
    return std::max(store, 2.0 * static_cast<double>(K + L) * ulp(DType::f32, M)) + ftz;
  }
  return std::max(store, reduce) + ftz;
}

// kda/chunk runs the recurrence of its equivalent kda/recurrent call (reference/kda_chunk.hpp:
// tokens flattened, one sequence per varlen span or batch row, the same K, out in the call's dtype,
// fp32 states), so it gets that call's floor: the recurrence recipe at the longest sequence. Its
// oracle is that recurrence's oracle, so the magnitudes are the same values.
double kda_chunk_abs_floor(const Call& call, std::string_view name, const Call* oracle) {
  const double M = oracle_magnitude(call, name, oracle);
  const TensorView q = call.at("q").view();  // [B, T, H, K]
  I longest = 0;
  if (const auto cu_it = call.tensors.find("cu_seqlens"); cu_it != call.tensors.end()) {
    const TensorView cu = cu_it->second.view();
    for (I n = 0; n + 1 < cu.size(0); ++n) longest = std::max(longest, cu.at_int({n + 1}) - cu.at_int({n}));
  } else if (q.size(0) > 0) {
    longest = q.size(1);
  }
  return recurrence_floor(M, call.at(std::string(name)).dtype(), q.size(3), longest);
}

}  // namespace kparity::judging
