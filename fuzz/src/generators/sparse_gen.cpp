// Generators of valid sparse-attention calls (spec sparse_attention.md B, C, E.2): every constraint
// of the strict contract is built into the draw (nothing is discarded), every choice is a weighted
// pick ordered simplest first that shrinks toward its first option, and sizes are biased to the
// kernels' tile edges. Tensor values come from one drawn seed (per-tensor sub-seeds) and a drawn
// value mode, so a counterexample shrinks to small integers or zeros when those still fail.
#include "kparity/fuzz/generators/sparse_gen.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <rapidcheck.h>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kparity/core/random.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/fuzz/generators/pins.hpp"
#include "kparity/fuzz/generators/presets.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"
#include "kparity/judge/floors.hpp"
#include "fill_rows.hpp"

namespace kparity::fuzz {
namespace {

using namespace sparse_fuzz;
using I = std::int64_t;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Multiply-accumulate budget (T * H * D * keys per token) of one large draw: the oracle and the
// faithful reference each take about 1.2 ns per MAC on one core, so a large case costs at most
// ~0.1 s of reference time next to its kernel run.
constexpr I kLargeBudget = I{1} << 25;

// Entries of one list drawn (and shrunk) one RapidCheck pick each; the rest come from the case's
// seeded stream.
constexpr I kShrinkableEntries = 16;

// An index in [0, weights.size()) drawn by weight that shrinks toward 0.
std::size_t pick_index(std::vector<int> weights) {
  return *rc::Gen<std::size_t>([w = std::move(weights)](const rc::Random& random, int) {
    std::uint64_t sum = 0;
    for (int x : w) sum += static_cast<std::uint64_t>(x);
    std::uint64_t r = rc::Random(random).next() % sum;
    std::size_t i = 0;
    while (r >= static_cast<std::uint64_t>(w[i])) r -= static_cast<std::uint64_t>(w[i++]);
    return rc::shrinkable::shrinkRecur(i, [](std::size_t x) { return rc::shrink::towards<std::size_t>(x, 0); });
  });
}

template <class T>
struct Opt {
  int weight;
  T value;
};

// One of the options with a positive weight, simplest (first) preferred when shrinking.
template <class T>
T pick(std::initializer_list<Opt<T>> options) {
  std::vector<const Opt<T>*> live;
  for (const auto& o : options)
    if (o.weight > 0) live.push_back(&o);
  if (live.empty()) throw std::logic_error("sparse generator: no option has a positive weight");
  std::vector<int> w;
  for (const auto* o : live) w.push_back(o->weight);
  return live[pick_index(std::move(w))]->value;
}

I pick_size(const std::vector<Opt<I>>& options, I limit) {
  std::vector<Opt<I>> live;
  for (const auto& o : options)
    if (o.weight > 0 && o.value <= limit) live.push_back(o);
  if (live.empty()) return options.front().value;
  std::vector<int> w;
  for (const auto& o : live) w.push_back(o.weight);
  return live[pick_index(std::move(w))].value;
}

// One value of a pinned list (pins.hpp), shrinking toward the first.
template <class T>
T pinned(const std::vector<T>& values) {
  std::vector<int> w(values.size(), 1);
  return values[pick_index(std::move(w))];
}

std::uint64_t sub_seed(std::uint64_t seed, std::string_view name) {
  std::uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

enum class Values { ints, normal, zero, wide };
const char* values_name(Values v) {
  switch (v) {
    case Values::ints: return "ints";
    case Values::normal: return "normal";
    case Values::zero: return "zero";
    case Values::wide: return "wide";
  }
  return "?";
}

// Every element of v in fill_rows' order: ints exact in bf16/f16 (exact dots in fp32), normal, zero,
// or wide (6 normal: logits of tens, the max subtraction matters); normals a row of draws at a time.
void fill_values(const TensorView& v, Rng& r, Values m) {
  if (m == Values::normal) return fill_normal_rows(v, r, [](double x) { return x; });
  if (m == Values::wide) return fill_normal_rows(v, r, [](double x) { return 6.0 * x; });
  const Rng::IntRange ints = Rng::int_range(-2, 2);  // the divisions once, the same draws
  fill_rows(v, [&] { return m == Values::ints ? static_cast<double>(r.integer(ints)) : 0.0; });
}

enum class LayoutKind { contiguous, padded, permuted, col_strided };
struct Layout {
  LayoutKind kind = LayoutKind::contiguous;
  I pad = 0, offset = 0;
};
const char* layout_name(const Layout& l) {
  switch (l.kind) {
    case LayoutKind::contiguous: return l.offset ? "offset" : "contiguous";
    case LayoutKind::padded: return "padded";
    case LayoutKind::permuted: return "permuted";
    case LayoutKind::col_strided: return "col-strided";
  }
  return "?";
}

// A tensor of `shape` in layout `l` with every byte NaN: the caller writes the elements, and the
// padding left over makes an input read through it poison the result.
Tensor make_tensor(DType dt, const Shape& shape, const Layout& l) {
  const std::size_t r = shape.size();
  Shape st(r, 1);
  auto row_major = [&](I inner, I pad) {
    I acc = inner;
    for (std::size_t k = r; k-- > 0;) {
      st[k] = acc;
      acc *= std::max<I>(shape[k], 1);
      if (k + 1 == r) acc += pad;
    }
  };
  switch (l.kind) {
    case LayoutKind::contiguous: row_major(1, 0); break;
    case LayoutKind::padded: row_major(1, l.pad); break;
    case LayoutKind::col_strided: row_major(2, 0); break;
    case LayoutKind::permuted: {
      // Leading pair swapped in storage: q [T, H, D] stored as [H, T, D]; rows [R, D] as [D, R].
      Shape perm = shape;
      std::swap(perm[0], perm[1]);
      I acc = 1;
      for (std::size_t k = r; k-- > 0;) {
        st[k] = acc;
        acc *= std::max<I>(perm[k], 1);
      }
      std::swap(st[0], st[1]);
      break;
    }
  }
  Tensor t = Tensor::strided(dt, shape, st, l.offset);
  t.poison();
  return t;
}

// One CSR source as drawn: the index array, the pointers and what they name.
struct CsrDraw {
  std::vector<I> idx, ptr;
  std::string mode;
};

class Drawer {
 public:
  Drawer(const GenConfig& cfg, bool prefill)
      : cfg_(cfg), prefill_(prefill), preset_(sparse_preset(cfg)), pins_(pins_for(cfg, "sparse")) {}
  Call draw();

 private:
  void bucket(std::string b) { buckets_.insert(std::move(b)); }
  void draw_shape();
  void draw_preset_shape();
  void note_shape();
  CsrDraw draw_csr(I rows, bool sentinels, I max_len, std::uint64_t seed);
  PresetList preset_list(const Source& s) const;
  CsrDraw preset_csr(const Source& s, I rows, std::uint64_t seed);
  void note_csr(const CsrDraw& c, I rows);
  I draw_sentinel();
  Layout draw_layout(bool rows_tensor);
  Tensor draw_sink(std::uint64_t seed);
  void inject_specials(Call& c, std::uint64_t seed);

  const GenConfig& cfg_;
  bool prefill_;
  std::set<std::string> buckets_;
  DType dt_ = DType::bf16;
  I T_ = 1, H_ = 1, D_ = 1, max_len_ = 1;
  std::string sink_desc_;
  const SparsePreset* preset_;  // a real model's shapes (presets.hpp), or null
  I topk_ = 0;                  // the preset's top-k of this call
  const ShapePins* pins_;       // the compile classes asked for (pins.hpp), or null
};

// A real model's sizes (presets.hpp), each from the preset's list, simplest (first) preferred
// when shrinking.
void Drawer::draw_preset_shape() {
  const auto from = [](const std::vector<I>& xs) {
    std::vector<Opt<I>> o;
    for (I x : xs) o.push_back({1, x});
    return pick_size(o, std::numeric_limits<I>::max());
  };
  dt_ = preset_->dtype;
  bucket(dt_ == DType::bf16 ? "bf16" : "f16");
  D_ = from(preset_->D);
  H_ = from(preset_->H);
  T_ = from(preset_->T);
  topk_ = from(preset_->topk);
  max_len_ = topk_ + preset_->window;
  note_shape();
}

void Drawer::draw_shape() {
  if (preset_) return draw_preset_shape();
  dt_ = pick<DType>({{1, DType::bf16}, {1, DType::f16}});
  if (pins_ && !pins_->dtype.empty()) dt_ = pinned(pins_->dtype);
  bucket(dt_ == DType::bf16 ? "bf16" : "f16");
  if (!cfg_.large) {
    // Small enough that both references together run thousands of cases a minute on one core; D =
    // 512 (DeepSeek-V4's width) appears with one or two query heads and tokens.
    D_ = pick<I>({{1, 1}, {1, 2}, {1, 3}, {2, 8}, {3, 16}, {1, 17}, {2, 32}, {2, 64}, {1, 100}, {1, 512}});
    if (pins_ && !pins_->D.empty()) D_ = pinned(pins_->D);
    const bool wide = D_ >= 256;
    H_ = pick<I>({{3, 1}, {2, 2}, {1, 3}, {2, 4}, {wide ? 0 : 1, 8}, {wide ? 0 : 1, 15}, {wide ? 0 : 1, 16},
                  {wide ? 0 : 1, 17}});
    if (pins_ && !pins_->H.empty()) H_ = pinned(pins_->H);
    T_ = pick<I>({{1, 0}, {3, 1}, {2, 2}, {wide ? 0 : 2, 3}, {wide ? 0 : 1, 4}, {wide ? 0 : 1, 6}, {wide ? 0 : 1, 8}});
    max_len_ = wide ? 4 : 17;
  } else {
    // Kernel tiles: 16- and 64-head CTAs, the wgmma path for D in (256, 512], 16/32-key tiles.
    D_ = pick_size({{1, 1}, {1, 16}, {1, 17}, {1, 48}, {2, 64}, {1, 65}, {1, 100}, {2, 128}, {1, 256}, {1, 257},
                    {1, 448}, {1, 511}, {6, 512}},
                   kLargeBudget);
    if (pins_ && !pins_->D.empty()) D_ = pinned(pins_->D);
    H_ = pick_size({{1, 1}, {1, 15}, {2, 16}, {1, 17}, {1, 48}, {1, 63}, {3, 64}, {1, 65}, {1, 127}, {2, 128}},
                   kLargeBudget / (2 * D_));
    if (pins_ && !pins_->H.empty()) H_ = pinned(pins_->H);
    T_ = pick_size({{1, 0}, {2, 1}, {2, 2}, {2, 5}, {2, 16}, {1, 33}, {1, 64}, {1, 100}, {1, 257}, {1, 300}},
                   kLargeBudget / (2 * D_ * H_));
    max_len_ = std::clamp<I>(kLargeBudget / (2 * D_ * H_ * std::max<I>(T_, 1)), 1, 130);
  }
  note_shape();
}

void Drawer::note_shape() {
  if (T_ == 0) bucket("T=0");
  if (T_ == 1) bucket("T=1");
  if (H_ == 1) bucket("H=1");
  if (H_ == 16 || H_ == 64 || H_ == 128) bucket("H=tile");
  if (H_ == 15 || H_ == 17 || H_ == 63 || H_ == 65 || H_ == 127) bucket("H=tile±1");
  if (D_ == 1) bucket("D=1");
  if (D_ == 512) bucket("D=512");
  if ((D_ & (D_ - 1)) != 0) bucket("D-tail");
}

I Drawer::draw_sentinel() {
  // Any negative entry is skipped (C.1 item 3), not only -1; INT32_MIN is FlashMLA's favourite.
  return pick<I>({{8, -1}, {1, -2}, {1, -7}, {1, std::numeric_limits<std::int32_t>::min()}});
}

// Pointers are built token by token over one growing index array, which stays exactly as long as the
// next token's start except after a rewind: a decreasing pointer empties the token (C.1 item 1) and
// the next token re-reads the entries the rewind skipped back over (overlapping spans).
CsrDraw Drawer::draw_csr(I rows, bool sentinels, I max_len, std::uint64_t seed) {
  CsrDraw c;
  const int can_row = rows > 0 ? 1 : 0;
  enum class Mode { random, window, all_rows };
  const Mode mode = pick<Mode>({{8, Mode::random}, {2, Mode::window}, {can_row && rows <= max_len ? 1 : 0, Mode::all_rows}});
  c.mode = mode == Mode::random ? "random" : mode == Mode::window ? "window" : "all-rows";
  Rng rng(seed);
  auto junk = [&]() -> I { return rows > 0 ? rng.integer(0, rows - 1) : -1; };

  const I base = pick<I>({{6, 0}, {1, 1}, {1, 3}});
  for (I j = 0; j < base; ++j) c.idx.push_back(junk());  // never read: valid rows, so a misread is a wrong answer
  c.ptr.push_back(base);
  const I window = pick_size({{1, 1}, {2, 2}, {2, 4}, {1, 8}, {1, 33}}, std::max<I>(max_len, 1));
  // Short lists mostly; key-tile edges (16 and 32 keys, +-1) and longer ones when the budget allows.
  const std::vector<Opt<I>> lengths = {{4, 1}, {4, 2}, {4, 3}, {4, 4}, {2, 6}, {2, 8}, {1, 15}, {1, 16},
                                       {1, 17}, {1, 31}, {1, 32}, {1, 33}, {1, 64}, {1, 65}, {1, 128}};
  std::optional<I> reread_end;
  enum class Kind { empty, normal, all_sentinel, rewind };
  for (I t = 0; t < T_; ++t) {
    const I p = c.ptr.back();
    if (reread_end) {
      c.ptr.push_back(*reread_end);
      reread_end.reset();
      continue;
    }
    const Kind kind = pick<Kind>({{2, Kind::empty},
                                  {12, Kind::normal},
                                  {sentinels ? 1 : 0, Kind::all_sentinel},
                                  {p > 0 && (sentinels || can_row) ? 1 : 0, Kind::rewind}});
    if (kind == Kind::rewind) {
      c.ptr.push_back(*rc::gen::inRange<I>(0, p));
      reread_end = p;
      continue;
    }
    std::vector<I> list;
    if (kind == Kind::all_sentinel) {
      const I n = pick_size(lengths, max_len);
      for (I j = 0; j < n; ++j) list.push_back(draw_sentinel());
    } else if (kind == Kind::normal && mode == Mode::all_rows) {
      list.resize(static_cast<std::size_t>(rows));
      std::iota(list.begin(), list.end(), I{0});
      for (I j = rows - 1; j > 0; --j) std::swap(list[static_cast<std::size_t>(j)], list[static_cast<std::size_t>(rng.integer(0, j))]);
    } else if (kind == Kind::normal && mode == Mode::window && can_row) {
      // The caller convention of B.3: the last `window` positions ending at the token itself, in a
      // ring of `rows` slots; positions before 0 are sentinel padding (prefill) or absent (decode).
      const I centre = t % rows;
      for (I j = 0; j < std::min(window, rows); ++j) {
        if (centre - j >= 0) list.push_back(centre - j);
        else if (sentinels) list.push_back(-1);
      }
    } else if (kind == Kind::normal) {
      const I n = can_row || sentinels ? pick_size(lengths, max_len) : 0;
      for (I j = 0; j < n; ++j) {
        enum class Entry { row, duplicate, sentinel };
        const int w_row = can_row * 12, w_dup = list.empty() || !can_row ? 0 : 3, w_sent = sentinels ? 2 : 0;
        if (j >= kShrinkableEntries) {
          // Same distribution from the seeded stream: past a tile of entries, per-entry shrinking
          // buys little and per-entry picks would dominate a large draw's cost.
          const I r = rng.integer(0, w_row + w_dup + w_sent - 1);
          if (r < w_row) list.push_back(rng.integer(0, rows - 1));
          else if (r < w_row + w_dup) list.push_back(list[static_cast<std::size_t>(rng.integer(0, j - 1))]);
          else list.push_back(-1);
          continue;
        }
        const Entry e = pick<Entry>({{w_row, Entry::row}, {w_dup, Entry::duplicate}, {w_sent, Entry::sentinel}});
        if (e == Entry::row) list.push_back(*rc::gen::inRange<I>(0, rows));
        else if (e == Entry::duplicate) list.push_back(list[static_cast<std::size_t>(*rc::gen::inRange<I>(0, static_cast<I>(list.size())))]);
        else list.push_back(draw_sentinel());
      }
    }
    for (I v : list) c.idx.push_back(v);
    c.ptr.push_back(p + static_cast<I>(list.size()));
  }
  const I trailing = pick<I>({{6, 0}, {1, 2}});
  for (I j = 0; j < trailing; ++j) c.idx.push_back(junk());
  const I extra_ptrs = pick<I>({{6, 0}, {1, 1}, {1, 3}});
  for (I j = 0; j < extra_ptrs; ++j) c.ptr.push_back(rng.integer(0, static_cast<I>(c.idx.size())));  // never read
  if (base > 0) bucket("indptr[0]!=0");
  if (trailing > 0) bucket("indices-trailing");
  if (extra_ptrs > 0) bucket("indptr-long");
  if (mode == Mode::window) bucket("window");
  if (mode == Mode::all_rows) bucket("all-rows");
  note_csr(c, rows);
  return c;
}

PresetList Drawer::preset_list(const Source& s) const {
  if (!prefill_) return PresetList::decode;
  return std::string_view(s.rows) == "unified_kv" ? PresetList::prefix : PresetList::extend;
}

// A real model's lists (presets.hpp): top-k rows and the sliding window, from the seed alone.
CsrDraw Drawer::preset_csr(const Source& s, I rows, std::uint64_t seed) {
  CsrDraw c;
  c.mode = "top-k " + std::to_string(topk_) + "+window";
  preset_index_lists(*preset_, preset_list(s), topk_, T_, rows, seed, c.idx, c.ptr);
  note_csr(c, rows);
  return c;
}

// Buckets from what the op will actually read, not from the knobs that were meant to produce it.
void Drawer::note_csr(const CsrDraw& c, I rows) {
  for (I t = 0; t < T_; ++t) {
    const I b = c.ptr[static_cast<std::size_t>(t)], e = c.ptr[static_cast<std::size_t>(t) + 1];
    if (e == b) bucket("empty-span");
    if (e < b) bucket("negative-span");
    if (e <= b) continue;
    std::set<I> seen;
    bool all_neg = true;
    for (I j = b; j < e; ++j) {
      const I v = c.idx[static_cast<std::size_t>(j)];
      if (v < 0) {
        bucket("sentinel");
        if (v < -1) bucket("sentinel<-1");
        continue;
      }
      all_neg = false;
      if (!seen.insert(v).second) bucket("duplicate");
    }
    if (all_neg) bucket("all-sentinel-row");
    const I n = e - b;
    if (n == 15 || n == 17 || n == 31 || n == 33 || n == 63 || n == 65) bucket("list-len=tile±1");
  }
  if (rows == 0) bucket("empty-source");
}

Layout Drawer::draw_layout(bool rows_tensor) {
  Layout l;
  l.kind = pick<LayoutKind>({{8, LayoutKind::contiguous},
                             {3, LayoutKind::padded},
                             {rows_tensor ? 1 : 2, LayoutKind::permuted},
                             {1, LayoutKind::col_strided}});
  if (l.kind == LayoutKind::padded) l.pad = pick<I>({{2, 1}, {2, 8}, {1, 64}});
  l.offset = pick<I>({{6, 0}, {1, 5}, {1, 64}});
  if (pins_ && pins_->compact) l = Layout{};  // drawn, then dropped: the rest of the draw is unchanged
  if (l.offset) bucket("storage-offset");
  if (l.kind == LayoutKind::col_strided) bucket("col-strided");
  return l;
}

Tensor Drawer::draw_sink(std::uint64_t seed) {
  const int other = preset_ && preset_->sink_dtype == DType::f32 ? 0 : 1;  // a preset's sink is fp32
  DType dt = pick<DType>({{6, DType::f32}, {other, DType::bf16}, {other, DType::f16}});
  if (pins_ && !pins_->sink.empty()) dt = pinned(pins_->sink);
  const I pad = pick<I>({{6, 0}, {1, 1}, {1, 3}});
  if (dt != DType::f32) bucket("sink-dtype");
  if (pad) bucket("sink-padding");
  enum class Mode { zero, finite, neg_inf, mixed, large };
  // Finite sinks dominate: a sink that reaches the numerator is then visible in most cases.
  const Mode mode = pick<Mode>({{2, Mode::zero}, {10, Mode::finite}, {2, Mode::neg_inf}, {3, Mode::mixed}, {1, Mode::large}});
  Tensor s(dt, {H_ + pad});
  Rng rng(seed);
  for (I h = 0; h < H_ + pad; ++h) {
    double v = kNaN;  // padding past H is never read (B.1): NaN makes a misread visible
    if (h < H_) {
      switch (mode) {
        case Mode::zero: v = 0.0; break;
        case Mode::finite: v = 0.5 + 1.5 * rng.normal(); break;
        case Mode::neg_inf: v = -kInf; break;
        case Mode::large: v = (rng.integer(0, 1) ? 1.0 : -1.0) * rng.uniform(20.0, 40.0); break;
        case Mode::mixed: {
          const int k = static_cast<int>(pick_index({6, 2, 1, cfg_.special_values ? 1 : 0}));
          v = k == 0 ? 0.5 + 1.5 * rng.normal() : k == 1 ? -kInf : k == 2 ? kInf : kNaN;
          break;
        }
      }
    }
    s.view().store(std::array<I, 1>{h}, v);
    if (h >= H_) continue;
    if (v == 0.0) bucket("sink=0");
    if (v == -kInf) bucket("sink=-inf");
    if (v == kInf) bucket("sink=+inf");
    if (std::isnan(v)) bucket("sink=nan");
    if (mode == Mode::large) bucket("sink-large");
  }
  const char* names[] = {"zero", "finite", "-inf", "mixed", "large"};
  sink_desc_ = std::string(names[static_cast<int>(mode)]) + "/" + std::string(dtype_name(dt)) + (pad ? "+pad" : "");
  return s;
}

// Special values (testing guide 2.6): NaN, +-Inf, -0, subnormals and the largest finite value of the
// storage dtype, in q, in selected rows and in rows nothing selects.
void Drawer::inject_specials(Call& c, std::uint64_t seed) {
  const I n = pick<I>({{1, 0}, {3, 1}, {2, 2}, {1, 4}});
  Rng rng(seed);
  // Huge but far from fp32's overflow threshold: bf16's own maximum (~2^128) would make any fp32
  // accumulation of a few such rows overflow or not depending on summation order alone, so a
  // correct kernel and the faithful model could disagree in class (Inf vs finite) with neither
  // wrong. 2^100 still overflows fp32 in a product of two huge values, which both do alike. fp16's
  // maximum is harmless in fp32.
  const double huge = dt_ == DType::bf16 ? 0x1p100 : 65504.0;
  for (I k = 0; k < n; ++k) {
    enum class What { neg_zero, subnormal, huge, nan, pos_inf, neg_inf };
    const What what = pick<What>({{1, What::neg_zero}, {1, What::subnormal}, {1, What::huge}, {2, What::nan},
                                  {1, What::pos_inf}, {1, What::neg_inf}});
    double v = 0.0;
    switch (what) {
      case What::neg_zero: v = -0.0; bucket("special:neg-zero"); break;
      case What::subnormal: v = dtype_min_subnormal(dt_) * static_cast<double>(rng.integer(1, 5)); bucket("special:subnormal"); break;
      case What::huge: v = rng.integer(0, 1) ? huge : -huge; bucket("special:huge"); break;
      case What::nan: v = kNaN; bucket("special:nan"); break;
      case What::pos_inf: v = kInf; bucket("special:inf"); break;
      case What::neg_inf: v = -kInf; bucket("special:inf"); break;
    }
    enum class Where { q, selected, unselected };
    const Where where = pick<Where>({{T_ > 0 ? 1 : 0, Where::q}, {2, Where::selected}, {1, Where::unselected}});
    if (where == Where::q) {
      c.at("q").view().store(std::array<I, 3>{rng.integer(0, T_ - 1), rng.integer(0, H_ - 1), rng.integer(0, D_ - 1)}, v);
      bucket("special-in-q");
      bucket("special-values");
      continue;
    }
    // Candidate (source, row) pairs of the wanted kind; unselected rows always exist in this mode.
    std::vector<std::pair<const char*, I>> rows;
    for (const auto& s : sources_of(c.op)) {
      const auto sel = selected_rows(c, s);
      for (std::size_t r = 0; r < sel.size(); ++r)
        if (sel[r] == (where == Where::selected)) rows.emplace_back(s.rows, static_cast<I>(r));
    }
    if (rows.empty()) continue;
    const auto& [name, r] = rows[static_cast<std::size_t>(rng.integer(0, static_cast<I>(rows.size()) - 1))];
    c.at(name).view().store(std::array<I, 2>{r, rng.integer(0, D_ - 1)}, v);
    bucket(where == Where::selected ? "special-in-selected-row" : "special-in-unselected-row");
    bucket("special-values");
  }
}

Call Drawer::draw() {
  Call c;
  c.op = std::string(prefill_ ? kparity::sparse::kPagedPrefillOp : kparity::sparse::kPagedDecodeOp);
  draw_shape();
  const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto sources = sources_of(c.op);
  std::ostringstream desc;
  desc << "T=" << T_ << " H=" << H_ << " D=" << D_ << " " << dtype_name(dt_);

  // Index lists, one source at a time; rows past the selectable range are never named.
  const DType idx_dt = pick<DType>({{4, DType::i32}, {1, DType::i64}});
  const DType ptr_dt = pick<DType>({{4, DType::i32}, {1, DType::i64}});
  if (idx_dt == DType::i64 || ptr_dt == DType::i64) bucket("i64-index");
  std::vector<I> alloc_rows;
  for (const auto& s : sources) {
    const bool prefix_like = std::string_view(s.rows) == "unified_kv";
    const I rows = preset_ ? preset_source_rows(*preset_, preset_list(s), topk_, T_)
                   : cfg_.large
                       ? pick<I>({{1, 0}, {2, 1}, {3, 16}, {3, 64}, {2, prefix_like ? 200 : 100}, {1, prefix_like ? 600 : 300}})
                       : pick<I>({{1, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4}, {1, 6}, {1, 8}, {1, 12}});
    // Unselected rows past the selectable ones: the special values need somewhere to hide.
    const I extra = cfg_.special_values ? pick<I>({{2, 1}, {1, 2}}) : pick<I>({{3, 0}, {1, 1}, {1, 2}});
    const CsrDraw csr = preset_ ? preset_csr(s, rows, sub_seed(seed, s.indices))
                                : draw_csr(rows, s.sentinels, max_len_, sub_seed(seed, s.indices));
    Tensor idx(idx_dt, {static_cast<I>(csr.idx.size())}), ptr(ptr_dt, {static_cast<I>(csr.ptr.size())});
    for (std::size_t j = 0; j < csr.idx.size(); ++j) idx.view().store_int(std::array<I, 1>{static_cast<I>(j)}, csr.idx[j]);
    for (std::size_t j = 0; j < csr.ptr.size(); ++j) ptr.view().store_int(std::array<I, 1>{static_cast<I>(j)}, csr.ptr[j]);
    c.tensors[s.indices] = std::move(idx);
    c.tensors[s.indptr] = std::move(ptr);
    alloc_rows.push_back(rows + extra);
    desc << " " << s.rows << "=" << rows << "+" << extra << "(" << csr.mode << ")";
  }

  // Values: the q mode and the KV mode shrink independently toward small integers.
  const Values qv = pick<Values>({{3, Values::ints}, {6, Values::normal}, {1, Values::zero}, {2, Values::wide}});
  const Values kvv = pick<Values>({{3, Values::ints}, {6, Values::normal}, {2, Values::wide}});
  if (qv == Values::ints || kvv == Values::ints) bucket("int-values");
  if (qv == Values::zero) bucket("q=0");
  if (qv == Values::wide || kvv == Values::wide) bucket("wide-values");
  const Layout ql = draw_layout(false);
  Tensor q = make_tensor(dt_, {T_, H_, D_}, ql);
  {
    Rng rng(sub_seed(seed, "q"));
    fill_values(q.view(), rng, qv);
  }
  c.tensors["q"] = std::move(q);
  if (ql.kind != LayoutKind::contiguous || ql.offset) bucket("strided-q");
  desc << " q=" << values_name(qv) << "/" << layout_name(ql) << " kv=" << values_name(kvv);
  const bool poison_unselected = !cfg_.special_values && pick_index({3, 1}) == 1;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const auto& s = sources[k];
    const Layout l = draw_layout(true);
    Tensor rows = make_tensor(dt_, {alloc_rows[k], D_}, l);
    Rng rng(sub_seed(seed, s.rows));
    fill_values(rows.view(), rng, kvv);
    if (l.kind != LayoutKind::contiguous || l.offset) bucket("strided-kv");
    desc << "/" << layout_name(l);
    c.tensors[s.rows] = std::move(rows);
  }
  if (poison_unselected) {
    // Rows nothing selects hold NaN (testing guide 2.7 item 3); the strict contract only scans
    // selected rows, so the call stays valid and a misaddressed row read turns into NaN.
    bool any = false;
    for (const auto& s : sources) {
      const auto sel = selected_rows(c, s);
      const TensorView v = c.at(s.rows).view();
      for (std::size_t r = 0; r < sel.size(); ++r) {
        if (sel[r]) continue;
        any = true;
        for (I d = 0; d < D_; ++d) v.store(std::array<I, 2>{static_cast<I>(r), d}, kNaN);
      }
    }
    if (any) bucket("poisoned-unselected");
  }

  c.tensors["attn_sink"] = draw_sink(sub_seed(seed, "attn_sink"));
  desc << " sink=" << sink_desc_;
  if (qv == Values::ints && kvv == Values::ints) {
    // Powers of two keep the logits exact (testing guide 1.4).
    c.scalars["softmax_scale"] = pick<double>({{1, 1.0}, {2, 0.25}, {2, 0.125}, {1, 0.0625}});
  } else {
    c.scalars["softmax_scale"] = pick<double>({{6, 1.0 / std::sqrt(static_cast<double>(D_))}, {1, 1.0}, {1, 0.05}});
  }
  desc << " scale=" << c.scalars["softmax_scale"];
  if (prefill_) {
    const double shift = pick<double>({{6, 0.0}, {1, -std::log(2.0)}, {1, -std::log(8.0)}, {1, 0.5}, {1, -1.25}, {1, 3.0}});
    c.scalars["replicated_logit_shift"] = shift;
    if (shift != 0.0) bucket("shift");
    desc << " shift=" << shift;
  }
  const bool lse = pick<bool>({{1, false}, {2, true}});
  c.flags["return_lse"] = lse;
  bucket(lse ? "lse" : "no-lse");

  const Layout ol = draw_layout(false);
  Tensor out = make_tensor(dt_, {T_, H_, D_}, ol);
  out.poison();
  if (ol.kind != LayoutKind::contiguous || ol.offset) bucket("strided-out");
  desc << " out=" << layout_name(ol) << (lse ? " lse" : "");
  c.tensors["out"] = std::move(out);
  c.written = {"out"};
  if (lse) {
    c.tensors["lse"] = Tensor(DType::f32, {T_, H_});
    c.tensors["lse"].poison();
    c.written.push_back("lse");
  }
  c.pure_outputs = c.written;
  desc << " idx=" << dtype_name(idx_dt) << "/" << dtype_name(ptr_dt);

  if (cfg_.special_values) {
    inject_specials(c, sub_seed(seed, "special"));
    // Non-finite values where the strict data checks look (q, selected rows, the sink) are legal
    // upstream; such a call runs with those checks off (call.hpp, Call::options).
    const auto ds = find_op_contract(c.op)->validate(c.bag(), c.options);
    if (std::any_of(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.severity == Severity::error; }))
      c.options.deep = false;
  }
  c.description = desc.str();
  for (const auto& b : buckets_) note_bucket(b);
  return c;
}

std::vector<std::string> common_buckets() {
  return {"bf16", "f16", "T=0", "T=1", "H=1", "H=tile", "H=tile±1", "D=1", "D=512", "D-tail",
          "empty-span", "negative-span", "indptr[0]!=0", "indices-trailing", "indptr-long", "window", "all-rows",
          "duplicate", "list-len=tile±1", "empty-source", "i64-index",
          "int-values", "q=0", "wide-values", "strided-q", "strided-kv", "strided-out", "storage-offset",
          "col-strided", "poisoned-unselected", "sink-dtype", "sink-padding", "sink=0", "sink=-inf", "sink=+inf",
          "sink=nan", "sink-large", "lse", "no-lse", "special-values", "special:neg-zero", "special:subnormal",
          "special:huge", "special:nan", "special:inf", "special-in-q", "special-in-selected-row",
          "special-in-unselected-row"};
}

}  // namespace

std::vector<OpFuzzSpec> sparse_specs() {
  std::vector<std::string> prefill_buckets = common_buckets();
  for (const char* b : {"sentinel", "sentinel<-1", "all-sentinel-row", "shift"}) prefill_buckets.emplace_back(b);
  return {
      {std::string(kparity::sparse::kPagedPrefillOp), [](const GenConfig& g) { return Drawer(g, true).draw(); },
       prefill_buckets, judging::sparse_abs_floor},
      {std::string(kparity::sparse::kPagedDecodeOp), [](const GenConfig& g) { return Drawer(g, false).draw(); },
       common_buckets(), judging::sparse_abs_floor},
  };
}

}  // namespace kparity::fuzz
