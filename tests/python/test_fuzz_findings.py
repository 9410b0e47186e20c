"""check_implementation's declared domains, several findings per run, known findings and shape
presets (issue 24 items 1 and 2), on plain-PyTorch implementations with planted slips
(kparity.testing.impls.planted_findings) on the CPU."""
from __future__ import annotations

import ast
import json
import re

import pytest
import torch

from kparity.fuzz import CallInfo, check_implementation
from kparity.testing import impls
from kparity.testing.impls import planted_findings as pf

N = 150  # judged cases per property: enough for every slip below to show (each shows within ~40)


def run(op, impl, tmp_path, **kw):
    kw.setdefault("cases", N)
    kw.setdefault("properties", "differential")
    return check_implementation(op, impl, device="cpu", corpus=tmp_path, **kw)


def replay(op, impl, finding, tmp_path):
    """Runs a finding's repro line (its seed, case count and the findings excluded before it)."""
    line = finding.repro
    prop = re.search(r"properties=\['([^']+)'\]", line).group(1)
    seed = int(re.search(r"seed=(0x[0-9a-f]+)", line).group(1), 16)
    cases = int(re.search(r"cases=(\d+)", line).group(1))
    known = ast.literal_eval(re.search(r"known=(\[.*?\])(?:, max_findings)", line).group(1))
    assert "max_findings=1" in line
    return check_implementation(op, impl, device="cpu", corpus=tmp_path, properties=[prop], seed=seed, cases=cases,
                                known=known, max_findings=1)


def test_two_slips_on_two_tensors_are_both_reported_by_one_run(tmp_path) -> None:
    op, impl = pf.TWO_TENSOR_SLIPS
    report = run(op, impl, tmp_path)
    [p] = report.properties
    assert not p.passed and p.verdict == "2 findings", report.summary()
    assert [f.failure_class for f in p.findings] == ["wrong-values", "wrong-values"]
    assert {f.tensor for f in p.findings} == {"out", "lse"}
    assert len({f.id for f in p.findings}) == 2 and all(re.fullmatch(r"[0-9a-f]{8}", f.id) for f in p.findings)
    for f in p.findings:
        assert f.saved and f.saved.endswith(".safetensors")
        assert f.signature.startswith(f"wrong-values|{f.tensor}|values|")
        again = replay(op, impl, f, tmp_path)
        [g] = again.properties[0].findings
        assert g.signature == f.found_as and g.message == f.message
    # the second was found with the first excluded, and its recurrences counted
    assert p.known_hits.get(p.findings[0].id, 0) > 0
    assert p.failure == p.findings[0] and report.failures == list(p.findings)
    with pytest.raises(AssertionError, match=p.findings[1].id):
        report.raise_for_failures()


def test_a_crash_and_a_numeric_slip_are_both_reported(tmp_path) -> None:
    op, impl = pf.CRASH_AND_SLIP
    report = run(op, impl, tmp_path)
    p = report.properties[0]
    classes = [f.failure_class for f in p.findings]
    assert classes[0] == "crashed" and "ZeroDivisionError" in p.findings[0].message, report.summary()
    wrong = [f for f in p.findings if f.failure_class == "wrong-values"]
    assert wrong and all("duplicate" in f.edges for f in wrong), report.summary()


def test_known_first_finding_makes_the_run_report_the_second(tmp_path) -> None:
    op, impl = pf.TWO_TENSOR_SLIPS
    first, second = run(op, impl, tmp_path).properties[0].findings
    # by id (resolved when the run meets it: counted, not reported) ...
    by_id = run(op, impl, tmp_path, known=[first.id]).properties[0]
    assert [f.signature for f in by_id.findings] == [second.signature], by_id
    assert by_id.known_hits.get(first.id, 0) >= 1
    # ... or as the Failure itself (its signature: excluded from the start)
    by_object = run(op, impl, tmp_path, known=[first]).properties[0]
    assert [f.signature for f in by_object.findings] == [second.signature]
    assert by_object.known_hits.get(first.id, 0) > 0
    # both known: nothing left to report, the recurrences are counted, the budget is still judged
    both = run(op, impl, tmp_path, known=[first, second.signature])
    assert both.passed, both.summary()
    both.raise_for_failures()
    p = both.properties[0]
    assert p.cases >= N and not p.findings and set(p.known_hits) == {first.id, second.id}
    assert "known hits" in both.summary()


def test_supports_keeps_calls_outside_the_domain_away_from_the_implementation(tmp_path) -> None:
    calls = []

    def impl(*args, **kw):
        calls.append(kw["q"].shape[-1])
        return pf.crashes_below_d16(*args, **kw)
    report = run("sparse/paged_decode", impl, tmp_path, supports=pf.d_at_least_16)
    assert report.passed, report.summary()
    p = report.properties[0]
    assert p.cases == N and min(calls) >= 16
    c = p.coverage
    assert 0.3 < c.share < 0.95 and c.drawn == c.inside + c.outside and c.inside >= N
    assert c.outside == sum(c.reasons.values()) and all(re.fullmatch(r"D = \d+ < 16", r) for r in c.reasons)
    assert f"coverage {100 * c.share:.0f}%" in report.summary()
    data = report.to_json()["properties"][0]["coverage"]
    assert data["drawn"] == c.drawn and data["outside"] == c.outside and data["share"] == pytest.approx(c.share)
    # without the domain the planted crash is the finding
    crash = run("sparse/paged_decode", pf.crashes_below_d16, tmp_path).properties[0]
    assert [f.failure_class for f in crash.findings] == ["crashed"] and crash.coverage.share == 1.0


def test_a_wrappers_own_rejection_is_reported_once_and_the_numerics_still_judged(tmp_path) -> None:
    op, impl = pf.REJECTS_STRIDED_Q_AND_DEDUPES
    report = run(op, impl, tmp_path)
    p = report.properties[0]
    rejections = [f for f in p.findings if f.failure_class == "rejected-valid-call"]
    assert len(rejections) == 1 and "`q` must be contiguous." in rejections[0].message, report.summary()
    assert rejections[0].signature == "rejected-valid-call||||ValueError: `q` must be contiguous."
    assert p.known_hits[rejections[0].id] > 0  # later rejections counted, not reported
    assert p.cases >= N  # cases judged on the calls the wrapper accepts
    wrong = [f for f in p.findings if f.failure_class == "wrong-values"]
    assert wrong and "duplicate" in wrong[0].edges


def test_declined_calls_are_redrawn_and_counted(tmp_path) -> None:
    def declines_f16(*args, **kw):
        if kw["q"].dtype == torch.float16:
            raise NotImplementedError("fp16")
        return impls.paged_decode(*args, **kw)
    report = run("sparse/paged_decode", declines_f16, tmp_path, cases=60)
    p = report.properties[0]
    assert report.passed and p.cases == 60 and p.declined > 0 and p.discarded == 0, report.summary()
    assert f"{p.declined} declined" in report.summary()


@pytest.mark.parametrize("op, preset, want", [
    ("sparse/paged_decode", "deepseek-v4", {"D": {512}, "H": {64, 128}}),
    ("sparse/paged_prefill", "deepseek-v4", {"D": {512}, "H": {64, 128}}),
    ("kda/replayssm_decode", "kimi-linear", {"K": {128}, "V": {128}, "H": {32}, "HV": {32}, "L": {16}}),
    ("kda/recurrent", "kimi-linear", {"K": {128}, "V": {128}, "H": {32}, "HV": {32}}),
])
def test_presets_draw_the_models_shapes(op, preset, want, tmp_path) -> None:
    seen: list[CallInfo] = []

    def record(call: CallInfo) -> bool:
        seen.append(call)
        return True
    report = check_implementation(op, impls.CORRECT[op], device="cpu", cases=2, properties="differential",
                                  preset=preset, supports=record, corpus=tmp_path)
    assert report.passed, report.summary()
    assert len(seen) >= 2 and all(c.preset == preset for c in seen)
    for c in seen:
        for dim, values in want.items():
            assert c.dims[dim] in values, (dim, c.dims)
        if op.startswith("sparse/"):
            assert c.dims["T"] <= 2 and c.dtype("q") == torch.bfloat16 and c.dtype("attn_sink") == torch.float32
        else:
            act = c.dtype("mixed_qkv") if "mixed_qkv" in c else c.dtype("q")
            assert act == torch.bfloat16 and c.dtype("initial_state") in (torch.float32, None)
            assert c.dims.get("T", 0) <= 8


def test_preset_and_supports_misuse_is_reported(tmp_path) -> None:
    with pytest.raises(ValueError, match="preset 'kimi-linear' has shapes for kda/\\* only, not sparse/paged_decode"):
        run("sparse/paged_decode", impls.paged_decode, tmp_path, preset="kimi-linear")
    with pytest.raises(ValueError, match="unknown preset 'gpt'"):
        run("sparse/paged_decode", impls.paged_decode, tmp_path, preset="gpt")
    r = run("sparse/paged_decode", impls.paged_decode, tmp_path, supports=lambda c: None)
    assert r.error and "supports= must return True, False or a reason string" in r.error

    def broken(call):
        raise KeyError("X")
    r = run("sparse/paged_decode", impls.paged_decode, tmp_path, supports=broken)
    assert not r.passed and ".broken raised KeyError" in r.error


def test_report_json_carries_the_findings(tmp_path) -> None:
    op, impl = pf.TWO_TENSOR_SLIPS
    path = tmp_path / "r.json"
    report = run(op, impl, tmp_path, report=path, max_findings=1)
    data = json.loads(path.read_text())
    [p] = data["properties"]
    assert len(p["findings"]) == 1 and p["stopped"].startswith("1 findings")
    f = p["findings"][0]
    for key in ("signature", "id", "display", "class", "tensor", "edges", "message", "seed", "repro", "saved",
                "excluded_before", "examples"):
        assert key in f, key
    assert f["id"] == report.properties[0].findings[0].id
    assert set(p["coverage"]) >= {"drawn", "inside", "outside", "share", "judged", "declined", "known_hits"}


@pytest.mark.parametrize("op, pins, want", [
    ("kda/replayssm_decode", {"K": 32, "V": 32, "H": 1, "HV": 2, "act": torch.bfloat16, "state": "f32", "L": [4, 17]},
     {"K": {32}, "V": {32}, "H": {1}, "HV": {2}, "L": {4, 17}}),
    ("kda/recurrent", "K=16|32,V=16,H=2,HV=4,act=f16", {"K": {16, 32}, "V": {16}, "H": {2}, "HV": {4}}),
    ("sparse/paged_prefill", {"D": [32, 64], "H": 2, "dtype": "bf16", "sink": "f32"}, {"D": {32, 64}, "H": {2}}),
])
def test_pins_hold_the_compile_classes_and_draw_the_rest(op, pins, want, tmp_path) -> None:
    seen: list[CallInfo] = []

    def record(call: CallInfo) -> bool:
        seen.append(call)
        return True
    report = run(op, impls.CORRECT[op], tmp_path, cases=40, pins=pins, supports=record)
    assert report.passed, report.summary()
    assert len(seen) >= 40
    for dim, values in want.items():
        assert {c.dims[dim] for c in seen} == values, (dim, {c.dims[dim] for c in seen})
    act = "q" if op != "kda/replayssm_decode" else "mixed_qkv"
    assert len({c.dtype(act) for c in seen}) == 1
    assert len({c.dims["T"] if "T" in c.dims else c.dims["B"] for c in seen}) > 2  # the rest is still drawn


def test_a_pinned_runs_repro_carries_the_pins(tmp_path) -> None:
    op, impl = pf.TWO_TENSOR_SLIPS
    report = run(op, impl, tmp_path, pins={"D": 32, "dtype": "f16"}, max_findings=1)
    [f] = report.properties[0].findings
    assert "pins='D=32,dtype=f16'" in f.repro, f.repro


def test_pins_misuse_is_reported(tmp_path) -> None:
    with pytest.raises(ValueError, match="pins: unknown key 'Q' for kda/\\*"):
        run("kda/recurrent", impls.recurrent, tmp_path, pins={"Q": 1}, cases=2)
    with pytest.raises(ValueError, match="pins= and preset='kimi-linear' do not go together"):
        run("kda/recurrent", impls.recurrent, tmp_path, pins={"K": 32}, preset="kimi-linear", cases=2)
    with pytest.raises(TypeError, match="takes sizes"):
        run("kda/recurrent", impls.recurrent, tmp_path, pins={"K": 3.5}, cases=2)


def test_an_int_scalar_reaches_the_implementation_as_an_int(tmp_path) -> None:
    # fla's chunk_kda calls chunk_size.bit_length(): the host sends scalars as floats, and one whose
    # upstream default is an int must arrive as an int (found on the H200, 2026-12-02: every chunk_kda
    # call with chunk_size crashed with "'float' object has no attribute 'bit_length'").
    import kparity
    seen = []

    def chunk_kda(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
                  use_qk_l2norm_in_kernel=False, cu_seqlens=None, **kw):
        if "chunk_size" in kw:
            seen.append(kw["chunk_size"].bit_length())
        r = kparity.kda.chunk.reference(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                                        output_final_state=output_final_state, cu_seqlens=cu_seqlens,
                                        use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, precision="faithful", **kw)
        return r["out"], r.get("final_state")
    report = run("kda/chunk", chunk_kda, tmp_path, cases=40)
    assert report.passed, report.summary()
    assert seen, "no call passed chunk_size"
