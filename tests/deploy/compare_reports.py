#!/usr/bin/env python3
"""Compares a merged campaign report with the report of the same campaign run unsharded.

  compare_reports.py MERGED.json UNSHARDED.json

They must agree on what sharding must not change: the seed and budget, the set of properties, and
for each property its cases, discarded cases, verdict, edge-bucket counts and worst errors (each
worst error is one case's value, which sharding moves between processes but does not recompute);
and on the totals of properties, passes, failures and cases. Timings may differ. Exit 0 when they
agree, 1 with one line per difference otherwise.
"""
import json
import sys

# Per-property fields a sharded run must reproduce exactly; timings (seconds, cases_per_minute) and
# the per-chunk seed are the run's own.
SAME = ("op", "kind", "backend", "cases", "discarded", "passed", "buckets", "max_errors", "message", "repro")
TOTALS = ("properties", "passed", "failed", "cases")


def differences(merged, unsharded):
    diffs = []
    for key in ("seed", "budget"):
        if merged.get(key) != unsharded.get(key):
            diffs.append(f"{key}: merged {merged.get(key)!r}, unsharded {unsharded.get(key)!r}")
    for key in TOTALS:
        m, u = merged.get("totals", {}).get(key), unsharded.get("totals", {}).get(key)
        if m != u:
            diffs.append(f"totals.{key}: merged {m!r}, unsharded {u!r}")
    mp = {p["name"]: p for p in merged.get("properties", [])}
    up = {p["name"]: p for p in unsharded.get("properties", [])}
    for name in sorted(up.keys() - mp.keys()):
        diffs.append(f"{name}: missing from the merged report")
    for name in sorted(mp.keys() - up.keys()):
        diffs.append(f"{name}: not in the unsharded report")
    for name in sorted(mp.keys() & up.keys()):
        for key in SAME:
            m, u = mp[name].get(key), up[name].get(key)
            if m != u:
                if isinstance(m, dict) and isinstance(u, dict):
                    keys = sorted(k for k in m.keys() | u.keys() if m.get(k) != u.get(k))
                    detail = ", ".join(f"{k}: {m.get(k)!r} vs {u.get(k)!r}" for k in keys[:6])
                    diffs.append(f"{name}: {key} differ ({detail})")
                else:
                    diffs.append(f"{name}: {key}: merged {m!r}, unsharded {u!r}")
    if not up:
        diffs.append("the unsharded report holds no property: nothing was compared")
    return diffs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        merged = json.load(f)
    with open(sys.argv[2]) as f:
        unsharded = json.load(f)
    diffs = differences(merged, unsharded)
    for d in diffs:
        print(f"DIFF {d}")
    n = len(unsharded.get("properties", []))
    print(f"compare_reports: {n} properties, {'identical' if not diffs else f'{len(diffs)} differences'}"
          f" (cases, verdicts, buckets, worst errors, totals)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
