#pragma once
// A small OpFuzzSpec of sparse/paged_decode for the harness tests: the harness must be testable on
// its own, independent of the op generators in fuzz/src (which have their own tests). Shapes are
// tiny so a case costs microseconds; the floor is generous because these tests exercise the
// harness, not the op's numerics.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"

namespace kpt {

using namespace kparity;
using namespace kparity::fuzz;

inline Tensor index_tensor(const std::vector<std::int64_t>& v) {
  Tensor t(DType::i32, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) t.view().store_flat(static_cast<std::int64_t>(i), static_cast<double>(v[i]));
  return t;
}

// A valid paged_decode call from explicit lists (one list of pool rows per token).
inline Call decode_call(std::int64_t H, std::int64_t D, std::int64_t P, const std::vector<std::vector<std::int64_t>>& lists,
                        std::uint64_t seed, bool return_lse) {
  const auto T = static_cast<std::int64_t>(lists.size());
  Call c;
  c.op = "sparse/paged_decode";
  c.tensors["q"] = Tensor(DType::bf16, {T, H, D});
  c.tensors["q"].fill_normal(seed, 0.0, 1.0);
  c.tensors["unified_kv"] = Tensor(DType::bf16, {P, D});
  c.tensors["unified_kv"].fill_normal(seed + 1, 0.0, 1.0);
  std::vector<std::int64_t> idx, ptr{0};
  for (const auto& l : lists) {
    idx.insert(idx.end(), l.begin(), l.end());
    ptr.push_back(static_cast<std::int64_t>(idx.size()));
  }
  c.tensors["kv_indices"] = index_tensor(idx);
  c.tensors["kv_indptr"] = index_tensor(ptr);
  c.tensors["attn_sink"] = Tensor(DType::f32, {H});
  c.tensors["attn_sink"].fill_normal(seed + 2, 0.0, 1.0);
  c.tensors["out"] = Tensor(DType::bf16, {T, H, D});
  c.scalars["softmax_scale"] = 1.0 / std::sqrt(static_cast<double>(D));
  c.flags["return_lse"] = return_lse;
  c.written = {"out"};
  if (return_lse) {
    c.tensors["lse"] = Tensor(DType::f32, {T, H});
    c.written.push_back("lse");
  }
  c.pure_outputs = c.written;
  c.description = "T=" + std::to_string(T) + " H=" + std::to_string(H) + " D=" + std::to_string(D) +
                  " P=" + std::to_string(P);
  return c;
}

inline OpFuzzSpec decode_spec() {
  OpFuzzSpec s;
  s.op = "sparse/paged_decode";
  s.buckets = {"T=0", "empty-span", "duplicate", "lse", "never-drawn"};
  s.draw = [](const GenConfig& cfg) {
    const auto T = *rc::gen::inRange<std::int64_t>(0, 4);
    const auto H = *rc::gen::inRange<std::int64_t>(1, 3);
    const auto D = *rc::gen::element<std::int64_t>(1, 4, 8);
    const auto P = *rc::gen::inRange<std::int64_t>(1, 6);
    std::vector<std::vector<std::int64_t>> lists;
    for (std::int64_t t = 0; t < T; ++t)
      lists.push_back(*rc::gen::container<std::vector<std::int64_t>>(*rc::gen::inRange(0, 4), rc::gen::inRange<std::int64_t>(0, P)));
    const bool lse = *rc::gen::arbitrary<bool>();
    Call c = decode_call(H, D, P, lists, *rc::gen::arbitrary<std::uint64_t>(), lse);
    if (T == 0) note_bucket("T=0");
    if (lse) note_bucket("lse");
    for (const auto& l : lists) {
      if (l.empty()) note_bucket("empty-span");
      for (std::size_t i = 1; i < l.size(); ++i)
        if (std::count(l.begin(), l.end(), l[i]) > 1) note_bucket("duplicate");
    }
    if (cfg.special_values && T > 0) c.at("q").view().store_flat(0, std::numeric_limits<double>::quiet_NaN());
    return c;
  };
  // out is bf16: the harness tests need a floor above the faithful model's one-ulp differences.
  s.abs_floor = [](const Call&, std::string_view name, const Call*) { return name == "lse" ? 1e-5 : 1e-2; };
  return s;
}

}  // namespace kpt
