#pragma once
// Shape pins (GenConfig::pins): the sizes and dtypes a JIT-compiled kernel is compiled for, held to
// a few values while everything else (token counts, batches, slots, cursors, index lists, layouts,
// flags, values, edge buckets, special values) is drawn as usual.
//
// Why: Triton compiles a kernel for every new set of constexpr sizes and pointer dtypes (about a
// second each, ten for fla's chunk_kda). The small generators draw K, V, heads, ring lengths and
// dtypes so freely that nearly every KDA call needs a new compile (299 compile keys in 300
// ReplaySSM draws): a fuzz run of a Triton kernel is then compile-bound, and a compile budget that
// rejects new keys rejects nearly every draw. Pinning the compile-relevant sizes turns the space
// into a handful of shape classes, each compiled once, so the run's time goes to cases.
//
// Text form (Python's pins= and the CLI's --pins build it): comma-separated key=value, a value list
// with '|', e.g. "K=32,V=32,H=1,HV=2,act=bf16,state=f32,L=4|17". Keys by op family:
//   sparse/*  D, H (sizes), dtype (q, KV and out), sink (the sink's dtype)
//   kda/*     H, HV, K, V (sizes; HV a multiple of H), L (ReplaySSM ring lengths),
//             act (activations and out), state (state pool), params (A_log, dt_bias),
//             ring (ReplaySSM d_cache and k_cache)
//   both      layout=compact: every tensor contiguous at storage offset 0 (Triton also specialises
//             on each pointer's 16-byte alignment and each stride's divisibility by 16: the
//             generators' padded, permuted and offset layouts are a new compile nearly every call)
// A pinned list replaces the generator's own choice for that knob; the first value is the simplest
// (shrinking goes toward it). Sizes stay within what the generators draw (small: up to 64 channels,
// D up to 512) only by convention: a pin may ask for more, and the call gets bigger.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

struct ShapePins {
  std::string family;  // "sparse" or "kda"
  std::vector<std::int64_t> D, H, HV, K, V, L;
  std::vector<DType> dtype, sink, act, state, params, ring;
  bool compact = false;  // layout=compact

  bool empty() const;
  // The text form, keys in a fixed order (what a repro prints).
  std::string text() const;
};

// Parses the text form for op's family; throws std::invalid_argument with the offending key or
// value ("pins: unknown key 'Q' for kda/* (known: H, HV, K, V, L, act, state, params, ring)").
ShapePins parse_shape_pins(std::string_view text, std::string_view op);

// The pins of `cfg` for a generator of `family`, or nullptr.
const ShapePins* pins_for(const GenConfig& cfg, std::string_view family);

}  // namespace kparity::fuzz
