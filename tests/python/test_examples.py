"""Every catalog entry's executable examples, rebuilt as torch tensors and checked through the
Python API: the erroneous example raises exactly its entry (id, upstream class, byte-identical
message); the fixed example validates cleanly. Parametrised over the catalog, like tests/catalog."""
from __future__ import annotations

import builtins
import re

import pytest

import kparity
from kparity._ops_table import ROWS
from kp_helpers import example_args

ACTIVE = [e for e in kparity.entries() if e.status == "active"]


def _leaves_out_upstream_output(e: kparity.Entry) -> bool:
    """The erroneous example only leaves out an output upstream allocates itself (sparse `lse` with
    return_lse): a check of kparity's C++ API, which takes the buffer from the caller. From Python the
    call is upstream's, complete without it (tests/python/test_upstream_allocated.py); tests/catalog
    fires the entry in C++."""
    row = ROWS.get(e.op)
    if row is None:
        return False
    own = {p.name for p in row.params if p.keyword_only and p.name in row.written}
    changes = e.erroneous_example.get("set") or {}
    return bool(changes) and all(k in own and v is None for k, v in changes.items())


# Kernel-dispatch entries fire in the launchers once the contract passed (tests/gpu_dispatch in C++):
# their examples go through kparity.kernel, on a GPU.
ENTRIES = [e for e in ACTIVE if e.record.get("emittedBy", "contracts") != "kernels" and not _leaves_out_upstream_output(e)]
CXX_API_ENTRIES = [e for e in ACTIVE if _leaves_out_upstream_output(e)]
# kda-chunk-kernel-not-built depends on how the library was configured (KPARITY_CHUNK_KERNEL), not on
# the call, so it has no fixed example to launch: tests/gpu_dispatch fires it in C++ in builds without
# the chunked kernel.
BUILD_ENTRIES = [e for e in ACTIVE if e.slug == "kda-chunk-kernel-not-built"]
KERNEL_ENTRIES = [e for e in ACTIVE if e.record.get("emittedBy", "contracts") == "kernels" and e not in BUILD_ENTRIES]


def _options(o: dict) -> dict:
    return {"entry": o["entry"], "extra": o["extra"], "deep": o["deep"]}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.slug)
def test_erroneous_example_raises_its_entry(entry: kparity.Entry) -> None:
    op, args, options = example_args(entry.erroneous_example)
    assert op == entry.op
    if entry.severity != "error":
        warnings = kparity.check(op, **_options(options), **args)
        assert warnings and warnings[0].id == entry.id, warnings
        return
    with pytest.raises(kparity.ContractError) as info:
        kparity.check(op, **_options(options), **args)
    e = info.value
    assert e.id == entry.id, e.text()
    assert e.slug == entry.slug and e.op == entry.op
    upstream_class = getattr(builtins, entry.error_class)
    assert isinstance(e, upstream_class), type(e).__mro__
    assert type(e) is kparity._errors.BY_CLASS[entry.error_class]
    assert e.error_class == entry.error_class
    assert re.fullmatch(entry.message_pattern, str(e)), str(e)
    if entry.origin == "upstream" and "{" not in entry.message_template.replace("{{", "").replace("}}", ""):
        assert str(e) == entry.message  # byte for byte
    assert e.entry["id"] == entry.id
    found = kparity.validate(op, **_options(options), **args)
    assert entry.id in [d.id for d in found]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.slug)
def test_fixed_example_is_clean(entry: kparity.Entry) -> None:
    op, args, options = example_args(entry.fixed_example)
    assert kparity.validate(op, **_options(options), **args) == []
    assert kparity.check(op, **_options(options), **args) == []


@pytest.mark.gpu
@pytest.mark.parametrize("entry", KERNEL_ENTRIES, ids=lambda e: e.slug)
def test_kernel_entry_raised_by_kparity_kernel(entry: kparity.Entry) -> None:
    op, args, options = example_args(entry.erroneous_example)
    with pytest.raises(kparity.ContractError) as info:
        kparity.kernel(op, sync=True, **args)
    assert info.value.id == entry.id, info.value.text()
    assert isinstance(info.value, getattr(builtins, entry.error_class))
    op, args, options = example_args(entry.fixed_example)
    kparity.kernel(op, sync=True, **args)


def test_every_active_entry_is_covered() -> None:
    assert len(ENTRIES) + len(KERNEL_ENTRIES) + len(BUILD_ENTRIES) + len(CXX_API_ENTRIES) == len(ACTIVE) > 100
    assert {e.slug for e in CXX_API_ENTRIES} == {"sparse-prefill-lse-missing", "sparse-decode-lse-missing"}
