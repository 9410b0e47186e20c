"""fla's KDA prefill (chunk_kda, fused_recurrent_kda) at the shapes of bench/kda_prefill_bench.cpp (issue 30).

The shared peer script (bench_kda_prefill_peer.py) times H = 32 and shapes up to 4x4096; issue 30's table
needs 1x8192, 8x1024, 64x256, 1x32768 and the 16-sequence varlen mix at H = 32 and 64. Inputs follow
kda_prefill_bench: bf16 q/k/v/beta, fp32 log-decay in [-0.1, 0), l2norm in kernel, fp32 V-first
initial/final state, B = 1 with cu_seqlens. Times are medians of triton's do_bench (eager).
Prints one line per kernel and shape in the format run_peers.py parses, plus a JSON file with --json.

  PYTHONPATH=.peers/fla python3 bench/peers/fla_prefill_shapes.py [--json out.json] [--heads 32,64]
"""
import argparse
import json
import sys

import torch
from triton.testing import do_bench

SHAPES = [
    ("1x8192", [8192]),
    ("8x1024", [1024] * 8),
    ("64x256", [256] * 64),
    ("1x32768", [32768]),
    ("varlen16", [64, 4096, 512, 128, 2048, 96, 1024, 3000, 256, 700, 64, 1536, 4096, 200, 900, 2500]),
]
K = V = 128


def inputs(lens, H, dev="cuda"):
    T = sum(lens)
    gen = torch.Generator(device=dev).manual_seed(1234)
    def u(shape, lo, hi, dt):
        return (torch.rand(shape, generator=gen, device=dev, dtype=torch.float32) * (hi - lo) + lo).to(dt)
    q = u((1, T, H, K), -1, 1, torch.bfloat16)
    k = u((1, T, H, K), -1, 1, torch.bfloat16)
    v = u((1, T, H, V), -1, 1, torch.bfloat16)
    g = u((1, T, H, K), -0.1, 0.0, torch.float32)
    beta = u((1, T, H), 0, 1, torch.bfloat16)
    h0 = u((len(lens), H, V, K), -0.02, 0.02, torch.float32)
    cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int64, device=dev)
    return T, q, k, v, g, beta, h0, cu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--heads", default="32,64")
    ap.add_argument("--skip-recurrent-above", type=int, default=1 << 30,
                    help="skip fused_recurrent_kda for shapes with more tokens than this")
    a = ap.parse_args()
    from fla.ops.kda import chunk_kda, fused_recurrent_kda
    rows = []
    for H in (int(h) for h in a.heads.split(",")):
        for name, lens in SHAPES:
            T, q, k, v, g, beta, h0, cu = inputs(lens, H)
            for kname, fn in (("chunk_kda", chunk_kda), ("fused_recurrent_kda", fused_recurrent_kda)):
                if kname == "fused_recurrent_kda" and T > a.skip_recurrent_above:
                    continue
                kw = dict(scale=K ** -0.5, initial_state=h0, output_final_state=True,
                          use_qk_l2norm_in_kernel=True, cu_seqlens=cu if kname == "chunk_kda" else cu.int())
                try:
                    with torch.inference_mode():
                        f = lambda: fn(q, k, v, g, beta, **kw)
                        f()
                        torch.cuda.synchronize()
                        ms = do_bench(f, warmup=10, rep=100, return_mode="median")
                except Exception as e:  # a peer that refuses a shape is reported, not fatal
                    print(f"{kname:20s} seqs {name:>10s}: error {type(e).__name__}: {str(e)[:160]}")
                    continue
                print(f"{kname:20s} seqs {name:>10s} T={T:6d} H=HV={H} K=V={K}: {ms * 1e3:9.1f} us  "
                      f"{T / ms / 1e3:8.2f} Mtok/s", flush=True)
                rows.append(dict(kernel=kname, shape=name, H=H, T=T, ms=ms))
            del q, k, v, g, beta, h0, cu
            torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(peer="fla @bc3b101d", gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                           rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
