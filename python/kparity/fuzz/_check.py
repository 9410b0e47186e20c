"""check_implementation: kparity's fuzz campaign against a Python callable."""
from __future__ import annotations

import inspect
import json
import os
import tempfile
from typing import Any, Callable, Iterable

import torch

from .._ops_table import REQUIRED, op_row
from ._case import Case, CaseRunner, returned_outputs, stop_worker
from ._domain import ask
from ._host import Host, HostError
from ._report import Failure, Report, build_report

#: The precision profiles of the faithful model (reference/precision_profile.hpp); "sglang-triton" is
#: tf32-dot's other name (what it models: sglang's Triton ReplaySSM decode, its TF32 reconstruction
#: dot and k_cache stored through out's dtype); "fla-chunk" is fla's chunk_kda (kda/chunk's faithful
#: model runs fla's chunked pipeline with the intermediates it stores in the inputs' dtypes);
#: "kparity-chunk" is kparity's own chunked kda/chunk kernel (16-token chunks, TF32 tensor-core operands).
PROFILES: tuple[str, ...] = ("faithful", "tf32-dot", "sglang-triton", "fla-chunk", "kparity-chunk")
#: The property kinds; the first three run by default, "contract" on request.
KINDS: tuple[str, ...] = ("differential", "differential-special-values", "deterministic", "contract")
DEFAULT_KINDS: tuple[str, ...] = KINDS[:3]
#: Shape presets (fuzz/generators/presets.hpp): the generators' own "small" and "large", and real
#: models' per-token shapes, each for the op families it names.
PRESETS: dict[str, tuple[str, ...]] = {"small": (), "large": (), "deepseek-v4": ("sparse",), "kimi-linear": ("kda",)}

FN = "kparity.fuzz.check_implementation"
#: kparity fuzz's default campaign seed (fuzz/campaign/runner.hpp), also the default here.
DEFAULT_SEED = 0x6b70617269747931


def _name_of(impl: Any) -> str:
    name = getattr(impl, "__qualname__", None) or getattr(impl, "__name__", None) or type(impl).__name__
    module = getattr(impl, "__module__", None)
    return f"{module}.{name}" if module and module != "__main__" else name


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
    return out.strip("-") or "impl"


def _accepted(impl: Callable[..., Any], row: Any) -> tuple[frozenset[str] | None, str | None]:
    """The parameter names impl takes (None: **kwargs), or why it cannot be called the upstream way."""
    try:
        sig = inspect.signature(impl)
    except (TypeError, ValueError):
        return None, None  # no signature to read (a builtin): call it and see
    params = sig.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None, None
    names = frozenset(p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                               inspect.Parameter.KEYWORD_ONLY))
    upstream = {p.name for p in row.params}
    passed = [p.name for p in row.params if p.name not in returned_outputs(row)]
    required = [p.name for p in row.params if not p.keyword_only and p.default is REQUIRED]
    missing = [n for n in required if n not in names]
    extra = [p.name for p in params if p.default is inspect.Parameter.empty and p.name not in upstream
             and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    positional_only = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    if missing:
        return None, (f"impl {_name_of(impl)}{sig} does not take upstream's argument(s) "
                      f"{', '.join('`' + n + '`' for n in missing)} of {row.op} (called as impl(**kwargs) with "
                      f"upstream's names: {', '.join(passed)})")
    if extra or positional_only:
        return None, (f"impl {_name_of(impl)}{sig} requires argument(s) upstream does not pass: "
                      f"{', '.join('`' + n + '`' for n in extra + positional_only)}")
    return names & upstream, None


def _kinds(properties: Iterable[str] | str | None, op: str) -> tuple[list[str], str]:
    """(kinds to build, one full property name to select or "")."""
    if properties is None:
        return list(DEFAULT_KINDS), ""
    if isinstance(properties, str):
        properties = [properties]
    kinds, full = [], ""
    for p in properties:
        if p == "all":
            kinds.extend(KINDS)
        elif p in KINDS:
            kinds.append(p)
        elif p.startswith(op + "/") and p.split("/")[2] in KINDS + ("rejects-hostile-calls",):
            kind = p.split("/")[2]
            kinds.append("contract" if kind == "rejects-hostile-calls" else kind)
            full = p
        else:
            raise ValueError(f"{FN}: unknown property {p!r} (kinds: {', '.join(KINDS)}, 'all', or a full name "
                             f"such as '{op}/differential/<impl>')")
    return list(dict.fromkeys(kinds)), full


def _device(device: str | torch.device) -> torch.device:
    d = torch.device(device)
    if d.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(f"{FN}: device={str(device)!r} but torch sees no CUDA device "
                               f"(torch.cuda.is_available() is False); pass device='cpu'")
        if d.index is None:
            d = torch.device("cuda", torch.cuda.current_device())
    elif d.type != "cpu":
        raise ValueError(f"{FN}: device must be 'cpu' or 'cuda[:N]', got {str(device)!r}")
    return d


def check_implementation(op: str, impl: Callable[..., Any], *, device: str | torch.device = "cuda",
                         cases: int | None = None, time: float | None = None, seed: int | None = None,
                         profile: str = "faithful", properties: Iterable[str] | str | None = None,
                         corpus: str | os.PathLike[str] | None = None, report: str | os.PathLike[str] | None = None,
                         case_timeout: float | None = 30.0, contract_messages: bool = False,
                         shapes: str = "small", max_size: int = 100, shrink: bool = True,
                         name: str | None = None, supports: Callable[[Any], Any] | None = None,
                         preset: str | None = None, max_findings: int = 5,
                         known: Iterable[str | Failure] | None = None,
                         first_call_timeout: float | None = None,
                         pins: dict[str, Any] | str | None = None, explain_seconds: float = 3.0) -> Report:
    """Fuzzes ``impl``, an implementation of ``op`` with upstream's calling convention, against
    kparity's references, and returns a Report (nothing is raised for what ``impl`` does; call
    ``report.raise_for_failures()`` to fail a test).

    Calls come from kparity's generators (every edge bucket, special values, strided layouts),
    materialised on ``device`` inside guard bands with pure outputs poisoned, and ``impl`` is called
    as ``impl(**kwargs)`` with upstream's argument names; state and rings are updated in place, and
    the outputs upstream returns are taken from the return value. Properties (``properties``: kinds
    or full names; default the first three):

    * ``differential`` / ``differential-special-values``: every written tensor meets the harness's
      rule ``max|impl - oracle| <= max(2 * max|faithful - oracle|, floor)``;
    * ``deterministic``: the same call twice gives the same bits;
    * ``contract`` (opt-in): each catalog mutation of an upstream check makes ``impl`` raise (with
      upstream's message and class too when ``contract_messages``).

    Budget: ``cases`` passing cases per property or ``time`` seconds for the whole campaign
    (default 100 cases); ``seed`` (default kparity's fixed campaign seed). ``profile``: the faithful
    model's precision profile ("faithful"; "tf32-dot" for kernels whose ReplaySSM reconstruction
    dot runs in TF32; "fla-chunk" for a chunked kda/chunk that, like fla's chunk_kda, stores its
    intermediates in the inputs' dtype; "kparity-chunk" for kparity's own chunked kda/chunk kernel,
    whose tensor-core operands are TF32). ``case_timeout``: seconds per call (None: no limit; the call then runs on this
    thread). ``shapes``: "small" (default: the generators' own sizes, K and V up to 64, fast) or
    "large" (kernel-sized: K and V up to 256, tile edges 31/32/33, many slots; the references then
    dominate the time per case). Failing calls are
    saved as ``kparity run`` dumps under ``corpus`` (default a ``kparity-fuzz-corpus`` folder in the
    temporary directory); ``report``: also write the JSON report there.

    The implementation's domain and the findings:

    * ``supports(call)``: the declared domain. ``call`` is a ``CallInfo`` (shapes, dtypes, strides,
      scalars, flags and the op's named sizes in ``call.dims``; no values); return True, or False
      or a reason string for a call outside. Calls outside are never sent: another is drawn in
      their place, and each property reports its coverage (the share of drawn calls inside, with
      the counts per reason). ``NotImplementedError`` from ``impl`` still declines one call (counted
      as "declined").
    * ``preset``: a shape preset (``PRESETS``): "small", "large" (as ``shapes``), "deepseek-v4"
      (sparse ops: D = 512, H 64 or 128, top-k 512 or 2048 plus the 128-row window, bf16, fp32 sink)
      or "kimi-linear" (KDA ops: K = V = 128, H = HV = 32, bf16 activations, fp32 state, ring 16).
      The real-model presets keep T small (1 to 4 tokens): their per-token shapes are real, and the
      fp64 oracle then runs tens of cases a minute, so give them a few dozen cases.
    * ``pins``: the compile classes of a JIT-compiled kernel (Triton compiles one per set of
      constexpr sizes and dtypes, seconds each): the sizes and dtypes to hold to the given values,
      e.g. ``{"K": 32, "V": 32, "H": 1, "HV": 2, "act": "bf16", "L": [4, 17]}`` (a list: one of its
      values per call; keys for sparse ops: D, H, dtype, sink; for KDA ops: H, HV, K, V, L, act,
      state, params, ring; for both: ``"layout": "compact"``, every tensor contiguous at offset 0, since
      Triton also compiles anew per pointer alignment and stride class), or the same as text
      ("K=32,V=32,L=4|17,layout=compact"). Everything else (token counts,
      batches, index lists, layouts, flags, values, edge buckets) is drawn as usual, so a small-shape
      run of a Triton kernel compiles a handful of kernels once and spends its time on cases. Not
      with a real-model preset (which fixes the shapes).
    * ``max_findings``: after a property fails and shrinks, the run goes on with a fresh sub-seed,
      excluding that finding's signature, and reports up to this many distinct findings per property
      (each shrunk, with its repro line and saved call). A rejection of valid calls is reported once,
      then such calls are redrawn (counted), so the numerics are still tested.
    * ``explain_seconds``: the budget of the explain step after each finding's shrink (0: off): the
      shrunk call is varied one parameter at a time (sizes, keys per token, dtype, layouts, sink,
      duplicates, ...) and each finding says which ones the failure needs and which are free
      (``Failure.explain``, ``Failure.explanation``); findings that need the same thing merge into one.
    * ``known``: accepted findings (their ``id`` or ``signature`` as a report prints them, or the
      Failure objects): excluded from the start, so the run digs for the next; recurrences are
      counted in ``known_hits``, never failures.
    * ``first_call_timeout``: the limit for the first call of each shape class (dtypes and sizes
      past the leading dim), where a JIT kernel compiles and autotunes; default ``case_timeout``.
    """
    row = op_row(op, FN)
    if profile not in PROFILES:
        raise ValueError(f"{FN}: unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    if cases is not None and (not isinstance(cases, int) or cases < 1):
        raise ValueError(f"{FN}: cases must be a positive int, got {cases!r}")
    if time is not None and not time > 0:
        raise ValueError(f"{FN}: time must be a positive number of seconds, got {time!r}")
    if shapes not in ("small", "large"):
        raise ValueError(f"{FN}: shapes must be 'small' or 'large', got {shapes!r}")
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"{FN}: unknown preset {preset!r} (known: {', '.join(PRESETS)})")
        if shapes != "small" and preset != shapes:
            raise ValueError(f"{FN}: pass shapes= or preset=, not both (got shapes={shapes!r}, preset={preset!r})")
        families = PRESETS[preset]
        if families and op.split("/")[0] not in families:
            raise ValueError(f"{FN}: preset {preset!r} has shapes for {', '.join(f + '/*' for f in families)} only, "
                             f"not {op}")
        if preset in ("small", "large"):
            shapes, preset = preset, None
    pins_text = _pins_text(pins)
    if pins_text and preset not in (None, "small", "large"):
        raise ValueError(f"{FN}: pins= and preset={preset!r} do not go together (the preset fixes the shapes)")
    if supports is not None and not callable(supports):
        raise TypeError(f"{FN}: supports must be a callable taking a CallInfo, got {type(supports).__name__}")
    if not isinstance(max_findings, int) or max_findings < 1:
        raise ValueError(f"{FN}: max_findings must be a positive int, got {max_findings!r}")
    if not isinstance(explain_seconds, (int, float)) or explain_seconds < 0:
        raise ValueError(f"{FN}: explain_seconds must be a non-negative number, got {explain_seconds!r}")
    if first_call_timeout is not None and not first_call_timeout > 0:
        raise ValueError(f"{FN}: first_call_timeout must be a positive number of seconds or None, "
                         f"got {first_call_timeout!r}")
    known_list = _known(known)
    if case_timeout is not None and not case_timeout > 0:
        raise ValueError(f"{FN}: case_timeout must be a positive number of seconds or None, got {case_timeout!r}")
    kinds, selected = _kinds(properties, op)
    dev = _device(device)
    label = name or _slug(_name_of(impl).rsplit(".", 1)[-1])
    base = Report(op, label, str(dev), profile)
    if not callable(impl):
        base.error = f"impl is not callable (got {type(impl).__name__} {impl!r:.80})"
        return _finish(base, report)
    accepted, problem = _accepted(impl, row)
    if problem:
        base.error = problem
        return _finish(base, report)
    runner = CaseRunner(row, impl, dev, accepted, case_timeout, first_call_timeout=first_call_timeout)
    the_seed = DEFAULT_SEED if seed is None else int(seed)
    folder = os.fspath(corpus) if corpus is not None else os.path.join(tempfile.gettempdir(), "kparity-fuzz-corpus")
    large = shapes == "large"
    if selected and selected.split("/")[-1] != label:
        raise ValueError(f"{FN}: property {selected!r} names another implementation than {label!r}")

    def repro(prop: str, chunk_seed: str, n: int, excluded: list[str] | None = None) -> str:
        extra = (f", shapes={shapes!r}" if shapes != "small" else "") + (f", preset={preset!r}" if preset else "")
        extra += f", pins={pins_text!r}" if pins_text else ""
        if supports is not None:
            extra += f", supports={_name_of(supports)}"
        if excluded is not None:
            extra += f", known={excluded!r}, max_findings=1"
        return (f"kparity.fuzz.check_implementation({op!r}, {_name_of(impl)}, device={str(dev)!r}, "
                f"properties=[{prop!r}], seed={chunk_seed}, cases={n}, profile={profile!r}{extra})")

    config = {"op": op, "name": label, "kinds": kinds, "accepted": sorted(accepted) if accepted is not None else None,
              "large": large, "on_device": dev.type == "cuda", "contract_messages": contract_messages,
              "profile": profile, "seed": hex(the_seed),
              "cases": cases if cases is not None or time is not None else 100, "seconds": time,
              "max_size": max_size, "shrink": shrink, "corpus": folder, "property": selected,
              "preset": preset or "", "pins": pins_text, "supports": supports is not None, "max_findings": max_findings,
              "known": known_list, "explain_seconds": float(explain_seconds)}
    host = Host(config)
    try:
        while True:
            header, payload = host.receive()
            if header["type"] == "case":
                host.send(*runner.run(Case(header, payload)))
            elif header["type"] == "supports":
                try:
                    inside, why = ask(supports, header["call"])
                except Exception as e:  # noqa: BLE001  (the caller's predicate failed: the campaign stops)
                    base.error = f"supports={_name_of(supports)} raised {type(e).__name__}: {e}"
                    return _finish(base, report)
                host.send({"type": "supports", "ok": inside, "reason": why})
            elif header["type"] == "done":
                raw, log = json.dumps(header["report"]), header["log"]
                break
            elif header["type"] == "error":
                raise ValueError(f"{FN}: {header['message']}")
            else:
                raise HostError(f"kparity-fuzz-host sent an unknown message {header.get('type')!r}")
    finally:
        host.close()
        stop_worker(runner)
    result = build_report(op, label, str(dev), profile, raw, log, repro)
    return _finish(result, report)


def _pins_text(pins: dict[str, Any] | str | None) -> str:
    """pins= in its text form (fuzz/generators/pins.hpp): "K=32,L=4|17"; the host checks the keys."""
    if pins is None:
        return ""
    if isinstance(pins, str):
        return pins.strip()
    if not isinstance(pins, dict):
        raise TypeError(f"{FN}: pins must be a dict or a 'key=value,...' string, got {type(pins).__name__}")
    items = []
    for key, value in pins.items():
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if not values:
            raise ValueError(f"{FN}: pins[{key!r}] is an empty list")
        text = []
        for v in values:
            if isinstance(v, torch.dtype):
                v = str(v).removeprefix("torch.")
            if isinstance(v, bool) or not isinstance(v, (int, str)):
                raise TypeError(f"{FN}: pins[{key!r}] takes sizes (int) or dtypes (str or torch.dtype), got {v!r}")
            text.append(str(v))
        items.append(f"{key}={'|'.join(text)}")
    return ",".join(items)


def _known(known: Iterable[str | Failure] | None) -> list[str]:
    """known= as the host takes it: signatures (text) or ids."""
    if known is None:
        return []
    if isinstance(known, (str, Failure)):
        known = [known]
    out = []
    for k in known:
        if isinstance(k, Failure):
            if not k.signature:
                raise ValueError(f"{FN}: known= got a Failure without a signature ({k.failure_class}: {k.message:.80})")
            out.append(k.signature)
        elif isinstance(k, str) and k:
            out.append(k)
        else:
            raise TypeError(f"{FN}: known= takes finding ids, signatures or Failure objects, got {k!r}")
    return out


def _finish(r: Report, path: str | os.PathLike[str] | None) -> Report:
    if path is not None:
        r.write(path)
    return r
