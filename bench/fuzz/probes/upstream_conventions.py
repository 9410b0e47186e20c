"""What the upstream kernels actually do on the special-value and edge buckets kparity's rules must
agree with: sglang's Triton V4 sparse paged prefill and decode, sglang's Triton ReplaySSM decode
(is_kda=True), and fla's fused_recurrent_kda and chunk_kda. Stand-alone: plain PyTorch plus the
upstream files from $KPARITY_PEERS (scripts/fetch-peers.sh); no kparity import.

    KPARITY_PEERS=.peers OUT=out python bench/fuzz/probes/upstream_conventions.py [--only prefill decode ...]

Per bucket it records the call, the observed value classes (finite / zero / nan / +inf / -inf / mixed,
with counts and a few numbers) of the outputs and of named slices, the predicted classes (from reading
the upstream source; .peers-notes.md has the reasoning with line numbers) and whether they held, or the
exception (type, message, frame); the upstream file and commit. Writes $OUT/conventions.json.

The sparse buckets also carry `ref ...` slices: an fp64 evaluation of the math with kparity's edge
conventions (spec sparse_attention.md C.3/C.6: running max seeded with -FLT_MAX, Z > 0 else 0, a +inf
sink gives 0, NaN propagates), so kernel and convention can be compared class by class.

Shapes are few and fixed (Triton compiles once per kernel and constexpr set). A bucket that would read
out of bounds by upstream's own contract (decode with a -1 index) is not run. fla's autotuners are cut
to their first config (--full-autotune keeps them all: chunk_kda's first call then takes tens of seconds).
Buckets after --budget seconds are recorded as skipped.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any, Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _peers  # noqa: E402
from _peers import DEV, FLT_MAX, INF, NAN, raiser as _raiser, summarize  # noqa: E402,F401
from conventions_sparse import probe_decode, probe_prefill  # noqa: E402


# --- sglang Triton ReplaySSM (is_kda=True) ----------------------------------------------------------

def probe_replayssm(rec: _peers.Recorder) -> None:
    up = _peers.provenance("fused_recurrent_linear_replayssm")
    try:
        mod = _peers.load_sglang("fused_recurrent_linear_replayssm")
    except Exception as e:  # noqa: BLE001
        rec.run("sglang.replayssm", "import", "import the file", _raiser(e), upstream=up)
        return
    B, H, HV, K, V, L, S = 2, 2, 4, 32, 32, 4, 3  # two value heads per q/k head
    bf = torch.bfloat16

    def inputs(seed: int = 0, h: int = H, hv: int = HV, k: int = K) -> dict[str, Any]:
        g = torch.Generator().manual_seed(seed)
        d = {"mixed": torch.randn(B, 2 * h * k + hv * V, generator=g).to(bf),
             "a": (torch.randn(B, hv, k, generator=g) * 0.5).to(bf),
             "b": torch.randn(B, hv, generator=g).to(bf),
             "A_log": (torch.randn(hv, generator=g) * 0.3).float(),
             "dt_bias": (torch.randn(hv, k, generator=g) * 0.1).float(),
             "state": (torch.randn(S, hv, V, k, generator=g) * 0.05).float(),
             "d_cache": (torch.randn(S, hv, L, V, generator=g) * 0.05).float(),
             "k_cache": torch.nn.functional.normalize(torch.randn(S, h, L, k, generator=g), dim=-1).float(),
             "g_cache": (-torch.rand(S, hv, L, k, generator=g) * 0.1).float(),
             "out": torch.zeros(B, 1, hv, V, dtype=bf),
             "idx": torch.tensor([2, 0], dtype=torch.int32),
             "wp": torch.tensor([1, 2], dtype=torch.int32)}
        d = {n: v.to(DEV) for n, v in d.items()}
        d["scale"] = k ** -0.5
        return d

    def call(x: dict[str, Any]) -> None:
        mod.fused_recurrent_linear_replayssm_decode(
            x["mixed"], x["a"], x["b"], x["A_log"], x["dt_bias"], x["scale"],
            x["state"], x["d_cache"], x["k_cache"], x["g_cache"], x["out"], x["idx"], x["wp"],
            use_qk_l2norm_in_kernel=True, is_kda=True)

    def k_hat(x: dict[str, Any], b: int, h: int) -> torch.Tensor:
        kf = x["mixed"][b, H * K + h * K: H * K + (h + 1) * K].float()
        return kf * (1.0 / torch.sqrt((kf * kf).sum() + 1e-6))

    desc0 = (f"B={B} H={H} HV={HV} K={K} V={V} L={L} slots={S}; mixed_qkv/a/b/out bf16, state and d/k/g rings "
             f"fp32; l2norm in kernel; rows -> slots [2, 0]")

    def observe(x: dict[str, Any], before: dict[str, torch.Tensor]) -> dict[str, Any]:
        obs: dict[str, Any] = {"out": summarize(x["out"])}
        for b in range(B):
            obs[f"out[b={b}]"] = summarize(x["out"][b])
        obs["state_unchanged"] = bool(torch.equal(before["state"], x["state"]))
        for r in ("d_cache", "k_cache", "g_cache"):
            obs[f"{r}_unchanged"] = bool(torch.equal(before[r], x[r]))
        return obs

    def snapshot(x: dict[str, Any]) -> dict[str, torch.Tensor]:
        return {n: x[n].clone() for n in ("state", "d_cache", "k_cache", "g_cache")}

    def bucket(name: str, desc: str, body: Callable[[], dict[str, Any]], predicted: dict | None = None,
               expect_raise: str | None = None, note: str = "") -> None:
        rec.run("sglang.replayssm", name, desc0 + "; " + desc, body, upstream=up, predicted=predicted,
                expect_raise=expect_raise, note=note)

    def append() -> dict[str, Any]:
        x = inputs()
        before = snapshot(x)
        call(x)
        obs = observe(x, before)
        # the k ring at each row's cursor, from the first value head of each group
        rep, exact_f32, frac_bf16 = True, True, []
        for b in range(B):
            s, c = int(x["idx"][b]), int(x["wp"][b])
            for h in range(H):
                w = x["k_cache"][s, h, c]
                kh = k_hat(x, b, h)
                rep &= bool(torch.equal(w, w.to(bf).float()))
                exact_f32 &= bool(torch.equal(w, kh))
                frac_bf16.append(float((w == kh.to(bf).float()).float().mean()))
                obs[f"k_cache[s={s},h={h},c={c}] - k_hat(f32)"] = summarize(w - kh)
        obs["k_cache_written_is_bf16_representable"] = rep
        obs["k_cache_written_equals_f32_k_hat"] = exact_f32
        obs["k_cache_written_fraction_equal_to_bf16(k_hat)"] = min(frac_bf16)
        obs["d_cache_row"] = summarize(torch.stack([x["d_cache"][int(x["idx"][b]), :, int(x["wp"][b])]
                                                    for b in range(B)]))
        return obs
    bucket("append/k-ring-rounding", "cursors [1, 2] (append on both rows)", append,
           {"out": "finite", "state_unchanged": True, "k_cache_written_is_bf16_representable": True,
            "k_cache_written_equals_f32_k_hat": False},
           note="line 414: k_store_c = k_c.to(out dtype) before the store into the fp32 ring")

    def flush() -> dict[str, Any]:
        x = inputs()
        x["wp"] = torch.tensor([L - 1, L - 1], dtype=torch.int32, device=DEV)
        before = snapshot(x)
        call(x)
        obs = observe(x, before)
        obs["state[slots 2,0]"] = summarize(x["state"][[2, 0]])
        return obs
    bucket("flush", f"cursors [{L - 1}, {L - 1}] (natural flush)", flush,
           {"out": "finite", "state_unchanged": False, "k_cache_unchanged": True, "d_cache_unchanged": True,
            "g_cache_unchanged": True, "state[slots 2,0]": "finite"})

    def padding() -> dict[str, Any]:
        x = inputs()
        x["idx"] = torch.tensor([-1, 0], dtype=torch.int32, device=DEV)
        x["out"].fill_(7.0)
        call(x)
        return {"out[b=0]": summarize(x["out"][0]), "out[b=1]": summarize(x["out"][1])}
    bucket("padding-row", "row 0's slot is -1", padding, {"out[b=0]": "zero", "out[b=1]": "finite"})

    def stale_nan() -> dict[str, Any]:
        x = inputs()
        for b in range(B):
            s, c = int(x["idx"][b]), int(x["wp"][b])
            for r in ("d_cache", "k_cache", "g_cache"):
                x[r][s, :, c:] = NAN
        before = snapshot(x)
        call(x)
        return observe(x, before)
    bucket("stale-nan-past-cursor", "ring positions >= cursor hold NaN", stale_nan, {"out": "finite"})

    def poke(target: str, index: tuple, value: float, extra: Callable[[dict], dict] | None = None):
        def body() -> dict[str, Any]:
            x = inputs()
            x[target][index] = value
            before = snapshot(x)
            call(x)
            obs = observe(x, before)
            obs["out[b=0,hv=0]"] = summarize(x["out"][0, 0, 0])
            obs["out[b=0,hv=1]"] = summarize(x["out"][0, 0, 1])
            obs["out[b=0,hv=2..3]"] = summarize(x["out"][0, 0, 2:])
            obs["out[b=1]"] = summarize(x["out"][1])
            s, c = int(x["idx"][0]), int(x["wp"][0])
            obs["k_cache[row 0, h=0, cursor]"] = summarize(x["k_cache"][s, 0, c])
            obs["d_cache[row 0, hv=0, cursor]"] = summarize(x["d_cache"][s, 0, c])
            obs["g_cache[row 0, hv=0, cursor]"] = summarize(x["g_cache"][s, 0, c])
            if extra:
                obs.update(extra(x))
            return obs
        return body

    bucket("q-nan", "mixed_qkv[0, 3] = NaN (q, head 0)", poke("mixed", (0, 3), NAN),
           {"out[b=0,hv=0]": "nan", "out[b=0,hv=1]": "nan", "out[b=0,hv=2..3]": "finite", "out[b=1]": "finite",
            "k_cache[row 0, h=0, cursor]": "finite"})
    bucket("k-nan", f"mixed_qkv[0, {H * K + 3}] = NaN (k, head 0)", poke("mixed", (0, H * K + 3), NAN),
           {"out[b=0,hv=0]": "nan", "out[b=0,hv=2..3]": "finite", "out[b=1]": "finite",
            "k_cache[row 0, h=0, cursor]": "nan", "d_cache[row 0, hv=0, cursor]": "nan"})
    bucket("v-nan", f"mixed_qkv[0, {2 * H * K + 3}] = NaN (v, value head 0, j=3)",
           poke("mixed", (0, 2 * H * K + 3), NAN),
           {"out[b=0,hv=0]": "mixed(nan,finite)", "out[b=0,hv=1]": "finite", "out[b=1]": "finite",
            "d_cache[row 0, hv=0, cursor]": "mixed(nan,finite)"})
    bucket("a-nan", "a[0, 0, 3] = NaN (gate input)", poke("a", (0, 0, 3), NAN),
           {"out[b=0,hv=0]": "nan", "out[b=0,hv=1]": "finite", "g_cache[row 0, hv=0, cursor]": "mixed(nan,finite)"})
    bucket("a=+inf", "a[0, 0, 3] = +inf: softplus = inf, g = -inf, decay 0", poke("a", (0, 0, 3), INF),
           {"out[b=0,hv=0]": "finite", "g_cache[row 0, hv=0, cursor]": "mixed(-inf,finite)"})

    def replay_neginf_gate() -> dict[str, Any]:
        x = inputs()
        x["a"][0, 0, 3] = INF  # step 1 stores g = -inf at row 0's cursor (1)
        call(x)
        x["a"][0, 0, 3] = 0.0
        x["wp"] = torch.tensor([2, 3], dtype=torch.int32, device=DEV)  # step 2 replays positions 0, 1
        call(x)
        return {"out[b=0,hv=0]": summarize(x["out"][0, 0, 0]), "out[b=0,hv=1]": summarize(x["out"][0, 0, 1]),
                "out[b=1]": summarize(x["out"][1])}
    bucket("a=+inf/then-replay", "step 1 a=+inf stores g=-inf at position 1; step 2 (cursor 2) replays it: "
           "W_1 = exp(Gtot - P_1) = exp(-inf - -inf)", replay_neginf_gate,
           {"out[b=0,hv=0]": "nan", "out[b=0,hv=1]": "finite", "out[b=1]": "finite"},
           note="the math gives W_1 = exp(empty sum) = 1 (finite); kparity's faithful model forms Gtot - P_i too")

    def size1_stride() -> dict[str, Any]:
        x = inputs(h=1, hv=1)
        base = torch.zeros(1, S, V, K, device=DEV)
        x["state"] = base.permute(1, 0, 2, 3)  # [S, 1, V, K], strides (V*K, S*V*K, K, 1)
        facts = {"is_contiguous": x["state"].is_contiguous(), "stride": list(x["state"].stride())}
        try:
            call(x)
        except ValueError as e:
            raise ValueError(f"{e} [initial_state.is_contiguous()={facts['is_contiguous']}, "
                             f"stride={facts['stride']}]") from e
        return {"accepted": True, **facts}
    bucket("layout/hv=1-state-stride", "H=HV=1; initial_state [S,1,V,K] torch-contiguous but its size-1 HV "
           "dim has stride S*V*K", size1_stride, expect_raise="ValueError",
           note="raised before any kernel launch; the addressing would be right (i_hv = 0)")

    def k16() -> dict[str, Any]:
        x = inputs(k=16)
        call(x)
        return {"out": summarize(x["out"])}
    bucket("K=16", "K=16: BK=16, nk=2 -> BKT=8", k16, expect_raise="ValueError")


# --- fla fused_recurrent_kda and chunk_kda ----------------------------------------------------------

def fla_inputs(T: int, *, H: int = 2, HV: int = 2, K: int = 32, V: int = 32, N: int = 1, seed: int = 0,
               dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    F = torch.nn.functional
    x = {"q": F.normalize(torch.randn(1, T, H, K, generator=g), dim=-1),
         "k": F.normalize(torch.randn(1, T, H, K, generator=g), dim=-1),
         "v": torch.randn(1, T, HV, V, generator=g),
         "g": F.logsigmoid(torch.randn(1, T, HV, K, generator=g)),  # log-space decay (< 0)
         "beta": torch.rand(1, T, HV, generator=g) * 0.5 + 0.25,
         "h0": torch.randn(N, HV, V, K, generator=g) * 0.1}  # state_v_first layout
    for n in ("q", "k", "v", "beta"):
        x[n] = x[n].to(dtype)
    return {n: t.to(DEV) for n, t in x.items()}


def probe_fla(rec: _peers.Recorder, which: str, full_autotune: bool) -> None:
    src = "fla/ops/kda/fused_recurrent.py" if which == "fused_recurrent_kda" else "fla/ops/kda/chunk.py"
    up = _peers.provenance(src)
    op = "fla." + which
    try:
        kda = _peers.load_fla()
        if not full_autotune:
            up["autotuners_cut_to_first_config"] = _peers.prune_fla_autotune()
    except Exception as e:  # noqa: BLE001
        rec.run(op, "import", "import fla.ops.kda", _raiser(e), upstream=up)
        return
    fn = getattr(kda, which)
    chunk = which == "chunk_kda"
    dt = torch.bfloat16 if chunk else torch.float32
    H, HV, K, V = 2, 2, 32, 32

    def call(x: dict[str, torch.Tensor], *, init: bool = False, cu: list[int] | None = None, **kw: Any):
        cu_t = None if cu is None else torch.tensor(cu, dtype=torch.long, device=DEV)
        with torch.no_grad():
            return fn(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["h0"] if init else None,
                      output_final_state=True, state_v_first=True, cu_seqlens=cu_t, **kw)

    desc0 = (f"B=1 H={H} HV={HV} K={K} V={V}, q/k/v/beta {str(dt).replace('torch.', '')}, g fp32 log-space "
             f"(use_gate_in_kernel=False), state_v_first, output_final_state")

    def bucket(name: str, desc: str, body: Callable[[], dict[str, Any]], predicted: dict | None = None,
               expect_raise: str | None = None, note: str = "") -> None:
        rec.run(op, name, desc0 + "; " + desc, body, upstream=up, predicted=predicted, expect_raise=expect_raise,
                note=note)

    def obs(o: torch.Tensor, fs: torch.Tensor) -> dict[str, Any]:
        r: dict[str, Any] = {"o": summarize(o), "final_state": summarize(fs)}
        T = o.shape[1]
        for t in range(min(T, 2)):
            for hv in range(HV):
                r[f"o[t={t},hv={hv}]"] = summarize(o[0, t, hv])
        if T > 2:
            for hv in range(HV):
                r[f"o[t>=2,hv={hv}]"] = summarize(o[0, 2:, hv])
        for n in range(fs.shape[0]):
            for hv in range(HV):
                r[f"final[n={n},hv={hv}]"] = summarize(fs[n, hv])
        return r

    def base() -> dict[str, Any]:
        x = fla_inputs(4, dtype=dt)
        return obs(*call(x))
    bucket("base", "T=4, no initial state", base, {"o": "finite", "final_state": "finite"})

    def t0(init: bool):
        def body() -> dict[str, Any]:
            x = fla_inputs(0, dtype=dt)
            _peers.poison_allocator(HV * V * K)
            o, fs = call(x, init=init)
            r = {"o": summarize(o), "final_state": summarize(fs)}
            expect = x["h0"] if init else torch.zeros_like(x["h0"])
            r["final_state_equals_" + ("h0" if init else "zeros")] = bool(torch.equal(fs, expect))
            return r
        return body
    bad = not chunk  # fused_recurrent: the kernel returns at T == 0 before its final-state store
    bucket("T=0/no-initial-state", "T=0 (allocator pre-filled with NaN)", t0(False),
           {"o": "empty", "final_state_equals_zeros": not bad},
           note="fused_recurrent.py:99-101 returns before the store at 227-233; final_state is new_empty (279)"
           if bad else "chunk_delta_h.py:716 allocates final_state with new_zeros; the h kernel has no T==0 return")
    bucket("T=0/initial-state", "T=0 with an initial state: the final state should be h0", t0(True),
           {"o": "empty", "final_state_equals_h0": not bad})

    def varlen() -> dict[str, Any]:
        x = fla_inputs(4, N=2, dtype=dt)
        _peers.poison_allocator(2 * HV * V * K)
        o, fs = call(x, cu=[0, 0, 4])
        r = obs(o, fs)
        r["final[n=0]_is_zero"] = bool(torch.equal(fs[0], torch.zeros_like(fs[0])))
        return r
    bucket("varlen/zero-length-sequence", "cu_seqlens [0, 0, 4]: sequence 0 is empty (allocator pre-filled with "
           "NaN)", varlen, {"final[n=0]_is_zero": not bad, "final[n=1,hv=0]": "finite", "o": "finite"})

    def poke(t: str, index: tuple, value: float):
        def body() -> dict[str, Any]:
            x = fla_inputs(4, dtype=dt)
            x[t][(0, *index)] = value
            return obs(*call(x))
        return body

    if not chunk:
        bucket("q-nan", "q[t=1, h=0, 3] = NaN", poke("q", (1, 0, 3), NAN),
               {"o[t=1,hv=0]": "nan", "o[t=0,hv=0]": "finite", "o[t>=2,hv=0]": "finite", "o[t=1,hv=1]": "finite",
                "final_state": "finite"})
        bucket("k-nan", "k[t=1, h=0, 3] = NaN", poke("k", (1, 0, 3), NAN),
               {"o[t=0,hv=0]": "finite", "o[t=1,hv=0]": "nan", "o[t>=2,hv=0]": "nan", "final[n=0,hv=0]": "nan",
                "final[n=0,hv=1]": "finite"})
        bucket("v-nan", "v[t=1, hv=0, 3] = NaN", poke("v", (1, 0, 3), NAN),
               {"o[t=0,hv=0]": "finite", "o[t=1,hv=0]": "mixed(nan,finite)", "o[t>=2,hv=0]": "mixed(nan,finite)",
                "final[n=0,hv=0]": "mixed(nan,finite)", "final[n=0,hv=1]": "finite"},
               note="the delta rule keeps value channels apart: only channel 3 of head 0 (and state row 3)")
        bucket("g=+inf", "g[t=0, hv=0, 3] = +inf (log decay; state 0 * exp(inf) = NaN)", poke("g", (0, 0, 3), INF),
               {"o[t=0,hv=0]": "nan", "final[n=0,hv=0]": "nan", "final[n=0,hv=1]": "finite"})
        bucket("g=-inf", "g[t=1, hv=0, 3] = -inf (column 3 decays to 0)", poke("g", (1, 0, 3), -INF),
               {"o": "finite", "final_state": "finite"})
        bucket("beta-nan", "beta[t=1, hv=0] = NaN", poke("beta", (1, 0), NAN),
               {"o[t=0,hv=0]": "finite", "o[t=1,hv=0]": "nan", "final[n=0,hv=0]": "nan", "final[n=0,hv=1]": "finite"})
    else:
        bucket("q-nan", "q[t=1, h=0, 3] = NaN", poke("q", (1, 0, 3), NAN),
               {"o[t=1,hv=0]": "nan", "o[t=1,hv=1]": "finite", "final_state": "finite"},
               note="o[t=0] and o[t>=2] of head 0 left unpredicted")
        bucket("k-nan", "k[t=1, h=0, 3] = NaN", poke("k", (1, 0, 3), NAN),
               {"o[t=1,hv=0]": "has-nan", "final[n=0,hv=0]": "has-nan"},
               note="o[t=0] unpredicted: masked (zero) weights times NaN inside a chunk's dots may leak backwards")
        bucket("v-nan", "v[t=1, hv=0, 3] = NaN", poke("v", (1, 0, 3), NAN),
               {"o[t=1,hv=0]": "has-nan", "o[t=1,hv=1]": "finite"},
               note="o[t=0,hv=0] unpredicted (the recurrent kernel keeps it finite)")
        bucket("g=-inf", "g[t=1, hv=0, 3] = -inf (log decay): chunk cumsum -inf, exp(-inf - -inf)",
               poke("g", (1, 0, 3), -INF), {"o[t>=2,hv=0]": "has-nan"},
               note="fused_recurrent_kda stays finite here")
        bucket("beta-nan", "beta[t=1, hv=0] = NaN", poke("beta", (1, 0), NAN), {"final[n=0,hv=0]": "has-nan"})

        def lb0() -> dict[str, Any]:
            x = fla_inputs(4, dtype=dt)
            A_log = torch.zeros(HV, device=DEV)
            with torch.no_grad():
                fn(x["q"], x["k"], x["v"], x["g"], x["beta"], output_final_state=True, state_v_first=True,
                   use_gate_in_kernel=True, A_log=A_log, safe_gate=True, lower_bound=0.0)
            return {}
        bucket("safe_gate/lower_bound=0", "use_gate_in_kernel, safe_gate=True, lower_bound=0.0", lb0,
               expect_raise="ValueError", note="chunk.py:400-401: safe range [-5, 0)")


PROBES = ("prefill", "decode", "replayssm", "fla-recurrent", "fla-chunk")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=PROBES, default=None)
    ap.add_argument("--budget", type=float, default=50.0, help="seconds; later buckets are recorded as skipped")
    ap.add_argument("--full-autotune", action="store_true", help="keep every fla autotune config")
    args = ap.parse_args()
    out = os.path.join(_peers.out_dir(), "conventions.json")
    header = {"what": "upstream conventions on special-value and edge buckets", "environment": _peers.environment()}
    rec = _peers.Recorder(args.budget)
    if not torch.cuda.is_available():
        print("upstream_conventions: no CUDA device; nothing run")
        header["skipped"] = "no CUDA device"
        rec.write(out, header)
        return 0
    todo = args.only or list(PROBES)
    if "prefill" in todo:
        probe_prefill(rec)
    if "decode" in todo:
        probe_decode(rec)
    if "replayssm" in todo:
        probe_replayssm(rec)
    if "fla-recurrent" in todo:
        probe_fla(rec, "fused_recurrent_kda", args.full_autotune)
    if "fla-chunk" in todo:
        probe_fla(rec, "chunk_kda", args.full_autotune)
    rec.write(out, header)
    n = len(rec.records)
    held = sum(1 for r in rec.records if r.get("as_predicted") is True)
    missed = [f"{r['op']} {r['bucket']}" for r in rec.records if r.get("as_predicted") is False]
    skipped = sum(1 for r in rec.records if r.get("status") == "skipped")
    print(f"\n{n} buckets in {rec.elapsed():.1f} s: {held} as predicted, {len(missed)} not, {skipped} skipped; "
          f"wrote {out}")
    for m in missed:
        print("  not as predicted:", m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
