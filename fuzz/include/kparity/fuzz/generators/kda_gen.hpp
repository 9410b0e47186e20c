#pragma once
// RapidCheck generators of valid KDA calls (kda/recurrent, kda/packed_decode,
// kda/replayssm_decode). Every constraint of the contracts is built in (no RC_PRE); sizes, dtypes,
// modes and per-row control are drawn with shrinking generators that ignore RapidCheck's size
// ramp (every bucket is reachable from the first case) and shrink toward the first, simplest
// choice: one head, K = V = 16, fp32, exact values, compact layouts, seed 0.
#include <cstdint>
#include <optional>
#include <rapidcheck/Gen.h>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/generators/kda_case.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/judge/floors.hpp"

namespace kparity::fuzz {

// What a property may pin instead of drawing.
struct KdaDrawOptions {
  std::optional<KdaValues> values;
  std::optional<bool> scrambled;
  // kda/recurrent: the raw gate (a, dt_bias, A_log) and logit beta, the form the packed decode
  // also takes, so a recurrent call can be replayed token by token through it.
  bool packed_compatible = false;
};

struct KdaDraw {
  KdaShape shape;
  Call call;
  std::optional<KdaSpecial> special;  // set when GenConfig::special_values injected one
};

// Inside a RapidCheck property. Notes the edge buckets of the draw (note_bucket).
KdaDraw draw_kda(std::string_view op, const GenConfig& cfg, const KdaDrawOptions& o = {});

// Uniform over [lo, hi] whatever RapidCheck's size, shrinking toward lo (rc::gen::inRange scales
// its range with the size, so the first cases of a run would only see lo).
rc::Gen<std::int64_t> uniform_int(std::int64_t lo, std::int64_t hi);

// Every bucket draw_kda can note for `op` under `cfg` and `o` (the spec lists those of every
// config; a property that pins a config lists its own, so its report shows real coverage gaps).
std::vector<std::string> kda_buckets(std::string_view op, const GenConfig& cfg, const KdaDrawOptions& o = {});

// The rule's floor of the KDA ops (kparity/judge/floors.hpp; recipes in judge/src/floors_kda.cpp).
using judging::kda_abs_floor;

// The specs of kda/recurrent, kda/packed_decode and kda/replayssm_decode (op_spec.hpp).
std::vector<OpFuzzSpec> kda_specs();

}  // namespace kparity::fuzz
