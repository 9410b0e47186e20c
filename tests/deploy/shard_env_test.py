#!/usr/bin/env python3
"""`kparity fuzz --shard auto`: the environment -> shard i/n mapping, through the real CLI.

  shard_env_test.py path/to/kparity        (ctest: deploy.shard_env; exit 0 pass, 1 fail)

- Kubernetes: JOB_COMPLETION_INDEX=i with KPARITY_SHARD_COUNT=n runs exactly shard i/n (its report
  equals `--shard i/n`'s: same shard, chunks, properties, cases, verdicts, buckets), for every i of
  n = 3;
- Slurm: SLURM_ARRAY_TASK_ID=i with SLURM_ARRAY_TASK_COUNT=n, likewise;
- refused with exit status 2 and a message, before any case runs: no shard variables at all, an
  index outside 0..n-1, a count of 0, a non-number, an index without its count.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SHARD_VARS = ("JOB_COMPLETION_INDEX", "KPARITY_SHARD_COUNT", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
              "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_JOB_ID")
# Small: two chunks per property of one op, so that some shards of 3 get work and some may not.
CAMPAIGN = ["--seed", "7", "--cases", "150", "--op", "kda/packed_decode", "--backend", "reference"]
N = 3


def run(kparity, args, env_extra, report=None):
    env = {k: v for k, v in os.environ.items() if k not in SHARD_VARS} | env_extra
    cmd = [str(kparity), "fuzz", *CAMPAIGN, *args] + (["--report", str(report)] if report else [])
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def main():
    kparity = pathlib.Path(sys.argv[1]).resolve()
    failures = []
    with tempfile.TemporaryDirectory(prefix="kparity-shard-env-") as tmp:
        tmp = pathlib.Path(tmp)
        for i in range(N):
            explicit = tmp / f"explicit-{i}.json"
            r = run(kparity, ["--shard", f"{i}/{N}"], {}, explicit)
            if r.returncode != 0:
                failures.append(f"--shard {i}/{N}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
                continue
            for engine, env in (("kubernetes", {"JOB_COMPLETION_INDEX": str(i), "KPARITY_SHARD_COUNT": str(N)}),
                                ("slurm", {"SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_COUNT": str(N)})):
                auto = tmp / f"{engine}-{i}.json"
                r = run(kparity, ["--shard", "auto"], env, auto)
                if r.returncode != 0:
                    failures.append(f"{engine} {env}: exit {r.returncode}: {r.stderr.strip()[-500:]}")
                    continue
                c = subprocess.run([sys.executable, str(HERE / "compare_reports.py"), str(auto), str(explicit)],
                                   capture_output=True, text=True)
                if c.returncode != 0:
                    failures.append(f"{engine} {env} is not shard {i}/{N}:\n{c.stdout}")
                got, want = json.loads(auto.read_text()), json.loads(explicit.read_text())
                if got.get("shard") != {"index": i, "count": N}:
                    failures.append(f"{engine} {env}: the report says shard {got.get('shard')}, expected {i}/{N}")
                chunks = lambda r: {p["name"]: p.get("chunks") for p in r["properties"]}
                if chunks(got) != chunks(want):
                    failures.append(f"{engine} {env}: other chunks than --shard {i}/{N}: {chunks(got)} vs {chunks(want)}")

        refused = {
            "no shard variables": {},
            "index = count (kubernetes)": {"JOB_COMPLETION_INDEX": "3", "KPARITY_SHARD_COUNT": "3"},
            "count 0 (kubernetes)": {"JOB_COMPLETION_INDEX": "0", "KPARITY_SHARD_COUNT": "0"},
            "not a number (kubernetes)": {"JOB_COMPLETION_INDEX": "one", "KPARITY_SHARD_COUNT": "3"},
            "negative index (kubernetes)": {"JOB_COMPLETION_INDEX": "-1", "KPARITY_SHARD_COUNT": "3"},
            "index without count (kubernetes)": {"JOB_COMPLETION_INDEX": "0"},
            "index = count (slurm)": {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3"},
            "index without count (slurm)": {"SLURM_ARRAY_TASK_ID": "0"},
        }
        for what, env in refused.items():
            report = tmp / "refused.json"
            r = run(kparity, ["--shard", "auto"], env, report)
            if r.returncode != 2:
                failures.append(f"{what} {env}: exit {r.returncode}, expected 2 (bad usage)")
            elif not r.stderr.strip():
                failures.append(f"{what} {env}: refused without a message")
            elif report.exists():
                failures.append(f"{what} {env}: refused but wrote a report")
            report.unlink(missing_ok=True)
    for f in failures:
        print(f"FAIL {f}")
    total = 2 * N + len(refused)
    print(f"shard_env_test: {total - len(failures)} of {total} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
