"""The sparse-attention half of upstream_conventions.py (sglang's Triton V4 sparse paged prefill and
decode on the special-value and edge buckets; that script's docstring says what is recorded and how
to run it). Stand-alone: plain PyTorch plus the upstream files from $KPARITY_PEERS."""
from __future__ import annotations

import math
import os
import sys
from typing import Any, Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _peers  # noqa: E402
from _peers import DEV, FLT_MAX, INF, NAN, raiser as _raiser, summarize  # noqa: E402,F401


# --- sparse attention (sglang paged prefill / decode) ----------------------------------------------

def csr(lists: list[list[int]], dtype: torch.dtype = torch.int32) -> tuple[torch.Tensor, torch.Tensor]:
    flat = [i for lst in lists for i in lst] + [0]  # one spare entry, never referenced (no empty buffer)
    ptr = [0]
    for lst in lists:
        ptr.append(ptr[-1] + len(lst))
    return torch.tensor(flat, dtype=dtype), torch.tensor(ptr, dtype=dtype)


def base_lists(T: int) -> list[list[int]]:
    """Token t selects three rows of 1..8; token 1 alone also selects row 10; rows 0, 9, 11 are never
    selected (row 0 is where a negative index is clamped to by the prefill kernel, then masked)."""
    lists = [[1 + (2 * t) % 8, 1 + (2 * t + 1) % 8, 1 + (2 * t + 3) % 8] for t in range(T)]
    if T > 1:
        lists[1] = [3, 4, 10]
    return lists


def sparse_tensors(T: int, H: int, D: int, P: int = 12, E: int = 4, seed: int = 0,
                   dtype: torch.dtype = torch.bfloat16) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {"q": (torch.randn(T, H, D, generator=g) * 0.5).to(dtype),
            "ukv": (torch.randn(P, D, generator=g) * 0.5).to(dtype),
            "kv": (torch.randn(E, D, generator=g) * 0.5).to(dtype),
            "sink": torch.full((H,), 0.25, dtype=torch.float32)}


def sparse_ref(q: torch.Tensor, rows: list[list[torch.Tensor]], sink: torch.Tensor, scale: float) -> torch.Tensor:
    """fp64 math with kparity's conventions (see the module docstring)."""
    T, H, D = q.shape
    q64, s64 = q.double().cpu(), sink.double().cpu()
    out = torch.zeros(T, H, D, dtype=torch.float64)
    seed = torch.full((H,), -FLT_MAX, dtype=torch.float64)
    for t in range(T):
        if rows[t]:
            R = torch.stack([r.double().cpu() for r in rows[t]])  # [n, D]
            s = scale * (q64[t] @ R.T)  # [H, n]
            M = torch.maximum(torch.maximum(seed, s.max(dim=1).values), s64)  # both propagate NaN
            w = torch.exp(s - M[:, None])
            Z = w.sum(1) + torch.exp(s64 - M)
            num = w @ R
        else:
            M = torch.maximum(seed, s64)
            Z = torch.exp(s64 - M)
            num = torch.zeros(H, D, dtype=torch.float64)
        o = num / Z[:, None]
        o = torch.where((Z == 0)[:, None], torch.zeros_like(o), o)  # Z > 0 else 0; a NaN Z stays NaN
        o[s64 == INF] = 0.0  # C.3: a +inf sink gives zeros
        out[t] = o
    return out


def sel(x: torch.Tensor, t: Any = None, h: Any = None, d: Any = None, invert: bool = False) -> torch.Tensor:
    """Elements of [T, H, D] x at the given token/head/column (ints or None = all); invert: the rest."""
    m = torch.ones(x.shape, dtype=torch.bool, device=x.device)
    for axis, i in enumerate((t, h, d)):
        if i is not None:
            keep = torch.zeros(x.shape[axis], dtype=torch.bool, device=x.device)
            keep[i] = True
            shape = [1, 1, 1]
            shape[axis] = -1
            m &= keep.view(shape)
    return x[~m] if invert else x[m]


def sparse_observe(out: torch.Tensor, ref: torch.Tensor | None, slices: dict[str, dict[str, Any]]) -> dict[str, Any]:
    obs: dict[str, Any] = {"out": summarize(out)}
    o = out.detach().cpu().double()
    for label, kw in slices.items():
        obs[label] = summarize(sel(o, **kw))
        if ref is not None:
            obs["ref " + label] = summarize(sel(ref, **kw))
    if ref is not None:
        obs["ref"] = summarize(ref)
        both = torch.isfinite(o) & torch.isfinite(ref)
        if both.any():
            obs["max_abs_diff_vs_ref_where_both_finite"] = float((o - ref)[both].abs().max())
    return obs


def probe_prefill(rec: _peers.Recorder) -> None:
    up = _peers.provenance("paged_prefill")
    try:
        mod = _peers.load_sglang("paged_prefill")
    except Exception as e:  # noqa: BLE001
        rec.run("sglang.paged_prefill", "import", "import the file", _raiser(e), upstream=up)
        return
    T, H, D, scale = 4, 16, 64, 0.125  # softmax_scale and every stride are constexpr: keep them fixed

    def call(x: dict[str, torch.Tensor], pre: list[list[int]], ext: list[list[int]],
             idx_dtype: torch.dtype = torch.int32) -> tuple[torch.Tensor, torch.Tensor]:
        ip, pp = csr(pre, idx_dtype)
        ie, pe = csr(ext, idx_dtype)
        out = mod.sparse_attn_v4_paged_prefill(x["q"].to(DEV), x["ukv"].to(DEV), ip.to(DEV), pp.to(DEV),
                                               x["kv"].to(DEV), ie.to(DEV), pe.to(DEV), x["sink"].to(DEV), scale)
        rows = [[x["ukv"][i] for i in pre[t] if i >= 0] + [x["kv"][e] for e in ext[t] if e >= 0]
                for t in range(x["q"].shape[0])]
        return out, sparse_ref(x["q"], rows, x["sink"], scale)

    def bucket(name: str, desc: str, mutate: Callable[[dict[str, torch.Tensor], list, list], None] | None,
               slices: dict[str, dict[str, Any]], predicted: dict[str, Any], *, t: int = T, d: int = D,
               idx_dtype: torch.dtype = torch.int32, expect_raise: str | None = None, note: str = "") -> None:
        def fn() -> dict[str, Any]:
            x = sparse_tensors(t, H, d)
            pre, ext = base_lists(t), [[i % 4] for i in range(t)]
            if mutate:
                mutate(x, pre, ext)
            out, ref = call(x, pre, ext, idx_dtype)
            return sparse_observe(out, ref, slices)
        rec.run("sglang.paged_prefill", name, f"T={t} H={H} D={d} bf16, 3 prefix + 1 extend keys/token, "
                f"sink fp32 0.25, scale {scale}; {desc}", fn, upstream=up, predicted=predicted,
                expect_raise=expect_raise, note=note)

    t1 = {"out[t=1]": {"t": 1}, "out[t!=1]": {"t": 1, "invert": True}}

    def empty1(x, pre, ext):
        pre[1], ext[1] = [], []

    def sentinel1(x, pre, ext):
        pre[1], ext[1] = [-1, -1, -1], [-1]

    def sink(v):
        def m(x, pre, ext):
            x["sink"][:] = v
        return m

    def both(*fs):
        def m(x, pre, ext):
            for f in fs:
                f(x, pre, ext)
        return m

    bucket("base", "all finite", None, {}, {"out": "finite"})
    bucket("empty-row/finite-sink", "token 1 has empty prefix and extend spans", empty1, t1,
           {"out[t=1]": "zero", "out[t!=1]": "finite"})
    bucket("empty-row/sink=-inf", "token 1 empty; sink -inf on every head", both(empty1, sink(-INF)), t1,
           {"out[t=1]": "zero", "out[t!=1]": "finite"})
    bucket("all-sentinel/finite-sink", "token 1 lists only -1 entries", sentinel1, t1,
           {"out[t=1]": "zero", "out[t!=1]": "finite"})
    bucket("all-sentinel/sink=-inf", "token 1 lists only -1 entries; sink -inf", both(sentinel1, sink(-INF)), t1,
           {"out[t=1]": "zero", "out[t!=1]": "finite"})

    def sentinel_clamp_nan(x, pre, ext):
        pre[1] = [-1, 3, 4, 10]
        x["ukv"][0, 5] = NAN  # -1 is clamped to row 0, whose load is masked out
    bucket("sentinel-row0-nan", "token 1 lists -1 first; unified_kv row 0 (the clamp target) has a NaN",
           sentinel_clamp_nan, {}, {"out": "finite"})
    bucket("unselected-row-nan", "unified_kv row 9 (never selected) is NaN",
           lambda x, p, e: x["ukv"][9].fill_(NAN), {}, {"out": "finite"})
    bucket("sink=+inf", "sink +inf on every head", sink(INF), {}, {"out": "zero"})
    bucket("sink=-inf", "sink -inf on every head (plain softmax)", sink(-INF), {}, {"out": "finite"})
    h3 = {"out[h=3]": {"h": 3}, "out[h!=3]": {"h": 3, "invert": True}}

    def sink_nan_h3(x, pre, ext):
        x["sink"][3] = NAN
    bucket("sink=nan", "sink NaN on head 3", sink_nan_h3, h3, {"out[h=3]": "zero", "out[h!=3]": "finite"})
    bucket("sink=nan/empty-row", "sink NaN on head 3, token 1 empty", both(sink_nan_h3, empty1),
           {"out[t=1]": {"t": 1}, "out[h=3]": {"h": 3}}, {"out[t=1]": "zero", "out[h=3]": "zero"})
    bucket("kv-nan-selected/prefix", "unified_kv row 10 (token 1 only) has a NaN at d=5",
           lambda x, p, e: x["ukv"][10].__setitem__(5, NAN), t1, {"out[t=1]": "zero", "out[t!=1]": "finite"})
    bucket("kv-nan-selected/extend", "kv row 2 (token 2 only) has a NaN at d=5",
           lambda x, p, e: x["kv"][2].__setitem__(5, NAN),
           {"out[t=2]": {"t": 2}, "out[t!=2]": {"t": 2, "invert": True}}, {"out[t=2]": "zero", "out[t!=2]": "finite"})

    def kv_inf(v):
        def m(x, pre, ext):
            x["q"][1, :, 7] = 1.0  # q > 0 at d=7: the key's logit is v itself
            x["ukv"][10, 7] = v
        return m
    bucket("kv+inf-selected", "unified_kv[10, 7] = +inf, q[1, :, 7] = 1 (logit +inf)", kv_inf(INF), t1,
           {"out[t=1]": "zero", "out[t!=1]": "finite"})
    t1d7 = {"out[t=1,d=7]": {"t": 1, "d": 7}, "out[t=1,d!=7]": {"t": 1, "d": [i for i in range(D) if i != 7]},
            "out[t!=1]": {"t": 1, "invert": True}}
    bucket("kv-inf-selected", "unified_kv[10, 7] = -inf, q[1, :, 7] = 1 (logit -inf; p = 0 meets V = -inf)",
           kv_inf(-INF), t1d7, {"out[t=1,d=7]": "nan", "out[t=1,d!=7]": "finite", "out[t!=1]": "finite"})

    def lone_neginf(x, pre, ext):
        kv_inf(-INF)(x, pre, ext)
        pre[1], ext[1] = [10], []
        x["sink"][:] = -INF
    bucket("lone-key-logit=-inf/sink=-inf", "token 1's only key has logit -inf; sink -inf", lone_neginf, t1d7,
           {"out[t=1,d=7]": "zero", "out[t=1,d!=7]": "zero"},
           note="decode differs here (its invalid columns get weight exp2(0) = 1)")

    def q_nan(x, pre, ext):
        x["q"][2, 5, 7] = NAN
    bucket("q-nan", "q[2, 5, 7] = NaN", q_nan, {"out[t=2,h=5]": {"t": 2, "h": 5}, "out[t=2,h!=5]": {
        "t": 2, "h": [i for i in range(H) if i != 5]}}, {"out[t=2,h=5]": "zero", "out[t=2,h!=5]": "finite"})
    bucket("T=0", "no tokens (q [0, H, D], indptr [0])", None, {}, {"out": "empty"}, t=0)
    bucket("int64-indices", "index and indptr tensors int64 (the wrapper converts them)", None, {},
           {"out": "finite"}, idx_dtype=torch.int64)
    bucket("D=9", "head_dim 9: BLOCK_D = 16, the smallest that tl.dot accepts (one more compile)", None, {},
           {"out": "finite"}, d=9)
    bucket("D=8", "head_dim 8: BLOCK_D = 8 < 16", None, {}, {}, d=8, expect_raise="CompilationError")


def probe_decode(rec: _peers.Recorder) -> None:
    up = _peers.provenance("paged_decode")
    try:
        mod = _peers.load_sglang("paged_decode")
    except Exception as e:  # noqa: BLE001
        rec.run("sglang.paged_decode", "import", "import the file", _raiser(e), upstream=up)
        return
    H, D, scale = 16, 64, 0.125
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    t_split = 4  # kv_splits 64 on a GPU with >= 128 SMs; every split bucket uses T = 4 (one compile)
    t_fused = max(1, int(2.0 * sms))  # T * ceil(H/16) >= 2 * SMs: kv_splits = 1, the fused kernel

    def path(T: int) -> str:
        try:
            s = mod._kv_splits_heuristic(T, H, max(triton_next_pow2(min(H, 64)), 16))
        except Exception as e:  # noqa: BLE001
            return f"path unknown ({type(e).__name__})"
        return "fused" if s == 1 else f"split-K (kv_splits={s})"

    def bucket(name: str, desc: str, mutate: Callable | None, slices: dict, predicted: dict, *, t: int = t_split,
               d: int = D, expect_raise: str | None = None, note: str = "") -> None:
        def fn() -> dict[str, Any]:
            x = sparse_tensors(t, H, d)
            lists = base_lists(t)
            if mutate:
                mutate(x, lists)
            idx, ptr = csr(lists)
            out = mod.sparse_attn_v4_paged_decode(x["q"].to(DEV), x["ukv"].to(DEV), idx.to(DEV), ptr.to(DEV),
                                                  x["sink"].to(DEV), scale)
            rows = [[x["ukv"][i] for i in lists[k]] for k in range(t)]
            return sparse_observe(out, sparse_ref(x["q"], rows, x["sink"], scale), slices)
        rec.run("sglang.paged_decode", name, f"T={t} H={H} D={d} bf16, {path(t)} on {sms} SMs, 3 keys/token, "
                f"sink fp32 0.25, scale {scale}; {desc}", fn, upstream=up, predicted=predicted,
                expect_raise=expect_raise, note=note)

    t1 = {"out[t=1]": {"t": 1}, "out[t!=1]": {"t": 1, "invert": True}}
    h3 = {"out[h=3]": {"h": 3}, "out[h!=3]": {"h": 3, "invert": True}}
    t1d7 = {"out[t=1,d=7]": {"t": 1, "d": 7}, "out[t=1,d!=7]": {"t": 1, "d": [i for i in range(D) if i != 7]},
            "out[t!=1]": {"t": 1, "invert": True}}

    def empty1(x, lists):
        lists[1] = []

    def sink(v):
        def m(x, lists):
            x["sink"][:] = v
        return m

    def sink_h3(v):
        def m(x, lists):
            x["sink"][3] = v
        return m

    def both(*fs):
        def m(x, lists):
            for f in fs:
                f(x, lists)
        return m

    def kv_nan10(x, lists):
        x["ukv"][10, 5] = NAN

    def kv_inf(v):
        def m(x, lists):
            x["q"][1, :, 7] = 1.0
            x["ukv"][10, 7] = v
        return m

    def lone_neginf(x, lists):
        kv_inf(-INF)(x, lists)
        lists[1] = [10]
        x["sink"][:] = -INF

    for prefix, t in (("", t_split), ("fused/", t_fused)):
        bucket(prefix + "base", "all finite", None, {}, {"out": "finite"}, t=t)
        bucket(prefix + "empty-row/finite-sink", "token 1 has an empty span", empty1, t1,
               {"out[t=1]": "zero", "out[t!=1]": "finite"}, t=t)
        bucket(prefix + "empty-row/sink=nan", "token 1 empty; sink NaN on head 3", both(empty1, sink_h3(NAN)),
               {"out[t=1]": {"t": 1}, "out[h=3]": {"h": 3}}, {"out[t=1]": "zero", "out[h=3]": "zero"}, t=t)
        bucket(prefix + "kv-nan-selected", "unified_kv row 10 (token 1 only) has a NaN at d=5", kv_nan10, t1,
               {"out[t=1]": "zero", "out[t!=1]": "finite"}, t=t)
        bucket(prefix + "lone-key-logit=-inf/sink=-inf", "token 1's only key has logit -inf; sink -inf",
               lone_neginf, t1d7, {"out[t=1,d=7]": "nan", "out[t=1,d!=7]": "zero", "out[t!=1]": "finite"}, t=t,
               note="no `p = where(valid, p, 0)` in decode: the 15 masked columns of the tile get exp2(0) = 1; "
                    "prefill gives zeros here, the math 0 (Z = 0)")
        if prefix:
            continue
        bucket("empty-row/sink=-inf", "token 1 empty; sink -inf", both(empty1, sink(-INF)), t1,
               {"out[t=1]": "zero", "out[t!=1]": "finite"})
        bucket("sink=+inf", "sink +inf on every head", sink(INF), {}, {"out": "zero"})
        bucket("sink=-inf", "sink -inf on every head (plain softmax)", sink(-INF), {}, {"out": "finite"})
        bucket("sink=nan", "sink NaN on head 3", sink_h3(NAN), h3, {"out[h=3]": "zero", "out[h!=3]": "finite"})
        bucket("unselected-row-nan", "unified_kv rows 0, 9, 11 (never selected) NaN",
               lambda x, lists: x["ukv"].index_fill_(0, torch.tensor([0, 9, 11]), NAN), {}, {"out": "finite"})
        bucket("kv+inf-selected", "unified_kv[10, 7] = +inf, q[1, :, 7] = 1 (logit +inf)", kv_inf(INF), t1,
               {"out[t=1]": "zero", "out[t!=1]": "finite"})
        bucket("kv-inf-selected", "unified_kv[10, 7] = -inf, q[1, :, 7] = 1 (logit -inf)", kv_inf(-INF), t1d7,
               {"out[t=1,d=7]": "nan", "out[t=1,d!=7]": "finite", "out[t!=1]": "finite"})
        bucket("q-nan", "q[2, 5, 7] = NaN", lambda x, lists: x["q"].__setitem__((2, 5, 7), NAN),
               {"out[t=2,h=5]": {"t": 2, "h": 5}, "out[t=2,h!=5]": {"t": 2, "h": [i for i in range(H) if i != 5]}},
               {"out[t=2,h=5]": "zero", "out[t=2,h!=5]": "finite"})
        bucket("T=0", "no tokens: split-K is chosen (base_ctas = max(1, 0)), then the reduce grid divides by T*H",
               None, {}, {}, t=0, expect_raise="ZeroDivisionError")
        bucket("D=16", "head_dim 16 on the split-K path: block_d // 32 == 0 chunks, then block_d // 0", None, {},
               {}, d=16, expect_raise="ZeroDivisionError")
        bucket("D=8", "head_dim 8: BLOCK_D = 8 < 16 for tl.dot", None, {}, {}, d=8, expect_raise="CompilationError")
    # Not run: a -1 (or any out-of-range) index. Upstream's contract says every entry must be a valid
    # row and the kernel has no sentinel test: it would read unified_kv[-1] (out of bounds).


def triton_next_pow2(n: int) -> int:
    import triton
    return triton.next_power_of_2(n)
