"""Helpers of the Python tests: catalog examples rebuilt as torch tensors, and a DLPack producer
that labels host memory as CUDA memory (so device checks run on machines without a GPU)."""
from __future__ import annotations

import ctypes
import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch

import kparity
from kparity import _kparity

REPO = Path(__file__).resolve().parents[2]

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
          "i64": torch.int64, "bool": torch.bool, "f64": torch.float64}


def has_cuda() -> bool:
    return torch.cuda.is_available() and torch.cuda.device_count() > 0


# --- a DLPack producer over host memory, labelled with any device -------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CAPSULE_NAME = ctypes.create_string_buffer(b"dltensor")  # the capsule keeps a pointer to its name

_DL_CODES = {torch.float32: (2, 32), torch.float16: (2, 16), torch.bfloat16: (4, 16), torch.int32: (0, 32),
             torch.int64: (0, 64), torch.float64: (2, 64), torch.uint8: (1, 8), torch.int8: (0, 8)}


class Labelled:
    """A host torch tensor exported through DLPack with another device label (CUDA type 2). Nothing
    may read it through that label: it stands for a device tensor whose metadata is all a check
    reads. ``cpu()`` gives the host tensor back (what kparity's staging uses for deep checks)."""

    def __init__(self, t: torch.Tensor, device_type: int = 2, device_id: int = 0, dtype_code: tuple[int, int] | None = None):
        self.t = t
        self.device = (device_type, device_id)
        self.dtype_code = dtype_code or _DL_CODES[t.dtype]
        self._keep: list[Any] = []

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        if "max_version" in kwargs:
            raise TypeError("unversioned DLPack only")
        t = self.t
        shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
        strides = (ctypes.c_int64 * max(t.dim(), 1))(*t.stride())
        m = _DLManagedTensor()
        m.dl_tensor.data = t.data_ptr()
        m.dl_tensor.device = _DLDevice(*self.device)
        m.dl_tensor.ndim = t.dim()
        m.dl_tensor.dtype = _DLDataType(self.dtype_code[0], self.dtype_code[1], 1)
        m.dl_tensor.shape = shape
        m.dl_tensor.strides = strides
        m.dl_tensor.byte_offset = 0
        m.deleter = None
        self._keep.append((shape, strides, m))
        return _PyCapsule_New(ctypes.addressof(m), ctypes.cast(_CAPSULE_NAME, ctypes.c_char_p), None)

    def cpu(self) -> torch.Tensor:
        return self.t

    @property
    def shape(self) -> torch.Size:
        return self.t.shape


def example_args(example: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A catalog example (fixture + overrides) as (op, keyword arguments, options), its tensors torch
    tensors with exactly the example's bytes, shapes, strides, storage offsets and devices."""
    d = _kparity._build_example(json.dumps(example))
    args: dict[str, Any] = {}
    storages: dict[int, torch.Tensor] = {}
    for name, spec in d["tensors"].items():
        # Own the bytes (the example goes away); aliases share their target's copy.
        if spec["storage_id"] not in storages:
            storages[spec["storage_id"]] = torch.from_dlpack(spec["storage"]).clone()
        raw = storages[spec["storage_id"]]
        dtype = DTYPES[spec["dtype"]]
        es = torch.empty((), dtype=dtype).element_size()
        assert spec["byte_offset"] % es == 0
        typed = raw.view(dtype) if raw.numel() else torch.empty(0, dtype=dtype)
        t = torch.as_strided(typed, tuple(spec["shape"]), tuple(spec["strides"]), spec["byte_offset"] // es)
        device = spec["device"]
        if device != "cpu":
            index = int(device.split(":")[1]) if ":" in device else 0
            if has_cuda() and index < torch.cuda.device_count():
                key = (spec["storage_id"], index)
                if key not in storages:
                    storages[key] = raw.to(f"cuda:{index}")  # type: ignore[index]
                dev = storages[key].view(dtype)  # type: ignore[index]
                t = torch.as_strided(dev, tuple(spec["shape"]), tuple(spec["strides"]), spec["byte_offset"] // es)
            else:
                t = Labelled(t, 2, index)
        args[name] = t
    args.update(d["scalars"])
    args.update(d["flags"])
    return d["op"], args, d["options"]


def kparity_cli() -> str | None:
    """The `kparity` executable: $KPARITY_CLI, else the build tree's, else PATH's."""
    env = os.environ.get("KPARITY_CLI")
    if env:
        return env
    for b in ("build", "build-cuda"):
        p = REPO / b / "cli" / "kparity"
        if p.exists():
            return str(p)
    return shutil.which("kparity")


def replayssm_args(device: str = "cpu", **dims: int) -> dict[str, Any]:
    """A small valid ReplaySSM decode call (B = 2, H = 1, HV = 2, K = V = 16, L = 4, 3 slots) with
    deterministic values, on `device`."""
    import sys

    sys.path.insert(0, str(REPO / "python" / "bench"))
    from replayssm_call import replayssm_call

    d = dict(B=2, H=1, HV=2, K=16, V=16, L=4, slots=3) | dims
    args = replayssm_call(torch, "cpu", **d)
    g = torch.Generator().manual_seed(7)
    for k, v in args.items():
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            v.copy_(0.5 * torch.randn(v.shape, generator=g))
    args["g_cache"].copy_(-0.1 * torch.rand(args["g_cache"].shape, generator=g))
    args["write_pos"].copy_(torch.tensor([1, 3], dtype=torch.int32)[: d["B"]])
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in args.items()}


def read_safetensors(path: str) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    import struct

    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    names = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I32": torch.int32,
             "I64": torch.int64, "BOOL": torch.bool, "F64": torch.float64}
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        lo, hi = v["data_offsets"]
        buf = bytearray(data[lo:hi])
        t = torch.frombuffer(buf, dtype=names[v["dtype"]]) if hi > lo else torch.empty(0, dtype=names[v["dtype"]])
        out[k] = t.reshape(v["shape"]).clone()
    return out


def bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bit patterns (exact comparison, NaN payloads and -0 included)."""
    t = t.detach().cpu().contiguous()
    if t.dtype in (torch.float32, torch.int32):
        return t.view(torch.int32)
    if t.dtype in (torch.float16, torch.bfloat16):
        return t.view(torch.int16)
    if t.dtype in (torch.float64, torch.int64):
        return t.view(torch.int64)
    return t
