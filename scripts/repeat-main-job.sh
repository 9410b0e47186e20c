#!/usr/bin/env bash
# The README's main job (the default campaign, `kparity fuzz` with a fresh seed) N times in a row, each
# with its own seed from /dev/urandom, for the record that it does not fail falsely (issue 32):
#   scripts/repeat-main-job.sh [N=20] [OUT=bench/results/main-job-<UTC date>] [--jobs J]
# OUT gets each run's JSON report and log, and summary.md (date, host, cores, commit, load; per run the
# seed, seconds, properties held / run, cases, and the repro line of any failure), rewritten after each
# run. Exit 1 when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
out=${2:-bench/results/main-job-$(date -u +%F)}
shift $(( $# < 2 ? $# : 2 ))
kparity=${KPARITY_CLI:-build/cli/kparity}
mkdir -p "$out"
sum=$out/summary.md
fails=0
rows=()
write() {
  { echo "# The main job $n times, fresh seeds ($(date -u '+%F %H:%M UTC'))"
    echo
    echo "host $(hostname), $(nproc) cores, commit $(git rev-parse --short HEAD), binary $kparity, extra args: ${*:-none}"
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "| run | seed | seconds | properties held | cases | result |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "failed runs: $fails of ${#rows[@]}"; } > "$sum"
}
for i in $(seq 1 "$n"); do
  seed=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
  t0=$(date +%s.%N)
  "$kparity" fuzz --seed "$seed" --report "$out/run$i.json" "$@" > "$out/run$i.log" 2>&1
  rc=$?
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  held=$(grep -oE '[0-9]+ of [0-9]+ properties held' "$out/run$i.log" | tail -1)
  cases=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sum(p.get('cases',0) for p in r.get('properties',[])))" "$out/run$i.json" 2>/dev/null || echo "?")
  res=pass
  if [ $rc -ne 0 ]; then res="FAIL (rc $rc): $(grep -m1 -E 'repro|kparity fuzz --property' "$out/run$i.log")"; fails=$((fails + 1)); fi
  rows+=("| $i | $seed | ${secs%.*} | ${held:-?} | $cases | $res |")
  write "$@"
done
[ $fails -eq 0 ]
