// The baseline commit's figures for `kparity fuzz --bench-oracle` (oracle_bench.hpp): c6c0638, measured
// on the 2-core development machine (Intel Xeon, AVX-512) on 2026-12-02 with this benchmark's source
// built against that commit (bench/fuzz/oracle_compare.sh; seed 0x6b70617269747931, 100 cases a half
// at the small tier, 10 at the kernel-sized tier, one real-model call), in the second pass: with the
// diagnostics catalog parsed before timing, as the benchmark does now. The table and its method are
// in bench/results/oracle_2026-12-02.md. Per case: oracle, host (oracle + faithful + rule) and wall ms.
#include "kparity/fuzz/campaign/oracle_bench.hpp"

namespace kparity::fuzz {
namespace {

OracleBenchRow row(const char* op, const char* tier, double oracle_ms, double host_ms, double wall_ms) {
  OracleBenchRow r;
  r.op = op, r.tier = tier, r.cases = 1;
  r.oracle = oracle_ms / 1e3, r.rule = (host_ms - oracle_ms) / 1e3, r.wall = wall_ms / 1e3;  // faithful folded into rule
  return r;
}

}  // namespace

const std::vector<OracleBenchRow>& oracle_bench_baseline() {
  static const std::vector<OracleBenchRow> rows = {
      row("kda/recurrent", "small", 0.82, 1.79, 1.79),
      row("kda/recurrent", "kernel", 83.28, 161.20, 161.24),
      row("kda/recurrent", "model", 94.70, 186.68, 186.92),
      row("kda/packed_decode", "small", 0.48, 1.74, 1.74),
      row("kda/packed_decode", "kernel", 10.16, 42.52, 42.53),
      row("kda/packed_decode", "model", 112.34, 449.95, 449.99),
      row("kda/replayssm_decode", "small", 1.34, 3.33, 3.33),
      row("kda/replayssm_decode", "kernel", 69.26, 151.85, 151.88),
      row("kda/replayssm_decode", "model", 332.24, 742.70, 742.71),
      row("kda/chunk", "small", 0.70, 2.00, 2.01),
      row("kda/chunk", "kernel", 67.40, 122.60, 122.63),
      row("sparse/paged_prefill", "small", 0.05, 0.12, 0.12),
      row("sparse/paged_prefill", "kernel", 209.47, 550.14, 550.43),
      row("sparse/paged_prefill", "model", 3228.42, 7464.35, 7470.07),
      row("sparse/paged_decode", "small", 0.04, 0.09, 0.09),
      row("sparse/paged_decode", "kernel", 216.48, 460.44, 460.69),
      row("sparse/paged_decode", "model", 1653.51, 3807.26, 3808.68),
  };
  return rows;
}

const std::string& oracle_bench_baseline_label() {
  static const std::string label =
      "c6c0638 on the 2-core development machine, 2026-12-02, second pass (bench/results/oracle_2026-12-02.md); another machine's "
      "figures differ, the ratio is only meaningful on that one";
  return label;
}

}  // namespace kparity::fuzz
