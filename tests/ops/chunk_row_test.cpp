// The kda/chunk row of the op table: fla chunk_kda's signature, its outputs (final_state only with
// output_final_state, allocated fp32 in the requested layout), and a dump through load_dump and the
// table's reference, as `kparity run` does it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kparity/core/safetensors.hpp"
#include "kparity/ops/dump.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/kda_chunk.hpp"

namespace {

using namespace kparity;
namespace fs = std::filesystem;
using Names = std::vector<std::string_view>;

TEST(ChunkRow, PositionalOrderIsChunkKdasSignature) {
  const ops::OpInfo& op = ops::op_info("kda/chunk");
  // fla/ops/kda/chunk.py @bc3b101d, chunk_kda(...) up to cu_seqlens_cpu (cp_context is not modelled).
  EXPECT_EQ(op.positional(),
            (Names{"q", "k", "v", "g", "beta", "scale", "initial_state", "output_final_state", "use_qk_l2norm_in_kernel",
                   "use_gate_in_kernel", "use_beta_sigmoid_in_kernel", "allow_neg_eigval", "safe_gate", "lower_bound",
                   "disable_recompute", "return_intermediate_states", "state_v_first", "cu_seqlens", "cu_seqlens_cpu"}));
  EXPECT_EQ(op.param("chunk_size")->default_value, "64");
  EXPECT_TRUE(op.param("A_log")->keyword_only);
  EXPECT_TRUE(op.param("g")->default_value.empty());  // required
  EXPECT_EQ(op.written_names(), (Names{"out", "final_state"}));
  EXPECT_EQ(op.pure_outputs(), (Names{"out", "final_state"}));
}

struct Dir {
  fs::path path = fs::temp_directory_path() / ("kparity_chunk_row_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

// Two sequences of 2 and 3 tokens, H = 1, HV = 2, K = 16, V = 8, raw gate, logit beta, no outputs.
std::map<std::string, Tensor> inputs() {
  std::map<std::string, Tensor> t;
  auto randn = [&](const char* n, DType d, Shape s, std::uint64_t seed, double sd) {
    t[n] = Tensor(d, std::move(s));
    t[n].fill_normal(seed, 0.0, sd);
  };
  randn("q", DType::bf16, {1, 5, 1, 16}, 1, 1.0);
  randn("k", DType::bf16, {1, 5, 1, 16}, 2, 1.0);
  randn("v", DType::bf16, {1, 5, 2, 8}, 3, 1.0);
  randn("g", DType::bf16, {1, 5, 2, 16}, 4, 0.5);
  randn("beta", DType::bf16, {1, 5, 2}, 5, 1.0);
  randn("A_log", DType::f32, {2}, 6, 0.3);
  randn("dt_bias", DType::f32, {32}, 7, 0.1);
  t["cu_seqlens"] = Tensor(DType::i64, {3});
  for (std::int64_t i = 0; i < 3; ++i) t["cu_seqlens"].view().store_flat(i, std::vector<double>{0, 2, 5}[i]);
  return t;
}

ops::Dump write_and_load(const Dir& d, const std::map<std::string, Tensor>& t, std::map<std::string, std::string> meta) {
  std::map<std::string, TensorView> views;
  for (const auto& [n, x] : t) views[n] = x.view();
  meta["op"] = "kda/chunk";
  const fs::path p = d.path / "chunk.safetensors";
  write_safetensors(p, views, meta);
  return ops::load_dump(p);
}

TEST(ChunkRow, ADumpAllocatesWhatChunkKdaReturnsAndRunsTheReference) {
  Dir dir;
  const auto t = inputs();
  const std::map<std::string, std::string> meta = {{"use_gate_in_kernel", "true"},       {"use_beta_sigmoid_in_kernel", "true"},
                                                    {"use_qk_l2norm_in_kernel", "true"}, {"output_final_state", "true"},
                                                    {"scale", "None"},                   {"chunk_size", "64"}};
  ops::Dump d = write_and_load(dir, t, meta);
  ASSERT_TRUE(d.bag.tensors.count("out"));
  EXPECT_EQ(d.bag.tensors.at("out").dtype, DType::bf16);  // o.type_as(q)
  EXPECT_EQ(d.bag.tensors.at("out").shape(), (Shape{1, 5, 2, 8}));
  ASSERT_TRUE(d.bag.tensors.count("final_state"));
  EXPECT_EQ(d.bag.tensors.at("final_state").dtype, DType::f32);
  EXPECT_EQ(d.bag.tensors.at("final_state").shape(), (Shape{2, 2, 16, 8}));  // [N, HV, K, V]
  EXPECT_EQ(d.op->written_by(d.bag), (std::vector<std::string>{"out", "final_state"}));
  ops::run_reference("kda/chunk", d.bag, reference::Precision::oracle, ValidateOptions::strict(Entry::reference));

  // The same call through the C++ API.
  kda::ChunkArgs a;
  a.q = t.at("q"), a.k = t.at("k"), a.v = t.at("v"), a.g = t.at("g"), a.beta = t.at("beta");
  a.A_log = t.at("A_log").view(), a.dt_bias = t.at("dt_bias").view(), a.cu_seqlens = t.at("cu_seqlens").view();
  a.use_gate_in_kernel = a.use_beta_sigmoid_in_kernel = a.use_qk_l2norm_in_kernel = a.output_final_state = true;
  Tensor out(DType::bf16, {1, 5, 2, 8}), fs(DType::f32, {2, 2, 16, 8});
  a.out = out, a.final_state = fs.view();
  reference::kda::chunk(a, reference::Precision::oracle);
  for (std::int64_t i = 0; i < out.numel(); ++i)
    EXPECT_EQ(out.view().load_flat(i), d.bag.tensors.at("out").load_flat(i)) << i;
  for (std::int64_t i = 0; i < fs.numel(); ++i)
    EXPECT_EQ(fs.view().load_flat(i), d.bag.tensors.at("final_state").load_flat(i)) << i;
}

TEST(ChunkRow, FinalStateFollowsOutputFinalStateAndTheLayout) {
  Dir dir;
  const auto t = inputs();
  ops::Dump none = write_and_load(dir, t, {{"use_gate_in_kernel", "true"}});
  EXPECT_FALSE(none.bag.tensors.count("final_state"));
  EXPECT_EQ(none.op->written_by(none.bag), (std::vector<std::string>{"out"}));
  for (const char* key : {"state_v_first", "transpose_state_layout"}) {
    ops::Dump v = write_and_load(dir, t, {{"use_gate_in_kernel", "true"}, {"output_final_state", "true"}, {key, "true"}});
    ASSERT_TRUE(v.bag.tensors.count("final_state")) << key;
    EXPECT_EQ(v.bag.tensors.at("final_state").shape(), (Shape{2, 2, 8, 16})) << key;  // [N, HV, V, K]
  }
  // `o`, chunk_kda's name for its output, is read as `out`.
  auto with_o = t;
  with_o["o"] = Tensor(DType::f32, {1, 5, 2, 8});
  ops::Dump o = write_and_load(dir, with_o, {{"use_gate_in_kernel", "true"}});
  EXPECT_EQ(o.bag.tensors.at("out").dtype, DType::f32);
}

}  // namespace
