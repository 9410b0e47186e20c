#pragma once
// `kparity fuzz --bench-oracle` (issue 25): the host side of one differential case, per op, at three
// shape tiers, with the time split into the exact oracle, the faithful model and the rule (the
// a-priori bound, the floor and the judging; the bound also on its own). A case is what a
// `<op>/differential[-special-values]/<backend>` property runs besides the backend: the backend's
// result here is the faithful model's, which costs nothing extra.
//
//   small   the CPU tier's generators (GenConfig{}), as the reference and control properties draw;
//   kernel  the CUDA campaign's kernel-sized generators (GenConfig{.large = true});
//   model   fixed real-model calls: sparse D = 512, H = 128, 2048 selected keys a token (decode one
//           token; prefill two, 1920 prefix + 128 extend keys each); KDA K = V = 128, HV = 32 (packed
//           and ReplaySSM decode a batch of 8, recurrent one sequence of 16 tokens), bf16 activations.
//
// small and kernel run `cases` cases of each half (plain and special values) through the campaign's
// runner with the given seed, so the calls are the campaign's own; model runs `model_cases` calls
// drawn from seeds derived from it. Times are CPU seconds of the whole process (threads the
// references start inside a case count too) and wall seconds.
//
// The figures of the baseline commit beside them come from oracle_bench_baseline() (measured with
// this same code built against that commit: bench/results/oracle_2026-12-02.md says how).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace kparity::fuzz {

struct OracleBenchOptions {
  std::uint64_t seed = 0x6b70617269747931ull;
  int cases = 10;        // small and kernel tiers: per half, per op
  int model_cases = 1;   // model tier: per op
  std::vector<std::string> ops;    // op names or families; empty: every op
  std::vector<std::string> tiers;  // "small", "kernel", "model"; empty: all three
};

struct OracleBenchRow {
  std::string op, tier;
  int cases = 0;
  // Seconds summed over the cases: process CPU time of each part, and the wall time of all parts.
  double oracle = 0, faithful = 0, rule = 0, bound = 0, wall = 0;
  // FNV-1a over the bits of every value the oracle and the faithful model wrote, case after case
  // (every NaN as one value): equal digests of two builds mean the same results on the same calls.
  std::uint64_t oracle_digest = 0xcbf29ce484222325ull, faithful_digest = 0xcbf29ce484222325ull;
  std::uint64_t bound_digest = 0xcbf29ce484222325ull;  // the a-priori bounds' bits, likewise
  double host() const { return oracle + faithful + rule; }  // the host side of one case, CPU
};

std::vector<OracleBenchRow> run_oracle_bench(const OracleBenchOptions& o, std::ostream& progress);

// The table: per row ms per case of each part, host and oracle cases per minute (CPU), wall cases
// per minute, and the baseline's figures with the ratios where `baseline` has the row.
void print_oracle_bench(const std::vector<OracleBenchRow>& rows, const std::vector<OracleBenchRow>& baseline,
                        const std::string& baseline_label, std::ostream& out);
// One line a row, `row <op> <tier> <cases> <oracle> <faithful> <rule> <bound> <wall> <oracle digest>
// <faithful digest> <bound digest>` (seconds; digests in hex), for scripts.
void print_oracle_bench_raw(const std::vector<OracleBenchRow>& rows, std::ostream& out);

// The baseline commit's rows (oracle_bench_baseline.cpp) and where they were measured.
const std::vector<OracleBenchRow>& oracle_bench_baseline();
const std::string& oracle_bench_baseline_label();

}  // namespace kparity::fuzz
