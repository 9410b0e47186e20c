"""Catalog entries from Python: explain() and search(), over the catalog compiled into the
C++ library (the same one `kparity explain` reads)."""
from __future__ import annotations

import builtins
import json
import re
from typing import Any, NamedTuple

from . import _kparity
from ._errors import ContractError, UnknownEntryError


def _snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


class Entry:
    """One catalog entry. ``id``, ``slug``, ``message`` (upstream's text), ``error_class`` and every
    other field of the record (``entry.documentation``, ``entry.solutions``,
    ``entry.trigger_scenarios``, ...: snake_case names of the record's keys); ``record`` is the whole
    record as a dict."""

    __slots__ = ("record",)

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record

    @property
    def id(self) -> str:
        return self.record["id"]

    @property
    def slug(self) -> str:
        return self.record["slug"]

    @property
    def message(self) -> str:
        """The message as upstream (or kparity, for its own checks) writes it."""
        return self.record.get("errorMessage", "")

    @property
    def error_class(self) -> str:
        return self.record.get("errorClass", "")

    @property
    def op(self) -> str:
        return self.record.get("op", "")

    @property
    def argument(self) -> str:
        return self.record.get("argument", "")

    @property
    def severity(self) -> str:
        return self.record.get("severity", "error")

    @property
    def summary(self) -> str:
        return self.record.get("summary", "")

    @property
    def tags(self) -> list[str]:
        return list(self.record.get("tags", []))

    def __getattr__(self, name: str) -> Any:
        key = _snake_to_camel(name)
        if key in self.record:
            return self.record[key]
        raise AttributeError(f"catalog entry {self.record.get('slug', '?')} has no field {name!r}")

    def text(self) -> str:
        """The explain page, as `kparity explain <id>` prints it."""
        return _kparity.explain_text(self.id)

    def markdown(self) -> str:
        """The entry's section of the markdown error index."""
        return _kparity.explain_markdown([self.id])

    def json(self) -> str:
        """The entry as `kparity explain --json` prints it."""
        return _kparity.explain_json(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Entry) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<kparity.Entry {self.id} {self.slug}: {self.message}>"


_cache: dict[str, Entry] = {}


def entry(entry_id: str) -> Entry:
    e = _cache.get(entry_id)
    if e is None:
        e = _cache[entry_id] = Entry(json.loads(_kparity.catalog_record(entry_id)))
    return e


def entries(op: str = "", tag: str = "") -> list[Entry]:
    """Every entry, or those of one op (exact name or a prefix such as "kda/") and/or one tag."""
    return [entry(i) for i in _kparity.catalog_list(op, tag)]


class SearchHit(NamedTuple):
    entry: Entry
    score: float
    reason: str


def search(text: str, limit: int = 5) -> list[SearchHit]:
    """Entries ranked by how close ``text`` is to their messages, slugs, summaries and tags, best
    first (the ranking of `kparity explain` when nothing matches exactly)."""
    if not isinstance(text, str):
        raise TypeError(f"kparity.search: text must be a str, got {type(text).__name__}")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ValueError(f"kparity.search: limit must be a non-negative int, got {limit!r}")
    return [SearchHit(entry(i), s, r) for i, s, r in _kparity.catalog_search(text, limit)]


def _unknown(query: str) -> UnknownEntryError:
    return UnknownEntryError(query, _kparity.catalog_suggest(query, 3), search(query))


def _from_exception(exc: BaseException) -> Entry:
    if isinstance(exc, ContractError) and exc.id:
        return entry(exc.id)
    text = str(exc)
    ids = _kparity.catalog_by_message(text)
    # Several ops can share a message; the entry whose class the exception is an instance of wins.
    for i in ids:
        cls = getattr(builtins, entry(i).error_class, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return entry(i)
    if ids:
        return entry(ids[0])
    raise _unknown(f"{type(exc).__name__}: {text}")


def explain(query: "str | BaseException | Entry") -> Entry:
    """The catalog entry for an id, a slug, a pasted message (``"ValueError: ..."`` accepted) or an
    exception instance (a ContractError, or an upstream exception whose message matches). Raises
    UnknownEntryError (a LookupError) with suggestions and ranked candidates otherwise."""
    if isinstance(query, Entry):
        return query
    if isinstance(query, BaseException):
        return _from_exception(query)
    if not isinstance(query, str):
        raise TypeError(f"kparity.explain: expected an id, slug, message or exception, got {type(query).__name__}")
    found = _kparity.catalog_lookup(query)
    if found is not None:
        return entry(found)
    # "error[<id>]: ..." as kparity's own renderings start.
    m = re.match(r"\s*error\[([0-9a-f]{16})\]", query)
    if m and m.group(1) in _kparity.catalog_ids():
        return entry(m.group(1))
    raise _unknown(query)
