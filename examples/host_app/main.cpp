// Validates a ReplaySSM decode call whose g_cache ring was allocated as bf16 instead of float32,
// the way a serving engine would before launching the kernel, and prints the diagnostic.
// The buffers are host memory labelled cuda:0: validation reads metadata only.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <kparity/diagnostics/contracts/kda_replayssm_decode.hpp>

namespace {

struct Buffer {
  std::vector<std::uint8_t> bytes;
  kparity::TensorView view;
  Buffer(kparity::DType t, std::vector<std::int64_t> shape) {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    bytes.resize(static_cast<std::size_t>(n) * kparity::dtype_size(t));
    view = kparity::TensorView(bytes.data(), t, shape, kparity::Device::cuda(0));
  }
};

}  // namespace

int main() {
  using kparity::DType;
  // B = 2 rows, H = 1 key head, HV = 2 value heads, K = V = 16, ring length L = 4, 3 slots.
  Buffer mixed_qkv(DType::bf16, {2, 64}), a(DType::bf16, {2, 2, 16}), b(DType::bf16, {2, 2});
  Buffer A_log(DType::f32, {2}), dt_bias(DType::f32, {2, 16});
  Buffer state(DType::f32, {3, 2, 16, 16});
  Buffer d_cache(DType::bf16, {3, 2, 4, 16}), k_cache(DType::bf16, {3, 1, 4, 16});
  Buffer g_cache(DType::bf16, {3, 2, 4, 16});  // the bug: the gate ring must be float32
  Buffer out(DType::bf16, {2, 1, 2, 16});
  Buffer slots(DType::i32, {2}), write_pos(DType::i32, {2});

  kparity::kda::ReplaySsmDecodeArgs call;
  call.mixed_qkv = mixed_qkv.view;
  call.a = a.view;
  call.b = b.view;
  call.A_log = A_log.view;
  call.dt_bias = dt_bias.view;
  call.scale = 0.25;
  call.initial_state = state.view;
  call.d_cache = d_cache.view;
  call.k_cache = k_cache.view;
  call.g_cache = g_cache.view;
  call.out = out.view;
  call.ssm_state_indices = slots.view;
  call.write_pos = write_pos.view;
  call.use_qk_l2norm_in_kernel = true;

  kparity::Status status = kparity::kda::try_check_replayssm_decode(call);
  if (status.ok()) {
    std::printf("the call validated; nothing to report\n");
    return 1;  // this example exists to show a diagnostic
  }
  std::printf("%s\n", status.first_error()->render_text().c_str());
  return 0;
}
