// kda/chunk properties (kda_chunk_properties.hpp), on calls from generators/kda_chunk_gen.hpp. The
// first two are exact: the reference runs the same recurrence steps in the same order. The split
// is exact in faithful mode (its state is fp32 between tokens, as final_state stores it) and, in
// the oracle, within the differential rule: the oracle keeps the state in fp64 and the split rounds
// it to fp32 once.
#include <algorithm>
#include <cmath>
#include <rapidcheck.h>
#include <sstream>

#include "kparity/fuzz/generators/kda_chunk_gen.hpp"
#include "kparity/fuzz/generators/kda_gen.hpp"
#include "kparity/fuzz/properties/kda_chunk_properties.hpp"
#include "kparity/fuzz/properties/kda_support.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;
using reference::Precision;
constexpr Precision kBoth[] = {Precision::faithful, Precision::oracle};
constexpr std::string_view kChunk = "kda/chunk";

Call draw() {
  Call c = draw_kda_chunk(GenConfig{});
  RC_LOG() << c.description << "\n";
  record_call(c);
  return c;
}

bool writes_final(const Call& c) { return std::find(c.written.begin(), c.written.end(), "final_state") != c.written.end(); }

// Bit for bit, both precisions.
void equals_recurrent() {
  const Call c = draw();
  for (Precision p : kBoth) {
    Call chunk = c;
    run_kda(chunk, p);
    Call rec = chunk_as_recurrent(c, p);
    run_kda(rec, p);
    for (const auto& name : c.written) {
      const Tensor want = recurrent_result_as_chunk(rec, chunk, name);
      const std::string diff = first_difference(chunk.at(name).view(), want.view(), Compare::bytes);
      RC_LOG() << precision_name(p) << " " << name << ": " << (diff.empty() ? "same" : diff) << "\n";
      RC_ASSERT(diff.empty());
    }
  }
}

// Each sequence run alone (varlen with one sequence, or one row without cu_seqlens) gives its
// tokens and final state bit for bit.
void varlen_equals_separate() {
  const Call c = draw();
  const auto seqs = chunk_sequences(c);
  const bool varlen = *rc::gen::arbitrary<bool>();
  for (Precision p : kBoth) {
    Call whole = c;
    run_kda(whole, p);
    for (I n = 0; n < static_cast<I>(seqs.size()); ++n) {
      const ChunkSequence& sq = seqs[static_cast<std::size_t>(n)];
      Call one = select_chunk_tokens(c, {{n, 0, sq.len}}, varlen);
      run_kda(one, p);
      for (I t = 0; t < sq.len; ++t) {
        const std::string diff = first_difference(whole.at("out").view().select(0, sq.row).select(0, sq.bos + t),
                                                  one.at("out").view().select(0, 0).select(0, t), Compare::bytes);
        RC_LOG() << precision_name(p) << " sequence " << n << " token " << t << ": " << (diff.empty() ? "same" : diff) << "\n";
        RC_ASSERT(diff.empty());
      }
      if (writes_final(c)) {
        const std::string diff = first_difference(whole.at("final_state").view().select(0, n),
                                                  one.at("final_state").view().select(0, 0), Compare::bytes);
        RC_LOG() << precision_name(p) << " sequence " << n << " final_state: " << (diff.empty() ? "same" : diff) << "\n";
        RC_ASSERT(diff.empty());
      }
    }
  }
}

// The largest |a - b| over elements where both are finite, and whether the non-finite classes of
// a and b agree (NaN with NaN, +inf with +inf, -inf with -inf).
struct Gap {
  double max = 0;
  bool classes_agree = true;
};
Gap gap(const TensorView& a, const TensorView& b) {
  Gap g;
  for_each_element(a, [&](std::span<const I> i, I) {
    const double x = a.load(i), y = b.load(i);
    if (std::isfinite(x) && std::isfinite(y)) g.max = std::max(g.max, std::fabs(x - y));
    else if (!(std::isnan(x) && std::isnan(y)) && x != y) g.classes_agree = false;
  });
  return g;
}

// Every sequence split at a drawn token (one position for all rows of an equal-length call) and run
// as two calls, the second starting from the first's final state.
void chunk_boundary_invariance() {
  const Call c = draw();
  const auto seqs = chunk_sequences(c);
  const bool varlen = c.tensors.count("cu_seqlens") != 0;
  std::vector<ChunkPiece> head, tail;
  const I common = seqs.empty() ? 0 : *uniform_int(0, seqs[0].len);
  for (I n = 0; n < static_cast<I>(seqs.size()); ++n) {
    const I len = seqs[static_cast<std::size_t>(n)].len;
    const I at = varlen ? *uniform_int(0, len) : common;
    head.push_back({n, 0, at});
    tail.push_back({n, at, len});
  }
  RC_LOG() << "split at";
  for (const auto& h : head) RC_LOG() << " " << h.to;
  RC_LOG() << "\n";

  // The first part always returns its final state, in the call's layout.
  Call first = select_chunk_tokens(c, head, varlen);
  if (!writes_final(first)) {
    const TensorView v = c.at("v").view(), q = c.at("q").view();
    const I N = static_cast<I>(seqs.size()), HV = v.size(2), V = v.size(3), K = q.size(3);
    const bool vf = chunk_state_v_first(c);
    first.tensors.insert_or_assign("final_state", Tensor(DType::f32, vf ? Shape{N, HV, V, K} : Shape{N, HV, K, V}).poison());
    first.flags["output_final_state"] = true;
    first.written.push_back("final_state");
    first.pure_outputs.push_back("final_state");
  }
  std::map<Precision, Call> whole;
  for (Precision p : kBoth) run_kda(whole.emplace(p, c).first->second, p);
  for (Precision p : kBoth) {
    Call a = first;
    run_kda(a, p);
    Call b = select_chunk_tokens(c, tail, varlen);
    b.tensors.insert_or_assign("initial_state", a.at("final_state"));
    run_kda(b, p);
    const Call& w = whole.at(p);
    // out of the split calls, token by token, against the whole call; the bound for the oracle's
    // tail: the differential rule with the faithful whole as the reference error.
    const double out_bound = std::max(2 * gap(whole.at(Precision::faithful).at("out").view(), whole.at(Precision::oracle).at("out").view()).max,
                                      kda_chunk_abs_floor(c, "out"));
    for (I n = 0; n < static_cast<I>(seqs.size()); ++n) {
      const ChunkSequence& sq = seqs[static_cast<std::size_t>(n)];
      const I at = head[static_cast<std::size_t>(n)].to;
      const I row_a = varlen ? 0 : n, row_b = row_a;
      I off_a = 0, off_b = 0;  // where sequence n starts in the split calls' token axis
      if (varlen)
        for (I m = 0; m < n; ++m) off_a += head[static_cast<std::size_t>(m)].to, off_b += tail[static_cast<std::size_t>(m)].to - tail[static_cast<std::size_t>(m)].from;
      for (I t = 0; t < sq.len; ++t) {
        const TensorView got = t < at ? a.at("out").view().select(0, row_a).select(0, off_a + t)
                                      : b.at("out").view().select(0, row_b).select(0, off_b + t - at);
        const TensorView want = w.at("out").view().select(0, sq.row).select(0, sq.bos + t);
        // The head runs exactly the whole call's first steps; so does every faithful step.
        if (t < at || p == Precision::faithful) {
          const std::string diff = first_difference(got, want, Compare::bytes);
          RC_LOG() << precision_name(p) << " sequence " << n << " token " << t << ": " << (diff.empty() ? "same" : diff) << "\n";
          RC_ASSERT(diff.empty());
        } else {
          const Gap g = gap(got, want);
          RC_LOG() << "oracle sequence " << n << " token " << t << ": gap " << g.max << " <= " << out_bound << "\n";
          RC_ASSERT(g.classes_agree);
          RC_ASSERT(g.max <= out_bound);
        }
      }
    }
    if (writes_final(c)) {
      const TensorView got = b.at("final_state").view(), want = w.at("final_state").view();
      if (p == Precision::faithful) {
        const std::string diff = first_difference(got, want, Compare::bytes);
        RC_LOG() << "faithful final_state: " << (diff.empty() ? "same" : diff) << "\n";
        RC_ASSERT(diff.empty());
      } else {
        const double bound = std::max(2 * gap(whole.at(Precision::faithful).at("final_state").view(), want).max,
                                      kda_chunk_abs_floor(c, "final_state"));
        const Gap g = gap(got, want);
        RC_LOG() << "oracle final_state: gap " << g.max << " <= " << bound << "\n";
        RC_ASSERT(g.classes_agree);
        RC_ASSERT(g.max <= bound);
      }
    }
  }
}

}  // namespace

std::vector<Property> kda_chunk_properties() {
  std::vector<Property> v;
  const auto add = [&](std::string relation, std::function<void()> body) {
    Property p;
    p.op = std::string(kChunk);
    p.name = std::string(kChunk) + "/" + std::move(relation);
    p.kind = "metamorphic";
    p.body = std::move(body);
    p.buckets = kda_chunk_buckets(GenConfig{});
    v.push_back(std::move(p));
  };
  add("equals-recurrent", equals_recurrent);
  add("varlen-equals-separate", varlen_equals_separate);
  add("chunk-boundary-invariance", chunk_boundary_invariance);
  return v;
}

}  // namespace kparity::fuzz
