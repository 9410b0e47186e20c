#pragma once
// kda_chunk_accuracy's kernel side: kparity's CUDA kda/chunk kernel on one call, straight through its
// launcher (kparity::kernels::kda::chunk), so the comparison does not wait for the fuzz harness's CUDA
// backend to list the op (bench/chunk_accuracy.cpp tries that backend first). Built when the kernels
// are (KPARITY_ACCURACY_KERNEL).
#include <string>

#include "kparity/fuzz/call.hpp"

namespace kparity::bench {

// "" when the kernel can run here, else why not: "kernel not built (...)", "no CUDA device".
std::string chunk_kernel_unavailable();

// `call` with its written tensors as the kernel wrote them, from a device copy of every tensor (pure
// outputs poisoned first); throws fuzz::BackendUnsupported for the launcher's NotImplementedError
// and std::runtime_error for any other refusal or CUDA error.
fuzz::Call run_chunk_kernel(const fuzz::Call& call);

}  // namespace kparity::bench
