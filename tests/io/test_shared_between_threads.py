"""One AudioFile used by two threads at once: the second gets a RuntimeError at once (pedalboard's behaviour),
never a crash, a hang or a silent interleaving; with the caller's own lock, nothing is raised."""

from __future__ import annotations

import io
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from stompbox.io import AudioFile

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


@pytest.mark.parametrize("wrapper", ["file", "resampled", "mono"])
def test_a_second_reader_thread_gets_runtime_error_while_the_first_is_inside_a_read(wrapper):
    gate = Gate(wav_bytes(channels=2))
    source = AudioFile(gate)
    reader = {"file": source, "resampled": source.resampled_to(22050), "mono": source.mono()}[wrapper]
    gate.armed = True
    thread, results = hold_inside(lambda: reader.read(SR))
    assert gate.inside.wait(10)
    try:
        for operation in (lambda: reader.read(10), lambda: reader.seek(0)):
            with pytest.raises(RuntimeError, match="Another thread is currently reading from this AudioFile"):
                operation()
        with pytest.raises(RuntimeError, match="it cannot be closed until the other thread completes"):
            reader.close()
        if wrapper != "file":  # the wrapped file is busy too: it is the one the first thread is reading
            with pytest.raises(RuntimeError, match="Another thread is currently reading"):
                source.read(10)
    finally:
        gate.release.set()
        thread.join(10)
    expected_frames = {"file": SR, "resampled": SR, "mono": SR}[wrapper]
    assert results and results[0].shape[1] == expected_frames
    # the first thread's read was not disturbed: it is the audio a lone reader reads
    with AudioFile(io.BytesIO(wav_bytes(channels=2))) as fresh:
        alone = {"file": fresh, "resampled": fresh.resampled_to(22050), "mono": fresh.mono()}[wrapper]
        np.testing.assert_array_equal(results[0], alone.read(SR))
    assert reader.tell() == SR  # and now the file is free again
    reader.seek(0)
    reader.close()
    source.close()


def test_tell_waits_for_a_read_in_progress_instead_of_raising():
    gate = Gate(wav_bytes())
    reader = AudioFile(gate)
    gate.armed = True
    thread, _ = hold_inside(lambda: reader.read(1000))
    assert gate.inside.wait(10)
    told: list[int] = []
    teller = threading.Thread(target=lambda: told.append(reader.tell()))
    teller.start()
    teller.join(0.2)
    assert teller.is_alive() and not told  # waiting for the read, not failing
    gate.release.set()
    thread.join(10)
    teller.join(10)
    assert told == [1000]


def test_a_second_writer_thread_gets_runtime_error_and_the_file_is_still_whole():
    gate = Gate()
    writer = AudioFile(gate, "w", SR, 1, format="wav")
    block = np.full((1, 4096), 0.25, np.float32)
    writer.write(block)
    writer.flush()
    gate.armed = True
    thread, _ = hold_inside(lambda: (writer.write(block), writer.flush()))
    assert gate.inside.wait(10)
    try:
        for operation in (lambda: writer.write(block), writer.flush):
            with pytest.raises(RuntimeError, match="Another thread is currently writing to this AudioFile"):
                operation()
        with pytest.raises(RuntimeError, match="it cannot be closed until the other thread completes"):
            writer.close()
    finally:
        gate.release.set()
        thread.join(10)
    writer.close()
    with AudioFile(io.BytesIO(gate._data.getvalue())) as f:
        assert f.frames == 2 * 4096  # the refused write wrote nothing; both accepted writes are there
        np.testing.assert_allclose(f.read(f.frames), 0.25, atol=1 / 32768)


@pytest.mark.parametrize("wrapper", ["file", "resampled"])
def test_unlocked_threads_hammering_one_reader_raise_runtime_error_and_never_crash(wrapper):
    """Random operations from four threads without a lock: each either works or raises the RuntimeError; the
    process survives (the resampler's C library aborted the process before the guard)."""
    source = AudioFile(io.BytesIO(wav_bytes(seconds=5)))
    reader = source.resampled_to(22050) if wrapper == "resampled" else source
    operations = [
        lambda: reader.frames,
        lambda: reader.tell(),
        lambda: reader.seek(0),
        lambda: reader.seek(22050),
        lambda: reader.read(22050),
    ]
    refusals = []

    def work(seed: int) -> int:
        rng = random.Random(seed)
        done = 0
        for _ in range(1500):
            try:
                rng.choice(operations)()
                done += 1
            except RuntimeError as error:
                assert "Another thread is currently reading" in str(error)
                refusals.append(error)
        return done

    with ThreadPoolExecutor(4) as pool:
        done = sum(pool.map(work, range(4)))
    assert done + len(refusals) == 6000
    # with a lock of the caller's, the same work raises nothing
    lock = threading.Lock()

    def locked(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(300):
            with lock:
                rng.choice(operations)()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(locked, range(4)))
    reader.seek(0)
    assert reader.read(100).shape == (1, 100)
