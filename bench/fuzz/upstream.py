"""The real upstream kernels through kparity.fuzz.check_implementation, on the GPU (issue 15, "Proof
on real code"): sglang's Triton ReplaySSM KDA decode and V4 sparse paged prefill (and decode), and
flash-linear-attention's fused_recurrent_kda and chunk_kda. Their sources are not part of kparity:
scripts/fetch-peers.sh puts them in the git-ignored .peers/ (set KPARITY_PEERS to another folder).

    OUT=out KPARITY_PEERS=.peers python bench/fuzz/upstream.py [--seconds 60] [--targets ...]

Each target is an adapter with the kparity op's upstream convention around the upstream function;
what an adapter changes is written next to it, and is only what the function's own signature needs
(kda/recurrent has no batch axis in kparity; Triton's KDA ReplaySSM takes `a` as [B, HV, K]).
ReplaySSM runs twice: "as is" (the Triton wrapper's own, stricter checks meet kparity's generators:
rejections are findings about the two contracts) and "laid out" (contiguous copies for what the
Triton wrapper insists on, copied back after the call: the numerics). Each runs under the faithful
profile and, where the kernel rounds differently on purpose, a profile of its own. Writes
$OUT/fuzz_upstream.md, one JSON report per run and the shrunk failing calls under $OUT/corpus.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import types
from typing import Any, Callable

import torch

from kparity.fuzz import check_implementation


def _stub(name: str, **attrs: Any) -> None:
    m = sys.modules.get(name) or types.ModuleType(name)
    for k, v in attrs.items():
        setattr(m, k, v)
    sys.modules[name] = m


def _import_sglang_files(peers: str) -> dict[str, Any]:
    """The three sglang files in .peers/, their sglang/aiter utility imports stubbed for NVIDIA."""
    sys.path.insert(0, peers)
    for n in ["sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.quantization", "sglang.srt",
              "aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton.utils"]:
        _stub(n)
    _stub("sglang.srt.utils", is_hip=lambda: False)
    _stub("sglang.srt.utils.common", is_gfx95_supported=lambda: False, is_gfx1250_supported=lambda: False)
    _stub("sglang.kernels.ops.quantization.fp8_kernel", is_fp8_fnuz=lambda: False)
    _stub("aiter.ops.triton.utils.device_info",
          get_num_sms=lambda: torch.cuda.get_device_properties(0).multi_processor_count)
    mods = {}
    for name in ("fused_recurrent_linear_replayssm", "paged_prefill", "paged_decode"):
        try:
            mods[name] = __import__(name)
        except Exception as e:  # noqa: BLE001  (reported as a skipped target)
            mods[name] = e
    return mods


# --- sglang Triton ReplaySSM (kda/replayssm_decode) -------------------------------------------------

def triton_replayssm(mod: Any, laid_out: bool) -> Callable[..., Any]:
    def replayssm_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache, out,
                         ssm_state_indices, write_pos, force_flush=None, use_qk_l2norm_in_kernel=False,
                         lower_bound=None):
        B = mixed_qkv.shape[0]
        _, HV, V, K = initial_state.shape
        if K < 32 or K & (K - 1):
            # The Triton wrapper splits K into nk=2 tiles of >= 16 (BKT) for tl.dot.
            raise NotImplementedError(f"Triton ReplaySSM needs a power-of-two K >= 32 (got K={K})")
        # Its KDA path takes a as [B, HV, K] and dt_bias as [HV, K] (kda.md B.3 item 5); both are
        # contiguous here (kparity's contract, C.1 #1-#2), so these are views.
        a3, dt2 = a.reshape(B, HV, K), dt_bias.reshape(HV, K)
        if not laid_out:
            return mod.fused_recurrent_linear_replayssm_decode(
                mixed_qkv, a3, b, A_log, dt2, scale, initial_state, d_cache, k_cache, g_cache, out, ssm_state_indices,
                write_pos, force_flush=force_flush, lower_bound=lower_bound,
                use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, is_kda=True)
        slots = initial_state.shape[0]
        if not (d_cache.shape[0] == k_cache.shape[0] == g_cache.shape[0] == slots):
            raise NotImplementedError("Triton ReplaySSM needs every ring to have the state pool's slot count")
        # What the Triton wrapper insists on (contiguous rings, cursors and b, [HV, V, K]-contiguous
        # state slots, int32 indices): copies, written back after the call.
        state, rings = initial_state.contiguous(), [r.contiguous() for r in (d_cache, k_cache, g_cache)]
        o = out.contiguous()
        mod.fused_recurrent_linear_replayssm_decode(
            mixed_qkv.contiguous(), a3, b.contiguous(), A_log.contiguous(), dt2, scale, state, *rings, o,
            ssm_state_indices.to(torch.int32).contiguous(), write_pos.contiguous(),
            force_flush=None if force_flush is None else force_flush.contiguous(), lower_bound=lower_bound,
            use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, is_kda=True)
        for dst, src in zip((initial_state, d_cache, k_cache, g_cache, out), (state, *rings, o)):
            if dst.data_ptr() != src.data_ptr():
                dst.copy_(src)
        return out, initial_state
    return replayssm_decode


# --- sglang Triton V4 sparse attention (sparse/paged_prefill, sparse/paged_decode) ------------------

def triton_paged_prefill(mod: Any) -> Callable[..., Any]:
    # sglang's V-base signature at 856c2e57 (no return_lse, no replicated_logit_shift): the fuzzer
    # runs calls that ask for lse without it and leaves out calls with a shift.
    def sparse_attn_v4_paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend,
                                     kv_indptr_extend, attn_sink, softmax_scale):
        return mod.sparse_attn_v4_paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv,
                                                kv_indices_extend, kv_indptr_extend, attn_sink, softmax_scale)
    return sparse_attn_v4_paged_prefill


def triton_paged_decode(mod: Any) -> Callable[..., Any]:
    def sparse_attn_v4_paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale):
        return mod.sparse_attn_v4_paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale)
    return sparse_attn_v4_paged_decode


# --- flash-linear-attention (kda/recurrent) ---------------------------------------------------------

def fla_recurrent(fn: Callable[..., Any], chunked: bool) -> Callable[..., Any]:
    def recurrent(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                  use_qk_l2norm_in_kernel=False, cu_seqlens=None, *, a=None, dt_bias=None, A_log=None,
                  lower_bound=None, beta_is_logits=False):
        # kparity's kda/recurrent is fla's call without the batch axis (B = 1, varlen through
        # cu_seqlens), its state V-first ([N, HV, V, K]: fla's state_v_first), its raw gate a +
        # dt_bias + A_log fla's use_gate_in_kernel, its beta logits fla's use_beta_sigmoid_in_kernel.
        kw = dict(scale=scale, initial_state=initial_state, output_final_state=output_final_state,
                  use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, state_v_first=True,
                  use_beta_sigmoid_in_kernel=beta_is_logits)
        if cu_seqlens is not None:
            kw["cu_seqlens"] = cu_seqlens.to(torch.long)
        gate = g
        if g is None:
            kw.update(use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias.reshape(-1), lower_bound=lower_bound)
            gate = a
        if chunked and lower_bound is not None:
            kw["safe_gate"] = True  # chunk_kda's name for the bounded gate
        o, final = fn(q[None], k[None], v[None], gate[None], beta[None], **kw)
        return o[0], final
    return recurrent


def targets(peers: str) -> dict[str, tuple[str, Any, list[str]]]:
    """name -> (op, implementation or the import error, profiles)."""
    mods = _import_sglang_files(peers)
    out: dict[str, tuple[str, Any, list[str]]] = {}

    def add(name: str, op: str, make: Callable[[], Any], src: Any, profiles: list[str]) -> None:
        out[name] = (op, src if isinstance(src, Exception) else make(), profiles)

    rs = mods["fused_recurrent_linear_replayssm"]
    add("sglang-triton-replayssm-as-is", "kda/replayssm_decode", lambda: triton_replayssm(rs, False), rs,
        ["faithful", "tf32-dot"])
    add("sglang-triton-replayssm-laid-out", "kda/replayssm_decode", lambda: triton_replayssm(rs, True), rs,
        ["faithful", "tf32-dot"])
    add("sglang-triton-paged-prefill", "sparse/paged_prefill", lambda: triton_paged_prefill(mods["paged_prefill"]),
        mods["paged_prefill"], ["faithful"])
    add("sglang-triton-paged-decode", "sparse/paged_decode", lambda: triton_paged_decode(mods["paged_decode"]),
        mods["paged_decode"], ["faithful"])
    sys.path.insert(0, peers)
    try:
        from fla.ops.kda import chunk_kda, fused_recurrent_kda
        out["fla-fused-recurrent-kda"] = ("kda/recurrent", fla_recurrent(fused_recurrent_kda, False), ["faithful"])
        out["fla-chunk-kda"] = ("kda/recurrent", fla_recurrent(chunk_kda, True), ["faithful"])
    except Exception as e:  # noqa: BLE001
        out["fla-fused-recurrent-kda"] = ("kda/recurrent", e, [])
        out["fla-chunk-kda"] = ("kda/recurrent", e, [])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=45.0, help="budget per run (three properties share it)")
    ap.add_argument("--targets", nargs="*", default=None, help="a subset of the targets")
    ap.add_argument("--shapes", default="small", choices=["small", "large"])
    ap.add_argument("--seed", type=lambda s: int(s, 0), default=None)
    args = ap.parse_args()
    out_dir = os.environ.get("OUT", "fuzz-upstream-out")
    os.makedirs(out_dir, exist_ok=True)
    if not torch.cuda.is_available():
        print("fuzz upstream: skipped, no CUDA device")
        return 0
    peers = os.path.abspath(os.environ.get("KPARITY_PEERS", ".peers"))
    runs = targets(peers)
    lines = [f"# Upstream kernels through kparity.fuzz, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}; peers from {peers}; shapes {args.shapes}; "
             f"{args.seconds:.0f} s per run.", "",
             "| target | op | profile | property | cases | discarded | result | class | message |",
             "|---|---|---|---|---:|---:|---|---|---|"]
    details = []
    for name, (op, impl, profiles) in runs.items():
        if args.targets and name not in args.targets:
            continue
        if isinstance(impl, Exception):
            lines.append(f"| {name} | {op} | - | - | - | - | skipped | - | {type(impl).__name__}: {impl} |")
            continue
        for profile in profiles:
            t0 = time.time()
            report = check_implementation(op, impl, device="cuda", time=args.seconds, profile=profile,
                                          shapes=args.shapes, seed=args.seed, name=name,
                                          corpus=os.path.join(out_dir, "corpus"),
                                          report=os.path.join(out_dir, f"{name}.{profile}.json"))
            print(f"{name} ({profile}, {time.time() - t0:.0f} s):\n{report.summary()}\n", flush=True)
            if report.error:
                lines.append(f"| {name} | {op} | {profile} | - | - | - | not run | - | {report.error} |")
            for p in report.properties:
                f = p.failure
                msg = (f.message.replace("|", "\\|")[:300] if f else "")
                lines.append(f"| {name} | {op} | {profile} | {p.name.split('/')[2]} | {p.cases} | {p.discarded} | "
                             f"{'pass' if p.passed else 'FAIL'} | {f.failure_class if f else ''} | {msg} |")
                if f:
                    details.append(f"### {p.name} ({profile})\n\n```\n{f.details.strip()[:4000]}\n```\n\n"
                                   f"repro: `{f.repro}`  \nsaved: `{f.saved}`\n")
    text = "\n".join(lines) + ("\n\n## Failures, with the shrunk calls\n\n" + "\n".join(details) if details else "\n")
    with open(os.path.join(out_dir, "fuzz_upstream.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
