// Metamorphic properties of the sparse-attention references (spec sparse_attention.md C, G.2) over
// calls drawn by sparse_specs(). The result depends on each token's multiset of selected rows, the
// sink and the shift, and on nothing else: not the order of a list, the source a row sits in, the
// layout, the output buffer's old contents, or rows nobody selects.
//
// Tolerances. Two fp64 oracle computations of one value that differ in summation order or formula
// are a tiny delta apart before their single rounding into the storage dtype, so they may straddle
// one rounding boundary: |a - b| <= eps * |b| (one ulp) + min_sub (the ulp near zero) + delta. The
// fp64 delta: each weight exp(s - M) carries the rounding of its argument, 2^-53 * |logit| relative,
// and n + 1 terms are summed, so delta <= 2^-50 * (n + 1) * (1 + max|logit|) * max|row| with room
// to spare; it matters only where the output cancels toward zero. lse is stored in fp32: eps =
// 2^-23, min_sub = 2^-149, delta <= 2^-50 * (n + 2 + max|logit|). Where both sides compute the
// same keys in the same order the results are compared bit for bit instead.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <rapidcheck.h>
#include <sstream>

#include "kparity/core/format.hpp"
#include "kparity/core/random.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/fuzz/property.hpp"
#include "kparity/fuzz/sparse_gen.hpp"

namespace kparity::fuzz {
namespace {

using namespace sparse_fuzz;
using reference::Precision;
using I = std::int64_t;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kPrefill = kparity::sparse::kPagedPrefillOp;
constexpr std::string_view kDecode = kparity::sparse::kPagedDecodeOp;

// Non-finite inputs in q or selected rows are contract errors under the strict options (catalog
// *-non-finite-input), so calls that carry them run with the data checks off (Call::options; the
// generator sets it on its special-value draws). The reference still refuses out-of-range rows
// and spans on its own.
constexpr ValidateOptions kNoDataChecks{Entry::reference, true, false, true};

const OpFuzzSpec& spec(std::string_view op) {
  static const std::vector<OpFuzzSpec> specs = sparse_specs();
  for (const auto& s : specs)
    if (s.op == op) return s;
  throw std::invalid_argument("no sparse spec for " + std::string(op));
}

Call draw(std::string_view op, GenConfig g = {}) {
  Call c = spec(op).draw(g);
  RC_LOG() << c.description << "\n";
  return c;
}

Call run(const Call& c, Precision p) {
  Call r = c;
  for (const auto& n : r.pure_outputs) r.at(n).poison();
  run_reference(r.op, r.bag(), p, r.options);
  return r;
}

void ensure_lse(Call& c) {
  if (c.flags["return_lse"]) return;
  c.flags["return_lse"] = true;
  c.tensors["lse"] = Tensor(DType::f32, {tokens(c), heads(c)});
  c.written.push_back("lse");
  c.pure_outputs.push_back("lse");
}

std::uint64_t draw_seed() { return *rc::gen::arbitrary<std::uint64_t>(); }

void expect_bits(const Call& got, const Call& want, const std::string& what) {
  for (const auto& n : want.written) {
    const std::string d = bit_diff(got.at(n).view(), want.at(n).view());
    if (!d.empty()) RC_FAIL(what + ": `" + n + "` " + d);
  }
}

// The fp64 noise terms of the file comment.
double out_noise(const Magnitudes& m) {
  return 0x1p-50 * (static_cast<double>(m.max_keys) + 1.0) * (1.0 + m.max_logit) * m.max_selected;
}
double lse_noise(const Magnitudes& m) { return 0x1p-50 * (static_cast<double>(m.max_keys) + 2.0 + m.max_logit); }

// See the file comment for the recipe.
void expect_twins(const Call& got, const Call& want, const Magnitudes& m, const std::string& what) {
  const DType dt = want.at("q").dtype();
  for (const auto& name : want.written) {
    const bool out = name == "out";
    const double atol = out ? dtype_min_subnormal(dt) + out_noise(m) : 0x1p-149 + lse_noise(m);
    const double rtol = out ? dtype_eps(dt) : 0x1p-23;
    const std::string d = compare_close(got.at(name).view(), want.at(name).view(), atol, rtol);
    if (!d.empty()) RC_FAIL(what + ": `" + name + "` " + d);
  }
}

bool block_bits_equal(const Call& a, const Call& b, I t, I h) {
  const TensorView ao = a.at("out").view().select(0, t).select(0, h), bo = b.at("out").view().select(0, t).select(0, h);
  if (!bit_diff(ao, bo).empty()) return false;
  if (!b.flags.at("return_lse")) return true;
  return bit_diff(a.at("lse").view().select(0, t).select(0, h), b.at("lse").view().select(0, t).select(0, h)).empty();
}

std::string block(I t, I h) { return "[" + std::to_string(t) + ", " + std::to_string(h) + "]"; }

// The sink logit the op sees for head h before the shift: the stored value widened to fp32 (B.1).
float sink32(const Call& c, I h) { return static_cast<float>(c.at("attn_sink").view().load_flat(h)); }

double shift_of(const Call& c) {
  const auto it = c.scalars.find("replicated_logit_shift");
  return it == c.scalars.end() ? 0.0 : it->second;
}

// Replaces every non-finite value of the source rows (NaN-poisoned unselected rows) by 1, for
// properties that select every row.
void make_rows_finite(Call& c) {
  for (const auto& s : sources_of(c.op)) {
    const TensorView v = c.at(s.rows).view();
    for_each_element(v, [&](std::span<const I> i, I) {
      if (!std::isfinite(v.load(i))) v.store(i, 1.0);
    });
  }
}

// ----------------------------------------------------------------------------------------------
// Order, sources and multiplicity (C.1 consequences; AP-S5).

void permutation_invariant(std::string_view op) {
  const Call c = draw(op);
  record_call(c);
  const Call base = run(c, Precision::oracle);
  Call p = c;
  for (const auto& s : sources_of(op)) {
    Lists lists = read_lists(c, s);
    for (auto& l : lists) {
      std::reverse(l.begin(), l.end());
      // A rotation too, so lists of three or more see an order that is not a reversal.
      if (l.size() > 2) std::rotate(l.begin(), l.begin() + 1, l.end());
    }
    write_lists(p, s, lists);
  }
  expect_twins(run(p, Precision::oracle), base, magnitudes(c), "lists reversed and rotated");
}

// Moving selected pool rows into the extend source (shift 0) changes nothing: one softmax runs over
// the union of both sources.
void source_split_invariant() {
  Call c = draw(kPrefill);
  c.scalars["replicated_logit_shift"] = 0.0;
  record_call(c);
  const Call base = run(c, Precision::oracle);
  const auto srcs = sources_of(kPrefill);
  Lists prefix = read_lists(c, srcs[0]), extend = read_lists(c, srcs[1]);
  Rng rng(draw_seed());
  std::vector<std::pair<std::size_t, I>> moves;  // (token, pool row)
  for (std::size_t t = 0; t < prefix.size(); ++t) {
    auto& l = prefix[t];
    for (std::size_t j = 0; j < l.size();) {
      if (l[j] >= 0 && (rng.integer(0, 1) == 1 || moves.empty())) {
        moves.emplace_back(t, l[j]);
        l.erase(l.begin() + static_cast<std::ptrdiff_t>(j));
      } else {
        ++j;
      }
    }
  }
  RC_CLASSIFY(moves.empty(), "nothing to move");
  Call m = c;
  const I first = append_rows(m, "kv", static_cast<I>(moves.size()));
  for (std::size_t k = 0; k < moves.size(); ++k) {
    const I row = first + static_cast<I>(k);
    copy_convert(m.at("unified_kv").view().select(0, moves[k].second), m.at("kv").view().select(0, row));
    extend[moves[k].first].push_back(row);
  }
  write_lists(m, srcs[0], prefix);
  write_lists(m, srcs[1], extend);
  expect_twins(run(m, Precision::oracle), base, magnitudes(c), std::to_string(moves.size()) + " rows moved to kv");
}

// A repeated index weighs its row twice, exactly like a physical copy: same keys in the same order,
// so both references give the same bits.
void duplicate_equals_copy(std::string_view op) {
  Call c = draw(op);
  make_rows_finite(c);  // the row listed twice may be one nothing selected before
  const auto srcs = sources_of(op);
  const Source& s = srcs[*rc::gen::inRange<std::size_t>(0, srcs.size())];
  Lists lists = read_lists(c, s);
  const I rows = c.at(s.rows).view().size(0);
  std::vector<std::pair<std::size_t, I>> selected;
  for (std::size_t t = 0; t < lists.size(); ++t)
    for (I v : lists[t])
      if (v >= 0) selected.emplace_back(t, v);
  if (selected.empty() && !lists.empty() && rows > 0) selected.emplace_back(0, 0);
  RC_CLASSIFY(selected.empty(), "no row to duplicate");
  if (selected.empty()) return;
  const auto [t, row] = selected[*rc::gen::inRange<std::size_t>(0, selected.size())];
  const I copy = append_rows(c, s.rows, 1);
  copy_convert(c.at(s.rows).view().select(0, row), c.at(s.rows).view().select(0, copy));
  Call dup = c, phys = c;
  Lists a = lists, b = lists;
  a[t].insert(a[t].end(), {row, row});
  b[t].insert(b[t].end(), {row, copy});
  write_lists(dup, s, a);
  write_lists(phys, s, b);
  record_call(dup);
  for (Precision p : {Precision::oracle, Precision::faithful})
    expect_bits(run(phys, p), run(dup, p), std::string("row ") + std::to_string(row) + " listed twice vs copied");
}

// The decode sibling is the prefill with an empty extend source (F.0): in the oracle both are the
// same fp64 softmax (decode's log2 domain only changes the faithful model), so the bits agree.
void decode_equals_prefill() {
  const Call d = draw(kDecode);
  record_call(d);
  Call p;
  p.op = std::string(kPrefill);
  const I T = tokens(d), D = d.at("q").view().size(2);
  for (const char* n : {"q", "unified_kv", "attn_sink", "out"}) p.tensors[n] = d.at(n);
  p.tensors["kv_indices_prefix"] = d.at("kv_indices");
  p.tensors["kv_indptr_prefix"] = d.at("kv_indptr");
  p.tensors["kv"] = Tensor(d.at("q").dtype(), {1, D});
  p.tensors["kv_indices_extend"] = Tensor(DType::i32, {0});
  p.tensors["kv_indptr_extend"] = Tensor(DType::i32, {T + 1});
  if (d.tensors.count("lse")) p.tensors["lse"] = d.at("lse");
  p.scalars = {{"softmax_scale", d.scalars.at("softmax_scale")}, {"replicated_logit_shift", 0.0}};
  p.flags = d.flags;
  p.written = d.written;
  p.pure_outputs = d.pure_outputs;
  expect_bits(run(p, Precision::oracle), run(d, Precision::oracle), "prefill without extend vs decode");
}

// ----------------------------------------------------------------------------------------------
// Closed forms (C.1 item 7, C.3; AP-S2, AP-S3).

// Sink -inf and every row of every source selected once: plain softmax attention over all rows,
// computed here independently in fp64 (extend logits shifted, as in C.1 item 5).
void dense_softmax(std::string_view op) {
  Call c = draw(op);
  make_rows_finite(c);
  const TensorView sink = c.at("attn_sink").view();
  for (I h = 0; h < sink.numel(); ++h) sink.store(std::array<I, 1>{h}, -kInf);
  ensure_lse(c);
  Rng rng(draw_seed());
  const I T = tokens(c), H = heads(c), D = c.at("q").view().size(2);
  for (const auto& s : sources_of(op)) {
    const I rows = c.at(s.rows).view().size(0);
    Lists lists(static_cast<std::size_t>(T));
    for (auto& l : lists) {
      for (I r = 0; r < rows; ++r) l.push_back(r);
      for (I j = rows - 1; j > 0; --j) std::swap(l[static_cast<std::size_t>(j)], l[static_cast<std::size_t>(rng.integer(0, j))]);
    }
    write_lists(c, s, lists);
  }
  record_call(c);
  const Call got = run(c, Precision::oracle);

  Call want = c;
  const TensorView q = c.at("q").view();
  const double scale = c.scalars.at("softmax_scale"), shift = shift_of(c);
  std::vector<const TensorView*> rows;
  std::vector<double> shifts;
  std::vector<TensorView> views;
  for (const auto& s : sources_of(op)) views.push_back(c.at(s.rows).view());
  for (std::size_t k = 0; k < views.size(); ++k) {
    rows.push_back(&views[k]);
    shifts.push_back(sources_of(op)[k].shifted ? shift : 0.0);
  }
  for (I t = 0; t < T; ++t)
    for (I h = 0; h < H; ++h) {
      std::vector<double> logit;
      std::vector<std::pair<const TensorView*, I>> key;
      for (std::size_t k = 0; k < rows.size(); ++k)
        for (I r = 0; r < rows[k]->size(0); ++r) {
          double dot = 0.0;
          for (I d = 0; d < D; ++d) dot += q.at({t, h, d}) * rows[k]->at({r, d});
          logit.push_back(scale * dot + shifts[k]);
          key.emplace_back(rows[k], r);
        }
      double lse = -kInf;
      std::vector<double> acc(static_cast<std::size_t>(D), 0.0);
      if (!logit.empty()) {
        const double mx = *std::max_element(logit.begin(), logit.end());
        double z = 0.0;
        for (double s : logit) z += std::exp(s - mx);
        lse = mx + std::log(z);
        for (std::size_t j = 0; j < logit.size(); ++j)
          for (I d = 0; d < D; ++d) acc[static_cast<std::size_t>(d)] += std::exp(logit[j] - lse) * key[j].first->at({key[j].second, d});
      }
      for (I d = 0; d < D; ++d) want.at("out").view().store(std::array<I, 3>{t, h, d}, acc[static_cast<std::size_t>(d)]);
      want.at("lse").view().store(std::array<I, 2>{t, h}, lse);
    }
  expect_twins(got, want, magnitudes(c), "sink -inf over every row vs dense softmax");
}

// Tokens whose lists select nothing (empty spans, all sentinels) give exact zeros and lse = sigma
// = fp32(sink) + shift, or -inf for an infinite sink (C.3); the other tokens keep their bits.
void keyless_tokens(std::string_view op) {
  Call c = draw(op);
  ensure_lse(c);
  record_call(c);
  const Call base_o = run(c, Precision::oracle), base_f = run(c, Precision::faithful);
  const I T = tokens(c), H = heads(c);
  Rng rng(draw_seed());
  std::vector<bool> emptied(static_cast<std::size_t>(T), false);
  for (I t = 0; t < T; ++t) emptied[static_cast<std::size_t>(t)] = rng.integer(0, 1) == 1 || t == T - 1;
  Call m = c;
  for (const auto& s : sources_of(op)) {
    Lists lists = read_lists(c, s);
    for (I t = 0; t < T; ++t) {
      if (!emptied[static_cast<std::size_t>(t)]) continue;
      auto& l = lists[static_cast<std::size_t>(t)];
      const bool sentinels = s.sentinels && rng.integer(0, 1) == 1;
      const std::size_t n = l.size();
      l.clear();
      if (sentinels) l.assign(std::max<std::size_t>(n, 1), -1 - rng.integer(0, 5));
    }
    write_lists(m, s, lists);
  }
  const double shift = shift_of(c);
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const Call got = run(m, p);
    const Call& base = p == Precision::oracle ? base_o : base_f;
    for (I t = 0; t < T; ++t)
      for (I h = 0; h < H; ++h) {
        if (!emptied[static_cast<std::size_t>(t)]) {
          if (!block_bits_equal(got, base, t, h)) RC_FAIL("token " + std::to_string(t) + " changed although only other tokens lost their keys");
          continue;
        }
        const TensorView o = got.at("out").view();
        for (I d = 0; d < o.size(2); ++d)
          if (o.at({t, h, d}) != 0.0) RC_FAIL("keyless token: out" + block(t, h) + " is " + py_float(o.at({t, h, d})));
        const float s32 = sink32(c, h);
        // Oracle: the fp64 sum rounded once to fp32; faithful prefill: the fp32 sum the kernel
        // forms. Faithful decode works in the log2 domain (F.0 item 4): lse = (sigma * log2 e) * ln 2
        // in fp32, four roundings (two constants, two products) of 2^-24 each away from sigma.
        const bool log2_domain = p == Precision::faithful && op == kDecode;
        const double want = std::isinf(s32) ? -kInf
                            : p == Precision::oracle
                                ? static_cast<double>(static_cast<float>(static_cast<double>(s32) + shift))
                                : static_cast<double>(s32 + static_cast<float>(shift));
        const double lse = got.at("lse").view().at({t, h});
        const double slack = log2_domain && std::isfinite(want) ? 0x1p-22 * std::fabs(want) : 0.0;
        if (!(lse == want || std::fabs(lse - want) <= slack))
          RC_FAIL("keyless token: lse" + block(t, h) + " = " + py_float(lse) + ", want " + py_float(want) + " (sink " +
                  py_float(s32) + ", shift " + py_float(shift) + ", " + (p == Precision::oracle ? "oracle" : "faithful") + ")");
      }
  }
}

// A +inf sink takes all of the mass: zeros and lse -inf for that head (C.3); other heads keep
// their bits.
void sink_plus_inf(std::string_view op) {
  Call c = draw(op);
  record_call(c);
  const I H = heads(c), T = tokens(c);
  const Call base_o = run(c, Precision::oracle), base_f = run(c, Precision::faithful);
  Rng rng(draw_seed());
  std::vector<bool> inf(static_cast<std::size_t>(H), false);
  for (I h = 0; h < H; ++h) {
    inf[static_cast<std::size_t>(h)] = rng.integer(0, 1) == 1 || h == 0;
    if (inf[static_cast<std::size_t>(h)]) c.at("attn_sink").view().store(std::array<I, 1>{h}, kInf);
  }
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const Call got = run(c, p);
    const Call& base = p == Precision::oracle ? base_o : base_f;
    for (I t = 0; t < T; ++t)
      for (I h = 0; h < H; ++h) {
        if (!inf[static_cast<std::size_t>(h)]) {
          if (!block_bits_equal(got, base, t, h)) RC_FAIL("head " + std::to_string(h) + " changed with another head's sink");
          continue;
        }
        const TensorView o = got.at("out").view();
        for (I d = 0; d < o.size(2); ++d)
          if (o.at({t, h, d}) != 0.0) RC_FAIL("sink +inf: out" + block(t, h) + " is " + py_float(o.at({t, h, d})));
        if (c.flags.at("return_lse") && got.at("lse").view().at({t, h}) != -kInf)
          RC_FAIL("sink +inf: lse" + block(t, h) + " = " + py_float(got.at("lse").view().at({t, h})));
      }
  }
}

// ----------------------------------------------------------------------------------------------
// DCP merge (C.2, G.1 DCP test, AP-S4).

struct Merged {
  std::vector<double> out, lse;  // [T, H, D], [T, H]
  std::vector<double> abs_mix;   // sum_r w_r |out_r|, per element (the oracle bound scales with it)
  double max_rank_lse = 0.0;     // largest finite |lse_r|
};

Merged merge(const std::vector<Call>& ranks, I T, I H, I D) {
  Merged m;
  m.out.assign(static_cast<std::size_t>(T * H * D), 0.0);
  m.abs_mix = m.out;
  m.lse.assign(static_cast<std::size_t>(T * H), -kInf);
  for (I t = 0; t < T; ++t)
    for (I h = 0; h < H; ++h) {
      double mx = -kInf;
      for (const auto& r : ranks) {
        const double l = r.at("lse").view().at({t, h});
        mx = std::max(mx, l);
        if (std::isfinite(l)) m.max_rank_lse = std::max(m.max_rank_lse, std::fabs(l));
      }
      if (mx == -kInf) continue;  // no rank has any mass: zeros, lse -inf, like the full call
      double z = 0.0;
      for (const auto& r : ranks) z += std::exp(r.at("lse").view().at({t, h}) - mx);
      const double lse = mx + std::log(z);
      m.lse[static_cast<std::size_t>(t * H + h)] = lse;
      for (const auto& r : ranks) {
        const double w = std::exp(r.at("lse").view().at({t, h}) - lse);
        for (I d = 0; d < D; ++d) {
          const double v = r.at("out").view().at({t, h, d});
          m.out[static_cast<std::size_t>((t * H + h) * D + d)] += w * v;
          m.abs_mix[static_cast<std::size_t>((t * H + h) * D + d)] += w * std::fabs(v);
        }
      }
    }
  return m;
}

// Each rank attends to its shard of the prefix entries plus every extend entry and the sink, with
// the replicated terms shifted by -ln r; the LSE-weighted merge of the rank outputs is the full
// call. Checked against two bars:
//  * oracle: the ranks and the full call are exact up to their stores (and fp64 noise), so the
//    merge differs from the full call only by those roundings. Each rank's out is within
//    u = eps/2 relative of its exact value (round to nearest; u * (1 + eps) against the stored
//    value), and the merge is a convex mix: u * (1 + eps) * sum_r w_r |out_r|. Each stored lse_r is
//    within 2^-24 * L (L = max |lse_r|) and so is the merged lse (log-sum-exp is 1-Lipschitz in the
//    max norm), which moves every weight w_r by at most a factor exp(2^-23 * L) - 1 <= 2^-22 * L.
//    The full call's own store adds u * |full|; near zero two subnormal ulps; fp64 noise as in the
//    file comment, once per side. lse: 2^-24 * (L + |lse|) plus the fp64 noise twice.
//  * faithful (AP-S4, sglang's DCP test): out within 3e-2, lse within 3e-3 (atol and rtol). The
//    upstream bar was set on unit-variance inputs, where a bf16-rounded weight errs by 2^-9 of a
//    row of magnitude ~1; it is applied only while |q| and the selected rows stay within 4.
void dcp_merge() {
  Call c = draw(kPrefill);
  ensure_lse(c);
  record_call(c);
  const I r = *rc::gen::element<I>(2, 3, 8);
  const bool modulo = *rc::gen::arbitrary<bool>();  // upstream shards by idx % r; any partition works
  Rng rng(draw_seed());
  const auto srcs = sources_of(kPrefill);
  const Lists prefix = read_lists(c, srcs[0]);
  std::vector<Lists> shard(static_cast<std::size_t>(r), Lists(prefix.size()));
  for (std::size_t t = 0; t < prefix.size(); ++t)
    for (I v : prefix[t]) {
      const I k = modulo && v >= 0 ? v % r : rng.integer(0, r - 1);
      shard[static_cast<std::size_t>(k)][t].push_back(v);
    }
  const double shift = shift_of(c) - std::log(static_cast<double>(r));
  const I T = tokens(c), H = heads(c), D = c.at("q").view().size(2);
  const DType dt = c.at("q").dtype();
  const Magnitudes mag = magnitudes(c);
  RC_CLASSIFY(r);
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const Call full = run(c, p);
    std::vector<Call> ranks;
    for (I k = 0; k < r; ++k) {
      Call rk = c;
      rk.scalars["replicated_logit_shift"] = shift;
      write_lists(rk, srcs[0], shard[static_cast<std::size_t>(k)]);
      ranks.push_back(run(rk, p));
    }
    const Merged m = merge(ranks, T, H, D);
    const bool unit = mag.max_q <= 4.0 && mag.max_selected <= 4.0;
    if (p == Precision::faithful && !unit) continue;
    const double u = dtype_eps(dt) / 2;
    const double L = m.max_rank_lse;
    for (I t = 0; t < T; ++t)
      for (I h = 0; h < H; ++h) {
        const double fl = full.at("lse").view().at({t, h}), ml = m.lse[static_cast<std::size_t>(t * H + h)];
        const double lbound = p == Precision::oracle ? 0x1p-24 * (L + std::fabs(fl)) + 2 * lse_noise(mag)
                                                     : 3e-3 + 3e-3 * std::fabs(fl);
        const bool lse_ok = fl == ml || std::fabs(fl - ml) <= lbound;
        if (!lse_ok)
          RC_FAIL(std::string(p == Precision::oracle ? "oracle" : "faithful") + " DCP merge over " + std::to_string(r) +
                  " ranks: lse" + block(t, h) + " merged " + py_float(ml) + " vs full " + py_float(fl) +
                  " (bound " + py_float(lbound) + ")");
        for (I d = 0; d < D; ++d) {
          const std::size_t e = static_cast<std::size_t>((t * H + h) * D + d);
          const double fo = full.at("out").view().at({t, h, d}), mo = m.out[e];
          const double obound = p == Precision::oracle
                                    ? (u * (1 + dtype_eps(dt)) + 0x1p-22 * L) * m.abs_mix[e] + u * std::fabs(fo) +
                                          2 * dtype_min_subnormal(dt) + 2 * out_noise(mag)
                                    : 3e-2 + 3e-2 * std::fabs(fo);
          if (!(std::fabs(fo - mo) <= obound))
            RC_FAIL(std::string(p == Precision::oracle ? "oracle" : "faithful") + " DCP merge over " +
                    std::to_string(r) + " ranks: out[" + std::to_string(t) + ", " + std::to_string(h) + ", " +
                    std::to_string(d) + "] merged " + py_float(mo) + " vs full " + py_float(fo) +
                    " (bound " + py_float(obound) + ")");
        }
      }
  }
}

// ----------------------------------------------------------------------------------------------
// Layout, determinism (AP-S8; issue 7 "Properties" 2).

void layout_invariant(std::string_view op) {
  const bool special = *rc::gen::arbitrary<bool>();
  const Call c = draw(op, {special, false});
  record_call(c);
  Call l = c;
  for (const char* n : {"q", "out", "unified_kv", "kv"})
    if (l.tensors.count(n)) l.tensors[n] = other_layout(l.at(n), draw_seed());
  for (Precision p : {Precision::oracle, Precision::faithful})
    expect_bits(run(l, p), run(c, p), "q/out/KV sources in other layouts");
}

// Two runs give the same bits, whatever the output buffers held before (pure outputs are never read).
void deterministic(std::string_view op) {
  const bool special = *rc::gen::arbitrary<bool>();
  const Call c = draw(op, {special, false});
  record_call(c);
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const Call first = run(c, p);
    Call again = c;
    for (const auto& n : again.pure_outputs) again.at(n).fill(3.0);
    run_reference(again.op, again.bag(), p, again.options);
    expect_bits(again, first, "second run over stale outputs");
  }
}

// ----------------------------------------------------------------------------------------------
// Special values (C.3; AP-S6; issue 7 "Properties" 4).

// Rows that no token selects (including rows a sentinel might be mistaken for) never influence
// anything: filling them with NaN, +-Inf or huge values keeps every bit. The call stays valid
// under the strict contract, which scans selected rows only.
void unselected_inert(std::string_view op) {
  Call c = draw(op);
  const auto srcs = sources_of(op);
  bool any = false;
  for (const auto& s : srcs) {
    const auto sel = selected_rows(c, s);
    any = any || std::find(sel.begin(), sel.end(), false) != sel.end();
  }
  if (!any) append_rows(c, srcs[*rc::gen::inRange<std::size_t>(0, srcs.size())].rows, 1);
  record_call(c);
  const Call base_o = run(c, Precision::oracle), base_f = run(c, Precision::faithful);
  const double fill = *rc::gen::element(kNaN, kInf, -kInf, 3.0e38);
  for (const auto& s : srcs) {
    const auto sel = selected_rows(c, s);
    const TensorView v = c.at(s.rows).view();
    for (std::size_t r = 0; r < sel.size(); ++r)
      if (!sel[r])
        for (I d = 0; d < v.size(1); ++d) v.store(std::array<I, 2>{static_cast<I>(r), d}, fill);
  }
  expect_bits(run(c, Precision::oracle), base_o, "unselected rows filled with " + py_float(fill));
  expect_bits(run(c, Precision::faithful), base_f, "unselected rows filled with " + py_float(fill));
}

// Per token, whether it selects `row` of `s` through a non-negative entry.
std::vector<bool> tokens_selecting(const Call& c, const Source& s, I row) {
  const Lists lists = read_lists(c, s);
  std::vector<bool> out(lists.size(), false);
  for (std::size_t t = 0; t < lists.size(); ++t) out[t] = std::find(lists[t].begin(), lists[t].end(), row) != lists[t].end();
  return out;
}

bool all_nan_block(const Call& c, I t, I h) {
  const TensorView o = c.at("out").view();
  for (I d = 0; d < o.size(2); ++d)
    if (!std::isnan(o.at({t, h, d}))) return false;
  return !c.flags.at("return_lse") || std::isnan(c.at("lse").view().at({t, h}));
}

// A NaN in a selected row makes every logit of each token selecting it NaN; a NaN in q[t, h, :]
// does so for (t, h) when the token has any key. Those (t, h) give NaN in all of out and in lse,
// unless the head's sink is +inf, whose zero branch wins (C.3). Everything else keeps its bits.
void selected_nan(std::string_view op) {
  const Call c = draw(op);
  record_call(c);
  const I T = tokens(c), H = heads(c), D = c.at("q").view().size(2);
  std::vector<std::pair<const char*, I>> sel;  // (rows tensor, row)
  const auto srcs = sources_of(op);
  for (std::size_t k = 0; k < srcs.size(); ++k) {
    const auto rows = selected_rows(c, srcs[k]);
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (rows[r]) sel.emplace_back(srcs[k].rows, static_cast<I>(r));
  }
  const bool in_q = sel.empty() || *rc::gen::arbitrary<bool>();
  RC_CLASSIFY(in_q, "NaN in q");
  if (in_q && T == 0) return;
  Call m = c;
  m.options = kNoDataChecks;
  // poisoned[t][h]: which (t, h) must turn NaN.
  std::vector<std::vector<bool>> poisoned(static_cast<std::size_t>(T), std::vector<bool>(static_cast<std::size_t>(H), false));
  if (in_q) {
    const I t = *rc::gen::inRange<I>(0, T), h = *rc::gen::inRange<I>(0, H), d = *rc::gen::inRange<I>(0, D);
    m.at("q").view().store(std::array<I, 3>{t, h, d}, kNaN);
    poisoned[static_cast<std::size_t>(t)][static_cast<std::size_t>(h)] = has_keys(c)[static_cast<std::size_t>(t)];
  } else {
    const auto [name, row] = sel[*rc::gen::inRange<std::size_t>(0, sel.size())];
    m.at(name).view().store(std::array<I, 2>{row, *rc::gen::inRange<I>(0, D)}, kNaN);
    for (const auto& s : srcs) {
      if (std::string_view(s.rows) != name) continue;
      const auto hit = tokens_selecting(c, s, row);
      for (I t = 0; t < T; ++t)
        if (hit[static_cast<std::size_t>(t)]) poisoned[static_cast<std::size_t>(t)].assign(static_cast<std::size_t>(H), true);
    }
  }
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const Call base = run(c, p), got = run(m, p);
    for (I t = 0; t < T; ++t)
      for (I h = 0; h < H; ++h) {
        const bool nan = poisoned[static_cast<std::size_t>(t)][static_cast<std::size_t>(h)] && sink32(c, h) != kInf;
        if (nan && !all_nan_block(got, t, h)) RC_FAIL("NaN input did not reach out/lse" + block(t, h));
        if (!nan && !block_bits_equal(got, base, t, h)) RC_FAIL("NaN input leaked into out/lse" + block(t, h));
      }
  }
}

// An infinite element at channel d of a selected row gives NaN at out[t, h, d] for every token
// selecting it and every head with a finite sink: either the logit is NaN or +inf (everything NaN),
// or it is -inf and its zero weight times Inf is NaN in that channel (C.3: "NaN propagates"). lse
// is then finite, so only channel d is asserted. Tokens not selecting the row keep their bits.
void selected_inf(std::string_view op) {
  const Call c = draw(op);
  const auto srcs = sources_of(op);
  std::vector<std::pair<std::size_t, I>> sel;
  for (std::size_t k = 0; k < srcs.size(); ++k) {
    const auto rows = selected_rows(c, srcs[k]);
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (rows[r]) sel.emplace_back(k, static_cast<I>(r));
  }
  RC_CLASSIFY(sel.empty(), "nothing selected");
  if (sel.empty()) return;
  record_call(c);
  const I T = tokens(c), H = heads(c), D = c.at("q").view().size(2);
  const auto [k, row] = sel[*rc::gen::inRange<std::size_t>(0, sel.size())];
  const I d = *rc::gen::inRange<I>(0, D);
  const double v = *rc::gen::arbitrary<bool>() ? kInf : -kInf;
  Call m = c;
  m.options = kNoDataChecks;
  m.at(srcs[k].rows).view().store(std::array<I, 2>{row, d}, v);
  const auto hit = tokens_selecting(c, srcs[k], row);
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const Call base = run(c, p), got = run(m, p);
    for (I t = 0; t < T; ++t)
      for (I h = 0; h < H; ++h) {
        if (!hit[static_cast<std::size_t>(t)]) {
          if (!block_bits_equal(got, base, t, h)) RC_FAIL("Inf in an unselected row changed out/lse" + block(t, h));
          continue;
        }
        if (std::isfinite(sink32(c, h)) && !std::isnan(got.at("out").view().at({t, h, d})))
          RC_FAIL("Inf in a selected row: out[" + std::to_string(t) + ", " + std::to_string(h) + ", " +
                  std::to_string(d) + "] = " + py_float(got.at("out").view().at({t, h, d})));
      }
  }
}

// Over the generator's special-value mode, a (t, h) whose inputs are all finite (q[t, h, :], every
// row the token selects, a sink that is not NaN or +inf) gets a finite oracle out: the fp64 softmax
// cannot overflow on storage-dtype inputs, and a convex mix of rows stays within their range. lse
// may overflow its fp32 store but is never NaN there.
void special_values_locality(std::string_view op) {
  const Call c = draw(op, {true, false});
  record_call(c);
  const Call got = run(c, Precision::oracle);
  const I T = tokens(c), H = heads(c), D = c.at("q").view().size(2);
  const auto srcs = sources_of(op);
  std::vector<bool> finite_rows(static_cast<std::size_t>(T), true);
  for (const auto& s : srcs) {
    const Lists lists = read_lists(c, s);
    const TensorView rows = c.at(s.rows).view();
    for (I t = 0; t < T; ++t)
      for (I v : lists[static_cast<std::size_t>(t)]) {
        if (v < 0) continue;
        for (I d = 0; d < D; ++d)
          if (!std::isfinite(rows.at({v, d}))) finite_rows[static_cast<std::size_t>(t)] = false;
      }
  }
  const TensorView q = c.at("q").view(), out = got.at("out").view();
  for (I t = 0; t < T; ++t)
    for (I h = 0; h < H; ++h) {
      bool finite = finite_rows[static_cast<std::size_t>(t)] && !std::isnan(sink32(c, h)) && sink32(c, h) != kInf;
      for (I d = 0; d < D && finite; ++d) finite = std::isfinite(q.at({t, h, d}));
      if (!finite) continue;
      for (I d = 0; d < D; ++d)
        if (!std::isfinite(out.at({t, h, d})))
          RC_FAIL("finite inputs, non-finite out[" + std::to_string(t) + ", " + std::to_string(h) + ", " +
                  std::to_string(d) + "] = " + py_float(out.at({t, h, d})));
      if (c.flags.at("return_lse") && std::isnan(got.at("lse").view().at({t, h})))
        RC_FAIL("finite inputs, NaN lse" + block(t, h));
    }
}

// The faithful model is a usable baseline for the differential rule: on unit-scale inputs it meets
// the upstream acceptance bar against the oracle (AP-S1: atol = rtol = 2e-2), so it is neither
// broken nor accidentally exact everywhere.
void faithful_near_oracle(std::string_view op) {
  const Call c = draw(op);
  record_call(c);
  const Magnitudes m = magnitudes(c);
  RC_CLASSIFY(m.max_q > 4.0 || m.max_selected > 4.0, "not unit-scale, skipped");
  if (m.max_q > 4.0 || m.max_selected > 4.0) return;
  const Call o = run(c, Precision::oracle), f = run(c, Precision::faithful);
  for (const auto& n : c.written) {
    const std::string d = compare_close(f.at(n).view(), o.at(n).view(), 2e-2, 2e-2);
    if (!d.empty()) RC_FAIL("faithful vs oracle `" + n + "` " + d);
  }
}

}  // namespace

std::vector<Property> sparse_properties() {
  std::vector<Property> props;
  auto add = [&](std::string_view op, const char* rel, std::function<void()> body) {
    props.push_back({std::string(op) + "/" + rel, "metamorphic", std::move(body)});
  };
  for (std::string_view op : {kPrefill, kDecode}) {
    add(op, "permutation-invariant", [op] { permutation_invariant(op); });
    add(op, "duplicate-equals-copy", [op] { duplicate_equals_copy(op); });
    add(op, "dense-softmax-without-sink", [op] { dense_softmax(op); });
    add(op, "keyless-tokens-exact", [op] { keyless_tokens(op); });
    add(op, "sink-plus-inf-zeros", [op] { sink_plus_inf(op); });
    add(op, "layout-invariant", [op] { layout_invariant(op); });
    add(op, "deterministic", [op] { deterministic(op); });
    add(op, "unselected-nonfinite-inert", [op] { unselected_inert(op); });
    add(op, "selected-nan-propagates", [op] { selected_nan(op); });
    add(op, "selected-inf-gives-nan", [op] { selected_inf(op); });
    add(op, "special-values-locality", [op] { special_values_locality(op); });
    add(op, "faithful-near-oracle", [op] { faithful_near_oracle(op); });
  }
  add(kPrefill, "source-split-invariant", source_split_invariant);
  add(kPrefill, "dcp-merge", dcp_merge);
  add(kDecode, "equals-prefill-without-extend", decode_equals_prefill);
  return props;
}

}  // namespace kparity::fuzz
