#include "kparity/fuzz/properties/kda_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "kparity/core/format.hpp"
#include "kparity/core/random.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

const std::byte* element_bytes(const TensorView& v, std::span<const I> idx) {
  return static_cast<const std::byte*>(v.data) + v.offset_of(idx) * static_cast<I>(v.element_size());
}

}  // namespace

void run_kda(Call& c, reference::Precision p) { ops::run_reference(c.op, c.bag(), p, c.options); }

std::string first_difference(const TensorView& a, const TensorView& b, Compare how) {
  if (a.shape() != b.shape()) return "shape " + py_tuple(a.shape()) + " vs " + py_tuple(b.shape());
  if (how == Compare::bytes && a.dtype != b.dtype) return "dtype differs";
  std::string found;
  for_each_element(a, [&](std::span<const I> idx, I) {
    if (!found.empty()) return;
    bool same;
    if (how == Compare::bytes) {
      same = std::memcmp(element_bytes(a, idx), element_bytes(b, idx), a.element_size()) == 0;
    } else {
      const double x = a.load(idx), y = b.load(idx);
      same = x == y || (std::isnan(x) && std::isnan(y));
    }
    if (same) return;
    std::ostringstream os;
    os.precision(9);
    os << "at " << py_tuple(std::vector<I>(idx.begin(), idx.end())) << ": " << a.load(idx) << " vs " << b.load(idx);
    found = os.str();
  });
  return found;
}

double max_finite_abs(const TensorView& v) {
  double m = 0;
  for_each_element(v, [&](std::span<const I> i, I) {
    const double x = std::fabs(v.load(i));
    if (std::isfinite(x)) m = std::max(m, x);
  });
  return m;
}

void fill_view(const TensorView& v, double x) {
  for_each_element(v, [&](std::span<const I> i, I) { v.store(i, x); });
}

void copy_element(const TensorView& src, std::initializer_list<I> si, const TensorView& dst, std::initializer_list<I> di) {
  const std::span<const I> s(si.begin(), si.size()), d(di.begin(), di.size());
  if (src.dtype == dst.dtype) {
    std::memcpy(static_cast<std::byte*>(dst.data) + dst.offset_of(d) * static_cast<I>(dst.element_size()),
                element_bytes(src, s), src.element_size());
  } else {
    dst.store(d, src.load(s));
  }
}

Call slice_sequence(const Call& c, I n, I bos, I len, bool with_cu) {
  Call r;
  r.op = c.op;
  r.options = c.options;
  r.scalars = c.scalars;
  r.flags = c.flags;
  r.written = c.written;
  r.pure_outputs = c.pure_outputs;
  r.description = c.description + " [sequence " + std::to_string(n) + "]";
  const auto rows = [&](const Tensor& t, I from, I count) {
    Shape shape = t.shape();
    shape[0] = count;
    Tensor out(t.dtype(), shape);
    for (I i = 0; i < count; ++i) copy_convert(t.view().select(0, from + i), out.view().select(0, i));
    return out;
  };
  for (const auto& [name, t] : c.tensors) {
    if (name == "cu_seqlens") continue;
    if (name == "dt_bias" || name == "A_log") r.tensors.emplace(name, t.clone_contiguous());
    else if (name == "initial_state" || name == "final_state") r.tensors.emplace(name, rows(t, n, 1));
    else r.tensors.emplace(name, rows(t, bos, len));
  }
  for (const auto& name : r.pure_outputs) r.at(name).poison();
  if (with_cu) {
    Tensor cu(DType::i32, {2});
    const I one = 1;
    cu.view().store_int(std::span<const I>(&one, 1), len);
    r.tensors.emplace("cu_seqlens", std::move(cu));
  }
  return r;
}

void regarbage_unread(Call& c, const KdaShape& s, std::uint64_t seed) {
  Rng rng(seed);
  // Finite garbage: if the op read it, a result would change (the original holds NaN poison).
  const auto garbage = [&](const TensorView& v, double lo, double hi) {
    for_each_element(v, [&](std::span<const I> i, I) { v.store(i, rng.uniform(lo, hi)); });
  };
  const bool replay = s.op == kda::kReplaySsmDecodeOp;
  for (I r = 0; r < s.B; ++r) {
    if (s.slot[static_cast<std::size_t>(r)] >= 0) continue;
    for (const char* name : {"mixed_qkv", "a", "b"}) garbage(c.at(name).view().select(0, r), -1e4, 1e4);
    if (!replay) continue;
    const std::span<const I> at(&r, 1);
    c.at("write_pos").view().store_int(at, rng.integer(-5, s.L + 5));
    if (s.has_force) c.at("force_flush").view().store_int(at, rng.integer(-3, 9));
  }
  if (!replay) return;
  for (I slot = 0; slot < s.slots; ++slot) {
    I from = 0;  // an unused slot's rings are all stale
    for (I r = 0; r < s.B; ++r)
      if (s.slot[static_cast<std::size_t>(r)] == slot) from = s.cursor[static_cast<std::size_t>(r)];
    for (const char* ring : {"d_cache", "k_cache", "g_cache"}) {
      const TensorView v = c.at(ring).view().select(0, slot);
      for (I h = 0; h < v.size(0); ++h)
        for (I i = from; i < v.size(1); ++i)
          // Positive log-decays blow up exp() if read; keys and deltas of 1e4 dominate any sum.
          garbage(v.select(0, h).select(0, i), std::string(ring) == "g_cache" ? 5.0 : -1e4, std::string(ring) == "g_cache" ? 60.0 : 1e4);
    }
  }
}

}  // namespace kparity::fuzz
