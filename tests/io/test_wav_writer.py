"""The NumPy WAV writer (``stompbox.io.codecs.wav_writer``) makes libsndfile's bytes: every bit depth, 1 to 9 channels
(plain and extensible headers; the channel masks are FFmpeg's layouts, where libsndfile's differ), float and
integer input (int16/int32 converted to the file's width by truncating shifts, as libsndfile does), odd-sized
data (a pad byte), empty files, paths and BytesIO targets, several writes, and sizes beyond 4 GiB (written as
0xFFFFFFFF)."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from stompbox.io import AudioFile
from stompbox.io.codecs.wav_writer import WavEncoder

# The WAVE_FORMAT_EXTENSIBLE channel masks written for 3 to 8 channels (FFmpeg's 3.0, quad, 5.0, 5.1, 6.1, 7.1)
MASKS = {3: 0x7, 4: 0x33, 5: 0x37, 6: 0x3F, 7: 0x70F, 8: 0x63F}

DEPTHS = [8, 16, 24, 32, 64, "int32"]


def _write(target, x, channels, depth, libsndfile, monkeypatch, pieces=1):
    with monkeypatch.context() as patch:
        if libsndfile:
            patch.setattr(WavEncoder, "applies", staticmethod(lambda target, settings: False))
        with AudioFile(target, "w", 44100, channels, format="wav", bit_depth=depth) as out:
            assert isinstance(out._encoder, WavEncoder) != libsndfile
            for part in np.array_split(x, pieces if x.shape[1] > 100 else 1, axis=1):
                if part.shape[1]:
                    out.write(part)


@pytest.mark.parametrize("channels", [1, 2, 3, 4, 5, 6, 8, 9])
@pytest.mark.parametrize("depth", DEPTHS)
def test_the_same_bytes_as_libsndfile(channels, depth, monkeypatch):
    rng = np.random.default_rng(channels * 10 + len(str(depth)))
    inputs = {
        "float": rng.uniform(-1.2, 1.2, (channels, 1001)).astype(np.float32),
        "int16": rng.integers(-32768, 32767, (channels, 1001), np.int16, endpoint=True),
        "int32": rng.integers(-(2**31), 2**31 - 1, (channels, 1001), np.int32, endpoint=True),
        "empty": np.zeros((channels, 0), np.float32),
        "odd": rng.uniform(-1, 1, (channels, 7)).astype(np.float32),  # 7 frames: odd for 8 bits, 24 bits
    }
    for name, x in inputs.items():
        ours, theirs = io.BytesIO(), io.BytesIO()
        _write(ours, x, channels, depth, False, monkeypatch, pieces=3)
        _write(theirs, x, channels, depth, True, monkeypatch)
        expected = bytearray(theirs.getvalue())
        if channels > 2:  # libsndfile's masks: 0 for 3 and 5 channels, 7.1 with FLC/FRC for 8
            expected[40:44] = struct.pack("<I", MASKS.get(channels, 0))
        assert ours.getvalue() == with_cbsize(bytes(expected)), name


def with_cbsize(data: bytes) -> bytes:
    """libsndfile's WAV bytes with a float ``fmt`` chunk's ``cbSize`` (0) added, as stompbox writes it (the
    WAVEFORMATEX rules ask it of every format but PCM; SoX warns without it)."""
    if data[12:16] != b"fmt " or struct.unpack("<IH", data[16:22]) not in ((16, 3),):
        return data
    riff = struct.unpack("<I", data[4:8])[0]
    head = b"RIFF" + struct.pack("<I", riff + 2) + data[8:16] + struct.pack("<I", 18)
    return head + data[20:36] + b"\0\0" + data[36:]


def test_a_path_is_written_in_place_with_the_same_bytes(tmp_path, monkeypatch):
    x = np.random.default_rng(1).uniform(-1, 1, (2, 44101)).astype(np.float32)
    for depth in (8, 16, 24, 32):
        _write(str(tmp_path / "ours.wav"), x, 2, depth, False, monkeypatch, pieces=4)
        _write(str(tmp_path / "theirs.wav"), x, 2, depth, True, monkeypatch)
        assert (tmp_path / "ours.wav").read_bytes() == with_cbsize((tmp_path / "theirs.wav").read_bytes())
        with AudioFile(str(tmp_path / "ours.wav")) as f:
            assert f.frames == 44101


def test_other_targets_are_left_to_libsndfile():
    class Sink(io.BytesIO):  # a user's file-like (a subclass may override anything): libsndfile's virtual I/O
        pass

    with AudioFile(Sink(), "w", 8000, 1, format="wav") as out:
        assert not isinstance(out._encoder, WavEncoder)
        out.write(np.zeros(10, np.float32))


def test_a_bytes_io_gets_the_file_after_what_it_holds():
    """libsndfile failed to open a BytesIO positioned after other bytes ("Unspecified internal error")."""
    x = np.random.default_rng(2).uniform(-1, 1, (2, 999)).astype(np.float32)
    target = io.BytesIO(b"prefix")
    target.seek(6)
    with AudioFile(target, "w", 8000, 2, format="wav", bit_depth=24) as out:
        out.write(x)
    assert target.getvalue() == b"prefix" + AudioFile.encode(x, 8000, "wav", 2, bit_depth=24)


def test_flush_makes_the_bytes_so_far_a_complete_file():
    target = io.BytesIO()
    out = AudioFile(target, "w", 8000, 2, format="wav")
    out.write(np.full((2, 300), 0.25, np.float32))
    out.flush()
    with AudioFile(io.BytesIO(target.getvalue())) as f:
        assert f.frames == 300
    out.write(np.full((2, 100), 0.25, np.float32))
    out.close()
    with AudioFile(io.BytesIO(target.getvalue())) as f:
        assert f.frames == 400


def test_sizes_beyond_4_gib_are_written_as_0xffffffff():
    """As libsndfile writes them (measured with a 4.3 GB stream); readers take the data to the end."""
    encoder = WavEncoder(io.BytesIO(), "PCM_16", 44100, 2)
    encoder._data_bytes = encoder._frames = 5 * 2**30
    header = encoder._header()
    assert header[4:8] == header[-4:] == struct.pack("<I", 0xFFFFFFFF) and header[-8:-4] == b"data"
    extensible = WavEncoder(io.BytesIO(), "FLOAT", 44100, 3)
    extensible._data_bytes = extensible._frames = 5 * 2**30
    fact = extensible._header().index(b"fact")
    assert extensible._header()[fact + 8 : fact + 12] == struct.pack("<I", 0xFFFFFFFF)


def test_limits_of_the_header(monkeypatch):
    """More than 1024 channels (libsndfile's limit, for writing and reading) and rates beyond the sample-rate rule
    of stompbox.limits are ValueErrors that say so; a byte rate beyond 32 bits wraps, as in libsndfile's header
    (same bytes)."""
    for channels, rate, message in ((1025, 44100, "at most 1,024 channels"), (2, 10**10, "to 10,000,000 Hz")):
        with pytest.raises(ValueError, match=message):
            AudioFile(io.BytesIO(), "w", rate, channels, format="wav")
    x = np.zeros((1024, 3), np.float32)
    files = []
    for libsndfile in (False, True):
        with monkeypatch.context() as patch:
            if libsndfile:
                patch.setattr(WavEncoder, "applies", staticmethod(lambda target, settings: False))
            files.append(io.BytesIO())
            with AudioFile(files[-1], "w", 768000, 1024, format="wav", bit_depth=64) as out:
                out.write(x)
    assert files[0].getvalue() == files[1].getvalue()
    assert struct.unpack("<I", files[0].getvalue()[28:32])[0] == (768000 * 1024 * 8) & 0xFFFFFFFF
