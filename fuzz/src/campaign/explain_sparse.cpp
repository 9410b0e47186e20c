// The knobs of a sparse-attention call (campaign/explain.hpp): the call read into a record (values,
// index lists, layouts), one thing changed, and the call built again. Tokens and heads are taken
// starting at the first bad one (the provenance's focus) and repeated cyclically, so "T = 1" keeps
// the token that failed; channels are repeated cyclically; new keys are fresh rows holding copies
// of the token's own rows (the same value family, other row indices).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "kparity/core/format.hpp"
#include "kparity/core/random.hpp"
#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"
#include "explain_knobs.hpp"

namespace kparity::fuzz::explain_detail {
namespace {

using namespace sparse_fuzz;
using I = std::int64_t;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct SourceRec {
  Source s;
  Lists lists;
  std::vector<std::vector<double>> rows;  // [R][D]
};

struct SparseRec {
  Call base;  // scalars, flags, options, written; tensors replaced by build()
  DType dt = DType::bf16;
  I T = 0, H = 0, D = 0;
  std::vector<double> q;  // [T][H][D] row-major
  std::vector<SourceRec> src;
  std::vector<double> sink;  // [H + pad]; past H never read
  DType sink_dt = DType::f32;
  I sink_pad = 0;
  // Layouts: kept when the shape is unchanged, else contiguous or (for a strided original) padded.
  std::map<std::string, bool> strided;
  std::map<std::string, std::string> layout_force;  // name -> "contiguous" | "padded" | "permuted" | "col-strided"
  DType idx_dt = DType::i32, ptr_dt = DType::i32;
};

double& qat(SparseRec& r, I t, I h, I d) { return r.q[static_cast<std::size_t>((t * r.H + h) * r.D + d)]; }

SparseRec read(const Call& c) {
  SparseRec r;
  r.base = c;
  const TensorView q = c.at("q").view();
  r.dt = q.dtype;
  r.T = q.size(0), r.H = q.size(1), r.D = q.size(2);
  r.q.resize(static_cast<std::size_t>(r.T * r.H * r.D));
  for (I t = 0; t < r.T; ++t)
    for (I h = 0; h < r.H; ++h)
      for (I d = 0; d < r.D; ++d) qat(r, t, h, d) = q.load(std::array<I, 3>{t, h, d});
  for (const auto& s : sources_of(c.op)) {
    SourceRec sr{s, read_lists(c, s), {}};
    const TensorView rows = c.at(s.rows).view();
    for (I i = 0; i < rows.size(0); ++i) {
      std::vector<double> row(static_cast<std::size_t>(r.D));
      for (I d = 0; d < r.D; ++d) row[static_cast<std::size_t>(d)] = rows.load(std::array<I, 2>{i, d});
      sr.rows.push_back(std::move(row));
    }
    r.idx_dt = c.at(s.indices).dtype();
    r.ptr_dt = c.at(s.indptr).dtype();
    r.src.push_back(std::move(sr));
  }
  const TensorView sink = c.at("attn_sink").view();
  r.sink_dt = sink.dtype;
  r.sink_pad = sink.size(0) - r.H;
  for (I h = 0; h < sink.size(0); ++h) r.sink.push_back(sink.load(std::array<I, 1>{h}));
  for (const auto& [name, t] : c.tensors) r.strided[name] = !(t.view().is_contiguous() && t.storage_offset() == 0);
  return r;
}

// A tensor of `shape` laid out like `old` when the shape is unchanged (same strides and offset),
// else contiguous, or padded when `old` was strided; `force` overrides.
Tensor laid_out(DType dt, const Shape& shape, const Tensor* old, const std::string& force) {
  Tensor plain(dt, shape);
  plain.poison();
  std::string how = force;
  if (how.empty() && old && old->shape() == shape && old->dtype() == dt) {
    Tensor t = Tensor::strided(dt, shape, old->view().stride_vec(), old->storage_offset());
    t.poison();
    return t;
  }
  if (how.empty()) how = old && !(old->view().is_contiguous() && old->storage_offset() == 0) ? "padded" : "contiguous";
  if (how == "contiguous") return plain;
  const std::uint64_t choice = how == "padded" ? 0 : how == "permuted" ? 1 : 2;
  Tensor t = other_layout(plain, choice);
  t.poison();
  return t;
}

Call build(const SparseRec& r) {
  Call c = r.base;
  c.tensors.clear();
  const auto old = [&](const std::string& n) -> const Tensor* {
    auto it = r.base.tensors.find(n);
    return it == r.base.tensors.end() ? nullptr : &it->second;
  };
  const auto force = [&](const std::string& n) {
    auto it = r.layout_force.find(n);
    return it == r.layout_force.end() ? std::string() : it->second;
  };
  Tensor q = laid_out(r.dt, {r.T, r.H, r.D}, old("q"), force("q"));
  for (I t = 0; t < r.T; ++t)
    for (I h = 0; h < r.H; ++h)
      for (I d = 0; d < r.D; ++d) q.view().store(std::array<I, 3>{t, h, d}, r.q[static_cast<std::size_t>((t * r.H + h) * r.D + d)]);
  c.tensors["q"] = std::move(q);
  for (const auto& sr : r.src) {
    const I R = static_cast<I>(sr.rows.size());
    Tensor rows = laid_out(r.dt, {R, r.D}, old(sr.s.rows), force(sr.s.rows));
    for (I i = 0; i < R; ++i)
      for (I d = 0; d < r.D; ++d) rows.view().store(std::array<I, 2>{i, d}, sr.rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(d)]);
    c.tensors[sr.s.rows] = std::move(rows);
    c.tensors[sr.s.indices] = Tensor(r.idx_dt, {0});
    c.tensors[sr.s.indptr] = Tensor(r.ptr_dt, {1});
    write_lists(c, sr.s, sr.lists);
  }
  Tensor sink(r.sink_dt, {r.H + r.sink_pad});
  for (I h = 0; h < r.H + r.sink_pad; ++h) sink.view().store(std::array<I, 1>{h}, r.sink[static_cast<std::size_t>(h)]);
  c.tensors["attn_sink"] = std::move(sink);
  c.tensors["out"] = laid_out(r.dt, {r.T, r.H, r.D}, old("out"), force("out"));
  if (std::find(c.written.begin(), c.written.end(), "lse") != c.written.end()) {
    Tensor lse(DType::f32, {r.T, r.H});
    lse.poison();
    c.tensors["lse"] = std::move(lse);
  }
  c.description = describe_variant(r.base.description);
  return c;
}

// Tokens (or heads) in the order `map` gives (new index -> old index).
void take_tokens(SparseRec& r, const std::vector<I>& map) {
  std::vector<double> q;
  for (I t : map)
    q.insert(q.end(), r.q.begin() + t * r.H * r.D, r.q.begin() + (t + 1) * r.H * r.D);
  r.q = std::move(q);
  for (auto& sr : r.src) {
    Lists l;
    for (I t : map) l.push_back(sr.lists[static_cast<std::size_t>(t)]);
    sr.lists = std::move(l);
  }
  r.T = static_cast<I>(map.size());
}

void take_heads(SparseRec& r, const std::vector<I>& map) {
  std::vector<double> q;
  for (I t = 0; t < r.T; ++t)
    for (I h : map)
      for (I d = 0; d < r.D; ++d) q.push_back(qat(r, t, h, d));
  std::vector<double> sink;
  for (I h : map) sink.push_back(r.sink[static_cast<std::size_t>(h)]);
  for (I p = 0; p < r.sink_pad; ++p) sink.push_back(std::numeric_limits<double>::quiet_NaN());
  r.q = std::move(q);
  r.sink = std::move(sink);
  r.H = static_cast<I>(map.size());
}

// D channels: the first ones kept; new ones 0 in q, so every logit stays as it was (copies or fresh
// values would scale the logits and sharpen the softmax until a slip's key weighs nothing), and
// fresh in the rows from `seed` in the call's value family (small integers when every finite value
// is one, else unit normals), so the new output channels hold values to check.
void take_channels(SparseRec& r, I D, std::uint64_t seed) {
  bool ints = true;
  const auto see = [&](double x) { ints = ints && (!std::isfinite(x) || x == std::round(x)); };
  for (double x : r.q) see(x);
  for (const auto& sr : r.src)
    for (const auto& row : sr.rows)
      for (double x : row) see(x);
  Rng rng(seed);
  const auto fresh = [&] { return ints ? static_cast<double>(rng.integer(-2, 2)) : rng.normal(); };
  std::vector<double> q;
  for (I t = 0; t < r.T; ++t)
    for (I h = 0; h < r.H; ++h)
      for (I d = 0; d < D; ++d) q.push_back(d < r.D ? qat(r, t, h, d) : 0.0);
  for (auto& sr : r.src)
    for (auto& row : sr.rows) {
      std::vector<double> w;
      for (I d = 0; d < D; ++d) w.push_back(d < r.D ? row[static_cast<std::size_t>(d)] : fresh());
      row = std::move(w);
    }
  r.q = std::move(q);
  r.D = D;
}

std::vector<I> cyclic(I n, I from, I count) {
  std::vector<I> m;
  for (I i = 0; i < count; ++i) m.push_back((from + i) % n);
  return m;
}

// Values near `v` among `candidates`, nearest first (ties: the smaller first), `v` itself left out.
std::vector<I> nearest(I v, std::vector<I> candidates) {
  candidates.erase(std::remove(candidates.begin(), candidates.end(), v), candidates.end());
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::stable_sort(candidates.begin(), candidates.end(), [v](I a, I b) { return std::llabs(a - v) < std::llabs(b - v); });
  return candidates;
}

std::string sink_family(double s) {
  if (std::isnan(s)) return "nan";
  if (s == kInf) return "+inf";
  if (s == -kInf) return "-inf";
  if (s == 0) return "0";
  return "finite";
}

double sink_value(const std::string& f) {
  if (f == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (f == "+inf") return kInf;
  if (f == "-inf") return -kInf;
  if (f == "0") return 0.0;
  return 0.5;
}

bool has_duplicate(const std::vector<I>& l) {
  std::set<I> seen;
  for (I v : l)
    if (v >= 0 && !seen.insert(v).second) return true;
  return false;
}

// A fresh row of source `sr` holding a copy of row `like` (or ones when there is none); its index.
I fresh_row(SourceRec& sr, I like, I D) {
  std::vector<double> row(static_cast<std::size_t>(D), 1.0);
  if (like >= 0 && like < static_cast<I>(sr.rows.size())) row = sr.rows[static_cast<std::size_t>(like)];
  for (double& x : row)
    if (!std::isfinite(x)) x = 1.0;
  sr.rows.push_back(std::move(row));
  return static_cast<I>(sr.rows.size()) - 1;
}

}  // namespace

std::vector<Knob> sparse_knobs(const Call& call, std::uint64_t seed, const Focus& focus) {
  const SparseRec rec = read(call);
  const I bt = std::clamp<I>(focus.token, 0, std::max<I>(rec.T - 1, 0)), bh = std::clamp<I>(focus.head, 0, std::max<I>(rec.H - 1, 0));
  std::vector<Knob> out;
  const auto trial = [&](std::string value, std::function<void(SparseRec&)> change) {
    return Trial{std::move(value), [rec, change]() -> std::optional<Call> {
                   SparseRec r = rec;
                   change(r);
                   return build(r);
                 }};
  };
  const auto ordered = [](std::string name, I v) {
    Knob k;
    k.name = std::move(name);
    k.value = std::to_string(v);
    k.ordered = true;
    k.numeric = static_cast<double>(v);
    return k;
  };
  // Keys per token: the focus token's list of the source with the most entries of it.
  for (std::size_t si = 0; si < rec.src.size(); ++si) {
    if (rec.T == 0) break;
    const I n = static_cast<I>(rec.src[si].lists[static_cast<std::size_t>(bt)].size());
    Knob k = ordered(rec.src.size() == 1 ? "keys" : std::string(rec.src[si].s.rows) + " keys", n);
    std::vector<I> cand;
    for (I v = 1; v <= std::max<I>(n + 3, 8); ++v) cand.push_back(v);
    for (I v : nearest(n, cand))
      k.trials.push_back(trial(std::to_string(v), [si, v, n, bt](SparseRec& r) {
        auto& sr = r.src[si];
        if (v < n) {
          // Fewer keys from the front: the list's last keys stay, so a slip at the end of the list
          // (the last key left out) meets the same keys.
          for (auto& l : sr.lists)
            if (static_cast<I>(l.size()) > v) l.erase(l.begin(), l.end() - v);
          return;
        }
        auto& l = sr.lists[static_cast<std::size_t>(bt)];
        const std::vector<I> own = l;
        for (I j = n; j < v; ++j) {
          I like = -1;
          for (std::size_t x = 0; x < own.size() && like < 0; ++x)
            if (own[(static_cast<std::size_t>(j) + x) % own.size()] >= 0) like = own[(static_cast<std::size_t>(j) + x) % own.size()];
          l.push_back(fresh_row(sr, like, r.D));
        }
      }));
    out.push_back(std::move(k));
  }
  if (rec.T > 0) {
    Knob k = ordered("T", rec.T);
    for (I v : nearest(rec.T, {1, 2, 3, 4, 8}))
      k.trials.push_back(trial(std::to_string(v), [v, bt](SparseRec& r) { take_tokens(r, cyclic(r.T, bt, v)); }));
    out.push_back(std::move(k));
  }
  if (rec.H > 0) {
    Knob k = ordered("H", rec.H);
    for (I v : nearest(rec.H, {1, 2, 3, 4, 8, 16}))
      k.trials.push_back(trial(std::to_string(v), [v, bh](SparseRec& r) { take_heads(r, cyclic(r.H, bh, v)); }));
    out.push_back(std::move(k));
  }
  {
    Knob k = ordered("D", rec.D);
    for (I v : nearest(rec.D, {1, 2, 3, 4, 8, 16, 32, 64}))
      k.trials.push_back(trial(std::to_string(v), [v, seed](SparseRec& r) { take_channels(r, v, seed + static_cast<std::uint64_t>(v)); }));
    out.push_back(std::move(k));
  }
  {
    Knob k;
    k.name = "dtype";
    k.value = std::string(dtype_name(rec.dt));
    const DType other = rec.dt == DType::bf16 ? DType::f16 : DType::bf16;
    k.trials.push_back(trial(std::string(dtype_name(other)), [other](SparseRec& r) {
      r.dt = other;
      for (double& x : r.q) x = std::isfinite(x) ? std::clamp(x, -60000.0, 60000.0) : x;
      for (auto& sr : r.src)
        for (auto& row : sr.rows)
          for (double& x : row) x = std::isfinite(x) ? std::clamp(x, -60000.0, 60000.0) : x;
    }));
    out.push_back(std::move(k));
  }
  // Layouts of q, the rows tensors and out.
  std::vector<std::string> laid = {"q"};
  for (const auto& sr : rec.src) laid.emplace_back(sr.s.rows);
  laid.emplace_back("out");
  for (const auto& name : laid) {
    Knob k;
    k.name = name + " layout";
    const bool strided = rec.strided.at(name);
    k.value = strided ? "strided" : "contiguous";
    for (const char* how : strided ? std::vector<const char*>{"contiguous"} : std::vector<const char*>{"padded", "permuted", "col-strided"})
      k.trials.push_back(trial(how, [name, how = std::string(how)](SparseRec& r) { r.layout_force[name] = how; }));
    out.push_back(std::move(k));
  }
  if (rec.H > 0) {
    Knob k;
    k.name = "sink";
    k.value = sink_family(rec.sink[static_cast<std::size_t>(bh)]);
    for (const char* f : {"finite", "0", "-inf", "+inf", "nan"}) {
      if (f == k.value) continue;
      k.trials.push_back(trial(f, [v = sink_value(f)](SparseRec& r) {
        for (I h = 0; h < r.H; ++h) r.sink[static_cast<std::size_t>(h)] = v;
      }));
    }
    out.push_back(std::move(k));
  }
  {
    bool dup = false, sentinel = false, empty = false, special = false;
    for (const auto& sr : rec.src)
      for (const auto& l : sr.lists) {
        dup = dup || has_duplicate(l);
        sentinel = sentinel || std::any_of(l.begin(), l.end(), [](I v) { return v < 0; });
      }
    for (I t = 0; t < rec.T; ++t) {
      bool any = false;
      for (const auto& sr : rec.src) any = any || !sr.lists[static_cast<std::size_t>(t)].empty();
      empty = empty || !any;
    }
    special = std::any_of(rec.q.begin(), rec.q.end(), [](double x) { return !std::isfinite(x); });
    for (const auto& sr : rec.src)
      for (const auto& l : sr.lists)
        for (I v : l)
          if (v >= 0 && v < static_cast<I>(sr.rows.size()))
            for (double x : sr.rows[static_cast<std::size_t>(v)]) special = special || !std::isfinite(x);
    Knob d{"duplicates", dup ? "yes" : "no", false, 0, {}};
    if (dup)
      d.trials.push_back(trial("no", [](SparseRec& r) {
        for (auto& sr : r.src)
          for (auto& l : sr.lists) {
            std::set<I> seen;
            for (I& v : l)
              if (v >= 0 && !seen.insert(v).second) v = fresh_row(sr, v, r.D);
          }
      }));
    else if (rec.T > 0 && !rec.src[0].lists[static_cast<std::size_t>(bt)].empty())
      d.trials.push_back(trial("yes", [bt](SparseRec& r) {
        auto& l = r.src[0].lists[static_cast<std::size_t>(bt)];
        for (I v : l)
          if (v >= 0) {
            l.back() = v;  // the last entry names a row the list already has
            break;
          }
      }));
    out.push_back(std::move(d));
    if (sentinel) {
      Knob s{"sentinels", "yes", false, 0, {}};
      s.trials.push_back(trial("no", [](SparseRec& r) {
        for (auto& sr : r.src)
          for (auto& l : sr.lists) std::erase_if(l, [](I v) { return v < 0; });
      }));
      out.push_back(std::move(s));
    }
    if (empty) {
      Knob e{"empty spans", "yes", false, 0, {}};
      e.trials.push_back(trial("no", [](SparseRec& r) {
        for (I t = 0; t < r.T; ++t) {
          bool any = false;
          for (const auto& sr : r.src) any = any || !sr.lists[static_cast<std::size_t>(t)].empty();
          if (!any) r.src[0].lists[static_cast<std::size_t>(t)].push_back(fresh_row(r.src[0], 0, r.D));
        }
      }));
      out.push_back(std::move(e));
    }
    if (special) {
      Knob s{"special values", "yes", false, 0, {}};
      s.trials.push_back(trial("no", [](SparseRec& r) {
        for (double& x : r.q)
          if (!std::isfinite(x)) x = 1.0;
        for (auto& sr : r.src)
          for (auto& row : sr.rows)
            for (double& x : row)
              if (!std::isfinite(x)) x = 1.0;
      }));
      out.push_back(std::move(s));
    }
  }
  if (auto it = rec.base.flags.find("return_lse"); it != rec.base.flags.end() && focus.tensor != "lse") {
    Knob k{"return_lse", it->second ? "true" : "false", false, 0, {}};
    const bool v = !it->second;
    k.trials.push_back(trial(v ? "true" : "false", [v](SparseRec& r) {
      r.base.flags["return_lse"] = v;
      std::erase(r.base.written, std::string("lse"));
      std::erase(r.base.pure_outputs, std::string("lse"));
      if (v) r.base.written.emplace_back("lse"), r.base.pure_outputs.emplace_back("lse");
    }));
    out.push_back(std::move(k));
  }
  {
    const double s = rec.base.scalars.at("softmax_scale");
    Knob k{"softmax_scale", py_float(s), false, 0, {}};
    for (double v : {1.0, 0.5, 0.125})
      if (v != s) k.trials.push_back(trial(py_float(v), [v](SparseRec& r) { r.base.scalars["softmax_scale"] = v; }));
    out.push_back(std::move(k));
  }
  if (auto it = rec.base.scalars.find("replicated_logit_shift"); it != rec.base.scalars.end()) {
    Knob k{"replicated_logit_shift", py_float(it->second), false, 0, {}};
    const double v = it->second == 0.0 ? 0.5 : 0.0;
    k.trials.push_back(trial(py_float(v), [v](SparseRec& r) { r.base.scalars["replicated_logit_shift"] = v; }));
    out.push_back(std::move(k));
  }
  {
    Knob k{"index dtype", std::string(dtype_name(rec.idx_dt)) + "/" + std::string(dtype_name(rec.ptr_dt)), false, 0, {}};
    const DType o = rec.idx_dt == DType::i32 ? DType::i64 : DType::i32;
    k.trials.push_back(trial(std::string(dtype_name(o)) + "/" + std::string(dtype_name(o)), [o](SparseRec& r) {
      r.idx_dt = o;
      r.ptr_dt = o;
    }));
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace kparity::fuzz::explain_detail
