"""kparity.guard: check an upstream call before it runs, and keep a replayable dump when it fails.

Off unless asked: ``enabled=True`` on a guard, or the environment variable ``KPARITY_GUARD`` for the
whole process (read at import): ``1`` turns every guard on; a comma list may add ``extra`` and
``deep`` (``KPARITY_GUARD=1,extra,deep``). Dumps go to ``dump_dir``, else ``KPARITY_GUARD_DIR``,
else ``./kparity-dumps``. A guard that is off returns the function itself: no cost in hot paths."""
from __future__ import annotations

import functools
import itertools
import os
import time
from typing import Any, Callable, TypeVar

from . import _kparity, _staging
from ._calls import dump
from ._errors import ContractError, UnknownEntryError
from ._ops_table import OpRow, op_row

F = TypeVar("F", bound=Callable[..., Any])


def _env() -> dict[str, bool] | None:
    v = os.environ.get("KPARITY_GUARD", "").strip().lower()
    if v in ("", "0", "off", "false", "no"):
        return None
    words = {w.strip() for w in v.split(",")}
    return {"extra": "extra" in words, "deep": "deep" in words}


ENV = _env()
_counter = itertools.count()


def bind_call(row: OpRow, args: tuple[Any, ...], kwargs: dict[str, Any], fn: str) -> dict[str, Any]:
    """Upstream's positional order applied to *args; keywords pass through."""
    pos = row.positional
    if len(args) > len(pos):
        raise TypeError(f"{fn}() takes {len(pos)} positional arguments but {len(args)} were given")
    call = dict(zip(pos, args))
    for k, v in kwargs.items():
        if k in call:
            raise TypeError(f"{fn}() got multiple values for argument '{k}'")
        call[k] = v
    return call


def _snapshot(v: Any) -> Any:
    clone = getattr(v, "clone", None) or getattr(v, "copy", None)
    return clone() if callable(clone) else v


class _Watch:
    """One guarded call: checks and snapshots on entry, dumps on failure."""

    def __init__(self, g: "Guard", call: dict[str, Any]) -> None:
        self.g, self.call = g, call
        self.before: dict[str, Any] = {}

    def __enter__(self) -> "_Watch":
        row = self.g.row
        self.before = {n: _snapshot(self.call[n]) for n in row.inplace if self.call.get(n) is not None}
        try:
            _kparity.check(row.op, entry=self.g.entry, extra=self.g.extra, deep=self.g.deep, **self.call)
        except ContractError as e:
            self._keep(e)
            raise
        return self

    def __exit__(self, et: Any, e: BaseException | None, tb: Any) -> bool:
        if isinstance(e, Exception):
            self._keep(e)
        return False

    def _keep(self, e: BaseException) -> None:
        from ._catalog import _from_exception

        entry = None
        try:
            entry = _from_exception(e)
        except UnknownEntryError:
            pass
        if entry is not None and not isinstance(e, ContractError):
            e.kparity_id = entry.id  # type: ignore[attr-defined]
            e.kparity_entry = entry  # type: ignore[attr-defined]
        args = dict(self.call)
        args.update(self.before)  # inputs as they were before the call
        directory = self.g.dump_dir or os.environ.get("KPARITY_GUARD_DIR") or "kparity-dumps"
        name = f"{self.g.row.op.replace('/', '.')}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_counter)}"
        path = os.path.join(directory, name + ".safetensors")
        info = {"guard.exception": f"{type(e).__name__}: {e}"[:2000]}
        if entry is not None:
            info["guard.id"] = entry.id
        try:
            os.makedirs(directory, exist_ok=True)
            dump(path, self.g.row.op, info=info, **args)
            saved = f"kparity: the call was saved to {path} (replay: kparity run {path})"
        except Exception as de:  # never hide the call's own error behind a failed dump
            saved = f"kparity: the call could not be saved ({type(de).__name__}: {de})"
        e.kparity_dump = path  # type: ignore[attr-defined]
        if entry is not None:
            e.add_note(f"kparity: catalog entry {entry.id} ({entry.slug}); see `kparity explain {entry.id}`")
        e.add_note(saved)


class Guard:
    """A guard for one op (see the module documentation)."""

    def __init__(self, op: str, *, extra: bool | None = None, deep: bool | None = None, entry: str = "kernel",
                 dump_dir: "str | os.PathLike[str] | None" = None, enabled: bool | None = None) -> None:
        self.row = op_row(op, "kparity.guard")
        env = ENV or {}
        self.extra = env.get("extra", False) if extra is None else extra
        self.deep = env.get("deep", False) if deep is None else deep
        self.entry = entry
        self.dump_dir = os.fspath(dump_dir) if dump_dir is not None else None
        self.enabled = ENV is not None if enabled is None else enabled

    def __call__(self, fn: F) -> F:
        """Wraps an upstream function with the op's positional signature."""
        if not self.enabled:
            return fn

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            with self.watch(*args, **kwargs):
                return fn(*args, **kwargs)

        return guarded  # type: ignore[return-value]

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        """A context manager around one call with these arguments (upstream order or names)."""
        if not self.enabled:
            return _Off()
        return _Watch(self, bind_call(self.row, args, kwargs, self.row.op))


class _Off:
    def __enter__(self) -> "_Off":
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False


def guard(op: str, *args: Any, extra: bool | None = None, deep: bool | None = None, entry: str = "kernel",
          dump_dir: "str | os.PathLike[str] | None" = None, enabled: bool | None = None, **kwargs: Any) -> Any:
    """Guards calls of an upstream function of `op`:

    * ``@kparity.guard("kda/replayssm_decode")`` or ``kparity.guard(op, fn)``: a decorator;
    * ``with kparity.guard(op, *call_args, **call_kwargs): upstream(*call_args, **call_kwargs)``.

    Before the call the arguments are checked (`extra`/`deep` as for kparity.check) and the tensors
    the call updates in place are snapshotted; when the check or the call raises, the call is saved
    as a dump (inputs as they were before the call) and the exception re-raised, with the catalog id
    attached (``e.kparity_id``, and a note) when an entry matches and the dump's path as a note."""
    g = Guard(op, extra=extra, deep=deep, entry=entry, dump_dir=dump_dir, enabled=enabled)
    if len(args) == 1 and not kwargs and callable(args[0]) and _staging.dlpack_device(args[0]) is None:
        return g(args[0])
    if args or kwargs:
        return g.watch(*args, **kwargs)
    return g
