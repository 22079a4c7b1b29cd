"""FLAC files written by stompbox carry a SEEKTABLE (``stompbox.io.codecs.flac_seektable``).

The table is parsed here independently of the module (metadata block headers and 18-byte seek points, as the
FLAC format defines them), and every point is checked against the file itself: its offset lands on a frame
header whose frame number is the point's sample number over the block size. The audio must decode the same in
libsndfile and in FFmpeg (PyAV), and seeks must land on the right samples.
"""

from __future__ import annotations

import io
import os
import struct

import numpy as np
import pytest

from stompbox.io import AudioFile
from stompbox.io.codecs.flac_seektable import SPACING, seektable

SR = 44100


def _music(seconds: float, channels: int = 2, rate: int = SR) -> np.ndarray:
    rng = np.random.default_rng(3)
    t = np.arange(int(seconds * rate)) / rate
    tone = 0.3 * np.sin(2 * np.pi * 440.0 * t) * (1 + 0.5 * np.sin(2 * np.pi * 0.5 * t))
    return (tone + 0.05 * rng.standard_normal((channels, t.size))).astype(np.float32)


def _blocks(data: bytes) -> tuple[list[tuple[int, bytes]], int]:
    assert data[:4] == b"fLaC"
    blocks, offset = [], 4
    while True:
        kind, length = data[offset] & 0x7F, int.from_bytes(data[offset + 1 : offset + 4], "big")
        blocks.append((kind, data[offset + 4 : offset + 4 + length]))
        last = data[offset] & 0x80
        offset += 4 + length
        if last:
            return blocks, offset


def _points(data: bytes) -> tuple[list[tuple[int, int, int]], int, int, int]:
    """The seek points, where the audio starts, the block size and the total samples."""
    blocks, start = _blocks(data)
    assert blocks[0][0] == 0, "STREAMINFO comes first"
    info = blocks[0][1]
    block_size = struct.unpack(">H", info[2:4])[0]
    total = int.from_bytes(info[13:18], "big") & ((1 << 36) - 1)
    tables = [body for kind, body in blocks if kind == 3]
    assert len(tables) == 1, "one SEEKTABLE"
    body = tables[0]
    assert len(body) % 18 == 0
    points = [struct.unpack(">QQH", body[i : i + 18]) for i in range(0, len(body), 18)]
    return points, start, block_size, total


def _frame_number(data: bytes, at: int) -> int:
    assert data[at] == 0xFF and data[at + 1] == 0xF8, f"no frame header at {at}"
    first = data[at + 4]
    if first < 0x80:
        return first
    used = next(n for n in range(2, 7) if first >> (7 - n) == (0xFF >> (7 - n)) - 1)
    value = first & (0xFF >> (used + 1))
    for k in range(1, used):
        value = (value << 6) | (data[at + 4 + k] & 0x3F)
    return value


def _check_table(data: bytes) -> list[tuple[int, int, int]]:
    points, start, block_size, total = _points(data)
    frames = -(-total // block_size)
    assert points[0][:2] == (0, 0)
    for sample, offset, samples in points:
        assert sample % block_size == 0 and sample < total
        assert samples == min(block_size, total - sample)
        assert _frame_number(data, start + offset) == sample // block_size
    samples_at = [p[0] for p in points]
    offsets = [p[1] for p in points]
    assert samples_at == sorted(set(samples_at)) and offsets == sorted(set(offsets))
    assert all(b - a >= SPACING for a, b in zip(offsets, offsets[1:], strict=False))
    assert len(points) <= frames
    return points


def _decode_av(data: bytes) -> np.ndarray:
    import av

    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        chunks = [frame.to_ndarray().reshape(-1, stream.channels).T for frame in container.decode(stream)]
    return np.concatenate(chunks, axis=1)


@pytest.mark.parametrize(("channels", "bit_depth", "rate"), [(2, 16, 44100), (1, 24, 96000), (6, 16, 48000)])
def test_written_flac_has_a_table_whose_points_are_frames(tmp_path, channels, bit_depth, rate):
    audio = _music(20.0, channels, rate)
    path = str(tmp_path / "out.flac")
    with AudioFile(path, "w", rate, channels, bit_depth=bit_depth) as f:
        f.write(audio)
    data = open(path, "rb").read()
    points = _check_table(data)
    _, start, block_size, total = _points(data)
    assert total == audio.shape[1]
    # dense where the audio is dense: music frames are larger than SPACING, so every frame gets a point
    frames = -(-total // block_size)
    assert len(points) >= 0.9 * frames
    assert 18 * len(points) / len(data) < 0.005  # the table costs under half a percent of the file
    with AudioFile(path) as f:
        decoded = f.read(f.frames)
        assert f.frames == audio.shape[1]
    np.testing.assert_allclose(decoded, audio, atol=1.0 / 2 ** (bit_depth - 1) * 1.01)
    if bit_depth == 16:
        ints = np.round(decoded.astype(np.float64) * 32767).astype(np.int16)
        np.testing.assert_array_equal(_decode_av(data), ints)  # FFmpeg reads the same file the same way
    rng = np.random.default_rng(1)
    with AudioFile(path) as f:
        for position in rng.integers(0, total - 3000, 25).tolist() + [0, total - 1]:
            f.seek(position)
            np.testing.assert_array_equal(f.read(3000), decoded[:, position : position + 3000])


def test_quiet_audio_gets_a_sparse_table():
    """Silence compresses to a few bytes a frame: points stay SPACING bytes apart, so the table stays small."""
    audio = np.zeros((2, SR * 30), np.float32)
    audio[:, SR * 10 : SR * 11] = _music(1.0)
    data = AudioFile.encode(audio, SR, "flac", 2)
    points = _check_table(data)
    _, start, block_size, _ = _points(data)
    assert len(points) < -(-audio.shape[1] // block_size) / 2
    assert 18 * len(points) <= 0.005 * len(data) + 18


def test_file_like_with_a_prefix_gets_the_table_and_keeps_the_prefix():
    audio = _music(5.0)
    buffer = io.BytesIO()
    buffer.write(b"earlier bytes")
    buffer.name = "x.flac"
    with AudioFile(buffer, "w", SR, 2) as f:
        f.write(audio)
    data = buffer.getvalue()
    assert data.startswith(b"earlier bytes")
    assert buffer.tell() == len(data)  # left after the file: another file can follow it
    flac = data[len(b"earlier bytes") :]
    _check_table(flac)
    assert flac == AudioFile.encode(audio, SR, "flac", 2)  # the same bytes as encode() and as a path
    buffer.seek(len(b"earlier bytes"))
    with AudioFile(buffer) as f:
        np.testing.assert_allclose(f.read(f.frames), audio, atol=1.01 / 32767)


def test_tiny_and_empty_files_get_a_table(tmp_path):
    for frames in (0, 1, 4095, 4096, 4097):
        data = AudioFile.encode(_music(1.0)[:, :frames], SR, "flac", 2)
        points = _check_table(data)
        assert points[0] == (0, 0, min(4096, max(frames, 1)))


class _WriteOnly(io.RawIOBase):
    """A stream that can be written and seeked but not read back (like a file opened "wb")."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.position = 0

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def write(self, b) -> int:
        b = bytes(b)
        end = self.position + len(b)
        self.data[self.position : end] = b
        self.position = end
        return len(b)

    def seek(self, offset, whence=io.SEEK_SET) -> int:
        self.position = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: len(self.data)}[whence] + offset
        return self.position

    def tell(self) -> int:
        return self.position

    def read(self, size=-1):
        raise io.UnsupportedOperation("read")


def test_a_stream_that_cannot_be_read_back_keeps_a_valid_file_without_a_table():
    audio = _music(3.0)
    stream = _WriteOnly()
    stream.name = "x.flac"
    with AudioFile(stream, "w", SR, 2) as f:
        f.write(audio)
    blocks, _ = _blocks(bytes(stream.data))
    assert all(kind != 3 for kind, _ in blocks)
    with AudioFile(io.BytesIO(bytes(stream.data))) as f:
        np.testing.assert_allclose(f.read(f.frames), audio, atol=1.01 / 32767)


class _FailsLate(io.BytesIO):
    """Writes fail once the file is being moved up for the table (after libsndfile has finished)."""

    armed = False

    def write(self, b) -> int:
        if self.armed:
            raise OSError("disk full")
        return super().write(b)


def test_a_failing_write_while_inserting_the_table_raises_the_streams_error(monkeypatch):
    import stompbox.io.codecs.flac_seektable as module

    stream = _FailsLate()
    stream.name = "x.flac"
    original = module.insert_seektable

    def armed(*args, **kwargs):
        stream.armed = True
        return original(*args, **kwargs)

    monkeypatch.setattr(module, "insert_seektable", armed)
    writer = AudioFile(stream, "w", SR, 2)
    writer.write(_music(3.0))
    with pytest.raises(OSError, match="disk full"):
        writer.close()


def test_no_table_when_the_frames_do_not_match_streaminfo():
    data = bytearray(AudioFile.encode(_music(2.0), SR, "flac", 2))
    blocks, start = _blocks(bytes(data))
    if any(kind == 3 for kind, _ in blocks):  # take the written table out again: rebuild without it
        rebuilt = bytearray(b"fLaC")
        kept = [(k, b) for k, b in blocks if k != 3]
        for i, (kind, body) in enumerate(kept):
            rebuilt.append(kind | (0x80 if i == len(kept) - 1 else 0))
            rebuilt += len(body).to_bytes(3, "big") + body
        data = rebuilt + data[start:]

    def read_at(offset, n):
        return bytes(data[offset : offset + n])

    assert seektable(read_at, len(data)) is not None
    # STREAMINFO claims one frame more than the file holds: no table rather than a wrong one
    total_at = 8 + 13
    field = int.from_bytes(data[total_at : total_at + 5], "big")
    data[total_at : total_at + 5] = (field + 4096).to_bytes(5, "big")
    assert seektable(read_at, len(data)) is None


def test_a_file_that_has_a_table_is_left_alone():
    data = AudioFile.encode(_music(2.0), SR, "flac", 2)
    assert seektable(lambda offset, n: data[offset : offset + n], len(data)) is None


def test_insertion_moves_data_across_many_chunks(monkeypatch, tmp_path):
    """The data moves up in CHUNK steps from the end: with a tiny CHUNK every step boundary is exercised."""
    import stompbox.io.codecs.flac_seektable as module

    monkeypatch.setattr(module, "CHUNK", 1000)
    audio = _music(3.0)
    path = str(tmp_path / "small-chunks.flac")
    with AudioFile(path, "w", SR, 2) as f:
        f.write(audio)
    data = open(path, "rb").read()
    _check_table(data)
    with AudioFile(path) as f:
        np.testing.assert_allclose(f.read(f.frames), audio, atol=1.01 / 32767)
    assert os.path.getsize(path) == len(data)


def test_a_write_only_real_file_gets_the_table_too(tmp_path):
    """open(path, "wb") cannot be read back through the object: a second, read-only descriptor of the same file
    is used, so the bytes equal encode()'s whatever the destination."""
    audio = _music(4.0)
    path = tmp_path / "wb.flac"
    with open(path, "wb") as handle:
        handle.write(b"head")
        with AudioFile(handle, "w", SR, 2, format="flac") as f:
            f.write(audio)
        assert handle.tell() == path.stat().st_size
    data = path.read_bytes()
    assert data[:4] == b"head"
    assert data[4:] == AudioFile.encode(audio, SR, "flac", 2)
    _check_table(data[4:])
