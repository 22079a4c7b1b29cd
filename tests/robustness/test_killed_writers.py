"""Writers killed at any moment: through the API and the command line (``stompbox convert``/``render``).

- SIGKILL (no code runs) at 20 moments of a write through the API and 20 through the CLI: the file at the path is
  always the earlier one, byte for byte, or the whole new one; its temporary files stay behind, and the next
  successful write to the folder removes them.
- SIGTERM and SIGHUP stop a command as Ctrl-C does: status 128 + the signal, the earlier file, no temporary.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from stompbox.io import AudioFile

SR = 44100
SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))

_API = """
import sys
import numpy as np
from stompbox.io import AudioFile
block = (np.random.default_rng(0).standard_normal((2, 8820)) * 0.1).astype(np.float32)
with AudioFile(sys.argv[1], "w", 44100, 2) as out:
    for _ in range(100):
        out.write(block)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("source") / "in.wav"
    rng = np.random.default_rng(1)
    with AudioFile(str(path), "w", SR, 2) as out:
        out.write((rng.standard_normal((2, SR * 10)) * 0.1).astype(np.float32))
    return path


def _command(kind: str, source: Path, out: Path) -> list[str]:
    if kind == "api":
        return [sys.executable, "-c", _API, str(out)]
    if kind == "convert":
        return [sys.executable, "-m", "stompbox", "convert", "-q", str(source), str(out)]
    return [sys.executable, "-m", "stompbox", "render", "-q", str(source), str(out), "gain", "gain_db=-3"]


def _earlier(path: Path) -> bytes:
    with AudioFile(str(path), "w", SR, 2) as out:
        out.write(np.full((2, 1000), 0.25, np.float32))
    return path.read_bytes()


def _temporaries(folder: Path, keep: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p != keep]


def _write_begins(proc: subprocess.Popen[bytes], folder: Path, out: Path) -> float:
    """Wait until ``proc`` has created a new temporary file for ``out`` (its write has begun); when."""
    known = set(_temporaries(folder, out))
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if set(_temporaries(folder, out)) - known:
            break
        time.sleep(0.002)
    return time.monotonic()


@pytest.mark.parametrize(("kind", "moments"), [("api", 20), ("convert", 10), ("render", 10)])
def test_sigkill_at_any_moment_keeps_the_earlier_file(tmp_path: Path, source: Path, kind: str, moments: int) -> None:
    out = tmp_path / "out.flac"
    before = _earlier(out)
    proc = subprocess.Popen(_command(kind, source, out), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    began = _write_begins(proc, tmp_path, out)
    _, err = proc.communicate(timeout=300)
    writing = time.monotonic() - began  # from the temporary file's creation to the end: the write
    assert proc.returncode == 0, err.decode(errors="replace")
    whole = out.read_bytes()  # the uninterrupted result (stompbox's output is deterministic)
    out.write_bytes(before)
    killed_mid_write = 0
    for k in range(1, moments + 1):
        proc = subprocess.Popen(_command(kind, source, out), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _write_begins(proc, tmp_path, out)
        # the moments spread over the first 80 % of the measured write, so that a run slowed by a loaded machine
        # is still killed mid-write at most moments
        time.sleep(0.8 * writing * (k - 1) / moments)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        now = out.read_bytes()
        assert now in (before, whole), f"moment {k}/{moments}: the file at the path is neither the old nor the new"
        leftovers = _temporaries(tmp_path, out)
        assert all(p.name.startswith(f".{out.name}.") and p.name.endswith(".partial") for p in leftovers)
        killed_mid_write += bool(leftovers) and now == before
        out.write_bytes(before)
    assert killed_mid_write >= moments // 2  # the moments did fall during writes
    # the next successful write to the folder (here, another file) removes what the killed processes left
    with AudioFile(str(tmp_path / "next.wav"), "w", SR, 1) as next_out:
        next_out.write(np.zeros(10, np.float32))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["next.wav", "out.flac"]
    assert out.read_bytes() == before


@pytest.mark.parametrize(("kind", "ext"), [("convert", "flac"), ("render", "flac"), ("convert", "m4a")])
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_sigterm_and_sighup_stop_the_cli_cleanly(
    tmp_path: Path, source: Path, kind: str, ext: str, signum: int, status: int
) -> None:
    out = tmp_path / f"out.{ext}"
    before = _earlier(out)
    proc = subprocess.Popen(_command(kind, source, out), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _write_begins(proc, tmp_path, out)
    assert proc.poll() is None, "the command ended before it could be signalled"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err.decode(errors="replace")
    assert out.read_bytes() == before
    assert _temporaries(tmp_path, out) == []
