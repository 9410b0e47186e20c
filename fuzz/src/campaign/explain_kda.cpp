// The sequence-length knob of the KDA sequence ops, kda/recurrent and kda/chunk (campaign/explain.hpp).
// A shrunk call usually has sequences of one token, all inside one chunk, so "only the last chunk of
// each sequence is bad" cannot show on it. The knob lengthens every non-empty sequence to span
// two chunks, its own tokens repeated cyclically (the same value family, no fresh draw), and
// asks the explain step to locate the bad elements on that longer call too (Knob::locate).
#include <algorithm>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "explain_knobs.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"

namespace kparity::fuzz::explain_detail {
namespace {

using I = std::int64_t;

// The tensors with a token axis (axis 0 for kda/recurrent [T, ...], axis 1 for kda/chunk [B, T, ...]).
const std::set<std::string> kTokenTensors = {"q", "k", "v", "g", "a", "beta", "out"};

struct Sequences {
  bool varlen = false;
  std::vector<I> bos, len;  // per sequence (varlen) or per batch row (dense: bos 0)
};

Sequences sequences_of(const Call& c, int axis) {
  Sequences s;
  const TensorView q = c.at("q").view();
  if (c.tensors.count("cu_seqlens")) {
    s.varlen = true;
    const TensorView cu = c.at("cu_seqlens").view();
    for (I n = 0; n + 1 < cu.numel(); ++n) s.bos.push_back(cu.load_int_flat(n)), s.len.push_back(cu.load_int_flat(n + 1) - cu.load_int_flat(n));
  } else {
    const I rows = axis == 1 ? q.size(0) : 1;
    for (I b = 0; b < rows; ++b) s.bos.push_back(0), s.len.push_back(q.size(axis));
  }
  return s;
}

Tensor offsets_like(const Tensor& old, const std::vector<I>& len) {
  Tensor t(old.dtype(), {static_cast<I>(len.size()) + 1});
  I acc = 0;
  for (std::size_t n = 0; n <= len.size(); ++n) {
    const I i = static_cast<I>(n);
    t.view().store_int(std::span<const I>(&i, 1), acc);
    if (n < len.size()) acc += len[n];
  }
  return t;
}

// `c` with every non-empty sequence L tokens long: new token p of sequence n is old token
// bos[n] + p % len[n]. Token tensors keep their dtype; a strided one stays strided (padded).
Call lengthened(const Call& c, int axis, I L) {
  const Sequences s = sequences_of(c, axis);
  std::vector<I> len(s.len.size()), bos(s.len.size());
  I total = 0;
  for (std::size_t n = 0; n < s.len.size(); ++n) bos[n] = total, len[n] = s.len[n] > 0 ? L : 0, total += len[n];
  const I Tn = s.varlen ? total : L;
  // new token -> old token (within the same batch row)
  std::vector<I> from(static_cast<std::size_t>(Tn), 0);
  for (std::size_t n = 0; n < len.size(); ++n) {
    if (!s.varlen && n > 0) break;  // dense rows share one map: every row is L long
    for (I p = 0; p < len[n]; ++p) from[static_cast<std::size_t>(bos[n] + p)] = s.bos[n] + p % s.len[n];
  }
  Call out = c;
  for (auto& [name, t] : out.tensors) {
    if (!kTokenTensors.count(name) || t.view().rank <= axis) continue;
    const Tensor& old = c.at(name);
    Shape shape = old.shape();
    shape[static_cast<std::size_t>(axis)] = Tn;
    const bool written = std::find(c.written.begin(), c.written.end(), name) != c.written.end();
    Tensor plain = Tensor::poisoned(old.dtype(), shape);
    if (!written) {
      const TensorView src = old.view(), dst = plain.view();
      std::vector<I> j;
      for_each_element(dst, [&](std::span<const I> i, I) {
        j.assign(i.begin(), i.end());
        j[static_cast<std::size_t>(axis)] = from[static_cast<std::size_t>(i[static_cast<std::size_t>(axis)])];
        dst.store(i, src.load(j));
      });
    }
    const bool strided = !(old.view().is_contiguous() && old.storage_offset() == 0);
    if (strided) {
      Tensor laid = sparse_fuzz::other_layout(plain, 0);
      if (written) laid.poison();
      t = std::move(laid);
    } else {
      t = std::move(plain);
    }
  }
  for (const char* cu : {"cu_seqlens", "cu_seqlens_cpu"})
    if (c.tensors.count(cu)) out.tensors[cu] = offsets_like(c.at(cu), len);
  out.description = describe_variant(c.description);
  return out;
}

}  // namespace

std::vector<Knob> kda_sequence_knobs(const Call& call, std::uint64_t /*seed*/, const Focus& /*focus*/) {
  std::vector<Knob> out;
  if (call.op != "kda/recurrent" && call.op != "kda/chunk") return out;
  const int axis = call.op == "kda/chunk" ? 1 : 0;
  const Sequences s = sequences_of(call, axis);
  if (std::none_of(s.len.begin(), s.len.end(), [](I l) { return l > 0; })) return out;
  const auto it = call.scalars.find("chunk_size");
  // kda/recurrent has no chunks of its own: 64 tokens, chunk_kda's default, as the provenance counts.
  const I cs = it != call.scalars.end() && it->second > 0 ? static_cast<I>(it->second) : 64;
  std::string lens;
  for (I l : s.len) lens += fmt::format("{}{}", lens.empty() ? "" : ",", l);
  Knob k;
  k.name = "seqlens";
  k.value = "[" + lens + "]";
  k.locate = true;
  const auto base = std::make_shared<const Call>(call);
  // Longest first: an unordered knob stops at its first failing value, and the long one is the one
  // the bad elements are located on. Two chunks, the last one partial (three cost the step more
  // than the shrink it follows: bench/results/explain_cost_2026-12-04.md).
  for (I L : {cs + 3, I{1}}) {
    if (std::all_of(s.len.begin(), s.len.end(), [&](I l) { return l == 0 || l == L; })) continue;
    k.trials.push_back({fmt::format("[{} each]", L), [base, axis, L]() -> std::optional<Call> { return lengthened(*base, axis, L); }});
  }
  if (!k.trials.empty()) out.push_back(std::move(k));
  return out;
}

}  // namespace kparity::fuzz::explain_detail
