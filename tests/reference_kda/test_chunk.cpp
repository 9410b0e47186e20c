// kda/chunk (fla chunk_kda): equals kda/recurrent on the equivalent call, built here by explicit
// copies (flattened tokens, V-first states, explicit zero A_log/dt_bias, fp32 2*sigmoid beta), in both
// precisions and bit for bit: the same recurrence steps in the same order. Plus closed forms that do
// not go through kda/recurrent, the options that change nothing, and what is written.
#include <cstring>

#include "kda_test_util.hpp"
#include "kparity/reference/kda_chunk.hpp"

namespace kdatest {
namespace {

using kparity::kda::ChunkArgs;
using kparity::kda::RecurrentArgs;

// One kda/chunk call and the tensors behind it.
struct Chunk {
  std::int64_t B, T, H, HV, K, V, N;
  std::vector<std::int64_t> offsets;  // empty: B sequences of T tokens
  bool v_first = false;
  Tensor q, k, v, g, beta, A_log, dt_bias, S0, Sf, out, cu;
  ChunkArgs a;

  Chunk(std::int64_t B_, std::int64_t T_, std::int64_t H_, std::int64_t HV_, std::int64_t K_, std::int64_t V_,
        std::vector<std::int64_t> offs, bool vf, const std::string& tag, DType act = DType::bf16)
      : B(B_), T(T_), H(H_), HV(HV_), K(K_), V(V_), N(offs.empty() ? B_ : static_cast<std::int64_t>(offs.size()) - 1),
        offsets(std::move(offs)), v_first(vf) {
    q = randn(act, {B, T, H, K}, tag + "q", 0, 1.0);
    k = randn(act, {B, T, H, K}, tag + "k", 0, 1.0);
    v = randn(act, {B, T, HV, V}, tag + "v", 0, 1.0);
    g = randn(act, {B, T, HV, K}, tag + "g", 0, 0.5);
    beta = randn(act, {B, T, HV}, tag + "b", 0, 1.0);
    A_log = randn(DType::f32, {HV}, tag + "A", 0, 0.3);
    dt_bias = randn(DType::f32, {HV * K}, tag + "dt", 0, 0.1);
    S0 = randn(DType::f32, state_shape(), tag + "S0", 0, 0.05);
    Sf = Tensor(DType::f32, state_shape());
    Sf.poison();
    out = Tensor(act, {B, T, HV, V});
    out.poison();
    if (!offsets.empty()) cu = index_tensor(offsets, DType::i64);
    a.q = q, a.k = k, a.v = v, a.g = g, a.beta = beta, a.out = out;
    a.initial_state = S0.view(), a.final_state = Sf.view(), a.output_final_state = true;
    a.state_v_first = v_first;
    if (!offsets.empty()) a.cu_seqlens = cu.view();
  }
  Shape state_shape() const { return v_first ? Shape{N, HV, V, K} : Shape{N, HV, K, V}; }
  // The softplus or bounded in-kernel gate with logit beta, as sglang-style models use it.
  void raw_gate(bool with_A_log = true, bool with_dt_bias = true) {
    a.use_gate_in_kernel = true, a.use_beta_sigmoid_in_kernel = true;
    a.A_log = with_A_log ? std::optional<TensorView>(A_log.view()) : std::nullopt;
    a.dt_bias = with_dt_bias ? std::optional<TensorView>(dt_bias.view()) : std::nullopt;
  }
  // A precomputed log-decay in (-0.5, 0], beta as probabilities in (0, 1).
  void precomputed_gate() {
    for_each_element(g.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
      g.view().store(i, -0.25 * std::fabs(g.view().load(i)));
    });
    for_each_element(beta.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
      beta.view().store(i, 1.0 / (1.0 + std::exp(-beta.view().load(i))));
    });
  }
};

// The same computation as a kda/recurrent call, built by copying.
struct Equivalent {
  Tensor q, k, v, gate, beta, A_log, dt_bias, S0, Sf, out, cu;
  RecurrentArgs r;

  Equivalent(const Chunk& c, Precision p) {
    const std::int64_t BT = c.B * c.T;
    auto flat = [&](const Tensor& x, Shape s) {
      Tensor y(x.dtype(), s);
      std::memcpy(y.storage().data(), x.storage().data(), x.storage().size());  // contiguous [B, T, ...]
      return y;
    };
    q = flat(c.q, {BT, c.H, c.K}), k = flat(c.k, {BT, c.H, c.K}), v = flat(c.v, {BT, c.HV, c.V});
    gate = flat(c.g, {BT, c.HV, c.K});
    out = Tensor(c.out.dtype(), {BT, c.HV, c.V});
    out.poison();
    std::vector<std::int64_t> offs = c.offsets;
    if (offs.empty())
      for (std::int64_t b = 0; b <= c.B; ++b) offs.push_back(b * c.T);
    cu = index_tensor(offs, DType::i32);
    r.q = q, r.k = k, r.v = v, r.out = out, r.cu_seqlens = cu.view();
    if (c.a.use_gate_in_kernel) {
      r.a = gate.view(), r.lower_bound = c.a.lower_bound;
      A_log = c.a.A_log ? Tensor(c.A_log) : Tensor(DType::f32, {c.HV}).fill(0.0);
      dt_bias = c.a.dt_bias ? Tensor(c.dt_bias) : Tensor(DType::f32, {c.HV, c.K}).fill(0.0);
      r.A_log = A_log.view(), r.dt_bias = dt_bias.view();
    } else {
      r.g = gate.view();
    }
    beta = flat(c.beta, {BT, c.HV});
    if (c.a.allow_neg_eigval) {
      Tensor two(DType::f32, {BT, c.HV});
      for (std::int64_t i = 0; i < two.numel(); ++i) {
        const double x = beta.view().load_flat(i);
        two.view().store_flat(i, p == Precision::oracle ? 2.0 * (1.0 / (1.0 + std::exp(-x)))
                                                        : static_cast<double>(2.0f * (1.0f / (1.0f + std::exp(-static_cast<float>(x))))));
      }
      beta = std::move(two);
    } else {
      r.beta_is_logits = c.a.use_beta_sigmoid_in_kernel;
    }
    r.beta = beta.view();
    r.use_qk_l2norm_in_kernel = c.a.use_qk_l2norm_in_kernel;
    r.scale = c.a.scale;
    // V-first copies of the states.
    S0 = Tensor(DType::f32, {c.N, c.HV, c.V, c.K});
    Sf = Tensor(DType::f32, {c.N, c.HV, c.V, c.K});
    Sf.poison();
    for (std::int64_t n = 0; n < c.N; ++n)
      for (std::int64_t h = 0; h < c.HV; ++h)
        for (std::int64_t j = 0; j < c.V; ++j)
          for (std::int64_t i = 0; i < c.K; ++i)
            S0.view().store(std::vector<std::int64_t>{n, h, j, i},
                            c.S0.view().at({n, h, c.v_first ? j : i, c.v_first ? i : j}));
    if (c.a.initial_state) r.initial_state = S0.view();
    r.final_state = Sf.view();
  }
  // Compare with the chunk call's outputs, element for element.
  void expect_same(const Chunk& c) const {
    Tensor o(out.dtype(), {c.B, c.T, c.HV, c.V});
    std::memcpy(o.storage().data(), out.storage().data(), out.storage().size());
    EXPECT_TRUE(same_values(c.out, o)) << "out";
    if (!c.a.output_final_state) return;
    Tensor s(DType::f32, c.state_shape());
    for (std::int64_t n = 0; n < c.N; ++n)
      for (std::int64_t h = 0; h < c.HV; ++h)
        for (std::int64_t j = 0; j < c.V; ++j)
          for (std::int64_t i = 0; i < c.K; ++i)
            s.view().store(c.v_first ? std::vector<std::int64_t>{n, h, j, i} : std::vector<std::int64_t>{n, h, i, j},
                           Sf.view().at({n, h, j, i}));
    EXPECT_TRUE(same_values(c.Sf, s)) << "final_state";
  }
};

void expect_equals_recurrent(Chunk& c, Precision p) {
  SCOPED_TRACE(p == Precision::oracle ? "oracle" : "faithful");
  c.out.poison(), c.Sf.poison();
  ref::chunk(c.a, p);
  Equivalent e(c, p);
  ref::recurrent(e.r, p);
  e.expect_same(c);
}

const Precision kBoth[] = {Precision::oracle, Precision::faithful};

TEST(KdaChunk, VarlenWithEmptySequencesAndGqaEqualsRecurrent) {
  // Five sequences of 3, 0, 4, 0 and 1 tokens; GQA 2 -> 4; K != V so the K-first layout matters.
  Chunk c(1, 8, 2, 4, 16, 32, {0, 3, 3, 7, 7, 8}, false, "cvar");
  c.raw_gate();
  c.a.use_qk_l2norm_in_kernel = true;
  for (Precision p : kBoth) {
    expect_equals_recurrent(c, p);
    // An empty sequence hands its initial state through unchanged.
    for (std::int64_t n : {1, 3})
      EXPECT_TRUE(same_values(c.Sf.view().select(0, n), c.S0.view().select(0, n))) << "sequence " << n;
  }
}

TEST(KdaChunk, DenseBatchVFirstPrecomputedGateEqualsRecurrent) {
  Chunk c(3, 4, 1, 2, 32, 16, {}, true, "cdense", DType::f32);
  c.precomputed_gate();
  c.a.scale = 0.2;
  for (Precision p : kBoth) expect_equals_recurrent(c, p);
  // Without an initial state every sequence starts from zeros.
  c.a.initial_state.reset();
  for (Precision p : kBoth) expect_equals_recurrent(c, p);
}

TEST(KdaChunk, BoundedGateWithoutALogOrDtBiasEqualsRecurrentWithZeros) {
  for (bool with_A_log : {true, false})
    for (bool with_dt_bias : {true, false}) {
      SCOPED_TRACE(std::string(with_A_log ? "A_log" : "no A_log") + (with_dt_bias ? ", dt_bias" : ", no dt_bias"));
      Chunk c(1, 6, 1, 2, 16, 16, {0, 2, 6}, false, "cbound");
      c.raw_gate(with_A_log, with_dt_bias);
      c.a.lower_bound = -3.0;
      for (Precision p : kBoth) expect_equals_recurrent(c, p);
    }
  // The softplus gate without dt_bias.
  Chunk c(1, 5, 1, 1, 16, 16, {0, 5}, false, "csoft");
  c.raw_gate(true, false);
  for (Precision p : kBoth) expect_equals_recurrent(c, p);
}

TEST(KdaChunk, DtBiasFlatOrSplitIsTheSameBias) {
  Chunk c(1, 5, 1, 2, 16, 16, {0, 2, 5}, false, "cdt");
  c.raw_gate();
  ref::chunk(c.a, Precision::oracle);
  const Tensor flat_out(c.out), flat_state(c.Sf);
  c.a.dt_bias = TensorView(c.dt_bias.view().data, DType::f32, {c.HV, c.K});
  ref::chunk(c.a, Precision::oracle);
  EXPECT_TRUE(same_values(c.out, flat_out));
  EXPECT_TRUE(same_values(c.Sf, flat_state));
}

TEST(KdaChunk, AllowNegEigvalDoublesTheSigmoid) {
  Chunk c(1, 6, 1, 2, 16, 16, {0, 6}, false, "cneg");
  c.raw_gate();
  c.a.allow_neg_eigval = true;
  for (Precision p : kBoth) expect_equals_recurrent(c, p);
  // And it changes the result.
  ref::chunk(c.a, Precision::oracle);
  const Tensor doubled(c.out);
  c.a.allow_neg_eigval = false;
  ref::chunk(c.a, Precision::oracle);
  EXPECT_FALSE(same_values(c.out, doubled));
}

TEST(KdaChunk, TilingAndRecomputeOptionsChangeNothing) {
  Chunk c(1, 7, 1, 2, 16, 16, {0, 3, 7}, false, "ctile");
  c.raw_gate();
  c.a.lower_bound = -5.0;
  ref::chunk(c.a, Precision::faithful);
  const Tensor base_out(c.out), base_state(c.Sf);
  const auto same_as_base = [&](const char* what, auto&& set) {
    Chunk d = c;  // fresh tensors, same values
    d.a = c.a;
    d.a.q = d.q, d.a.k = d.k, d.a.v = d.v, d.a.g = d.g, d.a.beta = d.beta, d.a.out = d.out;
    d.a.A_log = d.A_log.view(), d.a.dt_bias = d.dt_bias.view(), d.a.initial_state = d.S0.view(), d.a.final_state = d.Sf.view();
    d.a.cu_seqlens = d.cu.view();
    set(d.a);
    d.out.poison(), d.Sf.poison();
    ref::chunk(d.a, Precision::faithful);
    EXPECT_TRUE(same_values(d.out, base_out)) << what;
    EXPECT_TRUE(same_values(d.Sf, base_state)) << what;
  };
  same_as_base("chunk_size=32", [](ChunkArgs& a) { a.chunk_size = 32; });
  same_as_base("safe_gate", [](ChunkArgs& a) { a.safe_gate = true; });
  same_as_base("disable_recompute", [](ChunkArgs& a) { a.disable_recompute = true; });
  same_as_base("return_intermediate_states", [](ChunkArgs& a) { a.return_intermediate_states = true; });
}

TEST(KdaChunk, GateParametersIgnoredWithoutTheInKernelGate) {
  Chunk c(2, 3, 1, 2, 16, 16, {}, false, "cign", DType::f32);
  c.precomputed_gate();
  ref::chunk(c.a, Precision::oracle);
  const Tensor base(c.out);
  c.a.A_log = c.A_log.view(), c.a.dt_bias = c.dt_bias.view(), c.a.lower_bound = -1.0;
  ref::chunk(c.a, Precision::oracle);
  EXPECT_TRUE(same_values(c.out, base));
}

TEST(KdaChunk, WritesOnlyItsOutputs) {
  Chunk c(1, 5, 1, 2, 16, 16, {0, 2, 5}, false, "cwrite");
  c.raw_gate();
  const Tensor S0(c.S0);
  c.a.output_final_state = false;
  const std::vector<std::byte> poisoned = c.Sf.storage();
  ref::chunk(c.a, Precision::oracle);
  EXPECT_TRUE(c.Sf.storage() == poisoned) << "final_state is written only with output_final_state";
  EXPECT_TRUE(all_finite(c.out));
  c.a.output_final_state = true;
  ref::chunk(c.a, Precision::oracle);
  EXPECT_TRUE(all_finite(c.Sf));
  EXPECT_TRUE(c.S0.storage() == S0.storage()) << "initial_state is read only";
}

TEST(KdaChunk, ContractRunsFirst) {
  Chunk c(1, 5, 1, 2, 16, 16, {0, 2, 5}, false, "ccon");
  c.raw_gate();
  Tensor bf16_state(DType::bf16, c.state_shape());
  c.a.initial_state = bf16_state.view();
  const std::vector<std::byte> before = c.out.storage();
  EXPECT_THROW(ref::chunk(c.a, Precision::oracle), AssertionError);
  EXPECT_TRUE(c.out.storage() == before);
}

// ---- closed forms, independent of kda/recurrent's code ----

// beta = 0: nothing is written into the state, which only decays: S_t = S_0 * exp(g_1 + ... + g_t)
// per key channel, o_t = scale * S_t^T q_t (K-first S: o_t[j] = scale * sum_c S_t[c, j] q_t[c]).
// Tolerance recipe: o is stored once into fp32 (2^-24 relative) from sums of K = 16 products that
// the oracle and this test each form in fp64 (error below 16 * 2^-53 of sum |terms|); both are
// covered by 2^-23 relative to the largest |o| of the call.
TEST(KdaChunkClosedForm, ZeroBetaOnlyDecaysTheKFirstState) {
  Chunk c(2, 4, 1, 2, 16, 8, {}, false, "cdecay", DType::f32);
  c.precomputed_gate();
  c.beta.fill(0.0);
  c.a.scale = 0.5;
  ref::chunk(c.a, Precision::oracle);
  Tensor want(DType::f32, {c.B, c.T, c.HV, c.V}), want_state(DType::f32, c.state_shape());
  for (std::int64_t b = 0; b < c.B; ++b)
    for (std::int64_t h = 0; h < c.HV; ++h) {
      std::vector<double> G(c.K, 0.0);
      for (std::int64_t t = 0; t < c.T; ++t) {
        for (std::int64_t i = 0; i < c.K; ++i) G[i] += c.g.view().at({b, t, h, i});
        for (std::int64_t j = 0; j < c.V; ++j) {
          double o = 0;
          for (std::int64_t i = 0; i < c.K; ++i) o += c.S0.view().at({b, h, i, j}) * std::exp(G[i]) * c.q.view().at({b, t, 0, i});
          want.view().store(std::vector<std::int64_t>{b, t, h, j}, 0.5 * o);
        }
      }
      for (std::int64_t i = 0; i < c.K; ++i)
        for (std::int64_t j = 0; j < c.V; ++j)
          want_state.view().store(std::vector<std::int64_t>{b, h, i, j}, c.S0.view().at({b, h, i, j}) * std::exp(G[i]));
    }
  const double tol = std::ldexp(1.0, -23);
  EXPECT_TRUE(close(c.out, want, tol * max_abs(want), 0.0));
  EXPECT_TRUE(close(c.Sf, want_state, tol * max_abs(want_state), 0.0));
}

// One token from a zero state: S = beta v k^T, o = scale * beta * (k . q) v, with q and k of the
// value head's group (GQA 1 -> 3) and beta = sigmoid(logit). Same recipe as above with K = 16.
TEST(KdaChunkClosedForm, OneTokenFromZeroStateWithGqa) {
  Chunk c(1, 1, 1, 3, 16, 8, {0, 1}, false, "cone", DType::f32);
  c.raw_gate();
  c.a.initial_state.reset();
  c.a.scale = 0.25;
  ref::chunk(c.a, Precision::oracle);
  Tensor want(DType::f32, {1, 1, c.HV, c.V});
  double dot = 0;
  for (std::int64_t i = 0; i < c.K; ++i) dot += c.k.view().at({0, 0, 0, i}) * c.q.view().at({0, 0, 0, i});
  for (std::int64_t h = 0; h < c.HV; ++h) {
    const double beta = 1.0 / (1.0 + std::exp(-c.beta.view().at({0, 0, h})));
    for (std::int64_t j = 0; j < c.V; ++j)
      want.view().store(std::vector<std::int64_t>{0, 0, h, j}, 0.25 * beta * dot * c.v.view().at({0, 0, h, j}));
  }
  EXPECT_TRUE(close(c.out, want, std::ldexp(1.0, -23) * max_abs(want), 0.0));
}

}  // namespace
}  // namespace kdatest
