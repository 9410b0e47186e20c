// Special values propagate exactly as far as the recurrence carries them (issue 7 property 4;
// kda.md A.7, B.1, B.2.4-B.2.7, C.3 O6 "NaN/Inf propagates into outputs and the checkpoint").
//
// One input element holds a special value; its twin call holds a finite one there. Following the
// spec's equations, an element of the input reaches exactly:
//   q (token, head h)       the outputs of h's value heads for that token;
//   k (token, head h)       the outputs, state, delta-ring entry and k-ring entry of h's value heads;
//   v (token, head hv, j)   output channel j and state row j of hv (ReplaySSM append: d-ring channel j);
//   a, b, beta, g, ring g   everything of that value head (the decay or the gain multiplies every row);
//   A_log, dt_bias          that value head in every live row;
//   state (slot, hv, j, c)  output channel j and state row j of hv for the row using the slot; none
//                           if no row uses it;
//   ring d / ring k entries the output channel / the whole head as the state does;
// and for kda/recurrent every later token of the same sequence and its final state. Outside that
// set every written bit equals the twin's. Inside it a NaN comes out NaN, an infinity non-finite
// (an infinity only goes into inputs the recurrence uses linearly), -0 gives the twin's values
// (+0 == -0), a subnormal finite results wherever the twin's are finite.
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <rapidcheck.h>

#include "kparity/core/format.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/fuzz/generators/kda_gen.hpp"
#include "kparity/fuzz/properties/compare.hpp"
#include "kparity/fuzz/properties/kda_support.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;
using Ix = std::vector<I>;
using Kind = KdaSpecial::Kind;

// A set of elements of the written tensors; -1 in a pattern means every index of that dim.
class Marks {
 public:
  explicit Marks(const Call& c) {
    for (const auto& name : c.written) {
      shapes_[name] = c.at(name).shape();
      masks_[name].assign(static_cast<std::size_t>(c.at(name).numel()), 0);
    }
  }
  void add(const std::string& t, const Ix& pattern) {
    const auto it = masks_.find(t);
    if (it == masks_.end()) return;
    const Shape& shape = shapes_.at(t);
    Ix idx(shape.size(), 0);
    mark(it->second, shape, pattern, idx, 0);
  }
  bool has(const std::string& t, std::span<const I> idx) const {
    const auto it = masks_.find(t);
    return it != masks_.end() && it->second[static_cast<std::size_t>(flat(shapes_.at(t), idx))] != 0;
  }

 private:
  static I flat(const Shape& shape, std::span<const I> idx) {
    I f = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
  }
  void mark(std::vector<char>& m, const Shape& shape, const Ix& pattern, Ix& idx, std::size_t d) {
    if (d == shape.size()) {
      m[static_cast<std::size_t>(flat(shape, idx))] = 1;
      return;
    }
    const I lo = pattern[d] < 0 ? 0 : pattern[d], hi = pattern[d] < 0 ? shape[d] : pattern[d] + 1;
    for (I i = lo; i < hi; ++i) {
      idx[d] = i;
      mark(m, shape, pattern, idx, d + 1);
    }
  }
  std::map<std::string, Shape> shapes_;
  std::map<std::string, std::vector<char>> masks_;
};

// `may`: every element the special can change; `must`: those it must make NaN (non-finite for an
// infinity). They differ in one place: an infinite key under the L2 norm becomes NaN in its own
// channel but 0 in the others (x / sqrt(inf)), which the k ring stores.
void reach_decode(const KdaShape& s, const KdaSpecial& sp, Marks& may, Marks& must) {
  const bool packed = s.op == kda::kPackedDecodeOp;
  const I H = s.H, G = s.G, K = s.K, V = s.V;
  const auto both = [&](const std::string& t, const Ix& p) {
    may.add(t, p);
    must.add(t, p);
  };
  // A change confined to value head hv (value channel j, or all when j < 0) of live row r.
  const auto head = [&](I r, I hv, I j) {
    const auto ri = static_cast<std::size_t>(r);
    const I slot = s.slot[ri];
    both("out", {r, 0, hv, j});
    if (packed || s.flushes(r)) both("initial_state", {slot, hv, j, -1});
    else both("d_cache", {slot, hv, s.cursor[ri], j});
  };
  const auto appends = [&](I r) { return !packed && !s.flushes(r); };
  const auto rows_of_slot = [&](I slot) {
    std::vector<I> rows;
    for (I r = 0; r < s.B; ++r)
      if (s.slot[static_cast<std::size_t>(r)] == slot) rows.push_back(r);
    return rows;
  };
  std::vector<I> live;
  for (I r = 0; r < s.B; ++r)
    if (s.slot[static_cast<std::size_t>(r)] >= 0) live.push_back(r);
  const Ix& x = sp.index;
  const std::string& t = sp.tensor;
  // The site itself, when the op leaves that tensor in place (state of a non-writing row, rings).
  both(t, x);
  if (t == "mixed_qkv") {
    const I r = x[0], col = x[1];
    if (col < H * K) {  // q: readout only
      for (I g = 0; g < G; ++g) both("out", {r, 0, col / K * G + g, -1});
    } else if (col < 2 * H * K) {
      const I h = (col - H * K) / K, ch = (col - H * K) % K;
      for (I g = 0; g < G; ++g) head(r, h * G + g, -1);
      if (appends(r)) {
        const I slot = s.slot[static_cast<std::size_t>(r)], c = s.cursor[static_cast<std::size_t>(r)];
        const bool whole = s.l2norm;  // the norm spreads it over the key
        may.add("k_cache", {slot, h, c, whole ? -1 : ch});
        must.add("k_cache", {slot, h, c, whole && sp.kind == Kind::nan ? -1 : ch});
      }
    } else {
      const I e = col - 2 * H * K;
      head(r, e / V, e % V);
    }
  } else if (t == "a" || t == "b" || t == "A_log" || t == "dt_bias") {
    const bool per_row = t == "a" || t == "b";
    const I hv = t == "b" ? x[1] : t == "A_log" ? x[0] : t == "a" ? (x.size() == 3 ? x[1] : x[1] / K)
                                                               : (x.size() == 2 ? x[0] : x[0] / K);
    const I ch = t == "a" ? (x.size() == 3 ? x[2] : x[1] % K) : t == "dt_bias" ? (x.size() == 2 ? x[1] : x[0] % K) : -1;
    for (I r : per_row ? std::vector<I>{x[0]} : live) {
      head(r, hv, -1);
      if (appends(r) && t != "b")
        both("g_cache", {s.slot[static_cast<std::size_t>(r)], hv, s.cursor[static_cast<std::size_t>(r)], ch});
    }
  } else if (t == "initial_state") {
    for (I r : rows_of_slot(x[0])) head(r, x[1], x[2]);
  } else if (t == "d_cache") {
    for (I r : rows_of_slot(x[0])) head(r, x[1], x[3]);
  } else if (t == "k_cache") {
    for (I r : rows_of_slot(x[0]))
      for (I g = 0; g < G; ++g) head(r, x[1] * G + g, -1);
  } else if (t == "g_cache") {
    for (I r : rows_of_slot(x[0])) head(r, x[1], -1);
  }
}

void reach_recurrent(const KdaShape& s, const KdaSpecial& sp, Marks& may, Marks& must) {
  const I G = s.G, K = s.K, N = s.N();
  std::vector<I> bos(static_cast<std::size_t>(N) + 1, 0);
  for (I n = 0; n < N; ++n) bos[static_cast<std::size_t>(n) + 1] = bos[static_cast<std::size_t>(n)] + s.seqlens[static_cast<std::size_t>(n)];
  const auto both = [&](const std::string& t, const Ix& p) {
    may.add(t, p);
    must.add(t, p);
  };
  const auto seq_of = [&](I t) {
    I n = 0;
    while (bos[static_cast<std::size_t>(n) + 1] <= t) ++n;
    return n;
  };
  // From token `from` of sequence n on: value head hv (channel j, or all when j < 0).
  const auto onward = [&](I n, I from, I hv, I j) {
    for (I t = from; t < bos[static_cast<std::size_t>(n) + 1]; ++t) both("out", {t, hv, j});
    both("final_state", {n, hv, j, -1});
  };
  const Ix& x = sp.index;
  const std::string& t = sp.tensor;
  if (t == "q") {
    for (I g = 0; g < G; ++g) both("out", {x[0], x[1] * G + g, -1});
  } else if (t == "k") {
    for (I g = 0; g < G; ++g) onward(seq_of(x[0]), x[0], x[1] * G + g, -1);
  } else if (t == "v") {
    onward(seq_of(x[0]), x[0], x[1], x[2]);
  } else if (t == "a" || t == "g" || t == "beta") {
    onward(seq_of(x[0]), x[0], x[1], -1);
  } else if (t == "A_log" || t == "dt_bias") {
    const I hv = t == "A_log" ? x[0] : x.size() == 2 ? x[0] : x[0] / K;
    for (I n = 0; n < N; ++n)
      if (s.seqlens[static_cast<std::size_t>(n)] > 0) onward(n, bos[static_cast<std::size_t>(n)], hv, -1);
  } else if (t == "initial_state") {
    const I n = x[0];
    if (s.seqlens[static_cast<std::size_t>(n)] > 0) onward(n, bos[static_cast<std::size_t>(n)], x[1], x[2]);
    else both("final_state", x);  // an empty sequence copies its state through
  }
}

}  // namespace

void special_values_propagate(const std::string& op) {
  GenConfig cfg;
  cfg.special_values = true;
  const KdaDraw d = draw_kda(op, cfg);
  RC_LOG() << d.call.description << "\n";
  record_call(d.call);
  if (!d.special) RC_SUCCEED("nothing the op reads (a recurrent call with T = 0 and no state)");
  const KdaSpecial& sp = *d.special;
  Call twin = d.call;
  twin.at(sp.tensor).view().store(sp.index, sp.baseline);
  Marks may(d.call), must(d.call);
  if (op == kda::kRecurrentOp) reach_recurrent(d.shape, sp, may, must);
  else reach_decode(d.shape, sp, may, must);

  for (reference::Precision p : {reference::Precision::faithful, reference::Precision::oracle}) {
    Call got = d.call, ref = twin;
    run_kda(got, p);
    run_kda(ref, p);
    for (const auto& name : d.call.written) {
      const TensorView gv = got.at(name).view(), rv = ref.at(name).view();
      std::string bad;
      for_each_element(gv, [&](std::span<const I> idx, I) {
        if (!bad.empty()) return;
        const double g = gv.load(idx), r = rv.load(idx);
        bool ok;
        if (!may.has(name, idx)) {
          ok = std::memcmp(static_cast<const std::byte*>(gv.data) + gv.offset_of(idx) * static_cast<I>(gv.element_size()),
                           static_cast<const std::byte*>(rv.data) + rv.offset_of(idx) * static_cast<I>(rv.element_size()),
                           gv.element_size()) == 0;
        } else if (sp.kind == Kind::nan) {
          ok = !must.has(name, idx) || std::isnan(g);
        } else if (sp.kind == Kind::pos_inf || sp.kind == Kind::neg_inf) {
          ok = !must.has(name, idx) || !std::isfinite(g);
        } else if (sp.kind == Kind::neg_zero) {
          ok = g == r || (std::isnan(g) && std::isnan(r));
        } else {
          ok = !std::isfinite(r) || std::isfinite(g);
        }
        if (!ok)
          bad = std::string(may.has(name, idx) ? "inside" : "outside") + " the reach at " +
                py_tuple(std::vector<I>(idx.begin(), idx.end())) + ": " + std::to_string(g) + " (twin " + std::to_string(r) + ")";
      });
      RC_LOG() << reference::precision_name(p) << " " << name << ": " << (bad.empty() ? "as the spec says" : bad) << "\n";
      RC_ASSERT(bad.empty());
    }
  }
}

}  // namespace kparity::fuzz
