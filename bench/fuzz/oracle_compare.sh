#!/usr/bin/env bash
# The oracle benchmark of two builds side by side (issue 25): fuzz_oracle_bench of a baseline build
# and of this one, op by op in turns (baseline, then this build) on the same machine, seed and cases,
# and a markdown table of CPU ms per case (oracle; host = oracle + faithful + rule), wall-clock ms
# per case, the ratios, and whether the results' digests agree (oracle, faithful, bound; every NaN
# counted as one value).
#
#   bench/fuzz/oracle_compare.sh BASELINE_BIN NEW_BIN [--cases N] [--model-cases N] [--seed S] [--tier T]...
#
# Building the baseline (its own tree; the benchmark's source compiles against c6c0638's library):
#   git worktree add /tmp/wt-baseline c6c0638
#   cp fuzz/include/kparity/fuzz/campaign/oracle_bench.hpp /tmp/wt-baseline/fuzz/include/kparity/fuzz/campaign/
#   cp fuzz/src/campaign/oracle_bench{,_baseline}.cpp /tmp/wt-baseline/fuzz/src/campaign/
#   cp bench/fuzz/oracle_bench_main.cpp /tmp/wt-baseline/bench/fuzz/ && cp bench/CMakeLists.txt /tmp/wt-baseline/bench/
#   cmake -S /tmp/wt-baseline -B /tmp/build-baseline -G Ninja -DCMAKE_BUILD_TYPE=Release -DKPARITY_CUDA=OFF -DKPARITY_BUILD_TESTS=OFF
#   cmake --build /tmp/build-baseline --target fuzz_oracle_bench
set -euo pipefail
base=$1 new=$2
shift 2
# OPS="sparse/paged_prefill sparse/paged_decode" selects ops (default: every op).
read -r -a ops <<<"${OPS:-kda/recurrent kda/packed_decode kda/replayssm_decode kda/chunk sparse/paged_prefill sparse/paged_decode}"
rows_base=$(mktemp) rows_new=$(mktemp)
trap 'rm -f "$rows_base" "$rows_new"' EXIT
for op in "${ops[@]}"; do
  "$base" --op "$op" --raw "$@" 2>/dev/null | grep '^row' >>"$rows_base"
  "$new" --op "$op" --raw "$@" 2>/dev/null | grep '^row' >>"$rows_new"
done
echo "| op | tier | cases | oracle ms/case base → new | ratio | host ms/case base → new | ratio | wall ms/case base → new | ratio | digests o/f/b |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
paste "$rows_base" "$rows_new" | awk '{
  n = $4; m = $16;
  ob = 1e3 * $5 / n; on = 1e3 * $17 / m;
  hb = 1e3 * ($5 + $6 + $7) / n; hn = 1e3 * ($17 + $18 + $19) / m;
  wb = 1e3 * $9 / n; wn = 1e3 * $21 / m;
  d = ($10 == $22 ? "=" : "≠") "/" ($11 == $23 ? "=" : "≠") "/" ($12 == $24 ? "=" : "≠");
  printf "| %s | %s | %d | %.2f → %.2f | %.1f× | %.2f → %.2f | %.1f× | %.2f → %.2f | %.1f× | %s |\n",
         $2, $3, n, ob, on, ob / on, hb, hn, hb / hn, wb, wn, wb / wn, d }'
