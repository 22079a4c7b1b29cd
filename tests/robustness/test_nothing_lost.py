"""Nothing the user had is lost: a write to a path that fails for any reason (an exception in the ``with``
block, ``KeyboardInterrupt``, a full disk, a killed process) leaves the earlier file at that path untouched,
or no file at all, never a truncated one; and (except after SIGKILL, when no code runs) no temporary file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from stompbox.io import AudioFile

SR = 44100


def _tone(seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(SR * seconds)) / SR
    return (0.3 * np.stack([np.sin(2 * np.pi * 440 * t), np.sin(2 * np.pi * 550 * t)])).astype(np.float32)


def _existing(path: Path) -> bytes:
    with AudioFile(str(path), "w", SR, 2) as out:
        out.write(_tone(0.5))
    return path.read_bytes()


def _leftovers(folder: Path, keep: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p != keep)


@pytest.mark.parametrize("ext", ["wav", "flac", "mp3", "ogg", "m4a"])
@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_exception_mid_write_keeps_the_earlier_file(tmp_path: Path, ext: str, error: type) -> None:
    path = tmp_path / f"song.{ext}"
    before = _existing(path)
    with pytest.raises(error):
        with AudioFile(str(path), "w", SR, 2) as out:
            out.write(_tone(0.3))
            raise error("interrupted")
    assert path.read_bytes() == before
    assert _leftovers(tmp_path, path) == []


def test_exception_mid_write_to_a_new_path_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "new.flac"
    with pytest.raises(ValueError):
        with AudioFile(str(path), "w", SR, 2) as out:
            out.write(_tone(0.2))
            out.write(np.zeros((5, 5, 5), np.float32))
    assert list(tmp_path.iterdir()) == []


def test_bad_block_keeps_earlier_file(tmp_path: Path) -> None:
    """A wrong array (here 3 channels into a stereo file) is an exception inside the block like any other."""
    path = tmp_path / "song.wav"
    before = _existing(path)
    with pytest.raises(RuntimeError):
        with AudioFile(str(path), "w", SR, 2) as out:
            out.write(_tone(0.2))
            out.write(np.zeros((3, 100), np.float32))
    assert path.read_bytes() == before
    assert _leftovers(tmp_path, path) == []


class _FailingFile:
    """A binary file-like object whose write raises after ``limit`` bytes (a full disk, a closed socket)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.position = 0

    def write(self, data: bytes) -> int:
        if self.position + len(data) > self.limit:
            raise OSError(28, "No space left on device")
        self.data[self.position : self.position + len(data)] = data
        self.position += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        self.position = offset if whence == 0 else (self.position + offset if whence == 1 else len(self.data) + offset)
        return self.position

    def tell(self) -> int:
        return self.position

    def read(self, n: int = -1) -> bytes:
        chunk = bytes(self.data[self.position : None if n < 0 else self.position + n])
        self.position += len(chunk)
        return chunk

    def seekable(self) -> bool:
        return True

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("fmt", ["wav", "flac", "mp3", "m4a"])
def test_file_like_whose_write_fails_raises(fmt: str) -> None:
    """A failing file-like object gives an exception (never a silent short file); no crash."""
    target = _FailingFile(limit=20_000)
    with pytest.raises(OSError, match="No space left"):
        with AudioFile(target, "w", SR, 2, format=fmt) as out:
            for _ in range(20):
                out.write(_tone(0.25))


_DISK_FULL = textwrap.dedent(
    """
    import resource, signal, sys
    import numpy as np
    from stompbox.io import AudioFile
    path, ext = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))  # "the disk is full" after 200 kB
    block = (np.random.default_rng(0).standard_normal((2, 44100)) * 0.1).astype(np.float32)
    try:
        with AudioFile(path, "w", 44100, 2) as out:
            for _ in range(20):
                out.write(block)
    except Exception as exc:
        print("raised", type(exc).__name__, exc)
        sys.exit(3)
    print("no error")
    """
)


@pytest.mark.parametrize("ext", ["wav", "flac", "mp3", "ogg", "m4a"])
@pytest.mark.parametrize("optimize", [False, True])
def test_disk_full_keeps_the_earlier_file(tmp_path: Path, ext: str, optimize: bool) -> None:
    """A full disk (simulated with RLIMIT_FSIZE in a subprocess) is an exception; the earlier file survives and
    no temporary file is left. Also under ``python -O``, where ``assert`` statements do not run."""
    path = tmp_path / f"song.{ext}"
    before = _existing(path)
    flags = ["-O"] if optimize else []
    proc = subprocess.run(
        [sys.executable, *flags, "-c", _DISK_FULL, str(path), ext], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr[-2000:]
    assert path.read_bytes() == before
    assert _leftovers(tmp_path, path) == []


_KILLED = textwrap.dedent(
    """
    import sys
    import numpy as np
    from stompbox.io import AudioFile
    block = (np.random.default_rng(0).standard_normal((2, 4410)) * 0.1).astype(np.float32)
    with AudioFile(sys.argv[1], "w", 44100, 2) as out:
        out.write(block)
        print("writing", flush=True)
        while True:
            out.write(block)
    """
)


@pytest.mark.parametrize("ext", ["wav", "flac", "mp3"])
@pytest.mark.parametrize("earlier", [True, False])
def test_sigkill_while_writing_leaves_the_earlier_file_or_none(tmp_path: Path, ext: str, earlier: bool) -> None:
    path = tmp_path / f"song.{ext}"
    before = _existing(path) if earlier else None
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        time.sleep(0.3)  # well into the write
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    if before is None:
        assert not path.exists()
    else:
        assert path.read_bytes() == before
    partial = [p for p in tmp_path.iterdir() if p != path]
    assert all(p.name.startswith(f".{path.name}.") and p.name.endswith(".partial") for p in partial)
