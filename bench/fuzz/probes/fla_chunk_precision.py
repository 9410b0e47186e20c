"""Is chunk_kda's final_state/out disagreement with kparity's oracle precision, not a bug? (issue 24)

The H200 run of 2026-12-02 (bench/results/upstream_2026-12-02.md) found fla's chunk_kda off by 0.2-0.6%
relative on calls where kparity's faithful model agrees with the exact oracle to 1e-7, read as the bf16
operands of the chunked form's tensor-core dots (findings f1ad4288, db8e567a). This probe settles it on
the saved calls (`kparity run` dumps: inputs and the oracle's `expected.*`): each call runs twice,

  * as drawn (bf16 q/k/v, the gate and beta as drawn), and
  * with every floating input widened to fp32 (same values: widening is exact),

and the error against the oracle is printed in units of one bf16 rounding of the oracle's value
(2^-9 relative). Precision predicts: the first run's error is a few bf16 roundings; the second's is
several times smaller (Triton's fp32 dots run as TF32, 2^-11, so about 4x, not 2^16x). A bug predicts
errors that do not shrink with the operands' precision, or are far beyond a few roundings.

    KPARITY_PEERS=.peers OUT=out python bench/fuzz/probes/fla_chunk_precision.py [DUMP ...]
    python bench/fuzz/probes/fla_chunk_precision.py --list     # parse the dumps only (no GPU)

Default dumps: bench/results/upstream_2026-12-02/corpus/kda.chunk.*.safetensors. Plain PyTorch + fla;
no kparity import (the dumps are read with the small safetensors reader below). Writes
$OUT/fla_chunk_precision.json.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import struct
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

_DT = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
       "I64": torch.int64, "I32": torch.int32, "BOOL": torch.bool}
# Written by the call (poisoned inputs in a dump) or kparity's own bookkeeping: never passed.
_NOT_PASSED = {"out", "final_state"}


def read_dump(path: str) -> tuple[dict[str, str], dict[str, torch.Tensor]]:
    """(metadata, tensors) of a safetensors file."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        buf = bytearray(raw[8 + n + a: 8 + n + b])
        dt = _DT[h["dtype"]]
        t = torch.frombuffer(buf, dtype=torch.uint8).view(dt) if b > a else torch.empty(0, dtype=dt)
        tensors[name] = t.reshape(h["shape"])
    return meta, tensors


def chunk_call(meta: dict[str, str], tensors: dict[str, torch.Tensor]) -> dict[str, object]:
    """chunk_kda's keyword arguments: the dump's tensors, scalars and flags (upstream names)."""
    kw: dict[str, object] = {n: t for n, t in tensors.items() if not n.startswith("expected.") and n not in _NOT_PASSED}
    for k, v in meta.items():
        if k.startswith("kparity.") or k == "op":
            continue
        if v in ("true", "false"):
            kw[k] = v == "true"
        else:
            x = float(v)
            kw[k] = int(x) if k == "chunk_size" else x
    return kw


def bf16_roundings(err: torch.Tensor, ref: torch.Tensor) -> float:
    """max err / (one bf16 rounding of ref: 2^-9 of its binade, at least of the smallest normal)."""
    unit = torch.exp2(torch.floor(torch.log2(ref.abs().clamp_min(2.0 ** -126)))) * 2.0 ** -9
    ok = torch.isfinite(err) & torch.isfinite(ref)
    return float((err[ok] / unit[ok]).max()) if ok.any() else math.nan


def compare(got: torch.Tensor, want: torch.Tensor) -> dict[str, object]:
    g, w = got.double().cpu(), want.double().cpu()
    err = (g - w).abs()
    same_class = bool(((torch.isnan(g) == torch.isnan(w)) & (torch.isinf(g) == torch.isinf(w))).all())
    ok = torch.isfinite(err)
    return {"max_abs": float(err[ok].max()) if ok.any() else math.nan, "bf16_roundings": bf16_roundings(err, w),
            "classes_agree": same_class}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", nargs="*")
    ap.add_argument("--list", action="store_true", help="parse the dumps and print their calls only")
    args = ap.parse_args()
    root = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
    paths = args.dumps or sorted(glob.glob(os.path.join(root, "bench", "results", "upstream_2026-12-02", "corpus",
                                                        "kda.chunk.*.safetensors")))
    calls = []
    for p in paths:
        meta, tensors = read_dump(p)
        if meta.get("op") != "kda/chunk":
            continue
        calls.append((os.path.basename(p), meta, tensors, chunk_call(meta, tensors)))
    if args.list or not torch.cuda.is_available():
        for name, meta, _, kw in calls:
            shapes = {k: tuple(v.shape) for k, v in kw.items() if isinstance(v, torch.Tensor)}
            print(name, meta.get("kparity.description", "")[:120], shapes,
                  {k: v for k, v in kw.items() if not isinstance(v, torch.Tensor)})
        if not args.list:
            print("fla_chunk_precision: no CUDA device; parsed only")
        return 0

    import _peers

    _peers.load_fla()
    _peers.prune_fla_autotune()
    from fla.ops.kda import chunk_kda

    rows = []
    for name, meta, tensors, kw in calls:
        row: dict[str, object] = {"dump": name, "call": meta.get("kparity.description", "")}
        for label, widen in (("as drawn", False), ("fp32 inputs", True)):
            dev = {k: (v.to("cuda").float() if widen and v.is_floating_point() else v.to("cuda"))
                   if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
            try:
                with torch.inference_mode():
                    r = chunk_kda(**dev)
                o, final = r[0], r[1]
                row[label] = {"out": compare(o, tensors["expected.out"])}
                if final is not None and "expected.final_state" in tensors:
                    row[label]["final_state"] = compare(final, tensors["expected.final_state"])
            except Exception as e:  # noqa: BLE001  (recorded per call)
                row[label] = {"error": f"{type(e).__name__}: {e}"}
        rows.append(row)
        print(json.dumps(row))
    out = _peers.out_dir()
    with open(os.path.join(out, "fla_chunk_precision.json"), "w") as f:
        json.dump({"environment": _peers.environment(), "fla": _peers.provenance("fla/ops/kda/chunk.py"),
                   "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
