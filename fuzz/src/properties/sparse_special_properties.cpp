// The sparse special-values properties (spec sparse_attention.md C.3; AP-S6; issue 7 "Properties"
// 4): non-finite values where nobody reads them change nothing, NaN and Inf in what is read act
// exactly as upstream's kernels measured (docs/upstream_conventions.md: a NaN or +inf that reaches
// the softmax denominator gives the head exact zeros and lse -inf; a key of logit -inf leaves NaN
// only where its zero weight meets an infinite value), and finite inputs give finite outputs.
#include <cmath>
#include <rapidcheck.h>

#include "kparity/core/format.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "sparse_support.hpp"

namespace kparity::fuzz::sparse_fuzz {
namespace {

using reference::Precision;

// Rows that no token selects (including rows a sentinel might be mistaken for) never influence
// anything: filling them with NaN, +-Inf or huge values keeps every bit. The call stays valid
// under the strict contract, which scans selected rows only.
}  // namespace

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

namespace {

// Per token, whether it selects `row` of `s` through a non-negative entry.
std::vector<bool> tokens_selecting(const Call& c, const Source& s, I row) {
  const Lists lists = read_lists(c, s);
  std::vector<bool> out(lists.size(), false);
  for (std::size_t t = 0; t < lists.size(); ++t) out[t] = std::find(lists[t].begin(), lists[t].end(), row) != lists[t].end();
  return out;
}

// Upstream's zero head: out[t, h, :] all +0 and, with return_lse, lse[t, h] = -inf (sglang's
// `where(l > 0, ..., 0)` when Z is 0 or NaN; docs/upstream_conventions.md).
bool zero_block(const Call& c, I t, I h) {
  const TensorView o = c.at("out").view();
  for (I d = 0; d < o.size(2); ++d)
    if (const double v = o.at({t, h, d}); v != 0.0 || std::signbit(v)) return false;
  return !c.flags.at("return_lse") || c.at("lse").view().at({t, h}) == -kInf;
}

}  // namespace

// A NaN in a selected row makes every logit of each token selecting it NaN; a NaN in q[t, h, :]
// does so for (t, h) when the token has any key. Upstream's running max drops NaN, so it reaches
// only the denominator: those (t, h) give the zero head, out all +0 and lse -inf (sglang prefill
// and decode, measured on the H200; docs/upstream_conventions.md). Everything else keeps its bits.
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
  if (in_q && T == 0) return note_early_return("no token to poison");
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
        // A +inf or NaN sink already gives the zero head, so it needs no exception here.
        const bool zeros = poisoned[static_cast<std::size_t>(t)][static_cast<std::size_t>(h)];
        if (zeros && !zero_block(got, t, h)) RC_FAIL("NaN input did not give the zero head (out +0, lse -inf)" + block(t, h));
        if (!zeros && !block_bits_equal(got, base, t, h)) RC_FAIL("NaN input leaked into out/lse" + block(t, h));
      }
  }
}

// An infinite element v at channel d of a selected row, for each token selecting it and each head:
// the row's exact logit is (finite + q[t, h, d] * v) * scale (+ shift), scale > 0, so its class is
// NaN (q_d = 0: 0 * inf), +inf or -inf. NaN or +inf reaches the denominator (inf - inf): the zero
// head (docs/upstream_conventions.md), as does a NaN or +inf sink. -inf: the key's weight is exactly
// 0 and only channel d gets 0 * inf = NaN, while Z > 0; Z = 0 (a -inf sink and no other key) gives
// the zero head (sglang prefill's 0; its decode writes NaN there, an upstream inconsistency that
// kparity does not follow). Tokens not selecting the row keep their bits.
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
  if (sel.empty()) return note_early_return("nothing selected");
  record_call(c);
  const I T = tokens(c), H = heads(c), D = c.at("q").view().size(2);
  const auto [k, row] = sel[*rc::gen::inRange<std::size_t>(0, sel.size())];
  const I d = *rc::gen::inRange<I>(0, D);
  const double v = *rc::gen::arbitrary<bool>() ? kInf : -kInf;
  Call m = c;
  m.options = kNoDataChecks;
  m.at(srcs[k].rows).view().store(std::array<I, 2>{row, d}, v);
  const auto hit = tokens_selecting(c, srcs[k], row);
  // Per token, whether it selects any key besides `row` of this source (other rows are finite).
  std::vector<bool> other_key(static_cast<std::size_t>(T), false);
  for (std::size_t s = 0; s < srcs.size(); ++s) {
    const Lists lists = read_lists(c, srcs[s]);
    for (I t = 0; t < T; ++t)
      for (I e : lists[static_cast<std::size_t>(t)])
        if (e >= 0 && (s != k || e != row)) other_key[static_cast<std::size_t>(t)] = true;
  }
  const TensorView q = c.at("q").view();
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const Call base = run(c, p), got = run(m, p);
    const TensorView out = got.at("out").view();
    for (I t = 0; t < T; ++t)
      for (I h = 0; h < H; ++h) {
        if (!hit[static_cast<std::size_t>(t)]) {
          if (!block_bits_equal(got, base, t, h)) RC_FAIL("Inf in an unselected row changed out/lse" + block(t, h));
          continue;
        }
        const double qd = q.at({t, h, d}), sig = sink32(c, h);
        const bool minus_inf_logit = qd != 0.0 && (qd > 0) != (v > 0);
        RC_CLASSIFY(minus_inf_logit, "logit -inf");
        const bool zeros = std::isnan(sig) || sig == kInf || !minus_inf_logit ||
                           (sig == -kInf && !other_key[static_cast<std::size_t>(t)]);
        if (zeros) {
          if (!zero_block(got, t, h)) RC_FAIL("Inf in a selected row: not the zero head (out +0, lse -inf)" + block(t, h));
          continue;
        }
        for (I e = 0; e < D; ++e)
          if (std::isnan(out.at({t, h, e})) != (e == d))
            RC_FAIL("Inf in a selected row, logit -inf: out[" + std::to_string(t) + ", " + std::to_string(h) + ", " +
                    std::to_string(e) + "] = " + py_float(out.at({t, h, e})) + " (NaN expected only at channel " +
                    std::to_string(d) + ")");
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

}  // namespace kparity::fuzz::sparse_fuzz
