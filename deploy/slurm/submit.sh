#!/usr/bin/env bash
# Submits a sharded `kparity fuzz` campaign to Slurm: an array job of N shards (fuzz-array.sbatch,
# one GPU each) and a merge job (merge.sbatch) that waits for all of them (afterany).
#
#   deploy/slurm/submit.sh [options] [-- kparity fuzz options]
#
#   -n, --shards N       number of shards = array tasks (default 8)
#   --cases N            passing cases per property for the whole campaign (default 10000)
#   --seed S             campaign seed (default: from the clock; printed and saved)
#   -o, --out DIR        campaign directory on a file system every node sees
#                        (default: ./kparity-fuzz-<date>-<time>)
#   --max-parallel M     at most M shards running at once (sbatch --array=...%M)
#   --kparity PATH       the kparity binary as the compute nodes see it (default: kparity on PATH)
#   --sbatch OPT         an extra sbatch option for both jobs, repeatable
#                        (--sbatch=--partition=gpu --sbatch=--account=me)
#   --wait               wait for the merge; exit with its status
#
# Prints the job ids; writes DIR/campaign.env (seed, cases, shards, job ids, fuzz options) and
# later DIR/shard-<i>.json, DIR/all.json, DIR/logs/, DIR/corpus/. Arguments after `--` go to
# every shard's `kparity fuzz` (e.g. -- --op sparse --backend cuda).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "submit.sh: $*" >&2; exit 2; }

shards=8 cases=10000 seed="" out="" max_parallel="" kparity="${KPARITY_BIN:-kparity}" wait=0
sbatch_opts=()
while (($#)); do
  case "$1" in
    -n|--shards) shards="${2:?}"; shift 2 ;;
    --shards=*) shards="${1#*=}"; shift ;;
    --cases) cases="${2:?}"; shift 2 ;;
    --cases=*) cases="${1#*=}"; shift ;;
    --seed) seed="${2:?}"; shift 2 ;;
    --seed=*) seed="${1#*=}"; shift ;;
    -o|--out) out="${2:?}"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    --max-parallel) max_parallel="${2:?}"; shift 2 ;;
    --max-parallel=*) max_parallel="${1#*=}"; shift ;;
    --kparity) kparity="${2:?}"; shift 2 ;;
    --kparity=*) kparity="${1#*=}"; shift ;;
    --sbatch) sbatch_opts+=("${2:?}"); shift 2 ;;
    --sbatch=*) sbatch_opts+=("${1#*=}"); shift ;;
    --wait) wait=1; shift ;;
    -h|--help) usage 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (kparity fuzz options go after --)" ;;
  esac
done
fuzz_args=("$@")

[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards must be a positive integer, not '$shards'"
[[ "$cases" =~ ^[1-9][0-9]*$ ]] || die "--cases must be a positive integer, not '$cases'"
[ -z "$max_parallel" ] || [[ "$max_parallel" =~ ^[1-9][0-9]*$ ]] || die "--max-parallel must be a positive integer"
for a in "${fuzz_args[@]}"; do
  case "$a" in
    --time|--time=*)
      die "'$a': a wall-clock budget makes each shard's work depend on its node's speed; use --cases" ;;
    --jobs|--jobs=*)
      die "'$a': each shard runs one worker per CPU Slurm grants it; use --sbatch=--cpus-per-task=N" ;;
    --seed|--seed=*|--cases|--cases=*|--shard|--shard=*|--report|--report=*|--corpus|--corpus=*)
      die "'$a' is set by submit.sh for every shard; use its own options" ;;
  esac
done
command -v sbatch >/dev/null || die "sbatch not found: run this on a Slurm submit host"
seed="${seed:-$(date +%s)}"
out="${out:-kparity-fuzz-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out/logs"
out="$(cd "$out" && pwd)"
if compgen -G "$out/shard-*.json" >/dev/null || [ -e "$out/all.json" ]; then
  die "$out already holds reports of another campaign; pick a new --out"
fi

array="0-$((shards - 1))${max_parallel:+%$max_parallel}"
export KPARITY_BIN="$kparity"
array_id="$(sbatch --parsable --export=ALL "${sbatch_opts[@]}" --array="$array" \
  --output="$out/logs/shard-%a.out" \
  "$here/fuzz-array.sbatch" "$out" --seed "$seed" --cases "$cases" "${fuzz_args[@]}")"
array_id="${array_id%%;*}"  # --parsable prints "id;cluster" on multi-cluster set-ups
merge_id="$(sbatch --parsable --export=ALL "${sbatch_opts[@]}" \
  --dependency="afterany:$array_id" --kill-on-invalid-dep=yes \
  --output="$out/logs/merge.out" \
  "$here/merge.sbatch" "$out" "$shards")"
merge_id="${merge_id%%;*}"

{
  printf 'seed=%q\ncases=%q\nshards=%q\narray_job=%q\nmerge_job=%q\n' "$seed" "$cases" "$shards" "$array_id" "$merge_id"
  printf 'fuzz_args=(%s)\n' "$(printf '%q ' "${fuzz_args[@]}")"
} >"$out/campaign.env"
echo "kparity campaign: seed $seed, $cases cases per property, $shards shards"
echo "  array job $array_id, merge job $merge_id (after all shards), reports in $out"

if ((wait)); then
  # Poll squeue rather than sbatch --wait, which needs a second submission of the merge job.
  while [ -n "$(squeue -h -j "$merge_id" -o %i 2>/dev/null)" ]; do sleep 2; done
  info="$(scontrol -o show job "$merge_id" 2>/dev/null || true)"
  cat "$out/logs/merge.out" 2>/dev/null || true
  state="$(grep -o 'JobState=[A-Z_]*' <<<"$info" || true)"
  code="$(grep -o 'ExitCode=[0-9]*' <<<"$info" || true)"
  case "${state#JobState=}" in
    COMPLETED|FAILED) code="${code#ExitCode=}" ;;
    "") die "merge job $merge_id: no longer known to Slurm (MinJobAge passed?); see $out/logs/merge.out" ;;
    *) die "merge job $merge_id ended ${state#JobState=}; see $out/logs/" ;;
  esac
  exit "$code"
fi
