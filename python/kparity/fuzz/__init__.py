"""Fuzz your own implementation of a kparity op against kparity's references.

    from kparity.fuzz import check_implementation
    report = check_implementation("kda/replayssm_decode", my_replayssm_decode, device="cuda", cases=500)
    assert report.passed, report      # or report.raise_for_failures()

``impl`` is called with upstream's calling convention (argument names, in-place state and rings,
the outputs upstream returns), on calls drawn by kparity's C++ generators and judged by the C++
harness's differential rule; every failure carries its class (``FAILURE_CLASSES``), a one-line
repro and the shrunk call saved as a ``kparity run`` dump. ``supports=`` declares the
implementation's domain (a predicate on a ``CallInfo``), ``preset=`` draws a real model's shapes,
``pins=`` holds a JIT kernel's compile-relevant sizes, dtypes and layouts to a few shape classes, and a run reports up to ``max_findings`` distinct findings per property (``known=`` accepts some,
so that the run digs for the next). Examples of implementations, correct
and with planted bugs: ``kparity.testing.impls``. For C/C++/CUDA implementations:
``kparity fuzz --impl lib.so`` with the header in ``include_dir()``.
"""
from __future__ import annotations

import os

from ._check import DEFAULT_KINDS, KINDS, PRESETS, PROFILES, check_implementation
from ._domain import CallInfo, TensorInfo
from ._report import FAILURE_CLASSES, Coverage, Failure, Finding, PropertyResult, Report


def include_dir() -> str:
    """The folder holding kparity/impl_abi.h (the plugin ABI of `kparity fuzz --impl`), for
    ``-I``; the header includes <dlpack/dlpack.h> (Debian: libdlpack-dev)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = os.path.join(here, "include")
    if os.path.exists(os.path.join(installed, "kparity", "impl_abi.h")):
        return installed
    source = os.path.join(here, "..", "..", "abi", "include")  # running from a checkout
    return os.path.normpath(source)


__all__ = ["CallInfo", "Coverage", "DEFAULT_KINDS", "FAILURE_CLASSES", "Failure", "Finding", "KINDS", "PRESETS",
           "PROFILES", "PropertyResult", "Report", "TensorInfo", "check_implementation", "include_dir"]
