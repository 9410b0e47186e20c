#pragma once
// Named shape presets for the generators (GenConfig::preset): the per-token shapes of real models,
// so that an implementation can be fuzzed where it is deployed, not only on the generators' own
// small or kernel-sized shapes.
//
//   small        the generators' own small shapes (GenConfig::large off): fast, every bucket
//   large        the generators' kernel-sized shapes (GenConfig::large): tile edges, many slots
//   deepseek-v4  sparse/*: D = 512, H in {64, 128}, bf16 q and KV, fp32 sink; every token selects
//                top-k 512 or 2048 compressed rows plus the sliding window of 128 (V4's SWA), the
//                prefill's window rows in `kv`, the decode's in `unified_kv`
//   kimi-linear  kda/*: K = V = 128, H = HV = 32, bf16 activations, fp32 state and parameters,
//                ReplaySSM ring length 16 (sglang's), decode batches of 1 to 3 rows
//
// The real-model presets keep the token count small (1 or 2 query tokens; 1 to 4 tokens per
// sequence, at most 2 sequences): the per-token shapes are what is real, and the fp64 oracle of one
// DeepSeek-V4 token with top-k 2048 at H = 128 is about 3e8 multiply-adds (about a second of CPU),
// so a campaign at these presets runs tens of cases a minute per worker. Use "small" for depth.
// Values, layouts, flags, edge buckets and special values are drawn as for the other shapes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

struct SparsePreset {
  std::vector<std::int64_t> D, H, T;  // each drawn from its list (shrinks toward the first)
  std::vector<std::int64_t> topk;     // compressed rows per token
  std::int64_t window = 128;          // sliding-window rows per token (fewer for the first tokens)
  DType dtype = DType::bf16;          // q, unified_kv, kv, out
  DType sink_dtype = DType::f32;
};

struct KdaPreset {
  std::int64_t H = 1, HV = 1, K = 16, V = 16;
  DType act = DType::bf16;    // q/k/v, mixed_qkv, out
  DType state = DType::f32;   // initial_state (the recurrent and decode pools)
  DType params = DType::f32;  // A_log, dt_bias
  std::vector<std::int64_t> ring_lengths;  // ReplaySSM L
  std::vector<std::int64_t> seq_lengths;   // tokens per sequence (kda/recurrent, kda/chunk)
  std::int64_t max_sequences = 1;
  std::int64_t max_batch = 1;              // decode rows
};

struct ShapePreset {
  std::string name;
  std::string what;  // one line for reports and --help
  bool large = false;  // "large": GenConfig::large
  std::optional<SparsePreset> sparse;  // absent: the sparse generators' own shapes
  std::optional<KdaPreset> kda;        // absent: the KDA generators' own shapes
  // The op families the preset constrains ("sparse", "kda"); empty: every op (small, large).
  std::vector<std::string> families;
};

// small, large, deepseek-v4, kimi-linear, in that order.
const std::vector<ShapePreset>& shape_presets();
// nullptr for an unknown name.
const ShapePreset* find_shape_preset(std::string_view name);
// "small, large, deepseek-v4, kimi-linear".
std::string shape_preset_names();
// "" when `preset` applies to `op` ("kda/replayssm_decode" and kimi-linear), else why not
// ("preset deepseek-v4 has shapes for sparse/* only, not kda/recurrent").
std::string preset_mismatch(const ShapePreset& preset, std::string_view op);

// The preset's shapes for the generator of one family, or nullptr (no preset, or one without
// shapes for that family).
const SparsePreset* sparse_preset(const GenConfig& cfg);
const KdaPreset* kda_preset(const GenConfig& cfg);
// Overwrites the heads, head sizes and dtypes of a drawn KDA call record with the preset's (a
// gate dtype other than fp32 follows the activations, as drawn).
struct KdaShape;
void apply_kda_preset(const KdaPreset& p, KdaShape& s);

// One token's index list of a DeepSeek-V4 call (generators/sparse_gen.cpp draws them from these):
// which source it reads and the rows it names.
//   prefix (prefill unified_kv): the window slots of earlier tokens not in this chunk (up to
//     window - t - 1 of them, from ring rows [0, window)), then `topk` distinct compressed rows
//     from [window, rows), a few of them -1 sentinels (sglang pads its fixed-size lists with -1);
//   extend (prefill kv): this chunk's rows of the last min(t + 1, window) tokens, ending at t;
//   decode (unified_kv): `window` ring slots, then `topk` distinct compressed rows.
enum class PresetList { prefix, extend, decode };
// Rows the source needs for `topk` and T tokens.
std::int64_t preset_source_rows(const SparsePreset& p, PresetList which, std::int64_t topk, std::int64_t T);
// The flat index list and pointers (ptr[0] = 0) of T tokens, from `seed`.
void preset_index_lists(const SparsePreset& p, PresetList which, std::int64_t topk, std::int64_t T,
                        std::int64_t rows, std::uint64_t seed, std::vector<std::int64_t>& idx,
                        std::vector<std::int64_t>& ptr);

}  // namespace kparity::fuzz
