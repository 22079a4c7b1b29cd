"""One AudioFile used by two threads at once: each read, seek, write or close runs whole, one at a time (a
second thread waits for the first), so a shared reader's reads are atomic; never a crash (two threads driving one
resampler stream aborted the process in its C library) or a hang. pedalboard raises ``RuntimeError`` in the second
thread instead; stompbox serialises, which code written for pedalboard (which must bring its own lock) never
notices."""

from __future__ import annotations

import io
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from stompbox.io import AudioFile, ClosedFileError

SR = 44100


def wav_bytes(seconds: float = 2.0, channels: int = 1) -> bytes:
    buffer = io.BytesIO()
    with AudioFile(buffer, "w", SR, channels, format="wav") as f:
        f.write(np.random.default_rng(0).uniform(-0.5, 0.5, (channels, int(SR * seconds))).astype(np.float32))
    return buffer.getvalue()


class Gate(io.RawIOBase):
    """A seekable in-memory file whose read() or write() stops, once ``armed``, until ``release`` is set: a
    thread inside an AudioFile operation that we hold there."""

    def __init__(self, data: bytes = b"") -> None:
        self._data = io.BytesIO(data)
        self.armed = False
        self.inside = threading.Event()
        self.release = threading.Event()

    def _wait(self) -> None:
        if self.armed:
            self.armed = False
            self.inside.set()
            assert self.release.wait(10)

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        self._wait()
        return self._data.read(n)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def write(self, data) -> int:
        self._wait()
        return self._data.write(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._data.seek(offset, whence)

    def tell(self) -> int:
        return self._data.tell()


def hold_inside(operation) -> tuple[threading.Thread, list]:
    """Start ``operation`` on a thread and return once it is blocked inside the file."""
    results: list = []
    thread = threading.Thread(target=lambda: results.append(operation()))
    thread.start()
    return thread, results


def wait_until_blocked(thread: threading.Thread) -> None:
    thread.join(0.3)
    assert thread.is_alive()  # waiting for the first thread's operation, not failing


@pytest.mark.parametrize("wrapper", ["file", "resampled", "mono"])
def test_a_second_reader_thread_waits_for_the_first_and_reads_on_from_where_it_ended(wrapper):
    gate = Gate(wav_bytes(channels=2))
    source = AudioFile(gate)
    reader = {"file": source, "resampled": source.resampled_to(22050), "mono": source.mono()}[wrapper]
    gate.armed = True
    first, first_result = hold_inside(lambda: reader.read(20000))
    assert gate.inside.wait(10)
    second, second_result = hold_inside(lambda: reader.read(1000))
    wait_until_blocked(second)
    gate.release.set()
    first.join(10)
    second.join(10)
    with AudioFile(io.BytesIO(wav_bytes(channels=2))) as fresh:
        alone = {"file": fresh, "resampled": fresh.resampled_to(22050), "mono": fresh.mono()}[wrapper]
        expected = alone.read(21000)
    np.testing.assert_array_equal(first_result[0], expected[:, :20000])  # each read is a contiguous run
    np.testing.assert_array_equal(second_result[0], expected[:, 20000:])  # and the second goes on after the first
    assert reader.tell() == 21000
    reader.close()
    source.close()


@pytest.mark.parametrize("call", ["close", "tell"])
def test_close_and_tell_from_another_thread_wait_for_the_read_in_progress(call):
    gate = Gate(wav_bytes())
    reader = AudioFile(gate)
    gate.armed = True
    thread, result = hold_inside(lambda: reader.read(1000))
    assert gate.inside.wait(10)
    answers: list = []
    other = threading.Thread(target=lambda: answers.append(getattr(reader, call)()))
    other.start()
    wait_until_blocked(other)
    gate.release.set()
    thread.join(10)
    other.join(10)
    assert result[0].shape == (1, 1000)
    if call == "tell":
        assert answers == [1000]  # the position after the read, not before it
    else:
        assert reader.closed
        with pytest.raises(ClosedFileError):
            reader.read(10)


def test_a_second_writer_thread_waits_and_every_write_lands_whole():
    gate = Gate()
    writer = AudioFile(gate, "w", SR, 1, format="wav")
    levels = (0.25, 0.5, -0.25)
    writer.write(np.full((1, 4096), levels[0], np.float32))
    writer.flush()
    gate.armed = True
    first, _ = hold_inside(lambda: (writer.write(np.full((1, 4096), levels[1], np.float32)), writer.flush()))
    assert gate.inside.wait(10)
    second, _ = hold_inside(lambda: writer.write(np.full((1, 4096), levels[2], np.float32)))
    wait_until_blocked(second)
    gate.release.set()
    first.join(10)
    second.join(10)
    writer.close()
    with AudioFile(io.BytesIO(gate._data.getvalue())) as f:
        back = f.read(f.frames)[0]
    assert back.shape == (3 * 4096,)
    for i, level in enumerate(levels):  # in order, none split by another
        np.testing.assert_allclose(back[i * 4096 : (i + 1) * 4096], level, atol=1 / 32768)


@pytest.mark.parametrize("wrapper", ["file", "resampled", "mono"])
def test_unlocked_threads_hammering_one_reader_never_fail_or_crash(wrapper):
    """Random operations from four threads without a lock of their own: every one works (the resampler's C
    library aborted the process before the resampled reader had a lock)."""
    source = AudioFile(io.BytesIO(wav_bytes(seconds=5, channels=2)))
    reader = {"file": source, "resampled": source.resampled_to(22050), "mono": source.mono()}[wrapper]
    channels = reader.num_channels
    operations = [
        lambda: reader.frames,
        lambda: reader.tell(),
        lambda: reader.seek(0),
        lambda: reader.seek(22050),
        lambda: reader.read(22050),
    ]

    def work(seed: int) -> int:
        rng = random.Random(seed)
        for _ in range(1500):
            result = rng.choice(operations)()
            if isinstance(result, np.ndarray):
                assert result.shape[0] == channels and result.dtype == np.float32
        return 1

    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(work, range(4))) == 4
    reader.seek(0)
    assert reader.read(100).shape == (channels, 100)
