"""The same audio written twice gives the same bytes, in every format (a batch can be checked by hashing it).

Two things made files differ from run to run: libsndfile's PEAK chunk in float WAV/AIFF files (it holds the time
of writing), now not written; and the random serial number libsndfile gives an Ogg stream, now replaced page by
page by a fixed one (``stompbox.io.codecs.ogg_pages``), with each page's CRC recomputed.
"""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from stompbox.io import AudioFile
from stompbox.io.codecs.ogg_pages import FIRST_SERIAL, OggSerialRewriter, ogg_crc

RATE = 48000
FORMATS = [("wav", 16), ("wav", 24), ("wav", 32), ("aiff", 16), ("aiff", 32), ("flac", 24), ("mp3", None)]
FORMATS += [("ogg", None), ("opus", None), ("m4a", None)]


def _audio(seconds: float = 0.5, seed: int = 0) -> np.ndarray:
    return (0.1 * np.random.default_rng(seed).standard_normal((2, int(seconds * RATE)))).astype(np.float32)


def _encode(ext: str, depth: int | None, x: np.ndarray) -> bytes:
    return AudioFile.encode(x, RATE, ext, 2, **({} if depth is None else {"bit_depth": depth}))


def _pages(data: bytes) -> list[bytes]:
    pages, at = [], 0
    while at < len(data):
        assert data[at : at + 4] == b"OggS", f"no page at byte {at}"
        segments = data[at + 26]
        length = 27 + segments + sum(data[at + 27 : at + 27 + segments])
        pages.append(data[at : at + length])
        at += length
    return pages


def _reference_crc(data: bytes) -> int:
    """Ogg's CRC-32 bit by bit, as RFC 3533 describes it: polynomial 0x04C11DB7, MSB first, initial value 0."""
    crc = 0
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
    return crc


@pytest.mark.parametrize("length", [0, 1, 27, 255, 1000, 4096])
def test_ogg_crc_matches_the_bitwise_definition(length):
    data = np.random.default_rng(length).integers(0, 256, length, np.uint8).tobytes()
    assert ogg_crc(data) == _reference_crc(data)


@pytest.mark.parametrize("ext, depth", FORMATS)
def test_the_same_audio_gives_the_same_bytes(ext, depth, tmp_path):
    x = _audio()
    first = _encode(ext, depth, x)
    assert _encode(ext, depth, x) == first
    path = tmp_path / f"out.{ext}"  # a path goes another way through the encoder than a file-like
    with AudioFile(str(path), "w", RATE, 2, **({} if depth is None else {"bit_depth": depth})) as f:
        f.write(x)
    assert path.read_bytes() == first
    if ext in ("wav", "aiff"):
        assert b"PEAK" not in first  # the chunk that held the time of writing


@pytest.mark.parametrize("ext", ["ogg", "opus"])
def test_ogg_pages_carry_the_fixed_serial_and_valid_crcs(ext):
    x = _audio(2.0)
    data = _encode(ext, None, x)
    pages = _pages(data)
    assert len(pages) > 3
    for page in pages:
        assert struct.unpack("<I", page[14:18])[0] == FIRST_SERIAL
        stored = struct.unpack("<I", page[22:26])[0]
        assert _reference_crc(page[:22] + b"\0\0\0\0" + page[26:]) == stored
    with AudioFile(io.BytesIO(data)) as f:  # libogg drops a page whose CRC is wrong: every sample is there
        assert f.read(f.frames).shape == x.shape
    av = pytest.importorskip("av")
    with av.open(io.BytesIO(data)) as container:  # and another demuxer reads it too
        assert sum(frame.samples for frame in container.decode(audio=0)) >= x.shape[1]


def test_the_rewriter_handles_any_split_of_the_bytes_and_passes_other_data_on():
    data = _encode("ogg", None, _audio())
    whole = io.BytesIO()
    OggSerialRewriter(whole).write(data)
    rng = np.random.default_rng(5)
    pieces, target = io.BytesIO(), None
    target = OggSerialRewriter(pieces)
    at = 0
    while at < len(data):
        step = int(rng.integers(1, 700))
        assert target.write(data[at : at + step]) == len(data[at : at + step])
        at += step
    target.finish()
    assert pieces.getvalue() == whole.getvalue() == data  # already fixed: rewriting again changes nothing
    raw = io.BytesIO()
    other = OggSerialRewriter(raw)
    other.write(b"RIFF....not ogg")
    assert raw.getvalue() == b"RIFF....not ogg"


def test_the_rewriter_cannot_seek_inside_a_half_written_page():
    page = _pages(_encode("ogg", None, _audio()))[0]
    sink = io.BytesIO()
    target = OggSerialRewriter(sink)
    target.write(page[:10])
    assert sink.getvalue() == b"" and target.tell() == 10
    assert target.seek(0, io.SEEK_END) == 10  # asking for the length is fine
    with pytest.raises(OSError, match="half written"):
        target.seek(0)
    target.write(page[10:])
    assert sink.getvalue() == page and target.seek(0) == 0
