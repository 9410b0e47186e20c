"""kparity.judge: the differential rule on one call, in-process. The faithful reference's results
pass; a result moved far outside the rule fails and names its tensor; a NaN where the references are
finite fails as a class mismatch; the profile is an argument; bad input raises."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

import kparity
from kp_helpers import REPO, replayssm_args

CORPUS = sorted((REPO / "fuzz" / "corpus").glob("*.safetensors"))


def _clone(args: dict) -> dict:
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in args.items()}


def _run(op: str, args: dict, precision: str = "faithful") -> dict:
    """The call's written tensors after the reference ran on a copy of `args` (an implementation's outputs)."""
    return kparity.reference(op, precision=precision, **_clone(args))


@pytest.mark.parametrize("dump", CORPUS, ids=lambda p: p.stem)
def test_faithful_results_pass_and_moved_ones_fail(dump: Path) -> None:
    call = kparity.load(dump)
    before = _clone(call.args)
    outputs = _run(call.op, call.args)
    v = kparity.judge(call.op, before, outputs)
    assert v.passed and bool(v), v.detail
    assert set(v.tensors) == set(outputs)
    for t in v.tensors.values():
        assert t.passed and not t.mismatch and t.ratio <= 1.0, t
        assert t.bound >= t.floor > 0.0
    # One written tensor with a finite value moved far outside any bound of these calls (a ring the
    # call leaves as it was can hold only the NaN the fuzzer stored past its cursor: nothing to move).
    name = next(n for n in sorted(outputs) if torch.isfinite(outputs[n].double()).any())
    moved = dict(outputs)
    moved[name] = outputs[name].double().mul(2).add(1e35).to(outputs[name].dtype)
    bad = kparity.judge(call.op, before, moved)
    assert not bad.passed and not bad.tensors[name].passed
    assert bad.detail.startswith(name + ":"), bad.detail


def test_an_unwritten_output_is_a_class_mismatch() -> None:
    args = replayssm_args()
    before = _clone(args)
    outputs = _run("kda/replayssm_decode", args)
    outputs["out"] = torch.full_like(outputs["out"], float("nan"))
    v = kparity.judge("kda/replayssm_decode", before, outputs)
    assert not v.passed
    assert v.tensors["out"].mismatch and "class mismatch" in v.tensors["out"].worst
    assert all(t.passed for n, t in v.tensors.items() if n != "out")


def test_the_profile_is_an_argument() -> None:
    args = replayssm_args()
    before = _clone(args)
    outputs = _run("kda/replayssm_decode", args)
    for profile in (None, "faithful", "tf32-dot", "sglang-triton", "fla-chunk"):
        assert kparity.judge("kda/replayssm_decode", before, outputs, profile=profile).passed, profile
    with pytest.raises(ValueError, match="profile must be"):
        kparity.judge("kda/replayssm_decode", before, outputs, profile="fp8")


def test_bad_input_raises() -> None:
    args = replayssm_args()
    before = _clone(args)
    outputs = _run("kda/replayssm_decode", args)
    with pytest.raises(ValueError, match="outputs lacks `out`"):
        kparity.judge("kda/replayssm_decode", before, {k: v for k, v in outputs.items() if k != "out"})
    with pytest.raises(ValueError, match="writes no tensor `q`"):
        kparity.judge("kda/replayssm_decode", before, {**outputs, "q": outputs["out"]})
    with pytest.raises(ValueError):
        kparity.judge("kda/no_such_op", before, outputs)
    broken = _clone(before)
    broken["write_pos"] = torch.tensor([1, 9], dtype=torch.int32)  # cursor past the ring
    with pytest.raises(kparity.ContractError) as info:
        kparity.judge("kda/replayssm_decode", broken, outputs)
    assert info.value.slug == "kda-write-pos-out-of-range"
