#pragma once
// Host-side helpers shared by every kernel launcher: CUDA status -> kparity::Status, the typed
// "unsupported by the kernel" error, SM count cache, host mirrors for deep checks, and the head
// (contract passes) and tail (dispatch, launch check) that the launchers share.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/dispatch_result.hpp"
#include "kparity/core/tensor_view.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/kernels/launch.hpp"

namespace kparity::kernels::detail {

// A failed CUDA call; RuntimeError, because that is what torch raises for it.
Status cuda_failure(std::string_view op, std::string_view what, cudaError_t e);

// NotImplementedError naming the unsupported value; `id` is the op's kernel-unsupported catalog entry
// (kparity::ids::<family>_<op>_kernel_unsupported), whose template renders name, value and supported.
Status not_implemented(std::string_view op, std::string_view id, std::string name, std::string value,
                       std::string_view supported);

// Multiprocessor count of the current device, read once per device (no per-call driver query).
int sm_count();

// A launcher's run-time form switch (KPARITY_CHUNK_FORM, KPARITY_CHUNK_PREP,
// KPARITY_PACKED_DECODE_FORM): the variable unset gives `unset`, a value listed in `choices` its
// number, any other value -1, which the launcher refuses naming the variable and `text` (a typo must
// not time or test the default form under another form's name). The caller keeps the result in a
// function-local static: read once a process, not a getenv a call.
struct EnvChoice {
  int value = 0;
  std::string text;  // the value as given (a copy: the environment may change after the read)
};
EnvChoice env_choice(const char* name, int unset, std::initializer_list<std::pair<std::string_view, int>> choices);

// LaunchOptions::decode_variant resolved: true for the small-batch decode paths (2, or 0 in a build
// with KPARITY_DECODE_FAST=ON), false for the established launches (1, or 0 otherwise).
bool fast_decode(const LaunchOptions& o);

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

// A dispatch that launched nothing: the value its switch missed as the op's kernel-unsupported error
// (`id`), else the CUDA error of the launch setup (`what`: "launch setup", ...).
Status dispatch_failure(std::string_view op, std::string_view id, std::string_view what, const DispatchResult& r);

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

// The head of a launcher: the contract's shape pass on the caller's views (its warnings are the
// returned status), then, when o.deep asks, the deep pass on host copies of `reads`.
template <class Args, class Check, class Validate, class Reads>
Status contract_passes(std::string_view op, const Args& a, const ValidateOptions& o, cudaStream_t stream, Check check,
                       Validate validate, Reads reads) {
  Status status = check(a, shape_only(o));
  if (!status.ok() || !o.deep) return status;
  if (Status s = deep_pass(op, a, o, stream, validate, reads); !s.ok()) return s;
  return status;
}

// The tail of a launcher whose host half ended in `prepared` (the contract's status, warnings kept):
// nothing to launch when it failed or `empty`; else `dispatch()`, then the launch check. A
// successful launch returns `prepared`, so the contract's warnings reach the caller.
template <class Dispatch>
Status dispatch_and_finish(std::string_view op, std::string_view unsupported_id, Status prepared, bool empty,
                           Dispatch&& dispatch, cudaStream_t stream, const LaunchOptions& o) {
  if (!prepared.ok() || empty) return prepared;
  if (const DispatchResult r = dispatch(); !r.ok()) return dispatch_failure(op, unsupported_id, "launch setup", r);
  Status done = finish_launch(op, stream, o);
  return done.ok() ? prepared : done;
}

}  // namespace kparity::kernels::detail
