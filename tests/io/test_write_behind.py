"""Write-behind (``stompbox.io.write_behind``): encoding on a second thread changes no byte and loses no error."""

from __future__ import annotations

import concurrent.futures
import os
import threading

import numpy as np
import pytest

import stompbox as sb
from stompbox import batch
from stompbox.io import AudioFile
from stompbox.io.write_behind import WriteBehind, behind

SR = 44100


def _music(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    rng = np.random.default_rng(5)
    return (0.3 * np.sin(2 * np.pi * 220 * t) + 0.05 * rng.standard_normal((2, t.size))).astype(np.float32)


def test_blocks_are_written_in_order_on_another_thread_and_copied_when_handed_over():
    seen: list[tuple[float, str]] = []
    gate = threading.Event()

    def write(block: np.ndarray) -> None:
        gate.wait(5)
        seen.append((float(block[0, 0]), threading.current_thread().name))

    block = np.zeros((2, 10), np.float32)
    with WriteBehind(write, depth=8) as handed:
        for k in range(5):
            block[:] = k
            handed(block)  # the same array, changed after each hand-over
        gate.set()
    assert [value for value, _ in seen] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert all(name == "stompbox-write-behind" for _, name in seen)


def test_an_error_of_the_writer_reaches_the_producer():
    def write(block: np.ndarray) -> None:
        if block[0, 0] == 2:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        with WriteBehind(write) as handed:
            for k in range(50):
                handed(np.full((1, 4), k, np.float32))


def test_an_error_of_the_producer_stops_the_worker_and_propagates():
    written = []
    with pytest.raises(ValueError, match="producer"):
        with WriteBehind(written.append, depth=1) as handed:
            handed(np.zeros((1, 4), np.float32))
            raise ValueError("producer failed")
    assert len(written) <= 1  # nothing hangs; at most the block handed over before the failure


def test_depth_must_be_positive():
    with pytest.raises(ValueError, match="depth"):
        WriteBehind(lambda block: None, depth=0)


def test_behind_uses_a_thread_only_for_compressed_formats(tmp_path):
    for ext, threaded in (("wav", False), ("aiff", False), ("flac", True), ("mp3", True), ("ogg", True)):
        with AudioFile(str(tmp_path / f"x.{ext}"), "w", SR, 2) as out:
            with behind(out) as write:
                assert isinstance(write, WriteBehind) == (threaded and (os.cpu_count() or 1) > 1), ext
                write(np.zeros((2, 100), np.float32))
            with behind(out, enabled=False) as write:
                assert not isinstance(write, WriteBehind)


@pytest.mark.parametrize("ext", ["flac", "mp3", "ogg", "m4a"])
def test_process_file_writes_the_same_bytes_either_way(tmp_path, ext):
    source = str(tmp_path / "in.wav")
    with AudioFile(source, "w", SR, 2) as f:
        f.write(_music(3.0))
    board = sb.Pedalboard([sb.Distortion(drive_db=20), sb.Reverb(room_size=0.6)])
    on, off = str(tmp_path / f"on.{ext}"), str(tmp_path / f"off.{ext}")
    assert batch.process_file(source, on, board, tail=1.0, write_behind=True) == batch.process_file(
        source, off, board, tail=1.0, write_behind=False
    )
    with open(on, "rb") as a, open(off, "rb") as b:
        assert a.read() == b.read()


def test_a_failing_encoder_behind_leaves_no_output(tmp_path, monkeypatch):
    source = str(tmp_path / "in.wav")
    with AudioFile(source, "w", SR, 2) as f:
        f.write(_music(3.0))
    from stompbox.io.codecs import backends

    calls = {"n": 0}
    original = backends.SoundfileEncoder.write

    def failing(self, block):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return original(self, block)

    monkeypatch.setattr(backends.SoundfileEncoder, "write", failing)
    target = tmp_path / "out.flac"
    with pytest.raises(OSError, match="disk full"):
        batch.process_file(source, str(target), sb.Gain(), block_frames=4096, write_behind=True)
    assert not target.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".out")]  # no temporary left behind


def test_process_files_uses_write_behind_only_when_serial(tmp_path, monkeypatch):
    inputs = []
    for i in range(3):
        path = str(tmp_path / f"in{i}.wav")
        with AudioFile(path, "w", SR, 1) as f:
            f.write(_music(0.2)[:1])
        inputs.append(path)
    seen = []
    original = batch.process_file

    def record(*args, **kwargs):
        seen.append(kwargs["write_behind"])
        return original(*args, **kwargs)

    monkeypatch.setattr(batch, "process_file", record)
    batch.process_files(inputs, str(tmp_path / "serial"), sb.Gain(), jobs=1, extension="flac")
    assert seen == [True, True, True]
    seen.clear()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        batch.process_files(inputs, str(tmp_path / "pooled"), sb.Gain(), pool, extension="flac")
    assert seen == [False, False, False]
