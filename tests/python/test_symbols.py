"""The installed extension exports its module entry point and nothing else (issue 23, defect 1).

On the H200 (Ubuntu, torch 2.11 from pip) `pytest tests/python` aborted at collection: libstdc++'s
`~basic_stringstream`, reached from TorchScript, called `std::locale::~locale()` defined and exported
by `_kparity.so`, which freed the classic locale. Python loads `_kparity` before libstdc++.so.6 when
kparity is imported first, so libstdc++'s own calls bind to whatever the extension exports. Before the
fix the extension exported 1,077 dynamic symbols on the CPU machine (568 mentioning `std::`: weak
template instances of kparity's static libraries such as `basic_stringbuf::~basic_stringbuf()` and
`basic_string::_M_replace`, 20 of them also defined by libstdc++.so.6), plus fmt, nlohmann,
nanobind and kparity:: symbols. These tests read the built `.so` itself, so they guard every build
(CPU or GPU, reuse or full), whatever the compiler and the libraries linked in.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import kparity
from kparity import _kparity

EXTENSION = Path(_kparity.__file__)
FUZZ_HOST = Path(kparity.__file__).parent / "bin" / "kparity-fuzz-host"
# Linker-defined markers some toolchains leave in .dynsym; none of them is code another object can bind to.
LINKER_MARKERS = {"_init", "_fini", "__bss_start", "_edata", "_end"}


def _binutils(tool: str) -> str:
    path = shutil.which(tool)
    assert path, f"{tool} (binutils) is needed to read {EXTENSION.name}; install binutils (build-essential)"
    return path


def defined_dynamic_symbols(path: Path) -> list[str]:
    """`nm -D --defined-only` of `path`: the symbols it offers to other objects, demangled."""
    out = subprocess.run([_binutils("nm"), "-D", "--defined-only", "-C", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]


def needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of `path` (the shared libraries it links)."""
    out = subprocess.run([_binutils("readelf"), "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return [line.rsplit("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_extension_exports_only_its_entry_point() -> None:
    exported = [s for s in defined_dynamic_symbols(EXTENSION) if s not in LINKER_MARKERS]
    leaked = [s for s in exported if s != "PyInit__kparity"]
    std = [s for s in leaked if "std::" in s]
    assert "PyInit__kparity" in exported, exported
    assert not leaked, (
        f"{EXTENSION.name} exports {len(leaked)} symbols besides PyInit__kparity ({len(std)} mention std::); "
        f"libstdc++ and torch bind to them when kparity is imported first. First ones: {leaked[:12]}"
    )


def test_extension_uses_the_shared_libstdcxx() -> None:
    # The H200 build carried its own copy of libstdc++'s locale code (the loader brought
    # libstdc++.so.6 in only as libfmt's dependency): a private libstdc++ beside the process's shared
    # one splits its global state (the classic locale) between two copies, hidden or not.
    libs = needed(EXTENSION)
    assert "libstdc++.so.6" in libs, (
        f"{EXTENSION.name} does not link libstdc++.so.6 (it links {libs}): it was built with a static "
        "libstdc++ (-static-libstdc++ in LDFLAGS/CXXFLAGS or the toolchain, or libstdc++.a found "
        "before libstdc++.so); rebuild against the shared one"
    )


@pytest.mark.skipif(not FUZZ_HOST.exists(), reason="skipped: this build has no kparity-fuzz-host (no RapidCheck)")
def test_fuzz_host_uses_the_shared_libstdcxx() -> None:
    # An executable exports the weak std:: template instances that libstdc++.so.6 also defines (every
    # g++-built program does; the executable comes first in the lookup scope by design, and
    # libstdc++ keeps instances from its own or older headers compatible). What must not happen is a
    # static libstdc++ in it next to the shared one its libraries (libfmt) load.
    libs = needed(FUZZ_HOST)
    assert "libstdc++.so.6" in libs, f"kparity-fuzz-host links {libs}: a static libstdc++"
    assert not [s for s in defined_dynamic_symbols(FUZZ_HOST) if s.startswith("std::locale::")]
