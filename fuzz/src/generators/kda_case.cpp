#include "kparity/fuzz/generators/kda_case.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "kparity/core/random.hpp"
#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "fill_rows.hpp"

namespace kparity::fuzz {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_op(const KdaShape& s, std::string_view op) { return s.op == op; }

// How far a tensor's layout may stray from contiguous without breaking the op's contract
// (kda.md B.0, C.1, C.2): offset_only = contiguous (an offset is invisible to every check);
// outer = last-dim stride 1, the outer dims free; any = every stride free.
enum class Freedom { offset_only, outer, any };

Freedom freedom(std::string_view op, std::string_view name) {
  // The recurrent contract checks no strides and its kernel addresses every dim by stride; chunk_kda
  // makes every input contiguous (fla's input_guard) and kparity's contract checks no strides either.
  if (op == kda::kRecurrentOp || op == kda::kChunkOp) return Freedom::any;
  if (name == "mixed_qkv" || name == "b" || name == "initial_state") return Freedom::outer;
  if (name == "a") return op == kda::kPackedDecodeOp ? Freedom::outer : Freedom::offset_only;  // C.1 #1
  if (name == "ssm_state_indices" || name == "d_cache" || name == "k_cache" || name == "g_cache") return Freedom::any;
  return Freedom::offset_only;  // A_log, dt_bias (C.2 #6, C.1 #2), out (C.2 #8), write_pos/force_flush (O10)
}

// A layout of `shape` within `f`, or the compact one when rng is null: a random memory order of
// the free dims, random padding between them, a random storage offset.
Tensor make_tensor(DType dt, const Shape& shape, Freedom f, Rng* rng) {
  const int r = static_cast<int>(shape.size());
  if (!rng) return Tensor(dt, shape);
  std::vector<int> order(static_cast<std::size_t>(r));  // outermost first
  std::iota(order.begin(), order.end(), 0);
  const int movable = f == Freedom::any ? r : f == Freedom::outer ? r - 1 : 0;
  for (int i = movable - 1; i > 0; --i) std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(rng->integer(0, i))]);
  Shape strides(static_cast<std::size_t>(r));
  std::int64_t running = 1;
  for (int k = r - 1; k >= 0; --k) {
    const int d = order[static_cast<std::size_t>(k)];
    strides[static_cast<std::size_t>(d)] = running;
    const bool pad = f != Freedom::offset_only && k > 0 && rng->uniform() < 0.5;
    running = running * std::max<std::int64_t>(shape[static_cast<std::size_t>(d)], 1) + (pad ? rng->integer(1, 9) : 0);
  }
  if (f == Freedom::any && r == 1 && rng->uniform() < 0.5) strides[0] = rng->integer(2, 3);
  const std::int64_t offset = rng->uniform() < 0.5 ? rng->integer(1, 7) : 0;
  return Tensor::strided(dt, shape, strides, offset);
}

void poison_element(const TensorView& v, std::span<const std::int64_t> idx) {
  // The byte pattern of Tensor::poison(): a NaN in every float dtype.
  std::memset(static_cast<std::byte*>(v.data) + v.offset_of(idx) * static_cast<std::int64_t>(v.element_size()), 0xff,
              v.element_size());
}

void poison_view(const TensorView& v) {
  for_each_element(v, [&](std::span<const std::int64_t> idx, std::int64_t) { poison_element(v, idx); });
}

// The roles values play, each with its own distribution per value mode.
enum class Role { q, k, v, a, dt_bias, A_log, b, beta_prob, g, state, ring_d, ring_k, ring_g };

struct Dist {
  enum Kind { normal, uniform, ints, two_hot, constant } kind;
  double x = 0, y = 0;  // normal: mean, stddev; uniform: [x, y); ints: [x, y] times `unit`
  double unit = 1;
};

Dist dist_for(const KdaShape& s, Role r) {
  const double inv_sqrt_k = 1.0 / std::sqrt(static_cast<double>(s.K));
  switch (s.values) {
    case KdaValues::exact:
      // Two-hot keys with beta = 1/2 keep the delta rule's gain (1 - beta |k|^2) in [0, 1/2]; every
      // other value is a small integer times a power of two, so bits grow by at most one per token.
      switch (r) {
        case Role::q: return {Dist::ints, -2, 2};
        case Role::k: case Role::ring_k: return {Dist::two_hot};
        case Role::v: return {Dist::ints, -4, 4};
        // lower_bound = 0 makes g = 0 * sigmoid(.) = 0 for any logit; without it the logit sits in
        // the softplus tail where log(1 + exp(x)) is exactly 0 in fp64 too (x < -37.4).
        case Role::a: return s.lower_bound ? Dist{Dist::ints, -3, 3} : Dist{Dist::ints, -60, -45};
        case Role::dt_bias: return {Dist::ints, -2, 2};
        case Role::A_log: return {Dist::ints, -1, 1};
        case Role::b: return {Dist::constant, 0};  // sigmoid(0) = 1/2 exactly, and in bf16
        case Role::beta_prob: return {Dist::ints, 1, 2, 0.5};
        case Role::g: case Role::ring_g: return {Dist::constant, 0};
        case Role::state: return {Dist::ints, -4, 4, 0.25};
        case Role::ring_d: return {Dist::ints, -4, 4, 0.5};
      }
      break;
    case KdaValues::typical:
      switch (r) {
        case Role::q: return {Dist::normal, 0, 1};
        // Without the in-kernel L2 norm, |k|^2 ~ 1 keeps the delta rule (I - beta k k^T)
        // contractive as normalised keys do; unit-variance raw keys would grow the state ~K-fold.
        case Role::k: return {Dist::normal, 0, s.l2norm ? 1.0 : inv_sqrt_k};
        case Role::v: return {Dist::normal, 0, 1};
        case Role::a: return {Dist::normal, 0, 1};
        case Role::dt_bias: return {Dist::uniform, -0.5, 0.5};
        case Role::A_log: return {Dist::uniform, -1, 0.5};
        case Role::b: return {Dist::normal, 0, 1.5};
        case Role::beta_prob: return {Dist::uniform, 0.05, 1};
        case Role::g: case Role::ring_g: return {Dist::uniform, -1, 0};
        // Small state entries keep long streams well inside bf16/f16 range.
        case Role::state: return {Dist::normal, 0, 0.1};
        case Role::ring_d: return {Dist::normal, 0, 0.1};
        case Role::ring_k: return {Dist::normal, 0, inv_sqrt_k};
      }
      break;
    case KdaValues::harsh:
      switch (r) {
        case Role::q: return {Dist::normal, 0, 3};
        case Role::k: return {Dist::normal, 0, s.l2norm ? 3.0 : inv_sqrt_k};
        case Role::v: return {Dist::normal, 0, 4};
        // Across the softplus threshold (x > 20 passes through) and into the tail where the literal
        // log(1 + exp(x)) is exactly 0 in fp32 (x < -16.6), kda.md A.3.
        case Role::a: return {Dist::uniform, -30, 30};
        case Role::dt_bias: return {Dist::uniform, -2, 2};
        case Role::A_log: return {Dist::uniform, -3, 1.5};
        case Role::b: return {Dist::normal, 0, 8};  // beta saturates near 0 and 1
        case Role::beta_prob: return {Dist::uniform, 0, 1};
        case Role::g: case Role::ring_g: return {Dist::uniform, -8, 0};
        case Role::state: return {Dist::normal, 0, 1};
        case Role::ring_d: return {Dist::normal, 0, 1};
        case Role::ring_k: return {Dist::normal, 0, inv_sqrt_k};
      }
      break;
  }
  throw std::logic_error("dist_for: unhandled role");
}

double draw_value(const Dist& d, Rng& rng) {
  switch (d.kind) {
    case Dist::normal: return d.x + d.y * rng.normal();
    case Dist::uniform: return rng.uniform(d.x, d.y);
    case Dist::ints: return static_cast<double>(rng.integer(static_cast<std::int64_t>(d.x), static_cast<std::int64_t>(d.y))) * d.unit;
    case Dist::constant: return d.x;
    case Dist::two_hot: break;
  }
  throw std::logic_error("draw_value: two-hot vectors are filled by fill_vector");
}

// draw_value(d, rng) for a run of draws, with the integer range's divisions done once (the same
// draws: Rng::IntRange).
auto value_drawer(const Dist& d, Rng& rng) {
  const Rng::IntRange r = d.kind == Dist::ints
                              ? Rng::int_range(static_cast<std::int64_t>(d.x), static_cast<std::int64_t>(d.y))
                              : Rng::IntRange{};
  return [&d, &rng, r] { return d.kind == Dist::ints ? static_cast<double>(rng.integer(r)) * d.unit : draw_value(d, rng); };
}

// The element offset of a multi-index (bounds-checked, as TensorView::store checks it).
std::int64_t element_offset(const TensorView& t, const std::vector<std::int64_t>& ix) {
  if (static_cast<int>(ix.size()) != t.rank) throw std::out_of_range("fill_vector: index rank differs from the tensor's");
  std::int64_t off = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (static_cast<std::uint64_t>(ix[d]) >= static_cast<std::uint64_t>(t.sizes[d]))
      throw std::out_of_range("fill_vector: index out of bounds");
    off += ix[d] * t.strides[d];
  }
  return off;
}

// Fills the `n` elements at index idx(i) with one vector of `d` (two-hot: one or two +-1 entries).
// idx(i) moves along one dimension (idx(i) = idx(0) + i * step in elements, as every caller's
// does): the values are drawn in order into a row and stored as one run, narrowed as store() would
// (issue 32 (3): an index vector and a checked store an element were 4-5% of a kda/recurrent case).
template <class Idx>
void fill_vector(const TensorView& t, std::int64_t n, Idx&& idx, const Dist& d, Rng& rng) {
  if (d.kind != Dist::two_hot) {
    if (n <= 0) return;
    thread_local std::vector<double> row;
    row.resize(static_cast<std::size_t>(n));
    if (d.kind == Dist::normal) {
      rng.normal_fill(row.data(), n);  // normal() n times, in order
      for (double& x : row) x = d.x + d.y * x;  // draw_value's
    } else {
      auto next = value_drawer(d, rng);
      for (double& x : row) x = next();
    }
    const std::int64_t off = element_offset(t, idx(0));
    const std::int64_t step = n > 1 ? element_offset(t, idx(1)) - off : 0;
    if (n > 1 && element_offset(t, idx(n - 1)) != off + (n - 1) * step)
      throw std::logic_error("fill_vector: idx(i) must move along one dimension");
    reference::elements::store_run(t, off, step, n, row.data());
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) t.store(idx(i), 0.0);
  const std::int64_t hot = n > 1 ? rng.integer(1, 2) : 1;
  const std::int64_t first = rng.integer(0, n - 1);
  t.store(idx(first), rng.uniform() < 0.5 ? -1.0 : 1.0);
  if (hot == 2) {
    const std::int64_t second = (first + rng.integer(1, n - 1)) % n;
    t.store(idx(second), rng.uniform() < 0.5 ? -1.0 : 1.0);
  }
}

void fill_all(const TensorView& t, const Dist& d, Rng& rng) {
  if (d.kind == Dist::normal) return fill_normal_rows(t, rng, [&](double x) { return d.x + d.y * x; });  // draw_value's
  fill_rows(t, value_drawer(d, rng));
}

using Ix = std::vector<std::int64_t>;

// mixed_qkv, a and b of every row: fresh values for live rows, poison for padding rows (kda.md
// B.1 item 1: they must not be read).
void fill_decode_tokens(Call& c, const KdaShape& s, std::uint64_t seed) {
  const std::int64_t H = s.H, HV = s.HV(), K = s.K, V = s.V;
  const TensorView mq = c.at("mixed_qkv").view(), a = c.at("a").view(), b = c.at("b").view();
  Rng rng(tensor_seed(seed, "tokens"));
  const Dist dq = dist_for(s, Role::q), dk = dist_for(s, Role::k), dv = dist_for(s, Role::v);
  const Dist da = dist_for(s, Role::a), db = dist_for(s, Role::b);
  for (std::int64_t r = 0; r < s.B; ++r) {
    if (s.slot[static_cast<std::size_t>(r)] < 0) {
      poison_view(mq.select(0, r));
      poison_view(a.select(0, r));
      poison_view(b.select(0, r));
      continue;
    }
    for (std::int64_t h = 0; h < H; ++h) {
      fill_vector(mq, K, [&](std::int64_t i) { return Ix{r, h * K + i}; }, dq, rng);
      fill_vector(mq, K, [&](std::int64_t i) { return Ix{r, H * K + h * K + i}; }, dk, rng);
    }
    fill_vector(mq, HV * V, [&](std::int64_t i) { return Ix{r, 2 * H * K + i}; }, dv, rng);
    fill_all(a.select(0, r), da, rng);
    fill_all(b.select(0, r), db, rng);
  }
}

void add_tensor(Call& c, const KdaShape& s, Rng* layout, const std::string& name, DType dt, const Shape& shape) {
  c.tensors.emplace(name, make_tensor(dt, shape, freedom(s.op, name), layout));
}

void build_decode(Call& c, const KdaShape& s, Rng* layout) {
  const bool replay = is_op(s, kda::kReplaySsmDecodeOp);
  const std::int64_t B = s.B, H = s.H, HV = s.HV(), K = s.K, V = s.V, S = s.slots;
  add_tensor(c, s, layout, "mixed_qkv", s.act, {B, 2 * H * K + HV * V});
  add_tensor(c, s, layout, "a", s.gate_dt, replay && s.a3d ? Shape{B, HV, K} : Shape{B, HV * K});
  add_tensor(c, s, layout, "b", s.gate_dt, {B, HV});
  add_tensor(c, s, layout, "A_log", s.params_dt, {HV});
  add_tensor(c, s, layout, "dt_bias", s.params_dt, replay && s.a3d ? Shape{HV, K} : Shape{HV * K});
  // Upstream's strided-state test uses a slot stride of HV*V*K + 257 and a non-zero offset (kda.md D.1).
  if (layout && layout->uniform() < 0.35) {
    const std::int64_t slot = HV * V * K + 257;
    c.tensors.emplace("initial_state", Tensor::strided(s.state, {S, HV, V, K}, {slot, V * K, K, 1}, 3));
  } else {
    add_tensor(c, s, layout, "initial_state", s.state, {S, HV, V, K});
  }
  add_tensor(c, s, layout, "out", s.act, {B, 1, HV, V});
  add_tensor(c, s, layout, "ssm_state_indices", s.idx_dt, {B});
  fill_decode_tokens(c, s, s.seed);
  {
    Rng rng(tensor_seed(s.seed, "params"));
    fill_all(c.at("A_log").view(), dist_for(s, Role::A_log), rng);
    fill_all(c.at("dt_bias").view(), dist_for(s, Role::dt_bias), rng);
    Rng srng(tensor_seed(s.seed, "initial_state"));
    fill_all(c.at("initial_state").view(), dist_for(s, Role::state), srng);
  }
  c.at("out").poison();
  const TensorView idx = c.at("ssm_state_indices").view();
  for (std::int64_t r = 0; r < B; ++r) idx.store_int(std::span<const std::int64_t>(&r, 1), s.slot[static_cast<std::size_t>(r)]);
  c.scalars["scale"] = s.scale;
  if (s.lower_bound) c.scalars["lower_bound"] = *s.lower_bound;
  c.flags["use_qk_l2norm_in_kernel"] = s.l2norm;
  c.written = {"out", "initial_state"};
  c.pure_outputs = {"out"};
  if (!replay) return;

  const std::int64_t L = s.L;
  add_tensor(c, s, layout, "d_cache", s.ring, {S, HV, L, V});
  add_tensor(c, s, layout, "k_cache", s.ring, {S, H, L, K});
  add_tensor(c, s, layout, "g_cache", DType::f32, {S, HV, L, K});
  add_tensor(c, s, layout, "write_pos", DType::i32, {B});
  if (s.has_force) add_tensor(c, s, layout, "force_flush", DType::i32, {B});
  const TensorView d = c.at("d_cache").view(), k = c.at("k_cache").view(), g = c.at("g_cache").view();
  // Positions at or past a row's cursor, and every ring of an unused slot, are garbage: kda.md
  // B.2.3 item 3 says they are never read (AP-K8).
  c.at("d_cache").poison();
  c.at("k_cache").poison();
  c.at("g_cache").poison();
  // The valid entries stand in for the tokens since the checkpoint: deltas, keys and gates of the
  // magnitudes real ones have, so the reconstructed state stays of the state's own magnitude.
  Rng rng(tensor_seed(s.seed, "rings"));
  const Dist dd = dist_for(s, Role::ring_d), dk = dist_for(s, Role::ring_k), dg = dist_for(s, Role::ring_g);
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t slot = s.slot[static_cast<std::size_t>(r)];
    if (slot < 0) continue;
    const std::int64_t m = s.cursor[static_cast<std::size_t>(r)];
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t hv = 0; hv < HV; ++hv) {
        fill_vector(d, V, [&](std::int64_t j) { return Ix{slot, hv, i, j}; }, dd, rng);
        fill_vector(g, K, [&](std::int64_t j) { return Ix{slot, hv, i, j}; }, dg, rng);
      }
      for (std::int64_t h = 0; h < H; ++h) fill_vector(k, K, [&](std::int64_t j) { return Ix{slot, h, i, j}; }, dk, rng);
    }
  }
  const TensorView wp = c.at("write_pos").view();
  for (std::int64_t r = 0; r < B; ++r) {
    const std::span<const std::int64_t> at(&r, 1);
    wp.store_int(at, s.cursor[static_cast<std::size_t>(r)]);
    if (s.has_force) c.at("force_flush").view().store_int(at, s.force[static_cast<std::size_t>(r)]);
  }
  if (s.beta_fp32) c.flags["beta_in_fp32"] = true;
  c.written = {"out", "initial_state", "d_cache", "k_cache", "g_cache"};
}

void build_recurrent(Call& c, const KdaShape& s, Rng* layout) {
  const std::int64_t T = s.T(), N = s.N(), H = s.H, HV = s.HV(), K = s.K, V = s.V;
  add_tensor(c, s, layout, "q", s.act, {T, H, K});
  add_tensor(c, s, layout, "k", s.act, {T, H, K});
  add_tensor(c, s, layout, "v", s.act, {T, HV, V});
  if (s.gate_g) {
    add_tensor(c, s, layout, "g", s.gate_dt, {T, HV, K});
  } else {
    add_tensor(c, s, layout, "a", s.gate_dt, {T, HV, K});
    add_tensor(c, s, layout, "dt_bias", s.params_dt, s.a3d ? Shape{HV, K} : Shape{HV * K});
    add_tensor(c, s, layout, "A_log", s.params_dt, {HV});
  }
  add_tensor(c, s, layout, "beta", s.gate_dt, {T, HV});
  if (s.has_initial) add_tensor(c, s, layout, "initial_state", s.state, {N, HV, V, K});
  if (s.has_final) add_tensor(c, s, layout, "final_state", s.final_dt, {N, HV, V, K});
  add_tensor(c, s, layout, "out", s.act, {T, HV, V});
  if (s.has_cu) add_tensor(c, s, layout, "cu_seqlens", s.cu_dt, {N + 1});

  Rng rng(tensor_seed(s.seed, "tokens"));
  const TensorView q = c.at("q").view(), k = c.at("k").view();
  const Dist dq = dist_for(s, Role::q), dk = dist_for(s, Role::k);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      fill_vector(q, K, [&](std::int64_t i) { return Ix{t, h, i}; }, dq, rng);
      fill_vector(k, K, [&](std::int64_t i) { return Ix{t, h, i}; }, dk, rng);
    }
  fill_all(c.at("v").view(), dist_for(s, Role::v), rng);
  if (s.gate_g) {
    fill_all(c.at("g").view(), dist_for(s, Role::g), rng);
  } else {
    fill_all(c.at("a").view(), dist_for(s, Role::a), rng);
    fill_all(c.at("dt_bias").view(), dist_for(s, Role::dt_bias), rng);
    fill_all(c.at("A_log").view(), dist_for(s, Role::A_log), rng);
  }
  fill_all(c.at("beta").view(), dist_for(s, s.beta_logits ? Role::b : Role::beta_prob), rng);
  if (s.has_initial) {
    Rng srng(tensor_seed(s.seed, "initial_state"));
    fill_all(c.at("initial_state").view(), dist_for(s, Role::state), srng);
  }
  if (s.has_final) c.at("final_state").poison();
  c.at("out").poison();
  if (s.has_cu) {
    const TensorView cu = c.at("cu_seqlens").view();
    std::int64_t acc = 0;
    for (std::int64_t n = 0; n <= N; ++n) {
      cu.store_int(std::span<const std::int64_t>(&n, 1), acc);
      if (n < N) acc += s.seqlens[static_cast<std::size_t>(n)];
    }
  }
  if (s.scale_given) c.scalars["scale"] = s.scale;
  if (s.lower_bound && !s.gate_g) c.scalars["lower_bound"] = *s.lower_bound;
  c.flags["use_qk_l2norm_in_kernel"] = s.l2norm;
  c.flags["beta_is_logits"] = s.beta_logits;
  c.written = {"out"};
  c.pure_outputs = {"out"};
  if (s.has_final) {
    c.written.push_back("final_state");
    c.pure_outputs.push_back("final_state");
  }
}

std::string list(const std::vector<std::int64_t>& v) {
  std::string r = "[";
  for (std::size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
  return r + "]";
}

}  // namespace

std::string_view kda_values_name(KdaValues v) noexcept {
  switch (v) {
    case KdaValues::exact: return "exact";
    case KdaValues::typical: return "typical";
    case KdaValues::harsh: return "harsh";
  }
  return "?";
}

std::string_view kda_special_name(KdaSpecial::Kind k) noexcept {
  switch (k) {
    case KdaSpecial::Kind::nan: return "nan";
    case KdaSpecial::Kind::pos_inf: return "+inf";
    case KdaSpecial::Kind::neg_inf: return "-inf";
    case KdaSpecial::Kind::neg_zero: return "-0";
    case KdaSpecial::Kind::subnormal: return "subnormal";
  }
  return "?";
}

std::uint64_t tensor_seed(std::uint64_t seed, std::string_view name) noexcept {
  std::uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

std::int64_t KdaShape::T() const { return std::accumulate(seqlens.begin(), seqlens.end(), std::int64_t{0}); }

bool KdaShape::flushes(std::int64_t b) const {
  const auto i = static_cast<std::size_t>(b);
  return slot[i] >= 0 && (cursor[i] == L - 1 || (has_force && force[i] != 0));
}

std::string KdaShape::describe() const {
  std::ostringstream os;
  os << op << " H=" << H << " G=" << G << " HV=" << HV() << " K=" << K << " V=" << V;
  if (op == kda::kRecurrentOp) {
    os << " seqlens=" << list(seqlens) << " T=" << T() << " cu=" << (has_cu ? dtype_name(cu_dt) : "none")
       << " gate=" << (gate_g ? "g" : "raw") << " beta=" << (beta_logits ? "logits" : "probs")
       << " initial=" << (has_initial ? dtype_name(state) : "none") << " final=" << (has_final ? dtype_name(final_dt) : "none");
  } else {
    os << " B=" << B << " slots=" << slots << " rows=" << list(slot) << " idx=" << dtype_name(idx_dt)
       << " state=" << dtype_name(state);
    if (op == kda::kReplaySsmDecodeOp)
      os << " L=" << L << " cursors=" << list(cursor) << " force=" << (has_force ? list(force) : "none")
         << " ring=" << dtype_name(ring) << " beta=" << (beta_fp32 ? "fp32" : "through-b") << " a=" << (a3d ? "3d" : "2d");
  }
  os << " act=" << dtype_name(act) << " gate_dt=" << dtype_name(gate_dt) << " params=" << dtype_name(params_dt)
     << " l2=" << l2norm << " lb=" << (lower_bound ? std::to_string(*lower_bound) : "none") << " scale=" << scale
     << (op == kda::kRecurrentOp && !scale_given ? "(default)" : "") << " values=" << kda_values_name(values)
     << " layout=" << (scrambled ? "scrambled" : "compact") << " seed=" << seed;
  return os.str();
}

Call build_kda_call(const KdaShape& s) {
  Call c;
  c.op = s.op;
  Rng layout(tensor_seed(s.seed, "layout"));
  Rng* lp = s.scrambled ? &layout : nullptr;
  if (is_op(s, kda::kRecurrentOp)) build_recurrent(c, s, lp);
  else build_decode(c, s, lp);
  c.description = s.describe();
  return c;
}

void inject_special(Call& c, const KdaSpecial& sp) {
  const TensorView v = c.at(sp.tensor).view();
  double value = kNaN;
  switch (sp.kind) {
    case KdaSpecial::Kind::nan: value = kNaN; break;
    case KdaSpecial::Kind::pos_inf: value = INFINITY; break;
    case KdaSpecial::Kind::neg_inf: value = -INFINITY; break;
    case KdaSpecial::Kind::neg_zero: value = -0.0; break;
    // Three units of the dtype's subnormal spacing, times a power of two that keeps it subnormal:
    // f32 2^-149, bf16 2^-133, f16 2^-24.
    case KdaSpecial::Kind::subnormal:
      value = v.dtype == DType::f16 ? std::ldexp(3.0, -24) : v.dtype == DType::bf16 ? std::ldexp(3.0, -133) : std::ldexp(3.0, -140);
      break;
  }
  v.store(sp.index, value);
}

void refill_decode_tokens(Call& c, const KdaShape& s, std::uint64_t step_seed) { fill_decode_tokens(c, s, step_seed); }

Call relayout_kda_call(const Call& c, bool scramble, std::uint64_t seed) {
  Call r = c;
  Rng rng(seed);
  for (auto& [name, t] : r.tensors) {
    Tensor n = make_tensor(t.dtype(), t.shape(), freedom(c.op, name), scramble ? &rng : nullptr);
    copy_convert(t.view(), n.view());
    t = std::move(n);
  }
  return r;
}

}  // namespace kparity::fuzz
