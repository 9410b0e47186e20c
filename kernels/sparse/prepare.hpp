#pragma once
// Host side shared by the prefill and decode launchers: kernel-support checks (typed
// NotImplementedError), views -> POD params, tile choice and the dtype dispatch.
#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <string_view>

#include "kparity/kernels/sparse.hpp"
#include "sparse/params.hpp"

namespace kparity::kernels::sparse::detail {

// Views of one op, decode leaving the extend source empty.
struct OpViews {
  const TensorView* q = nullptr;
  const TensorView* src[2] = {nullptr, nullptr};
  const TensorView* idx[2] = {nullptr, nullptr};
  const TensorView* ptr[2] = {nullptr, nullptr};
  const char* names[6] = {"unified_kv", "kv", "kv_indices_prefix", "kv_indices_extend", "kv_indptr_prefix",
                          "kv_indptr_extend"};
  const TensorView* sink = nullptr;
  const TensorView* out = nullptr;
  const TensorView* lse = nullptr;  // null: no LSE
  double scale = 0.0, shift = 0.0;
};

struct Plan {
  AttnParams p;
  int dp = 0, ht = 0;
  int wg = 0;  // 0 mma.sync kernel, 1 the wgmma kernel (wg_addr_kernel.cuh), 2 the small-T decode kernel
  int gather = 0;  // wg 2: kGatherCpAsync or kGatherBulk (dispatch.hpp)
};

// Fills plan.p (splits = 1) after checking everything the kernel relies on; the contract has run.
// A configuration the kernels lack is a NotImplementedError with the op's kernel-unsupported
// catalog entry `unsupported_id`, naming the value.
Status make_plan(std::string_view op, std::string_view unsupported_id, const OpViews& v, const SparseTuning& tuning,
                 Plan& plan);

// Launch the attention kernel (and, when plan.p.splits > 1, the combine kernel). fast (decode's
// LaunchOptions::decode_variant 2): both launched with PDL and the wide combine kernel. The small-T
// decode kernel (plan.wg 2) always goes out that way.
Status launch(std::string_view op, std::string_view unsupported_id, const Plan& plan, bool bf16, cudaStream_t stream,
              const LaunchOptions& o, bool fast = false);

}  // namespace kparity::kernels::sparse::detail
