"""A full disk, for real: every writable format overwrites a good file on a small tmpfs at every free-space level
from 0 to the new file's size + 64 KiB, in 4 KiB steps. Each write either succeeds with a file that FFmpeg
decodes whole (the same samples as the same audio encoded in memory), or raises a stompbox exception and leaves
the earlier file byte-identical, with no temporary file behind.

The test mounts its own tmpfs, so it runs as root (as CI does) and skips elsewhere.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from stompbox import StompboxError
from stompbox.io import AudioFile

av = pytest.importorskip("av")

FORMATS = ["wav", "aiff", "flac", "mp3", "ogg", "opus", "m4a"]
STEP = 4096


def _can_mount() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("mount") is not None


@pytest.fixture(scope="module")
def disk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    if not _can_mount():
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path_factory.mktemp("tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _decoded(data: bytes) -> np.ndarray:
    with av.open(io.BytesIO(data)) as container:
        return np.concatenate([frame.to_ndarray().reshape(-1) for frame in container.decode(audio=0)])


def _leave_free(disk: Path, filler: Path, free: int) -> None:
    """Fill the disk so that ``free`` bytes are left."""
    stats = os.statvfs(disk)
    fill = stats.f_bavail * stats.f_frsize - free
    if fill > 0:
        handle = os.open(filler, os.O_CREAT | os.O_WRONLY, 0o600)
        try:
            os.posix_fallocate(handle, 0, fill)
        finally:
            os.close(handle)


@pytest.mark.parametrize("fmt", FORMATS)
def test_overwriting_on_a_full_disk_never_damages_the_earlier_file(disk: Path, fmt: str) -> None:
    rate = 48000 if fmt == "opus" else 44100
    rng = np.random.default_rng(7)
    good = (rng.standard_normal((2, rate // 4)) * 0.1).astype(np.float32)
    new = (rng.standard_normal((2, rate // 2)) * 0.1).astype(np.float32)
    path = disk / f"song.{fmt}"
    filler = disk / "filler"
    with AudioFile(str(path), "w", rate, 2) as out:
        out.write(good)
    before = path.read_bytes()
    buffer = io.BytesIO()  # the file in memory, written the same way: what a successful write must hold
    with AudioFile(buffer, "w", rate, 2, format=fmt) as out:
        out.write(new[:, : rate // 4])
        out.write(new[:, rate // 4 :])
    reference = buffer.getvalue()
    expected = _decoded(reference)
    outcomes = {"written": 0, "refused": 0}
    try:
        for free in range(0, len(reference) + 65536 + 1, STEP):
            _leave_free(disk, filler, free)
            try:
                with AudioFile(str(path), "w", rate, 2) as out:
                    out.write(new[:, : rate // 4])
                    out.write(new[:, rate // 4 :])
            except Exception as exc:  # noqa: BLE001 - the kind of exception is what is checked
                assert isinstance(exc, StompboxError), f"{free} bytes free: {type(exc).__module__}.{exc!r}"
                assert str(path) in str(exc) and ".partial" not in str(exc), str(exc)
                assert path.read_bytes() == before, f"{free} bytes free: the earlier file changed"
                outcomes["refused"] += 1
            else:
                decoded = _decoded(path.read_bytes())
                assert decoded.shape == expected.shape, f"{free} bytes free: {decoded.shape} != {expected.shape}"
                np.testing.assert_array_equal(decoded, expected)
                outcomes["written"] += 1
            finally:
                filler.unlink(missing_ok=True)
            if path.read_bytes() != before:
                path.write_bytes(before)
            assert sorted(p.name for p in disk.iterdir()) == [path.name], f"{free} bytes free: leftovers"
    finally:
        filler.unlink(missing_ok=True)
        path.unlink(missing_ok=True)
    # the levels cover both outcomes: too little room, and enough
    assert outcomes["refused"] >= 1 and outcomes["written"] >= 1, outcomes
