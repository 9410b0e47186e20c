// Unsupported configurations are typed errors naming the value, never a silent fall-through
// (style habit 8). These fail before any device access, but live with the GPU suite.
#include <gtest/gtest.h>

#include "decode_case.hpp"
#include "kparity/kernels/kda.hpp"

namespace kparity::gpu_test {
namespace {

TEST(Launchers, UnsupportedHeadDimIsNotImplementedNamingIt) {
  KPARITY_REQUIRE_GPU();
  DecodeCfg c;
  c.K = 512; c.V = 16; c.B = 1; c.slots = 1; c.H = 1; c.HV = 1;
  const HostDecode h(c, 1);
  DevDecode dev(h);
  const Status s = kernels::kda::replayssm_decode(dev.replay_args(h), nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.first_error()->error_class, ErrorClass::NotImplementedError);
  EXPECT_EQ(s.first_error()->message,
            "K=512 is not supported by the CUDA kernel; supported: powers of two from 16 to 256.");
}

TEST(Launchers, MixedRingDtypesAreNotImplemented) {
  KPARITY_REQUIRE_GPU();
  DecodeCfg c;
  c.B = 1; c.slots = 1; c.ring = DType::f32;
  HostDecode h(c, 2);
  h.k = Tensor(DType::bf16, h.k.shape());
  DevDecode dev(h);
  const Status s = kernels::kda::replayssm_decode(dev.replay_args(h), nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.first_error()->error_class, ErrorClass::NotImplementedError);
  EXPECT_NE(s.first_error()->message.find("torch.float32/torch.bfloat16"), std::string::npos) << s.first_error()->message;
}

}  // namespace
}  // namespace kparity::gpu_test
