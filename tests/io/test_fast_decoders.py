"""The fast decoders behind ReadableAudioFile give the same frames and samples as plain libsndfile.

io/codecs/wav.py reads uncompressed WAV/RF64 itself; these tests compare it, bit for bit, with soundfile reading
of the same bytes, for every sample format it takes, through paths, BytesIO and open files, in whole, chunked
and random-access reads, with NumPy and with the Numba kernels; and check that whatever it does not vouch for
stays on libsndfile.
"""

from __future__ import annotations

import io
import os
import struct
import time

import numpy as np
import pytest
import soundfile as sf

from stompbox.io import AudioFile
from stompbox.io.codecs import backends
from stompbox.io.codecs import wav as wav_module
from stompbox.io.codecs.backends import SoundfileDecoder
from stompbox.io.codecs.wav import PcmWavDecoder, parse_riff

SR = 44100
RAW_DTYPES = {"PCM_U8": "int16", "PCM_16": "int16", "PCM_24": "int32", "PCM_32": "int32", "FLOAT": "float32",
              "DOUBLE": "float64"}  # fmt: skip


def signal(frames: int, channels: int, subtype: str, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((frames, channels)) * 0.4
    if subtype in ("FLOAT", "DOUBLE"):
        return x * 3  # floats beyond full scale are kept as they are
    return np.clip(x, -1, 1)


def wav_bytes(frames: int, channels: int, subtype: str, fmt: str = "WAV", seed: int = 0) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, signal(frames, channels, subtype, seed), SR, format=fmt, subtype=subtype)
    return buffer.getvalue()


# pedalboard's (and our) integer scaling: k / (2**(bits-1) - 1), not libsndfile's k / 2**(bits-1)
PB_FULL_SCALE = {"PCM_U8": (8, 127), "PCM_16": (16, 32767), "PCM_24": (24, 8388607)}


def reference(data: bytes) -> np.ndarray:
    subtype = sf.info(io.BytesIO(data)).subtype
    if subtype in PB_FULL_SCALE:
        bits, full = PB_FULL_SCALE[subtype]
        k = sf.read(io.BytesIO(data), dtype="int32", always_2d=True)[0].T >> (32 - bits)
        return k.astype(np.float32) * np.float32(1 / full)
    return sf.read(io.BytesIO(data), dtype="float32", always_2d=True)[0].T


def reference_raw(data: bytes, subtype: str, start: int, count: int) -> np.ndarray:
    with sf.SoundFile(io.BytesIO(data)) as f:
        f.seek(start)
        raw = f.read(count, dtype=RAW_DTYPES[subtype], always_2d=True).T
    if subtype == "PCM_U8":
        return (raw >> 8).astype(np.int8)
    if subtype == "PCM_24":
        return raw >> 8
    return raw


@pytest.fixture(params=["numpy", "numpy in two threads", "numba"])
def conversion(request, monkeypatch):
    """Run with the NumPy conversion (while Numba is not loaded), with it splitting long reads (from a path or a
    BytesIO) between two threads, and with the Numba kernels; small steps so that whole reads take several steps
    and chunked reads refill the read-ahead cache."""
    monkeypatch.setattr(wav_module, "USE_NUMBA", request.param == "numba")
    monkeypatch.setattr(wav_module, "SCRATCH_BYTES", 3000)
    monkeypatch.setattr(wav_module, "CACHE_BYTES", 20000)
    monkeypatch.setattr(wav_module, "PARALLEL_FRAMES", 700 if request.param == "numpy in two threads" else 1 << 40)
    monkeypatch.setattr(backends.TWO_THREADS, "choose", lambda kind: True)  # split where it may (see backends)
    return request.param


def open_source(kind: str, data: bytes, tmp_path):
    if kind == "bytesio":
        return io.BytesIO(data)
    path = tmp_path / "x.wav"
    path.write_bytes(data)
    return str(path) if kind == "path" else open(path, "rb")  # noqa: SIM115 - closed by the test


@pytest.mark.parametrize("subtype", list(RAW_DTYPES))
@pytest.mark.parametrize(("fmt", "channels"), [("WAV", 1), ("WAV", 2), ("WAVEX", 6), ("RF64", 2), ("RF64", 3)])
@pytest.mark.parametrize("kind", ["path", "bytesio", "file"])
def test_samples_are_libsndfiles(conversion, tmp_path, subtype, fmt, channels, kind):
    frames = 5001
    data = wav_bytes(frames, channels, subtype, fmt)
    expected = reference(data)
    source = open_source(kind, data, tmp_path)
    with AudioFile(source) as f:
        assert isinstance(f._decoder, PcmWavDecoder)
        assert (f.frames, f.num_channels, f.samplerate) == (frames, channels, SR)
        assert f.format == fmt and f.codec == subtype
        whole = f.read(frames + 10)
        assert whole.dtype == np.float32 and whole.flags.c_contiguous
        np.testing.assert_array_equal(whole, expected)
        assert f.read(10).shape == (channels, 0)
        f.seek(0)
        chunks = []
        while (block := f.read(333)).shape[1]:
            assert block.flags.c_contiguous
            chunks.append(block)
        np.testing.assert_array_equal(np.concatenate(chunks, axis=1), expected)
        for start, count in [(17, 700), (4990, 100), (0, 1)]:
            f.seek(start)
            raw = f.read_raw(count)
            np.testing.assert_array_equal(raw, reference_raw(data, subtype, start, count))
            assert raw.dtype == reference_raw(data, subtype, start, count).dtype
            assert f.tell() == min(frames, start + count)
    if kind == "file":
        source.close()


def test_seeks_and_reads_in_any_order_match_a_linear_read(conversion):
    data = wav_bytes(20000, 2, "PCM_16")
    expected = reference(data)
    rng = np.random.default_rng(3)
    with AudioFile(io.BytesIO(data)) as f:
        for _ in range(300):
            if rng.random() < 0.5:
                f.seek(int(rng.integers(0, 20000)))
            start = f.tell()
            got = f.read(int(rng.integers(1, 3000)))
            np.testing.assert_array_equal(got, expected[:, start : start + got.shape[1]])
            assert got.shape[1] == min(20000 - start, got.shape[1]) and f.tell() == start + got.shape[1]


def riff(chunks: list[tuple[bytes, bytes]], form: bytes = b"RIFF") -> bytes:
    body = b"WAVE" + b"".join(cid + struct.pack("<I", len(c)) + c + b"\0" * (len(c) & 1) for cid, c in chunks)
    return form + struct.pack("<I", len(body)) + body


def test_odd_sized_chunks_before_the_data_are_padded():
    pcm = (np.arange(-300, 300, dtype=np.int16).reshape(-1, 2) * 100).astype("<i2")
    fmt = struct.pack("<HHIIHH", 1, 2, SR, SR * 4, 4, 16)
    data = riff([(b"fmt ", fmt), (b"LIST", b"INFOabc"), (b"junk", b"x"), (b"data", pcm.tobytes())])
    with AudioFile(io.BytesIO(data)) as f:
        assert isinstance(f._decoder, PcmWavDecoder)
        got = f.read(f.frames)
    np.testing.assert_array_equal(got, reference(data))
    np.testing.assert_array_equal(got, pcm.T.astype(np.float32) * np.float32(1 / 32767))


def test_truncated_files_read_what_libsndfile_reads(tmp_path):
    data = wav_bytes(3000, 2, "PCM_24")
    for cut in (len(data) - 1, len(data) - 7, 44 + 6 * 100 + 2):
        short = data[:cut]
        expected = reference(short)
        with AudioFile(io.BytesIO(short)) as f:
            assert f.frames == expected.shape[1]
            np.testing.assert_array_equal(f.read(5000), expected)


def test_a_file_shortened_while_open_gives_a_short_read(conversion, tmp_path):
    path = tmp_path / "x.wav"
    data = wav_bytes(4000, 2, "PCM_16")
    path.write_bytes(data)
    with AudioFile(str(path)) as f:
        assert isinstance(f._decoder, PcmWavDecoder)
        with open(path, "r+b") as handle:
            handle.truncate(44 + 4 * 1000 + 3)
        got = f.read(4000)
        np.testing.assert_array_equal(got, reference(data)[:, :1000])
        assert f.read(10).shape[1] == 0


OTHERS = [("WAV", "ULAW"), ("WAV", "ALAW"), ("WAV", "IMA_ADPCM"), ("W64", "PCM_16"), ("AIFF", "PCM_16"),
          ("WAV", "GSM610")]  # fmt: skip


@pytest.mark.parametrize(("fmt", "subtype"), OTHERS)
def test_other_encodings_stay_on_libsndfile(fmt, subtype):
    rate = 8000 if subtype == "GSM610" else SR
    buffer = io.BytesIO()
    sf.write(buffer, signal(2000, 1, subtype), rate, format=fmt, subtype=subtype)
    with AudioFile(io.BytesIO(buffer.getvalue())) as f:
        assert isinstance(f._decoder, SoundfileDecoder)


def test_parse_riff_rejects_what_it_cannot_vouch_for():
    fmt = struct.pack("<HHIIHH", 1, 2, SR, SR * 4, 4, 16)
    good = riff([(b"fmt ", fmt), (b"data", b"\0" * 40)])
    assert parse_riff(good, len(good)) == (1, 2, 16, 44, 40)
    assert parse_riff(good, 60) == (1, 2, 16, 44, 16)  # the data is clipped to the file
    assert parse_riff(b"RIFX" + good[4:], len(good)) is None  # big-endian
    assert parse_riff(riff([(b"data", b"\0" * 8)]), 100) is None  # no fmt chunk before the data
    odd_align = struct.pack("<HHIIHH", 1, 2, SR, SR * 4, 6, 16)
    assert parse_riff(riff([(b"fmt ", odd_align), (b"data", b"")]), 100) is None
    rf64 = riff([(b"ds64", struct.pack("<QQQI", 0, 40, 10, 0)), (b"fmt ", fmt), (b"data", b"\0" * 40)], b"RF64")
    rf64 = rf64.replace(b"data" + struct.pack("<I", 40), b"data" + b"\xff" * 4)
    assert parse_riff(rf64, len(rf64))[-1] == 40  # the length comes from ds64


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_reads_in_two_threads_too(tmp_path, monkeypatch):
    """The helper thread of the parent does not exist in a forked child: the child must start its own instead
    of waiting forever for it."""
    monkeypatch.setattr(wav_module, "USE_NUMBA", False)
    monkeypatch.setattr(wav_module, "PARALLEL_FRAMES", 700)
    monkeypatch.setattr(backends.TWO_THREADS, "choose", lambda kind: True)
    data = wav_bytes(5001, 2, "PCM_16")
    path = tmp_path / "x.wav"
    path.write_bytes(data)
    with AudioFile(str(path)) as f:
        expected = f.read(f.frames)  # the parent's helper thread exists now
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            with AudioFile(str(path)) as f:
                code = 0 if np.array_equal(f.read(f.frames), expected) else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung reading a WAV file")
