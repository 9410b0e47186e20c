#!/usr/bin/env python3
"""Runs the peer benchmark scripts (../shared/peers/, copied into .peers/scripts by
scripts/fetch-peers.sh) side by side with kparity's benchmarks, in the same device call, and writes
the figures they print to one small JSON file that bench/kda_decode_bench and bench/bench_sparse
read (KPARITY_PEERS_JSON). A peer that fails, is missing or prints nothing leaves its figures out, with
the reason under "runs"; the benchmarks then print "not measured in this run" for them.

    python3 bench/peers/run_peers.py --out $OUT/peers.json [--peers .peers] [--scripts DIR]
                                     [--logs DIR] [--only replayssm,sparse_prefill,...] [--timeout 300]

JSON (schema kparity-peers/1): measured_at (UTC), gpu, peers_dir, runs[] (name, script, peer, rc,
seconds, reason), figures{key: {peer, script, timing, value fields}}. Keys, as the benchmarks ask:
  "kda/replayssm_decode B=<B> HV=<HV>"   us (graph replay), eager_us
  "kda/packed_decode B=<B> HV=<HV>"      us (graph replay over rotating state slots)
  "sparse/paged_prefill H=<H> topk=<k>"  us, tflops
  "sparse/paged_decode H=<H> T=<T>"      us (graph replay), eager_us, tflops
  "kda/chunk_prefill seqs=<desc>", "kda/fused_recurrent_prefill seqs=<desc>"  us, mtok_s (only with --only)
The parsing follows the lines each script prints (the scripts are not ours to change): a script whose
output no longer matches gives no figures and the reason "no figures parsed".
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

SGLANG = "sglang Triton"
PEERS = {
    "replayssm": dict(script="bench_replayssm_peer.py",
                      peer=SGLANG + " ReplaySSM decode (fused_recurrent_linear_replayssm.py @03a70bf3)"),
    "fla_decode": dict(script="bench_kda_decode_fla_peer.py",
                       peer="fla fused_recurrent_kda_fwd, serving form (fla @bc3b101d)"),
    "sparse_prefill": dict(script="bench_sparse_peer.py",
                           peer=SGLANG + " V4 sparse paged prefill (paged_prefill.py @856c2e57)"),
    "sparse_decode": dict(script="bench_sparse_decode_peer.py",
                          peer=SGLANG + " V4 sparse paged decode (paged_decode.py @078e5e2a)"),
    "fla_prefill": dict(script="bench_kda_prefill_peer.py",
                        peer="fla chunk_kda / fused_recurrent_kda (fla @bc3b101d)"),
}
DEFAULT = ["replayssm", "fla_decode", "sparse_prefill", "sparse_decode"]


def parse_replayssm(text):
    # "  eager 12.3 us/call; graph 9.5 us/call" then "B=   1 H=HV=32 K=V=128 L=16 fp32 state:      9.5 us, ..."
    figs, eager = {}, None
    for line in text.splitlines():
        m = re.search(r"eager\s+([\d.]+) us/call; graph\s+([\d.]+) us/call", line)
        if m:
            eager = float(m.group(1))
            continue
        m = re.search(r"B=\s*(\d+) H=HV=(\d+) .*state:\s*([\d.]+) us", line)
        if m:
            figs[f"kda/replayssm_decode B={int(m.group(1))} HV={int(m.group(2))}"] = dict(
                us=float(m.group(3)), eager_us=eager,
                timing="CUDA-graph replay of 20 calls on one slot set, median of triton do_bench")
            eager = None
    return figs


def scan(text, pattern, figure):
    """{key: fields} from every line matching `pattern`; figure(match) -> (key, fields)."""
    return dict(figure(m) for m in (re.search(pattern, line) for line in text.splitlines()) if m)


def parse_fla_decode(text):
    # "fla fused_recurrent_kda_fwd decode B=   1:     4.31 us (graph, 7 rotating slot sets), ..."
    return scan(text, r"decode B=\s*(\d+):\s*([\d.]+) us \(graph, (\d+) rotating", lambda m: (
        f"kda/packed_decode B={int(m.group(1))} HV=32",
        dict(us=float(m.group(2)),
             timing=f"CUDA-graph replay over {m.group(3)} rotating state-slot sets, median of triton do_bench")))


def parse_sparse_prefill(text):
    # "T=4096 H=64 D=512 topk=512 win=128 P=131072: 7100 us, 48.6 TFLOP/s"
    return scan(text, r"T=(\d+) H=(\d+) D=(\d+) topk=(\d+) win=(\d+) P=(\d+): ([\d.]+) us, ([\d.]+) TFLOP/s",
                lambda m: (f"sparse/paged_prefill H={m.group(2)} topk={m.group(4)}",
                           dict(us=float(m.group(7)), tflops=float(m.group(8)),
                                timing="eager, median of triton do_bench (L2 flushed between runs)")))


def parse_sparse_decode(text):
    # "sglang decode H= 64 T= 1 keys/token=2048: eager   20.0 us, graph   14.0 us,    1.2 TFLOP/s (graph)"
    return scan(text, r"H=\s*(\d+) T=\s*(\d+) keys/token=(\d+): eager\s+([\d.]+) us, graph\s+([\d.]+) us,\s+([\d.]+) "
                r"TFLOP/s", lambda m: (f"sparse/paged_decode H={int(m.group(1))} T={int(m.group(2))}",
                                       dict(us=float(m.group(5)), eager_us=float(m.group(4)), tflops=float(m.group(6)),
                                            timing="CUDA-graph replay of 10 calls, median of triton do_bench")))


def parse_fla_prefill(text):
    # "chunk_kda            seqs       1x16 T=    16 H=HV=32 K=V=128:     1400.0 us      0.01 Mtok/s"
    return scan(text, r"^(\w+)\s+seqs\s+(\S+) T=\s*(\d+) .*:\s+([\d.]+) us\s+([\d.]+) Mtok/s", lambda m: (
        ("kda/chunk_prefill" if m.group(1) == "chunk_kda" else "kda/fused_recurrent_prefill") + f" seqs={m.group(2)}",
        dict(us=float(m.group(4)), mtok_s=float(m.group(5)), timing="eager, median of triton do_bench")))


PARSERS = dict(replayssm=parse_replayssm, fla_decode=parse_fla_decode, sparse_prefill=parse_sparse_prefill,
               sparse_decode=parse_sparse_decode, fla_prefill=parse_fla_prefill)


# One line of each script's output, rendered with the script's own format strings (sample numbers),
# and what must be parsed from it: `run_peers.py --self-test` checks the coupling without a GPU.
SAMPLES = {
    "replayssm": ("  eager {:.1f} us/call; graph {:.1f} us/call\n".format(12.3, 9.5)
                  + "B={:4d} H=HV={} K=V={} L={} fp32 state: {:8.1f} us, {:7.0f} GB/s = {:5.1f} % of copy\n"
                  .format(1, 32, 128, 16, 9.5, 252, 5.9),
                  {"kda/replayssm_decode B=1 HV=32": dict(us=9.5, eager_us=12.3)}),
    "fla_decode": ("fla fused_recurrent_kda_fwd decode B={:4d}: {:8.2f} us (graph, {} rotating slot sets), state r+w "
                   "{:.1f} MB = {:.0f} % of copy\n".format(256, 358.5, 2, 1073.7, 71),
                   {"kda/packed_decode B=256 HV=32": dict(us=358.5)}),
    "sparse_prefill": ("T={} H={} D={} topk={} win={} P={}: {:.0f} us, {:.1f} TFLOP/s\n"
                       .format(4096, 128, 512, 512, 128, 131072, 14150.4, 48.7),
                       {"sparse/paged_prefill H=128 topk=512": dict(us=14150.0, tflops=48.7)}),
    "sparse_decode": ("sglang decode H={:3d} T={:2d} keys/token={}: eager {:7.1f} us, graph {:7.1f} us, {:6.1f} TFLOP/s "
                      "(graph)\n".format(64, 8, 2048, 50.2, 41.7, 51.5),
                      {"sparse/paged_decode H=64 T=8": dict(us=41.7, eager_us=50.2, tflops=51.5)}),
    "fla_prefill": ("{:20s} seqs {:>10s} T={:6d} H=HV={} K=V={}: {:9.1f} us  {:8.2f} Mtok/s\n"
                    .format("chunk_kda", "8x1024", 8192, 32, 128, 1680.0, 4.87),
                    {"kda/chunk_prefill seqs=8x1024": dict(us=1680.0, mtok_s=4.87)}),
}


def self_test():
    bad = 0
    for name, (text, want) in SAMPLES.items():
        got = PARSERS[name](text)
        for key, fields in want.items():
            ok = key in got and all(got[key].get(f) == v for f, v in fields.items())
            bad += not ok
            print(f"{name}: {key}: {'ok' if ok else 'MISMATCH, got ' + repr(got)}")
    return 1 if bad else 0


def gpu_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="JSON file to write")
    ap.add_argument("--self-test", action="store_true", help="check the parsers on sample lines and exit")
    ap.add_argument("--peers", default=".peers", help="upstream sources (KPARITY_PEERS; fla/ for PYTHONPATH)")
    ap.add_argument("--scripts", default=None, help="peer scripts (default: <peers>/scripts, else ../shared/peers)")
    ap.add_argument("--logs", default=None, help="folder for each script's full output")
    ap.add_argument("--only", default=",".join(DEFAULT), help="comma-separated peers: " + ", ".join(PEERS))
    ap.add_argument("--timeout", type=float, default=300, help="seconds per script")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.out:
        ap.error("--out is required")

    peers_dir = os.path.abspath(a.peers)
    scripts = a.scripts or next((d for d in (os.path.join(peers_dir, "scripts"), "../shared/peers", "../../shared/peers")
                                 if os.path.isdir(d)), os.path.join(peers_dir, "scripts"))
    env = dict(os.environ, KPARITY_PEERS=peers_dir, PYTHONUNBUFFERED="1",
               PYTHONPATH=peers_dir + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    report = dict(schema="kparity-peers/1",
                  measured_at=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  gpu=gpu_name(), peers_dir=peers_dir, scripts_dir=os.path.abspath(scripts), runs=[], figures={})
    if a.logs:
        os.makedirs(a.logs, exist_ok=True)
    for name in [n for n in a.only.split(",") if n]:
        if name not in PEERS:
            sys.exit(f"run_peers: unknown peer '{name}' (known: {', '.join(PEERS)})")
        spec = PEERS[name]
        path = os.path.join(scripts, spec["script"])
        run = dict(name=name, script=spec["script"], peer=spec["peer"], rc=None, seconds=0.0, reason="")
        report["runs"].append(run)
        if not os.path.isfile(path):
            run["reason"] = f"script not found: {path} (scripts/fetch-peers.sh)"
            print(f"peer {name}: not run: {run['reason']}", flush=True)
            continue
        t0 = time.time()
        try:
            p = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env, timeout=a.timeout)
            text, run["rc"] = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            text = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            run["rc"], run["reason"] = "timeout", f"stopped after {a.timeout:.0f} s"
        run["seconds"] = round(time.time() - t0, 1)
        if a.logs:
            with open(os.path.join(a.logs, f"peer_{name}.log"), "w") as f:
                f.write(text)
        figs = PARSERS[name](text)
        for key, fig in figs.items():
            report["figures"][key] = dict(fig, peer=spec["peer"], script=spec["script"])
        if not figs and not run["reason"]:
            tail = " | ".join(text.strip().splitlines()[-3:])[-300:]
            run["reason"] = f"no figures parsed (rc {run['rc']}): {tail}"
        elif run["rc"] != 0 and not run["reason"]:
            run["reason"] = f"rc {run['rc']}; {len(figs)} figures parsed before it ended"
        print(f"peer {name}: rc {run['rc']}, {run['seconds']} s, {len(figs)} figures"
              + (f" ({run['reason']})" if run["reason"] else ""), flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"peers: {len(report['figures'])} figures -> {a.out}", flush=True)
    # Informational for the suite: a peer that could not be measured is not kparity's failure, but it
    # is reported; exit 1 only when nothing at all was measured.
    return 0 if report["figures"] else 1


if __name__ == "__main__":
    sys.exit(main())
