#pragma once
// One KDA call as a plain record (sizes, dtypes, gate and value modes, per-row control, layout) and
// its deterministic construction. kda_gen.cpp draws the record with RapidCheck, so every knob
// shrinks on its own; the tensors are then built from the record and one seed, so a record plus a
// seed is a complete repro.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

// exact: small integers and dyadic fractions, gates with alpha = 1 and beta = 1/2, no L2 norm, a
// power-of-two scale: every intermediate is representable in fp32 (testing guide 1.4), so the
// faithful and oracle references agree bit for bit. typical: unit-scale values as in the upstream
// tests. harsh: gate logits across the softplus threshold and its exact-zero tail, saturated beta,
// larger state and values, still finite.
enum class KdaValues : std::uint8_t { exact, typical, harsh };
std::string_view kda_values_name(KdaValues v) noexcept;

// Where a special-values draw put its one special element.
struct KdaSpecial {
  enum class Kind : std::uint8_t { nan, pos_inf, neg_inf, neg_zero, subnormal };
  Kind kind = Kind::nan;
  std::string tensor;               // argument name
  std::vector<std::int64_t> index;  // logical index into that argument
  bool referenced = true;           // false: an unused state slot, which the op never reads
  double baseline = 0.0;            // what the special-free twin of the call holds there
};
std::string_view kda_special_name(KdaSpecial::Kind k) noexcept;

struct KdaShape {
  std::string op;  // kda/recurrent, kda/packed_decode or kda/replayssm_decode
  std::int64_t H = 1, G = 1, K = 16, V = 16;
  DType act = DType::f32;        // q/k/v (mixed_qkv), out
  DType state = DType::f32;      // initial_state
  DType gate_dt = DType::f32;    // a and b (decode); a, beta, g (recurrent)
  DType params_dt = DType::f32;  // A_log, dt_bias
  bool l2norm = false;
  std::optional<double> lower_bound;  // absent: softplus gate
  double scale = 0.25;
  KdaValues values = KdaValues::typical;
  bool scrambled = false;  // non-compact layouts (padded rows, permuted dims, offsets)
  std::uint64_t seed = 0;

  // Decode ops. Rows with a negative slot are padding rows; their inputs are poison.
  std::int64_t B = 1, slots = 1;
  std::vector<std::int64_t> slot;
  DType idx_dt = DType::i32;
  // ReplaySSM. Cursors and force flags of padding rows are garbage on purpose (never read).
  std::int64_t L = 1;
  std::vector<std::int64_t> cursor;
  std::vector<std::int64_t> force;
  bool has_force = false, beta_fp32 = false, a3d = false;
  DType ring = DType::f32;  // d_cache and k_cache (the kernels want one dtype for both)

  // Recurrent.
  std::vector<std::int64_t> seqlens;
  bool has_cu = true, gate_g = false, beta_logits = true, has_initial = true, has_final = true, scale_given = true;
  DType final_dt = DType::f32, cu_dt = DType::i32;

  std::int64_t HV() const { return H * G; }
  std::int64_t T() const;
  std::int64_t N() const { return static_cast<std::int64_t>(seqlens.size()); }
  // Does row b flush (ReplaySSM, kda.md B.2.3)? False for padding rows.
  bool flushes(std::int64_t b) const;
  std::string describe() const;
};

// The call of `s`, values drawn from s.seed, layouts compact or scrambled per s.scrambled. Notes the
// layout buckets it produced.
Call build_kda_call(const KdaShape& s);

// Overwrites one element with the special value of `sp` (the caller chose a legal place).
void inject_special(Call& c, const KdaSpecial& sp);

// Fresh per-token decode inputs (mixed_qkv, a, b) for the next step of a multi-step run, in the
// value mode of `s`; padding rows are poisoned again.
void refill_decode_tokens(Call& c, const KdaShape& s, std::uint64_t step_seed);

// The same call with every tensor copied (bytes, so NaN payloads and poison survive) into another
// layout the op accepts: compact (contiguous, no offset) or scrambled from `seed`.
Call relayout_kda_call(const Call& c, bool scramble, std::uint64_t seed);

// Sub-seed of one named tensor (testing guide 2.1: one seed per tensor, derived by name).
std::uint64_t tensor_seed(std::uint64_t seed, std::string_view name) noexcept;

}  // namespace kparity::fuzz
