// Named shape presets (presets.hpp).
#include "kparity/fuzz/generators/presets.hpp"

#include <algorithm>
#include <numeric>

#include "kparity/core/random.hpp"
#include "kparity/fuzz/generators/kda_case.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

std::vector<ShapePreset> build() {
  std::vector<ShapePreset> all;
  all.push_back({"small", "the generators' own small shapes (K, V up to 64; D up to 512 with few heads)", false,
                 std::nullopt, std::nullopt, {}});
  all.push_back({"large", "the generators' kernel-sized shapes (K, V up to 256, tile edges, many slots)", true,
                 std::nullopt, std::nullopt, {}});

  // DeepSeek-V4 (spec sparse_attention.md B.2, B.3 and the peer benchmarks): D = 448 NoPE + 64 RoPE
  // channels, 64 or 128 query heads, the indexer's top-k 512 (V4 config 1) or 2048 rows per token
  // plus the 128-token sliding window; bf16 activations and KV, the fp32 sink parameter. One or
  // two query tokens: the fp64 oracle of one token at H = 128 and top-k 2048 is about 3e8
  // multiply-adds.
  SparsePreset v4;
  v4.D = {512};
  v4.H = {64, 128};
  v4.T = {1, 2};
  v4.topk = {512, 2048};
  v4.window = 128;
  all.push_back({"deepseek-v4",
                 "sparse/*: D=512, H 64|128, top-k 512|2048 + window 128 per token, bf16, fp32 sink, 1-2 tokens",
                 false, v4, std::nullopt, {"sparse"}});

  // Kimi-Linear's KDA layers (the peer benchmarks' shapes): 32 query/key and 32 value heads of
  // 128 channels, bf16 activations, fp32 recurrent state; sglang's ReplaySSM pool uses a ring of 16
  // entries. Few tokens and rows: the per-token state update is the real cost (32 x 128 x 128).
  KdaPreset kimi;
  kimi.H = 32;
  kimi.HV = 32;
  kimi.K = 128;
  kimi.V = 128;
  kimi.ring_lengths = {16};
  kimi.seq_lengths = {1, 2, 3, 4};
  kimi.max_sequences = 2;
  kimi.max_batch = 3;
  all.push_back({"kimi-linear",
                 "kda/*: K=V=128, H=HV=32, bf16 activations, fp32 state, ReplaySSM L=16, 1-4 tokens, 1-3 rows",
                 false, std::nullopt, kimi, {"kda"}});
  return all;
}

// k distinct values of [lo, hi) in random order (a partial Fisher-Yates shuffle).
std::vector<I> distinct(Rng& rng, I lo, I hi, I k) {
  std::vector<I> pool(static_cast<std::size_t>(std::max<I>(hi - lo, 0)));
  std::iota(pool.begin(), pool.end(), lo);
  k = std::min<I>(k, static_cast<I>(pool.size()));
  for (I i = 0; i < k; ++i) std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(rng.integer(i, static_cast<I>(pool.size()) - 1))]);
  pool.resize(static_cast<std::size_t>(k));
  return pool;
}

}  // namespace

const std::vector<ShapePreset>& shape_presets() {
  static const std::vector<ShapePreset> all = build();
  return all;
}

const ShapePreset* find_shape_preset(std::string_view name) {
  for (const auto& p : shape_presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string shape_preset_names() {
  std::string out;
  for (const auto& p : shape_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

std::string preset_mismatch(const ShapePreset& preset, std::string_view op) {
  if (preset.families.empty()) return "";
  const std::string family(op.substr(0, op.find('/')));
  for (const auto& f : preset.families)
    if (f == family) return "";
  std::string fams;
  for (const auto& f : preset.families) fams += (fams.empty() ? "" : ", ") + f + "/*";
  return "preset " + preset.name + " has shapes for " + fams + " only, not " + std::string(op);
}

const SparsePreset* sparse_preset(const GenConfig& cfg) {
  return cfg.preset && cfg.preset->sparse ? &*cfg.preset->sparse : nullptr;
}

const KdaPreset* kda_preset(const GenConfig& cfg) { return cfg.preset && cfg.preset->kda ? &*cfg.preset->kda : nullptr; }

void apply_kda_preset(const KdaPreset& p, KdaShape& s) {
  s.H = p.H;
  s.G = p.HV / p.H;
  s.K = p.K;
  s.V = p.V;
  if (s.gate_dt != DType::f32) s.gate_dt = p.act;
  s.act = p.act;
  s.state = p.state;
  s.params_dt = p.params;
}

I preset_source_rows(const SparsePreset& p, PresetList which, I topk, I T) {
  // Ring rows [0, window) then compressed rows; a few more than the lists name, so that the
  // top-k choice is a draw and not the whole source.
  if (which == PresetList::extend) return T;
  return p.window + topk + 8;
}

void preset_index_lists(const SparsePreset& p, PresetList which, I topk, I T, I rows, std::uint64_t seed,
                        std::vector<I>& idx, std::vector<I>& ptr) {
  Rng rng(seed);
  idx.clear();
  ptr.assign(1, 0);
  for (I t = 0; t < T; ++t) {
    if (which == PresetList::extend) {
      // This chunk's rows of the last min(t + 1, window) tokens, ending with the token itself.
      for (I r = std::max<I>(0, t - p.window + 1); r <= t && r < rows; ++r) idx.push_back(r);
    } else {
      const I ring = which == PresetList::decode ? p.window : std::max<I>(p.window - t - 1, 0);
      for (I r : distinct(rng, 0, std::min(p.window, rows), ring)) idx.push_back(r);
      std::vector<I> compressed = distinct(rng, std::min(p.window, rows), rows, topk);
      if (which == PresetList::prefix) {
        // sglang's fixed-size prefix lists pad with -1 sentinels (C.1 item 3): a few of them.
        const I pads = rng.integer(0, 4);
        for (I j = 0; j < pads && !compressed.empty(); ++j)
          compressed[static_cast<std::size_t>(rng.integer(0, static_cast<I>(compressed.size()) - 1))] = -1;
      }
      idx.insert(idx.end(), compressed.begin(), compressed.end());
    }
    ptr.push_back(static_cast<I>(idx.size()));
  }
}

}  // namespace kparity::fuzz
