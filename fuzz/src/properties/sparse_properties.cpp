// Metamorphic properties of the sparse-attention references (spec sparse_attention.md C, G.2) over
// calls drawn by sparse_specs(). The result depends on each token's multiset of selected rows, the
// sink and the shift, and on nothing else: not the order of a list, the source a row sits in, the
// layout, the output buffer's old contents, or rows nobody selects.
// The special-values half is in sparse_special_properties.cpp, the shared helpers and the
// tolerance recipe in sparse_support.hpp.
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
#include "kparity/fuzz/generators/sparse_gen.hpp"
#include "kparity/fuzz/properties/compare.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/ops/op_table.hpp"
#include "sparse_support.hpp"

namespace kparity::fuzz {
namespace {

using namespace sparse_fuzz;
using reference::Precision;

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
  if (moves.empty()) return note_early_return("nothing to move: the prefix lists select no row");
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
  if (selected.empty()) return note_early_return("no row to duplicate");
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
    if (p == Precision::faithful && !unit) {
      note_early_return("faithful branch skipped: not unit-scale");
      continue;
    }
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
    ops::run_reference(again.op, again.bag(), p, again.options);
    expect_bits(again, first, "second run over stale outputs");
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
  if (m.max_q > 4.0 || m.max_selected > 4.0) return note_early_return("not unit-scale");
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
  // Bounds on unchecked cases (property.hpp) for the relations that hold only on part of what the
  // shared generator draws. Binomial noise at the CI tier's 100 cases: 3 sqrt(p (1 - p) / 100) <= 0.15.
  //  * unit scale (|q|, |selected kv| <= 4): sparse_gen draws q "wide" (6 N(0,1)) with weight 2/12 and
  //    kv with 2/11, so 1 - (10/12)(9/11) = 0.32 of calls are not unit-scale, plus normal draws past
  //    4 sigma in large tensors (a few %): 0.32 + 0.03 + 0.15 = 0.50.
  //  * a selected row: T = 0 (weight 1/11 = 0.09) and lists that select nothing (empty-list and
  //    all-sentinel edges); issue 19 measured 15-32 % with the unit-scale skip included. Measured
  //    after the merge (100 cases, seeds 1-3): decode selected-inf-gives-nan (now selected-inf-by-logit,
  //    the same draws and skips) 0.24/0.24/0.19, the
  //    rest 0.09-0.22; 0.24 + 3 sqrt(0.24 * 0.76 / 100) = 0.37, so 0.40.
  const auto bound = [&](double share, const char* why) {
    props.back().max_discard_share = share;
    props.back().discard_why = why;
  };
  constexpr const char* kUnit = "the relation holds at unit scale only; 0.32 of draws are wide (sparse_properties.cpp)";
  constexpr const char* kSelected = "needs a selected row; T = 0 and all-empty lists are drawn edges (sparse_properties.cpp)";
  for (std::string_view op : {kPrefill, kDecode}) {
    add(op, "permutation-invariant", [op] { permutation_invariant(op); });
    add(op, "duplicate-equals-copy", [op] { duplicate_equals_copy(op); });
    bound(0.40, kSelected);
    add(op, "dense-softmax-without-sink", [op] { dense_softmax(op); });
    add(op, "keyless-tokens-exact", [op] { keyless_tokens(op); });
    add(op, "sink-plus-inf-zeros", [op] { sink_plus_inf(op); });
    add(op, "layout-invariant", [op] { layout_invariant(op); });
    add(op, "deterministic", [op] { deterministic(op); });
    add(op, "unselected-nonfinite-inert", [op] { unselected_inert(op); });
    add(op, "selected-nan-zeros", [op] { selected_nan(op); });
    bound(0.40, kSelected);
    add(op, "selected-inf-by-logit", [op] { selected_inf(op); });
    bound(0.40, kSelected);
    add(op, "special-values-locality", [op] { special_values_locality(op); });
    add(op, "faithful-near-oracle", [op] { faithful_near_oracle(op); });
    bound(0.50, kUnit);
  }
  add(kPrefill, "source-split-invariant", source_split_invariant);
  bound(0.40, kSelected);
  add(kPrefill, "dcp-merge", dcp_merge);
  bound(0.50, kUnit);
  add(kDecode, "equals-prefill-without-extend", decode_equals_prefill);
  return props;
}

}  // namespace kparity::fuzz
