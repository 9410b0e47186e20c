"""Calls without the outputs upstream allocates (issue 23, defect 5).

sglang's paged prefill and decode allocate and return `out` (and `lse` with return_lse); fla's
fused_recurrent_kda and chunk_kda return `o` and the final state. Those outputs are not the caller's to
pass: kparity.check, kparity.validate and kparity.guard take upstream's own call without them, derive
them as upstream allocates them (the op table's allocate path) and still reject a bad call with its
catalog entry. Before the fix such a call raised a plain ``RuntimeError: missing required tensor argument
`out``` (no id), and a guard around an upstream function raised it on every valid call.

Calls come from the catalog's fixtures (valid) and erroneous examples (each firing one entry), rebuilt
as torch tensors by kp_helpers (device tensors labelled CUDA on a machine without one).
"""
from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any, Callable

import pytest

import kparity
from kparity import _kparity
from kparity._ops_table import ROWS
from kp_helpers import example_args

# The written tensors that are not parameters of upstream's function, per op (the op table's
# keyword-only outputs). The decode ops of KDA take `out` positionally: the caller allocates it there.
UPSTREAM_ALLOCATED = {
    "kda/recurrent": ("out", "final_state"),
    "kda/chunk": ("out", "final_state"),
    "sparse/paged_prefill": ("out", "lse"),
    "sparse/paged_decode": ("out", "lse"),
}
FIXTURES = [f for f in sorted(json.loads(_kparity._fixtures_json()))
            if example_args({"fixture": f})[0] in UPSTREAM_ALLOCATED]
ENTRIES = ("kernel", "reference", None)


def options(entry: str | None) -> dict[str, Any]:
    return {} if entry is None else {"entry": entry}


def without(args: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k not in names}


def test_the_op_table_names_these_outputs() -> None:
    found = {}
    for op, row in ROWS.items():
        keyword_only = {p.name for p in row.params if p.keyword_only}
        outs = tuple(w for w in sorted(row.written) if w in keyword_only)
        if outs:
            found[op] = outs
    assert found == {op: tuple(sorted(o)) for op, o in UPSTREAM_ALLOCATED.items()}
    assert {example_args({"fixture": f})[0] for f in FIXTURES} == set(UPSTREAM_ALLOCATED)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"entry={e}")
@pytest.mark.parametrize("fixture", FIXTURES)
def test_valid_call_without_upstream_outputs_passes(fixture: str, entry: str | None) -> None:
    op, args, _ = example_args({"fixture": fixture})
    outs = UPSTREAM_ALLOCATED[op]
    assert kparity.validate(op, **options(entry), **args) == []  # the fixture with its outputs is clean
    dropped = [outs] + [(o,) for o in outs if o in args]  # all of them, and each alone
    for names in dropped:
        call = without(args, names)
        assert kparity.check(op, **options(entry), **call) == [], names
        assert kparity.validate(op, **options(entry), extra=True, **call) == [], names


def erroneous_examples() -> list[Any]:
    """Each active contract entry of these ops whose erroneous example is wrong in something the
    caller still passes (examples that only break an output, or leave it out, are about the caller's
    buffer, which an upstream call has none of)."""
    picked = []
    for e in kparity.entries():
        if e.status != "active" or e.op not in UPSTREAM_ALLOCATED or e.record.get("emittedBy", "contracts") != "contracts":
            continue
        touched = {k.split(".")[0] for k in (e.erroneous_example.get("set") or {})}
        if touched and touched <= set(UPSTREAM_ALLOCATED[e.op]):
            continue
        picked.append(pytest.param(e, id=e.slug))
    return picked


EXAMPLES = erroneous_examples()


def test_the_bad_calls_cover_every_op() -> None:
    assert {p.values[0].op for p in EXAMPLES} == set(UPSTREAM_ALLOCATED)
    assert len(EXAMPLES) > 80


@pytest.mark.parametrize("e", EXAMPLES)
def test_bad_call_without_upstream_outputs_raises_its_entry(e: kparity.Entry) -> None:
    op, args, o = example_args(e.erroneous_example)
    call = without(args, UPSTREAM_ALLOCATED[op])
    opts = {"entry": o["entry"], "extra": o["extra"], "deep": o["deep"]}
    if e.severity != "error":
        warnings = kparity.check(op, **opts, **call)
        assert warnings and warnings[0].id == e.id, warnings
        return
    with pytest.raises(kparity.ContractError) as info:
        kparity.check(op, **opts, **call)
    assert info.value.id == e.id, info.value.text()
    assert isinstance(info.value, getattr(builtins, e.error_class))
    assert e.id in [d.id for d in kparity.validate(op, **opts, **call)]


# --- guard around functions with upstream's exact signatures ------------------------------------

def sparse_attn_v4_paged_prefill(q: Any, unified_kv: Any, kv_indices_prefix: Any, kv_indptr_prefix: Any, kv: Any,
                                 kv_indices_extend: Any, kv_indptr_extend: Any, attn_sink: Any,
                                 softmax_scale: float) -> Any:
    """sglang's signature: no `out`, it allocates and returns it."""
    return ("prefill", q)


def sparse_attn_v4_paged_decode(q: Any, unified_kv: Any, kv_indices: Any, kv_indptr: Any, attn_sink: Any,
                                softmax_scale: float) -> Any:
    return ("decode", q)


def fused_recurrent_kda(q: Any, k: Any, v: Any, g: Any = None, beta: Any = None, scale: Any = None,
                        initial_state: Any = None, output_final_state: bool = False,
                        use_qk_l2norm_in_kernel: bool = False, cu_seqlens: Any = None, **kwargs: Any) -> Any:
    """fla's signature: returns (o, final_state)."""
    return ("recurrent", q)


def chunk_kda(q: Any, k: Any, v: Any, g: Any, beta: Any, scale: Any = None, initial_state: Any = None,
              output_final_state: bool = False, use_qk_l2norm_in_kernel: bool = False, **kwargs: Any) -> Any:
    return ("chunk", q)


# op, upstream function, the fixture of a valid call, the erroneous example of a bad one (an input's
# check), and the positional parameters upstream's callers pass (the rest go by keyword).
GUARDED = [
    ("sparse/paged_prefill", sparse_attn_v4_paged_prefill, "sparse.prefill.minimal", "sparse-prefill-q-dtype", 9),
    ("sparse/paged_decode", sparse_attn_v4_paged_decode, "sparse.decode.minimal", "sparse-decode-index-dtype", 6),
    ("kda/recurrent", fused_recurrent_kda, "kda.recurrent.gate_g", "kda-recurrent-k-shape", 5),
    ("kda/chunk", chunk_kda, "kda.chunk.minimal", "kda-chunk-qk-shape", 8),
]


def upstream_call(op: str, args: dict[str, Any], n_positional: int) -> tuple[list[Any], dict[str, Any]]:
    """`args` as upstream's caller passes them: no upstream-allocated output, no kparity extra at its
    default, the first n_positional parameters positionally."""
    row = ROWS[op]
    call = without(args, UPSTREAM_ALLOCATED[op])
    for p in row.params:  # kparity's keyword-only extras at their defaults are not upstream's to pass
        if p.keyword_only and p.name in call and call[p.name] == p.default:
            del call[p.name]
    if op == "sparse/paged_prefill" or op == "sparse/paged_decode":
        call.pop("return_lse", None)  # sglang's base signature (V-base) has no return_lse
    pos = [call.pop(n, None) for n in row.positional[:n_positional]]  # an absent one: None, as upstream's default
    return pos, call


@pytest.mark.parametrize("op, fn, fixture, bad, n_positional", GUARDED, ids=[g[0] for g in GUARDED])
def test_guard_passes_upstream_calls_and_rejects_bad_ones(op: str, fn: Callable[..., Any], fixture: str, bad: str,
                                                          n_positional: int, tmp_path: Path) -> None:
    calls: list[Any] = []

    def counted(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return fn(*a, **k)

    guarded = kparity.guard(op, enabled=True, dump_dir=tmp_path)(counted)
    _, args, _ = example_args({"fixture": fixture})
    pos, kw = upstream_call(op, args, n_positional)
    for _ in range(2):  # the second call meets the check's memo of the first
        assert guarded(*pos, **kw)[1] is pos[0]
    assert len(calls) == 2
    assert kparity.guard(op, enabled=True, entry="reference", dump_dir=tmp_path)(counted)(*pos, **kw)[1] is pos[0]

    entry = kparity.explain(bad)
    assert entry.op == op
    _, bad_args, o = example_args(entry.erroneous_example)
    pos, kw = upstream_call(op, bad_args, n_positional)
    strict = kparity.guard(op, enabled=True, entry=o["entry"], extra=o["extra"], deep=o["deep"],
                           dump_dir=tmp_path)(counted)
    with pytest.raises(kparity.ContractError) as info:
        strict(*pos, **kw)
    assert info.value.id == entry.id, info.value.text()
    assert len(calls) == 3  # the bad call never reached upstream
    assert hasattr(info.value, "kparity_dump")


def test_family_objects_take_upstream_calls() -> None:
    _, args, _ = example_args({"fixture": "sparse.prefill.minimal"})
    pos, kw = upstream_call("sparse/paged_prefill", args, 9)
    assert kparity.sparse.paged_prefill.check(*pos, **kw) == []
    assert kparity.sparse.paged_prefill.validate(*pos, extra=True, **kw) == []
