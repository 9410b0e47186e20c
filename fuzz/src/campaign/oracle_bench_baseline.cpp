// The baseline commit's figures for `kparity fuzz --bench-oracle` (oracle_bench.hpp): c6c0638, measured
// on the 2-core development machine (Intel Xeon, AVX-512) on 2026-12-02 with this benchmark's source
// built against that commit (bench/fuzz/oracle_compare.sh; seed 0x6b70617269747931, 100 cases a half
// at the small tier, 10 at the kernel-sized tier, one real-model call). The table and its method are
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
      row("kda/recurrent", "small", 0.88, 1.91, 1.91),
      row("kda/recurrent", "kernel", 89.16, 175.35, 175.74),
      row("kda/recurrent", "model", 106.27, 213.89, 213.89),
      row("kda/packed_decode", "small", 0.63, 2.08, 2.08),
      row("kda/packed_decode", "kernel", 11.64, 48.15, 48.17),
      row("kda/packed_decode", "model", 149.89, 514.25, 516.02),
      row("kda/replayssm_decode", "small", 1.49, 3.60, 3.61),
      row("kda/replayssm_decode", "kernel", 70.54, 156.85, 156.86),
      row("kda/replayssm_decode", "model", 363.31, 793.27, 793.43),
      row("kda/chunk", "small", 0.78, 2.24, 2.24),
      row("kda/chunk", "kernel", 72.77, 132.38, 132.49),
      row("sparse/paged_prefill", "small", 0.12, 0.20, 0.20),
      row("sparse/paged_prefill", "kernel", 225.57, 603.12, 603.40),
      row("sparse/paged_prefill", "model", 3799.98, 8440.67, 8448.52),
      row("sparse/paged_decode", "small", 0.11, 0.17, 0.17),
      row("sparse/paged_decode", "kernel", 245.72, 533.78, 533.88),
      row("sparse/paged_decode", "model", 1924.15, 4326.96, 4329.22),
  };
  return rows;
}

const std::string& oracle_bench_baseline_label() {
  static const std::string label =
      "c6c0638 on the 2-core development machine, 2026-12-02 (bench/results/oracle_2026-12-02.md); another machine's "
      "figures differ, the ratio is only meaningful on that one";
  return label;
}

}  // namespace kparity::fuzz
