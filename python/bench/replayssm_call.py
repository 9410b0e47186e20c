"""The 13-tensor ReplaySSM decode call of the performance measurements: issue 5's decode shapes
(B = 256, H = HV = 32, K = V = 128, L = 16, 256 state slots, fp32 state, bf16 activations and rings)."""
from __future__ import annotations

from typing import Any


def replayssm_call(torch: Any, device: str = "cpu", B: int = 256, H: int = 32, HV: int = 32, K: int = 128,
                   V: int = 128, L: int = 16, slots: int = 256) -> dict[str, Any]:
    bf16, f32, i32 = torch.bfloat16, torch.float32, torch.int32
    e = lambda *shape, dtype: torch.empty(shape, dtype=dtype, device=device)  # noqa: E731 (never read)
    return dict(
        mixed_qkv=e(B, 2 * H * K + HV * V, dtype=bf16),
        a=e(B, HV * K, dtype=bf16),
        b=e(B, HV, dtype=bf16),
        A_log=e(HV, dtype=f32),
        dt_bias=e(HV * K, dtype=f32),
        scale=K ** -0.5,
        initial_state=e(slots, HV, V, K, dtype=f32),
        d_cache=e(slots, HV, L, V, dtype=bf16),
        k_cache=e(slots, H, L, K, dtype=bf16),
        g_cache=e(slots, HV, L, K, dtype=f32),
        out=e(B, 1, HV, V, dtype=bf16),
        ssm_state_indices=torch.arange(B, dtype=i32, device=device),
        write_pos=torch.zeros(B, dtype=i32, device=device),
        force_flush=torch.zeros(B, dtype=i32, device=device),
        use_qk_l2norm_in_kernel=True,
        lower_bound=None,
    )
