// kda/chunk calls for the fuzzer (kda_chunk_gen.hpp): a kda/recurrent draw recast in fla chunk_kda's
// convention, and the call rewrites of the kda/chunk properties.
#include "kparity/fuzz/generators/kda_chunk_gen.hpp"

#include <algorithm>
#include <cmath>
#include <rapidcheck.h>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/fuzz/generators/kda_case.hpp"
#include "kparity/fuzz/generators/kda_gen.hpp"
#include "kparity/fuzz/generators/pins.hpp"
#include "kparity/reference/elements.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

// Shrink toward the first choice (false; the first item), as kda_gen.cpp's draws do.
bool chance(int percent) { return *uniform_int(0, 99) >= 100 - percent; }
template <class T>
T pick(const std::vector<std::pair<int, T>>& items) {
  int total = 0;
  for (const auto& [w, v] : items) total += w;
  I r = *uniform_int(0, total - 1);
  for (const auto& [w, v] : items) {
    if (r < w) return v;
    r -= w;
  }
  return items.back().second;
}

// The recurrent draw's buckets that still describe the chunk call (its layout, state dtypes and
// special-value targets do not: the chunk call has its own).
bool carried_over(const std::string& b) {
  for (const char* prefix : {"values=", "gqa=", "HV", "K=", "K!=", "V=", "act=", "gate_dt=", "params=", "l2norm=",
                             "gate=softplus", "gate=bounded", "T=", "N=", "empty-seq", "seqlen=", "beta=", "scale=",
                             "special="})
    if (b.rfind(prefix, 0) == 0) return true;
  return false;
}

// An array, not a vector: the specs may be built during another file's static initialisation.
constexpr const char* kOwnBuckets[] = {
    "layout=varlen", "layout=dense", "B>1", "state=k-first", "state=v-first", "state=transpose_state_layout",
    "initial_state=absent", "output_final_state=off", "gate=in-kernel", "gate=precomputed", "A_log=absent",
    "dt_bias=absent", "ignored-gate-args", "beta=sigmoid-in-kernel", "beta=neg-eigval", "chunk_size=32",
    "chunk_size=64", "chunk_size=default", "safe_gate", "disable_recompute", "return_intermediate_states",
    "cu_seqlens_cpu", "tensors=scrambled", "tensors=compact"};

bool flag(const Call& c, const char* name) {
  auto it = c.flags.find(name);
  return it != c.flags.end() && it->second;
}
bool has(const Call& c, const char* name) { return c.tensors.count(name) != 0; }

Tensor offsets(const std::vector<I>& lens, DType dt) {
  Tensor cu(dt, {static_cast<I>(lens.size()) + 1});
  I acc = 0;
  for (std::size_t n = 0; n <= lens.size(); ++n) {
    const I at = static_cast<I>(n);
    cu.view().store_int(std::span<const I>(&at, 1), acc);
    if (n < lens.size()) acc += lens[n];
  }
  return cu;
}

// [N, HV, a, b] state values into a fresh fp32 tensor of the other (or the same) orientation.
Tensor state_copy(const TensorView& src, const std::vector<I>& rows, bool src_v_first, bool dst_v_first) {
  const I HV = src.size(1), K = src_v_first ? src.size(3) : src.size(2), V = src_v_first ? src.size(2) : src.size(3);
  const I N = static_cast<I>(rows.size());
  Tensor out(DType::f32, dst_v_first ? Shape{N, HV, V, K} : Shape{N, HV, K, V});
  const TensorView dst = out.view();
  // A state row (fixed j, all i) at a time, widened and stored as load/store do an element (issue
  // 32 (3): two index vectors an element were a tenth of a kda/chunk case's host time).
  const auto [sj, si] = src_v_first ? std::pair{src.strides[2], src.strides[3]} : std::pair{src.strides[3], src.strides[2]};
  const auto [dj, di] = dst_v_first ? std::pair{dst.strides[2], dst.strides[3]} : std::pair{dst.strides[3], dst.strides[2]};
  std::vector<double> row(static_cast<std::size_t>(K));
  for (I n = 0; n < N; ++n) {
    const I r = rows[static_cast<std::size_t>(n)];
    if (r < 0 || r >= src.size(0)) throw std::out_of_range("state_copy: state row " + std::to_string(r) + " outside the source");
    for (I h = 0; h < HV; ++h)
      for (I j = 0; j < V; ++j) {
        reference::elements::load_run(src, r * src.strides[0] + h * src.strides[1] + j * sj, si, K, row.data());
        reference::elements::store_run(dst, n * dst.strides[0] + h * dst.strides[1] + j * dj, di, K, row.data());
      }
  }
  return out;
}

// Token rows of `src` ([T, ...] when `rec_layout`, else [B, T, ...]) gathered into [B', T', ...]:
// destination (row, t) takes source token `at(row, t)`.
template <class At>
Tensor gather_tokens(const TensorView& src, bool rec_layout, I B, I T, DType dt, At at) {
  Shape shape = src.shape();
  if (rec_layout) shape.insert(shape.begin(), 0);
  shape[0] = B, shape[1] = T;
  Tensor out(dt, shape);
  for (I b = 0; b < B; ++b)
    for (I t = 0; t < T; ++t) {
      const auto [sr, st] = at(b, t);
      const TensorView from = rec_layout ? src.select(0, st) : src.select(0, sr).select(0, st);
      copy_convert(from, out.view().select(0, b).select(0, t));
    }
  return out;
}

}  // namespace

bool chunk_state_v_first(const Call& c) {
  if (auto it = c.flags.find("transpose_state_layout"); it != c.flags.end()) return it->second;
  auto it = c.flags.find("state_v_first");
  return it != c.flags.end() && it->second;
}

std::vector<ChunkSequence> chunk_sequences(const Call& c) {
  const TensorView q = c.at("q").view();
  std::vector<ChunkSequence> seqs;
  if (has(c, "cu_seqlens")) {
    const TensorView cu = c.at("cu_seqlens").view();
    for (I n = 0; n + 1 < cu.size(0); ++n) seqs.push_back({0, cu.at_int({n}), cu.at_int({n + 1}) - cu.at_int({n})});
  } else {
    for (I b = 0; b < q.size(0); ++b) seqs.push_back({b, 0, q.size(1)});
  }
  return seqs;
}

Call draw_kda_chunk(const GenConfig& cfg) {
  // The recurrent draw notes its own buckets; keep the ones that carry over, note ours.
  const std::vector<std::string> before = take_buckets();
  const KdaDraw d = draw_kda(kda::kRecurrentOp, cfg, {.scrambled = false});
  std::set<std::string> notes;
  for (auto& b : take_buckets())
    if (carried_over(b)) notes.insert(std::move(b));
  for (const auto& b : before) note_bucket(b);
  const KdaShape& s = d.shape;
  const Call& rec = d.call;

  // Varlen keeps every sequence; equal-length rows take the non-empty sequences cut to the shortest.
  const bool dense = chance(40);
  std::vector<I> rows, bos;
  I acc = 0;
  for (I len : s.seqlens) bos.push_back(acc), acc += len;
  I L = 0;
  if (dense) {
    for (I n = 0; n < s.N(); ++n)
      if (s.seqlens[static_cast<std::size_t>(n)] > 0) rows.push_back(n);
    if (rows.empty()) rows.push_back(0);
    L = s.seqlens[static_cast<std::size_t>(rows[0])];
    for (I n : rows) L = std::min(L, s.seqlens[static_cast<std::size_t>(n)]);
  } else {
    for (I n = 0; n < s.N(); ++n) rows.push_back(n);
  }
  const I B = dense ? static_cast<I>(rows.size()) : 1, T = dense ? L : s.T();
  const auto token = [&](I b, I t) { return std::pair<I, I>{0, dense ? bos[static_cast<std::size_t>(rows[static_cast<std::size_t>(b)])] + t : t}; };
  const auto tokens = [&](const char* name, DType dt) { return gather_tokens(rec.at(name).view(), true, B, T, dt, token); };

  Call c;
  c.op = std::string(kda::kChunkOp);
  c.options = rec.options;
  for (const char* name : {"q", "k", "v", "beta"}) c.tensors.emplace(name, tokens(name, rec.at(name).dtype()));
  c.flags["use_qk_l2norm_in_kernel"] = s.l2norm;
  if (s.scale_given) c.scalars["scale"] = s.scale;
  if (s.gate_g) {
    c.tensors.emplace("g", tokens("g", rec.at("g").dtype()));
    notes.insert("gate=precomputed");
    if (chance(15)) {  // arguments chunk_kda drops without the in-kernel gate, however wrong
      c.scalars["lower_bound"] = 7.0;
      c.tensors.emplace("A_log", Tensor(DType::i32, {s.HV() + 1}).fill(3.0));
      notes.insert("ignored-gate-args");
    }
  } else {
    c.tensors.emplace("g", tokens("a", rec.at("a").dtype()));
    c.flags["use_gate_in_kernel"] = true;
    notes.insert("gate=in-kernel");
    if (s.lower_bound) c.scalars["lower_bound"] = *s.lower_bound;
    if (s.lower_bound && chance(30)) notes.insert("A_log=absent");
    else c.tensors.emplace("A_log", rec.at("A_log").clone_contiguous());
    if (chance(20)) notes.insert("dt_bias=absent");
    else c.tensors.emplace("dt_bias", rec.at("dt_bias").clone_contiguous());
  }
  if (s.beta_logits) {
    c.flags["use_beta_sigmoid_in_kernel"] = true;
    notes.insert("beta=sigmoid-in-kernel");
    if (chance(25)) c.flags["allow_neg_eigval"] = true, notes.insert("beta=neg-eigval");
  }

  // States: fp32 (chunk_kda asserts it), K-first unless asked otherwise.
  const int layout = pick<int>({{5, 0}, {3, 1}, {2, 2}});
  const bool v_first = layout != 0;
  if (layout == 1) c.flags["state_v_first"] = true;
  if (layout == 2) c.flags["transpose_state_layout"] = true;
  notes.insert(layout == 0 ? "state=k-first" : layout == 1 ? "state=v-first" : "state=transpose_state_layout");
  const std::vector<I> state_rows = dense ? rows : [&] {
    std::vector<I> all;
    for (I n = 0; n < s.N(); ++n) all.push_back(n);
    return all;
  }();
  if (s.has_initial) c.tensors.emplace("initial_state", state_copy(rec.at("initial_state").view(), state_rows, true, v_first));
  else notes.insert("initial_state=absent");
  const I N = static_cast<I>(state_rows.size());
  if (s.has_final) {
    c.flags["output_final_state"] = true;
    c.tensors.emplace("final_state", Tensor(DType::f32, v_first ? Shape{N, s.HV(), s.V, s.K} : Shape{N, s.HV(), s.K, s.V}).poison());
    c.written = {"out", "final_state"};
  } else {
    notes.insert("output_final_state=off");
    c.written = {"out"};
  }
  c.pure_outputs = c.written;
  c.tensors.emplace("out", Tensor(s.act, {B, T, s.HV(), s.V}).poison());
  if (dense) {
    notes.insert("layout=dense");
  } else {
    notes.insert("layout=varlen");
    std::vector<I> lens(s.seqlens.begin(), s.seqlens.end());
    c.tensors.emplace("cu_seqlens", offsets(lens, s.has_cu ? s.cu_dt : DType::i64));
    if (chance(30)) c.tensors.emplace("cu_seqlens_cpu", offsets(lens, DType::i64)), notes.insert("cu_seqlens_cpu");
  }
  if (B > 1) notes.insert("B>1");

  // Options without an effect on the result.
  const int cs = pick<int>({{2, 0}, {1, 32}, {1, 64}});
  if (cs) c.scalars["chunk_size"] = cs;
  notes.insert(cs ? "chunk_size=" + std::to_string(cs) : "chunk_size=default");
  // safe_gate only where its range holds: the bounded in-kernel gate with lower_bound in [-5, 0),
  // or a precomputed g inside [-5, 0] (else kparity warns, kda-chunk-safe-gate-g-range).
  bool safe_ok = s.lower_bound && !s.gate_g && *s.lower_bound >= -5 && *s.lower_bound < 0;
  if (s.gate_g) {
    safe_ok = true;
    for_each_element(c.at("g").view(), [&](std::span<const I> i, I) {
      const double x = c.at("g").view().load(i);
      if (std::isfinite(x) && (x < -5 || x > 0)) safe_ok = false;
    });
  }
  if (safe_ok && chance(40)) c.flags["safe_gate"] = true, notes.insert("safe_gate");
  const int recompute = pick<int>({{6, 0}, {2, 1}, {2, 2}});  // disable_recompute, or h requested, never both
  if (recompute == 1) c.flags["disable_recompute"] = true, notes.insert("disable_recompute");
  if (recompute == 2) c.flags["return_intermediate_states"] = true, notes.insert("return_intermediate_states");

  const ShapePins* pins = pins_for(cfg, "kda");
  const bool scrambled = chance(50) && !(pins && pins->compact);
  notes.insert(scrambled ? "tensors=scrambled" : "tensors=compact");
  c.description = std::string("kda/chunk ") + (dense ? "dense B=" + std::to_string(B) : std::string("varlen")) +
                  " T=" + std::to_string(T) + " state=" + (layout == 0 ? "K-first" : layout == 1 ? "V-first" : "transposed") +
                  " gate=" + (s.gate_g ? "g" : c.tensors.count("A_log") ? "raw" : "raw-no-A_log") +
                  (flag(c, "allow_neg_eigval") ? " neg-eigval" : "") + (flag(c, "safe_gate") ? " safe_gate" : "") +
                  (scrambled ? " scrambled" : "") + " | " + rec.description;
  if (scrambled) {
    Call r = relayout_kda_call(c, true, tensor_seed(s.seed, "chunk-layout"));
    for (const auto& name : r.pure_outputs) r.at(name).poison();
    c = std::move(r);
  }
  for (const auto& b : notes) note_bucket(b);
  return c;
}

std::vector<std::string> kda_chunk_buckets(const GenConfig& cfg) {
  std::vector<std::string> out;
  for (auto& b : kda_buckets(kda::kRecurrentOp, cfg, {.scrambled = false}))
    if (carried_over(b)) out.push_back(std::move(b));
  out.insert(out.end(), std::begin(kOwnBuckets), std::end(kOwnBuckets));
  return out;
}

Call select_chunk_tokens(const Call& c, const std::vector<ChunkPiece>& pieces, bool varlen) {
  const std::vector<ChunkSequence> seqs = chunk_sequences(c);
  std::vector<I> lens;
  for (const auto& p : pieces) lens.push_back(p.to - p.from);
  if (!varlen && std::adjacent_find(lens.begin(), lens.end(), std::not_equal_to<>()) != lens.end()) varlen = true;
  const I P = static_cast<I>(pieces.size());
  I total = 0;
  for (I len : lens) total += len;
  const I B = varlen ? 1 : P, T = varlen ? total : (P ? lens[0] : 0);
  std::vector<std::pair<I, I>> src;  // (row, token) of each destination token, row-major
  for (const auto& p : pieces) {
    const ChunkSequence& sq = seqs[static_cast<std::size_t>(p.n)];
    for (I t = p.from; t < p.to; ++t) src.emplace_back(sq.row, sq.bos + t);
  }
  const auto token = [&](I b, I t) { return src[static_cast<std::size_t>(varlen ? t : b * T + t)]; };

  Call r = c;  // op, scalars, flags, written tensors and options; the tensors are rebuilt below
  r.tensors.clear();
  r.description += " [pieces]";
  for (const char* name : {"q", "k", "v", "g", "beta", "out"})
    r.tensors.emplace(name, gather_tokens(c.at(name).view(), false, B, T, c.at(name).dtype(), token));
  for (const char* name : {"A_log", "dt_bias"})
    if (has(c, name)) r.tensors.emplace(name, c.at(name).clone_contiguous());
  std::vector<I> rows;
  for (const auto& p : pieces) rows.push_back(p.n);
  const bool vf = chunk_state_v_first(c);
  if (has(c, "initial_state")) r.tensors.emplace("initial_state", state_copy(c.at("initial_state").view(), rows, vf, vf));
  if (has(c, "final_state")) r.tensors.emplace("final_state", state_copy(c.at("final_state").view(), rows, vf, vf));
  if (varlen) {
    r.tensors.emplace("cu_seqlens", offsets(lens, has(c, "cu_seqlens") ? c.at("cu_seqlens").dtype() : DType::i64));
    if (has(c, "cu_seqlens_cpu")) r.tensors.emplace("cu_seqlens_cpu", offsets(lens, DType::i64));
  }
  for (const auto& name : r.pure_outputs) r.at(name).poison();
  return r;
}

Call chunk_as_recurrent(const Call& c, reference::Precision p) {
  const std::vector<ChunkSequence> seqs = chunk_sequences(c);
  const TensorView q = c.at("q").view();
  const I B = q.size(0), T = q.size(1), K = q.size(3), HV = c.at("v").view().size(2);
  const auto flat = [&](const char* name, DType dt) {
    Shape shape = c.at(name).shape();
    shape.erase(shape.begin());
    shape[0] = B * T;
    Tensor out(dt, shape);
    for (I b = 0; b < B; ++b)
      for (I t = 0; t < T; ++t) copy_convert(c.at(name).view().select(0, b).select(0, t), out.view().select(0, b * T + t));
    return out;
  };
  Call r;
  r.op = std::string(kda::kRecurrentOp);
  r.options = c.options;
  r.description = c.description + " [as kda/recurrent]";
  for (const char* name : {"q", "k", "v"}) r.tensors.emplace(name, flat(name, c.at(name).dtype()));
  std::vector<I> lens;
  for (const auto& sq : seqs) lens.push_back(sq.len);
  r.tensors.emplace("cu_seqlens", offsets(lens, DType::i64));
  if (flag(c, "use_gate_in_kernel")) {
    r.tensors.emplace("a", flat("g", c.at("g").dtype()));
    r.tensors.emplace("A_log", has(c, "A_log") ? c.at("A_log").clone_contiguous() : Tensor(DType::f32, {HV}).fill(0.0));
    r.tensors.emplace("dt_bias", has(c, "dt_bias") ? c.at("dt_bias").clone_contiguous() : Tensor(DType::f32, {HV * K}).fill(0.0));
    if (auto it = c.scalars.find("lower_bound"); it != c.scalars.end()) r.scalars["lower_bound"] = it->second;
  } else {
    r.tensors.emplace("g", flat("g", c.at("g").dtype()));
  }
  Tensor beta = flat("beta", c.at("beta").dtype());
  const bool sigmoid = flag(c, "use_beta_sigmoid_in_kernel");
  if (sigmoid && flag(c, "allow_neg_eigval")) {
    Tensor two(DType::f32, beta.shape());
    for (I i = 0; i < two.numel(); ++i) {
      const double x = beta.view().load_flat(i);
      two.view().store_flat(i, p == reference::Precision::oracle
                                   ? 2.0 * (1.0 / (1.0 + std::exp(-x)))
                                   : static_cast<double>(2.0f * (1.0f / (1.0f + std::exp(-static_cast<float>(x))))));
    }
    beta = std::move(two);
    r.flags["beta_is_logits"] = false;
  } else {
    r.flags["beta_is_logits"] = sigmoid;
  }
  r.tensors.emplace("beta", std::move(beta));
  r.flags["use_qk_l2norm_in_kernel"] = flag(c, "use_qk_l2norm_in_kernel");
  if (auto it = c.scalars.find("scale"); it != c.scalars.end()) r.scalars["scale"] = it->second;
  std::vector<I> all(seqs.size());
  for (std::size_t n = 0; n < all.size(); ++n) all[n] = static_cast<I>(n);
  const bool vf = chunk_state_v_first(c);
  if (has(c, "initial_state")) r.tensors.emplace("initial_state", state_copy(c.at("initial_state").view(), all, vf, true));
  Tensor out(c.at("out").dtype(), {B * T, HV, c.at("v").view().size(3)});
  r.tensors.emplace("out", std::move(out.poison()));
  r.written = {"out"};
  if (flag(c, "output_final_state") && has(c, "final_state")) {
    r.tensors.emplace("final_state", state_copy(c.at("final_state").view(), all, vf, true).poison());
    r.written.push_back("final_state");
  }
  r.pure_outputs = r.written;
  return r;
}

Tensor recurrent_result_as_chunk(const Call& recurrent, const Call& chunk, const std::string& name) {
  if (name == "final_state") {
    std::vector<I> all(static_cast<std::size_t>(recurrent.at(name).view().size(0)));
    for (std::size_t n = 0; n < all.size(); ++n) all[n] = static_cast<I>(n);
    return state_copy(recurrent.at(name).view(), all, true, chunk_state_v_first(chunk));
  }
  const TensorView o = chunk.at(name).view();
  const I T = o.size(1);
  return gather_tokens(recurrent.at(name).view(), true, o.size(0), T, o.dtype,
                       [&](I b, I t) { return std::pair<I, I>{0, b * T + t}; });
}

OpFuzzSpec kda_chunk_spec() {
  OpFuzzSpec s;
  s.op = std::string(kda::kChunkOp);
  s.draw = draw_kda_chunk;
  GenConfig everything;
  everything.special_values = true;
  everything.large = true;
  s.buckets = kda_chunk_buckets(everything);
  s.abs_floor = kda_chunk_abs_floor;
  return s;
}

}  // namespace kparity::fuzz
