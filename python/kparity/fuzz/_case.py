"""One case of a campaign on the Python side: the call's tensors materialised as torch tensors on
the device inside guard bands (the images kparity-fuzz-host sends), the implementation called with
upstream's keyword arguments under a time limit, its outcome classified, the images after the call
and its returned outputs sent back. The host checks the images (guard bands, inputs, padding) and
judges the values with the C++ differential rule; this module only reports what the Python call
itself did."""
from __future__ import annotations

import queue
import threading
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from .._ops_table import REQUIRED, OpRow

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
           "i64": torch.int64, "bool": torch.bool, "f64": torch.float64}
DTYPES = _DTYPES  # kparity's dtype names -> torch dtypes (also for _domain.CallInfo)
# Float dtypes by what they hold: each holds every value of a lower rank (fp16 and bf16 share a rank
# and hold neither one the other).
_WIDTH = {torch.float64: 3, torch.float32: 2, torch.float16: 1, torch.bfloat16: 1}
_NAMES = {v: k for k, v in _DTYPES.items()}
# Where each image starts in the one buffer a case's tensors share: as aligned as a fresh
# allocation of torch's caching allocator, so kernels that assume aligned base pointers see them.
_ALIGN = 512


def _raw_bytes(t: torch.Tensor) -> bytes:
    """The bytes of a contiguous host tensor (numpy has no bfloat16: read them as integers)."""
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.view(width).numpy().tobytes()
# Exception classes upstream's input checks raise (and `assert`, which kernels use for checks): an
# implementation raising one of them refused the call; anything else is a crash.
_REJECTIONS = (ValueError, RuntimeError, TypeError, IndexError, AssertionError)
# Abandoned (timed-out) calls allowed in one campaign before later cases are skipped.
MAX_TIMEOUTS = 4
_UPSTREAM_CLASSES = ("ValueError", "RuntimeError", "IndexError", "TypeError", "NotImplementedError", "AssertionError")


def upstream_class(e: BaseException) -> str:
    """The builtin class of e that upstream would name (kparity's ContractValueError -> ValueError)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins" and cls.__name__ in _UPSTREAM_CLASSES:
            return cls.__name__
    return type(e).__name__


def _cuda_error(e: BaseException) -> bool:
    text = str(e)
    return "CUDA error" in text or "cudaError" in text or "CUBLAS_STATUS" in text or "device-side assert" in text


class Case:
    """One case as kparity-fuzz-host sent it: tensor metadata, images, scalars and flags; collects
    the answer (images after the call, returned outputs)."""

    def __init__(self, header: dict[str, Any], payload: memoryview) -> None:
        self.op: str = header["op"]
        self.description: str = header.get("description", "")
        self.scalars = {k: float(v) for k, v in header["scalars"].items()}
        self.flags: dict[str, bool] = header["flags"]
        self._meta = {t["name"]: t for t in header["tensors"]}
        self._payload = payload
        digest = hashlib.sha1(json.dumps(header, sort_keys=True).encode())
        digest.update(payload)
        self.key = digest.hexdigest()  # the call's content
        self.after: list[tuple[str, bytes]] = []
        self.outputs: list[tuple[str, str, tuple[int, ...], bytes]] = []

    def names(self) -> list[str]:
        return list(self._meta)

    def meta(self, name: str) -> dict[str, Any]:
        return self._meta[name]

    def image(self, name: str) -> torch.Tensor:
        """A fresh, writable host copy of the tensor's guarded image (uint8)."""
        m = self._meta[name]
        return torch.frombuffer(bytearray(self._payload[m["offset"]: m["offset"] + m["size"]]), dtype=torch.uint8)

    def layout(self) -> tuple[dict[str, int], int]:
        """Where each passed tensor's image goes in one buffer for the whole case (aligned starts),
        and the buffer's size."""
        at, end = {}, 0
        for name, m in self._meta.items():
            if m["passed"]:
                at[name] = end
                end += -(-m["size"] // _ALIGN) * _ALIGN
        return at, max(end, 1)

    def shape_class(self) -> tuple:
        """What a JIT compiler (Triton) specialises on, roughly: dtypes, the sizes past the leading
        dim, contiguity and flags. The first call of each class may compile and autotune."""
        parts = tuple((n, m["dtype"], tuple(m["shape"][1:]), m["strides"][-1:] == [1] if m["strides"] else True)
                      for n, m in sorted(self._meta.items()) if m["passed"])
        return parts + tuple(sorted(self.flags.items()))

    def answer(self, verdict: tuple[str, ...] | None, bad_return: str | None = None) -> tuple[dict[str, Any], bytes]:
        payload = bytearray()
        images, outputs = [], []
        for name, data in self.after:
            images.append({"name": name, "offset": len(payload), "size": len(data)})
            payload += data
        for name, dtype, shape, data in self.outputs:
            outputs.append({"name": name, "dtype": dtype, "shape": list(shape), "offset": len(payload), "size": len(data)})
            payload += data
        return ({"type": "result", "verdict": list(verdict) if verdict else None, "images": images,
                 "outputs": outputs, "bad_return": bad_return}, bytes(payload))



def returned_outputs(row: OpRow) -> tuple[str, ...]:
    """Outputs upstream allocates and returns (keyword-only written tensors of the op table)."""
    return tuple(p.name for p in row.params if p.keyword_only and p.name in row.written)


@dataclass
class CaseRunner:
    """Calls `impl` for kparity-fuzz-host, one case per run()."""
    row: OpRow
    impl: Callable[..., Any]
    device: torch.device
    accepted: frozenset[str] | None  # parameter names impl takes; None: it takes **kwargs
    case_timeout: float | None
    _worker: _Worker | None = None
    _dead: str | None = None  # why later cases are skipped (hung calls, an unusable device)
    _returns: tuple[str, ...] = field(default=())
    # Calls that timed out, by content: RapidCheck re-runs the shrunk counterexample last, and that
    # re-run must report the same verdict without waiting (or hanging) again.
    _timed_out: dict[str, str] = field(default_factory=dict)
    # The first call of a shape class (Case.shape_class) gets this limit instead of case_timeout: a
    # JIT-compiled kernel compiles (and may autotune) there. None: case_timeout for every call.
    first_call_timeout: float | None = None
    _classes_seen: set[tuple] = field(default_factory=set)
    _staging: torch.Tensor | None = None  # pinned host memory for one copy per case to the device

    def __post_init__(self) -> None:
        self._returns = returned_outputs(self.row)

    # -- materialising -----------------------------------------------------------------------

    def _materialise(self, handle: Case) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], torch.Tensor]:
        """Every passed tensor's guarded image (guard band, memory span, guard band) in one buffer
        on the device, placed with one host copy and one transfer (the per-tensor copies and their
        synchronisations were most of a fast kernel's case), and views of it."""
        at, size = handle.layout()
        host = self._host_buffer(size)
        flat = host.numpy()
        for name, start in at.items():
            m = handle.meta(name)
            flat[start:start + m["size"]] = np.frombuffer(handle._payload, dtype=np.uint8, count=m["size"],
                                                          offset=m["offset"])
        if self.device.type == "cpu":
            whole = host
        else:
            whole = torch.empty(size, dtype=torch.uint8, device=self.device)
            whole.copy_(host[:size], non_blocking=True)  # ordered before the call on the current stream
        tensors, buffers = {}, {}
        for name, start in at.items():
            meta = handle.meta(name)
            buf = whole[start:start + meta["size"]]
            dtype = _DTYPES[meta["dtype"]]
            es = torch.empty((), dtype=dtype).element_size()
            base = whole[start:]  # views of the shared buffer start at the image, element-aligned
            typed = base[: (len(base) // es) * es].view(dtype)
            tensors[name] = typed.as_strided(meta["shape"], meta["strides"], typed.storage_offset() + meta["zero_offset"] // es)
            buffers[name] = buf
        return tensors, buffers, whole

    def _host_buffer(self, size: int) -> torch.Tensor:
        if self.device.type == "cpu":
            return torch.empty(size, dtype=torch.uint8)
        if self._staging is None or self._staging.numel() < size:
            self._staging = torch.empty(max(size, 1 << 20), dtype=torch.uint8, pin_memory=True)
        return self._staging[:size]

    def _kwargs(self, handle: Case, tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
        scalars, flags, names = handle.scalars, handle.flags, set(handle.names())
        kwargs: dict[str, Any] = {}
        for p in self.row.params:
            if p.name in self._returns or (self.accepted is not None and p.name not in self.accepted):
                continue
            if p.kind == "tensor":
                kwargs[p.name] = tensors.get(p.name)
            elif p.kind == "scalar":
                default = None if p.default is REQUIRED else p.default
                value = scalars.get(p.name, default)
                # The host sends every scalar as a float; one whose upstream default is an int
                # (chunk_kda's chunk_size) goes as an int: fla calls chunk_size.bit_length().
                if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float) \
                        and value.is_integer():
                    value = int(value)
                kwargs[p.name] = value
            elif p.name in flags or p.default is not None:
                kwargs[p.name] = bool(flags.get(p.name, False if p.default is REQUIRED else p.default))
            # else a keyword whose absence means something (chunk_kda's deprecated
            # transpose_state_layout, default None): left out unless the call sets it
        if self.row.op == "kda/recurrent" and "output_final_state" in kwargs:
            kwargs["output_final_state"] = "final_state" in names  # written whenever the tensor is passed
        return kwargs

    # -- calling -----------------------------------------------------------------------------

    def _call(self, kwargs: dict[str, Any], shape_class: tuple = ()) -> Any:
        if self.case_timeout is None:
            return self.impl(**kwargs)
        if self._worker is None:
            self._worker = _Worker()
        limit = self.case_timeout
        if self.first_call_timeout is not None and shape_class not in self._classes_seen:
            limit = max(limit, self.first_call_timeout)
        try:
            return self._worker.call(self._on_worker, kwargs, limit)
        except _TimedOut:
            # A Python thread cannot be stopped: abandon it (a daemon thread, with its tensors) and call
            # the next case on a fresh worker, so shrinking can look for a smaller hanging call. After
            # MAX_TIMEOUTS abandoned calls (each may hold a core or the GIL) later cases are skipped.
            self._worker.close()  # ends it if the call ever returns
            self._worker = None
            if len(self._timed_out) + 1 >= MAX_TIMEOUTS:
                self._dead = f"{MAX_TIMEOUTS} calls never returned (time limit {self.case_timeout} s)"
            raise

    def _on_worker(self, kwargs: dict[str, Any]) -> Any:
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        return self.impl(**kwargs)

    def _settle(self) -> str | None:
        """Waits for the device; None, or why it is unusable."""
        if self.device.type != "cuda":
            return None
        try:
            torch.cuda.synchronize(self.device)
            probe = torch.full((16,), 7, dtype=torch.int32, device=self.device)
            if int((probe + 1).sum().item()) != 128:
                return "a probe computation on the device returned a wrong value"
        except Exception as e:  # noqa: BLE001  (any failure here means the device is unusable)
            return f"{type(e).__name__}: {e}"
        return None

    # -- the callback --------------------------------------------------------------------------

    def run(self, case: Case) -> tuple[dict[str, Any], bytes]:
        """Runs one case; returns the answer for kparity-fuzz-host."""
        verdict, bad = self._run(case)
        return case.answer(verdict, bad)

    def _run(self, handle: Case) -> tuple[tuple[str, ...] | None, str | None]:
        if handle.key in self._timed_out:
            return ("timed-out", self._timed_out[handle.key]), None
        if self._dead:
            return ("unsupported", self._dead), None
        tensors, buffers, whole = self._materialise(handle)
        kwargs = self._kwargs(handle, tensors)
        raised: BaseException | None = None
        result: Any = None
        shape_class = handle.shape_class()
        try:
            result = self._call(kwargs, shape_class)
            self._classes_seen.add(shape_class)
        except _TimedOut:
            self._staging = None  # the abandoned call's transfer may still read it
            message = f"no answer within {self.case_timeout} s (the call is abandoned on its thread)"
            self._timed_out[handle.key] = message
            return ("timed-out", message), None
        except NotImplementedError as e:
            unusable = self._settle()
            if unusable:
                return self._device_lost(unusable, e), None
            return ("unsupported", f"NotImplementedError: {e}"), None
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001  (every exception of the implementation is a verdict)
            raised = e
            self._classes_seen.add(shape_class)
        if raised is not None:
            unusable = self._settle()
            if unusable:
                return self._device_lost(unusable, raised), None
            if isinstance(raised, _REJECTIONS) and not _cuda_error(raised):
                return ("rejected-valid-call", f"raised {type(raised).__name__} where upstream accepts the call: {raised}",
                        str(raised), upstream_class(raised)), None
            return ("crashed", f"raised {type(raised).__qualname__}: {raised}", str(raised), upstream_class(raised)), None
        # One transfer back for every image; it waits for the call's kernels, and a kernel that
        # broke the device makes it raise (then the probe says whether the device is still usable).
        try:
            if whole.device.type == "cpu":
                back = whole
            else:
                torch.cuda.synchronize(self.device)  # kernels the implementation put on other streams too
                back = whole.to("cpu")
        except Exception as e:  # noqa: BLE001  (a CUDA error surfacing at the synchronisation)
            return self._device_lost(self._settle() or f"{type(e).__name__}: {e}", None), None
        flat = back.numpy()
        at, _ = handle.layout()
        for name, buf in buffers.items():
            start = at[name]
            handle.after.append((name, flat[start:start + buf.numel()].tobytes()))
        try:
            return None, self._take_returns(handle, result, tensors)
        except Exception as e:  # noqa: BLE001  (reading a returned output back hit a device error)
            return self._device_lost(self._settle() or f"{type(e).__name__}: {e}", None), None

    def _device_lost(self, why: str, raised: BaseException | None) -> tuple[str, ...]:
        self._dead = f"the device became unusable in an earlier case ({why})"
        cause = f" after raising {type(raised).__name__}: {raised}" if raised is not None else ""
        return ("crashed", f"the CUDA device is unusable after the call{cause}: {why}; later cases are skipped")

    # -- returned values -------------------------------------------------------------------------

    def _take_returns(self, handle: Case, result: Any, passed: dict[str, torch.Tensor]) -> str | None:
        """None when the return value follows upstream's convention (the outputs it returns join
        the answer), else what is wrong with it."""
        names = set(handle.names())
        if not self._returns:  # in-place ops return the caller's buffers, or nothing
            return self._check_aliases(result, passed)
        wanted = [n for n in self._returns if n in names]
        if self.row.op == "kda/recurrent":
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                return f"returned {_describe(result)}; upstream returns (o, final_state)"
            values = {"out": result[0], "final_state": result[1]}
        elif self.row.op == "kda/chunk":
            # chunk_kda returns (o, final_state), or (o, final_state, h) with return_intermediate_states
            # (h: intermediate states kparity does not model).
            if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
                return f"returned {_describe(result)}; upstream returns (o, final_state)"
            values = {"out": result[0], "final_state": result[1]}
        elif "lse" in wanted:
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                return f"returned {_describe(result)}; with return_lse=True upstream returns (out, lse)"
            values = {"out": result[0], "lse": result[1]}
        else:
            values = {"out": result}
        for name in wanted:
            value = values.get(name)
            meta = handle.meta(name)
            if not isinstance(value, torch.Tensor):
                return f"returned {_describe(value)} for `{name}`; upstream returns a tensor of shape {meta['shape']}"
            problem = self._check_output(name, value, meta)
            if problem:
                return problem
            host = value.detach().to("cpu").contiguous()
            handle.outputs.append((name, _NAMES[host.dtype], tuple(host.shape), _raw_bytes(host)))
        return None

    def _check_output(self, name: str, value: torch.Tensor, meta: dict[str, Any]) -> str | None:
        if value.device != self.device and not (value.device.type == self.device.type == "cpu"):
            return f"returned `{name}` on {value.device}, expected {self.device}"
        if tuple(value.shape) != tuple(meta["shape"]):
            return f"returned `{name}` of shape {tuple(value.shape)}, expected {tuple(meta['shape'])}"
        want = _DTYPES[meta["dtype"]]
        # final_state's dtype is the implementation's choice as long as it is as wide as the call's
        # (fla allocates fp32; a wider one is stored with one rounding); every other returned output
        # has the dtype upstream gives it.
        if name != "final_state" and value.dtype != want:
            return f"returned `{name}` as {value.dtype}, expected {want} (upstream's dtype for it)"
        if not value.dtype.is_floating_point:
            return f"returned `{name}` as {value.dtype}, expected a float dtype"
        if name == "final_state" and value.dtype != want and _WIDTH.get(value.dtype, 0) <= _WIDTH.get(want, 0):
            # Judged at the call's precision it would be a wrong-values finding whose cause is the
            # dtype, not the arithmetic: say so instead. fp16 and bf16 hold neither one the other.
            return (f"returned `final_state` as {value.dtype}, which does not hold every {want} value (upstream's "
                    f"final state): the recurrent state would be rounded to {value.dtype} at every hand-off")
        return None

    @staticmethod
    def _check_aliases(result: Any, passed: dict[str, torch.Tensor]) -> str | None:
        if result is None:
            return None
        items = result if isinstance(result, (tuple, list)) else [result]
        owners = {t.data_ptr(): n for n, t in passed.items()}
        for r in items:
            if not isinstance(r, torch.Tensor):
                return f"returned {_describe(result)}; upstream returns the caller's (out, initial_state)"
            if r.data_ptr() not in owners:
                return ("returned a tensor that is none of the caller's buffers; upstream writes `out` and the "
                        "state in place and returns those same objects")
        return None


class _TimedOut(Exception):
    pass


class _Worker:
    """One daemon thread running calls one at a time (a daemon, so a call that never returns does not
    keep the interpreter from exiting)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="kparity-fuzz-impl", daemon=True).start()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, kwargs, box, done = job
            try:
                box.append((True, fn(kwargs)))
            except BaseException as e:  # noqa: BLE001  (handed to the waiting thread)
                box.append((False, e))
            done.set()
            # Hold nothing of the finished call while waiting for the next one.
            del job, fn, kwargs, box, done

    def close(self) -> None:
        """Ends the thread once it is idle (a hung call keeps it, as a daemon, until exit)."""
        self._jobs.put(None)

    def call(self, fn: Callable[[dict[str, Any]], Any], kwargs: dict[str, Any], timeout: float) -> Any:
        box: list[tuple[bool, Any]] = []
        done = threading.Event()
        self._jobs.put((fn, kwargs, box, done))
        if not done.wait(timeout):
            raise _TimedOut()
        ok, value = box.pop()
        if ok:
            return value
        raise value


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)} ({', '.join(type(v).__name__ for v in value)})"
    return f"a {type(value).__name__}"


def stop_worker(runner: CaseRunner) -> None:
    """Ends the worker thread (a hung one is left, as a daemon, to the interpreter's exit)."""
    if runner._worker is not None:
        runner._worker.close()
        runner._worker = None
