"""kparity.kernel on CUDA tensors (GPU machine only): agreement with the reference, stream semantics,
CUDA-graph capture and replay. Without a device every test here skips with "skipped: no CUDA device"."""
from __future__ import annotations

import json
from typing import Any

import pytest
import torch

import kparity
from kparity import _kparity
from kp_helpers import Labelled, example_args, replayssm_args

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


FIXTURES = sorted(json.loads(_kparity._fixtures_json()))


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
