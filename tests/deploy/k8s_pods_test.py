#!/usr/bin/env python3
"""Runs deploy/k8s's two Jobs without Kubernetes: each shard pod's container command, index by index,
with the environment Kubernetes would give it (the campaign ConfigMap, JOB_COMPLETION_INDEX, the
CPU limit as KPARITY_FUZZ_JOBS), then the merge pod's command; then compares the merged report with
one unsharded run of the same seed and budget (compare_reports.py).

  k8s_pods_test.py path/to/kparity          (ctest: deploy.k8s.pods; exit 0 pass, 1 fail)

The campaign is the test's own (4 shards, a short CPU campaign); the commands are the manifests'.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import yaml

HERE = pathlib.Path(__file__).resolve().parent
K8S = HERE.parents[1] / "deploy" / "k8s"
SHARDS = 4
CAMPAIGN = {
    "KPARITY_SHARD_COUNT": str(SHARDS),
    "KPARITY_FUZZ_SEED": "20261202",
    "KPARITY_FUZZ_CASES": "300",
    "KPARITY_FUZZ_ARGS": "--op kda/packed_decode --backend reference",
}


def container_script(name):
    doc = yaml.safe_load((K8S / f"{name}.yaml").read_text())
    c = doc["spec"]["template"]["spec"]["containers"][0]
    assert c["command"] == ["/bin/sh", "-c"], c["command"]
    return c["args"][0]


def base_env(bindir):
    # A pod sees none of a Slurm job's variables; ctest itself might run inside one.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k != "JOB_COMPLETION_INDEX"}
    env["PATH"] = f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def main():
    kparity = pathlib.Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="kparity-k8s-") as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "bin").mkdir()
        (tmp / "bin" / "kparity").symlink_to(kparity)  # the image has kparity on PATH
        campaign_dir = tmp / "reports" / "campaign"
        env = base_env(tmp / "bin") | CAMPAIGN | {"KPARITY_CAMPAIGN_DIR": str(campaign_dir)}

        shard_pod = container_script("fuzz-job")
        for i in range(SHARDS):
            r = subprocess.run(["sh", "-c", shard_pod], env=env | {"JOB_COMPLETION_INDEX": str(i), "KPARITY_FUZZ_JOBS": "1"},
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout[-3000:], r.stderr[-3000:], sep="\n")
                print(f"FAIL shard pod {i}: exit status {r.returncode}")
                return 1
            report = campaign_dir / f"shard-{i}.json"
            if not report.is_file():
                print(f"FAIL shard pod {i} left no shard-{i}.json")
                return 1
            ran = json.loads(report.read_text()).get("shard")
            if ran != {"index": i, "count": SHARDS}:
                print(f"FAIL shard pod {i} ran shard {ran}, expected {i}/{SHARDS}")
                return 1
        leftovers = sorted(p.name for p in campaign_dir.glob(".shard-*.part"))
        if leftovers:
            print(f"FAIL temporary reports left behind: {leftovers}")
            return 1

        r = subprocess.run(["sh", "-c", container_script("merge-job")], env=env, capture_output=True, text=True,
                           timeout=300)
        print(r.stdout[-2000:], end="")
        if r.returncode != 0 or not (campaign_dir / "all.json").is_file():
            print(r.stderr[-3000:])
            print(f"FAIL merge pod: exit status {r.returncode}")
            return 1

        unsharded = tmp / "unsharded.json"
        r = subprocess.run([str(kparity), "fuzz", "--seed", CAMPAIGN["KPARITY_FUZZ_SEED"], "--cases",
                            CAMPAIGN["KPARITY_FUZZ_CASES"], *CAMPAIGN["KPARITY_FUZZ_ARGS"].split(), "--report",
                            str(unsharded)], env=base_env(tmp / "bin"), capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-3000:], r.stderr[-3000:], sep="\n")
            print("FAIL the unsharded campaign failed")
            return 1
        r = subprocess.run([sys.executable, str(HERE / "compare_reports.py"), str(campaign_dir / "all.json"),
                            str(unsharded)])
        if r.returncode != 0:
            print("FAIL the merged report of the pods differs from the unsharded run")
            return 1
    print(f"k8s_pods_test: pass ({SHARDS} shard pods and the merge pod, merged = unsharded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
