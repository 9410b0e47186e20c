"""Bad input: a clear TypeError/ValueError naming the argument, never a crash or a silent copy."""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np
import pytest
import torch

import kparity
from kp_helpers import Labelled, replayssm_args

OP = "kda/replayssm_decode"


class Refuses:
    """A DLPack producer that refuses to export (as torch does for dtypes DLPack cannot express)."""

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise BufferError("float8_e4m3fn has no DLPack dtype")

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


class Unreachable(Labelled):
    """Device memory no framework here can copy (cuda:99), with no host copy of its own."""

    cpu = None  # type: ignore[assignment]

    def __init__(self, t: torch.Tensor) -> None:
        super().__init__(t, 2, 99)


def with_arg(name: str, value: Any) -> dict[str, Any]:
    args = replayssm_args()
    args[name] = value
    return args


CASES: dict[str, tuple[Callable[[], Any], type[BaseException], str]] = {
    "list for a tensor": (lambda: kparity.check(OP, **with_arg("g_cache", [1.0, 2.0])), TypeError,
                          r"argument `g_cache` must be a tensor .*got list"),
    "object without DLPack": (lambda: kparity.check(OP, **with_arg("b", object())), TypeError,
                              r"argument `b` must be a tensor"),
    "producer refuses to export": (lambda: kparity.check(OP, **with_arg("a", Refuses())), TypeError,
                                   r"argument `a` .*could not cross DLPack: BufferError: float8_e4m3fn"),
    "uint8 tensor": (lambda: kparity.check(OP, **with_arg("write_pos", torch.zeros(2, dtype=torch.uint8))),
                     TypeError, r"argument `write_pos` has dtype uint8"),
    "complex tensor": (lambda: kparity.check(OP, **with_arg("A_log", np.zeros(2, dtype=np.complex64))), TypeError,
                       r"argument `A_log` has dtype complex64"),
    "rank above 6": (lambda: kparity.check(OP, **with_arg("A_log", torch.zeros((1,) * 7))), TypeError,
                     r"argument `A_log` has 7 dimensions"),
    "unknown op": (lambda: kparity.check("kda/decode", **replayssm_args()), ValueError,
                   r"unknown op 'kda/decode' \(known: kda/recurrent"),
    "op not a str": (lambda: kparity.check(3, **replayssm_args()), TypeError, r"op must be a str"),
    "unknown argument": (lambda: kparity.check(OP, g_cahce=1, **replayssm_args()), TypeError,
                         r"unexpected keyword argument 'g_cahce' for kda/replayssm_decode"),
    "missing argument": (lambda: kparity.check(OP, **{k: v for k, v in replayssm_args().items() if k != "write_pos"}),
                         TypeError, r"missing required argument 'write_pos'"),
    "required None": (lambda: kparity.check(OP, **with_arg("d_cache", None)), TypeError,
                      r"argument 'd_cache' of kda/replayssm_decode is required, got None"),
    "tensor for a scalar": (lambda: kparity.check(OP, **with_arg("scale", torch.tensor(0.25))), TypeError,
                            r"argument `scale` must be a Python number, got a tensor"),
    "str for a scalar": (lambda: kparity.check(OP, **with_arg("lower_bound", "-5")), TypeError,
                         r"argument `lower_bound` must be a number, got str"),
    "bool for a scalar": (lambda: kparity.check(OP, **with_arg("scale", True)), TypeError,
                          r"argument `scale` must be a number, got bool"),
    "str for a flag": (lambda: kparity.check(OP, **with_arg("use_qk_l2norm_in_kernel", "yes")), TypeError,
                       r"argument `use_qk_l2norm_in_kernel` must be True or False, got str"),
    "bad entry": (lambda: kparity.check(OP, entry="gpu", **replayssm_args()), ValueError,
                  r'entry must be "kernel" or "reference"'),
    "non-bool option": (lambda: kparity.check(OP, deep="yes", **replayssm_args()), TypeError,
                        r"option `deep` must be True or False"),
    "positional arguments": (lambda: kparity.check(OP, *replayssm_args().values()), TypeError,
                             r"takes the op name as its only positional argument"),
    "too many positional (family)": (lambda: kparity.kda.replayssm_decode.check(*range(20)), TypeError,
                                     r"takes 16 positional arguments but 20 were given"),
    "argument twice (family)": (lambda: kparity.kda.replayssm_decode.check(1, mixed_qkv=1), TypeError,
                                r"got multiple values for argument 'mixed_qkv'"),
    "device tensor for the host reference": (
        lambda: kparity.reference(OP, **with_arg("g_cache", Unreachable(replayssm_args()["g_cache"]))),
        ValueError, r"argument `g_cache` is in device memory and kparity.reference reads host memory"),
    "device tensor for a dump": (
        lambda: kparity.dump("/nonexistent/x.safetensors", OP, **with_arg("b", Unreachable(replayssm_args()["b"]))),
        ValueError, r"argument `b` is in device memory and kparity.dump reads host memory"),
    "read-only output for the reference": (
        lambda: kparity.reference("kda/packed_decode", **_readonly_packed()), ValueError,
        r"argument `out` is read-only"),
    "explain of a number": (lambda: kparity.explain(7), TypeError, r"expected an id, slug, message or exception"),
    "negative search limit": (lambda: kparity.search("g_cache", limit=-1), ValueError, r"limit must be"),
    "unknown precision": (lambda: kparity.reference(OP, precision="fp16", **replayssm_args()), ValueError,
                          r'precision must be "oracle" or "faithful"'),
}


def _readonly_packed() -> dict[str, Any]:
    args = {k: v for k, v in replayssm_args().items()
            if k not in ("d_cache", "k_cache", "g_cache", "write_pos", "force_flush")}
    args = {k: v.float().numpy() if isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16 else
            v.numpy() if isinstance(v, torch.Tensor) else v for k, v in args.items()}
    args["out"].flags.writeable = False
    return args


@pytest.mark.parametrize("case", CASES)
def test_bad_input(case: str) -> None:
    call, exc, pattern = CASES[case]
    with pytest.raises(exc) as info:
        call()
    assert not isinstance(info.value, kparity.ContractError), "bad input is not a contract violation"
    assert re.search(pattern, str(info.value)), str(info.value)


def test_dtype_torch_cannot_export() -> None:
    # torch < 2.? refuses bool through DLPack; newer torch exports it and the contract names it.
    args = with_arg("write_pos", torch.zeros(2, dtype=torch.bool))
    with pytest.raises((TypeError, ValueError)) as info:
        kparity.check(OP, **args)
    assert "write_pos" in str(info.value) or getattr(info.value, "argument", "") == "write_pos"


def test_kernel_on_host_tensors() -> None:
    with pytest.raises((ValueError, RuntimeError)) as info:
        kparity.kernel(OP, **replayssm_args())
    assert "host memory" in str(info.value) or "without its CUDA kernels" in str(info.value)
