#pragma once
// Programmatic dependent launch (sm_90; CUDA graphs capture it): a kernel launched with the
// programmatic-serialization attribute may be scheduled while the previous kernel of its stream is
// still running, so its launch latency hides under that kernel's tail. Correctness stays stream
// order because every kernel that can be launched this way calls pdl_entry() before its first
// global memory access: griddepcontrol.wait returns once the previous grid has completed and its
// writes are visible (immediately when the launch had no programmatic dependency), and
// griddepcontrol.launch_dependents lets the next kernel's CTAs be scheduled (no effect on a stream
// whose next kernel is an ordinary launch). Both are no-ops on a plain launch.
#include <cuda_runtime.h>

#include <utility>

namespace kparity::kernels {
namespace dev {

__device__ __forceinline__ void pdl_entry() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace dev

// kernel<<<grid, block, smem, stream>>>(args...), with the programmatic-serialization attribute when
// `pdl` (the kernel must call dev::pdl_entry() first). Returns the launch's error.
template <class... KArgs, class... Args>
cudaError_t launch_kernel(void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream,
                          bool pdl, Args&&... args) {
  if (!pdl) {
    kernel<<<grid, block, smem, stream>>>(std::forward<Args>(args)...);
    return cudaSuccess;  // the launch error is read by the launcher's finish_launch
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace kparity::kernels
