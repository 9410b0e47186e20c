"""explain, search, validate, the per-family modules and the type stubs."""
from __future__ import annotations

import builtins
import subprocess
from pathlib import Path

import pytest
import torch

import kparity
from kp_helpers import example_args, kparity_cli, replayssm_args


def test_ops() -> None:
    assert kparity.ops() == ("kda/recurrent", "kda/chunk", "kda/packed_decode", "kda/replayssm_decode",
                             "sparse/paged_prefill", "sparse/paged_decode")


@pytest.mark.parametrize("query", ["066bd06e9ab538bd", "kda-g-cache-dtype", "`g_cache` must have dtype torch.float32.",
                                   "ValueError: `g_cache` must have dtype torch.float32."])
def test_explain_exact(query: str) -> None:
    e = kparity.explain(query)
    assert e.id == "066bd06e9ab538bd" and e.slug == "kda-g-cache-dtype"
    assert e.error_class == "ValueError" and e.message == "`g_cache` must have dtype torch.float32."
    assert e.documentation and e.solutions and e.check_order == 14  # record fields, snake_case
    assert "066bd06e9ab538bd" in e.text() and e.markdown().strip()


def test_explain_exceptions() -> None:
    args = replayssm_args()
    args["g_cache"] = args["g_cache"].half()
    with pytest.raises(kparity.ContractError) as info:
        kparity.check("kda/replayssm_decode", **args)
    assert kparity.explain(info.value).id == "066bd06e9ab538bd"
    # An upstream exception (not kparity's) whose message matches.
    assert kparity.explain(ValueError("`write_pos` must have shape (2,).")).slug == "kda-write-pos-shape"
    assert kparity.explain(RuntimeError("Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors")).id == \
        "5d9da259c68eb6c4"


def test_explain_unknown_carries_suggestions_and_candidates() -> None:
    with pytest.raises(LookupError) as info:
        kparity.explain("kda-g-cache-dtyp")
    e = info.value
    assert isinstance(e, kparity.UnknownEntryError)
    assert "kda-g-cache-dtype" in e.suggestions
    assert e.candidates and e.candidates[0].entry.slug == "kda-g-cache-dtype"
    with pytest.raises(kparity.UnknownEntryError):
        kparity.explain(KeyError("nothing kparity knows"))


# Messages from other upstream versions and paraphrases: the right entry must rank first.
SEARCHES = {
    "sparse_attn_v4_paged_prefill requires CUDA tensors": "sparse-prefill-requires-cuda-tensors",
    "RuntimeError: sparse_attn_v4_paged_prefill requires CUDA/HIP tensors": "sparse-prefill-requires-cuda-tensors",
    "g_cache must be float32": "kda-g-cache-dtype",
    "force_flush on wrong device": "kda-force-flush-device",
    "write_pos out of range": "kda-write-pos-out-of-range",
    "sparse decode q must be bf16": "sparse-decode-q-dtype",
    "066bd06e9ab538bd": "kda-g-cache-dtype",
}


@pytest.mark.parametrize("query", SEARCHES)
def test_search_ranks_the_right_entry_first(query: str) -> None:
    hits = kparity.search(query, limit=3)
    assert hits and hits[0].entry.slug == SEARCHES[query], [(h.entry.slug, h.score) for h in hits]
    assert 0 < hits[0].score and hits[0].reason
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_search_nothing() -> None:
    assert kparity.search("zzqx") == []


@pytest.mark.skipif(kparity_cli() is None, reason="skipped: no kparity executable")
def test_entry_text_is_the_cli_page() -> None:
    r = subprocess.run([kparity_cli(), "explain", "066bd06e9ab538bd"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == kparity.explain("066bd06e9ab538bd").text().strip()


def test_validate_returns_every_diagnostic() -> None:
    args = replayssm_args()
    args["write_pos"] = torch.tensor([1, 9], dtype=torch.int32)
    args["force_flush"] = torch.tensor([0, 3], dtype=torch.int32)
    assert kparity.validate("kda/replayssm_decode", **args) == []  # upstream parity: data unchecked
    ds = kparity.validate("kda/replayssm_decode", extra=True, deep=True, **args)
    slugs = [d.slug for d in ds]
    assert "kda-write-pos-out-of-range" in slugs and "kda-force-flush-value" in slugs
    d = ds[slugs.index("kda-force-flush-value")]
    assert d.severity == "warning" and d.error_class and d.argument == "force_flush" and d.op == "kda/replayssm_decode"
    assert d.id in d.text() and d.json().startswith("{")


def test_exception_classes_derive_from_upstream_ones() -> None:
    for cls_name, cls in kparity._errors.BY_CLASS.items():
        if cls_name != "InternalError":
            assert issubclass(cls, getattr(builtins, cls_name)) and issubclass(cls, kparity.ContractError)
    assert issubclass(kparity.UnknownEntryError, LookupError)


def test_family_signatures_are_upstreams() -> None:
    sig = kparity.kda.replayssm_decode.signature
    assert list(sig.parameters)[:16] == [
        "mixed_qkv", "a", "b", "A_log", "dt_bias", "scale", "initial_state", "d_cache", "k_cache", "g_cache", "out",
        "ssm_state_indices", "write_pos", "force_flush", "use_qk_l2norm_in_kernel", "lower_bound"]
    assert list(kparity.sparse.paged_decode.signature.parameters)[:6] == [
        "q", "unified_kv", "kv_indices", "kv_indptr", "attn_sink", "softmax_scale"]
    for mod, names in ((kparity.kda, ("recurrent", "chunk", "packed_decode", "replayssm_decode")),
                       (kparity.sparse, ("paged_prefill", "paged_decode"))):
        for n in names:
            op = getattr(mod, n)
            for method in ("check", "validate", "reference", "kernel", "dump", "guard"):
                assert callable(getattr(op, method))


def test_family_forwards_args_exactly() -> None:
    args = replayssm_args()
    args["g_cache"] = args["g_cache"].half()
    names = kparity.kda.replayssm_decode.row.positional
    pos = [args[n] for n in names[:10]]
    kw = {n: args[n] for n in names[10:] if n in args}
    with pytest.raises(ValueError) as a:
        kparity.kda.replayssm_decode.check(*pos, **kw)
    with pytest.raises(ValueError) as b:
        kparity.check("kda/replayssm_decode", **args)
    assert a.value.id == b.value.id == "066bd06e9ab538bd"


# fla's chunk_kda checks with `assert` and fails on empty heads with a ZeroDivisionError: the
# exceptions keep those classes, through kparity.check and through the positional family object.
@pytest.mark.parametrize("slug, builtin", [("kda-chunk-initial-state-dtype", AssertionError),
                                           ("kda-chunk-num-qk-heads-zero", ZeroDivisionError)])
def test_chunk_kda_keeps_upstream_classes(slug: str, builtin: type) -> None:
    entry = kparity.explain(slug)
    op, args, _ = example_args(entry.erroneous_example)
    assert op == "kda/chunk"
    names = kparity.kda.chunk.row.positional
    pos = [args.pop(n) for n in names[:4]]
    with pytest.raises(builtin) as info:
        kparity.kda.chunk.check(*pos, **args)
    assert isinstance(info.value, kparity.ContractError)
    assert info.value.id == entry.id


def test_type_stubs_are_shipped_and_complete() -> None:
    pkg = Path(kparity.__file__).parent
    assert (pkg / "py.typed").exists()
    stub = (pkg / "_kparity.pyi").read_text()
    from kparity import _kparity

    public = {n for n in dir(_kparity) if not n.startswith("__")}
    import ast

    tree = ast.parse(stub)
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target] if isinstance(t, ast.Name)}
    kernel_only = {"kernel", "_time_launcher", "_set_current_stream", "_set_device_allocator"}
    assert public - declared - (kernel_only if not kparity.has_kernels else set()) == set()
    assert declared - public - (kernel_only if not kparity.has_kernels else set()) == set()
