// The shape, dtype and row knobs of the KDA ops (campaign/explain.hpp), named as the ops' call
// descriptions name them (kda_case.cpp's KdaShape::describe): `H` (query/key heads, the grouping G
// kept, so HV follows), `HV` (value heads, H kept: the grouping G = HV / H changes), `K`, `V`, `act`,
// `gate_dt`, `params`, `state` (decode) or `initial` (kda/recurrent), `ring` (ReplaySSM), `B` (decode
// rows, or the batch rows of a dense kda/chunk call) and `padding rows` (decode rows with a negative
// slot). kda/recurrent and kda/chunk also have `seqlens` (explain_kda.cpp) and `chunk_size`
// (explain_generic.cpp).
//
// Each variant is the shrunk call with every tensor re-indexed along its axes, not a fresh draw:
// heads and rows taken starting at the first bad one (the provenance's focus) and repeated
// cyclically; V channels repeated cyclically (each V channel of the delta rule evolves on its own,
// so a copy's outputs equal its original's); new K channels 0 in q, k, the key ring and the state
// (their products vanish, so every old output stays as it was) and copies in the gates; new decode
// rows whose state slot is taken get a fresh slot holding a copy of it. A tensor the variant does
// not resize keeps its layout; a resized one keeps its storage offset and its axes' memory order
// (compact otherwise). Pure outputs are poisoned again.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "explain_knobs.hpp"
#include "kparity/core/random.hpp"
#include "kparity/fuzz/generators/kda_case.hpp"

namespace kparity::fuzz::explain_detail {
namespace {

using I = std::int64_t;

// What an axis of a KDA tensor indexes. K: channels filled with 0 when new; Kg: gate channels,
// copied when new. HVK / HVKg: a flattened [HV, K]; QKV: mixed_qkv's [q (H*K) | k (H*K) | v (HV*V)].
enum class Ax { T, B, N, S, L, one, H, HV, K, Kg, V, HVK, HVKg, QKV, none };

bool is_decode(const std::string& op) { return op == "kda/packed_decode" || op == "kda/replayssm_decode"; }

bool state_v_first(const Call& c) {
  for (const char* f : {"transpose_state_layout", "state_v_first"})
    if (auto it = c.flags.find(f); it != c.flags.end() && it->second) return true;
  return false;
}

// The axes of tensor `name` of `c` (empty: not re-indexed, e.g. cu_seqlens or chunk_kda's ignored A_log).
std::vector<Ax> axes_of(const Call& c, const std::string& name, I HV) {
  const Tensor& t = c.at(name);
  const int r = t.view().rank;
  const std::string& op = c.op;
  const auto gate_params = [&]() -> std::vector<Ax> {
    if (name == "A_log") return t.view().numel() == HV && r == 1 ? std::vector<Ax>{Ax::HV} : std::vector<Ax>{};
    if (name == "dt_bias") {
      if (r == 1 && t.view().size(0) % std::max<I>(HV, 1) == 0) return {Ax::HVKg};
      if (r == 2) return {Ax::HV, Ax::Kg};
    }
    return {};
  };
  if (name == "A_log" || name == "dt_bias") return gate_params();
  if (op == "kda/recurrent" || op == "kda/chunk") {
    std::vector<Ax> lead = op == "kda/chunk" ? std::vector<Ax>{Ax::B, Ax::T} : std::vector<Ax>{Ax::T};
    const auto with = [&](std::initializer_list<Ax> rest) {
      std::vector<Ax> a = lead;
      a.insert(a.end(), rest);
      return a;
    };
    if (name == "q" || name == "k") return with({Ax::H, Ax::K});
    if (name == "v" || name == "out") return with({Ax::HV, Ax::V});
    if (name == "g" || name == "a") return with({Ax::HV, Ax::Kg});
    if (name == "beta") return with({Ax::HV});
    if ((name == "initial_state" || name == "final_state") && r == 4) {
      if (op == "kda/chunk" && !state_v_first(c)) return {Ax::N, Ax::HV, Ax::K, Ax::V};
      return {Ax::N, Ax::HV, Ax::V, Ax::K};
    }
    return {};
  }
  if (!is_decode(op)) return {};
  if (name == "mixed_qkv") return {Ax::B, Ax::QKV};
  if (name == "a") return r == 3 ? std::vector<Ax>{Ax::B, Ax::HV, Ax::Kg} : std::vector<Ax>{Ax::B, Ax::HVKg};
  if (name == "b") return {Ax::B, Ax::HV};
  if (name == "initial_state") return {Ax::S, Ax::HV, Ax::V, Ax::K};
  if (name == "out") return {Ax::B, Ax::one, Ax::HV, Ax::V};
  if (name == "ssm_state_indices" || name == "write_pos" || name == "force_flush") return {Ax::B};
  if (name == "d_cache") return {Ax::S, Ax::HV, Ax::L, Ax::V};
  if (name == "k_cache") return {Ax::S, Ax::H, Ax::L, Ax::K};
  if (name == "g_cache") return {Ax::S, Ax::HV, Ax::L, Ax::Kg};
  return {};
}

struct Dims {
  I H = 0, HV = 0, K = 0, V = 0;
  I G() const { return H > 0 ? HV / H : 0; }
};

Dims dims_of(const Call& c) {
  Dims d;
  if (is_decode(c.op)) {
    d.HV = c.at("b").view().size(1);
    d.V = c.at("out").view().size(3);
    d.K = c.at("initial_state").view().size(3);
    const I cols = c.at("mixed_qkv").view().size(1);
    d.H = d.K > 0 ? (cols - d.HV * d.V) / (2 * d.K) : 0;
  } else {
    const TensorView q = c.at("q").view(), v = c.at("v").view();
    d.H = q.size(q.rank - 2), d.K = q.size(q.rank - 1);
    d.HV = v.size(v.rank - 2), d.V = v.size(v.rank - 1);
  }
  return d;
}

// A re-indexing: per axis kind, new index -> old index (-1: a new element, 0). Kinds left out keep
// their indices.
struct Remap {
  Dims from, to;
  std::map<Ax, std::vector<I>> map;
  bool touches(const std::vector<Ax>& axes) const {
    for (Ax a : axes) {
      if (map.count(a) || (a == Ax::Kg && map.count(Ax::K))) return true;
      if ((a == Ax::HVK || a == Ax::HVKg) && (map.count(Ax::HV) || map.count(Ax::K))) return true;
      if (a == Ax::QKV && (map.count(Ax::H) || map.count(Ax::HV) || map.count(Ax::K) || map.count(Ax::V))) return true;
    }
    return false;
  }
  I index(Ax a, I i) const {
    auto it = map.find(a);
    if (a == Ax::Kg && it == map.end()) it = map.find(Ax::K);
    if (it == map.end()) return i;
    const I j = it->second[static_cast<std::size_t>(i)];
    if (a == Ax::Kg && j < 0) return from.K > 0 ? i % from.K : -1;  // a new gate channel: a copy
    return j;
  }
  I size(Ax a, I old) const {
    auto it = map.find(a == Ax::Kg ? Ax::K : a);
    if (a == Ax::HVK || a == Ax::HVKg) return to.HV * to.K;
    if (a == Ax::QKV) return 2 * to.H * to.K + to.HV * to.V;
    return it == map.end() ? old : static_cast<I>(it->second.size());
  }
  // Old flat position of a composite axis, or -1.
  I composite(Ax a, I p) const {
    const auto pair = [&](Ax outer, Ax inner, I n_inner_new, I n_inner_old, I q) -> I {
      const I o = index(outer, q / n_inner_new), i = index(inner, q % n_inner_new);
      return o < 0 || i < 0 ? -1 : o * n_inner_old + i;
    };
    if (a == Ax::HVK) return pair(Ax::HV, Ax::K, to.K, from.K, p);
    if (a == Ax::HVKg) return pair(Ax::HV, Ax::Kg, to.K, from.K, p);
    const I hk = to.H * to.K;
    if (p < hk) return pair(Ax::H, Ax::K, to.K, from.K, p);
    if (p < 2 * hk) {
      const I j = pair(Ax::H, Ax::K, to.K, from.K, p - hk);
      return j < 0 ? -1 : from.H * from.K + j;
    }
    const I j = pair(Ax::HV, Ax::V, to.V, from.V, p - 2 * hk);
    return j < 0 ? -1 : 2 * from.H * from.K + j;
  }
};

bool plain(const Tensor& t) { return t.view().is_contiguous() && t.storage_offset() == 0; }

// A tensor of `shape` laid out as `old`: its strides and offset when the shape is unchanged, else
// its storage offset and its axes' memory order, compact.
Tensor like(const Tensor& old, DType dt, const Shape& shape) {
  if (plain(old)) return Tensor(dt, shape);
  const TensorView ov = old.view();
  if (old.shape() == shape) return Tensor::strided(dt, shape, ov.stride_vec(), old.storage_offset());
  std::vector<int> order(static_cast<std::size_t>(ov.rank));  // outermost first
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ov.strides[static_cast<std::size_t>(a)] > ov.strides[static_cast<std::size_t>(b)]; });
  Shape strides(shape.size());
  I running = 1;
  for (int k = ov.rank - 1; k >= 0; --k) {
    const auto d = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
    strides[d] = running;
    running *= std::max<I>(shape[d], 1);
  }
  return Tensor::strided(dt, shape, strides, old.storage_offset());
}

bool is_pure_output(const Call& c, const std::string& name) {
  return std::find(c.pure_outputs.begin(), c.pure_outputs.end(), name) != c.pure_outputs.end();
}

// `t` (axes `axes`) re-indexed by `m`.
Tensor remapped(const Call& c, const std::string& name, const std::vector<Ax>& axes, const Remap& m) {
  const Tensor& old = c.at(name);
  const TensorView ov = old.view();
  Shape shape;
  for (std::size_t a = 0; a < axes.size(); ++a) shape.push_back(m.size(axes[a], ov.size(static_cast<int>(a))));
  Tensor out = like(old, old.dtype(), shape);
  if (is_pure_output(c, name)) {
    out.poison();
    return out;
  }
  const TensorView nv = out.view();
  std::vector<I> j(axes.size());
  for_each_element(nv, [&](std::span<const I> i, I) {
    bool fresh = false;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const Ax x = axes[a];
      j[a] = x == Ax::HVK || x == Ax::HVKg || x == Ax::QKV ? m.composite(x, i[a]) : m.index(x, i[a]);
      fresh = fresh || j[a] < 0;
    }
    nv.store(i, fresh ? 0.0 : ov.load(j));
  });
  return out;
}

// The call re-indexed by `m`; `rows`: the decode rows' new slot indices (applied after), if any.
Call apply(const Call& c, const Remap& m, const std::vector<I>* slots = nullptr) {
  Call out = c;
  for (auto& [name, t] : out.tensors) {
    const std::vector<Ax> axes = axes_of(c, name, m.from.HV);
    if (axes.empty() || static_cast<int>(axes.size()) != t.view().rank || !m.touches(axes)) continue;
    t = remapped(c, name, axes, m);
  }
  if (slots) {
    const TensorView idx = out.at("ssm_state_indices").view();
    for (I b = 0; b < idx.numel(); ++b) idx.store_int(std::span<const I>(&b, 1), (*slots)[static_cast<std::size_t>(b)]);
  }
  out.description = describe_variant(c.description);
  return out;
}

std::vector<I> cyclic(I n, I from, I count) {
  std::vector<I> v;
  for (I i = 0; i < count; ++i) v.push_back(n > 0 ? (from + i) % n : -1);
  return v;
}

// Values near `v` among `candidates`, nearest first, `v` itself left out.
std::vector<I> nearest(I v, std::vector<I> candidates) {
  std::erase(candidates, v);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::stable_sort(candidates.begin(), candidates.end(), [v](I a, I b) { return std::llabs(a - v) < std::llabs(b - v); });
  return candidates;
}

Knob ordered(std::string name, I v) {
  Knob k;
  k.name = std::move(name);
  k.value = std::to_string(v);
  k.ordered = true;
  k.numeric = static_cast<double>(v);
  return k;
}

// Decode rows: row b's slot (negative: a padding row).
std::vector<I> slots_of(const Call& c) {
  std::vector<I> s;
  const TensorView idx = c.at("ssm_state_indices").view();
  for (I b = 0; b < idx.numel(); ++b) s.push_back(idx.load_int_flat(b));
  return s;
}

// Decode rows taken in the order `rows` gives (old row indices): a slot met again gets a new slot
// holding a copy of it, so no two live rows share one.
Call take_rows(const Call& c, const Dims& d, const std::vector<I>& rows) {
  const std::vector<I> old = slots_of(c);
  const I S = c.at("initial_state").view().size(0);
  Remap m{d, d, {}};
  std::vector<I> slot_map(static_cast<std::size_t>(S));
  std::iota(slot_map.begin(), slot_map.end(), I{0});
  std::set<I> used;
  std::vector<I> slots;
  for (I r : rows) {
    const I s = old[static_cast<std::size_t>(r)];
    if (s < 0 || s >= S || used.insert(s).second) {
      slots.push_back(s);
      continue;
    }
    slots.push_back(static_cast<I>(slot_map.size()));
    slot_map.push_back(s);
  }
  m.map[Ax::B] = rows;
  if (static_cast<I>(slot_map.size()) != S) m.map[Ax::S] = slot_map;
  return apply(c, m, &slots);
}

// The float tensors among `names` in dtype `dt` (values rounded to it, clamped to fp16's range).
Call retyped(const Call& c, const std::vector<std::string>& names, DType dt) {
  Call out = c;
  for (const auto& name : names) {
    auto it = out.tensors.find(name);
    if (it == out.tensors.end()) continue;
    const Tensor& old = c.at(name);
    Tensor t = like(old, dt, old.shape());
    if (is_pure_output(c, name)) {
      t.poison();
      it->second = std::move(t);
      continue;
    }
    const TensorView ov = old.view(), nv = t.view();
    for_each_element(nv, [&](std::span<const I> i, I) {
      const double x = ov.load(i);
      nv.store(i, dt == DType::f16 && std::isfinite(x) ? std::clamp(x, -60000.0, 60000.0) : x);
    });
    it->second = std::move(t);
  }
  out.description = describe_variant(c.description);
  return out;
}

bool is_float(DType d) { return d == DType::f32 || d == DType::bf16 || d == DType::f16; }

// A decode call whose rows are all padding, every row made live: slot b of a pool of B slots (each
// a copy of slot 0's state and rings, or zeros without one), the row's poisoned inputs replaced by
// multiples of 1/4 in [-1, 1] from `seed` (exact in every dtype), ring cursor 0, no forced flush.
Call made_live(const Call& c, std::uint64_t seed) {
  const std::vector<I> slots = slots_of(c);
  const I B = static_cast<I>(slots.size()), S = c.at("initial_state").view().size(0);
  const Dims d = dims_of(c);
  Remap m{d, d, {}};
  m.map[Ax::S] = std::vector<I>(static_cast<std::size_t>(B), S > 0 ? 0 : -1);
  Call out = apply(c, m);
  Rng rng(seed);
  for (const char* n : {"mixed_qkv", "a", "b"}) {
    const TensorView v = out.at(n).view();
    for_each_element(v, [&](std::span<const I> i, I) {
      if (std::isnan(v.load(i))) v.store(i, static_cast<double>(rng.integer(-4, 4)) / 4.0);
    });
  }
  for (I b = 0; b < B; ++b) {
    const std::span<const I> at(&b, 1);
    out.at("ssm_state_indices").view().store_int(at, b);
    for (const char* n : {"write_pos", "force_flush"})
      if (out.tensors.count(n)) out.at(n).view().store_int(at, 0);
  }
  return out;
}

// ReplaySSM's `flush rows` (kda.md B.2.2: a live row flushes when its cursor is L - 1 or its
// force_flush is nonzero; else it appends): "all" forces every live row to flush (force_flush 1,
// the tensor added when the call has none), "none" makes every live row append (force 0, cursor
// at most L - 2: fewer ring entries, all of them valid; a ring of length 1 grows to 2).
std::optional<Knob> flush_knob(const Call& call, const std::vector<I>& slots) {
  const I B = static_cast<I>(slots.size());
  const I L = call.at("d_cache").view().size(2);
  const TensorView wp = call.at("write_pos").view();
  const bool has_force = call.tensors.count("force_flush") != 0;
  I live = 0, flushing = 0;
  for (I b = 0; b < B; ++b) {
    if (slots[static_cast<std::size_t>(b)] < 0) continue;
    ++live;
    const bool forced = has_force && call.at("force_flush").view().load_int_flat(b) != 0;
    flushing += wp.load_int_flat(b) == L - 1 || forced ? 1 : 0;
  }
  if (live == 0) return std::nullopt;
  Knob k{"flush rows", flushing == live ? "all" : flushing == 0 ? "none" : "some", false, 0, {}};
  const auto base = std::make_shared<const Call>(call);
  if (flushing < live)
    k.trials.push_back({"all", [base, slots, B]() -> std::optional<Call> {
                          Call c = *base;
                          if (!c.tensors.count("force_flush")) c.tensors.emplace("force_flush", Tensor(DType::i32, {B}));
                          const TensorView f = c.at("force_flush").view();
                          for (I b = 0; b < B; ++b)
                            if (slots[static_cast<std::size_t>(b)] >= 0) f.store_int(std::span<const I>(&b, 1), 1);
                          c.description = describe_variant(base->description);
                          return c;
                        }});
  if (flushing > 0)
    k.trials.push_back({"none", [base, slots, B, L]() -> std::optional<Call> {
                          // A ring of one entry flushes on every step: the rings grow to two (the
                          // new position past every cursor, never read).
                          Call c = L >= 2 ? *base : [&] {
                            const Dims d = dims_of(*base);
                            Remap m{d, d, {}};
                            m.map[Ax::L] = {0, -1};
                            return apply(*base, m);
                          }();
                          const I L2 = std::max<I>(L, 2);
                          const TensorView w = c.at("write_pos").view();
                          for (I b = 0; b < B; ++b) {
                            if (slots[static_cast<std::size_t>(b)] < 0) continue;
                            const std::span<const I> at(&b, 1);
                            w.store_int(at, std::min(w.load_int(at), L2 - 2));
                            if (c.tensors.count("force_flush")) c.at("force_flush").view().store_int(at, 0);
                          }
                          c.description = describe_variant(base->description);
                          return c;
                        }});
  if (k.trials.empty()) return std::nullopt;
  return k;
}

}  // namespace

std::vector<Knob> kda_shape_knobs(const Call& call, std::uint64_t seed, const Focus& focus) {
  std::vector<Knob> out;
  if (call.op.rfind("kda/", 0) != 0) return out;
  const Dims d = dims_of(call);
  if (d.H <= 0 || d.HV <= 0 || d.HV % d.H != 0 || d.K <= 0 || d.V <= 0) return out;
  const auto base = std::make_shared<const Call>(call);
  const I G = d.G();
  const I hv0 = std::clamp<I>(focus.head, 0, d.HV - 1), h0 = hv0 / G, r0 = hv0 % G;
  // H, the grouping kept: key head i takes old key head h0 + i (cyclic) with its G value heads.
  // Ordered knobs try the neighbours of the shrunk value, 1 and 2x: each variant is a run of the
  // implementation, and the step is to cost no more than the shrink before it.
  {
    Knob k = ordered("H", d.H);
    for (I v : nearest(d.H, {1, std::max<I>(d.H - 1, 1), d.H + 1, 2 * d.H})) {
      k.trials.push_back({std::to_string(v), [base, d, v, h0, G]() -> std::optional<Call> {
                            Remap m{d, {v, v * G, d.K, d.V}, {}};
                            m.map[Ax::H] = cyclic(d.H, h0, v);
                            std::vector<I> hv;
                            for (I h : m.map[Ax::H])
                              for (I r = 0; r < G; ++r) hv.push_back(h * G + r);
                            m.map[Ax::HV] = hv;
                            return apply(*base, m);
                          }});
    }
    out.push_back(std::move(k));
  }
  // HV, H kept: each key head's value heads taken from the focus's place in its group, cyclic.
  {
    Knob k = ordered("HV", d.HV);
    std::vector<I> cand = {d.H, d.H * std::max<I>(G / 2, 1), d.H * G * 2};  // no grouping, half, twice
    for (I v : nearest(d.HV, cand)) {
      const I g2 = v / d.H;
      k.trials.push_back({std::to_string(v), [base, d, g2, r0, G]() -> std::optional<Call> {
                            Remap m{d, {d.H, d.H * g2, d.K, d.V}, {}};
                            std::vector<I> hv;
                            for (I h = 0; h < d.H; ++h)
                              for (I r = 0; r < g2; ++r) hv.push_back(h * G + (r0 + r) % G);
                            m.map[Ax::HV] = hv;
                            return apply(*base, m);
                          }});
    }
    out.push_back(std::move(k));
  }
  // K: the first channels kept; new ones 0 where they multiply (q, k, state), copies in the gates.
  {
    Knob k = ordered("K", d.K);
    for (I v : nearest(d.K, {std::max<I>(d.K / 2, 1), 2 * d.K})) {
      k.trials.push_back({std::to_string(v), [base, d, v]() -> std::optional<Call> {
                            Remap m{d, {d.H, d.HV, v, d.V}, {}};
                            std::vector<I> map;
                            for (I j = 0; j < v; ++j) map.push_back(j < d.K ? j : -1);
                            m.map[Ax::K] = map;
                            return apply(*base, m);
                          }});
    }
    out.push_back(std::move(k));
  }
  // V: channels repeated cyclically.
  {
    Knob k = ordered("V", d.V);
    for (I v : nearest(d.V, {std::max<I>(d.V / 2, 1), 2 * d.V})) {
      k.trials.push_back({std::to_string(v), [base, d, v]() -> std::optional<Call> {
                            Remap m{d, {d.H, d.HV, d.K, v}, {}};
                            m.map[Ax::V] = cyclic(d.V, 0, v);
                            return apply(*base, m);
                          }});
    }
    out.push_back(std::move(k));
  }
  // Dtypes, by the description's names: each group's tensors that exist and are floats.
  const bool decode = is_decode(call.op);
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  groups.push_back({"act", decode ? std::vector<std::string>{"mixed_qkv", "out"} : std::vector<std::string>{"q", "k", "v", "out"}});
  groups.push_back({"gate_dt", decode ? std::vector<std::string>{"a", "b"}
                               : call.op == "kda/chunk" ? std::vector<std::string>{"g", "beta"}
                                                       : std::vector<std::string>{"g", "a", "beta"}});
  groups.push_back({"params", {"A_log", "dt_bias"}});
  if (decode) groups.push_back({"state", {"initial_state"}});
  if (call.op == "kda/recurrent") groups.push_back({"initial", {"initial_state"}});
  if (call.op == "kda/replayssm_decode") groups.push_back({"ring", {"d_cache", "k_cache"}});
  for (auto& [name, members] : groups) {
    std::vector<std::string> present;
    DType now = DType::f32;
    bool mixed = false;
    for (const auto& n : members) {
      auto it = call.tensors.find(n);
      if (it == call.tensors.end() || !is_float(it->second.dtype()) || axes_of(call, n, d.HV).empty()) continue;
      if (!present.empty() && it->second.dtype() != now) mixed = true;
      now = it->second.dtype();
      present.push_back(n);
    }
    // The gate group of kda/recurrent: beta may be fp32 beside a 16-bit gate; the gate's dtype names it.
    if (present.empty() || (mixed && name != "gate_dt")) continue;
    Knob k{name, std::string(dtype_name(now)), false, 0, {}};
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      if (dt == now) continue;
      k.trials.push_back({std::string(dtype_name(dt)), [base, present, dt]() -> std::optional<Call> {
                            return retyped(*base, present, dt);
                          }});
    }
    out.push_back(std::move(k));
  }
  // The layout as the description names it (layout=compact|scrambled): every tensor in a layout the
  // op accepts, by the generator's own relayout (kda_case.hpp), compact or scrambled.
  {
    bool scrambled = false;
    for (const auto& [name, t] : call.tensors)
      if (!is_pure_output(call, name) && !plain(t)) scrambled = true;
    Knob k{"layout", scrambled ? "scrambled" : "compact", false, 0, {}};
    k.trials.push_back({scrambled ? "compact" : "scrambled", [base, scrambled, seed]() -> std::optional<Call> {
                          // A scramble can draw the compact layout for every tensor: a few seeds.
                          for (std::uint64_t s = 0; s < 4; ++s) {
                            Call c = relayout_kda_call(*base, !scrambled, seed + s);
                            for (const auto& n : c.pure_outputs) c.at(n).poison();
                            c.description = describe_variant(base->description);
                            bool any = false;
                            for (const auto& [name, t] : c.tensors) any = any || !plain(t);
                            if (scrambled || any) return c;
                          }
                          return std::nullopt;
                        }});
    out.push_back(std::move(k));
  }
  // Rows: decode rows, or a dense kda/chunk call's batch rows (each its own sequence and state row).
  if (decode) {
    const std::vector<I> slots = slots_of(call);
    const I B = static_cast<I>(slots.size());
    if (B > 0) {
      const I b0 = std::clamp<I>(focus.row, 0, B - 1);
      Knob k = ordered("B", B);
      for (I v : nearest(B, {1, std::max<I>(B - 1, 1), B + 1, 2 * B}))
        k.trials.push_back({std::to_string(v), [base, d, B, b0, v]() -> std::optional<Call> {
                              return take_rows(*base, d, cyclic(B, b0, v));
                            }});
      out.push_back(std::move(k));
      const I padding = std::count_if(slots.begin(), slots.end(), [](I s) { return s < 0; });
      Knob p{"padding rows", padding > 0 ? "yes" : "no", false, 0, {}};
      if (padding == B) {
        // Every row padding: each made live, with a slot of its own and finite inputs.
        p.trials.push_back({"no", [base, seed]() -> std::optional<Call> { return made_live(*base, seed); }});
      } else if (padding > 0) {
        std::vector<I> live;
        for (I b = 0; b < B; ++b)
          if (slots[static_cast<std::size_t>(b)] >= 0) live.push_back(b);
        p.trials.push_back({"no", [base, d, live]() -> std::optional<Call> { return take_rows(*base, d, live); }});
      } else if (padding == 0) {
        // A padding row after the focus row: its inputs a copy of the focus row's, its slot -1.
        p.trials.push_back({"yes", [base, d, B, b0]() -> std::optional<Call> {
                              std::vector<I> rows(static_cast<std::size_t>(B));
                              std::iota(rows.begin(), rows.end(), I{0});
                              rows.push_back(b0);
                              Call c = take_rows(*base, d, rows);
                              const I last = B;
                              c.at("ssm_state_indices").view().store_int(std::span<const I>(&last, 1), -1);
                              for (const char* n : {"write_pos", "force_flush"})
                                if (c.tensors.count(n)) c.at(n).view().store_int(std::span<const I>(&last, 1), 0);
                              return c;
                            }});
      }
      if (!p.trials.empty()) out.push_back(std::move(p));
      if (call.op == "kda/replayssm_decode") {
        if (auto f = flush_knob(call, slots)) out.push_back(std::move(*f));
      }
    }
  } else if ((call.op == "kda/recurrent" || call.op == "kda/chunk") && call.tensors.count("cu_seqlens")) {
    // Varlen: the sequences (N, as the buckets name it), each with its tokens and its state rows: the
    // v sequences that end with the first bad one (cyclic), so what comes before it (the offsets a
    // kernel accumulates) shrinks or grows and the bad one stays last.
    const TensorView cu = call.at("cu_seqlens").view();
    const I N = cu.numel() - 1;
    if (N > 0) {
      std::vector<I> bos, len;
      for (I n = 0; n < N; ++n) bos.push_back(cu.load_int_flat(n)), len.push_back(cu.load_int_flat(n + 1) - cu.load_int_flat(n));
      const I s0 = std::clamp<I>(focus.row, 0, N - 1);
      Knob k = ordered("N", N);
      for (I v : nearest(N, {1, std::max<I>(N - 1, 1), N + 1, 2 * N}))
        k.trials.push_back({std::to_string(v), [base, d, N, s0, v, bos, len]() -> std::optional<Call> {
                              Remap m{d, d, {}};
                              m.map[Ax::N] = cyclic(N, ((s0 - v + 1) % N + N) % N, v);
                              std::vector<I> tokens, lens;
                              for (I n : m.map[Ax::N]) {
                                lens.push_back(len[static_cast<std::size_t>(n)]);
                                for (I t = 0; t < len[static_cast<std::size_t>(n)]; ++t) tokens.push_back(bos[static_cast<std::size_t>(n)] + t);
                              }
                              m.map[Ax::T] = tokens;
                              Call c = apply(*base, m);
                              for (const char* name : {"cu_seqlens", "cu_seqlens_cpu"}) {
                                if (!c.tensors.count(name)) continue;
                                const Tensor& old = base->at(name);
                                Tensor t = like(old, old.dtype(), {v + 1});
                                I acc = 0;
                                for (I n = 0; n <= v; ++n) {
                                  t.view().store_int(std::span<const I>(&n, 1), acc);
                                  if (n < v) acc += lens[static_cast<std::size_t>(n)];
                                }
                                c.tensors[name] = std::move(t);
                              }
                              return c;
                            }});
      out.push_back(std::move(k));
    }
  } else if (call.op == "kda/chunk" && !call.tensors.count("cu_seqlens")) {
    const I B = call.at("q").view().size(0);
    if (B > 0) {
      const I b0 = std::clamp<I>(focus.row, 0, B - 1);
      Knob k = ordered("B", B);
      for (I v : nearest(B, {1, std::max<I>(B - 1, 1), B + 1}))
        k.trials.push_back({std::to_string(v), [base, d, B, b0, v]() -> std::optional<Call> {
                              Remap m{d, d, {}};
                              m.map[Ax::B] = cyclic(B, b0, v);
                              m.map[Ax::N] = m.map[Ax::B];
                              return apply(*base, m);
                            }});
      out.push_back(std::move(k));
    }
  }
  return out;
}

}  // namespace kparity::fuzz::explain_detail
