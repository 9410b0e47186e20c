"""The issue's three seed entries, from Python with plain torch tensors."""
from __future__ import annotations

import pytest
import torch

import kparity
from kp_helpers import Labelled, example_args, replayssm_args

OP = "kda/replayssm_decode"


def test_bf16_g_cache_raises_value_error_066bd06e9ab538bd() -> None:
    args = replayssm_args()
    args["g_cache"] = args["g_cache"].to(torch.bfloat16)
    with pytest.raises(ValueError) as info:
        kparity.check(OP, **args)
    e = info.value
    assert isinstance(e, kparity.ContractError) and isinstance(e, kparity.ContractValueError)
    assert e.id == "066bd06e9ab538bd" and e.slug == "kda-g-cache-dtype"
    assert str(e) == "`g_cache` must have dtype torch.float32."
    assert e.argument == "g_cache" and e.op == OP
    assert e.entry["errorClass"] == "ValueError"
    # The same call through upstream's positional signature.
    pos = [args[n] for n in kparity.kda.replayssm_decode.row.positional]
    with pytest.raises(ValueError, match=r"^`g_cache` must have dtype torch\.float32\.$"):
        kparity.kda.replayssm_decode.check(*pos)


def test_cpu_q_at_kernel_entry_raises_runtime_error_5d9da259c68eb6c4() -> None:
    entry = kparity.explain("5d9da259c68eb6c4")
    op, args, _ = example_args(entry.fixed_example)
    args = {k: (v.cpu() if isinstance(v, Labelled) else v.cpu() if isinstance(v, torch.Tensor) else v)
            for k, v in args.items()}  # every tensor in host memory, q included
    with pytest.raises(RuntimeError) as info:
        kparity.check(op, entry="kernel", **args)
    assert info.value.id == "5d9da259c68eb6c4"
    assert str(info.value) == entry.message
    # The reference entry reads host memory: no such check there.
    assert kparity.check(op, entry="reference", **args) == []


def test_force_flush_on_another_device_b62325e96d849b25_labelled() -> None:
    # Device labels without a GPU: every tensor on cuda:0, force_flush on cuda:1.
    args = {k: Labelled(v, 2, 0) if isinstance(v, torch.Tensor) else v for k, v in replayssm_args().items()}
    args["force_flush"] = Labelled(args["force_flush"].t, 2, 1)
    with pytest.raises(ValueError) as info:
        kparity.check(OP, **args)
    assert info.value.id == "b62325e96d849b25"


@pytest.mark.gpu
def test_force_flush_on_another_device_b62325e96d849b25_gpu() -> None:
    args = replayssm_args("cuda")
    args["force_flush"] = args["force_flush"].cpu()
    with pytest.raises(ValueError) as info:
        kparity.check(OP, **args)
    assert info.value.id == "b62325e96d849b25"
    assert str(info.value) == kparity.explain("b62325e96d849b25").message
