"""Long FLAC reads from a path are decoded by two threads (two libsndfile handles, halves of the range, each
started as seek() starts): the samples, the position afterwards and the errors are those of one linear decode.
Vorbis and Opus too: the second half starts from a pre-roll on a fresh handle, as seek() does."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from stompbox.io import AudioFile, TruncatedAudioWarning
from stompbox.io.codecs import backends

SR = 44100


@pytest.fixture(params=["flac", "ogg", "opus"])
def flac(tmp_path, request):
    x = np.random.default_rng(9).uniform(-0.9, 0.9, (50000, 2))
    path = tmp_path / f"x.{request.param}"
    subtype = {"flac": "PCM_24", "ogg": "VORBIS", "opus": "OPUS"}[request.param]
    sf.write(
        path,
        x,
        48000 if request.param == "opus" else SR,
        subtype=subtype,
        format="OGG" if subtype != "PCM_24" else "FLAC",
    )
    return str(path)


@pytest.fixture(autouse=True)
def two_threads(monkeypatch):
    """These tests check the samples and errors of the two-thread path, so long reads take it; whether a long read
    takes it is TwoThreadPayoff's (tested at the end, with its own instances)."""
    monkeypatch.setattr(backends.TWO_THREADS, "choose", lambda kind: True)


def linear(path: str, monkeypatch) -> np.ndarray:
    monkeypatch.setattr(backends, "PARALLEL_FRAMES", 1 << 40)
    with AudioFile(path) as f:
        return f.read(f.frames)


def test_split_reads_equal_a_linear_decode(flac, monkeypatch):
    expected = linear(flac, monkeypatch)
    monkeypatch.setattr(backends, "PARALLEL_FRAMES", 1000)
    with AudioFile(flac) as f:
        np.testing.assert_array_equal(f.read(f.frames + 500), expected)  # past the end: just the file
        assert f.tell() == 50000 and f.read(10).shape == (2, 0)
        for start, count in [(0, 1000), (1, 49999), (12345, 20000), (40000, 30000), (49000, 1000), (9000, 2000)]:
            f.seek(start)
            got = f.read(count)
            np.testing.assert_array_equal(got, expected[:, start : start + count])
            assert f.tell() == min(50000, start + count)
            np.testing.assert_array_equal(f.read(100), expected[:, start + count : start + count + 100])


def test_a_truncated_flac_reads_what_is_present_with_a_warning(monkeypatch, tmp_path):
    flac = tmp_path / "x.flac"
    sf.write(flac, np.random.default_rng(9).uniform(-0.9, 0.9, (50000, 2)), SR, subtype="PCM_24")
    data = flac.read_bytes()
    cut = tmp_path / "cut.flac"
    cut.write_bytes(data[: len(data) * 2 // 3])
    monkeypatch.setattr(backends, "PARALLEL_FRAMES", 1000)
    with AudioFile(cut) as f:
        with pytest.warns(TruncatedAudioWarning, match="before the 50000 frames"):
            present = f.read(f.frames)
    assert 50000 // 2 < present.shape[1] < 50000 * 3 // 4
    with AudioFile(flac) as whole:
        np.testing.assert_array_equal(present, whole.read(present.shape[1]))


def read_and_check(f, rng, count: int, expected: np.ndarray, raw_expected: np.ndarray) -> None:
    """A read (or, one time in ten, a raw read) of ``count`` frames from where ``f`` is, checked against the
    linear decodes, and the position after it."""
    start = f.tell()
    if rng.random() < 0.1:
        np.testing.assert_array_equal(f.read_raw(count), raw_expected[:, start : start + count])
    else:
        np.testing.assert_array_equal(f.read(count), expected[:, start : start + count])
    assert f.tell() == min(expected.shape[1], start + count)


@pytest.mark.parametrize(("ext", "depth"), [("flac", 16), ("flac", 24), ("aiff", 24)])
def test_small_reads_from_the_read_ahead_block_equal_a_linear_decode(tmp_path, ext, depth):
    """Small sequential reads of exactly seekable formats come from a block decoded ahead; any mix of small and
    large reads, raw reads and seeks gives a linear decode's samples and positions."""
    x = np.random.default_rng(3).uniform(-0.9, 0.9, (2, 100000)).astype(np.float32)
    data = AudioFile.encode(x, SR, ext, 2, bit_depth=depth)
    path = tmp_path / f"x.{ext}"
    path.write_bytes(data)
    with AudioFile(path) as f:
        expected = f.read(f.frames)
        f.seek(0)
        raw_expected = f.read_raw(f.frames)
    rng = np.random.default_rng(4)
    with AudioFile(path) as f:
        for _ in range(1500):
            if rng.random() < 0.2:
                f.seek(int(rng.integers(0, 100000)))
            count = int(rng.choice([rng.integers(1, 100), rng.integers(1, 40000), 70000]))
            read_and_check(f, rng, count, expected, raw_expected)


def test_chunked_reads_come_from_blocks_decoded_by_two_threads(flac, monkeypatch):
    """Sequential reads from a FLAC/Vorbis/Opus path, once a stream (STREAMING_FRAMES in sequence, here 3000), are
    served from blocks decoded ahead by two threads (PARALLEL_FRAMES, here 4096 so that every block is split):
    any mix of reads, raw reads, seeks far and seeks just ahead of the position (which a compressed format
    decodes on to) gives a linear decode's samples."""
    expected = linear(flac, monkeypatch)
    with AudioFile(flac) as f:
        f.seek(0)
        raw_expected = f.read_raw(f.frames)
    monkeypatch.setattr(backends, "PARALLEL_FRAMES", 4096)
    monkeypatch.setattr(backends, "STREAMING_FRAMES", 3000)
    total = expected.shape[1]
    rng = np.random.default_rng(5)
    with AudioFile(flac) as f:
        assert f._decoder._streams
        for _ in range(600):
            roll = rng.random()
            if roll < 0.1:
                f.seek(int(rng.integers(0, total)))
            elif roll < 0.25:
                f.seek(min(total, f.tell() + int(rng.integers(0, 9000))))  # close ahead: inside or past the block
            count = int(rng.choice([rng.integers(1, 100), rng.integers(1, 3000), 5000]))
            read_and_check(f, rng, count, expected, raw_expected)


def test_the_read_ahead_block_stays_small(tmp_path):
    """Two-thread read-ahead only from a path, and only while its block is at most AHEAD_BYTES (4 channels);
    more channels, or a file-like, keep the 32768-frame block of one thread."""
    import io

    for channels, streams in ((2, True), (4, True), (6, False)):
        path = tmp_path / f"{channels}.flac"
        with AudioFile(str(path), "w", SR, channels) as out:
            out.write(np.zeros((channels, 100), np.float32))
        with AudioFile(str(path)) as f:
            assert f._decoder._streams == streams
            assert backends.PARALLEL_FRAMES * channels * 4 <= backends.AHEAD_BYTES or not streams
        with AudioFile(io.BytesIO(path.read_bytes())) as f:
            assert not f._decoder._streams


def test_a_crop_decodes_no_big_block(tmp_path, monkeypatch):
    """A seek and a few reads (a training crop) decode about what they read; only a stream (STREAMING_FRAMES
    read in sequence since the seek) gets two-thread blocks of PARALLEL_FRAMES."""
    x = np.random.default_rng(6).uniform(-0.5, 0.5, (2, 30 * SR)).astype(np.float32)
    path = tmp_path / "long.flac"
    with AudioFile(str(path), "w", SR, 2) as out:
        out.write(x)
    calls = []
    split = backends.SoundfileDecoder._read_in_two_threads

    def counting(self, *args):
        calls.append(self.position)
        return split(self, *args)

    monkeypatch.setattr(backends.SoundfileDecoder, "_read_in_two_threads", counting)
    with AudioFile(str(path)) as f:
        for start in (SR, 10 * SR, 20 * SR):
            f.seek(start)
            for _ in range(16):
                f.read(4096)
        assert calls == []
        f.seek(0)
        while f.tell() < backends.STREAMING_FRAMES + backends.CACHE_FRAMES + 8192:  # the block being read ends
            f.read(4096)
        assert len(calls) == 1


@pytest.mark.parametrize("ext", ["wav", "flac"])
def test_a_crop_decodes_what_it_reads(tmp_path, monkeypatch, ext):
    """A seek and four 4096-frame reads (a training crop) decode exactly the 16384 frames they read: WAV decodes
    the first read as asked and three reads' worth ahead at the second (read_ahead; a whole 32768- or 65536-frame
    block was 2.7-5x, four reads' worth 1.25x); FLAC reads of 4096 frames are decoded as asked (libsndfile keeps
    the rest of a FLAC frame for the next read)."""
    import os

    x = np.random.default_rng(7).uniform(-0.5, 0.5, (2, 20 * SR)).astype(np.float32)
    path = tmp_path / f"crop.{ext}"
    with AudioFile(str(path), "w", SR, 2) as out:
        out.write(x)
    decoded = []
    if ext == "wav":  # the WAV reader reads the file's bytes with preadv: 4 bytes a frame
        original = os.preadv

        def counting(handle, buffers, offset):
            decoded.append(sum(memoryview(buffer).nbytes for buffer in buffers) // 4)
            return original(handle, buffers, offset)

        monkeypatch.setattr(os, "preadv", counting)
    else:
        original = backends.SoundfileDecoder._decode

        def counting(self, n):
            decoded.append(min(n, self.frames - self.position))
            return original(self, n)

        monkeypatch.setattr(backends.SoundfileDecoder, "_decode", counting)
    with AudioFile(str(path)) as f:
        linear = f.read(f.frames)
    assert backends.read_ahead(0, 4096, 1 << 20) == 12288 and backends.read_ahead(12288, 4096, 20000) == 20000
    with AudioFile(str(path)) as f:
        for start in (SR, 7 * SR, 15 * SR):
            f.seek(start)
            decoded.clear()
            got = np.concatenate([f.read(4096) for _ in range(4)], axis=1)
            np.testing.assert_array_equal(got, linear[:, start : start + 4 * 4096])
            assert sum(decoded) == 4 * 4096


def test_two_threads_are_taken_while_they_pay(monkeypatch):
    """The first long read of a kind is decoded by two threads, the second by one; then the faster way by its
    smoothed seconds per frame, except every EXPLORE-th read, which tries the other way; kinds are apart."""
    monkeypatch.setattr(backends, "usable_cpus", lambda: 2)
    payoff = backends.TwoThreadPayoff()
    kind = ("PCM_16", 2, 44100.0)
    assert payoff.choose(kind) is True
    payoff.record(kind, True, 1.0, 1000)  # 1 ms a frame in two threads
    assert payoff.choose(kind) is False
    payoff.record(kind, False, 3.0, 1000)  # 3 ms in one: two threads pay
    picks = [payoff.choose(kind) for _ in range(2 * payoff.EXPLORE)]
    assert picks.count(False) == 2 and all(picks[i] != (i % payoff.EXPLORE == payoff.EXPLORE - 3) for i in range(16))
    for _ in range(3):  # the second core got busy: two threads now take 5 ms a frame
        payoff.record(kind, True, 5.0, 1000)
    assert payoff.choose(kind) is False  # smoothed: (((1 + 5) / 2 + 5) / 2 + 5) / 2 = 4.5 > 3
    other = ("VORBIS", 2, 44100.0)
    assert payoff.choose(other) is True


def test_one_usable_cpu_never_splits_a_read(monkeypatch, tmp_path):
    """With one CPU to run on (affinity, a container's quota) a long read is decoded by one thread: the same
    samples."""
    monkeypatch.setattr(backends, "usable_cpus", lambda: 1)
    monkeypatch.setattr(backends, "TWO_THREADS", backends.TwoThreadPayoff())
    monkeypatch.setattr(backends, "PARALLEL_FRAMES", 1000)
    path = tmp_path / "x.flac"
    x = np.random.default_rng(10).uniform(-0.9, 0.9, (30000, 2))
    sf.write(path, x, SR, subtype="PCM_16")
    calls = []
    split = backends.SoundfileDecoder._read_in_two_threads

    def counting(self, *args):
        calls.append(self.position)
        return split(self, *args)

    monkeypatch.setattr(backends.SoundfileDecoder, "_read_in_two_threads", counting)
    with AudioFile(str(path)) as f:
        got = f.read(f.frames)
    assert calls == []
    expected = (sf.read(path, dtype="int16")[0].T.astype(np.float32)) * np.float32(1 / 32767)
    np.testing.assert_array_equal(got, expected)
