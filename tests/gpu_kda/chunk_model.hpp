#pragma once
// A scalar model of the chunked kda/chunk kernel (docs/kda_chunk_kernel.md), run on host tensors:
// writes a.out and (output_final_state) a.final_state. `exact`: the chunked algorithm in fp64 with no
// rounding (the same result as the recurrence up to fp64 rounding: checks the algebra); `kernel`: fp32
// with the kernel's rounding points and tf32 tensor-core operands (sums in index order).
// chunks_per_step > 1: the chain walks that many 16-token chunks a step, composed (docs/
// kda_chunk_composed.md): the same prep, then its tables and products in the same rounding model.
// The CUDA form of it was measured slower in both of its kernels on 2026-12-06 and removed; the model
// stays as the checked algebra and accuracy of multi-chunk chain steps for a next design.
#include "kparity/diagnostics/contracts/kda_chunk.hpp"

namespace kparity::gpu_test {

enum class ChunkModel { exact, kernel };
void chunk_model(const kparity::kda::ChunkArgs& a, ChunkModel m, int chunks_per_step = 1);

}  // namespace kparity::gpu_test
