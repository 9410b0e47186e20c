"""kparity.dump / kparity.load, and kparity.guard: a failing call leaves a dump that `kparity run`
replays and that reproduces the failure."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import kparity
from kp_helpers import REPO, bits, kparity_cli, replayssm_args

OP = "kda/replayssm_decode"
CLI = kparity_cli()
needs_cli = pytest.mark.skipif(CLI is None, reason="skipped: no kparity executable (build the CLI or set KPARITY_CLI)")


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    assert CLI is not None
    return subprocess.run([CLI, *argv], capture_output=True, text=True)


def test_dump_load_round_trip(tmp_path: Path) -> None:
    args = replayssm_args()
    args["a"] = args["a"].reshape(2, 2, 16)  # a 3-D `a`, as upstream accepts
    path = tmp_path / "call.safetensors"
    kparity.dump(path, OP, expected={"out": torch.ones(2, 1, 2, 16, dtype=torch.bfloat16)}, **args)
    call = kparity.load(path)
    assert call.op == OP
    for k, v in args.items():
        if isinstance(v, torch.Tensor):
            assert torch.equal(bits(call.args[k]), bits(v)), k
        elif v is not None:
            assert call.args[k] == v, k
    assert "lower_bound" not in call.args  # None: absent
    assert set(call.expected) == {"out"}


def test_dump_of_strided_tensors_is_packed(tmp_path: Path) -> None:
    args = replayssm_args()
    padded = torch.zeros(3, 2, 16, 24)
    padded[..., :16] = args["initial_state"]
    args["initial_state"] = padded[..., :16]  # strided: padding after each row
    kparity.dump(tmp_path / "c.safetensors", OP, **args)
    assert torch.equal(kparity.load(tmp_path / "c.safetensors").args["initial_state"], args["initial_state"])


def fake_upstream(mixed_qkv: Any, a: Any, b: Any, A_log: Any, dt_bias: Any, scale: float, initial_state: Any,
                  d_cache: Any, k_cache: Any, g_cache: Any, out: Any, ssm_state_indices: Any, write_pos: Any,
                  force_flush: Any = None, use_qk_l2norm_in_kernel: bool = False, lower_bound: Any = None) -> Any:
    """Stands for the upstream op: updates state in place, then fails on a cursor past the ring the
    way an out-of-bounds kernel access would surface."""
    initial_state.add_(1.0)
    if int(write_pos.max()) >= d_cache.shape[2]:
        raise IndexError("index 9 is out of bounds for dimension 2 with size 4")
    return out


@needs_cli
def test_guard_contract_violation_dump_replays(tmp_path: Path) -> None:
    guarded = kparity.guard(OP, enabled=True, dump_dir=tmp_path)(fake_upstream)
    args = replayssm_args()
    args["g_cache"] = args["g_cache"].to(torch.bfloat16)
    with pytest.raises(ValueError) as info:
        guarded(*[args[n] for n in kparity.kda.replayssm_decode.row.positional[:13]],
                use_qk_l2norm_in_kernel=True)
    e = info.value
    assert e.id == "066bd06e9ab538bd"
    dumps = list(tmp_path.glob("*.safetensors"))
    assert len(dumps) == 1 and str(dumps[0]) in "\n".join(e.__notes__)
    r = run_cli("run", str(dumps[0]))
    assert r.returncode == 2 and "066bd06e9ab538bd" in r.stdout + r.stderr


@needs_cli
def test_guard_upstream_failure_dump_has_inputs_before_the_call(tmp_path: Path) -> None:
    guarded = kparity.guard(OP, enabled=True, dump_dir=tmp_path)(fake_upstream)
    args = replayssm_args()
    args["write_pos"] = torch.tensor([1, 9], dtype=torch.int32)
    state0 = args["initial_state"].clone()
    with pytest.raises(IndexError) as info:  # upstream's own exception, re-raised as it was
        guarded(**args)
    assert not torch.equal(args["initial_state"], state0)  # the call had updated it
    (dump,) = tmp_path.glob("*.safetensors")
    assert getattr(info.value, "kparity_dump") == str(dump)
    call = kparity.load(dump)
    assert torch.equal(call.args["initial_state"], state0)  # the dump holds the state before the call
    # kparity run checks every kparity check, the deep ones included: it names the cause.
    r = run_cli("run", str(dump))
    assert r.returncode == 2 and kparity.explain("kda-write-pos-out-of-range").id in r.stdout + r.stderr


def test_guard_attaches_the_id_to_an_upstream_exception(tmp_path: Path) -> None:
    def upstream(**kw: Any) -> None:
        raise ValueError("`g_cache` must have dtype torch.float32.")

    with pytest.raises(ValueError) as info:
        with kparity.guard(OP, enabled=True, dump_dir=tmp_path, **replayssm_args()):
            upstream()
    assert info.value.kparity_id == "066bd06e9ab538bd"
    assert any("066bd06e9ab538bd" in n for n in info.value.__notes__)


def test_guard_off_returns_the_function() -> None:
    assert kparity.guard(OP, enabled=False)(fake_upstream) is fake_upstream
    if not os.environ.get("KPARITY_GUARD"):
        assert kparity.guard(OP)(fake_upstream) is fake_upstream


def test_guard_environment_variable(tmp_path: Path) -> None:
    code = (
        "import kparity, sys\n"
        "g = kparity.guard('kda/replayssm_decode')\n"
        "print(g.enabled, g.extra, g.deep)\n"
    )
    env = dict(os.environ, KPARITY_GUARD="1,extra")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.stdout.split() == ["True", "True", "False"], r.stderr
    env["KPARITY_GUARD"] = "0"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.stdout.split() == ["False", "False", "False"], r.stderr
