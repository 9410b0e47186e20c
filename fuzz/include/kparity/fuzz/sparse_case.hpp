#pragma once
// A random, valid sparse-attention prefill problem: per-token CSR lists over two sources with
// sentinels, duplicates and empty spans, and the helpers the metamorphic properties rewrite it with.
#include <cstdint>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"

namespace kparity::fuzz {

struct SparseShape {
  std::int64_t T = 1, H = 1, D = 16, P = 8, N_e = 4;
  std::int64_t max_prefix = 6, max_extend = 4;  // entries per token
  DType dtype = DType::bf16;
  bool sentinels = true;  // negative entries in the lists
  bool sink = true;       // finite sink; false = -inf (plain softmax)
  double shift = 0.0;     // replicated_logit_shift
};

// Per-token index lists; the CSR tensors are built from them.
struct CsrLists {
  std::vector<std::vector<std::int64_t>> rows;
  Tensor indices() const;  // i32, concatenated
  Tensor indptr() const;   // i32, T+1
};

class SparseCase {
 public:
  SparseCase(const SparseShape& s, std::uint64_t seed);

  // Arguments over the stored lists; out/lse are this case's buffers (poisoned first).
  sparse::PagedPrefillArgs prefill_args();
  const SparseShape& shape() const { return s_; }

  Tensor q, unified_kv, kv, attn_sink, out, lse;
  CsrLists prefix, extend;
  double softmax_scale = 0.0;

 private:
  void rebuild_csr();
  SparseShape s_;
  Tensor prefix_idx_, prefix_ptr_, extend_idx_, extend_ptr_;
};

}  // namespace kparity::fuzz
