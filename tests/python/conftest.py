"""Shared fixtures. GPU tests carry the marker `gpu` and skip with a visible reason without a device."""
from __future__ import annotations

import pytest

from kp_helpers import has_cuda


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA device and kparity's kernels")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if has_cuda():
        return
    skip = pytest.mark.skip(reason="skipped: no CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
