"""The campaign process, kparity-fuzz-host (python/fuzz/host_main.cpp), and its framing: each
message is a little-endian u64 length and a JSON header, then a u64 length and a binary payload."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import tempfile
from typing import IO, Any

ENV = "KPARITY_FUZZ_HOST"


def host_path() -> str:
    """The kparity-fuzz-host executable: $KPARITY_FUZZ_HOST, else the one installed in the package."""
    given = os.environ.get(ENV)
    if given:
        return given
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", "kparity-fuzz-host")


class HostError(RuntimeError):
    """The campaign process failed (it is kparity's, not the implementation's)."""


class Host:
    """One campaign: started with its configuration, then serving cases until it sends "done"."""

    def __init__(self, config: dict[str, Any]) -> None:
        path = host_path()
        if not os.access(path, os.X_OK):
            raise ImportError(
                f"kparity.fuzz: the campaign executable {path} is missing: this kparity was built without its "
                f"fuzz harness (it needs RapidCheck at build time: apt-get install -y librapidcheck-dev, then "
                f"reinstall), or set ${ENV}")
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self.send(config)

    def send(self, header: dict[str, Any], payload: bytes | bytearray | memoryview = b"") -> None:
        h = json.dumps(header).encode()
        stdin: IO[bytes] = self._proc.stdin  # type: ignore[assignment]
        try:
            stdin.write(struct.pack("<Q", len(h)) + h + struct.pack("<Q", len(payload)))
            if len(payload):
                stdin.write(payload)
            stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise HostError(f"kparity-fuzz-host stopped listening ({e}){self._tail()}") from None

    def receive(self) -> tuple[dict[str, Any], memoryview]:
        stdout: IO[bytes] = self._proc.stdout  # type: ignore[assignment]
        header = json.loads(self._read(stdout, struct.unpack("<Q", self._read(stdout, 8))[0]))
        payload = memoryview(self._read(stdout, struct.unpack("<Q", self._read(stdout, 8))[0]))
        return header, payload

    def _read(self, f: IO[bytes], n: int) -> bytes:
        data = f.read(n) if n else b""
        if len(data) != n:
            code = self._proc.poll()
            raise HostError(f"kparity-fuzz-host ended unexpectedly (exit status {code}){self._tail()}")
        return data

    def _tail(self) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        return f"; its last words: {text[-2000:]}" if text else ""

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for f in (self._proc.stdin, self._proc.stdout):
            if f is not None:
                f.close()
        self._stderr.close()
