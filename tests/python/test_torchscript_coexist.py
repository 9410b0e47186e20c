"""kparity and TorchScript in one process (issue 23, defect 1).

On the H200 (torch 2.11 from pip) a process that imported kparity and then reached TorchScript died:
`torch.jit.script` builds a `SourceRangeFactory`, whose constructor formats the file name through a
`std::stringstream`; libstdc++'s `~basic_stringstream` then called a `std::locale::~locale()` that
`_kparity.so` defined and exported, and `free()` aborted. Each scenario runs in a subprocess so that a
crash is a failed test with its exit status, not a dead pytest.

On this CPU machine (Debian's torch, the extension built by the same g++ as the system libstdc++, no
static libstdc++ linked in) these scenarios may pass even with the defect present; the CPU guard is
tests/python/test_symbols.py, which reads the extension's exported symbols. These run the exact path of
the H200 backtrace wherever the suite runs, the GPU machine included.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# The backtrace's path (SourceRangeFactory with a file name: maybeConvertToString's stringstream),
# then the ordinary one: torch.jit.script of a function taking a string, run.
SCRIPT = textwrap.dedent(
    """
    {imports}
    factory = torch._C._jit_tree_views.SourceRangeFactory("x = 1\\n", "kparity_probe.py", 1, 0)
    where = factory.make_range(1, 0, 5)
    assert where.start == 0 and "kparity_probe.py" in str(where)

    def pick(x: torch.Tensor, how: str) -> torch.Tensor:
        if how == "double":
            return x * 2
        return x + 1

    scripted = torch.jit.script(pick)
    assert scripted(torch.ones(2), "double").tolist() == [2.0, 2.0]
    assert scripted(torch.ones(2), "inc").tolist() == [2.0, 2.0]
    assert kparity.explain("kda-g-cache-dtype").id == "066bd06e9ab538bd"
    print("kparity-torchscript-ok")
    """
)


@pytest.mark.parametrize("imports", ["import kparity\nimport torch", "import torch\nimport kparity"],
                         ids=["kparity-first", "torch-first"])
def test_torchscript_runs_after_importing_kparity(imports: str, tmp_path: Path) -> None:
    script = tmp_path / "probe.py"  # a file: torch.jit.script reads the function's source
    script.write_text(SCRIPT.format(imports=imports))
    proc = subprocess.run([sys.executable, "-X", "faulthandler", str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "kparity-torchscript-ok" in proc.stdout, (
        f"exit status {proc.returncode} (negative: killed by that signal)\n{proc.stdout}\n{proc.stderr[-4000:]}"
    )
