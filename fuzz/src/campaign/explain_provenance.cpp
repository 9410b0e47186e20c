// The first bad element of a failing tensor and where the bad elements are (campaign/explain.hpp).
//
// Which elements are bad is the rule's own per-element verdict, without reaching into it: the
// faithful result with one element replaced by the backend's is judged. Every other element is
// the faithful model's own, |f - o| <= err_f <= 2 err_f and its class is f's, so it passes; err_f,
// the floor and the a-priori bound depend on the oracle, the faithful result and the input only.
// So that judgement fails exactly when the backend's element fails on its own.
#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

// Elements judged one by one at most (a shrunk call is small; past this the count is a lower bound).
constexpr I kMaxExamined = 128;
// Past kMaxExamined elements, blocks are judged first (at most this many), then the elements of the
// first bad block one by one; later bad blocks count whole ("approximate" in the provenance).
constexpr I kMaxBlocks = 128;
// Judgements at most (each one is the rule on the whole call): past it, the elements left count as
// unexamined and the count is a lower bound ("approximate").
// Binary search finds the first bad element in log2(n) of them; the count after it is the budget's
// rest (kept small: a judgement costs about as much as the rule on the call).
constexpr I kMaxJudges = 96;

std::string index_text(const std::vector<I>& idx) {
  std::string s;
  for (std::size_t i = 0; i < idx.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", idx[i]);
  return "[" + s + "]";
}

// "all 4", "{0, 2}", "only >= 2 of 4" for the distinct values of one index among the bad elements.
std::string spread(const std::set<I>& bad, I n, const char* what) {
  if (n > 0 && static_cast<I>(bad.size()) == n) return fmt::format("all {} {}", n, what);
  if (!bad.empty() && *bad.rbegin() == n - 1 && static_cast<I>(bad.size()) == n - *bad.begin() && *bad.begin() > 0)
    return fmt::format("only {} >= {} of {}", what, *bad.begin(), n);
  std::string s;
  int shown = 0;
  for (I v : bad) {
    if (shown++ == 8) {
      s += ", ...";
      break;
    }
    s += fmt::format("{}{}", s.empty() ? "" : ", ", v);
  }
  return fmt::format("{} {{{}}} of {}", what, s, n);
}

// Sparse ops: the token's selected keys per source, and what they include.
void sparse_keys(const Call& c, I t, nlohmann::json& p, std::string& line) {
  nlohmann::json keys = nlohmann::json::array();
  std::string text;
  for (const auto& s : sparse_fuzz::sources_of(c.op)) {
    const auto lists = sparse_fuzz::read_lists(c, s);
    if (t < 0 || t >= static_cast<I>(lists.size())) continue;
    const auto& l = lists[static_cast<std::size_t>(t)];
    const I rows = c.at(s.rows).view().size(0);
    std::set<I> seen;
    bool dup = false, sentinel = false, last = false;
    I n = 0;
    for (I v : l) {
      if (v < 0) {
        sentinel = true;
        continue;
      }
      ++n;
      dup = dup || !seen.insert(v).second;
      last = last || v == rows - 1;
    }
    keys.push_back({{"source", s.rows}, {"indices", l}, {"keys", n}, {"duplicate", dup}, {"sentinel", sentinel},
                    {"last_row", last}, {"rows", rows}});
    std::vector<std::string> has;
    has.push_back(dup ? "a duplicate" : "no duplicate");
    has.push_back(sentinel ? "a -1" : "no -1");
    has.push_back(last ? fmt::format("the last row {}", rows - 1) : "not the last row");
    std::string list;
    for (I v : l) list += fmt::format("{}{}", list.empty() ? "" : ", ", v);
    text += fmt::format("{}{} keys of token {}: [{}] ({} keys; {})", text.empty() ? "" : "; ", s.rows, t, list, n,
                        has[0] + ", " + has[1] + ", " + has[2]);
  }
  p["keys"] = keys;
  if (!text.empty()) line += "; " + text;
}

// KDA ops with a token axis: the sequence, the position in it and the chunk of a token.
struct SeqPos {
  I seq = 0, pos = 0, len = 0;
};
SeqPos locate(const Call& c, I batch, I t) {
  if (c.tensors.count("cu_seqlens")) {
    const TensorView cu = c.at("cu_seqlens").view();
    for (I n = 0; n + 1 < cu.numel(); ++n) {
      const I b = cu.load_int_flat(n), e = cu.load_int_flat(n + 1);
      if (t >= b && t < e) return {n, t - b, e - b};
    }
    return {-1, t, 0};
  }
  const TensorView q = c.at("q").view();
  return {batch, t, q.rank >= 2 ? q.size(q.rank == 4 ? 1 : 0) : 0};
}

I chunk_size(const Call& c) {
  const auto it = c.scalars.find("chunk_size");
  return it != c.scalars.end() && it->second > 0 ? static_cast<I>(it->second) : 64;
}

}  // namespace

nlohmann::json provenance(const Call& call, const CallVerdict& v, std::string& line, bool by_chunk) {
  line.clear();
  if (!v.oracle || !v.faithful || !v.backend || v.tensor.empty() || !v.backend->tensors.count(v.tensor)) return nullptr;
  const OpFuzzSpec& spec = spec_for(call.op);
  Call probe = *v.faithful;
  const TensorView b = v.backend->at(v.tensor).view(), f = v.faithful->at(v.tensor).view(),
                   o = v.oracle->at(v.tensor).view(), pv = probe.at(v.tensor).view();
  if (b.shape() != f.shape()) return nullptr;
  // Every element's index in row-major order; blocks of consecutive ones fix the leading axes
  // (the largest leading group of at most kMaxBlocks), so a block is a token or a row of the op.
  std::vector<std::vector<I>> all;
  for_each_element(b, [&](std::span<const I> idx, I) { all.emplace_back(idx.begin(), idx.end()); });
  const I n = static_cast<I>(all.size());
  I block = 1;
  if (n > kMaxExamined) {
    I lead = 1;
    block = n;
    for (int a = 0; a < b.rank; ++a) {
      if (lead * b.size(a) > kMaxBlocks) break;
      lead *= b.size(a);
      block = n / std::max<I>(lead, 1);
    }
    // A first axis longer than kMaxBlocks (a lengthened KDA sequence): blocks of several of its rows.
    if (lead == 1 && b.rank > 0 && b.size(0) > 0) block = (b.size(0) + kMaxBlocks - 1) / kMaxBlocks * (n / b.size(0));
  }
  // Judges elements [from, to) replaced by the backend's at once: true when none of them is bad.
  I judges = 0;
  const auto good = [&](I from, I to) {
    ++judges;
    std::vector<double> keep;
    for (I i = from; i < to; ++i) keep.push_back(pv.load(all[static_cast<std::size_t>(i)])), pv.store(all[static_cast<std::size_t>(i)], b.load(all[static_cast<std::size_t>(i)]));
    const bool pass = judge(call, *v.oracle, *v.faithful, probe, spec).pass;
    for (I i = from; i < to; ++i) pv.store(all[static_cast<std::size_t>(i)], keep[static_cast<std::size_t>(i - from)]);
    return pass;
  };
  std::vector<std::vector<I>> bad;  // exact bad elements, or every element of a bad block
  // The first bad element wherever it lies: a binary search over prefixes (a prefix replaced by the
  // backend's fails exactly when it holds a bad element), about log2(n) judgements. A scan from the
  // front ran out of judgements before a late bad element (token 7, head 11 of 128 elements).
  if (n == 0 || good(0, n)) return nullptr;
  const bool token_axis = (call.op == "kda/recurrent" || call.op == "kda/chunk") && v.tensor != "final_state" && b.rank >= 3;
  const bool chunks = by_chunk && token_axis;
  I lo = 0, count = 0, examined = 0;
  bool approximate = false;
  if (chunks) {
    // The elements of one (batch row, sequence, chunk) are consecutive in row-major order: each
    // such run is judged whole, and a bad one counts bad whole; the first bad element is the first
    // of the first bad run (no search inside it).
    const bool batched = b.rank == 4;
    const I cs = chunk_size(call);
    const auto key = [&](I e) {
      const auto& i = all[static_cast<std::size_t>(e)];
      const I batch = batched ? i[0] : 0, t = batched ? i[1] : i[0];
      const SeqPos sp = locate(call, batch, t);
      return std::array<I, 3>{batch, sp.seq, sp.pos / cs};
    };
    lo = -1;
    for (I seg = 0; seg < n && judges < kMaxJudges;) {
      const auto k = key(seg);
      I to = seg + 1;
      while (to < n && key(to) == k) ++to;
      examined = to;
      if (!good(seg, to)) {
        if (lo < 0) lo = seg;
        for (I i = seg; i < to; ++i) bad.push_back(all[static_cast<std::size_t>(i)]);
        count += to - seg;
      }
      seg = to;
    }
    if (lo < 0) return nullptr;  // out of judgements before a bad run (the whole call failed)
    approximate = true;
  } else {
    I hi = n;  // [0, lo) holds no bad element, [0, hi) holds one
    while (hi - lo > 1) {
      const I mid = lo + (hi - lo) / 2;
      if (good(0, mid)) lo = mid;
      else hi = mid;
    }
    bad.push_back(all[static_cast<std::size_t>(lo)]);
    count = 1, examined = lo + 1;
  }
  const std::vector<I> first = all[static_cast<std::size_t>(lo)];
  // Then where the others are, with the judgements left: the rest of the first bad one's block
  // element by element, the later blocks whole (a bad one counted whole: "approximate").
  const I block_end = chunks ? n : block > 1 ? std::min(n, (lo / block + 1) * block) : n;
  for (I i = chunks ? n : lo + 1; i < block_end; ++i) {
    if (judges >= kMaxJudges) break;
    examined = i + 1;
    if (good(i, i + 1)) continue;
    ++count;
    bad.push_back(all[static_cast<std::size_t>(i)]);
  }
  for (I from = block_end; from < n && judges < kMaxJudges; from += block) {
    const I to = std::min(n, from + block);
    examined = to;
    if (good(from, to)) continue;
    approximate = true;
    for (I i = from; i < to; ++i) bad.push_back(all[static_cast<std::size_t>(i)]);
    count += to - from;
  }
  if (examined < n) approximate = true;
  nlohmann::json p = {{"tensor", v.tensor},
                      {"index", first},
                      {"backend", py_float(b.load(first))},
                      {"oracle", py_float(o.load(first))},
                      {"faithful", py_float(f.load(first))},
                      {"bad", count},
                      {"examined", examined},
                      {"elements", b.numel()},
                      {"approximate", approximate}};
  if (chunks) p["by_chunk"] = true;
  line = fmt::format("first bad {}{}: b={}, o={}", v.tensor, index_text(first), py_float(b.load(first)),
                     py_float(o.load(first)));
  const auto distinct = [&](std::size_t axis) {
    std::set<I> s;
    for (const auto& i : bad)
      if (axis < i.size()) s.insert(i[axis]);
    return s;
  };
  std::string where;
  const std::string& op = call.op;
  if (op.rfind("sparse/", 0) == 0) {
    // out [T, H, D], lse [T, H].
    p["token"] = first[0];
    if (first.size() > 1) p["head"] = first[1];
    if (first.size() > 2) p["channel"] = first[2];
    line += fmt::format(" (token {}, head {}{})", first[0], first.size() > 1 ? first[1] : 0,
                        first.size() > 2 ? fmt::format(", channel {}", first[2]) : "");
    const TensorView sink = call.at("attn_sink").view();
    if (first.size() > 1 && first[1] < sink.numel()) {
      p["sink"] = py_float(sink.load_flat(first[1]));
      line += fmt::format("; sink[{}]={}", first[1], py_float(sink.load_flat(first[1])));
    }
    sparse_keys(call, first[0], p, line);
    where = spread(distinct(0), b.size(0), "tokens");
    if (b.rank > 1) where += ", " + spread(distinct(1), b.size(1), "heads");
  } else if ((op == "kda/recurrent" || op == "kda/chunk") && v.tensor != "final_state") {
    // recurrent out [T, HV, V]; chunk out [B, T, HV, V].
    const bool batched = b.rank == 4;
    const I batch = batched ? first[0] : 0, t = batched ? first[1] : first[0];
    const SeqPos sp = locate(call, batch, t);
    p["token"] = t;
    p["head"] = batched ? first[2] : first[1];
    p["sequence"] = sp.seq;
    p["position"] = sp.pos;
    p["sequence_length"] = sp.len;
    line += fmt::format(" (sequence {}, position {} of {}, head {}", sp.seq, sp.pos, sp.len, batched ? first[2] : first[1]);
    {
      // kda/recurrent has no chunks of its own: counted in chunk_kda's default 64 tokens, the
      // chunks a chunked implementation of it (fla's chunk_kda) works in.
      const I cs = chunk_size(call), ck = sp.pos / cs, last = sp.len > 0 ? (sp.len - 1) / cs : 0;
      p["chunk"] = ck;
      p["chunk_size"] = cs;
      p["last_chunk"] = ck == last;
      line += fmt::format(", chunk {} of {} (size {}{})", ck, last + 1, cs, op == "kda/chunk" ? "" : ", chunk_kda's");
      bool only_last = true, only_first = true;
      std::set<I> seqs;
      for (const auto& i : bad) {
        const SeqPos s = locate(call, batched ? i[0] : 0, batched ? i[1] : i[0]);
        seqs.insert(s.seq);
        const I c = s.pos / cs, l = s.len > 0 ? (s.len - 1) / cs : 0;
        only_last = only_last && c == l;
        only_first = only_first && c == 0;
      }
      p["only_last_chunk"] = only_last;
      where = only_last && !only_first ? "only the last chunk of each sequence"
              : only_first && !only_last ? "only the first chunk of each sequence"
              : only_first && only_last   ? "sequences of one chunk"
                                          : "several chunks";
      where += fmt::format(", {} of {} sequences", seqs.size(),
                           call.tensors.count("cu_seqlens") ? call.at("cu_seqlens").view().numel() - 1 : batched ? b.size(0) : 1);
    }
    line += ")";
    where += ", " + spread(distinct(batched ? 2 : 1), b.size(batched ? 2 : 1), "heads");
  } else if (op == "kda/packed_decode" || op == "kda/replayssm_decode") {
    if (v.tensor == "out" && first.size() == 4) {
      const TensorView idx = call.at("ssm_state_indices").view();
      p["row"] = first[0];
      p["head"] = first[2];
      p["slot"] = idx.load_int_flat(first[0]);
      line += fmt::format(" (row {}, slot {}, head {})", first[0], idx.load_int_flat(first[0]), first[2]);
      where = spread(distinct(0), b.size(0), "rows") + ", " + spread(distinct(2), b.size(2), "heads");
    } else {
      where = spread(distinct(0), b.size(0), v.tensor == "out" ? "rows" : "slots");
    }
  } else if (b.rank > 0) {
    where = spread(distinct(0), b.size(0), "rows");
  }
  p["where"] = where;
  line += fmt::format("; {}{} of {} elements bad{}{}", approximate ? "~" : "", count, b.numel(),
                      where.empty() ? "" : ": ", where);
  return p;
}

}  // namespace kparity::fuzz
