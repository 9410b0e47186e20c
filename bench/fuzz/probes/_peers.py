"""Shared helpers of the upstream probes: loading the upstream files from $KPARITY_PEERS (never copied
here; scripts/fetch-peers.sh fills the git-ignored .peers/), their provenance, a JSON-safe summary of
a tensor's value classes, and a per-bucket runner that records exceptions instead of dying.

Plain PyTorch; no kparity import. The sglang files import a few sglang/aiter utilities that only matter
on ROCm: they are stubbed with NVIDIA answers (not HIP, not gfx95x/gfx1250, fp8 e4m3fn, the SM count
for aiter's get_num_sms), as bench/fuzz/upstream.py does.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import sys
import time
import traceback
import types
from typing import Any, Callable

# The upstream versions scripts/fetch-peers.sh pins (the sglang files by commit; fla by the commit it
# archived, default bc3b101d; KPARITY_FLA_COMMIT to record another).
# Shared by the conventions probes (upstream_conventions.py, conventions_sparse.py).
FLT_MAX = 3.4028234663852886e38
DEV = "cuda"
INF, NAN = math.inf, math.nan


def raiser(e: BaseException) -> Callable[[], dict[str, Any]]:
    """A bucket's body that raises `e` (a set-up that failed is recorded as the bucket's exception)."""
    def f() -> dict[str, Any]:
        raise e
    return f


SGLANG_FILES = {
    "fused_recurrent_linear_replayssm": ("python/sglang/kernels/ops/attention/fla/fused_recurrent_linear_replayssm.py",
                                         "03a70bf334be953130693f4f67453c33ca7f3290"),
    "paged_prefill": ("python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/paged_prefill.py",
                      "856c2e57c8a03551f7659a13e05c2ab92989e43f"),
    "paged_decode": ("python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/paged_decode.py",
                     "078e5e2a5227bb6af1727574bb6212f0afb25250"),
}
FLA_REPO = "fla-org/flash-linear-attention"


def peers_dir() -> str:
    """$KPARITY_PEERS, default .peers (relative to the working directory, else to the checkout)."""
    p = os.environ.get("KPARITY_PEERS", ".peers")
    if not os.path.isabs(p) and not os.path.isdir(p):
        here = os.path.dirname(os.path.abspath(__file__))
        alt = os.path.join(here, "..", "..", "..", p)
        if os.path.isdir(alt):
            p = alt
    return os.path.abspath(p)


def out_dir() -> str:
    d = os.environ.get("OUT", "probe-out")
    os.makedirs(d, exist_ok=True)
    return d


def _sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def provenance(what: str) -> dict[str, Any]:
    """Where the code under test came from: repo, path, commit, and the sha256 of the file used."""
    peers = peers_dir()
    if what in SGLANG_FILES:
        path, commit = SGLANG_FILES[what]
        local = os.path.join(peers, what + ".py")
        return {"repo": "sgl-project/sglang", "path": path, "commit": commit, "file": local, "sha256": _sha256(local)}
    # fla: `what` is a path inside the fla package, e.g. "fla/ops/kda/fused_recurrent.py"
    local = os.path.join(peers, what)
    return {"repo": FLA_REPO, "path": what, "commit": os.environ.get("KPARITY_FLA_COMMIT", "bc3b101d"),
            "file": local, "sha256": _sha256(local)}


def _stub(name: str, **attrs: Any) -> None:
    m = sys.modules.get(name) or types.ModuleType(name)
    for k, v in attrs.items():
        setattr(m, k, v)
    sys.modules[name] = m


def _stub_sglang_imports() -> None:
    import torch
    for n in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.quantization", "sglang.srt",
              "aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton.utils"):
        _stub(n)
    _stub("sglang.srt.utils", is_hip=lambda: False)
    _stub("sglang.srt.utils.common", is_gfx95_supported=lambda: False, is_gfx1250_supported=lambda: False)
    _stub("sglang.kernels.ops.quantization.fp8_kernel", is_fp8_fnuz=lambda: False)
    _stub("aiter.ops.triton.utils.device_info",
          get_num_sms=lambda: torch.cuda.get_device_properties(0).multi_processor_count)


def load_sglang(name: str) -> types.ModuleType:
    """One of the three sglang files in $KPARITY_PEERS, imported under its stem (paged_decode, ...)."""
    if name in sys.modules and (getattr(sys.modules[name], "__file__", None) or "").startswith(peers_dir()):
        return sys.modules[name]
    _stub_sglang_imports()
    path = os.path.join(peers_dir(), name + ".py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} missing: run scripts/fetch-peers.sh (see its header)")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def load_fla() -> types.ModuleType:
    """fla.ops.kda from $KPARITY_PEERS/fla."""
    peers = peers_dir()
    if not os.path.isfile(os.path.join(peers, "fla", "ops", "kda", "fused_recurrent.py")):
        raise FileNotFoundError(f"{peers}/fla missing: run FLA_MIRROR=... scripts/fetch-peers.sh")
    if peers not in sys.path:
        sys.path.insert(0, peers)
    import fla.ops.kda as kda  # noqa: PLC0415
    return kda


def prune_fla_autotune(keep: int = 1) -> int:
    """Cut every autotuned fla kernel down to its first `keep` configs, so a first call compiles a
    handful of kernels instead of benchmarking dozens of configs (chunk_kda's first call otherwise runs
    for tens of seconds). Any config is a valid one; only tiling and speed change. Returns how many
    autotuners were cut."""
    from triton.runtime.autotuner import Autotuner
    seen: set[int] = set()
    for name, mod in list(sys.modules.items()):
        if not name.startswith("fla.") or mod is None:
            continue
        for obj in list(vars(mod).values()):
            # @triton.heuristics wraps the autotuner: walk the .fn chain
            for _ in range(4):
                if obj is None:
                    break
                if isinstance(obj, Autotuner) and id(obj) not in seen:
                    seen.add(id(obj))
                    if len(obj.configs) > keep:
                        obj.configs = obj.configs[:keep]
                obj = getattr(obj, "fn", None)
    return len(seen)


def poison_allocator(numel: int, device: str = "cuda") -> None:
    """Fill a fresh caching-allocator block of `numel` fp32 with NaN and free it, so that an
    uninitialised torch.empty of the same size that follows most likely reads NaN, not leftover zeros
    (makes 'never written' visible)."""
    import torch
    x = torch.full((max(1, numel),), float("nan"), dtype=torch.float32, device=device)
    torch.cuda.synchronize()
    del x


# --- value classes ---------------------------------------------------------------------------------

def _num(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def summarize(t: Any, sample: int = 4) -> dict[str, Any]:
    """A tensor's value classes. class is one of: empty, zero, finite (finite, not all zero), nan,
    +inf, -inf (all elements), or mixed(...) listing the classes present."""
    import torch
    if t is None:
        return {"class": "none"}
    if not isinstance(t, torch.Tensor):
        return {"class": "not-a-tensor", "repr": repr(t)[:200]}
    x = t.detach().to("cpu", torch.float64).reshape(-1)
    n = x.numel()
    info: dict[str, Any] = {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
    if n == 0:
        info["class"] = "empty"
        return info
    nan = int(torch.isnan(x).sum())
    pinf = int((x == math.inf).sum())
    ninf = int((x == -math.inf).sum())
    zero = int((x == 0).sum())
    fin_nz = n - nan - pinf - ninf - zero
    counts = {"nan": nan, "+inf": pinf, "-inf": ninf, "zero": zero, "finite": fin_nz}
    present = [k for k, v in counts.items() if v]
    if present == ["zero"]:
        cls = "zero"
    elif present == ["finite"] or present == ["finite", "zero"] or present == ["zero", "finite"]:
        cls = "finite"
    elif len(present) == 1:
        cls = present[0]
    else:
        cls = "mixed(" + ",".join(present) + ")"
    info.update(counts)
    info["class"] = cls
    fin = x[torch.isfinite(x)]
    if fin.numel():
        info["max_abs_finite"] = float(fin.abs().max())
    info["sample"] = [_num(float(v)) for v in x[:sample]]
    return info


def class_matches(observed: str, predicted: str | list[str]) -> bool:
    """predicted: a class, or a list of acceptable classes; 'finite' accepts an all-finite tensor that
    happens to contain zeros, 'nonfinite' any class containing nan or inf."""
    preds = predicted if isinstance(predicted, list) else [predicted]
    for p in preds:
        if p == observed:
            return True
        if p == "nonfinite" and any(s in observed for s in ("nan", "inf")):
            return True
        if p == "has-nan" and "nan" in observed:
            return True
    return False


# --- the bucket runner -----------------------------------------------------------------------------

class Recorder:
    """Runs buckets one by one; an exception is recorded (type, message, last frame) and the next bucket
    runs. Buckets after `budget_s` seconds are recorded as skipped."""

    def __init__(self, budget_s: float = 50.0) -> None:
        self.t0 = time.time()
        self.budget_s = budget_s
        self.records: list[dict[str, Any]] = []

    def elapsed(self) -> float:
        return time.time() - self.t0

    def run(self, op: str, bucket: str, call: str, fn: Callable[[], dict[str, Any]], *,
            upstream: dict[str, Any], predicted: dict[str, Any] | None = None,
            expect_raise: str | None = None, note: str = "") -> dict[str, Any]:
        import torch
        rec: dict[str, Any] = {"op": op, "bucket": bucket, "call": call, "upstream": upstream}
        if predicted:
            rec["predicted"] = predicted
        if expect_raise:
            rec["predicted_raise"] = expect_raise
        if note:
            rec["note"] = note
        if self.elapsed() > self.budget_s:
            rec["status"] = "skipped"
            rec["why"] = f"time budget {self.budget_s:.0f} s spent"
            self.records.append(rec)
            print(f"[skip] {op} {bucket}", flush=True)
            return rec
        t = time.time()
        try:
            observed = fn()
            if torch.cuda.is_available():
                torch.cuda.synchronize()  # an asynchronous fault belongs to this bucket
            rec["status"] = "ok"
            rec["observed"] = observed
        except Exception as e:  # noqa: BLE001  (the point: record it, go on)
            tb = traceback.extract_tb(e.__traceback__)
            last = tb[-1] if tb else None
            rec["status"] = "raised"
            rec["exception"] = {"type": type(e).__name__, "message": str(e)[:1500],
                                "where": f"{os.path.basename(last.filename)}:{last.lineno}" if last else ""}
        rec["seconds"] = round(time.time() - t, 3)
        rec["as_predicted"] = self._judge(rec)
        self.records.append(rec)
        cls = ""
        if rec["status"] == "ok":
            cls = " ".join(f"{k}={v.get('class')}" for k, v in rec["observed"].items() if isinstance(v, dict)
                           and "class" in v)
        else:
            cls = f"{rec['exception']['type']}: {rec['exception']['message'][:120]}"
        mark = {True: "as predicted", False: "NOT as predicted", None: ""}[rec["as_predicted"]]
        print(f"[{rec['status']}] {op} {bucket} ({rec['seconds']:.1f} s) {cls} {mark}", flush=True)
        return rec

    @staticmethod
    def _judge(rec: dict[str, Any]) -> bool | None:
        if "predicted_raise" in rec:
            return rec["status"] == "raised" and rec["exception"]["type"] == rec["predicted_raise"]
        pred = rec.get("predicted")
        if not pred:
            return None
        if rec["status"] != "ok":
            return False
        obs = rec["observed"]
        for name, p in pred.items():
            o = obs.get(name)
            if isinstance(p, bool):  # a boolean fact the bucket computed
                if o is not p:
                    return False
            elif not isinstance(o, dict) or not class_matches(o.get("class", ""), p):
                return False
        return True

    def write(self, path: str, header: dict[str, Any]) -> None:
        doc = dict(header)
        doc["seconds_total"] = round(self.elapsed(), 2)
        doc["buckets"] = self.records
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, default=str)
            f.write("\n")


def environment() -> dict[str, Any]:
    env: dict[str, Any] = {"python": sys.version.split()[0], "peers": peers_dir()}
    try:
        import torch
        env["torch"] = torch.__version__
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            env["device"] = p.name
            env["sms"] = p.multi_processor_count
    except Exception as e:  # noqa: BLE001
        env["torch"] = f"unavailable: {e}"
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception as e:  # noqa: BLE001
        env["triton"] = f"unavailable: {e}"
    return env
