// Empty tensors with a NULL data pointer, as PyTorch and DLPack hand them over (a tensor without
// elements has no storage), in every argument of the KDA kernels that can be empty, with every
// optional argument absent and present (issue 23 item 2). A launcher must take an optional's
// presence from the optional, never from the pointer: the recurrence once took a present, empty g
// (T = 0) for an absent one and loaded A_log, which was absent, through a null pointer (memcheck:
// "Access to 0x0" in dev::ld_any from recurrent_kernel). DevTensor backs every view with storage,
// so the other kernel tests never pass a null pointer.
//
// Each call runs on the kernel and on the references from the same tensors. When the contract
// refuses the call, the launcher must refuse it with the same catalog id; otherwise the kernel's
// results must meet the tests' usual recipes (recurrent_bound.hpp, tolerances.hpp).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "compare.hpp"
#include "decode_case.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/kernels/kda.hpp"
#include "kparity/reference/kda.hpp"
#include "recurrent_bound.hpp"
#include "tolerances.hpp"

namespace kparity::gpu_test {
namespace {

using reference::Precision;
namespace kk = kernels::kda;

// A device copy's view as a framework hands it over: no data pointer when there are no elements.
TensorView framework_view(const DevTensor& d) {
  TensorView v = d.view();
  if (v.numel() == 0) v.data = nullptr;
  return v;
}

// Both entry points, deep pass off and on (the deep pass copies what it reads to the host: an
// empty, null-pointed tensor must come through it too), synchronised so a fault lands here.
std::vector<kernels::LaunchOptions> launch_modes() {
  kernels::LaunchOptions shallow{ValidateOptions::upstream(), true};
  kernels::LaunchOptions deep{ValidateOptions::strict(), true};
  return {shallow, deep};
}

// The launch mode's checks at the reference's entry (host tensors; the same upstream, extra and
// deep checks otherwise).
ValidateOptions at_reference(const kernels::LaunchOptions& mode) {
  ValidateOptions o = mode.validate;
  o.entry = Entry::reference;
  return o;
}

// The id the reference's contract throws for the call, or "" when it accepts it.
template <class F>
std::string reference_verdict(F&& run) {
  try {
    run();
  } catch (const ContractError& e) {
    return e.id();
  }
  return "";
}

::testing::AssertionResult same_verdict(const Status& s, const std::string& ref_id, const std::string& what) {
  const std::string got = s.ok() ? "" : (s.first_error()->id.empty() ? s.first_error()->message : s.first_error()->id);
  if (got == ref_id) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": the launcher answered '" << (got.empty() ? "accepted" : got)
                                       << "', the reference's contract '" << (ref_id.empty() ? "accepted" : ref_id)
                                       << "'";
}

// --- kda/recurrent -------------------------------------------------------------------------------

enum class Gate { g, softplus, bounded };

struct RecCombo {
  Gate gate = Gate::g;
  bool init = false, fin = false, cu = false;
  std::vector<std::int64_t> seqlens;  // without cu_seqlens exactly one
  std::string tag() const {
    std::string s = gate == Gate::g ? "g" : gate == Gate::softplus ? "a+dt_bias+A_log" : "bounded gate";
    s += init ? ", initial_state" : ", no initial_state";
    s += fin ? ", final_state" : ", no final_state";
    s += cu ? ", cu_seqlens [0" : ", T=";
    std::int64_t acc = 0;
    for (std::size_t i = 0; i < seqlens.size(); ++i) {
      acc += seqlens[i];
      s += cu ? ", " + std::to_string(acc) : std::to_string(acc);
    }
    return s + (cu ? "]" : "");
  }
};

// H = 1, HV = 2 (GQA), K = V = 16, bf16 activations, an fp32 initial state and a bf16 final one (a
// rounding point of its own), beta as logits.
struct RecCall {
  RecCombo c;
  Tensor q, k, v, g, a, dtb, A_log, beta, init, fin, out, cu;
  explicit RecCall(const RecCombo& combo, std::uint64_t seed) : c(combo) {
    const std::int64_t H = 1, HV = 2, K = 16, V = 16, N = static_cast<std::int64_t>(c.seqlens.size());
    std::int64_t T = 0;
    for (std::int64_t l : c.seqlens) T += l;
    q = Tensor(DType::bf16, {T, H, K}); q.fill_normal(seed + 1);
    k = Tensor(DType::bf16, {T, H, K}); k.fill_normal(seed + 2);
    v = Tensor(DType::bf16, {T, HV, V}); v.fill_normal(seed + 3);
    g = Tensor(DType::f32, {T, HV, K}); g.fill_uniform(seed + 4, -0.2, 0.0);
    a = Tensor(DType::bf16, {T, HV, K}); a.fill_normal(seed + 5, 0.0, 0.5);
    dtb = Tensor(DType::f32, {HV, K}); dtb.fill_normal(seed + 6, 0.0, 0.1);
    A_log = Tensor(DType::f32, {HV}); A_log.fill_normal(seed + 7, 0.0, 0.3);
    beta = Tensor(DType::bf16, {T, HV}); beta.fill_normal(seed + 8);
    init = Tensor(DType::f32, {N, HV, V, K}); init.fill_normal(seed + 9, 0.0, 0.5);
    fin = Tensor(DType::bf16, {N, HV, V, K});
    out = Tensor(DType::bf16, {T, HV, V});
    cu = Tensor(DType::i32, {N + 1});
    std::int64_t acc = 0;
    cu.view().store_flat(0, 0.0);
    for (std::int64_t n = 0; n < N; ++n) cu.view().store_flat(n + 1, static_cast<double>(acc += c.seqlens[n]));
  }
  // The call over `views` (host tensors, or device views with the same names).
  template <class View>
  kparity::kda::RecurrentArgs args(View view) const {
    kparity::kda::RecurrentArgs r;
    r.q = view(q); r.k = view(k); r.v = view(v); r.beta = view(beta); r.out = view(out);
    r.beta_is_logits = true;
    r.use_qk_l2norm_in_kernel = true;
    r.scale = 0.25;
    if (c.gate == Gate::g) {
      r.g = view(g);
    } else {
      r.a = view(a); r.dt_bias = view(dtb); r.A_log = view(A_log);
      if (c.gate == Gate::bounded) r.lower_bound = -5.0;
    }
    if (c.init) r.initial_state = view(init);
    if (c.fin) r.final_state = view(fin);
    if (c.cu) r.cu_seqlens = view(cu);
    return r;
  }
};

std::vector<RecCombo> recurrent_combos() {
  std::vector<RecCombo> out;
  // T = 0 with and without sequences, zero-length sequences between real ones, one plain sequence.
  const std::vector<std::pair<bool, std::vector<std::int64_t>>> lengths = {
      {false, {0}}, {false, {5}}, {true, {0}}, {true, {0, 0, 0}}, {true, {0, 3, 0, 2}}};
  for (Gate gate : {Gate::g, Gate::softplus, Gate::bounded})
    for (bool init : {false, true})
      for (bool fin : {false, true})
        for (const auto& [cu, seq] : lengths) out.push_back({gate, init, fin, cu, seq});
  return out;
}

TEST(EmptyOptionals, RecurrentWithEveryOptionalAbsentAndPresent) {
  KPARITY_REQUIRE_GPU();
  std::uint64_t seed = 100;
  int ran = 0;
  for (const RecCombo& combo : recurrent_combos()) {
    for (const kernels::LaunchOptions& mode : launch_modes()) {
      const RecCall h(combo, seed += 10);
      const std::string tag = combo.tag() + (mode.validate.deep ? " (deep pass)" : "");
      SCOPED_TRACE(tag);
      const auto host = [](const Tensor& t) { return t.view(); };
      const std::string ref_id = reference_verdict([&] {
        RecCall r = h;
        reference::kda::recurrent(r.args(host), Precision::faithful, at_reference(mode));
      });
      RecCall ker = h;
      Status s;
      {
        DevTensor q(h.q), k(h.k), v(h.v), g(h.g), a(h.a), dtb(h.dtb), A_log(h.A_log), beta(h.beta), init(h.init),
            fin(h.fin), out(h.out), cu(h.cu);
        out.poison();
        fin.poison();
        const std::map<const Tensor*, const DevTensor*> dev = {
            {&h.q, &q}, {&h.k, &k}, {&h.v, &v}, {&h.g, &g}, {&h.a, &a}, {&h.dtb, &dtb}, {&h.A_log, &A_log},
            {&h.beta, &beta}, {&h.init, &init}, {&h.fin, &fin}, {&h.out, &out}, {&h.cu, &cu}};
        s = kk::recurrent(h.args([&](const Tensor& t) { return framework_view(*dev.at(&t)); }), nullptr, mode);
        KPARITY_CUDA_OK(cudaDeviceSynchronize());
        out.download(ker.out);
        fin.download(ker.fin);
      }
      ASSERT_TRUE(same_verdict(s, ref_id, tag));
      if (!ref_id.empty()) continue;
      ++ran;
      const RecurrentBound b = recurrent_bound(h.args(host));
      EXPECT_TRUE(within_rounded(ker.out, b.out, b.out_bound, tag + " out"));
      // Without initial_state the state starts at zero; at T = 0 final_state is initial_state
      // rounded once into its dtype (the bound is then zero: nothing else is allowed).
      if (combo.fin) EXPECT_TRUE(within_rounded(ker.fin, b.state, b.state_bound, tag + " final_state"));
    }
  }
  EXPECT_GT(ran, 0) << "the contract refused every call: nothing reached a kernel";
}

// --- kda/packed_decode and kda/replayssm_decode ---------------------------------------------------

// Calls with no rows (B = 0: mixed_qkv, a, b, out, ssm_state_indices, write_pos and force_flush
// all empty) and with only padding rows over an empty state pool (initial_state and the rings
// empty), besides an ordinary one; force_flush absent and present; the bounded gate off and on.
struct DecodeCombo {
  std::int64_t B, slots;
  std::vector<std::int64_t> idx;
  bool force, bounded;
  std::string tag() const {
    std::string s = "B=" + std::to_string(B) + " slots=" + std::to_string(slots);
    if (!idx.empty()) {
      s += " indices [";
      for (std::size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
      s += "]";
    }
    return s + (force ? ", force_flush" : ", no force_flush") + (bounded ? ", bounded gate" : "");
  }
};

std::vector<DecodeCombo> decode_combos() {
  std::vector<DecodeCombo> out;
  for (bool force : {false, true})
    for (bool bounded : {false, true}) {
      out.push_back({0, 3, {}, force, bounded});
      out.push_back({2, 0, {-1, -1}, force, bounded});
      out.push_back({3, 4, {2, -1, 0}, force, bounded});
    }
  return out;
}

DecodeCfg decode_cfg(const DecodeCombo& c) {
  DecodeCfg cfg;
  cfg.B = c.B; cfg.H = 1; cfg.HV = 2; cfg.K = 16; cfg.V = 16; cfg.L = 4; cfg.slots = c.slots;
  cfg.idx = c.idx;
  cfg.write_pos.assign(static_cast<std::size_t>(c.B), 1);
  cfg.with_force = c.force;
  if (c.bounded) cfg.lower_bound = -5.0;
  return cfg;
}

// Device views of a DevDecode as a framework hands them over.
template <class Args>
void as_framework(Args& a) {
  for (TensorView* v : {&a.mixed_qkv, &a.a, &a.b, &a.A_log, &a.dt_bias, &a.initial_state, &a.out, &a.ssm_state_indices})
    if (v->numel() == 0) v->data = nullptr;
  if constexpr (std::is_same_v<Args, kparity::kda::ReplaySsmDecodeArgs>) {
    for (TensorView* v : {&a.d_cache, &a.k_cache, &a.g_cache, &a.write_pos})
      if (v->numel() == 0) v->data = nullptr;
    if (a.force_flush && a.force_flush->numel() == 0) a.force_flush->data = nullptr;
  }
}

TEST(EmptyOptionals, PackedDecodeWithEmptyRowsAndPools) {
  KPARITY_REQUIRE_GPU();
  int ran = 0;
  for (const DecodeCombo& combo : decode_combos()) {
    if (combo.force) continue;  // packed decode has no force_flush
    for (const kernels::LaunchOptions& mode : launch_modes()) {
      DecodeCfg cfg = decode_cfg(combo);
      cfg.a3d = false;  // packed decode takes a as [B, HV * K] (the [B, HV, K] form is ReplaySSM's backend form)
      const HostDecode h(cfg, 300 + combo.B);
      const std::string tag = "packed " + combo.tag() + (mode.validate.deep ? " (deep pass)" : "");
      SCOPED_TRACE(tag);
      HostDecode lp = h, orc = h, ker = h;
      const std::string ref_id =
          reference_verdict([&] { reference::kda::packed_decode(lp.packed_args(), Precision::faithful, at_reference(mode)); });
      Status s;
      {
        DevDecode dev(h);
        dev.out.poison();
        PackedDecodeArgs a = dev.packed_args(h);
        as_framework(a);
        s = kk::packed_decode(a, nullptr, mode);
        KPARITY_CUDA_OK(cudaDeviceSynchronize());
        dev.download_all(ker);
      }
      ASSERT_TRUE(same_verdict(s, ref_id, tag));
      if (!ref_id.empty()) continue;
      ++ran;
      reference::kda::packed_decode(orc.packed_args(), Precision::oracle, at_reference(mode));
      const double F = tol::factor(combo.bounded);
      EXPECT_TRUE(close(ker.out, lp.out, orc.out, tol::kPackedOut, F, tag + " out"));
      EXPECT_TRUE(close(ker.state, lp.state, orc.state, tol::packed_state(cfg.state), F, tag + " state"));
    }
  }
  EXPECT_GT(ran, 0) << "the contract refused every call: nothing reached a kernel";
}

TEST(EmptyOptionals, ReplaySsmDecodeWithEmptyRowsPoolsAndForceFlush) {
  KPARITY_REQUIRE_GPU();
  int ran = 0;
  for (const DecodeCombo& combo : decode_combos()) {
    for (const kernels::LaunchOptions& mode : launch_modes()) {
      const DecodeCfg cfg = decode_cfg(combo);
      HostDecode h(cfg, 500 + combo.B);
      h.garbage_rings(600 + combo.B);
      for (std::int64_t r = 0; r < combo.B; ++r) h.ff.view().store_flat(r, r % 2 ? 1.0 : 0.0);  // one row flushed
      const std::string tag = "replayssm " + combo.tag() + (mode.validate.deep ? " (deep pass)" : "");
      SCOPED_TRACE(tag);
      HostDecode lp = h, orc = h, ker = h;
      const std::string ref_id = reference_verdict(
          [&] { reference::kda::replayssm_decode(lp.replay_args(), Precision::faithful, at_reference(mode)); });
      Status s;
      {
        DevDecode dev(h);
        dev.out.poison();
        ReplaySsmDecodeArgs a = dev.replay_args(h);
        as_framework(a);
        s = kk::replayssm_decode(a, nullptr, mode);
        KPARITY_CUDA_OK(cudaDeviceSynchronize());
        dev.download_all(ker);
      }
      ASSERT_TRUE(same_verdict(s, ref_id, tag));
      if (!ref_id.empty()) continue;
      ++ran;
      reference::kda::replayssm_decode(orc.replay_args(), Precision::oracle, at_reference(mode));
      const double F = tol::factor(combo.bounded);
      EXPECT_TRUE(close(ker.out, lp.out, orc.out, tol::kReplayOut, F, tag + " out"));
      EXPECT_TRUE(close(ker.state, lp.state, orc.state, tol::replay_state(cfg.state), F, tag + " state"));
      EXPECT_TRUE(close(ker.d, lp.d, orc.d, tol::kRingDK, F, tag + " d_cache"));
      EXPECT_TRUE(close(ker.k, lp.k, orc.k, tol::kRingDK, F, tag + " k_cache"));
      EXPECT_TRUE(close(ker.g, lp.g, orc.g, tol::kRingG, F, tag + " g_cache"));
    }
  }
  EXPECT_GT(ran, 0) << "the contract refused every call: nothing reached a kernel";
}

}  // namespace
}  // namespace kparity::gpu_test
