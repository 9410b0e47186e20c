#!/usr/bin/env bash
# The Slurm deployment on a real single-node cluster: starts slurmctld + slurmd + munged on
# 127.0.0.1 (slurm_cluster.sh), submits deploy/slurm/submit.sh's 4-task array of a short CPU
# campaign and its merge job, waits, and checks the merged report against one unsharded run of the
# same seed and budget (compare_reports.py). Then the failure path: every shard rejects its options,
# the merge still runs (afterany) and fails, naming the missing report. The cluster is stopped and
# its temp dir removed on any exit.
#
#   tests/deploy/slurm_test.sh path/to/kparity        (ctest: deploy.slurm.cluster)
#
# Needs root and Debian's slurmctld/slurmd/slurm-client/munge (installed when missing). Exit 0 pass,
# 1 fail, 77 skipped (not root). KPARITY_SLURM_KEEP=1 keeps the cluster's logs and the campaign dirs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
kparity="$(realpath "${1:?usage: slurm_test.sh path/to/kparity}")"
[ -x "$kparity" ] || { echo "slurm_test: $kparity is not executable" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
  echo "slurm_test: skipped: needs root (slurmd runs the jobs, munged and the packages need it)"
  exit 77
fi

# A short campaign that still spans several chunks per property (chunks hold up to 100 cases), so
# the 4 shards each get work; CPU only, the fake GPUs are just for --gres.
seed=20261201
cases=300
fuzz_args=(--op kda/packed_decode --backend reference)
shards=4
# Each wait is bounded below ctest's 600 s, so that a hung job still ends in the cleanup trap.
wait_s=400

source "$here/slurm_cluster.sh"
t_start=$SECONDS
slurm_cluster_install
slurm_cluster_start
t_up=$SECONDS

fail() { echo "slurm_test: FAIL: $*" >&2; slurm_cluster_dump_logs; exit 1; }

public="$(slurm_cluster_public_listeners)"
[ -z "$public" ] || fail "daemons listen beyond 127.0.0.1: $public"

work="$SLURM_CLUSTER_DIR/campaigns"  # removed with the cluster
mkdir -p "$work"
# The test machine has few CPUs and less memory than the GPU nodes the script asks for.
small=(--sbatch=--cpus-per-task=1 --sbatch=--mem=1G --sbatch=--time=00:20:00)

echo "slurm_test: sharded campaign: $shards shards, seed $seed, $cases cases per property, ${fuzz_args[*]}"
status=0
timeout "$wait_s" "$root/deploy/slurm/submit.sh" -n "$shards" --cases "$cases" --seed "$seed" -o "$work/ok" \
  --kparity "$kparity" "${small[@]}" --wait -- "${fuzz_args[@]}" || status=$?
t_sharded=$SECONDS
[ "$status" -eq 0 ] || { cat "$work/ok/logs/"*.out >&2 || true; fail "merge job exit status $status (expected 0)"; }
array_job="$(source "$work/ok/campaign.env" && echo "$array_job")"
for ((i = 0; i < shards; i++)); do
  [ -f "$work/ok/shard-$i.json" ] || fail "no report from shard $i"
  grep -q "kparity shard $i of $shards " "$work/ok/logs/shard-$i.out" || fail "shard $i's log does not name it shard $i of $shards"
  line="$(scontrol -o show job "${array_job}_$i")"
  grep -q "JobState=COMPLETED" <<<"$line" || fail "array task $i: $(grep -o 'JobState=[A-Z_]*' <<<"$line")"
  grep -q "TresPerNode=gres:gpu:1" <<<"$line" || fail "array task $i did not ask for one GPU"
  got="$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["shard"]; print("%d/%d" % (s["index"], s["count"]))' \
        "$work/ok/shard-$i.json")"
  [ "$got" = "$i/$shards" ] || fail "array task $i ran shard $got, expected $i/$shards"
done
[ -f "$work/ok/all.json" ] || fail "the merge job wrote no all.json"

echo "slurm_test: the same campaign unsharded, for comparison"
"$kparity" fuzz --seed "$seed" --cases "$cases" "${fuzz_args[@]}" --report "$work/unsharded.json" >"$work/unsharded.out" \
  || { cat "$work/unsharded.out" >&2; fail "the unsharded campaign failed"; }
python3 "$here/compare_reports.py" "$work/ok/all.json" "$work/unsharded.json" || fail "merged report differs from the unsharded run"
t_compared=$SECONDS

echo "slurm_test: failure path: every shard rejects its options; the merge must still run and fail"
status=0
timeout "$wait_s" "$root/deploy/slurm/submit.sh" -n "$shards" --cases 10 --seed "$seed" -o "$work/bad" \
  --kparity "$kparity" "${small[@]}" --wait -- --property no-such-property >"$work/bad.out" 2>&1 || status=$?
cat "$work/bad.out"
[ "$status" -ne 0 ] || fail "the merge of a campaign without reports succeeded"
grep -q "shard-0.json" "$work/bad/logs/merge.out" || fail "the failed merge does not name the missing report"
for ((i = 0; i < shards; i++)); do
  [ ! -e "$work/bad/shard-$i.json" ] || fail "shard $i wrote a report for a rejected campaign"
done

echo "slurm_test: pass (cluster up in $((t_up - t_start)) s, sharded campaign + merge $((t_sharded - t_up)) s," \
     "unsharded + compare $((t_compared - t_sharded)) s, failure path $((SECONDS - t_compared)) s; total $((SECONDS - t_start)) s)"
