#pragma once
// `kparity fuzz --bench-oracle` (issue 25): the oracle benchmark (fuzz/campaign/oracle_bench.hpp),
// cases per minute of the host side of a differential case per op at small, kernel-sized and
// real-model shapes, beside the baseline commit's figures. Registered on the fuzz subcommand by
// main.cpp, which dispatches to fuzz_bench_oracle() when the flag is given.
#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace kparity::cli {

// Adds --bench-oracle to `fuzz`.
void add_bench_oracle_option(CLI::App& fuzz);
bool bench_oracle_requested();
// Runs the benchmark with the fuzz command's --op, --cases (per half and op at the small and
// kernel-sized tiers; default 10; the real-model tier runs max(1, cases / 10) calls per op) and
// --seed. Returns the exit status.
int fuzz_bench_oracle(const FuzzOptions& o);

}  // namespace kparity::cli
