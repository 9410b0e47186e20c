#pragma once
// Host-side helpers shared by every kernel launcher: CUDA status -> kparity::Status, the typed
// "unsupported by the kernel" error, SM count cache and host mirrors for deep checks.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor_view.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/kernels/launch.hpp"

namespace kparity::kernels::detail {

// A failed CUDA call; RuntimeError, because that is what torch raises for it.
Status cuda_failure(std::string_view op, std::string_view what, cudaError_t e);

// NotImplementedError naming the unsupported value. Until the catalog carries the proposed entry
// "<op>/kda-kernel-unsupported", the diagnostic is built here with that entry's would-be id.
Status not_implemented(std::string_view op, std::string_view id, std::string name, std::string value,
                       std::string_view supported);

// Multiprocessor count of the current device, read once per device (no per-call driver query).
int sm_count();

// Host copies of device index tensors, so a contract can read them (ValidateOptions::deep).
struct HostMirror {
  std::vector<std::byte> bytes;
  TensorView view;
};
[[nodiscard]] cudaError_t mirror_to_host(const TensorView& t, HostMirror& m, cudaStream_t stream);
// Points every view at a host copy of its bytes (a deep pass reads them on the host); the copies
// live in `mirrors` while the views are read. A failed copy is reported as the op's deep-check copy
// failure.
[[nodiscard]] Status mirror_all_to_host(std::string_view op, std::span<TensorView* const> views,
                                        std::vector<HostMirror>& mirrors, cudaStream_t stream);

// The shape pass of a launcher's contract: the caller's options without the deep (data) checks,
// which read tensor contents and so run on host copies (deep_pass).
inline ValidateOptions shape_only(ValidateOptions o) {
  o.deep_pass_follows = o.deep;
  o.deep = false;
  return o;
}

// Keeps only the data-dependent diagnostics of a deep pass over host mirrors (the shape pass over
// the real views already ran; the mirrors' host device label must not re-trigger device checks).
Status deep_only(std::vector<Diagnostic> diags);

// After a launch: the launch error, then (when asked) the stream's completion.
Status finish_launch(std::string_view op, cudaStream_t stream, const LaunchOptions& o);

bool supported_head_dim(std::int64_t d);  // powers of two in [16, 256]
bool float_dtype(DType t);               // f32, f16, bf16

// The deep pass of a launcher's contract: `validate` over a copy of the arguments whose tensors named
// by `reads` (a function of that copy, returning the TensorView pointers) are host copies; only the
// data-dependent findings are kept (the shape pass already ran on the caller's views).
template <class Args, class Validate, class Reads>
Status deep_pass(std::string_view op, const Args& a, const ValidateOptions& o, cudaStream_t stream, Validate validate,
                 Reads reads) {
  Args m = a;
  std::vector<HostMirror> mirrors;
  if (Status s = mirror_all_to_host(op, reads(m), mirrors, stream); !s.ok()) return s;
  return deep_only(validate(m, o));
}

}  // namespace kparity::kernels::detail
