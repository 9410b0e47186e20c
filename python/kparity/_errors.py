"""Exception classes. A contract violation is a ContractError carrying its catalog entry; each
upstream error class has a subclass that also derives from the builtin class upstream raises, so
``except ValueError:`` written for the upstream op still catches it, and ``str(e)`` is upstream's
message byte for byte."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._kparity import Diagnostic


class _Diagnosed:
    """Attributes read from the diagnostic the C++ contract produced."""

    diagnostic: "Diagnostic | None"

    def __init__(self, message: str, diagnostic: "Diagnostic | None" = None) -> None:
        super().__init__(message)  # type: ignore[call-arg]
        self.diagnostic = diagnostic

    def _field(self, name: str) -> str:
        return getattr(self.diagnostic, name) if self.diagnostic is not None else ""

    @property
    def id(self) -> str:
        """The catalog id (16 hex digits)."""
        return self._field("id")

    @property
    def slug(self) -> str:
        return self._field("slug")

    @property
    def op(self) -> str:
        return self._field("op")

    @property
    def argument(self) -> str:
        return self._field("argument")

    @property
    def location(self) -> str:
        return self._field("location")

    @property
    def error_class(self) -> str:
        """The upstream class name ("ValueError", "RuntimeError", ...)."""
        return self._field("error_class")

    @property
    def notes(self) -> list[str]:
        return list(self.diagnostic.notes) if self.diagnostic is not None else []

    def text(self) -> str:
        """The full rendering: message, location, notes, help and the catalog footer."""
        return self.diagnostic.text() if self.diagnostic is not None else str(self)


class ContractError(_Diagnosed, Exception):
    """A call violates its op's contract (an upstream check, or one of kparity's own)."""

    @property
    def entry(self) -> dict[str, Any]:
        """The catalog record of this check, as a dict."""
        from . import _kparity

        return json.loads(_kparity.catalog_record(self.id)) if self.id else {}


class ContractValueError(ContractError, ValueError):
    """A contract violation upstream reports as ValueError."""


class ContractRuntimeError(ContractError, RuntimeError):
    """A contract violation upstream reports as RuntimeError."""


class ContractIndexError(ContractError, IndexError):
    """A contract violation upstream reports as IndexError."""


class ContractTypeError(ContractError, TypeError):
    """A contract violation upstream reports as TypeError."""


class ContractNotImplementedError(ContractError, NotImplementedError):
    """A call the kernel does not support (NotImplementedError, naming the value)."""


class ContractAssertionError(ContractError, AssertionError):
    """A contract violation upstream reports through ``assert`` (fla's chunk_kda wrapper)."""


class ContractZeroDivisionError(ContractError, ZeroDivisionError):
    """A call upstream fails on with a division by zero (an empty head count or head dim)."""


class InternalError(_Diagnosed, RuntimeError):
    """A broken invariant inside kparity (a bug: please report it)."""


class UnknownEntryError(LookupError):
    """No catalog entry matches the query exactly; ``suggestions`` holds close ids and slugs,
    ``candidates`` the ranked search hits."""

    def __init__(self, query: str, suggestions: list[str], candidates: list[Any]) -> None:
        self.query = query
        self.suggestions = suggestions
        self.candidates = candidates
        lines = [f"no catalog entry matches {query!r}"]
        if candidates:
            lines.append("closest entries:")
            lines += [f"  {h.entry.id}  {h.entry.slug}  ({h.reason})" for h in candidates]
        elif suggestions:
            lines.append("did you mean: " + ", ".join(suggestions))
        super().__init__("\n".join(lines))


#: Exception class per upstream error class name, handed to the C++ side at import.
BY_CLASS: dict[str, type[Exception]] = {
    "ValueError": ContractValueError,
    "RuntimeError": ContractRuntimeError,
    "IndexError": ContractIndexError,
    "TypeError": ContractTypeError,
    "NotImplementedError": ContractNotImplementedError,
    "AssertionError": ContractAssertionError,
    "ZeroDivisionError": ContractZeroDivisionError,
    "InternalError": InternalError,
}
