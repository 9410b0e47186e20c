// Kernel vs reference on random shapes and layouts (kda.md D.4, sparse_attention.md G.2). Each
// step resynchronises the kernel's copy from the reference, so every comparison measures one call.
#include <memory>
#include <rapidcheck.h>

#include "device_mirror.hpp"
#include "kparity/fuzz/kda_case.hpp"
#include "kparity/fuzz/kda_gen.hpp"
#include "kparity/fuzz/property.hpp"
#include "kparity/fuzz/sparse_case.hpp"
#include "kparity/kernels/kda.hpp"
#include "kparity/kernels/sparse.hpp"
#include "kparity/reference/kda.hpp"
#include "kparity/reference/sparse.hpp"

namespace kparity::fuzz {
namespace {

constexpr auto kFaithful = reference::Precision::faithful;


// Mirrors every tensor of a KDA decode case, runs `launch` on the device views, copies back.
template <class Launch>
void on_device(std::initializer_list<Tensor*> tensors, Launch&& launch) {
  std::vector<std::unique_ptr<DeviceMirror>> m;
  for (Tensor* t : tensors) m.push_back(std::make_unique<DeviceMirror>(t->view()));
  launch([&](const Tensor& t) {
    for (std::size_t i = 0; i < m.size(); ++i)
      if (std::data(tensors)[i] == &t) return m[i]->view();
    throw std::logic_error("tensor not mirrored");
  });
  for (auto& x : m) x->download();
}

void assert_close(const char* what, const Tensor& a, const Tensor& b, double atol, double rtol) {
  const std::string d = compare_close(a.view(), b.view(), atol, rtol);
  RC_LOG() << what << ": " << d << "\n";
  RC_ASSERT(d.empty());
}

// AP-K5 / AP-K6 / AP-K9 bars (kda.md D.4); fp16 state takes bf16's bar (an upper bound).
void replay_kernel_matches_reference() {
  const KdaDecodeShape s = draw_kda_decode_shape({16, 32, 64, 128}, 8);
  const int steps = *rc::gen::inRange<int>(1, static_cast<int>(2 * s.L + 3));
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << "B=" << s.B << " H=" << s.H << " G=" << s.G << " K=" << s.K << " V=" << s.V << " L=" << s.L
           << " act=" << dtype_name(s.act) << " state=" << dtype_name(s.state) << " l2=" << s.l2norm
           << " bounded=" << s.bounded << " forced=" << s.forced << " pad=" << s.slot_pad << " seed=" << seed << "\n";
  KdaDecodeCase ref(s, seed);
  const double state_atol = s.state == DType::f32 ? 2e-3 : 4e-3;
  for (int step = 0; step < steps; ++step) {
    ref.draw_step(step);
    KdaDecodeCase ker = ref;  // same inputs, state, rings and cursors
    on_device({&ker.mixed_qkv, &ker.a, &ker.b, &ker.A_log, &ker.dt_bias, &ker.state, &ker.d_cache, &ker.k_cache,
               &ker.g_cache, &ker.out, &ker.indices, &ker.write_pos, &ker.force_flush},
              [&](auto dev) {
                auto a = ker.replay_args();
                a.mixed_qkv = dev(ker.mixed_qkv), a.a = dev(ker.a), a.b = dev(ker.b), a.A_log = dev(ker.A_log);
                a.dt_bias = dev(ker.dt_bias), a.initial_state = dev(ker.state), a.d_cache = dev(ker.d_cache);
                a.k_cache = dev(ker.k_cache), a.g_cache = dev(ker.g_cache), a.out = dev(ker.out);
                a.ssm_state_indices = dev(ker.indices), a.write_pos = dev(ker.write_pos);
                if (a.force_flush) a.force_flush = dev(ker.force_flush);
                kernels::LaunchOptions o;
                o.sync_after_launch = true;
                const Status st = kernels::kda::replayssm_decode(a, nullptr, o);
                RC_LOG() << (st.ok() ? std::string("launch ok") : st.first_error()->render_text()) << "\n";
                RC_ASSERT(st.ok());
              });
    auto ra = ref.replay_args();
    reference::kda::replayssm_decode(ra, kFaithful);
    RC_LOG() << "step " << step << "\n";
    assert_close("out", ker.out, ref.out, 5e-4, 1e-2);
    assert_close("state", ker.state, ref.state, state_atol, 1e-2);
    assert_close("d_cache", ker.d_cache, ref.d_cache, 2e-3, 1e-2);
    assert_close("k_cache", ker.k_cache, ref.k_cache, 2e-3, 1e-2);
    assert_close("g_cache", ker.g_cache, ref.g_cache, 1e-5, 1e-4);
    reference::kda::advance_cursors(ra);
  }
}

// AP-K1: out 1e-4/1e-4 and the state at _DECODE_STATE_ATOL. Both sides round the output into its
// dtype once, so a value near a rounding boundary may land one ulp apart: rtol is at least one ulp.
void packed_kernel_matches_reference() {
  const KdaDecodeShape s = draw_kda_decode_shape({16, 32, 64, 128}, 8);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << "B=" << s.B << " H=" << s.H << " G=" << s.G << " K=" << s.K << " V=" << s.V << " act="
           << dtype_name(s.act) << " state=" << dtype_name(s.state) << " seed=" << seed << "\n";
  KdaDecodeCase c(s, seed);
  Tensor pool_r = c.make_pool_copy(), out_r = c.make_out();
  Tensor pool_k = c.make_pool_copy(), out_k = c.make_out();
  out_r.poison();
  out_k.poison();
  reference::kda::packed_decode(c.packed_args(pool_r, out_r), kFaithful);
  on_device({&c.mixed_qkv, &c.a, &c.b, &c.A_log, &c.dt_bias, &pool_k, &out_k, &c.indices}, [&](auto dev) {
    auto a = c.packed_args(pool_k, out_k);
    const std::int64_t a_shape[2] = {s.B, s.HV() * s.K}, dt_shape[1] = {s.HV() * s.K};
    a.mixed_qkv = dev(c.mixed_qkv), a.b = dev(c.b), a.A_log = dev(c.A_log);
    a.a = TensorView(dev(c.a).data, c.a.dtype(), a_shape, Device::cuda(0));
    a.dt_bias = TensorView(dev(c.dt_bias).data, c.dt_bias.dtype(), dt_shape, Device::cuda(0));
    a.initial_state = dev(pool_k), a.out = dev(out_k), a.ssm_state_indices = dev(c.indices);
    kernels::LaunchOptions o;
    o.sync_after_launch = true;
    const Status st = kernels::kda::packed_decode(a, nullptr, o);
    RC_LOG() << (st.ok() ? std::string("launch ok") : st.first_error()->render_text()) << "\n";
    RC_ASSERT(st.ok());
  });
  const double ulp = s.act == DType::bf16 ? 1.0 / 128 : (s.act == DType::f16 ? 1.0 / 1024 : 0.0);
  assert_close("out", out_k, out_r, 1e-4, std::max(1e-4, ulp));
  const double state_atol = s.state == DType::f32 ? 1e-5 : (s.state == DType::bf16 ? 2e-3 : 5e-4);
  const double state_ulp = s.state == DType::bf16 ? 1.0 / 128 : (s.state == DType::f16 ? 1.0 / 1024 : 1e-4);
  assert_close("state", pool_k, pool_r, state_atol, state_ulp);
}

// AP-S1: against the oracle, sink included, at the upstream bar 2e-2; LSE is fp32 in both.
void prefill_kernel_matches_oracle() {
  SparseShape s;
  s.T = *rc::gen::inRange<std::int64_t>(1, 40);
  s.H = *rc::gen::element<std::int64_t>(1, 16, 48, 64, 128);
  s.D = *rc::gen::element<std::int64_t>(64, 128, 512);
  s.P = *rc::gen::inRange<std::int64_t>(1, 300);
  s.N_e = *rc::gen::inRange<std::int64_t>(1, 64);
  s.max_prefix = *rc::gen::element<std::int64_t>(4, 40, 200);
  s.max_extend = *rc::gen::element<std::int64_t>(2, 20);
  s.dtype = *rc::gen::element(DType::bf16, DType::f16);
  s.sentinels = *rc::gen::arbitrary<bool>();
  s.sink = *rc::gen::arbitrary<bool>();
  s.shift = *rc::gen::element(0.0, -0.6931471805599453);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << "T=" << s.T << " H=" << s.H << " D=" << s.D << " P=" << s.P << " N_e=" << s.N_e << " dtype="
           << dtype_name(s.dtype) << " sink=" << s.sink << " shift=" << s.shift << " seed=" << seed << "\n";
  SparseCase c(s, seed);
  auto args = c.prefill_args();
  Tensor out_k(s.dtype, {s.T, s.H, s.D}), lse_k(DType::f32, {s.T, s.H});
  out_k.poison();
  lse_k.poison();
  {
    DeviceMirror q(args.q), u(args.unified_kv), ip(args.kv_indices_prefix), pp(args.kv_indptr_prefix), kv(args.kv),
        ie(args.kv_indices_extend), pe(args.kv_indptr_extend), sink(args.attn_sink), o(out_k.view()), l(lse_k.view());
    auto a = args;
    a.q = q.view(), a.unified_kv = u.view(), a.kv_indices_prefix = ip.view(), a.kv_indptr_prefix = pp.view();
    a.kv = kv.view(), a.kv_indices_extend = ie.view(), a.kv_indptr_extend = pe.view(), a.attn_sink = sink.view();
    a.out = o.view(), a.lse = l.view();
    kernels::LaunchOptions opt;
    opt.sync_after_launch = true;
    const Status st = kernels::sparse::paged_prefill(a, nullptr, opt);
    RC_LOG() << (st.ok() ? std::string("launch ok") : st.first_error()->render_text()) << "\n";
    RC_ASSERT(st.ok());
    o.download();
    l.download();
  }
  reference::sparse::paged_prefill(c.prefill_args(), reference::Precision::oracle);
  assert_close("out", out_k, c.out, 2e-2, 2e-2);
  assert_close("lse", lse_k, c.lse, 1e-3, 1e-4);
}

}  // namespace

std::vector<Property> kernel_properties() {
  if (!DeviceMirror::device_present()) return {};
  return {
      {"kernels/kda/replayssm_decode/matches-reference", "kernel", replay_kernel_matches_reference},
      {"kernels/kda/packed_decode/matches-reference", "kernel", packed_kernel_matches_reference},
      {"kernels/sparse/paged_prefill/matches-oracle", "kernel", prefill_kernel_matches_oracle},
  };
}

}  // namespace kparity::fuzz
