"""kparity.kernel on CUDA tensors (GPU machine only): agreement with the reference, stream semantics,
CUDA-graph capture and replay. Without a device every test here skips with "skipped: no CUDA device"."""
from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import kparity
from kparity import _kparity
from kp_helpers import REPO, Labelled, example_args, replayssm_args

pytestmark = pytest.mark.gpu
OP = "kda/replayssm_decode"

# README, "Comparing against expected tensors": the op's acceptance tolerance per written tensor,
# raised to torch.testing's default for the loosest float dtype involved.
TOL = {
    ("kda/packed_decode", "out"): (1e-4, 1e-4), ("kda/packed_decode", "initial_state"): (2e-3, 1e-4),
    ("kda/replayssm_decode", "out"): (5e-4, 1e-2), ("kda/replayssm_decode", "initial_state"): (4e-3, 1e-2),
    ("kda/replayssm_decode", "d_cache"): (2e-3, 1e-2), ("kda/replayssm_decode", "k_cache"): (2e-3, 1e-2),
    ("kda/replayssm_decode", "g_cache"): (1e-5, 1e-4),
    ("kda/recurrent", "out"): (5e-3, 5e-3), ("kda/recurrent", "final_state"): (1e-2, 1e-2),
    ("sparse/paged_prefill", "out"): (2e-2, 2e-2), ("sparse/paged_prefill", "lse"): (3e-3, 3e-3),
    ("sparse/paged_decode", "out"): (2e-2, 2e-2), ("sparse/paged_decode", "lse"): (3e-3, 3e-3),
}
DTYPE_FLOOR = {torch.bfloat16: (1e-5, 1.6e-2), torch.float16: (1e-5, 1e-3), torch.float32: (1e-5, 1.3e-6)}


def assert_matches(op: str, got: dict[str, Any], want: dict[str, Any]) -> None:
    for name, w in want.items():
        g = got[name]
        atol, rtol = TOL[(op, name)]
        fa, fr = DTYPE_FLOOR.get(g.dtype, (0.0, 0.0))
        torch.testing.assert_close(g.detach().cpu().float(), w.detach().cpu().float(), atol=max(atol, fa),
                                   rtol=max(rtol, fr), msg=lambda m: f"{op} {name}: {m}")


def to_cuda(args: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in args.items():
        if isinstance(v, Labelled):
            v = v.t
        out[k] = v.cuda() if isinstance(v, torch.Tensor) else v
    return out


def to_cpu(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v.detach().cpu().clone() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


# The fixtures of ops whose kernel every CUDA build has: kda/chunk's chunked kernel is built only with
# -DKPARITY_CHUNK_KERNEL=ON and follows the kparity-chunk profile, not the faithful one (its GPU tests are
# tests/gpu_kda/test_chunk.cpp); its fixtures serve the reference and the contract.
KERNEL_OPS = ("kda/recurrent", "kda/packed_decode", "kda/replayssm_decode", "sparse/paged_prefill", "sparse/paged_decode")
FIXTURES = sorted(f for f in json.loads(_kparity._fixtures_json())
                  if example_args({"fixture": f})[0] in KERNEL_OPS)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_kernel_agrees_with_faithful_reference(fixture: str) -> None:
    op, args, _ = example_args({"fixture": fixture})
    dev = to_cuda(args)
    host = to_cpu(dev)
    written = kparity.kernel(op, **dev)
    torch.cuda.synchronize()
    want = kparity.reference(op, precision="faithful", **host)
    assert set(written) >= set(want) - {"lse"}
    assert_matches(op, {k: dev.get(k, written.get(k)) for k in want}, want)


def test_kernel_allocates_the_outputs_upstream_allocates() -> None:
    op, args, _ = example_args({"fixture": "sparse.decode.minimal"})
    dev = to_cuda(args)
    dev.pop("out")
    dev.pop("lse", None)
    written = kparity.kernel(op, **dev)
    assert written["out"].is_cuda and written["out"].shape == dev["q"].shape


def test_kernel_runs_on_the_current_stream_without_synchronising() -> None:
    host = replayssm_args()
    dev = to_cuda(host)
    fresh = torch.randn(dev["mixed_qkv"].shape, dtype=torch.float32).to(torch.bfloat16)
    fresh_dev = fresh.cuda()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # the GPU spins on s first...
        dev["mixed_qkv"].copy_(fresh_dev)  # ...then a new input arrives on s
        kparity.kernel(OP, **dev)  # must run after it, on s
        done = torch.cuda.Event()
        done.record(s)
    assert not done.query(), "kparity.kernel waited for the stream"
    s.synchronize()
    host["mixed_qkv"] = fresh
    assert_matches(OP, dev, kparity.reference(OP, precision="faithful", **host))


def test_kernel_on_an_explicit_stream() -> None:
    host = replayssm_args()
    dev = to_cuda(host)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    kparity.kernel(OP, stream=s.cuda_stream, **dev)
    s.synchronize()
    assert_matches(OP, dev, kparity.reference(OP, precision="faithful", **host))
    with pytest.raises(TypeError, match="stream"):
        kparity.kernel(OP, stream="default", **dev)


def test_cuda_graph_capture_and_replay() -> None:
    host = replayssm_args()
    dev = to_cuda(host)
    inplace = ["out", "initial_state", "d_cache", "k_cache", "g_cache"]
    before = {k: dev[k].clone() for k in inplace}

    def restore() -> None:
        for k in inplace:
            dev[k].copy_(before[k])

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch recommends
        kparity.kernel(OP, **dev)
    torch.cuda.current_stream().wait_stream(side)
    restore()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        kparity.kernel(OP, **dev)
    for step in range(2):
        restore()
        if step:  # new inputs written in place into the captured buffers
            fresh = torch.randn(host["mixed_qkv"].shape).to(torch.bfloat16)
            dev["mixed_qkv"].copy_(fresh.cuda())
            host["mixed_qkv"] = fresh
        graph.replay()
        torch.cuda.synchronize()
        ref_args = to_cpu({**host, **{k: before[k] for k in inplace}})
        assert_matches(OP, dev, kparity.reference(OP, precision="faithful", **ref_args))


def test_deep_check_on_device_tensors_copies_what_it_reads() -> None:
    args = to_cuda(replayssm_args())
    args["write_pos"] = torch.tensor([1, 9], dtype=torch.int32, device="cuda")
    assert kparity.check(OP, **args) == []  # shape checks only: nothing read
    with pytest.raises(kparity.ContractError) as info:
        kparity.check(OP, extra=True, deep=True, **args)
    assert info.value.slug == "kda-write-pos-out-of-range"


# --- every kernel with every optional argument absent and present (issue 23 item 2) ---------------
# torch gives an empty tensor no storage (data_ptr() == 0): T = 0, no rows, no keys. The kernels
# once read a present-but-empty g as absent and loaded A_log through a null pointer; these calls put
# such tensors in every argument that can be empty, through kparity.kernel and through
# kparity.testing.impls.kernels (upstream's conventions), against kparity.reference. Under
# compute-sanitizer memcheck they must also be free of invalid accesses.

def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _normal(shape: tuple[int, ...], dtype: torch.dtype, seed: int, std: float = 1.0) -> torch.Tensor:
    return (std * torch.randn(shape, generator=_gen(seed))).to(dtype)


def _recurrent_call(gate: str, init: bool, fin: bool, cu: bool, seqlens: list[int], seed: int) -> dict[str, Any]:
    """H = 1, HV = 2 (GQA), K = V = 16; bf16 activations; an fp32 initial state; a passed final
    state in bf16 (a rounding point of its own); beta as logits or probabilities by seed."""
    H, HV, K, V, N, T = 1, 2, 16, 16, len(seqlens), sum(seqlens)
    bf16, f32 = torch.bfloat16, torch.float32
    # k ~ N(0, 1/K): |k|^2 ~ 1, so without the L2 norm the delta rule stays stable (beta |k|^2 < 2).
    args: dict[str, Any] = dict(q=_normal((T, H, K), bf16, seed), k=_normal((T, H, K), bf16, seed + 1, K ** -0.5),
                                v=_normal((T, HV, V), bf16, seed + 2), use_qk_l2norm_in_kernel=bool(seed % 2))
    if seed % 3:
        args["scale"] = 0.25
    if seed % 2:
        args["beta"] = torch.rand((T, HV), generator=_gen(seed + 3)).to(bf16)
    else:
        args["beta"], args["beta_is_logits"] = _normal((T, HV), bf16, seed + 3), True
    if gate == "g":
        args["g"] = -0.2 * torch.rand((T, HV, K), generator=_gen(seed + 4))
    else:
        args.update(a=_normal((T, HV, K), bf16, seed + 5, 0.5), dt_bias=_normal((HV, K), f32, seed + 6, 0.1),
                    A_log=_normal((HV,), f32, seed + 7, 0.3))
        if gate == "bounded":
            args["lower_bound"] = -5.0
    if init:
        args["initial_state"] = _normal((N, HV, V, K), f32, seed + 8, 0.5)
    if fin:
        args["final_state"] = torch.empty((N, HV, V, K), dtype=bf16)
    if cu:
        args["cu_seqlens"] = torch.tensor([0, *torch.tensor(seqlens).cumsum(0).tolist()],
                                          dtype=torch.int32 if seed % 2 else torch.int64)
    return args


def _recurrent_calls() -> list[tuple[str, dict[str, Any]]]:
    out, seed = [], 1000
    lengths = [(False, [0]), (False, [5]), (True, [0]), (True, [0, 0, 0]), (True, [0, 3, 0, 2])]
    for gate in ("g", "softplus", "bounded"):
        for init in (False, True):
            for fin in (False, True):
                for cu, seqlens in lengths:
                    seed += 10
                    label = (f"{gate} initial_state={init} final_state={fin} "
                             + (f"cu_seqlens={seqlens}" if cu else f"T={seqlens[0]}"))
                    out.append((label, _recurrent_call(gate, init, fin, cu, seqlens, seed)))
    return out


def _decode_call(op: str, B: int, slots: int, idx: list[int], force: bool, bounded: bool, seed: int) -> dict[str, Any]:
    import sys

    sys.path.insert(0, str(REPO / "python" / "bench"))
    from replayssm_call import replayssm_call

    args = replayssm_call(torch, "cpu", B=B, H=1, HV=2, K=16, V=16, L=4, slots=slots)
    g = _gen(seed)
    for k, v in args.items():
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            v.copy_(0.5 * torch.randn(v.shape, generator=g))
    args["g_cache"].copy_(-0.1 * torch.rand(args["g_cache"].shape, generator=g))
    args["ssm_state_indices"] = torch.tensor(idx, dtype=torch.int32)
    args["write_pos"] = torch.ones(B, dtype=torch.int32)
    args["lower_bound"] = -5.0 if bounded else None
    if force:
        args["force_flush"] = torch.tensor([r % 2 for r in range(B)], dtype=torch.int32)
    else:
        args.pop("force_flush")
    if op == "kda/packed_decode":
        for k in ("d_cache", "k_cache", "g_cache", "write_pos", "force_flush"):
            args.pop(k, None)
    return {k: v for k, v in args.items() if v is not None}


def _decode_calls(op: str) -> list[tuple[str, dict[str, Any]]]:
    shapes = [(3, 4, [2, -1, 0]), (0, 3, []), (2, 0, [-1, -1])]  # rows; no rows; padding over an empty pool
    out, seed = [], 2000
    for B, slots, idx in shapes:
        for force in ((False, True) if op == "kda/replayssm_decode" else (False,)):
            for bounded in (False, True):
                seed += 10
                label = f"B={B} slots={slots} force_flush={force} lower_bound={bounded}"
                out.append((label, _decode_call(op, B, slots, idx, force, bounded, seed)))
    return out


def _csr(lists: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """CSR without padding: a source with no keys has an empty index list."""
    flat = [i for lst in lists for i in lst]
    ptr = [0]
    for lst in lists:
        ptr.append(ptr[-1] + len(lst))
    return torch.tensor(flat, dtype=torch.int32), torch.tensor(ptr, dtype=torch.int32)


def _sparse_call(op: str, T: int, P: int, Ne: int, pre: int, ext: int, lse: bool, outs: bool, seed: int) -> dict[str, Any]:
    H, D, bf16 = 4, 64, torch.bfloat16
    args: dict[str, Any] = dict(q=_normal((T, H, D), bf16, seed), unified_kv=_normal((P, D), bf16, seed + 1),
                                attn_sink=0.5 + 0.4 * torch.randn((H,), generator=_gen(seed + 2)),
                                softmax_scale=D ** -0.5, return_lse=lse)
    prefix, prefix_ptr = _csr([[(t + j) % P for j in range(pre)] for t in range(T)])
    if op == "sparse/paged_prefill":
        extend, extend_ptr = _csr([[(t + 2 * j) % Ne for j in range(ext)] for t in range(T)])
        args.update(kv_indices_prefix=prefix, kv_indptr_prefix=prefix_ptr, kv=_normal((Ne, D), bf16, seed + 3),
                    kv_indices_extend=extend, kv_indptr_extend=extend_ptr)
        if seed % 2:
            args["replicated_logit_shift"] = 0.5
    else:
        args.update(kv_indices=prefix, kv_indptr=prefix_ptr)
    if outs:  # the outputs passed in; else kparity allocates them as upstream does
        args["out"] = torch.empty((T, H, D), dtype=bf16)
        if lse:
            args["lse"] = torch.empty((T, H), dtype=torch.float32)
    return args


def _sparse_calls(op: str) -> list[tuple[str, dict[str, Any]]]:
    if op == "sparse/paged_prefill":
        shapes = [(0, 6, 5, 0, 0), (0, 0, 0, 0, 0), (3, 6, 0, 2, 0), (3, 0, 5, 0, 2), (3, 0, 0, 0, 0), (3, 6, 5, 2, 1)]
    else:
        shapes = [(0, 6, 0, 0, 0), (0, 0, 0, 0, 0), (3, 0, 0, 0, 0), (3, 6, 0, 0, 0), (2, 6, 0, 3, 0)]
    out, seed = [], 3000
    for T, P, Ne, pre, ext in shapes:
        for lse in (False, True):
            for outs in (False, True):
                seed += 10
                label = f"T={T} rows {P}+{Ne} keys {pre}+{ext} return_lse={lse} outputs passed={outs}"
                out.append((label, _sparse_call(op, T, P, Ne, pre, ext, lse, outs, seed)))
    return out


def _optional_calls() -> list[tuple[str, str, dict[str, Any]]]:
    calls = [("kda/recurrent", label, a) for label, a in _recurrent_calls()]
    for op in ("kda/packed_decode", "kda/replayssm_decode"):
        calls += [(op, label, a) for label, a in _decode_calls(op)]
    for op in ("sparse/paged_prefill", "sparse/paged_decode"):
        calls += [(op, label, a) for label, a in _sparse_calls(op)]
    return calls


_OPTIONAL_CALLS = _optional_calls()


def _reference_or_error(op: str, host: dict[str, Any]) -> tuple[dict[str, Any] | None, Exception | None]:
    try:
        return kparity.reference(op, precision="faithful", **to_cpu(host)), None
    except kparity.ContractError as e:
        return None, e


def _has_null_pointer(dev: dict[str, Any]) -> bool:
    return any(isinstance(v, torch.Tensor) and v.numel() == 0 and v.data_ptr() == 0 for v in dev.values())


@pytest.mark.parametrize("op,label,host", _OPTIONAL_CALLS, ids=[f"{op}: {label}" for op, label, _ in _OPTIONAL_CALLS])
def test_kernel_with_optional_arguments_absent_present_and_empty(op: str, label: str, host: dict[str, Any]) -> None:
    want, refused = _reference_or_error(op, host)
    dev = to_cuda(host)
    if any(isinstance(v, torch.Tensor) and v.numel() == 0 for v in host.values()):
        assert _has_null_pointer(dev), "torch gave every empty tensor storage: the call tests no null pointer"
    if refused is not None:  # the kernel's contract (every check) refuses it with the same id
        with pytest.raises(kparity.ContractError) as info:
            kparity.kernel(op, extra=True, deep=True, sync=True, **dev)
        assert info.value.id == refused.id
        return
    written = kparity.kernel(op, extra=True, deep=True, sync=True, **dev)
    torch.cuda.synchronize()
    assert want is not None
    got = {k: dev[k] if k in dev else written[k] for k in want}
    assert_matches(op, got, want)


# Upstream's conventions have no contract to agree with on a refused call (kparity.kernel's default
# options are upstream's checks only): the impls test takes the calls the reference accepts (all but
# the ReplaySSM calls without rows, kda-replayssm-batch-zero; 60 ms of host reference runs).
_ACCEPTED_CALLS = [c for c in _OPTIONAL_CALLS if _reference_or_error(c[0], c[2])[1] is None]


@pytest.mark.parametrize("op,label,host", _ACCEPTED_CALLS, ids=[f"{op}: {label}" for op, label, _ in _ACCEPTED_CALLS])
def test_impls_kernels_with_optional_arguments_absent_present_and_empty(op: str, label: str, host: dict[str, Any]) -> None:
    from kparity.testing import impls

    row = {p.name: p for p in kparity._ops_table.op_row(op, "test").params}
    upstream = {k: v for k, v in host.items() if not (row[k].keyword_only and k in ("out", "lse", "final_state"))}
    if op == "kda/recurrent":
        upstream["output_final_state"] = "final_state" in host
    want_host = dict(host)
    if op == "kda/recurrent" and "final_state" in host:
        want_host["final_state"] = torch.empty(host["final_state"].shape, dtype=torch.float32)  # fla's fp32 state
    want, refused = _reference_or_error(op, want_host)
    assert refused is None, refused
    dev = to_cuda(upstream)
    result = impls.kernels(op)(**dev)
    torch.cuda.synchronize()
    assert want is not None
    if op == "kda/recurrent":
        o, final = result
        got = {"out": o}
        if "final_state" in host:
            assert final is not None and final.dtype == torch.float32
            got["final_state"] = final
        else:
            assert final is None
    elif op.startswith("sparse/"):
        got = dict(zip(("out", "lse"), result)) if host["return_lse"] else {"out": result}
    else:
        out, state = result
        assert out is dev["out"] and state is dev["initial_state"]
        got = {k: dev[k] for k in want}
    assert_matches(op, got, {k: want[k] for k in got})
