#!/usr/bin/env bash
# Every contract and hostile-input property of `kparity fuzz` at a deep case count (issue 32): the
# properties of kind `contracts` and `hostile` that this build lists and can run (the launcher ones
# need a build with kernels), one after another, each with a fresh seed of its own, its cases spread
# over --jobs worker processes (chunks of 100 cases, each chunk on its own chunk seed).
#
#   scripts/deep-contracts.sh [--cases N] [--jobs J] [--out DIR] [--kparity PATH] [--seed S] [PROPERTY...]
#
#   --cases    cases per property (default 1000000)
#   --jobs     worker processes (default: the machine's cores)
#   --out      where the record goes (default bench/results/deep-contracts-<UTC date>-<host>): one JSON
#              report per property (`kparity fuzz --report`), its log, and summary.md (date, host,
#              binary, property, seed, cases, seconds, cases/min, result), rewritten after each property
#              so that a run stopped early keeps what it finished
#   --kparity  the CLI (default ${KPARITY_CLI:-build/cli/kparity})
#   --seed     base seed: property i runs with seed + i (default: fresh from /dev/urandom, recorded)
#   PROPERTY   only these (default: every contract and hostile property of `kparity fuzz --list`)
#
# Exit status: 0 when every property held, 1 when one failed (its repro line is in summary.md and
# its log), 2 on a usage error. Measured rates (cases/min, one worker, quiet core): the sparse and
# catalog properties 100k-500k, the KDA ones 40k-80k; 10^6 of all fourteen reference properties is
# about 2.5 CPU-hours, i.e. about 10-12 minutes at --jobs 16 (bench/results/deep_contracts_*.md).
set -uo pipefail
cd "$(dirname "$0")/.."
cases=1000000
jobs=$(nproc)
out=""
kparity=${KPARITY_CLI:-build/cli/kparity}
seed=""
props=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --kparity) kparity=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) echo "deep-contracts: unknown option $1" >&2; exit 2 ;;
    *) props+=("$1"); shift ;;
  esac
done
if [ ! -x "$kparity" ]; then echo "deep-contracts: no kparity at $kparity (build it, or pass --kparity)" >&2; exit 2; fi
date_utc=$(date -u +%F)
host=$(hostname -s 2>/dev/null || echo host)
out=${out:-bench/results/deep-contracts-$date_utc-$host}
mkdir -p "$out"
if [ ${#props[@]} -eq 0 ]; then
  # `--list`: kind, backend, op, name[, "skipped: why"]; the skipped ones cannot run on this build.
  mapfile -t props < <("$kparity" fuzz --list 2>/dev/null | awk '($1 == "contracts" || $1 == "hostile") && $0 !~ /skipped:/ { print $4 }')
fi
if [ ${#props[@]} -eq 0 ]; then echo "deep-contracts: no property to run" >&2; exit 2; fi
if [ -z "$seed" ]; then seed=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' '); fi

summary=$out/summary.md
rows=()
write_summary() {
  {
    echo "# Contract and hostile-input properties, deep run"
    echo
    echo "Started $started UTC on $host ($(nproc) cores), \`$kparity\` ($("$kparity" --version 2>/dev/null | head -1)),"
    echo "checkout at $rev when the run started, $cases cases per property, --jobs $jobs, base seed $seed."
    echo "Command: \`scripts/deep-contracts.sh --cases $cases --jobs $jobs --seed $seed\`"
    echo
    echo "| property | seed | cases | seconds | cases/min | result |"
    echo "|---|---|---:|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "$1"
  } > "$summary"
}
started=$(date -u +%FT%TZ)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
status=0
i=0
for p in "${props[@]}"; do
  s=$(printf '0x%x' $(( seed + i )))
  i=$((i + 1))
  safe=${p//\//_}
  t0=$(date +%s.%N)
  "$kparity" fuzz --property "$p" --seed "$s" --cases "$cases" --jobs "$jobs" \
    --report "$out/$safe.json" --corpus "$out/corpus" > "$out/$safe.log" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  ran=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sum(p.get('cases',0) for p in r.get('properties',[])))" "$out/$safe.json" 2>/dev/null || echo "?")
  if [ $rc -eq 0 ]; then result=held; else result="FAILED: $(grep -m1 'repro:' "$out/$safe.log" | sed 's/^ *//')"; status=1; fi
  rate=$(echo "$ran $secs" | awk '$1 ~ /^[0-9]+$/ && $2 > 0 { printf "%d", $1 * 60 / $2; next } { print "?" }')
  rows+=("| \`$p\` | $s | $ran | $(printf '%.0f' "$secs") | $rate | $result |")
  write_summary "Running: $i of ${#props[@]} done."
  echo "deep-contracts: $p seed $s: $ran cases in $(printf '%.0f' "$secs") s: $result"
done
write_summary "Finished $(date -u +%FT%TZ) UTC: $([ $status -eq 0 ] && echo "all ${#props[@]} properties held" || echo "a property FAILED")."
exit $status
