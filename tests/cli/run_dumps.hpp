#pragma once
// Small `kparity run` dumps written with kparity::write_safetensors (one per op family, the catalog
// fixtures' shapes) and a fixture that runs the CLI on them in a scratch directory.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"
#include "kparity/core/safetensors.hpp"
#include "kparity/core/tensor.hpp"

namespace kparity::test {

namespace fs = std::filesystem;

struct DumpSpec {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
  void write(const fs::path& p) const {
    std::map<std::string, TensorView> views;
    for (const auto& [n, t] : tensors) views[n] = t.view();
    write_safetensors(p, views, metadata);
  }
};

inline Tensor ints(DType t, Shape shape, std::initializer_list<std::int64_t> values) {
  Tensor x(t, std::move(shape));
  std::int64_t i = 0;
  for (auto v : values) x.view().store_flat(i++, static_cast<double>(v));
  return x;
}

// catalog fixture kda.replayssm.minimal: B = 2, H = 1, HV = 2, K = V = 16, L = 4, three slots.
inline DumpSpec replayssm_dump() {
  DumpSpec d;
  auto& t = d.tensors;
  t["mixed_qkv"] = Tensor(DType::bf16, {2, 64});
  t["mixed_qkv"].fill_normal(1, 0.0, 0.5);
  t["a"] = Tensor(DType::bf16, {2, 2, 16});
  t["a"].fill_normal(2, 0.0, 0.5);
  t["b"] = Tensor(DType::bf16, {2, 2});
  t["b"].fill_normal(3, 0.0, 0.5);
  t["A_log"] = Tensor(DType::f32, {2});
  t["A_log"].fill_normal(4, 0.0, 0.3);
  t["dt_bias"] = Tensor(DType::f32, {2, 16});
  t["dt_bias"].fill_normal(5, 0.0, 0.1);
  t["initial_state"] = Tensor(DType::f32, {3, 2, 16, 16});
  t["initial_state"].fill_normal(6, 0.0, 0.05);
  t["d_cache"] = Tensor(DType::bf16, {3, 2, 4, 16});
  t["d_cache"].fill_normal(7, 0.0, 0.05);
  t["k_cache"] = Tensor(DType::bf16, {3, 1, 4, 16});
  t["k_cache"].fill_normal(8, 0.0, 0.3);
  t["g_cache"] = Tensor(DType::f32, {3, 2, 4, 16});
  t["g_cache"].fill_uniform(9, -0.1, 0.0);
  t["out"] = Tensor(DType::bf16, {2, 1, 2, 16});
  t["ssm_state_indices"] = ints(DType::i32, {2}, {2, 0});
  t["write_pos"] = ints(DType::i32, {2}, {1, 3});
  t["force_flush"] = ints(DType::i32, {2}, {0, 0});
  d.metadata = {{"op", "kda/replayssm_decode"},
                {"scale", "0.25"},
                {"lower_bound", "-5.0"},
                {"use_qk_l2norm_in_kernel", "true"}};
  return d;
}

// catalog fixture sparse.prefill.minimal: T = 2, H = 2, D = 64; `out` and `lse` left to the CLI.
inline DumpSpec prefill_dump() {
  DumpSpec d;
  auto& t = d.tensors;
  t["q"] = Tensor(DType::bf16, {2, 2, 64});
  t["q"].fill_normal(11, 0.0, 0.5);
  t["unified_kv"] = Tensor(DType::bf16, {8, 64});
  t["unified_kv"].fill_normal(12, 0.0, 0.5);
  t["kv_indices_prefix"] = ints(DType::i32, {4}, {5, -1, 0, 7});
  t["kv_indptr_prefix"] = ints(DType::i32, {3}, {0, 2, 4});
  t["kv"] = Tensor(DType::bf16, {3, 64});
  t["kv"].fill_normal(13, 0.0, 0.5);
  t["kv_indices_extend"] = ints(DType::i32, {3}, {0, 0, 1});
  t["kv_indptr_extend"] = ints(DType::i32, {3}, {0, 1, 3});
  t["attn_sink"] = Tensor(DType::f32, {2});
  t["attn_sink"].fill_normal(14, 0.0, 0.5);
  d.metadata = {{"op", "sparse/paged_prefill"},
                {"softmax_scale", "0.125"},
                {"replicated_logit_shift", "0.0"},
                {"return_lse", "true"}};
  return d;
}

// catalog fixture kda.recurrent.minimal in the issue-3 spelling: beta as logits under `b`, flag
// `use_qk_l2norm`, no `out` or `final_state` (the CLI allocates them).
inline DumpSpec recurrent_dump() {
  DumpSpec d;
  auto& t = d.tensors;
  t["q"] = Tensor(DType::bf16, {5, 1, 16});
  t["q"].fill_normal(21, 0.0, 0.5);
  t["k"] = Tensor(DType::bf16, {5, 1, 16});
  t["k"].fill_normal(22, 0.0, 0.5);
  t["v"] = Tensor(DType::bf16, {5, 2, 16});
  t["v"].fill_normal(23, 0.0, 0.5);
  t["a"] = Tensor(DType::bf16, {5, 2, 16});
  t["a"].fill_normal(24, 0.0, 0.5);
  t["dt_bias"] = Tensor(DType::f32, {2, 16});
  t["dt_bias"].fill_normal(25, 0.0, 0.1);
  t["A_log"] = Tensor(DType::f32, {2});
  t["A_log"].fill_normal(26, 0.0, 0.3);
  t["b"] = Tensor(DType::bf16, {5, 2});
  t["b"].fill_normal(27, 0.0, 0.5);
  t["initial_state"] = Tensor(DType::f32, {2, 2, 16, 16});
  t["initial_state"].fill_normal(28, 0.0, 0.05);
  t["cu_seqlens"] = ints(DType::i32, {3}, {0, 2, 5});
  d.metadata = {{"op", "kda/recurrent"}, {"scale", "0.25"}, {"use_qk_l2norm", "true"}};
  return d;
}

// The committed corpus (fuzz/corpus/*.safetensors), sorted.
inline std::vector<fs::path> corpus_dumps() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(KPARITY_SOURCE_DIR) / "fuzz" / "corpus"))
    if (e.path().extension() == ".safetensors") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

inline double sum_abs(const TensorView& v) {
  double s = 0;
  for (std::int64_t i = 0; i < v.numel(); ++i) s += std::fabs(v.load_flat(i));
  return s;
}

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override { dir = scratch_dir("run"); }
  void TearDown() override { fs::remove_all(dir); }
  CliResult run(const DumpSpec& d, std::vector<std::string> extra = {}) {
    d.write(dir / "dump.safetensors");
    std::vector<std::string> args = {"run", (dir / "dump.safetensors").string(), "-o", result().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, dir);
  }
  fs::path result() const { return dir / "result.safetensors"; }
  fs::path dir;
};

}  // namespace kparity::test
