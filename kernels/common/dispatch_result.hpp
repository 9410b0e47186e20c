#pragma once
// What a compile-time dispatch (a switch from a run-time dtype code, head dim or tile to a template
// instance) returns: the launch setup's CUDA error, or the run-time value that no case matched. The
// launchers check every value before they dispatch, so a miss means the checks and the switch
// disagree; it is still reported as the op's kernel-unsupported error naming the value (style habit
// 8), never as a generic CUDA error and never as a silent fall-through.
#include <cuda_runtime_api.h>

#include <string>
#include <string_view>
#include <utility>

#include "common/dtype_code.hpp"

namespace kparity::kernels {

struct DispatchResult {
  cudaError_t error = cudaSuccess;  // of the launch setup (cudaFuncSetAttribute)
  std::string_view missed;          // the switched value no case matched (a literal); empty when every case did
  std::string value;                // its value as the message prints it
  std::string supported;            // what the switch has cases for
  bool ok() const { return error == cudaSuccess && missed.empty(); }
};

inline DispatchResult dispatched(cudaError_t e) { return DispatchResult{e, {}, {}, {}}; }

inline DispatchResult dispatch_miss(std::string_view name, std::string value, std::string supported) {
  return DispatchResult{cudaSuccess, name, std::move(value), std::move(supported)};
}

// A dtype code no case matched, printed as torch prints the dtype.
inline DispatchResult dtype_miss(std::string_view name, int code, std::string_view supported) {
  const std::optional<DType> t = dtype_of_code(code);
  return dispatch_miss(name, t ? std::string(torch_repr(*t)) : "dtype code " + std::to_string(code),
                       std::string(supported));
}

}  // namespace kparity::kernels
