"""The real upstream kernels through kparity.fuzz.check_implementation, on the GPU (issue 24): sglang's
Triton ReplaySSM KDA decode and V4 sparse paged prefill and decode, flash-linear-attention's
fused_recurrent_kda and chunk_kda. Their sources are not part of kparity: scripts/fetch-peers.sh puts
them in the git-ignored .peers/ (set KPARITY_PEERS to another folder).

    OUT=out KPARITY_PEERS=.peers python bench/fuzz/upstream.py [--budget 400] [--jobs 8] [--targets ...]

Each target is an adapter with the kparity op's upstream convention around the upstream function
(what it changes is written next to it: only what the function's own signature needs) and a declared
domain (``supports``: what the kernel cannot compile, never what it gets wrong; each property reports
the share of the generator's calls inside it). A run is one target under one precision profile, at
two shape settings: "small" (the generators' own shapes, for depth) and the real model's preset
("deepseek-v4" for the sparse ops, "kimi-linear" for KDA; few tokens, real per-token shapes), each
with up to --max-findings distinct findings per property.

Triton compiles a kernel per compile key (dtypes, constexpr sizes, flags; each target's key is
written below), about a second each, and the first call of a key may take --first-call-timeout.
At small shapes nearly every ReplaySSM or fla call has a key of its own (measured on the CPU
stand-ins: 299 keys in 300 ReplaySSM draws; the sparse ops about 50), so those runs are
compile-bound: their cases are about the seconds over the compile time. Each target may cap its
keys (--classes-small / --classes-preset, or the target's default: 8 at the presets, none at small
shapes): the first keys drawn are in, later ones outside ("compile budget" in the coverage). fla's
autotuning is reduced to compiling the first config that passes pruning (every config must give
right answers; timing them is the kernel's business; KPARITY_FLA_AUTOTUNE=1 keeps it). The runs go
in parallel processes, one per (target, profile) with its shape settings in turn (--jobs; the
references are single-threaded CPU code, and Triton compiles in each). --dry-run runs the machinery
on CPU stand-ins (kparity.testing.impls) where there is no GPU.

Writes $OUT/<run>.<shapes>.json and .txt per run, the shrunk calls under $OUT/corpus, and the report
upstream_<date>.md (date of the run) into $OUT and --results (default bench/results): per run and
property the cases judged, the coverage, the declined calls and the verdict, then every finding with
its class, signature, reading (READINGS below: filled in by whoever reads the findings) and repro.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any, Callable

# The readings and the report live beside this script (upstream_report.py); a copy loaded by path
# (tests/python/test_upstream_script.py) finds them there too.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from upstream_report import READINGS, cell, known_for, markdown, reading, render  # noqa: E402,F401


@dataclass(frozen=True)
class Target:
    name: str
    op: str
    profiles: tuple[str, ...]
    preset: str                      # the real model's preset for this op family
    domain: str                      # what `supports` below requires, for the report
    supports: Callable[[Any], Any] | None = None
    # The kernel's compile key (what Triton compiles a new kernel for: constexpr sizes, dtypes,
    # flags) and how many keys a run may compile at small shapes and at the preset (0: any).
    compile_key: Callable[[Any], tuple] | None = None
    classes_small: int = 0
    classes_preset: int = 0
    # The small-shape run's pins (kparity.fuzz pins=, fuzz/generators/pins.hpp): the compile-relevant
    # sizes and dtypes held to a few shape classes, so that Triton compiles a handful of kernels
    # once and the run's time goes to cases; everything else is drawn as usual.
    pins: str = ""
    # Shrinking re-runs the kernel on ever smaller calls, each a new compile key: for chunk_kda
    # (tens of seconds a key) one finding's shrink outlasts the run; such a target reports the failing
    # call as drawn, with its repro.
    shrink: bool = True


def _stub(name: str, **attrs: Any) -> None:
    m = sys.modules.get(name) or types.ModuleType(name)
    for k, v in attrs.items():
        setattr(m, k, v)
    sys.modules[name] = m


def _import_sglang_files(peers: str) -> dict[str, Any]:
    """The three sglang files in .peers/, their sglang/aiter utility imports stubbed for NVIDIA."""
    import torch

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


# --- declared domains: what the kernels cannot compile ---------------------------------------------

def sparse_domain(call: Any) -> bool | str:
    # Both sglang V4 kernels compute q.k^T with tl.dot over BLOCK_D = next_power_of_2(D) columns, and
    # Triton's tl.dot needs its inner dimension K >= 16 ("Input shapes should have M >= 1, N >= 1 and
    # K >= 16"): D >= 9. The other dots run over BLOCK_K = 16 or 32 keys, always >= 16. Tails of D and
    # H are masked, so no power of two is needed. (The decode wrapper's ZeroDivisionError for small
    # T * H or D <= 16 stays inside: that is a finding, not a limit of the kernel.)
    d = call.dims["D"]
    return True if d >= 9 else f"tl.dot needs next_power_of_2(D) >= 16 (D = {d})"


def replayssm_domain(call: Any) -> bool | str:
    # The wrapper splits K into nk = 2 tiles of BKT = next_power_of_2(K) / 2 columns and raises
    # "BKT=... must be >=16 for tl.dot" below that: K >= 17. (The ring dot's inner dimension is
    # BC = max(16, next_power_of_2(L)), always enough.)
    k = call.dims["K"]
    return True if k >= 17 else f"tl.dot needs BKT = next_power_of_2(K)/2 >= 16 (K = {k})"


def replayssm_laid_out_domain(call: Any) -> bool | str:
    inside = replayssm_domain(call)
    if inside is not True:
        return inside
    # The Triton wrapper checks every ring against the state pool's slot count; kparity's contract
    # lets the rings have their own (C.1): the laid-out adapter cannot make up slots.
    slots = call.dims["slots"]
    if any(call.shape(r)[0] != slots for r in ("d_cache", "k_cache", "g_cache")):
        return "the Triton wrapper needs the rings' slot count to be the state pool's"
    return True


# --- compile keys: what each Triton kernel is compiled for ----------------------------------------------
# Coarse on purpose: Triton also specialises on each pointer's 16-byte alignment and each integer
# argument's divisibility by 16 (the first H200 run of 2026-12-02 06:08 left 2,881 files in its cache
# for about 150 keys counted here, and the targets that saw strided and offset layouts ran 80-170
# cases a minute against 2,000-3,000 for the one whose wrapper refuses them). The small-shape runs
# pin layout=compact instead, which leaves the sizes below and the leading dims as the variation.

def _pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def sparse_prefill_key(call: Any) -> tuple:
    # BLOCK_D = next_power_of_2(D) and BLOCK_K (16 for D >= 256, else 32) are constexpr; q, the
    # sources and the sink are loaded in their dtypes; BLOCK_H is fixed at 16.
    return (str(call.dtype("q")), str(call.dtype("attn_sink")), _pow2(call.dims["D"]))


def sparse_decode_key(call: Any) -> tuple:
    # As the prefill, plus BLOCK_H = max(16, next_power_of_2(min(H, 64))) and the split-K choice
    # (T * head blocks against the SM count: 1 split runs the fused kernel).
    h = call.dims["H"]
    return sparse_prefill_key(call) + (max(16, _pow2(min(h, 64))), call.dims["T"] * -(-h // 64) >= 132)


def replayssm_key(call: Any) -> tuple:
    # H, HV, K, V, BV, BC and MAX_CACHE_LEN = L are constexpr, as are the flags (l2 norm, force_flush
    # given, lower_bound given); the activation, state and ring dtypes are the pointers' element types.
    d = call.dims
    return (d["H"], d["HV"], d["K"], d["V"], d["L"], str(call.dtype("mixed_qkv")), str(call.dtype("initial_state")),
            str(call.dtype("d_cache")), str(call.dtype("k_cache")), call.flag("use_qk_l2norm_in_kernel"),
            "force_flush" in call, "lower_bound" in call.scalars)





def fla_key(call: Any) -> tuple:
    # fla's KDA kernels take H, HV, K, V as constexpr (and autotune on them), the gate, beta and norm
    # options as constexpr flags, and the activation and state dtypes.
    d = call.dims
    tensors = tuple((n, str(t.dtype)) for n, t in sorted(call.tensors.items()) if not t.returned)
    return (d["H"], d["HV"], d["K"], d["V"]) + tensors + tuple(sorted(call.flags.items())) + \
        tuple(sorted(n for n in call.scalars if n != "scale"))


# --- the small-shape runs' pins: a few shape classes per kernel -----------------------------------------------
# Each pins what the target's compile key depends on, at values inside its domain and at the
# generators' small sizes, with two classes where a size has an edge worth a compile: the sparse
# head width at a tail (D = 17, BLOCK_D = 32), a power of two and DeepSeek-V4's 512; the ReplaySSM
# ring inside one BC = 16 tile (L = 4) and past it (L = 17, BC = 32). What stays free (dtypes the
# kernel loads as given, flags, token counts, batches, index lists, layouts, values) is drawn as usual,
# and each target's compile budget caps the keys that remain (flags times dtypes).
SPARSE_PINS = "D=17|64|512,layout=compact"
REPLAYSSM_PINS = "H=2,HV=4,K=32,V=32,act=bf16,state=f32,params=f32,L=4|17,layout=compact"
FLA_PINS = "H=2,HV=4,K=32,V=32,act=bf16,state=f32,params=f32,layout=compact"


# --- adapters ----------------------------------------------------------------------------------------

def triton_replayssm(mod: Any, laid_out: bool) -> Callable[..., Any]:
    import torch

    def replayssm_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache, out,
                         ssm_state_indices, write_pos, force_flush=None, use_qk_l2norm_in_kernel=False,
                         lower_bound=None):
        B = mixed_qkv.shape[0]
        _, HV, V, K = initial_state.shape
        # Its KDA path takes a as [B, HV, K] and dt_bias as [HV, K] (kda.md B.3 item 5); both are
        # contiguous here (kparity's contract, C.1 #1-#2), so these are views.
        a3, dt2 = a.reshape(B, HV, K), dt_bias.reshape(HV, K)
        if not laid_out:
            return mod.fused_recurrent_linear_replayssm_decode(
                mixed_qkv, a3, b, A_log, dt2, scale, initial_state, d_cache, k_cache, g_cache, out, ssm_state_indices,
                write_pos, force_flush=force_flush, lower_bound=lower_bound,
                use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, is_kda=True)
        # What the Triton wrapper insists on (contiguous rings, cursors and b, [HV, V, K]-contiguous
        # state slots, int32 indices): fresh contiguous copies of everything, written back after the
        # call. Fresh, not .contiguous(): a contiguous view at an odd storage offset is a misaligned
        # pointer, for which Triton compiles the kernel again (the compile key is the shape class).
        def fresh(t):
            return t.clone(memory_format=torch.contiguous_format)
        state, rings = fresh(initial_state), [fresh(r) for r in (d_cache, k_cache, g_cache)]
        o = fresh(out)
        mod.fused_recurrent_linear_replayssm_decode(
            fresh(mixed_qkv), fresh(a3), fresh(b), fresh(A_log), fresh(dt2), scale, state, *rings, o,
            fresh(ssm_state_indices.to(torch.int32)), fresh(write_pos),
            force_flush=None if force_flush is None else fresh(force_flush), lower_bound=lower_bound,
            use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, is_kda=True)
        for dst, src in zip((initial_state, d_cache, k_cache, g_cache, out), (state, *rings, o)):
            dst.copy_(src)
        return out, initial_state
    return replayssm_decode


def triton_paged_prefill(mod: Any) -> Callable[..., Any]:
    # sglang's V-base signature (no return_lse, no replicated_logit_shift): the fuzzer runs calls
    # that ask for lse without it and draws again for calls with a shift (counted as "signature").
    def sparse_attn_v4_paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend,
                                     kv_indptr_extend, attn_sink, softmax_scale):
        return mod.sparse_attn_v4_paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv,
                                                kv_indices_extend, kv_indptr_extend, attn_sink, softmax_scale)
    return sparse_attn_v4_paged_prefill


def triton_paged_decode(mod: Any) -> Callable[..., Any]:
    def sparse_attn_v4_paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale):
        return mod.sparse_attn_v4_paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale)
    return sparse_attn_v4_paged_decode


def fla_recurrent(fn: Callable[..., Any]) -> Callable[..., Any]:
    import torch

    def fused_recurrent_kda(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
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
        o, final = fn(q[None], k[None], v[None], gate[None], beta[None], **kw)
        return o[0], final
    return fused_recurrent_kda


class Capture:
    """KPARITY_CAPTURE_DIR: each call the adapter makes (up to KPARITY_CAPTURE_MAX, default 400) is
    written as a `kparity run` dump whose expected.* are the upstream kernel's outputs, so that a
    precision model of that kernel can be built and checked on the CPU against what the kernel did
    (`kparity fuzz --replay`, probes/), without another device call."""

    def __init__(self, op: str, directory: str, limit: int) -> None:
        self.op, self.dir, self.limit, self.n = op, directory, limit, 0
        os.makedirs(directory, exist_ok=True)

    @staticmethod
    def from_env(op: str) -> "Capture | None":
        d = os.environ.get("KPARITY_CAPTURE_DIR")
        return Capture(op, d, int(os.environ.get("KPARITY_CAPTURE_MAX", "400"))) if d else None

    def __call__(self, args: tuple, kwargs: dict, outputs: dict[str, Any]) -> None:
        if self.n >= self.limit:
            return
        from kparity._family import Op

        path = os.path.join(self.dir, f"{self.op.replace('/', '.')}.{os.getpid()}.{self.n:04d}.safetensors")
        self.n += 1
        try:
            Op(self.op).dump(path, *args, expected={k: v for k, v in outputs.items() if v is not None}, **kwargs)
        except Exception as e:  # noqa: BLE001  (a capture never changes the verdict)
            print(f"capture: {path}: {type(e).__name__}: {e}", file=sys.stderr)


def fla_chunk(fn: Callable[..., Any]) -> Callable[..., Any]:
    import torch

    capture = Capture.from_env("kda/chunk")

    def chunk_kda(*args, **kwargs):
        # kparity's kda/chunk is chunk_kda's own signature. Two things only: it runs under
        # torch.inference_mode(), which chunk_kda asserts for return_intermediate_states (and which
        # changes nothing else in a forward call), and it returns (o, final_state), dropping the
        # intermediate states h that return_intermediate_states adds (kparity does not model them).
        with torch.inference_mode():
            r = fn(*args, **kwargs)
        if capture is not None:
            capture(args, kwargs, {"out": r[0], "final_state": r[1]})
        return r[0], r[1]
    return chunk_kda


def dry_targets() -> dict[str, tuple[Target, Any]]:
    """--dry-run: stand-ins from kparity.testing.impls on the CPU (one with two planted slips), to
    check this script's machinery where there is no GPU."""
    from kparity.testing import impls
    from kparity.testing.impls import planted_findings as pf

    return {"dry-sparse-decode": (Target("dry-sparse-decode", "sparse/paged_decode", ("faithful",), "deepseek-v4",
                                         "D >= 9", sparse_domain, sparse_decode_key, 0, 0, SPARSE_PINS),
                                  pf.zero_division_and_dedupe),
            "dry-replayssm": (Target("dry-replayssm", "kda/replayssm_decode", ("faithful",), "kimi-linear", "K >= 17",
                                     replayssm_domain, replayssm_key, 24, 8, REPLAYSSM_PINS), impls.replayssm_decode),
            "dry-recurrent": (Target("dry-recurrent", "kda/recurrent", ("faithful",), "kimi-linear", "every call", None,
                                     fla_key, 24, 8, FLA_PINS), impls.recurrent)}


def _skip_autotune_benchmarks() -> None:
    """Triton's autotuner compiles and times every config of a kernel at each new key (fla's
    chunk_kda spends more than 30 s there on its first call); the fuzzer needs right answers, which
    every config must give, not the fastest. So every config times the same without running, and
    the first one that survives the kernel's own pruning is compiled and used. KPARITY_FLA_AUTOTUNE=1
    keeps the real autotuning."""
    from triton.runtime import autotuner

    def untimed(self, *args, **kwargs):  # noqa: ANN001, ARG001  (whatever the Triton version passes)
        return [0.0, 0.0, 0.0]

    autotuner.Autotuner._bench = untimed


def targets(peers: str) -> dict[str, tuple[Target, Any]]:
    """name -> (target, implementation or the import error)."""
    if peers == "--dry-run":
        return dry_targets()
    mods = _import_sglang_files(peers)
    rs, pf, pd = mods["fused_recurrent_linear_replayssm"], mods["paged_prefill"], mods["paged_decode"]

    def made(src: Any, make: Callable[[], Any]) -> Any:
        return src if isinstance(src, Exception) else make()

    out: dict[str, tuple[Target, Any]] = {
        # ReplaySSM "as is": the Triton wrapper's own stricter checks meet kparity's generators; each
        # rejection of a call kparity's contract accepts is a finding (once), then the run goes on
        # inside the wrapper's domain. "laid out": contiguous copies for what it insists on.
        "sglang-triton-replayssm-as-is": (
            Target("sglang-triton-replayssm-as-is", "kda/replayssm_decode", ("faithful", "tf32-dot"), "kimi-linear",
                   "K >= 17", replayssm_domain, replayssm_key, 24, 8, REPLAYSSM_PINS),
            made(rs, lambda: triton_replayssm(rs, False))),
        "sglang-triton-replayssm-laid-out": (
            Target("sglang-triton-replayssm-laid-out", "kda/replayssm_decode", ("faithful", "tf32-dot"),
                   "kimi-linear", "K >= 17; rings with the state pool's slot count", replayssm_laid_out_domain,
                   replayssm_key, 24, 8, REPLAYSSM_PINS),
            made(rs, lambda: triton_replayssm(rs, True))),
        "sglang-triton-paged-prefill": (
            Target("sglang-triton-paged-prefill", "sparse/paged_prefill", ("faithful",), "deepseek-v4", "D >= 9",
                   sparse_domain, sparse_prefill_key, 0, 0, SPARSE_PINS), made(pf, lambda: triton_paged_prefill(pf))),
        "sglang-triton-paged-decode": (
            Target("sglang-triton-paged-decode", "sparse/paged_decode", ("faithful",), "deepseek-v4", "D >= 9",
                   sparse_domain, sparse_decode_key, 0, 0, SPARSE_PINS), made(pd, lambda: triton_paged_decode(pd))),
    }
    sys.path.insert(0, peers)
    try:
        if not os.environ.get("KPARITY_FLA_AUTOTUNE"):
            _skip_autotune_benchmarks()
        from fla.ops.kda import chunk_kda, fused_recurrent_kda
        rec, chk = fla_recurrent(fused_recurrent_kda), fla_chunk(chunk_kda)
    except Exception as e:  # noqa: BLE001
        rec = chk = e
    out["fla-fused-recurrent-kda"] = (Target("fla-fused-recurrent-kda", "kda/recurrent", ("faithful",), "kimi-linear",
                                             "every call", None, fla_key, 24, 8, FLA_PINS), rec)
    # fla-chunk: the profile that models chunk_kda's stored bf16 intermediates (its faithful-profile
    # runs meet that precision on most calls: READINGS f1ad4288, db8e567a).
    out["fla-chunk-kda"] = (Target("fla-chunk-kda", "kda/chunk", ("fla-chunk", "faithful"), "kimi-linear", "every call",
                                   None, fla_key, 16, 8, FLA_PINS, shrink=False), chk)
    return out


# --- the compile budget ---------------------------------------------------------------------------------

class CompileBudget:
    """A declared domain with at most `limit` compile keys: the first `limit` keys drawn are in,
    calls of later keys are outside ("compile budget"). Monotone (a call once inside stays inside),
    so a case that RapidCheck evaluates again sees the same answer. Without a key or a limit it is
    the inner domain alone."""

    def __init__(self, inner: Callable[[Any], Any] | None, key: Callable[[Any], tuple] | None, limit: int) -> None:
        self.inner, self.key, self.limit, self.seen = inner, key, limit, set()
        self.__name__ = (inner.__name__ if inner else "every_call") + (f"_within_{limit}_compile_keys" if key and limit else "")

    def __call__(self, call: Any) -> bool | str:
        if self.inner is not None:
            inside = self.inner(call)
            if inside is not True:
                return inside
        if self.key is None:
            return True
        k = self.key(call)
        if self.limit <= 0 or k in self.seen or len(self.seen) < self.limit:
            self.seen.add(k)
            return True
        return f"compile budget: {self.limit} compile keys"


# --- one run in its own process ---------------------------------------------------------------------------

@dataclass
class Run:
    target: str
    profile: str
    shapes: str        # "small", "large" (kernel-sized, pinned like small) or the preset
    seconds: float
    classes: int | None  # compile keys at most (None: the target's default for these shapes)
    out_dir: str
    peers: str
    seed: int | None
    max_findings: int
    first_call_timeout: float
    case_timeout: float
    known: list[str] = field(default_factory=list)
    pins: str = ""
    read_known: bool = False  # the findings READINGS classifies for the target are known
    properties: tuple[str, ...] = ()  # kinds to run (empty: check_implementation's default three)

    @property
    def stem(self) -> str:
        kinds = "" if not self.properties or len(self.properties) > 1 else "." + self.properties[0]
        return f"{self.target}.{self.profile}.{self.shapes}{kinds}"


def run_one(r: Run) -> dict[str, Any]:
    """One check_implementation run; returns what the report needs (or the error)."""
    from kparity.fuzz import check_implementation

    t0 = time.time()
    try:
        target, impl = targets(r.peers)[r.target]
        if isinstance(impl, Exception):
            return {"run": r.stem, "skipped": f"{type(impl).__name__}: {impl}"}
        small = r.shapes in ("small", "large")
        limit = r.classes if r.classes is not None else (target.classes_small if small else target.classes_preset)
        supports = CompileBudget(target.supports, target.compile_key, limit)
        kw = dict(preset=None, pins=r.pins or None, shapes=r.shapes) if small else dict(preset=r.shapes)
        report = check_implementation(target.op, impl, device="cpu" if r.peers == "--dry-run" else "cuda",
                                      time=r.seconds, profile=r.profile,
                                      seed=r.seed, name=target.name, supports=supports,
                                      max_findings=r.max_findings,
                                      known=(r.known + (known_for(target.name, r.profile) if r.read_known else [])) or None,
                                      shrink=target.shrink, properties=list(r.properties) or None,
                                      first_call_timeout=r.first_call_timeout, case_timeout=r.case_timeout,
                                      corpus=os.path.join(r.out_dir, "corpus"),
                                      report=os.path.join(r.out_dir, r.stem + ".json"), **kw)
        with open(os.path.join(r.out_dir, r.stem + ".txt"), "w") as f:
            f.write(report.summary() + "\n\n" + report.log)
        return {"run": r.stem, "target": target.name, "op": target.op, "profile": r.profile, "shapes": r.shapes,
                "domain": target.domain, "pins": r.pins if small else "", "classes": limit,
                "classes_seen": len(supports.seen),
                "seconds": time.time() - t0, "error": report.error,
                "report": report.to_json()}
    except Exception as e:  # noqa: BLE001  (the run's own failure, reported in its row)
        return {"run": r.stem, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(),
                "seconds": time.time() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=400.0,
                    help="seconds per run (one target, profile and shape setting); the runs go in parallel "
                         "(default 400)")
    ap.add_argument("--seconds-preset", type=float, default=None,
                    help="seconds per run at the model's preset (default --budget)")
    ap.add_argument("--targets", nargs="*", default=None, help="a subset of the targets")
    ap.add_argument("--profiles", nargs="*", default=None, help="a subset of the precision profiles")
    ap.add_argument("--shapes", nargs="*", default=["small", "preset"], choices=["small", "large", "preset"],
                    help="small: the generators' own sizes, pinned; large: the kernel-sized tier (sequences "
                         "of 31-65 tokens, which cross chunk_kda's chunk boundaries), pinned the same way; "
                         "preset: the target's real-model preset")
    ap.add_argument("--jobs", type=int, default=0, help="parallel runs (default: every run at once, at most "
                    "half the CPU cores)")
    ap.add_argument("--seed", type=lambda s: int(s, 0), default=None)
    ap.add_argument("--max-findings", type=int, default=5)
    ap.add_argument("--classes-small", type=int, default=None,
                    help="compile keys per run at small shapes (0: any; default: the target's)")
    ap.add_argument("--classes-preset", type=int, default=None,
                    help="compile keys per run at the preset (0: any; default: the target's)")
    ap.add_argument("--first-call-timeout", type=float, default=240.0)
    ap.add_argument("--case-timeout", type=float, default=60.0)
    ap.add_argument("--known", nargs="*", default=[], help="finding ids or signatures to accept")
    ap.add_argument("--properties", nargs="*", default=[], choices=["differential", "differential-special-values",
                                                                     "deterministic"],
                    help="the property kinds to run (default: check_implementation's three)")
    ap.add_argument("--split-properties", action="store_true",
                    help="each property kind in its own process (each with the whole --budget)")
    ap.add_argument("--known-readings", action="store_true",
                    help="accept the findings READINGS already classifies for each target (known hits, counted and "
                         "read in the report, not shrunk again), so that the run digs for new ones")
    ap.add_argument("--pins", default=None,
                    help="pins for every small-shape run instead of each target's own ('' for none)")
    ap.add_argument("--results", default=os.path.join(os.path.dirname(__file__), "..", "results"),
                    help="also write upstream_<date>.md here (default bench/results; '' for none)")
    ap.add_argument("--dry-run", action="store_true",
                    help="stand-in targets on the CPU (kparity.testing.impls): checks this script without a GPU")
    ap.add_argument("--render", metavar="DIR",
                    help="write upstream_<date>.md from the per-run reports (<target>.<profile>.<shapes>.json) a "
                         "run left in DIR, e.g. one stopped at the device's time limit before it wrote its own; "
                         "--rendered-from says where, when, on what")
    ap.add_argument("--rendered-from", nargs=3, metavar=("STARTED", "GPU", "TORCH"),
                    default=("?", "?", "?"))
    args = ap.parse_args()
    if args.render:
        return render(args)
    args.seconds_small = args.budget if {"small", "large"} & set(args.shapes) else 0.0
    args.seconds_preset = (args.seconds_preset or args.budget) if "preset" in args.shapes else 0.0
    out_dir = os.path.abspath(os.environ.get("OUT", "fuzz-upstream-out"))
    os.makedirs(out_dir, exist_ok=True)
    import torch

    if args.dry_run:
        args.peers, gpu = "--dry-run", "CPU (dry run)"
    elif not torch.cuda.is_available():
        print("fuzz upstream: skipped, no CUDA device")
        return 0
    else:
        args.peers = os.path.abspath(os.environ.get("KPARITY_PEERS", ".peers"))
        gpu = torch.cuda.get_device_name(0)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    date = started.split()[0]
    names = targets(args.peers)
    # Every (target, profile, shape setting) in its own process, all at once by default: the small
    # and preset runs of a target share Triton's on-disk cache (TRITON_CACHE_DIR), not a process.
    runs: list[Run] = []
    for name, (target, _) in names.items():
        if args.targets and name not in args.targets:
            continue
        for profile in target.profiles:
            if args.profiles and profile not in args.profiles:
                continue
            for shapes, kinds in [(sh, k) for sh in args.shapes
                                  for k in ([(p,) for p in args.properties] if args.split_properties
                                            else [tuple(args.properties)])]:
                small = shapes in ("small", "large")
                runs.append(Run(name, profile, shapes if small else target.preset,
                                args.seconds_small if small else args.seconds_preset,
                                args.classes_small if small else args.classes_preset, out_dir, args.peers,
                                args.seed, args.max_findings, args.first_call_timeout, args.case_timeout, args.known,
                                (target.pins if args.pins is None else args.pins) if small else "",
                                args.known_readings, kinds))
    args.jobs = args.jobs or max(1, min(len(runs), os.cpu_count() or 2))
    t0 = time.time()
    ctx = mp.get_context("spawn")  # CUDA in every child, none inherited through fork
    results: list[dict[str, Any]] = []
    paths = [os.path.join(out_dir, f"upstream_{date}.md")]
    if args.results:
        os.makedirs(args.results, exist_ok=True)
        paths.append(os.path.join(args.results, f"upstream_{date}.md"))

    def write() -> str:
        # After every run, so that a call cut at its time limit still leaves the report of what ended.
        text = markdown(results, args, started, gpu, time.time() - t0)
        for p in paths:
            with open(p, "w") as f:
                f.write(text)
        return text
    with ctx.Pool(args.jobs) as pool:
        for res in pool.imap_unordered(run_one, runs):
            results.append(res)
            rep = res.get("report", {})
            verdicts = [f"{p['name'].split('/')[2]}: {p['cases']} cases, {len(p.get('findings', []))} findings"
                        for p in rep.get("properties", [])]
            print(f"{res['run']} ({res.get('seconds', 0):.0f} s, {res.get('classes_seen', '?')} compile keys): "
                  f"{res.get('error') or res.get('skipped') or '; '.join(verdicts)}", flush=True)
            write()
    results.sort(key=lambda r: r["run"])
    text = write()
    with open(os.path.join(out_dir, "upstream.json"), "w") as f:
        json.dump({"started": started, "gpu": gpu, "args": {k: v for k, v in vars(args).items()},
                   "runs": results}, f, indent=1, default=str)
    print(text)
    print("written:", ", ".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
