"""Threads: one board shared by 16 threads, 16 threads with a board each, one ``AudioFile`` shared by threads.

The engine locks every plugin of a tree for the length of a ``process()`` call (in id order, so boards sharing
plugins cannot deadlock), so whole-stream calls (``reset=True``) from many threads give exactly the single-thread
result. A reader has a lock around every ``read``/``seek``: concurrent reads each get a contiguous run of frames,
and together they cover the file exactly once. (Free-threaded CPython is not installed here: these run on the
GIL build, where the kernels and codecs release the GIL.)
"""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from stompbox import Chorus, Compressor, Convolution, Delay, Gain, LadderFilter, LowpassFilter, Pedalboard, Reverb
from stompbox.io import AudioFile, ClosedFileError

SR = 44100
THREADS = 16


def _board() -> Pedalboard:
    impulse = np.exp(-np.arange(256) / 40.0).astype(np.float32) * 0.2
    return Pedalboard(
        [
            Gain(gain_db=3),
            LowpassFilter(cutoff_frequency_hz=3000),
            Compressor(threshold_db=-20, ratio=4),
            LadderFilter(),
            Delay(delay_seconds=0.05, feedback=0.4, mix=0.3),
            Chorus(),
            Convolution(impulse, sample_rate=SR, mix=0.5),
            Reverb(room_size=0.6),
        ]
    )


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [(rng.standard_normal((2, 8000)) * 0.2).astype(np.float32) for _ in range(THREADS)]


def _run_threads(work: list) -> list:  # type: ignore[type-arg]
    barrier = threading.Barrier(len(work))

    def start(job):  # type: ignore[no-untyped-def]
        barrier.wait()  # all threads start together
        return job()

    with ThreadPoolExecutor(len(work)) as pool:
        return list(pool.map(start, work))


def test_sixteen_threads_sharing_one_board_equal_serial() -> None:
    inputs = _inputs()
    board = _board()
    serial = [board.process(x, SR, buffer_size=512) for x in inputs]
    for _ in range(2):
        results = _run_threads([lambda x=x: board.process(x, SR, buffer_size=512) for x in inputs])
        for got, want in zip(results, serial, strict=True):
            assert np.array_equal(got, want)


def test_sixteen_threads_with_a_board_each_equal_serial() -> None:
    inputs = _inputs()
    serial = [_board().process(x, SR, buffer_size=512) for x in inputs]
    boards = [_board() for _ in inputs]
    results = _run_threads(
        [lambda b=b, x=x: b.process(x, SR, buffer_size=512) for b, x in zip(boards, inputs, strict=True)]
    )
    for got, want in zip(results, serial, strict=True):
        assert np.array_equal(got, want)


def test_boards_sharing_a_plugin_do_not_deadlock() -> None:
    """Two boards holding the same plugin objects in opposite orders, hammered from 8 threads each."""
    shared = [Gain(gain_db=-1), LowpassFilter(cutoff_frequency_hz=2000), Delay(delay_seconds=0.01)]
    first, second = Pedalboard(shared), Pedalboard(list(reversed(shared)))
    x = _inputs()[0]
    want_first, want_second = first.process(x, SR), second.process(x, SR)
    jobs = [lambda b=b: b.process(x, SR) for b in [first, second] * 8]
    results = _run_threads(jobs)
    for k, got in enumerate(results):
        assert np.array_equal(got, want_first if k % 2 == 0 else want_second)


def _index_file(path: Path, frames: int, fmt: str) -> None:
    """A file whose samples encode their frame index exactly (24-bit FLAC or float WAV)."""
    index = np.arange(frames, dtype=np.float64) / (1 << 23)
    audio = np.stack([index, -index]).astype(np.float32)
    depth = 24 if fmt == "flac" else 32
    with AudioFile(str(path), "w", SR, 2, bit_depth=depth) as out:
        out.write(audio)


@pytest.mark.parametrize("fmt", ["wav", "flac"])
def test_shared_reader_reads_are_atomic_and_cover_the_file_once(tmp_path: Path, fmt: str) -> None:
    frames = 200_000
    path = tmp_path / f"index.{fmt}"
    _index_file(path, frames, fmt)
    chunk = 1000
    with AudioFile(str(path)) as f:

        def reader() -> list[np.ndarray]:
            got = []
            while True:
                block = f.read(chunk)
                if block.shape[1] == 0:
                    return got
                got.append(block)

        pieces = [p for result in _run_threads([reader] * 8) for p in result]
    starts = []
    for piece in pieces:
        index = np.round(piece[0].astype(np.float64) * (1 << 23)).astype(np.int64)
        assert np.array_equal(np.diff(index), np.ones(len(index) - 1)), "a read was not contiguous"
        assert np.array_equal(piece[1], -piece[0])
        starts.append(int(index[0]))
    assert sorted(starts) == list(range(0, frames, chunk)), "reads overlapped or skipped frames"


@pytest.mark.parametrize("name", ["mp3", "m4a"])
def test_shared_compressed_reader_gives_the_linear_chunks(tmp_path: Path, name: str) -> None:
    """Lossy formats (mpg123, and FFmpeg through PyAV): the chunks read by 6 threads are exactly the chunks of
    one linear read, each once."""
    t = np.arange(SR * 2) / SR
    audio = np.stack([np.sin(2 * np.pi * 440 * t), np.sin(2 * np.pi * 660 * t)]).astype(np.float32) * 0.5
    path = tmp_path / f"tone.{name}"
    with AudioFile(str(path), "w", SR, 2) as out:
        out.write(audio)
    chunk = 4096
    with AudioFile(str(path)) as f:
        linear = list(f.chunks(chunk))
    digest = [hashlib.sha1(c.tobytes()).hexdigest() for c in linear]
    with AudioFile(str(path)) as f:

        def reader() -> list[str]:
            got = []
            while (block := f.read(chunk)).shape[1]:
                got.append(hashlib.sha1(block.tobytes()).hexdigest())
            return got

        found = [d for result in _run_threads([reader] * 6) for d in result]
    assert sorted(found) == sorted(digest)


def test_closing_a_reader_while_threads_read_raises_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "index.wav"
    _index_file(path, 400_000, "wav")
    f = AudioFile(str(path))
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            while f.read(512).shape[1]:
                pass
        except ClosedFileError:
            pass
        except BaseException as exc:  # noqa: BLE001 - anything else is the failure we look for
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(6)]
    for thread in threads:
        thread.start()
    f.close()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert f.closed
