"""Writing: atomic replacement that keeps what a plain write would keep (permissions, symbolic links), the layout
rules pedalboard's writer follows (probed on 0.9.26), and empty files that are still valid files."""

from __future__ import annotations

import io
import os
import stat

import numpy as np
import pytest

from stompbox.core.errors import LayoutError
from stompbox.io import AudioFile
from stompbox.io.errors import NotAnAudioFileError

SR = 44100


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    previous = os.umask(0o022)
    try:
        with AudioFile(tmp_path / "new.wav", "w", SR) as out:
            out.write(np.zeros(10, np.float32))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "new.wav").st_mode) == 0o644  # not a temporary file's 0600


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "old.wav"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    with AudioFile(path, "w", SR) as out:
        out.write(np.zeros(10, np.float32))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    with AudioFile(path) as f:
        assert f.frames == 10


def test_a_symbolic_link_is_written_through(tmp_path):
    real = tmp_path / "real.flac"
    real.write_bytes(b"old")
    link = tmp_path / "link.flac"
    link.symlink_to(real)
    with AudioFile(link, "w", SR) as out:
        out.write(np.zeros(1000, np.float32))
    assert link.is_symlink()
    with AudioFile(real) as f:
        assert f.frames == 1000


def test_a_replaced_file_is_freed_after_the_rename_and_a_reader_keeps_its_copy(tmp_path):
    """The replaced file is held open over the rename and closed on the helper thread (its blocks are freed
    there, not in the writer's close). A reader that had it open still reads the old samples."""
    import gc

    from stompbox.io.helper_thread import helper

    path = tmp_path / "take.wav"
    with AudioFile(path, "w", SR, 2) as out:
        out.write(np.full((2, 5000), 0.5, np.float32))
    reader = AudioFile(path)
    before = set(os.listdir("/proc/self/fd"))
    for value in (0.25, -0.25):
        with AudioFile(path, "w", SR, 2) as out:
            out.write(np.full((2, 3000), value, np.float32))
    helper().submit(lambda: None).result()  # the helper has closed what it was given
    gc.collect()
    assert len(set(os.listdir("/proc/self/fd")) - before) == 0
    np.testing.assert_allclose(reader.read(10), 0.5, atol=1e-4)
    reader.close()
    with AudioFile(path) as f:
        assert f.frames == 3000 and abs(float(f.read(1)[0, 0]) + 0.25) < 1e-4


@pytest.mark.parametrize("ext", ["wav", "flac", "mp3"])
def test_a_fifo_is_written_in_place_never_replaced(tmp_path, ext):
    """A FIFO at the path is written as a stream (a reader gets the audio); it stays a FIFO."""
    import stat
    import threading

    fifo = tmp_path / f"pipe.{ext}"
    os.mkfifo(fifo)
    received = []

    def read():
        with open(fifo, "rb") as f:
            received.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    with AudioFile(fifo, "w", SR) as out:
        out.write(np.full(4410, 0.25, np.float32))
    reader.join(20)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == [fifo.name]
    with AudioFile(io.BytesIO(received[0])) as f:
        assert abs(f.frames - 4410) <= (0 if ext != "mp3" else 1152 * 2)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_node_is_written_in_place_never_replaced(tmp_path):
    """A character device (here a second /dev/null) is written to, not swapped for a regular file."""
    import stat

    null = tmp_path / "null.wav"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    for ext_format in ("wav", "flac", "mp3", "ogg", "m4a"):
        with AudioFile(null, "w", SR, format=ext_format) as out:
            out.write(np.zeros(1000, np.float32))
        info = os.stat(null)
        assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3), ext_format
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null.wav"]


def test_a_directory_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "d.wav").mkdir()
    with pytest.raises(NotAnAudioFileError, match="directory"):
        AudioFile(tmp_path / "d.wav", "w", SR)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.wav"]


def test_an_exception_leaves_no_trace(tmp_path):
    path = tmp_path / "keep.mp3"
    path.write_bytes(b"precious")
    with pytest.raises(ZeroDivisionError):
        with AudioFile(path, "w", SR, 2) as out:
            out.write(np.zeros((2, 5000), np.float32))
            out.flush()
            1 / 0  # noqa: B018
    assert path.read_bytes() == b"precious"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.mp3"]


def test_layouts_follow_the_channel_count():
    """A dimension equal to num_channels is the channel axis; a square block needs a layout seen before."""
    with AudioFile(io.BytesIO(), "w", SR, 2, format="wav") as out:
        with pytest.raises(LayoutError, match=r"\(2, 2\)"):
            out.write(np.zeros((2, 2), np.float32))
        out.write(np.zeros((3, 2), np.float32))  # channels-last: 3 frames
        assert out.frames == 3
        out.write(np.zeros((2, 2), np.float32))  # now square means channels-last
        assert out.frames == 5
        out.write(np.zeros((2, 1), np.float32))  # one frame, channels-first (as pedalboard)
        out.write(np.zeros((1, 2), np.float32))  # one frame, channels-last
        assert out.frames == 7
        for shape in [(1, 1), (5, 1), (3, 3)]:
            with pytest.raises(LayoutError, match="num_channels=2"):
                out.write(np.zeros(shape, np.float32))
        out.write(np.zeros((2, 0), np.float32))
        out.write(np.zeros((0, 2), np.float32))
        assert out.frames == 7
    with AudioFile(io.BytesIO(), "w", SR, 1, format="wav") as out:
        out.write(np.zeros((1, 1), np.float32))
        out.write(np.zeros((3, 1), np.float32))
        out.write(np.zeros((1, 3), np.float32))
        out.write(np.zeros(4, np.float32))
        assert out.frames == 11
        with pytest.raises(LayoutError, match="2-channel"):
            out.write(np.zeros((5, 2), np.float32))


def test_samples_land_in_the_right_channels(tmp_path):
    left = np.linspace(-0.5, 0.5, 100, dtype=np.float32)
    right = -left
    for array in (np.stack([left, right]), np.stack([left, right], axis=1), np.asfortranarray(np.stack([left, right]))):
        buffer = io.BytesIO()
        with AudioFile(buffer, "w", SR, 2, format="wav", bit_depth=32) as out:
            out.write(array)
        with AudioFile(io.BytesIO(buffer.getvalue())) as f:
            np.testing.assert_array_equal(f.read(100), np.stack([left, right]))


@pytest.mark.parametrize("ext", ["wav", "aiff", "flac", "ogg", "opus", "mp3", "m4a"])
def test_an_empty_file_is_still_a_valid_file(ext):
    rate = 48000 if ext == "opus" else SR
    data = AudioFile.encode(np.zeros((2, 0), np.float32), rate, ext, 2)
    assert data
    with AudioFile(io.BytesIO(data)) as f:
        assert f.num_channels == 2 and f.samplerate == rate
        silence = f.read(5000)
    assert silence.shape[1] <= 1152 and np.max(np.abs(silence), initial=0.0) < 1e-6  # as pedalboard: <= 1 frame


def test_encode_equals_writing(tmp_path):
    x = (np.random.default_rng(4).standard_normal((2, 30000)) * 0.2).astype(np.float32)
    for ext, kwargs in [("wav", {"bit_depth": 24}), ("flac", {"quality": 5}), ("mp3", {"quality": "V2"})]:
        path = tmp_path / f"w.{ext}"
        with AudioFile(path, "w", SR, 2, **kwargs) as out:
            for start in range(0, x.shape[1], 7000):
                out.write(x[:, start : start + 7000])
        assert path.read_bytes() == AudioFile.encode(x, SR, ext, 2, **kwargs)
