"""Repro: sglang's Triton ReplaySSM decode (KDA) turns a gate of -inf into NaN when the ring entry
holding it is replayed, and the NaN then enters the checkpoint state for good.

sgl-project/sglang @ 03a70bf3, python/sglang/kernels/ops/attention/fla/fused_recurrent_linear_replayssm.py,
is_kda=True, no lower_bound:
  * lines 363-368: g = -exp(A_log) * softplus(a + dt_bias). An input a = +inf (an overflowed
    activation) gives softplus = inf and g = -inf: decay 0, a finite output, and g = -inf is stored in
    the g ring (correct so far).
  * lines 330-331, 343-346: the next step rebuilds the state from the ring with the suffix decays
    W_i = exp(g_total - g_prefix_i), where g_prefix is an inclusive cumsum. After a -inf entry both
    g_total and g_prefix_i are -inf, and -inf - (-inf) = NaN. The decay W_i is exp of the sum of the
    gates after entry i, which is finite (0 for the entries before the -inf, a finite value for the
    entry itself and later ones), and fla's fused_recurrent_kda keeps the same decay finite.
  * At the next flush the NaN state is folded into the checkpoint (initial_state), and every later
    step of that slot reads NaN.
Expected: finite outputs and state. Seen: NaN in the value heads whose ring holds the -inf gate.
A fix: form W_i from exclusive suffix sums (accumulate from the newest entry backwards), or use
exp(g_total - g_prefix_i) only where g_prefix_i > -inf and 0 or the suffix sum elsewhere.
With lower_bound the gate is lower_bound * sigmoid(...), finite, and the problem does not arise.

    python repro_sglang_replayssm_neginf_gate_replay.py [--sglang-src PATH]

Needs torch, triton and sglang on a CUDA machine. Imports the installed sglang module, or from PATH
(also SGLANG_SRC=PATH): an sglang checkout (its python/ folder on sys.path), or the file
fused_recurrent_linear_replayssm.py itself (it imports only torch and triton). Prints PASS/FAIL per
step; exit 1 when any fails.
"""
from __future__ import annotations

import importlib.util
import math
import os
import sys

import torch


def _sglang_src() -> str | None:
    if "--sglang-src" in sys.argv:
        return sys.argv[sys.argv.index("--sglang-src") + 1]
    return os.environ.get("SGLANG_SRC")


def load():
    src = _sglang_src()
    if src and os.path.isfile(src):  # the kernel file alone
        spec = importlib.util.spec_from_file_location("fused_recurrent_linear_replayssm", src)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod, src
    if src:  # a checkout
        root = os.path.abspath(src)
        sys.path.insert(0, os.path.join(root, "python") if os.path.isdir(os.path.join(root, "python")) else root)
    from sglang.kernels.ops.attention.fla import fused_recurrent_linear_replayssm as m  # type: ignore
    return m, m.__file__


B, H, HV, K, V, L, S = 2, 2, 4, 32, 32, 4, 3  # two value heads per q/k head, ring length 4, 3 slots


def inputs(dev: str) -> dict:
    g = torch.Generator().manual_seed(0)
    bf = torch.bfloat16
    x = {"mixed_qkv": torch.randn(B, 2 * H * K + HV * V, generator=g).to(bf),
         "a": (torch.randn(B, HV, K, generator=g) * 0.5).to(bf),
         "b": torch.randn(B, HV, generator=g).to(bf),
         "A_log": (torch.randn(HV, generator=g) * 0.3).float(),
         "dt_bias": (torch.randn(HV, K, generator=g) * 0.1).float(),
         "initial_state": (torch.randn(S, HV, V, K, generator=g) * 0.05).float(),
         "d_cache": (torch.randn(S, HV, L, V, generator=g) * 0.05).float(),
         "k_cache": torch.nn.functional.normalize(torch.randn(S, H, L, K, generator=g), dim=-1).float(),
         "g_cache": (-torch.rand(S, HV, L, K, generator=g) * 0.1).float(),
         "out": torch.zeros(B, 1, HV, V, dtype=bf),
         "ssm_state_indices": torch.tensor([2, 0], dtype=torch.int32),  # row 0 -> slot 2, row 1 -> slot 0
         "write_pos": torch.tensor([1, 2], dtype=torch.int32)}
    x = {n: t.to(dev) for n, t in x.items()}
    x["scale"] = K ** -0.5
    return x


def step(mod, x: dict, cursors: list[int]) -> None:
    x["write_pos"] = torch.tensor(cursors, dtype=torch.int32, device=x["out"].device)
    mod.fused_recurrent_linear_replayssm_decode(**x, use_qk_l2norm_in_kernel=True, is_kda=True)
    torch.cuda.synchronize()


def nan_count(t: torch.Tensor) -> str:
    return f"{int(torch.isnan(t.float()).sum())} NaN of {t.numel()}"


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA device")
        return 2
    mod, path = load()
    print(f"replayssm from {path}; {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    x = inputs("cuda")
    results = []

    # Step 1: a = +inf in value head 0, channel 3 of row 0: decay 0 this step, g = -inf stored at
    # ring position 1 of slot 2. Upstream is right here.
    x["a"][0, 0, 3] = math.inf
    step(mod, x, [1, 2])
    ok = bool(torch.isfinite(x["out"].float()).all())
    results.append(ok)
    print(f"[{'PASS' if ok else 'FAIL'}] step 1 (a=+inf): out finite; stored g_cache[2, 0, 1, 3] = "
          f"{float(x['g_cache'][2, 0, 1, 3])}")

    # Step 2: an ordinary token; row 0 (cursor 2) replays ring positions 0 and 1.
    x["a"][0, 0, 3] = 0.0
    step(mod, x, [2, 3])
    ok = bool(torch.isfinite(x["out"].float()).all())
    results.append(ok)
    print(f"[{'PASS' if ok else 'FAIL'}] step 2 (replays the -inf gate): expected finite out; "
          f"out[0, 0, hv=0] {nan_count(x['out'][0, 0, 0])}, out[0, 0, hv=1] {nan_count(x['out'][0, 0, 1])}")

    # Step 3: row 0 reaches cursor L-1 and flushes: the rebuilt state becomes slot 2's checkpoint.
    step(mod, x, [3, 0])
    ok = bool(torch.isfinite(x["initial_state"][2]).all())
    results.append(ok)
    print(f"[{'PASS' if ok else 'FAIL'}] step 3 (flush): expected a finite checkpoint; "
          f"initial_state[slot 2] {nan_count(x['initial_state'][2])}")

    # Step 4: the ring restarts at cursor 0 and reads only the checkpoint.
    step(mod, x, [0, 1])
    ok = bool(torch.isfinite(x["out"].float()).all())
    results.append(ok)
    print(f"[{'PASS' if ok else 'FAIL'}] step 4 (after the flush): expected finite out; "
          f"out[0] {nan_count(x['out'][0])}")

    bad = results.count(False)
    print(f"{'FAIL' if bad else 'PASS'}: {bad} of {len(results)} steps wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
