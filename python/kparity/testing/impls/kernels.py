"""kparity's own CUDA kernels (``kparity.kernel``) behind upstream's calling conventions: the
pattern for putting a kernel library that takes every buffer explicitly behind upstream's
signature, and a fast CUDA implementation for measuring the harness itself
(bench/fuzz/throughput.py)."""
from __future__ import annotations

from typing import Any, Callable


def kernels(op: str) -> Callable[..., Any]:
    """An implementation of ``op`` that launches ``kparity.kernel`` on the current stream: in-place
    ops return upstream's (out, initial_state); sparse attention returns out or (out, lse); the
    recurrence returns (o, final_state or None), final_state in fp32 as fla allocates it; kda/chunk
    returns chunk_kda's (o, final_state or None). Raises
    NotImplementedError where the kernels do (head dims, dtypes), which the fuzzer counts as
    unsupported."""
    import kparity

    if not kparity.has_kernels:
        raise RuntimeError("kparity.testing.impls.kernels: this kparity was built without its CUDA kernels")

    def impl(**kw: Any) -> Any:
        args = {k: v for k, v in kw.items() if v is not None}
        if op == "kda/recurrent":
            want_state = bool(args.pop("output_final_state", False))
            if want_state and "final_state" not in args:
                # fla allocates final_state in fp32 whatever initial_state's dtype (impls.recurrent
                # does too); left to kparity.kernel it would be allocated like initial_state, and a
                # bf16 state returned where upstream returns fp32 is rounded where upstream's is not
                # (issue 23 item 2: final_state 4.125 for 4.109375, one bf16 rounding).
                import torch

                q, v, cu = args["q"], args["v"], args.get("cu_seqlens")
                n = cu.shape[0] - 1 if cu is not None else 1
                args["final_state"] = torch.empty((n, v.shape[1], v.shape[2], q.shape[2]), dtype=torch.float32,
                                                  device=v.device)
            written = kparity.kernel(op, **args)
            return written["out"], (written["final_state"] if want_state else None)
        written = kparity.kernel(op, **args)
        if op == "kda/chunk":
            # chunk_kda returns (o, final_state), final_state only with output_final_state (kparity
            # writes it, allocated as upstream allocates it, only then). Without a build of the
            # chunked kernel (-DKPARITY_CHUNK_KERNEL=ON) the call above raises NotImplementedError.
            return written["out"], (written["final_state"] if args.get("output_final_state") else None)
        if op.startswith("sparse/"):
            return (written["out"], written["lse"]) if args.get("return_lse") else written["out"]
        return written["out"], written["initial_state"]

    impl.__name__ = impl.__qualname__ = "kparity_kernel_" + op.split("/")[1]
    return impl
