"""Bad implementations and bad calls of check_implementation: each gives a clear report (or, for
the caller's own options, a clear exception), never a crash of the campaign."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest
import torch

from kparity.fuzz import check_implementation
from kparity.testing import impls


def run(op, impl, tmp_path, **kw):
    kw.setdefault("cases", 40)
    return check_implementation(op, impl, device="cpu", corpus=tmp_path, **kw)


def test_not_callable_is_a_report_not_an_exception(tmp_path) -> None:
    report = run("kda/packed_decode", 3, tmp_path)
    assert not report.passed and report.properties == []
    assert report.error == "impl is not callable (got int 3)"
    assert "not run: impl is not callable" in report.summary()
    with pytest.raises(AssertionError, match="impl is not callable"):
        report.raise_for_failures()


def test_signature_that_cannot_take_upstreams_arguments(tmp_path) -> None:
    def wrong(q, k, v):
        return q
    report = run("sparse/paged_decode", wrong, tmp_path)
    assert report.error is not None and "does not take upstream's argument(s) `unified_kv`" in report.error

    def needs_more(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale, block_size):
        return q
    report = run("sparse/paged_decode", needs_more, tmp_path)
    assert "requires argument(s) upstream does not pass: `block_size`" in report.error


def test_wrong_return_type_and_shape(tmp_path) -> None:
    def returns_list(**kw):
        return [impls.paged_decode(**kw)]
    report = run("sparse/paged_decode", returns_list, tmp_path, properties="differential")
    f = report.failures[0]
    assert f.failure_class == "bad-return" and "returned a list of 1" in f.message

    def returns_transposed(*args, **kw):
        return impls.paged_decode(*args, **kw).transpose(0, 1).contiguous()
    report = run("sparse/paged_decode", returns_transposed, tmp_path, properties="differential", max_findings=3)
    # Several findings: the tuple of (out, lse) has no transpose (crashed), a transposed `out` of
    # the wrong shape (bad-return), and T == H, where the shape is right and the values are not.
    by_class = {f.failure_class: f for f in report.failures}
    f = by_class["bad-return"]
    assert "returned `out` of shape" in f.message
    assert {"crashed", "wrong-values"} <= set(by_class), report.summary()

    def returns_a_copy(*args, **kw):  # upstream returns the caller's own buffers
        out, state = impls.packed_decode(*args, **kw)
        return out.clone(), state
    report = run("kda/packed_decode", returns_a_copy, tmp_path, properties="differential")
    assert report.failures[0].failure_class == "bad-return"
    assert "none of the caller's buffers" in report.failures[0].message


def test_a_final_state_narrower_than_upstreams_is_a_bad_return(tmp_path) -> None:
    # A bf16 final state judged at fp32's floor would read as wrong values; the report names the dtype.
    def recurrent(*args, **kwargs):
        out, final = impls.recurrent(*args, **kwargs)
        return out, None if final is None else final.to(torch.bfloat16)
    report = run("kda/recurrent", recurrent, tmp_path, properties="differential", cases=60)
    assert report.failures and all(f.failure_class == "bad-return" for f in report.failures), report.summary()
    assert any("returned `final_state` as torch.bfloat16, which does not hold every torch.float32 value" in f.message
               for f in report.failures), report.summary()

    def wider(*args, **kwargs):  # a wider final state is the implementation's choice
        out, final = impls.recurrent(*args, **kwargs)
        return out, None if final is None else final.to(torch.float64)
    assert run("kda/recurrent", wider, tmp_path, properties="differential", cases=60).passed


def test_hang_is_timed_out_and_the_campaign_goes_on(tmp_path) -> None:
    release = threading.Event()

    def hangs_sometimes(*args, **kw):
        if kw["q"].shape[0] > 1:
            release.wait(60)
        return impls.paged_decode(*args, **kw)
    try:
        report = run("sparse/paged_decode", hangs_sometimes, tmp_path, case_timeout=0.5)
    finally:
        release.set()
    kinds = {p.name.split("/")[2]: p for p in report.properties}
    assert len(kinds) == 3, "every property ran and is in the report"
    assert kinds["differential"].failure.failure_class == "timed-out"
    assert "no answer within 0.5 s" in kinds["differential"].failure.message


def test_exceptions_are_classified(tmp_path) -> None:
    def rejects(*args, **kw):
        raise ValueError("`q` must be contiguous.")
    f = run("sparse/paged_decode", rejects, tmp_path, properties="differential").failures[0]
    assert f.failure_class == "rejected-valid-call" and "`q` must be contiguous." in f.message

    def typo(*args, **kw):
        return kw["no_such_argument"]
    f = run("sparse/paged_decode", typo, tmp_path, properties="differential").failures[0]
    assert f.failure_class == "crashed" and "KeyError" in f.message

    def cuda_error(*args, **kw):  # a CUDA error as torch reports it, on a device that stays usable
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    f = run("sparse/paged_decode", cuda_error, tmp_path, properties="differential").failures[0]
    assert f.failure_class == "crashed" and "illegal memory access" in f.message

    def unsupported(*args, **kw):
        raise NotImplementedError("head dim 16")
    report = run("sparse/paged_decode", unsupported, tmp_path, properties="differential", cases=10)
    [p] = report.properties
    assert not p.passed and p.cases == 0 and p.discarded > 0
    assert p.failure.failure_class == "not-exercised" and p.verdict == "not exercised"
    assert "gave up" in p.failure.details and "NotImplementedError: head dim 16" in p.failure.details
    assert p.declined > 0 and not p.findings


def test_contract_messages_can_be_required(tmp_path) -> None:
    def paraphrases(*args, **kw):
        try:
            return impls.with_contract("kda/replayssm_decode", impls.replayssm_decode)(*args, **kw)
        except ValueError as e:
            raise ValueError(f"bad input ({e})") from None
    loose = run("kda/replayssm_decode", paraphrases, tmp_path, properties=["contract"])
    assert loose.passed, loose.summary()
    strict = run("kda/replayssm_decode", paraphrases, tmp_path, properties=["contract"], contract_messages=True)
    assert strict.failures[0].failure_class == "wrong-message"
    assert "upstream raises ValueError: " in strict.failures[0].message


def test_signature_without_a_kparity_keyword_is_adapted(tmp_path) -> None:
    # V-base prefill: no return_lse, no replicated_logit_shift (sparse_attention.md A.2). Calls that
    # ask for lse are run without it; calls with a shift are outside what it can be called with:
    # redrawn, and counted in the coverage.
    def v_base(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend, kv_indptr_extend,
               attn_sink, softmax_scale):
        return impls.paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend,
                                   kv_indptr_extend, attn_sink, softmax_scale)
    report = run("sparse/paged_prefill", v_base, tmp_path, properties="differential", cases=60)
    assert report.passed, report.summary()
    p = report.properties[0]
    assert p.buckets.get("no-lse", 0) + p.buckets.get("lse", 0) > 0
    assert p.cases == 60 and p.discarded == 0
    [(reason, n)] = p.coverage.reasons.items()  # shifted calls
    assert reason.startswith("signature") and n == p.coverage.outside > 0
    assert 0.5 < p.coverage.share < 1.0 and p.coverage.drawn == p.coverage.inside + p.coverage.outside


@pytest.mark.parametrize("kw, match", [
    (dict(profile="tf32"), "unknown profile 'tf32'"),
    (dict(cases=0), "cases must be a positive int"),
    (dict(properties=["nope"]), "unknown property 'nope'"),
    (dict(device="mps"), "device must be 'cpu' or 'cuda"),
    (dict(shapes="huge"), "shapes must be 'small' or 'large'"),
])
def test_bad_options_raise(kw, match, tmp_path) -> None:
    opts = dict(device="cpu", corpus=tmp_path) | kw
    with pytest.raises(ValueError, match=match):
        check_implementation("sparse/paged_decode", impls.paged_decode, **opts)
    with pytest.raises(ValueError, match="unknown op 'sparse/nope'"):
        check_implementation("sparse/nope", impls.paged_decode, device="cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_cuda_device_without_cuda_says_so() -> None:
    with pytest.raises(RuntimeError, match="torch sees no CUDA device"):
        check_implementation("sparse/paged_decode", impls.paged_decode, device="cuda")


@pytest.mark.gpu
def test_real_cuda_fault_is_a_crash_and_the_report_survives(tmp_path) -> None:
    # A device-side assert poisons the CUDA context for the whole process: run it in its own.
    script = textwrap.dedent(f"""
        import torch
        from kparity.fuzz import check_implementation
        from kparity.testing import impls
        def faults(*args, **kw):
            q = kw["q"]
            q[torch.tensor([10**9], device=q.device)] += 1  # out-of-range index: device-side assert
            return impls.paged_decode(*args, **kw)
        r = check_implementation("sparse/paged_decode", faults, device="cuda", cases=20, corpus={str(tmp_path)!r})
        print("CLASS", r.failures[0].failure_class)
        print("MESSAGE", r.failures[0].message)
        print("PROPERTIES", len(r.properties))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert "CLASS crashed" in out.stdout, out.stdout + out.stderr
    assert "PROPERTIES 3" in out.stdout


def test_the_plugin_header_ships_with_the_package() -> None:
    import os

    from kparity.fuzz import include_dir
    header = os.path.join(include_dir(), "kparity", "impl_abi.h")
    assert os.path.isfile(header)
    assert "KPARITY_IMPL_ABI_VERSION" in open(header, encoding="utf-8").read()
