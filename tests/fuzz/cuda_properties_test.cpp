// The CUDA differential properties of an op whose kernel this build lacks (kda/chunk without
// -DKPARITY_CHUNK_KERNEL=ON) are listed as skipped with the reason, not drawn and discarded case
// after case (a property that discards every case fails its run; issue 32).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#include "kparity/judge/kernel_ops.hpp"

namespace {

using namespace kparity::fuzz;

TEST(CudaProperties, AnOpWhoseKernelIsNotBuiltIsSkippedWithTheReason) {
  // A stand-in named "cuda" that fails any case it runs: a property left runnable here must be one
  // whose kernel this build has.
  const Backend stand_in{"cuda", cuda_backend_ops(), [](Call&) { throw std::runtime_error("ran a case"); }};
  int chunk = 0;
  for (const Property& p : differential_properties({stand_in}, op_specs())) {
    const std::string why = kparity::judging::kernel_not_built(p.op);
    EXPECT_EQ(p.skipped, why) << p.name;
    EXPECT_EQ(static_cast<bool>(p.body), why.empty()) << p.name;
    if (p.op == "kda/chunk") ++chunk;
  }
  EXPECT_EQ(chunk, 2);  // differential and differential-special-values
  // A backend that is not the CUDA kernels runs every op it implements.
  const Backend other{"other", cuda_backend_ops(), [](Call&) {}};
  for (const Property& p : differential_properties({other}, op_specs())) EXPECT_TRUE(p.skipped.empty()) << p.name;
}

}  // namespace
