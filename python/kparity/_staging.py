"""Moving data between the caller's framework and kparity's host code. The C++ library never sees
PyTorch: device tensors are copied through their producer (torch's own copies, ordered on its
current stream), and results come back as DLPack arrays converted to the caller's framework."""
from __future__ import annotations

import sys
from typing import Any

_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13


def dlpack_device(obj: Any) -> tuple[int, int] | None:
    """(device type, index) of a DLPack producer, or None for anything else."""
    f = getattr(obj, "__dlpack_device__", None)
    if f is None:
        return None
    try:
        t, i = f()
        return int(t), int(i)
    except Exception:
        return None


def on_device(obj: Any) -> bool:
    d = dlpack_device(obj)
    return d is not None and d[0] in (_CUDA, _CUDA_MANAGED)


def _torch() -> Any:
    return sys.modules.get("torch")


def _as_torch(obj: Any, name: str, fn: str) -> Any:
    torch = _torch()
    if torch is not None and isinstance(obj, torch.Tensor):
        return obj
    try:
        import torch as torch_mod  # noqa: F811
    except ImportError:
        raise ValueError(
            f"{fn}: argument `{name}` is in device memory and {fn} reads host memory; "
            "kparity copies device tensors with PyTorch, which is not installed (pass host tensors)"
        ) from None
    try:
        return torch_mod.from_dlpack(obj)
    except Exception as e:
        raise ValueError(
            f"{fn}: argument `{name}` is in device memory and {fn} reads host memory, "
            f"but it could not be copied to the host ({type(e).__name__}: {e})"
        ) from None


def _span_copy(t: Any) -> Any:
    """A host tensor with t's shape and strides: the memory span t reaches, copied as one block, so
    layouts (padding, broadcast strides) stay exactly as the caller built them."""
    torch = _torch()
    if t.numel() == 0:
        return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype)
    span = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    block = t.detach().as_strided((span,), (1,)).to("cpu")
    return block.as_strided(tuple(t.shape), tuple(t.stride()), 0)


def host_copy(obj: Any, name: str, fn: str) -> Any:
    """A host copy of a device tensor with the same shape, strides and dtype."""
    torch = _torch()
    if torch is not None and isinstance(obj, torch.Tensor):
        return _span_copy(obj)
    cpu = getattr(obj, "cpu", None)  # producers with their own host copy (cupy arrays use .get())
    if callable(cpu):
        return cpu()
    get = getattr(obj, "get", None)
    if callable(get) and not isinstance(obj, dict):
        return get()
    return _span_copy(_as_torch(obj, name, fn))


def copy_back(dst: Any, host: Any, name: str, fn: str) -> None:
    """Writes the host result `host` into the caller's device tensor `dst`, element by element."""
    t = _as_torch(dst, name, fn)
    t.copy_(host)


def check_writable(obj: Any, name: str, fn: str) -> None:
    flags = getattr(obj, "flags", None)
    if flags is not None and getattr(flags, "writeable", True) is False:
        raise ValueError(f"{fn}: argument `{name}` is read-only, and the op writes it")


def to_framework(array: Any, like: Any) -> Any:
    """A host DLPack array (a result kparity allocated) in the framework of `like` (an argument of
    the same call): a torch tensor on like's device, a numpy array, or the array itself."""
    torch = _torch()
    if torch is not None and (like is None or isinstance(like, torch.Tensor) or on_device(like)):
        t = torch.from_dlpack(array)
        if like is not None and on_device(like):
            t = t.to(torch.device("cuda", dlpack_device(like)[1]))
        return t
    np = sys.modules.get("numpy")
    if np is not None and isinstance(like, np.ndarray):
        try:
            return np.from_dlpack(array)
        except (TypeError, BufferError, RuntimeError):
            pass  # bfloat16 has no numpy dtype
    return array


def current_stream(device: int) -> int | None:
    """The current torch stream of a device (None without torch: the legacy default stream)."""
    torch = _torch()
    if torch is None:
        return None
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device)
    return torch.cuda.current_stream(device).cuda_stream


def allocate_device(op: str, args: dict[str, Any]) -> dict[str, Any]:
    """The outputs upstream allocates itself (`out`, `lse`, `final_state`) that a kernel call lacks,
    as torch tensors on the call's device, shaped as kparity::ops allocates them."""
    from . import _kparity

    torch = _torch()
    like = next((v for v in args.values() if on_device(v)), None)
    specs = _kparity.missing_outputs(op, args)
    if not specs:
        return {}
    if torch is None or like is None:
        raise TypeError(f"kparity.kernel: pass {', '.join(specs)} (allocating them needs PyTorch and a CUDA argument)")
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
              "i64": torch.int64, "bool": torch.bool, "f64": torch.float64}
    device = torch.device("cuda", dlpack_device(like)[1])
    return {n: torch.empty(tuple(shape), dtype=dtypes[dt], device=device) for n, (shape, dt) in specs.items()}
