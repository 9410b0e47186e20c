#pragma once
// Host side of the small-T decode kernel (decode_small_kernel.cuh, SparseTuning::variant 3): whether
// auto picks it, and its head group and split count.
#include <cstdint>

#include "kparity/kernels/sparse.hpp"
#include "sparse/prepare.hpp"

namespace kparity::kernels::sparse::detail {

// The build's default (CMake KPARITY_SPARSE_SMALL_DECODE), unless the environment's
// KPARITY_SPARSE_SMALL_DECODE=0|1 says otherwise (read once): a campaign or benchmark of an existing
// build takes either path without rebuilding.
bool small_decode_enabled();

// Whether the kernel can serve a plan made by make_plan: D <= 512 and 16-byte KV rows.
bool small_decode_fits(const Plan& plan);

// Whether auto (variant 0) takes it: enabled, fits, D in (256, 512] (the kernel pads D to 512), and
// T * H <= 256, where it beat the v2 wgmma path on the H200 (decode_small_plan.cpp has the numbers).
bool small_decode_auto(const Plan& plan);

// Turns a make_plan plan into the small kernel's: head group (tuning.head_tile, else 16 up to
// T * H = 256 and 32 past it, as measured), n_head_tiles, split count (tuning.kv_splits, else up to one
// CTA per SM, never more splits than the mean list has 64-key tiles), the gather, ws_vec2.
// n_indices: kv_indices' length (the tokens' mean list length stands for the device's kv_indptr).
void make_small_plan(Plan& plan, std::int64_t n_indices, const SparseTuning& tuning);

}  // namespace kparity::kernels::sparse::detail
