#include "kparity/fuzz/generators/kda_gen.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <rapidcheck.h>
#include <set>

#include "kparity/core/format.hpp"
#include "kparity/core/random.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/generators/pins.hpp"
#include "kparity/fuzz/generators/presets.hpp"
#include "kparity/judge/floors.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

rc::Gen<I> between(I lo, I hi) { return uniform_int(lo, hi); }

// Weighted choice that shrinks toward the first item (rc::gen::weightedElement does not shrink).
template <class T>
T pick(std::vector<std::pair<int, T>> items) {
  int total = 0;
  for (const auto& [w, v] : items) total += w;
  I r = *between(0, total - 1);
  for (const auto& [w, v] : items) {
    if (r < w) return v;
    r -= w;
  }
  return items.back().second;
}

bool chance(int percent) { return pick<bool>({{100 - percent, false}, {percent, true}}); }

// One value of a pinned list (pins.hpp), shrinking toward the first.
template <class T>
T pinned(const std::vector<T>& values) {
  std::vector<std::pair<int, T>> items;
  for (const T& v : values) items.emplace_back(1, v);
  return pick<T>(std::move(items));
}

// Overwrites the drawn heads, head sizes and dtypes with pinned ones (pins.hpp).
void apply_pins(const ShapePins& p, KdaShape& s) {
  if (!p.H.empty()) s.H = pinned(p.H);
  if (!p.HV.empty()) {
    std::vector<I> fit;  // value-head counts that are whole groups of the query heads
    for (I hv : p.HV)
      if (hv % s.H == 0) fit.push_back(hv);
    if (fit.empty()) fit.push_back(s.H);  // an unpinned H that no pinned HV divides: no grouping
    s.G = pinned(fit) / s.H;
  }
  if (!p.K.empty()) s.K = pinned(p.K);
  if (!p.V.empty()) s.V = pinned(p.V);
  if (!p.act.empty()) {
    s.act = pinned(p.act);
    if (s.gate_dt != DType::f32) s.gate_dt = s.act;  // the gate follows the activations or is fp32
  }
  if (!p.state.empty()) s.state = pinned(p.state);
  if (!p.params.empty()) s.params_dt = pinned(p.params);
}

// Buckets are noted once each per draw.
class Notes {
 public:
  void add(std::string b) { set_.insert(std::move(b)); }
  ~Notes() {
    for (const auto& b : set_) note_bucket(b);
  }

 private:
  std::set<std::string> set_;
};

std::string dt(DType t) { return std::string(dtype_name(t)); }

// Tile edges the kernels care about: ring lengths around cache_block changes (16, 32; kda.md
// B.2.12), sequence lengths around 16/32/64-token tiles.
// Arrays, not vectors: kda_specs() may run during another file's static initialisation.
constexpr I kRingEdges[] = {1, 2, 4, 15, 16, 17, 31, 32, 33};
constexpr I kSeqEdges[] = {15, 16, 17, 31, 32, 33, 63, 64, 65};

void draw_common(KdaShape& s, const GenConfig& cfg, const KdaDrawOptions& o, Notes& n) {
  using V = KdaValues;
  s.values = o.values ? *o.values : pick<V>({{2, V::exact}, {5, V::typical}, {2, V::harsh}});
  s.H = *between(1, cfg.large ? 4 : 3);
  s.G = pick<I>({{3, 1}, {2, 2}, {2, 4}, {1, 8}});
  const auto head_dim = [&] {
    if (!cfg.large) return pick<I>({{4, 16}, {2, 32}, {1, 64}});
    return pick<I>({{1, 16}, {1, 32}, {2, 64}, {4, 128}, {2, 256}});
  };
  s.K = head_dim();
  s.V = pick<bool>({{3, true}, {2, false}}) ? s.K : head_dim();
  s.act = pick<DType>({{1, DType::f32}, {3, DType::bf16}, {1, DType::f16}});
  s.state = pick<DType>({{2, DType::f32}, {2, DType::bf16}, {1, DType::f16}});
  s.gate_dt = pick<bool>({{3, true}, {1, false}}) ? s.act : DType::f32;
  // Upstream keeps A_log/dt_bias in fp32 (a 16-bit copy is a warning, C.3 O7); the kernels take both.
  s.params_dt = pick<DType>({{6, DType::f32}, {1, DType::bf16}});
  if (const KdaPreset* p = kda_preset(cfg)) apply_kda_preset(*p, s);  // a real model's heads and dtypes
  if (const ShapePins* p = pins_for(cfg, "kda")) apply_pins(*p, s);   // the compile classes asked for
  if (s.values == V::exact) {
    s.l2norm = false;  // the +1e-6 of the norm makes normalised values inexact (testing guide 1.4)
    s.lower_bound = pick<bool>({{1, true}, {1, false}}) ? std::optional<double>(0.0) : std::nullopt;
    s.scale = pick<double>({{1, 0.25}, {1, 0.125}});
  } else {
    s.l2norm = chance(60);
    s.lower_bound = pick<std::optional<double>>({{3, std::nullopt}, {3, -5.0}, {1, -1.0}, {1, -12.0}});
    s.scale = pick<double>({{4, 1.0 / std::sqrt(static_cast<double>(s.K))}, {1, 1.0}, {1, 0.0625}});
  }
  s.scrambled = o.scrambled ? *o.scrambled : chance(50);
  if (const ShapePins* p = pins_for(cfg, "kda"); p && p->compact) s.scrambled = false;
  s.seed = *rc::gen::arbitrary<std::uint64_t>();

  n.add("values=" + std::string(kda_values_name(s.values)));
  n.add("gqa=" + std::to_string(s.G));
  n.add(s.HV() > 12 ? "HV>12" : "HV<=12");  // the small-head configuration threshold (kda.md B.2.12)
  n.add(s.K == s.V ? "K=V" : "K!=V");
  n.add("K=" + std::to_string(s.K));
  n.add("V=" + std::to_string(s.V));
  n.add("act=" + dt(s.act));
  n.add("gate_dt=" + dt(s.gate_dt));
  n.add("params=" + dt(s.params_dt));
  n.add(s.l2norm ? "l2norm=on" : "l2norm=off");
  n.add(!s.lower_bound ? "gate=softplus" : *s.lower_bound == 0.0 ? "gate=bounded(0)" : "gate=bounded");
  if (s.scrambled) n.add("layout=scrambled");
  else n.add("layout=compact");
}

void draw_decode(KdaShape& s, const GenConfig& cfg, Notes& n) {
  const bool replay = s.op == kda::kReplaySsmDecodeOp;
  // Large calls keep the state pool near 4 Mi elements (16 MiB in fp32) so a CPU oracle run of a
  // kernel-sized case stays well under a second.
  const I per_slot = s.HV() * s.V * s.K;
  const I cap = kda_preset(cfg) ? kda_preset(cfg)->max_batch
                : cfg.large      ? std::clamp<I>(4 * 1024 * 1024 / per_slot - 2, 1, 16)
                                 : 8;
  // An empty batch is legal for the packed decode (ReplaySSM rejects it, C.3 O15).
  s.B = !replay && chance(4) ? 0 : *between(1, cap);
  const auto padding = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(s.B),
                                                              rc::gen::map(between(0, 99), [](I x) { return x >= 80 ? 1 : 0; }));
  const I unused = *between(0, 2);
  s.idx_dt = pick<DType>({{5, DType::i32}, {1, DType::i64}});
  I live = 0;
  for (int p : padding) live += p ? 0 : 1;
  s.slots = std::max<I>(live + unused, 1);
  // Distinct slots (shared ones race upstream, C.3 O3) in a seed-driven order; padding rows get -1
  // or another negative (every negative slot is padding, B.1 item 1).
  std::vector<I> pool(static_cast<std::size_t>(s.slots));
  std::iota(pool.begin(), pool.end(), I{0});
  Rng rng(tensor_seed(s.seed, "slots"));
  for (std::size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[static_cast<std::size_t>(rng.integer(0, static_cast<I>(i) - 1))]);
  std::size_t next = 0;
  s.slot.clear();
  for (int p : padding) s.slot.push_back(p ? pick<I>({{3, -1}, {1, -2}, {1, -7}}) : pool[next++]);

  n.add(s.B == 0 ? "B=0" : s.B == 1 ? "B=1" : "B>1");
  n.add("state=" + dt(s.state));
  n.add("indices=" + dt(s.idx_dt));
  if (live < s.B) n.add("padding-row");
  if (live == 0 && s.B > 0) n.add("all-padding");
  for (I v : s.slot)
    if (v < -1) n.add("padding<-1");
  if (s.slots > live) n.add("unused-slot");
  if (!replay) return;

  std::vector<std::pair<int, I>> lengths = {{2, 1}, {1, 2}, {1, 3}, {3, 4}, {1, 8}, {1, 15}, {2, 16}, {1, 17}};
  if (cfg.large) lengths.insert(lengths.end(), {{2, 31}, {2, 32}, {2, 33}});
  s.L = pick<I>(lengths);
  if (const KdaPreset* p = kda_preset(cfg); p && !p->ring_lengths.empty())
    s.L = p->ring_lengths[static_cast<std::size_t>(*between(0, static_cast<I>(p->ring_lengths.size()) - 1))];
  if (const ShapePins* p = pins_for(cfg, "kda"); p && !p->L.empty()) s.L = pinned(p->L);
  s.has_force = chance(60);
  s.beta_fp32 = chance(35);
  s.a3d = chance(50);
  s.ring = pick<DType>({{3, s.act}, {1, DType::f32}, {1, DType::bf16}, {1, DType::f16}});
  if (const ShapePins* p = pins_for(cfg, "kda"); p && !p->ring.empty()) s.ring = pinned(p->ring);
  enum Cursor { zero, last, second_last, mid };
  s.cursor.clear();
  s.force.clear();
  for (I r = 0; r < s.B; ++r) {
    if (s.slot[static_cast<std::size_t>(r)] < 0) {
      // Never read (B.2.3 item 1): out of range on purpose, which the deep contract skips too.
      s.cursor.push_back(pick<I>({{1, 0}, {1, -3}, {1, s.L}, {1, s.L + 5}}));
      s.force.push_back(pick<I>({{1, 0}, {1, 1}, {1, 7}}));
      continue;
    }
    const Cursor k = pick<Cursor>({{3, zero}, {3, last}, {1, second_last}, {3, mid}});
    const I frac = *between(0, 99);
    I c = 0;
    if (k == last) c = s.L - 1;
    else if (k == second_last) c = std::max<I>(s.L - 2, 0);
    else if (k == mid) c = s.L >= 3 ? 1 + frac * (s.L - 2) / 100 : 0;
    s.cursor.push_back(c);
    // Nonzero means flush (B.2.2); values other than 1 draw a C.3 O5 warning, never an error.
    s.force.push_back(s.has_force ? pick<I>({{12, 0}, {7, 1}, {1, 2}}) : 0);
  }

  for (I e : kRingEdges)
    if (s.L == e) n.add("L=" + std::to_string(e));
  n.add("ring=" + dt(s.ring));
  n.add(s.beta_fp32 ? "beta=fp32" : "beta=through-b");
  n.add(s.a3d ? "a=3d" : "a=2d");
  if (!s.has_force) n.add("force=absent");
  std::set<I> live_cursors;
  for (I r = 0; r < s.B; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (s.slot[i] < 0) {
      if (s.cursor[i] < 0 || s.cursor[i] >= s.L) n.add("padding-garbage-cursor");
      continue;
    }
    const I c = s.cursor[i];
    live_cursors.insert(c);
    if (c == 0) n.add("cursor=0");
    if (c == s.L - 1) n.add("cursor=L-1");
    if (s.L >= 2 && c == s.L - 2) n.add("cursor=L-2");
    if (c > 0 && c < s.L - 2) n.add("cursor=mid");
    if (c >= 2) n.add("ring-entries>=2");
    const bool forced = s.has_force && s.force[i] != 0;
    if (forced && c < s.L - 1) n.add(c == 0 ? "forced-flush-at-0" : "forced-flush-mid");
    if (s.has_force && s.force[i] == 2) n.add("force=2");
    if (!s.flushes(r)) n.add("append-row");
  }
  if (live_cursors.size() > 1) n.add("divergent-cursors");
}

void draw_recurrent(KdaShape& s, const GenConfig& cfg, const KdaDrawOptions& o, Notes& n) {
  // One sequence half of the time (the decode-like and single-token prefill cases), else varlen.
  I N = pick<bool>({{1, true}, {1, false}}) ? 1 : *between(2, cfg.large ? 6 : 3);
  if (const KdaPreset* p = kda_preset(cfg)) N = std::min(N, p->max_sequences);
  std::vector<std::pair<int, I>> lengths = {{1, 0}, {2, 1}, {1, 2}, {2, -1}, {1, 15}, {2, 16}, {1, 17}};
  if (cfg.large) lengths.insert(lengths.end(), {{1, 31}, {1, 32}, {1, 33}, {1, 63}, {1, 64}, {1, 65}});
  s.seqlens.clear();
  for (I i = 0; i < N; ++i) {
    const I len = pick<I>(lengths);
    s.seqlens.push_back(len >= 0 ? len : *between(3, 8));  // -1: a plain short sequence
  }
  if (const KdaPreset* p = kda_preset(cfg); p && !p->seq_lengths.empty())  // a preset's few tokens
    for (I& len : s.seqlens) len = std::min(len, *std::max_element(p->seq_lengths.begin(), p->seq_lengths.end()));
  if (s.values == KdaValues::exact) {
    // With beta = 1/2 every token adds a bit to the touched state entries; eight tokens keep the
    // readout (K terms of state x q x scale) inside fp32's 24 bits, so the run stays exact.
    for (I& len : s.seqlens) len = std::min<I>(len, 8);
  }
  if (cfg.large) {
    // About 32 Mi state-entry updates per call, so the CPU oracle of a kernel-sized case stays
    // around a second: long sequences only with small heads.
    const I per_token = s.HV() * s.V * s.K;
    const I longest = std::max<I>(1, 32 * 1024 * 1024 / per_token / N);
    for (I& len : s.seqlens) len = std::min(len, longest);
  }
  s.has_cu = N > 1 || chance(70);
  s.cu_dt = pick<DType>({{4, DType::i32}, {1, DType::i64}});
  s.gate_g = !o.packed_compatible && chance(35);
  s.beta_logits = o.packed_compatible || chance(60);
  s.has_initial = chance(80);
  s.has_final = chance(80);
  s.final_dt = pick<bool>({{3, true}, {1, false}}) ? DType::f32 : s.state;
  s.scale_given = s.values == KdaValues::exact || chance(60);
  if (!s.scale_given) s.scale = 1.0 / std::sqrt(static_cast<double>(s.K));  // the op's default (FLA)
  s.a3d = chance(50);

  const I T = s.T();
  n.add(T == 0 ? "T=0" : T == 1 ? "T=1" : "T>1");
  n.add(N == 1 ? "N=1" : "N>1");
  for (I len : s.seqlens) {
    if (len == 0) n.add("empty-seq");
    for (I e : kSeqEdges)
      if (len == e) n.add("seqlen=" + std::to_string(e));
  }
  n.add(s.has_cu ? "cu_seqlens=" + dt(s.cu_dt) : "cu_seqlens=absent");
  n.add(s.gate_g ? "gate=g" : s.a3d ? "dt_bias=2d" : "dt_bias=1d");
  n.add(s.beta_logits ? "beta=logits" : "beta=probs");
  n.add(s.has_initial ? "state=" + dt(s.state) : "initial_state=absent");
  n.add(s.has_final ? "final=" + dt(s.final_dt) : "final_state=absent");
  if (!s.scale_given) n.add("scale=default");
}

void note_layout(const Call& c, const KdaShape& s, Notes& n) {
  for (const auto& [name, t] : c.tensors) {
    const TensorView v = t.view();
    if (t.storage_offset() > 0) n.add("storage-offset");
    if (v.is_contiguous()) continue;
    if (name == "initial_state") {
      n.add("strided-state");
      if (v.strides[0] == s.HV() * s.V * s.K + 257 && v.strides[1] == s.V * s.K && v.strides[2] == s.K)
        n.add("state-slot-stride+257");
      if (!(v.strides[1] >= v.strides[2] && v.strides[0] >= v.strides[1])) n.add("permuted-state");
    } else if (name == "mixed_qkv" || name == "q" || name == "k" || name == "v") {
      n.add("strided-activations");
    } else if (name == "d_cache" || name == "k_cache" || name == "g_cache") {
      n.add("strided-rings");
    } else if (name == "out" || name == "final_state") {
      n.add("strided-outputs");
    }
  }
}

// Special values (testing guide 2.6): one element of one input. NaN anywhere the op reads; +-Inf
// only into inputs the recurrence uses linearly (q, k, v, state, d/k rings), where it must come out
// non-finite (in the gate and beta an infinity saturates to a finite decay instead); -0 and
// subnormals anywhere.
std::optional<KdaSpecial> draw_special(const KdaShape& s, Call& c, Notes& n) {
  using Kind = KdaSpecial::Kind;
  const Kind kind = pick<Kind>({{3, Kind::nan}, {1, Kind::pos_inf}, {1, Kind::neg_inf}, {2, Kind::neg_zero}, {2, Kind::subnormal}});
  const bool inf = kind == Kind::pos_inf || kind == Kind::neg_inf;
  Rng rng(tensor_seed(s.seed, "special"));
  const bool recurrent = s.op == kda::kRecurrentOp;
  std::vector<std::string> targets;
  std::vector<I> live_rows, ring_rows;
  if (recurrent) {
    for (const char* name : {"q", "k", "v", "initial_state"})
      if (c.tensors.count(name) && c.at(name).numel() > 0) targets.push_back(name);
    if (!inf)
      for (const char* name : {"beta", "g", "a", "dt_bias", "A_log"})
        if (c.tensors.count(name) && c.at(name).numel() > 0) targets.push_back(name);
  } else {
    for (I r = 0; r < s.B; ++r) {
      if (s.slot[static_cast<std::size_t>(r)] < 0) continue;
      live_rows.push_back(r);
      if (s.op == kda::kReplaySsmDecodeOp && s.cursor[static_cast<std::size_t>(r)] > 0) ring_rows.push_back(r);
    }
    if (!live_rows.empty()) {
      targets.push_back("mixed_qkv");
      if (!inf) targets.insert(targets.end(), {"a", "b", "A_log", "dt_bias"});
    }
    targets.push_back("initial_state");
    if (!ring_rows.empty()) {
      targets.insert(targets.end(), {"d_cache", "k_cache"});
      if (!inf) targets.push_back("g_cache");
    }
  }
  if (targets.empty()) return std::nullopt;  // a recurrent call with T = 0 and no state: nothing is read
  KdaSpecial sp;
  sp.kind = kind;
  sp.tensor = targets[static_cast<std::size_t>(*between(0, static_cast<I>(targets.size()) - 1))];
  const TensorView v = c.at(sp.tensor).view();
  const auto any_index = [&] {
    std::vector<I> idx;
    for (int d = 0; d < v.ndim(); ++d) idx.push_back(rng.integer(0, v.sizes[static_cast<std::size_t>(d)] - 1));
    return idx;
  };
  const auto one_of = [&](const std::vector<I>& xs) { return xs[static_cast<std::size_t>(rng.integer(0, static_cast<I>(xs.size()) - 1))]; };
  if (recurrent) {
    sp.index = any_index();
  } else if (sp.tensor == "initial_state") {
    std::vector<I> unused;
    for (I slot = 0; slot < s.slots; ++slot)
      if (std::find(s.slot.begin(), s.slot.end(), slot) == s.slot.end()) unused.push_back(slot);
    sp.index = any_index();
    if (live_rows.empty() || (!unused.empty() && rng.uniform() < 0.3)) {
      sp.index[0] = unused.empty() ? sp.index[0] : one_of(unused);
      sp.referenced = false;
    } else {
      sp.index[0] = s.slot[static_cast<std::size_t>(one_of(live_rows))];
    }
  } else if (sp.tensor == "A_log" || sp.tensor == "dt_bias") {
    sp.index = any_index();
  } else if (sp.tensor == "d_cache" || sp.tensor == "k_cache" || sp.tensor == "g_cache") {
    const I r = one_of(ring_rows);
    sp.index = any_index();
    sp.index[0] = s.slot[static_cast<std::size_t>(r)];
    sp.index[2] = rng.integer(0, s.cursor[static_cast<std::size_t>(r)] - 1);  // a valid entry, i < c
  } else {
    sp.index = any_index();
    sp.index[0] = one_of(live_rows);
  }
  sp.baseline = kind == Kind::neg_zero ? 0.0 : v.load(sp.index);
  if (kind == Kind::neg_zero) v.store(sp.index, 0.0);  // the twin holds +0 where the call holds -0
  inject_special(c, sp);
  n.add("special=" + std::string(kda_special_name(kind) == "+inf" || kda_special_name(kind) == "-inf" ? "inf" : kda_special_name(kind)));
  n.add("special-in=" + sp.tensor);
  if (!sp.referenced) n.add("special-unreferenced");
  return sp;
}

}  // namespace

rc::Gen<std::int64_t> uniform_int(std::int64_t lo, std::int64_t hi) {
  return [lo, hi](const rc::Random& random, int) {
    const I v = lo + static_cast<I>(rc::Random(random).next() % static_cast<std::uint64_t>(hi - lo + 1));
    return rc::shrinkable::shrinkRecur(v, [lo](I x) { return rc::shrink::towards<I>(x, lo); });
  };
}

KdaDraw draw_kda(std::string_view op, const GenConfig& cfg, const KdaDrawOptions& o) {
  Notes n;
  KdaDraw d;
  KdaShape& s = d.shape;
  s.op = std::string(op);
  draw_common(s, cfg, o, n);
  if (op == kda::kRecurrentOp) draw_recurrent(s, cfg, o, n);
  else if (op == kda::kPackedDecodeOp || op == kda::kReplaySsmDecodeOp) draw_decode(s, cfg, n);
  else throw std::invalid_argument("draw_kda: not a KDA op: " + std::string(op));
  d.call = build_kda_call(s);
  note_layout(d.call, s, n);
  if (cfg.special_values) {
    d.special = draw_special(s, d.call, n);
    // O6 rejects a NaN or Inf anywhere the op reads it; upstream accepts it, and so do the
    // references with the data checks off.
    const bool non_finite = d.special && (d.special->kind == KdaSpecial::Kind::nan ||
                                          d.special->kind == KdaSpecial::Kind::pos_inf ||
                                          d.special->kind == KdaSpecial::Kind::neg_inf);
    if (non_finite && d.special->referenced) d.call.options.deep = false;
    if (d.special)
      d.call.description += " special=" + std::string(kda_special_name(d.special->kind)) + "@" + d.special->tensor +
                            py_tuple(d.special->index);
  }
  return d;
}

namespace {

std::vector<std::string> all_buckets(std::string_view op) {
  std::vector<std::string> b = {"values=exact", "values=typical", "values=harsh", "gqa=1", "gqa=2", "gqa=4", "gqa=8",
                                "HV>12", "HV<=12", "K=V", "K!=V", "K=16", "K=32", "K=64", "K=128", "K=256",
                                "V=16", "V=32", "V=64", "V=128", "V=256", "act=f32", "act=bf16", "act=f16",
                                "gate_dt=f32", "gate_dt=bf16", "gate_dt=f16", "params=f32", "params=bf16",
                                "l2norm=on", "l2norm=off", "gate=softplus", "gate=bounded", "gate=bounded(0)",
                                "layout=scrambled", "layout=compact", "storage-offset", "strided-state", "permuted-state",
                                "strided-activations", "special=nan", "special=inf", "special=-0",
                                "special=subnormal", "special-in=initial_state"};
  if (op == kda::kRecurrentOp) {
    b.insert(b.end(), {"T=0", "T=1", "T>1", "N=1", "N>1", "empty-seq", "cu_seqlens=i32", "cu_seqlens=i64",
                       "cu_seqlens=absent", "gate=g", "dt_bias=2d", "dt_bias=1d", "beta=logits", "beta=probs",
                       "state=f32", "state=bf16", "state=f16", "initial_state=absent", "final=f32", "final=bf16",
                       "final=f16", "final_state=absent", "scale=default", "strided-outputs", "special-in=q",
                       "special-in=k", "special-in=v", "special-in=beta", "special-in=g", "special-in=a",
                       "special-in=dt_bias", "special-in=A_log"});
    for (I e : kSeqEdges) b.push_back("seqlen=" + std::to_string(e));
    return b;
  }
  b.insert(b.end(), {"B=1", "B>1", "state=f32", "state=bf16", "state=f16", "indices=i32", "indices=i64",
                     "padding-row", "all-padding", "padding<-1", "unused-slot", "state-slot-stride+257",
                     "special-in=mixed_qkv", "special-in=a", "special-in=b", "special-in=A_log",
                     "special-in=dt_bias", "special-unreferenced"});
  if (op == kda::kPackedDecodeOp) b.push_back("B=0");
  if (op == kda::kReplaySsmDecodeOp) {
    for (I e : kRingEdges) b.push_back("L=" + std::to_string(e));
    b.insert(b.end(), {"ring=f32", "ring=bf16", "ring=f16", "beta=fp32", "beta=through-b", "a=3d", "a=2d",
                       "force=absent", "force=2", "padding-garbage-cursor", "cursor=0", "cursor=L-1", "cursor=L-2",
                       "cursor=mid", "ring-entries>=2", "forced-flush-at-0", "forced-flush-mid", "append-row",
                       "divergent-cursors", "strided-rings", "special-in=d_cache", "special-in=k_cache",
                       "special-in=g_cache"});
  }
  return b;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::vector<std::string> kda_buckets(std::string_view op, const GenConfig& cfg, const KdaDrawOptions& o) {
  std::vector<std::string> out;
  for (auto& b : all_buckets(op)) {
    const bool large_only = b == "K=128" || b == "K=256" || b == "V=128" || b == "V=256" || b == "L=31" ||
                            b == "L=32" || b == "L=33" || (starts_with(b, "seqlen=") && std::stoi(b.substr(7)) >= 31);
    if (!cfg.large && large_only) continue;
    if (!cfg.special_values && starts_with(b, "special")) continue;
    if (o.values) {
      if (starts_with(b, "values=") && b != "values=" + std::string(kda_values_name(*o.values))) continue;
      const bool exact = *o.values == KdaValues::exact;
      if (exact && (b == "l2norm=on" || b == "gate=bounded" || b == "scale=default" || starts_with(b, "seqlen=")))
        continue;
      if (!exact && b == "gate=bounded(0)") continue;
    }
    if (o.packed_compatible && (b == "gate=g" || b == "beta=probs")) continue;
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<OpFuzzSpec> kda_specs() {
  std::vector<OpFuzzSpec> specs;
  for (std::string_view op : {kda::kRecurrentOp, kda::kPackedDecodeOp, kda::kReplaySsmDecodeOp}) {
    OpFuzzSpec s;
    s.op = std::string(op);
    s.draw = [op](const GenConfig& cfg) { return draw_kda(op, cfg).call; };
    GenConfig everything;
    everything.special_values = true;
    everything.large = true;
    s.buckets = kda_buckets(op, everything);
    s.abs_floor = judging::kda_abs_floor;
    specs.push_back(std::move(s));
  }
  return specs;
}

}  // namespace kparity::fuzz
