"""Per-op objects with upstream's positional signatures (kparity.kda.replayssm_decode, ...), so a
wrapper can forward ``*args, **kwargs`` exactly as the upstream function received them."""
from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Literal

from . import _kparity
from ._calls import dump, reference
from ._guard import bind_call, guard
from ._ops_table import REQUIRED, ROWS


class Op:
    """One op. Its positional parameters are upstream's (``op.signature``), kparity's own extras are
    keyword-only."""

    def __init__(self, name: str) -> None:
        self.row = ROWS[name]
        self.name = name
        params = []
        for p in self.row.params:
            kind = inspect.Parameter.KEYWORD_ONLY if p.keyword_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
            default = inspect.Parameter.empty if p.default is REQUIRED else p.default
            params.append(inspect.Parameter(p.name, kind, default=default))
        # Python forbids a required positional parameter after one with a default; upstream has none.
        #: upstream's signature (positional parameters in upstream order; kparity's extras keyword-only)
        self.signature = inspect.Signature(params, __validate_parameters__=False)
        self.__doc__ = f"{name}: {self.row.upstream}{self.signature}"

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any], fn: str) -> dict[str, Any]:
        return bind_call(self.row, args, kwargs, f"{self.name}.{fn}")

    def check(self, *args: Any, entry: Literal["kernel", "reference"] = "kernel", extra: bool = False,
              deep: bool = False, **kwargs: Any) -> list[Any]:
        """kparity.check with upstream's positional arguments."""
        return _kparity.check(self.name, entry=entry, extra=extra, deep=deep, **self._bind(args, kwargs, "check"))

    def validate(self, *args: Any, entry: Literal["kernel", "reference"] = "kernel", extra: bool = False,
                 deep: bool = False, **kwargs: Any) -> list[Any]:
        """kparity.validate with upstream's positional arguments."""
        return _kparity.validate(self.name, entry=entry, extra=extra, deep=deep,
                                 **self._bind(args, kwargs, "validate"))

    def reference(self, *args: Any, precision: Literal["oracle", "faithful"] = "oracle", **kwargs: Any) -> dict[str, Any]:
        """kparity.reference with upstream's positional arguments."""
        return reference(self.name, precision=precision, **self._bind(args, kwargs, "reference"))

    def kernel(self, *args: Any, stream: Any = None, **kwargs: Any) -> dict[str, Any]:
        """kparity.kernel with upstream's positional arguments."""
        from . import kernel

        return kernel(self.name, stream=stream, **self._bind(args, kwargs, "kernel"))

    def dump(self, path: "str | os.PathLike[str]", *args: Any, expected: "dict[str, Any] | None" = None,
             **kwargs: Any) -> None:
        """kparity.dump with upstream's positional arguments."""
        dump(path, self.name, expected=expected, **self._bind(args, kwargs, "dump"))

    def guard(self, fn: "Callable[..., Any] | None" = None, **options: Any) -> Any:
        """kparity.guard for this op: a decorator (``op.guard(fn)``, ``@op.guard()``)."""
        g = guard(self.name, **options)
        return g(fn) if fn is not None else g

    def __repr__(self) -> str:
        return f"<kparity op {self.name}{self.signature}>"
