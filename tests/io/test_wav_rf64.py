"""WAV files past 4 GiB become RF64 (EBU Tech 3306) instead of carrying 0xFFFFFFFF sizes.

The switch is tested without writing 4 GiB: the writer's private threshold is lowered, so a small file takes
the same path a 5 GiB one would (the ds64 chunk after WAVE, the data moved up by 36 bytes)."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from stompbox.io import AudioFile
from stompbox.io.codecs import wav_writer

SR = 44100


@pytest.fixture
def low_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wav_writer, "_RF64_OVER", 1000)
    monkeypatch.setattr(wav_writer, "_MOVE_STEP", 4096)  # several steps of the move, from the end


def _signal(channels: int, frames: int) -> np.ndarray:
    rng = np.random.default_rng(channels)
    return (rng.standard_normal((channels, frames)) * 0.2).astype(np.float32)


@pytest.mark.parametrize(("channels", "bits"), [(1, 16), (2, 24), (3, 16), (2, 32), (1, 8), (2, 64)])
def test_a_file_past_the_limit_is_rf64_that_ffmpeg_reads(tmp_path, low_threshold, channels, bits) -> None:
    frames = 10_001  # odd: 8-bit mono gets a pad byte
    x = _signal(channels, frames)
    path = tmp_path / "big.wav"
    with AudioFile(str(path), "w", SR, channels, bit_depth=bits) as out:
        out.write(x[:, :4000])
        out.write(x[:, 4000:])
    data = path.read_bytes()
    assert data[:4] == b"RF64" and data[4:8] == b"\xff\xff\xff\xff" and data[8:16] == b"WAVEds64"
    size, riff, data_bytes, count, table = struct.unpack("<IQQQI", data[16:48])
    width = bits // 8
    assert (size, riff, data_bytes, count, table) == (28, len(data) - 8, frames * channels * width, frames, 0)
    at = data.index(b"data", 48)
    assert data[at + 4 : at + 8] == b"\xff\xff\xff\xff"
    # the same bytes of audio as the same samples in a plain RIFF file, and every reader reads them alike
    riff = AudioFile.encode(x, SR, "wav", channels, bit_depth=bits)
    riff_at = riff.index(b"data")
    assert data[at + 8 : at + 8 + data_bytes] == riff[riff_at + 8 : riff_at + 8 + data_bytes]
    np.testing.assert_array_equal(_ffmpeg(io.BytesIO(data)), _ffmpeg(io.BytesIO(riff)))
    assert _ffmpeg(io.BytesIO(data)).size == frames * channels
    with AudioFile(str(path)) as f, AudioFile(io.BytesIO(riff)) as g:
        assert f.frames == frames
        np.testing.assert_array_equal(f.read(frames), g.read(frames))
    sf = pytest.importorskip("soundfile")
    got, rate = sf.read(str(path), dtype="float32", always_2d=True)
    assert rate == SR and got.shape == (frames, channels)
    np.testing.assert_array_equal(got, sf.read(io.BytesIO(riff), dtype="float32", always_2d=True)[0])


def _ffmpeg(source: object) -> np.ndarray:
    av = pytest.importorskip("av")
    with av.open(source) as container:
        return np.concatenate([frame.to_ndarray().reshape(-1) for frame in container.decode(audio=0)])


def test_in_memory_too(low_threshold) -> None:
    x = _signal(2, 3000)
    buffer = io.BytesIO(b"prefix")
    buffer.seek(6)
    with AudioFile(buffer, "w", SR, 2, format="wav") as out:
        out.write(x)
    data = buffer.getvalue()
    assert data[:6] == b"prefix" and data[6:10] == b"RF64"
    with AudioFile(io.BytesIO(data[6:])) as f:
        assert f.frames == 3000


def test_small_files_stay_riff(tmp_path) -> None:
    path = tmp_path / "small.wav"
    with AudioFile(str(path), "w", SR, 1) as out:
        out.write(np.zeros(100, np.float32))
    assert path.read_bytes()[:4] == b"RIFF"
