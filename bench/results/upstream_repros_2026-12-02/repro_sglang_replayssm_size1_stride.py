"""Repro (minor): sglang's Triton ReplaySSM decode rejects a state pool that is contiguous in its
[HV, V, K] inner dimensions when HV == 1 and that size-1 dimension carries an unusual stride.

sgl-project/sglang @ 03a70bf3, python/sglang/kernels/ops/attention/fla/fused_recurrent_linear_replayssm.py,
fused_recurrent_linear_replayssm_decode, lines 660-664:
    if initial_state.stride()[1:] != (V * K, K, 1):
        raise ValueError("`initial_state` must be contiguous in its [HV, V, K] inner dimensions; ...")
A size-1 dimension's stride is never used for addressing (its index is always 0; the kernel adds
i_hv * V * K with i_hv = 0), and PyTorch counts such a tensor as contiguous (is_contiguous() is True).
Such strides arise from permuted or sliced pools, e.g. a [HV, slots, V, K] pool viewed as
[slots, HV, V, K]. `.contiguous()` does not help: it returns the tensor itself. The same literal
stride comparison would reject V == 1 with an odd stride.
Expected: accepted (or compare strides only where the size is > 1). Seen: ValueError.

    python repro_sglang_replayssm_size1_stride.py [--sglang-src PATH]

Raises before any kernel launch. Needs torch, triton and sglang. Imports the installed sglang module,
or from PATH (also SGLANG_SRC=PATH): an sglang checkout (its python/ folder on sys.path), or the file
fused_recurrent_linear_replayssm.py itself (it imports only torch and triton). Prints PASS/FAIL;
exit 1 on FAIL.
"""
from __future__ import annotations

import importlib.util
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


def main() -> int:
    mod, path = load()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"replayssm from {path}; device {dev}")
    B, H, HV, K, V, L, S = 1, 1, 1, 32, 32, 2, 3
    bf = torch.bfloat16
    pool = torch.zeros(HV, S, V, K, device=dev)  # [HV, slots, V, K] ...
    state = pool.permute(1, 0, 2, 3)  # ... viewed as [slots, HV, V, K]
    print(f"initial_state shape {list(state.shape)} stride {list(state.stride())} "
          f"is_contiguous() {state.is_contiguous()} .contiguous() is itself: {state.contiguous() is state}")
    args = dict(
        mixed_qkv=torch.randn(B, 2 * H * K + HV * V, device=dev).to(bf),
        a=torch.randn(B, HV, K, device=dev).to(bf), b=torch.randn(B, HV, device=dev).to(bf),
        A_log=torch.zeros(HV, device=dev), dt_bias=torch.zeros(HV, K, device=dev), scale=K ** -0.5,
        initial_state=state, d_cache=torch.zeros(S, HV, L, V, device=dev), k_cache=torch.zeros(S, H, L, K, device=dev),
        g_cache=torch.zeros(S, HV, L, K, device=dev), out=torch.zeros(B, 1, HV, V, device=dev, dtype=bf),
        ssm_state_indices=torch.zeros(B, dtype=torch.int32, device=dev),
        write_pos=torch.zeros(B, dtype=torch.int32, device=dev), is_kda=True)
    try:
        mod.fused_recurrent_linear_replayssm_decode(**args)
        if dev == "cuda":
            torch.cuda.synchronize()
        print("[PASS] accepted")
        return 0
    except ValueError as e:
        print(f"[FAIL] ValueError: {e}")
        return 1
    except Exception as e:  # noqa: BLE001  (past the check: e.g. no GPU for the launch)
        print(f"[PASS] the layout check accepted it ({type(e).__name__} later: {e})")
        return 0


if __name__ == "__main__":
    sys.exit(main())
