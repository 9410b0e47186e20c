// The mutation table: at least one mutation per active contract-emitted catalog entry, keyed by the
// entry's id. Each edit is written against the call it receives (its B, HV, K, L, T, ..., its live
// rows and selected index entries), and breaks exactly one contract while keeping every check that
// comes earlier in upstream order satisfied. The catalog entries' erroneousExample overrides are the
// fixture-sized version of the same intent.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "mutator_detail.hpp"

namespace kparity::fuzz {
namespace {

using namespace detail;
using Edit = std::function<bool(Mutant&, Pick&)>;
using K = MutationKind;

// Plain constants: the table may be built during another translation unit's static initialisation.
constexpr std::string_view kPacked = "kda/packed_decode", kReplay = "kda/replayssm_decode", kRecurrent = "kda/recurrent",
                           kPrefill = "sparse/paged_prefill", kDecode = "sparse/paged_decode";
std::vector<std::string> ops(std::initializer_list<std::string_view> names) { return {names.begin(), names.end()}; }

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t k2Pow31 = std::int64_t{1} << 31;

// Upstream parity plus nothing else: for the entries an enabled kparity check would pre-empt.
constexpr ValidateOptions kUpstreamOnly{Entry::cuda_kernel, false, false, true};
// Every check but the data-dependent ones.
constexpr ValidateOptions kShapeExtras{Entry::cuda_kernel, true, false, true};

template <class T>
const T& one_of(const std::vector<T>& v, Pick& p) {
  return v[static_cast<std::size_t>(p.below(static_cast<std::int64_t>(v.size())))];
}

// ---- KDA decode -------------------------------------------------------------------------------

struct Kda {
  std::int64_t B = 0, W = 0, H = 0, HV = 0, K = 0, V = 0, slots = 0, L = 0;
};

Kda kda(const Mutant& m) {
  Kda d;
  d.B = dim(m, "mixed_qkv", 0), d.W = dim(m, "mixed_qkv", 1);
  d.slots = dim(m, "initial_state", 0), d.HV = dim(m, "initial_state", 1);
  d.V = dim(m, "initial_state", 2), d.K = dim(m, "initial_state", 3);
  d.H = (d.W - d.HV * d.V) / (2 * d.K);
  if (has(m, "d_cache")) d.L = dim(m, "d_cache", 2);
  return d;
}

// Rows with a state slot (padding rows, slot < 0, are never read past their index).
std::vector<std::int64_t> live_rows(const Mutant& m) {
  std::vector<std::int64_t> rows;
  const std::int64_t B = dim(m, "ssm_state_indices", 0);
  for (std::int64_t r = 0; r < B; ++r)
    if (get_int(m, "ssm_state_indices", r) >= 0) rows.push_back(r);
  return rows;
}

void ensure_force_flush(Mutant& m) {
  if (!has(m, "force_flush")) make(m, "force_flush", DType::i32, {dim(m, "mixed_qkv", 0)}, {});
}

bool noncontiguous(Mutant& m, const std::string& name) {
  const TensorView v = view(m, name);
  if (v.numel() < 2) return false;  // one element is contiguous under any strides
  restride(m, name, padded_strides(v.shape(), 2));
  return true;
}

// Memory overlap needs bytes on both sides: an empty tensor overlaps nothing.
bool alias_one_of(Mutant& m, const std::string& name, std::initializer_list<const char*> others, Pick& p) {
  if (view(m, name).numel() == 0) return false;
  std::vector<std::string> candidates;
  for (const char* o : others)
    if (has(m, o) && view(m, o).numel() > 0) candidates.push_back(o);
  if (candidates.empty()) return false;
  alias(m, name, one_of(candidates, p));
  return true;
}

// ---- kda/recurrent ----------------------------------------------------------------------------

struct Rec {
  std::int64_t T = 0, H = 0, K = 0, HV = 0, V = 0, N = 1;
};

Rec rec(const Mutant& m) {
  Rec d;
  d.T = dim(m, "q", 0), d.H = dim(m, "q", 1), d.K = dim(m, "q", 2);
  d.HV = dim(m, "v", 1), d.V = dim(m, "v", 2);
  if (has(m, "cu_seqlens")) d.N = view(m, "cu_seqlens").numel() - 1;
  return d;
}

void ensure_cu_seqlens(Mutant& m) {
  if (!has(m, "cu_seqlens")) make(m, "cu_seqlens", DType::i32, {2}, {0.0, static_cast<double>(dim(m, "q", 0))});
}

// ---- sparse -----------------------------------------------------------------------------------

struct Sp {
  std::int64_t T = 0, H = 0, D = 0;
};
Sp sp(const Mutant& m) { return {dim(m, "q", 0), dim(m, "q", 1), dim(m, "q", 2)}; }

struct Csr {
  std::string ptr, idx, src;
};
std::vector<Csr> csrs(const Mutant& m) {
  if (m.call.op == kDecode) return {{"kv_indptr", "kv_indices", "unified_kv"}};
  return {{"kv_indptr_prefix", "kv_indices_prefix", "unified_kv"}, {"kv_indptr_extend", "kv_indices_extend", "kv"}};
}

// Index positions the kernel reads: inside a non-empty span [ptr[t], ptr[t+1]) within the array.
std::vector<std::int64_t> selected(const Mutant& m, const Csr& c) {
  std::vector<std::int64_t> js;
  const std::int64_t T = dim(m, "q", 0), n = view(m, c.idx).numel();
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t a = get_int(m, c.ptr, t), b = get_int(m, c.ptr, t + 1);
    if (b <= a || a < 0 || b > n) continue;
    for (std::int64_t j = a; j < b; ++j) js.push_back(j);
  }
  return js;
}

// A CSR source with at least one selected entry, and that entry; false when no token selects anything.
bool pick_selected(const Mutant& m, Pick& p, Csr& c, std::int64_t& j) {
  std::vector<std::pair<Csr, std::int64_t>> all;
  for (const Csr& s : csrs(m))
    for (std::int64_t x : selected(m, s)) all.emplace_back(s, x);
  if (all.empty()) return false;
  std::tie(c, j) = one_of(all, p);
  return true;
}

bool any_decreasing(const Mutant& m) {
  const std::int64_t T = dim(m, "q", 0);
  for (const Csr& c : csrs(m))
    for (std::int64_t t = 0; t < T; ++t)
      if (get_int(m, c.ptr, t + 1) < get_int(m, c.ptr, t)) return true;
  return false;
}

DType other_half(DType t) { return t == DType::bf16 ? DType::f16 : DType::bf16; }

// q with a per-dimension offset of 2^31 elements (extent = size * stride), built so that the view
// still fits in a small buffer: the large stride sits on a dimension of size 1 (or on a tensor
// with no elements), where no element is ever addressed through it.
void huge_stride_q(Mutant& m) {
  const Sp d = sp(m);
  Tensor& q = ten(m, "q");
  if (d.T == 0) {
    q = Tensor::strided(q.dtype(), {0, d.H, d.D}, {d.H * d.D, k2Pow31, 1});
    return;
  }
  Tensor t = Tensor::strided(q.dtype(), {1, d.H, d.D}, {k2Pow31, d.D, 1});
  copy_convert(q.view().select(0, 0), t.view().select(0, 0));
  q = std::move(t);
}

// ---- the table ----------------------------------------------------------------------------------

class Table {
 public:
  void add(std::string_view id, std::vector<std::string> ops, K kind, std::string what, Edit edit,
           ValidateOptions options = ValidateOptions::strict(Entry::cuda_kernel)) {
    const CatalogEntry* e = Catalog::embedded().by_id(id);
    if (!e) throw std::logic_error("mutation table: no catalog entry " + std::string(id));
    Mutation m;
    m.id = std::string(id);
    m.slug = e->slug;
    m.ops = std::move(ops);
    m.kind = kind;
    m.what = std::move(what);
    m.options = options;
    m.warning = e->severity == Severity::warning;
    m.edit = std::move(edit);
    v.push_back(std::move(m));
  }
  std::vector<Mutation> v;
};

void kda_decode_walk(Table& t) {
  // spec kda.md C.2, shared by both decode ops (ReplaySSM runs it on its flattened a / dt_bias).
  t.add(ids::kda_mixed_qkv_ndim, ops({kPacked, kReplay}), K::rank, "mixed_qkv [B, W] -> [B, 1, W]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "mixed_qkv", {d.B, 1, d.W});
    return true;
  });
  t.add(ids::kda_mixed_qkv_last_dim_stride, ops({kPacked, kReplay}), K::stride, "mixed_qkv read every other element",
        [](Mutant& m, Pick&) {
          restride(m, "mixed_qkv", padded_strides(view(m, "mixed_qkv").shape(), 2));
          return true;
        });
  t.add(ids::kda_a_b_ndim, ops({kPacked, kReplay}), K::rank, "b [B, HV] -> [B, HV, 1]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "b", {d.B, d.HV, 1});
    return true;
  });
  t.add(ids::kda_a_b_last_dim_stride, ops({kPacked, kReplay}), K::stride, "b read every other element", [](Mutant& m, Pick&) {
    restride(m, "b", padded_strides(view(m, "b").shape(), 2));
    return true;
  });
  t.add(ids::kda_a_log_dt_bias_ndim, ops({kPacked, kReplay}), K::rank, "A_log [HV] -> [HV, 1]", [](Mutant& m, Pick&) {
    reshape(m, "A_log", {kda(m).HV, 1});
    return true;
  });
  t.add(ids::kda_a_log_dt_bias_stride, ops({kPacked, kReplay}), K::stride, "A_log read every other element", [](Mutant& m, Pick&) {
    restride(m, "A_log", {2});
    return true;
  });
  t.add(ids::kda_ssm_state_indices_ndim, ops({kPacked, kReplay}), K::rank, "ssm_state_indices [B] -> [B, 1]", [](Mutant& m, Pick&) {
    reshape(m, "ssm_state_indices", {kda(m).B, 1});
    return true;
  });
  t.add(ids::kda_out_contiguous, ops({kPacked, kReplay}), K::stride, "out not contiguous",
        [](Mutant& m, Pick&) { return noncontiguous(m, "out"); });
  t.add(ids::kda_inputs_same_device, ops({kPacked, kReplay}), K::device, "one of a, b, A_log, dt_bias, initial_state, out, ssm_state_indices on the CPU",
        [](Mutant& m, Pick& p) {
          static const std::vector<std::string> names = {"a", "b", "A_log", "dt_bias", "initial_state", "out", "ssm_state_indices"};
          m.devices[one_of(names, p)] = Device::cpu();
          return true;
        });
  t.add(ids::kda_batch_size_mismatch, ops({kPacked, kReplay}), K::shape, "b gets B+1 rows", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "b", {d.B + 1, d.HV});
    return true;
  });
  t.add(ids::kda_ssm_state_indices_shape, ops({kPacked, kReplay}), K::shape, "ssm_state_indices gets B+1 entries", [](Mutant& m, Pick&) {
    reshape(m, "ssm_state_indices", {kda(m).B + 1});
    return true;
  });
  t.add(ids::kda_initial_state_ndim, ops({kPacked, kReplay}), K::rank, "initial_state [slots, HV, V, K] -> [slots, HV, V*K]",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          reshape(m, "initial_state", {d.slots, d.HV, d.V * d.K});
          return true;
        });
  t.add(ids::kda_initial_state_last_dim_stride, ops({kPacked, kReplay}), K::stride, "initial_state read every other element",
        [](Mutant& m, Pick&) {
          restride(m, "initial_state", padded_strides(view(m, "initial_state").shape(), 2));
          return true;
        });
  t.add(ids::kda_head_dims_power_of_two, ops({kPacked, kReplay}), K::shape, "initial_state's K or V tripled (not a power of two)",
        [](Mutant& m, Pick& p) {
          const Kda d = kda(m);
          if (p.below(2) == 0) reshape(m, "initial_state", {d.slots, d.HV, d.V, 3 * d.K});
          else reshape(m, "initial_state", {d.slots, d.HV, 3 * d.V, d.K});
          return true;
        });
  t.add(ids::kda_a_shape, ops({kPacked, kReplay}), K::shape, "a [B, HV*K] -> [B, (HV+1)*K]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "a", {d.B, (d.HV + 1) * d.K});
    return true;
  });
  t.add(ids::kda_b_shape, ops({kPacked, kReplay}), K::shape, "b [B, HV] -> [B, HV+1]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "b", {d.B, d.HV + 1});
    return true;
  });
  t.add(ids::kda_a_log_numel, ops({kPacked, kReplay}), K::shape, "A_log gets HV+1 entries", [](Mutant& m, Pick&) {
    reshape(m, "A_log", {kda(m).HV + 1});
    return true;
  });
  t.add(ids::kda_dt_bias_numel, ops({kPacked, kReplay}), K::shape, "dt_bias gets HV*K+1 entries", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "dt_bias", {d.HV * d.K + 1});
    return true;
  });
  t.add(ids::kda_out_shape, ops({kPacked, kReplay}), K::shape, "out's V or HV one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    if (p.below(2) == 0) reshape(m, "out", {d.B, 1, d.HV, d.V + 1});
    else reshape(m, "out", {d.B, 1, d.HV + 1, d.V});
    return true;
  });
  t.add(ids::kda_mixed_qkv_last_dim, ops({kPacked, kReplay}), K::shape, "mixed_qkv's last dim one larger (odd q+k part)",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          reshape(m, "mixed_qkv", {d.B, d.W + 1});
          return true;
        });
  t.add(ids::kda_q_size_divisible, ops({kPacked, kReplay}), K::shape, "mixed_qkv's q part H*K + r, 0 < r < K",
        [](Mutant& m, Pick& p) {
          const Kda d = kda(m);
          if (d.K < 2) return false;  // every q size is a multiple of K = 1
          reshape(m, "mixed_qkv", {d.B, d.W + 2 * (1 + p.below(d.K - 1))});
          return true;
        });
  t.add(ids::kda_head_config, ops({kPacked, kReplay}), K::shape, "mixed_qkv sized for HV+1 q/k heads (HV % H != 0)",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          reshape(m, "mixed_qkv", {d.B, 2 * (d.HV + 1) * d.K + d.HV * d.V});
          return true;
        });
}

void kda_decode_extras(Table& t) {
  // spec kda.md C.3, the checks both decode ops share (entries owned by kda/packed_decode).
  t.add(ids::kda_float_dtype, ops({kPacked, kReplay}), K::dtype, "one float input becomes int32", [](Mutant& m, Pick& p) {
    static const std::vector<std::string> names = {"mixed_qkv", "a", "b", "A_log", "dt_bias", "initial_state", "out"};
    retype(m, one_of(names, p), DType::i32);
    return true;
  });
  t.add(ids::kda_gate_params_dtype, ops({kPacked, kReplay}), K::dtype, "an fp32 gate parameter (A_log or dt_bias) becomes bf16",
        [](Mutant& m, Pick& p) {
          std::vector<std::string> f32;
          for (const char* n : {"A_log", "dt_bias"})
            if (view(m, n).dtype == DType::f32) f32.push_back(n);
          if (f32.size() < 2) return false;  // a call with a narrow gate parameter already warns
          retype(m, one_of(f32, p), DType::bf16);
          return true;
        });
  t.add(ids::kda_state_indices_dtype, ops({kPacked, kReplay}), K::dtype, "ssm_state_indices becomes float32", [](Mutant& m, Pick&) {
    retype(m, "ssm_state_indices", DType::f32);
    return true;
  });
  t.add(ids::kda_scale_not_finite, ops({kPacked, kReplay}), K::scalar, "scale = inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["scale"] = p.below(2) ? kInf : kNaN;
    return true;
  });
  t.add(ids::kda_scale_not_positive, ops({kPacked, kReplay}), K::scalar, "scale = -scale or 0", [](Mutant& m, Pick& p) {
    double& s = m.call.scalars.at("scale");
    if (!(s > 0) || !std::isfinite(s)) return false;
    s = p.below(2) ? -s : 0.0;
    return true;
  });
  t.add(ids::kda_lower_bound_invalid, ops({kPacked, kReplay}), K::scalar, "lower_bound = 0.5, inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["lower_bound"] = one_of(std::vector<double>{0.5, kInf, kNaN}, p);
    return true;
  });
  t.add(ids::kda_head_dims_small, ops({kPacked, kReplay}), K::shape, "V becomes 8 throughout (K, V >= 16 before)", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    if (d.K < 16 || d.V < 16) return false;  // already small: the call warns before the mutation
    const std::int64_t V = 8;
    reshape(m, "mixed_qkv", {d.B, 2 * d.H * d.K + d.HV * V});
    reshape(m, "initial_state", {d.slots, d.HV, V, d.K});
    reshape(m, "out", {d.B, 1, d.HV, V});
    if (has(m, "d_cache")) reshape(m, "d_cache", {dim(m, "d_cache", 0), d.HV, d.L, V});
    return true;
  });
  t.add(ids::kda_out_overlap, ops({kPacked, kReplay}), K::alias, "out aliases one of its inputs", [](Mutant& m, Pick& p) {
    return alias_one_of(m, "out", {"mixed_qkv", "a", "b", "A_log", "dt_bias", "initial_state", "ssm_state_indices"}, p);
  });
  t.add(ids::kda_state_slot_out_of_range, ops({kPacked, kReplay}), K::index_value, "ssm_state_indices[r] >= slots for a live row r",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          set(m, "ssm_state_indices", one_of(rows, p), static_cast<double>(kda(m).slots + p.below(3)));
          return true;
        });
  t.add(ids::kda_state_slot_shared, ops({kPacked, kReplay}), K::index_value, "a second row takes the slot of a live row",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          const std::int64_t B = kda(m).B;
          if (rows.empty() || B < 2) return false;
          const std::int64_t r1 = one_of(rows, p);
          const std::int64_t r2 = (r1 + 1 + p.below(B - 1)) % B;
          set(m, "ssm_state_indices", r2, static_cast<double>(get_int(m, "ssm_state_indices", r1)));
          return true;
        });
  t.add(ids::kda_non_finite, ops({kPacked, kReplay}), K::value, "a NaN or Inf in what a live row reads (mixed_qkv, b or A_log)",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          const Kda d = kda(m);
          const std::int64_t r = one_of(rows, p);
          const double bad = one_of(std::vector<double>{kNaN, kInf, -kInf}, p);
          switch (p.below(3)) {
            case 0: set(m, "mixed_qkv", r * d.W + p.below(d.W), bad); break;
            case 1: set(m, "b", r * d.HV + p.below(d.HV), bad); break;
            default: set(m, "A_log", p.below(d.HV), bad); break;
          }
          return true;
        });
}

void kda_replay(Table& t) {
  // spec kda.md C.1 #0-#14 (upstream) and the ReplaySSM-only C.3 checks.
  const auto R = ops({kReplay});
  t.add(ids::kda_replayssm_batch_dim, R, K::rank, "mixed_qkv becomes 0-D", [](Mutant& m, Pick&) {
    reshape(m, "mixed_qkv", {});
    return true;
  });
  t.add(ids::kda_replayssm_a_layout, R, K::rank, "a 1-D, 4-D or not contiguous", [](Mutant& m, Pick& p) {
    const TensorView a = view(m, "a");
    switch (p.below(3)) {
      case 0: reshape(m, "a", {a.numel()}); return true;
      case 1: reshape(m, "a", {a.size(0), kda(m).HV, kda(m).K, 1}); return true;
      default: return noncontiguous(m, "a");
    }
  });
  t.add(ids::kda_replayssm_dt_bias_layout, R, K::stride, "dt_bias 3-D or not contiguous", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    if (p.below(2) == 0) {
      reshape(m, "dt_bias", {d.HV, d.K, 1});
      return true;
    }
    return noncontiguous(m, "dt_bias");
  });
  // Upstream's `a.view(batch, -1)` fails when a's size is not a multiple of the batch; with B = 1 no
  // size is, so the batch goes to 0 instead (which kparity's own batch-zero check would name first).
  t.add(ids::kda_replayssm_a_view, R, K::shape, "a one element larger than B rows (B >= 2), or an empty batch",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          if (d.B >= 2) reshape(m, "a", {1, 1, view(m, "a").numel() + 1});
          else reshape(m, "mixed_qkv", {0, d.W});
          return true;
        },
        kUpstreamOnly);
  t.add(ids::kda_replayssm_batch_zero, R, K::shape, "mixed_qkv gets 0 rows", [](Mutant& m, Pick&) {
    reshape(m, "mixed_qkv", {0, kda(m).W});
    return true;
  });
  t.add(ids::kda_write_pos_dtype, R, K::dtype, "write_pos int64, float32 or 2-D", [](Mutant& m, Pick& p) {
    switch (p.below(3)) {
      case 0: retype(m, "write_pos", DType::i64); break;
      case 1: retype(m, "write_pos", DType::f32); break;
      default: reshape(m, "write_pos", {kda(m).B, 1}); break;
    }
    return true;
  });
  t.add(ids::kda_write_pos_shape, R, K::shape, "write_pos gets B+1 entries", [](Mutant& m, Pick&) {
    reshape(m, "write_pos", {kda(m).B + 1});
    return true;
  });
  t.add(ids::kda_force_flush_layout, R, K::dtype, "force_flush int64, B+1 entries or 2-D", [](Mutant& m, Pick& p) {
    ensure_force_flush(m);
    const std::int64_t B = kda(m).B;
    switch (p.below(3)) {
      case 0: retype(m, "force_flush", DType::i64); break;
      case 1: reshape(m, "force_flush", {B + 1}); break;
      default: reshape(m, "force_flush", {B, 1}); break;
    }
    return true;
  });
  t.add(ids::kda_d_cache_ndim, R, K::rank, "d_cache [slots, HV, L, V] -> [slots, HV*L*V]", [](Mutant& m, Pick&) {
    const TensorView d = view(m, "d_cache");
    reshape(m, "d_cache", {d.size(0), d.numel() / std::max<std::int64_t>(d.size(0), 1)});
    return true;
  });
  t.add(ids::kda_cache_length, R, K::shape, "d_cache's ring length L = 0", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "d_cache", {dim(m, "d_cache", 0), d.HV, 0, d.V});
    return true;
  });
  t.add(ids::kda_d_cache_shape, R, K::shape, "d_cache's HV or V one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    const std::int64_t s = dim(m, "d_cache", 0);
    if (p.below(2) == 0) reshape(m, "d_cache", {s, d.HV + 1, d.L, d.V});
    else reshape(m, "d_cache", {s, d.HV, d.L, d.V + 1});
    return true;
  });
  t.add(ids::kda_k_cache_shape, R, K::shape, "k_cache's H, L or K one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    Shape s{dim(m, "k_cache", 0), d.H, d.L, d.K};
    ++s[static_cast<std::size_t>(1 + p.below(3))];
    reshape(m, "k_cache", s);
    return true;
  });
  t.add(ids::kda_g_cache_shape, R, K::shape, "g_cache's HV, L or K one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    Shape s{dim(m, "g_cache", 0), d.HV, d.L, d.K};
    ++s[static_cast<std::size_t>(1 + p.below(3))];
    reshape(m, "g_cache", s);
    return true;
  });
  t.add(ids::kda_g_cache_dtype, R, K::dtype, "g_cache bf16, f16 or int32", [](Mutant& m, Pick& p) {
    retype(m, "g_cache", one_of(std::vector<DType>{DType::bf16, DType::f16, DType::i32}, p));
    return true;
  });
  t.add(ids::kda_replayssm_same_device, R, K::device, "one of d_cache, k_cache, g_cache, write_pos on the CPU",
        [](Mutant& m, Pick& p) {
          static const std::vector<std::string> names = {"d_cache", "k_cache", "g_cache", "write_pos"};
          m.devices[one_of(names, p)] = Device::cpu();
          return true;
        });
  t.add(ids::kda_force_flush_device, R, K::device, "force_flush on the CPU", [](Mutant& m, Pick&) {
    ensure_force_flush(m);
    m.devices["force_flush"] = Device::cpu();
    return true;
  });
  static const std::vector<std::string> rings = {"d_cache", "k_cache", "g_cache"};
  t.add(ids::kda_ring_slots_fewer, R, K::shape, "a ring with one slot fewer than the state pool",
        [](Mutant& m, Pick& p) {
          const Kda d = kda(m);
          if (d.slots < 1) return false;
          const std::string& ring = one_of(rings, p);
          Shape s = view(m, ring).shape();
          s[0] = d.slots - 1;
          reshape(m, ring, s);
          return true;
        },
        kShapeExtras);
  t.add(ids::kda_ring_slots_differ, R, K::shape, "a ring with more slots than the state pool", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    for (const auto& r : rings)
      if (dim(m, r, 0) != d.slots) return false;  // already warned before the mutation
    const std::string& ring = one_of(rings, p);
    Shape s = view(m, ring).shape();
    s[0] = d.slots + 1 + p.below(2);
    reshape(m, ring, s);
    return true;
  });
  t.add(ids::kda_replayssm_control_contiguous, R, K::stride, "write_pos or force_flush not contiguous",
        [](Mutant& m, Pick& p) {
          if (p.below(2) == 0) return noncontiguous(m, "write_pos");
          ensure_force_flush(m);
          return noncontiguous(m, "force_flush");
        });
  t.add(ids::kda_ring_slot_out_of_range, R, K::shape, "a ring shrunk below the largest live slot",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          std::int64_t smax = 0;
          for (std::int64_t r : rows) smax = std::max(smax, get_int(m, "ssm_state_indices", r));
          const std::string& ring = one_of(rings, p);
          Shape s = view(m, ring).shape();
          s[0] = smax;
          reshape(m, ring, s);
          return true;
        });
  t.add(ids::kda_write_pos_out_of_range, R, K::cursor_value, "write_pos[r] = L, L+1 or -1 for a live row r",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          const std::int64_t L = kda(m).L;
          set(m, "write_pos", one_of(rows, p), static_cast<double>(one_of(std::vector<std::int64_t>{L, L + 1, -1}, p)));
          return true;
        });
  t.add(ids::kda_force_flush_value, R, K::cursor_value, "force_flush[r] = 2, -1 or 7 for a live row r",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          ensure_force_flush(m);
          for (std::int64_t r : rows)
            if (const auto v = get_int(m, "force_flush", r); v != 0 && v != 1) return false;  // already warned
          set(m, "force_flush", one_of(rows, p), static_cast<double>(one_of(std::vector<std::int64_t>{2, -1, 7}, p)));
          return true;
        });
}

void kda_recurrent(Table& t) {
  // diagnostics/contracts/kda_recurrent.cpp items 1-18, then the kparity extras and deep checks.
  const auto R = ops({kRecurrent});
  t.add(ids::kda_recurrent_q_shape, R, K::rank, "q [T, H, K] -> [T, H*K]", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "q", {d.T, d.H * d.K});
    return true;
  });
  t.add(ids::kda_recurrent_k_shape, R, K::shape, "k's T, H or K one larger than q's", [](Mutant& m, Pick& p) {
    const Rec d = rec(m);
    Shape s{d.T, d.H, d.K};
    ++s[static_cast<std::size_t>(p.below(3))];
    reshape(m, "k", s);
    return true;
  });
  t.add(ids::kda_recurrent_v_shape, R, K::shape, "v gets T+1 tokens or loses a dim", [](Mutant& m, Pick& p) {
    const Rec d = rec(m);
    if (p.below(2) == 0) reshape(m, "v", {d.T + 1, d.HV, d.V});
    else reshape(m, "v", {d.T, d.HV * d.V});
    return true;
  });
  t.add(ids::kda_recurrent_head_dims, R, K::shape, "q and k with K = 0, or v with V = 0", [](Mutant& m, Pick& p) {
    const Rec d = rec(m);
    if (p.below(2) == 0) {
      reshape(m, "q", {d.T, d.H, 0});
      reshape(m, "k", {d.T, d.H, 0});
    } else {
      reshape(m, "v", {d.T, d.HV, 0});
    }
    return true;
  });
  t.add(ids::kda_recurrent_head_ratio, R, K::shape, "q and k with HV+1 heads (more than v)", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "q", {d.T, d.HV + 1, d.K});
    reshape(m, "k", {d.T, d.HV + 1, d.K});
    return true;
  });
  t.add(ids::kda_recurrent_gate_form, R, K::absent, "a gate input removed (A_log, dt_bias, a, or g)", [](Mutant& m, Pick& p) {
    if (has(m, "g")) {
      m.call.tensors.erase("g");
    } else {
      static const std::vector<std::string> raw = {"a", "dt_bias", "A_log"};
      m.call.tensors.erase(one_of(raw, p));
    }
    return true;
  });
  t.add(ids::kda_recurrent_g_shape, R, K::shape, "g's K one larger (precomputed-gate calls)", [](Mutant& m, Pick&) {
    if (!has(m, "g")) return false;
    const Rec d = rec(m);
    reshape(m, "g", {d.T, d.HV, d.K + 1});
    return true;
  });
  t.add(ids::kda_recurrent_a_shape, R, K::shape, "a's K one larger (raw-gate calls)", [](Mutant& m, Pick&) {
    if (has(m, "g")) return false;
    const Rec d = rec(m);
    reshape(m, "a", {d.T, d.HV, d.K + 1});
    return true;
  });
  t.add(ids::kda_recurrent_dt_bias_shape, R, K::shape, "dt_bias [HV, K+1] (raw-gate calls)", [](Mutant& m, Pick&) {
    if (has(m, "g")) return false;
    const Rec d = rec(m);
    reshape(m, "dt_bias", {d.HV, d.K + 1});
    return true;
  });
  t.add(ids::kda_recurrent_a_log_shape, R, K::shape, "A_log gets HV+1 entries (raw-gate calls)", [](Mutant& m, Pick&) {
    if (has(m, "g")) return false;
    reshape(m, "A_log", {rec(m).HV + 1});
    return true;
  });
  t.add(ids::kda_recurrent_beta_shape, R, K::shape, "beta [T, HV+1]", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "beta", {d.T, d.HV + 1});
    return true;
  });
  t.add(ids::kda_recurrent_cu_seqlens_shape, R, K::rank, "cu_seqlens 2-D (added when absent)", [](Mutant& m, Pick&) {
    ensure_cu_seqlens(m);
    reshape(m, "cu_seqlens", {1, view(m, "cu_seqlens").numel()});
    return true;
  });
  t.add(ids::kda_recurrent_cu_seqlens_dtype, R, K::dtype, "cu_seqlens float32 (added when absent)", [](Mutant& m, Pick&) {
    ensure_cu_seqlens(m);
    retype(m, "cu_seqlens", DType::f32);
    return true;
  });
  t.add(ids::kda_recurrent_initial_state_shape, R, K::shape, "initial_state for N+1 sequences (added when absent)",
        [](Mutant& m, Pick&) {
          const Rec d = rec(m);
          if (has(m, "initial_state")) reshape(m, "initial_state", {d.N + 1, d.HV, d.V, d.K});
          else make(m, "initial_state", DType::f32, {d.N + 1, d.HV, d.V, d.K}, {});
          return true;
        });
  t.add(ids::kda_recurrent_final_state_shape, R, K::shape, "final_state for N+1 sequences (added when absent)",
        [](Mutant& m, Pick&) {
          const Rec d = rec(m);
          if (has(m, "final_state")) reshape(m, "final_state", {d.N + 1, d.HV, d.V, d.K});
          else make(m, "final_state", DType::f32, {d.N + 1, d.HV, d.V, d.K}, {});
          return true;
        });
  t.add(ids::kda_recurrent_out_shape, R, K::shape, "out [T, HV, V+1]", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "out", {d.T, d.HV, d.V + 1});
    return true;
  });
  t.add(ids::kda_recurrent_float_dtype, R, K::dtype, "beta or out becomes int32", [](Mutant& m, Pick& p) {
    retype(m, p.below(2) ? "beta" : "out", DType::i32);
    return true;
  });
  t.add(ids::kda_recurrent_same_device, R, K::device, "one tensor other than q on the CPU", [](Mutant& m, Pick& p) {
    std::vector<std::string> names;
    for (const auto& [name, tensor] : m.call.tensors)
      if (name != "q") names.push_back(name);
    m.devices[one_of(names, p)] = Device::cpu();
    return true;
  });
  t.add(ids::kda_recurrent_scale_not_finite, R, K::scalar, "scale = inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["scale"] = p.below(2) ? kInf : kNaN;
    return true;
  });
  t.add(ids::kda_recurrent_lower_bound_invalid, R, K::scalar, "lower_bound = 0.5, inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["lower_bound"] = one_of(std::vector<double>{0.5, kInf, kNaN}, p);
    return true;
  });
  t.add(ids::kda_recurrent_out_overlap, R, K::alias, "out aliases q, k, v or beta", [](Mutant& m, Pick& p) {
    return alias_one_of(m, "out", {"q", "k", "v", "beta"}, p);
  });
  t.add(ids::kda_recurrent_cu_seqlens_values, R, K::index_value, "cu_seqlens ends at T+1 or starts at 1 (added when absent)",
        [](Mutant& m, Pick& p) {
          ensure_cu_seqlens(m);
          const std::int64_t n = view(m, "cu_seqlens").numel();
          if (p.below(2) == 0) set(m, "cu_seqlens", n - 1, static_cast<double>(rec(m).T + 1));
          else set(m, "cu_seqlens", 0, 1.0);
          return true;
        });
  t.add(ids::kda_recurrent_non_finite, R, K::value, "a NaN or Inf in q, k or v", [](Mutant& m, Pick& p) {
    static const std::vector<std::string> names = {"q", "k", "v"};
    const std::string& name = one_of(names, p);
    const std::int64_t n = view(m, name).numel();
    if (n == 0) return false;
    set(m, name, p.below(n), one_of(std::vector<double>{kNaN, kInf, -kInf}, p));
    return true;
  });
}

// The checks both sparse ops share, with each op's own entry id.
struct SparseIds {
  std::string_view requires_cuda, q_dtype, unified_kv_dtype, q_not_3d, device_mismatch, q_head_dim, index_dtype,
      sink_length, indptr_length, scale_not_finite, offset_overflow, out_buffer, lse_missing, lse_buffer, span,
      decreasing, row_offset, index_range, sink_nan, sink_inf, non_finite;
};

void sparse_common(Table& t, std::string_view op, const SparseIds& id) {
  const auto O = ops({op});
  t.add(id.requires_cuda, O, K::device, "every tensor on the CPU", [](Mutant& m, Pick&) {
    m.device = Device::cpu();
    return true;
  });
  t.add(id.q_dtype, O, K::dtype, "q float32 (or int32)", [](Mutant& m, Pick& p) {
    retype(m, "q", p.below(2) ? DType::f32 : DType::i32);
    return true;
  });
  t.add(id.unified_kv_dtype, O, K::dtype, "unified_kv in the other half dtype or float32", [](Mutant& m, Pick& p) {
    retype(m, "unified_kv", p.below(2) ? other_half(view(m, "q").dtype) : DType::f32);
    return true;
  });
  t.add(id.q_not_3d, O, K::rank, "q [T, H, D] -> [T, H*D] or [T, H, D, 1]", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (p.below(2) == 0) reshape(m, "q", {d.T, d.H * d.D});
    else reshape(m, "q", {d.T, d.H, d.D, 1});
    return true;
  });
  t.add(id.device_mismatch, O, K::device, "one tensor other than q on another device", [](Mutant& m, Pick& p) {
    std::vector<std::string> names;
    for (const auto& [name, tensor] : m.call.tensors)
      if (name != "q" && (name != "lse" || (m.call.flags.count("return_lse") && m.call.flags.at("return_lse"))))
        names.push_back(name);
    m.devices[one_of(names, p)] = p.below(2) ? Device::cpu() : Device::cuda(1);
    return true;
  });
  t.add(id.q_head_dim, O, K::shape, "q's D one larger than the pool's", [](Mutant& m, Pick&) {
    const Sp d = sp(m);
    reshape(m, "q", {d.T, d.H, d.D + 1});
    return true;
  });
  t.add(id.index_dtype, O, K::dtype, "an index or pointer tensor becomes float32", [](Mutant& m, Pick& p) {
    std::vector<std::string> names;
    for (const Csr& c : csrs(m)) names.insert(names.end(), {c.ptr, c.idx});
    retype(m, one_of(names, p), DType::f32);
    return true;
  });
  t.add(id.sink_length, O, K::shape, "attn_sink with H-1 entries", [](Mutant& m, Pick&) {
    const Sp d = sp(m);
    if (d.H < 1) return false;
    reshape(m, "attn_sink", {d.H - 1});
    return true;
  });
  t.add(id.indptr_length, O, K::shape, "a pointer tensor with T entries (one short)", [](Mutant& m, Pick& p) {
    reshape(m, one_of(csrs(m), p).ptr, {sp(m).T});
    return true;
  });
  t.add(id.scale_not_finite, O, K::scalar, "softmax_scale (or the logit shift) inf or nan", [](Mutant& m, Pick& p) {
    const std::string name = m.call.op == kPrefill && p.below(2) ? "replicated_logit_shift" : "softmax_scale";
    m.call.scalars[name] = p.below(2) ? kInf : kNaN;
    return true;
  });
  t.add(id.offset_overflow, O, K::stride, "q with a 2^31-element stride", [](Mutant& m, Pick&) {
    huge_stride_q(m);
    return true;
  });
  t.add(id.out_buffer, O, K::dtype, "out float32 or one token short", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (p.below(2) == 0 || d.T == 0) retype(m, "out", DType::f32);
    else reshape(m, "out", {d.T - 1, d.H, d.D});
    return true;
  });
  t.add(id.lse_missing, O, K::absent, "return_lse without an lse buffer", [](Mutant& m, Pick&) {
    m.call.flags["return_lse"] = true;
    m.call.tensors.erase("lse");
    return true;
  });
  t.add(id.lse_buffer, O, K::dtype, "return_lse with an lse buffer in bf16 or with H+1 columns", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    m.call.flags["return_lse"] = true;
    if (!has(m, "lse")) make(m, "lse", DType::f32, {d.T, d.H}, {});
    if (p.below(2) == 0) retype(m, "lse", DType::bf16);
    else reshape(m, "lse", {d.T, d.H + 1});
    return true;
  });
  t.add(id.span, O, K::index_value, "the last token's span ends past its index array", [](Mutant& m, Pick& p) {
    const std::int64_t T = sp(m).T;
    if (T < 1) return false;
    const Csr c = one_of(csrs(m), p);
    const std::int64_t n = view(m, c.idx).numel();
    if (get_int(m, c.ptr, T - 1) > n) set(m, c.ptr, T - 1, static_cast<double>(n));
    set(m, c.ptr, T, static_cast<double>(n + 1 + p.below(3)));
    return true;
  });
  t.add(id.decreasing, O, K::index_value, "the last token's span ends before it begins", [](Mutant& m, Pick& p) {
    const std::int64_t T = sp(m).T;
    if (T < 1 || any_decreasing(m)) return false;
    const Csr c = one_of(csrs(m), p);
    set(m, c.ptr, T, static_cast<double>(get_int(m, c.ptr, T - 1) - 1 - p.below(2)));
    return true;
  });
  t.add(id.row_offset, O, K::index_value, "a selected index whose row offset reaches 2^31 elements", [](Mutant& m, Pick& p) {
    Csr c;
    std::int64_t j = 0;
    if (!pick_selected(m, p, c, j)) return false;
    const std::int64_t stride = view(m, c.src).ndim() == 2 ? view(m, c.src).stride(0) : 0;
    if (stride < 2) return false;  // the smallest overflowing row would not fit an int32 index
    // Decode's int64 ids are multiplied in 64 bits; only int32 ids can wrap there.
    if (view(m, c.idx).dtype == DType::i64) retype(m, c.idx, DType::i32);
    set(m, c.idx, j, static_cast<double>((k2Pow31 + stride - 1) / stride));
    return true;
  });
  t.add(id.index_range, O, K::index_value, "a selected index = the number of rows of its source", [](Mutant& m, Pick& p) {
    Csr c;
    std::int64_t j = 0;
    if (!pick_selected(m, p, c, j)) return false;
    set(m, c.idx, j, static_cast<double>(dim(m, c.src, 0) + p.below(2)));
    return true;
  });
  t.add(id.sink_nan, O, K::value, "attn_sink[h] = nan", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (d.H < 1) return false;
    set(m, "attn_sink", p.below(d.H), kNaN);
    return true;
  });
  t.add(id.sink_inf, O, K::value, "attn_sink[h] = +inf", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (d.H < 1) return false;
    for (std::int64_t h = 0; h < d.H; ++h)
      if (get(m, "attn_sink", h) == kInf) return false;  // already warned
    set(m, "attn_sink", p.below(d.H), kInf);
    return true;
  });
  t.add(id.non_finite, O, K::value, "a NaN or Inf in q or in a selected row", [](Mutant& m, Pick& p) {
    const double bad = one_of(std::vector<double>{kNaN, kInf, -kInf}, p);
    Csr c;
    std::int64_t j = 0;
    if (p.below(2) == 0 && pick_selected(m, p, c, j)) {
      const std::int64_t row = get_int(m, c.idx, j);
      if (row >= 0) {
        const std::int64_t D = dim(m, c.src, 1);
        set(m, c.src, row * D + p.below(D), bad);
        return true;
      }
    }
    const std::int64_t n = view(m, "q").numel();
    if (n == 0) return false;
    set(m, "q", p.below(n), bad);
    return true;
  });
}

void sparse_prefill(Table& t) {
  sparse_common(t, kPrefill,
                {ids::sparse_prefill_requires_cuda_tensors, ids::sparse_prefill_q_dtype, ids::sparse_prefill_unified_kv_dtype,
                 ids::sparse_prefill_q_not_3d, ids::sparse_prefill_device_mismatch, ids::sparse_prefill_q_head_dim,
                 ids::sparse_prefill_index_dtype, ids::sparse_prefill_attn_sink_length, ids::sparse_prefill_indptr_length,
                 ids::sparse_prefill_scalar_not_finite, ids::sparse_prefill_offset_overflow, ids::sparse_prefill_out_buffer,
                 ids::sparse_prefill_lse_missing, ids::sparse_prefill_lse_buffer, ids::sparse_prefill_span_out_of_range,
                 ids::sparse_prefill_indptr_decreasing, ids::sparse_prefill_row_offset_overflow,
                 ids::sparse_prefill_index_out_of_range, ids::sparse_prefill_attn_sink_nan, ids::sparse_prefill_attn_sink_inf,
                 ids::sparse_prefill_non_finite_input});
  const auto O = ops({kPrefill});
  t.add(ids::sparse_prefill_kv_dtype, O, K::dtype, "kv float32 or the other half dtype", [](Mutant& m, Pick& p) {
    retype(m, "kv", p.below(2) ? other_half(view(m, "q").dtype) : DType::f32);
    return true;
  });
  t.add(ids::sparse_prefill_kv_source_0d, O, K::rank, "kv or unified_kv becomes 0-D", [](Mutant& m, Pick& p) {
    reshape(m, p.below(2) ? "kv" : "unified_kv", {});
    return true;
  });
  t.add(ids::sparse_prefill_head_dim_mismatch, O, K::shape, "kv's D one larger than unified_kv's", [](Mutant& m, Pick&) {
    reshape(m, "kv", {dim(m, "kv", 0), sp(m).D + 1});
    return true;
  });
  t.add(ids::sparse_prefill_kv_source_1d, O, K::rank, "unified_kv or kv becomes [D]", [](Mutant& m, Pick& p) {
    reshape(m, p.below(2) ? "kv" : "unified_kv", {sp(m).D});
    return true;
  });
  t.add(ids::sparse_prefill_kv_source_too_many_dims, O, K::rank, "unified_kv or kv gets a unit middle dim",
        [](Mutant& m, Pick& p) {
          const std::string name = p.below(2) ? "kv" : "unified_kv";
          reshape(m, name, {dim(m, name, 0), 1, sp(m).D});
          return true;
        });
  t.add(ids::sparse_prefill_index_int32_overflow, O, K::index_value, "an index or pointer tensor int64 with a value >= 2^31",
        [](Mutant& m, Pick& p) {
          const Csr c = one_of(csrs(m), p);
          const bool in_indices = view(m, c.idx).numel() > 0 && p.below(2) == 0;
          const std::string& name = in_indices ? c.idx : c.ptr;
          retype(m, name, DType::i64);
          // The wrapper narrows the first T+1 pointers (the kernel reads no more) and every index.
          const std::int64_t n = in_indices ? view(m, name).numel() : sp(m).T + 1;
          set(m, name, p.below(n), static_cast<double>(k2Pow31 + p.below(2)));
          return true;
        });
}

void sparse_decode(Table& t) {
  sparse_common(t, kDecode,
                {ids::sparse_decode_requires_cuda_tensors, ids::sparse_decode_q_dtype, ids::sparse_decode_unified_kv_dtype,
                 ids::sparse_decode_q_not_3d, ids::sparse_decode_device_mismatch, ids::sparse_decode_q_head_dim,
                 ids::sparse_decode_index_dtype, ids::sparse_decode_attn_sink_length, ids::sparse_decode_indptr_length,
                 ids::sparse_decode_scale_not_finite, ids::sparse_decode_offset_overflow, ids::sparse_decode_out_buffer,
                 ids::sparse_decode_lse_missing, ids::sparse_decode_lse_buffer, ids::sparse_decode_span_out_of_range,
                 ids::sparse_decode_indptr_decreasing, ids::sparse_decode_row_offset_overflow,
                 ids::sparse_decode_index_out_of_range, ids::sparse_decode_attn_sink_nan, ids::sparse_decode_attn_sink_inf,
                 ids::sparse_decode_non_finite_input});
  const auto O = ops({kDecode});
  t.add(ids::sparse_decode_unified_kv_too_few_dims, O, K::rank, "unified_kv becomes [D] or 0-D", [](Mutant& m, Pick& p) {
    if (p.below(2) == 0) reshape(m, "unified_kv", {sp(m).D});
    else reshape(m, "unified_kv", {});
    return true;
  });
  t.add(ids::sparse_decode_unified_kv_too_many_dims, O, K::rank, "unified_kv gets a unit middle dim", [](Mutant& m, Pick&) {
    reshape(m, "unified_kv", {dim(m, "unified_kv", 0), 1, sp(m).D});
    return true;
  });
  t.add(ids::sparse_decode_index_not_contiguous, O, K::stride, "kv_indices or kv_indptr not contiguous",
        [](Mutant& m, Pick& p) {
          const bool first = p.below(2) == 0;
          return noncontiguous(m, first ? "kv_indices" : "kv_indptr") || noncontiguous(m, first ? "kv_indptr" : "kv_indices");
        });
  t.add(ids::sparse_decode_index_negative, O, K::index_value, "a selected index = -1 (decode has no sentinels)",
        [](Mutant& m, Pick& p) {
          Csr c;
          std::int64_t j = 0;
          if (!pick_selected(m, p, c, j)) return false;
          set(m, c.idx, j, static_cast<double>(-1 - p.below(2)));
          return true;
        });
}

}  // namespace

const std::vector<Mutation>& mutation_table() {
  static const std::vector<Mutation> table = [] {
    Table t;
    kda_decode_walk(t);
    kda_decode_extras(t);
    kda_replay(t);
    kda_recurrent(t);
    sparse_prefill(t);
    sparse_decode(t);
    return std::move(t.v);
  }();
  return table;
}

}  // namespace kparity::fuzz
