"""MP3 writing through LAME (``stompbox.io.codecs.mp3_writer``): gapless, exact-length files with a valid LAME tag.

The tag is checked field by field against the file itself (its audio frames walked independently), its CRC
recomputed, and the files are read back by two decoders that honour the tag: libsndfile's mpg123 (through
stompbox) and FFmpeg (PyAV). Both must give exactly the samples written, in place.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from stompbox.io import AudioFile
from stompbox.io.codecs.mp3_writer import _crc16

CLICK = 3000


def _signal(rate: int, channels: int) -> np.ndarray:
    n = 2 * rate + 123  # not a whole number of MP3 frames
    t = np.arange(n) / rate
    x = np.tile(0.3 * np.sin(2 * np.pi * 440 * t) * np.hanning(n), (channels, 1)).astype(np.float32)
    x[:, CLICK] = 0.95  # a click: where it comes back tells the alignment
    return x


def _frame_length(data: bytes, at: int) -> int:
    """Layer III frame length from its header (ISO 11172-3 / 13818-3 tables), 0 if none starts at ``at``."""
    if at + 4 > len(data) or data[at] != 0xFF or data[at + 1] & 0xE0 != 0xE0:
        return 0
    version = (data[at + 1] >> 3) & 3
    v1 = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
    v2 = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
    rates = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}
    kbps = (v1 if version == 3 else v2)[data[at + 2] >> 4]
    rate = rates[version][(data[at + 2] >> 2) & 3]
    padding = (data[at + 2] >> 1) & 1
    return (144_000 if version == 3 else 72_000) * kbps // rate + padding


def test_the_tag_crc_is_crc16_arc():
    assert _crc16(b"123456789") == 0xBB3D  # the published check value of CRC-16/ARC, LAME's tag CRC


def _decode_ffmpeg(data: bytes, channels: int) -> np.ndarray:
    import av

    with av.open(io.BytesIO(data)) as container:
        parts = []
        for frame in container.decode(audio=0):
            samples = frame.to_ndarray()
            parts.append(samples if frame.format.is_planar else samples.reshape(-1, channels).T)
    return np.concatenate(parts, axis=1)


@pytest.mark.parametrize("rate", [8000, 22050, 44100, 48000])
@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize("quality", ["V2", "V9", "320 kbps", "32 kbps"])
def test_mp3_files_are_gapless_and_their_tag_matches_the_file(rate, channels, quality):
    x = _signal(rate, channels)
    data = AudioFile.encode(x, rate, "mp3", channels, quality=quality)
    # the tag frame, then the audio frames, back to back to the end of the file
    tag_length = _frame_length(data, 0)
    assert tag_length
    frames, at = 0, tag_length
    while at < len(data):
        length = _frame_length(data, at)
        assert length, f"no frame at {at}"
        frames += 1
        at += length
    assert at == len(data)
    tag = data[:tag_length]
    kind = b"Xing" if quality.startswith("V") else b"Info"
    where = tag.find(kind)
    assert where > 0
    flags, count, size = (int.from_bytes(tag[where + k : where + k + 4], "big") for k in (4, 8, 12))
    assert flags == 0x0F and count == frames and size == len(data)
    toc = tag[where + 16 : where + 116]
    assert toc[0] == 0 and list(toc) == sorted(toc)
    lame = where + 120
    assert tag[lame : lame + 4] == b"LAME"
    delay = (tag[lame + 21] << 4) | (tag[lame + 22] >> 4)
    padding = ((tag[lame + 22] & 0x0F) << 8) | tag[lame + 23]
    per_frame = 1152 if rate >= 32000 else 576
    assert delay == 576 and frames * per_frame - delay - padding == x.shape[1]
    assert int.from_bytes(tag[lame + 28 : lame + 32], "big") == len(data)
    assert int.from_bytes(tag[lame + 34 : lame + 36], "big") == _crc16(tag[: lame + 34])
    # two decoders that read the tag give back exactly the samples written, in place
    with AudioFile(io.BytesIO(data)) as f:
        assert f.exact_duration_known and f.frames == x.shape[1]
        ours = f.read(f.frames + 1000)
    theirs = _decode_ffmpeg(data, channels)
    for decoded in (ours, theirs):
        assert decoded.shape == x.shape
        assert int(np.argmax(np.abs(decoded[0, CLICK - 500 : CLICK + 500]))) == 500  # the click, in place
    if quality in ("V2", "320 kbps") and rate >= 22050:
        error = np.sqrt(np.mean((ours - x) ** 2) / np.mean(x**2))
        assert error < 0.1


def test_sizes_follow_the_quality():
    x = _signal(44100, 2)
    sizes = [len(AudioFile.encode(x, 44100, "mp3", 2, quality=q)) for q in ("V9", "V5", "V2", "V0")]
    assert sizes == sorted(sizes) and len(set(sizes)) == 4
    cbr = [len(AudioFile.encode(x, 44100, "mp3", 2, quality=k)) for k in (64, 128, 192, 320)]
    assert cbr == sorted(cbr) and len(set(cbr)) == 4


class _Pipe(io.RawIOBase):
    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def write(self, b) -> int:
        self.data += bytes(b)
        return len(b)


def test_a_stream_that_cannot_seek_gets_the_audio_without_a_tag():
    x = _signal(44100, 2)
    pipe = _Pipe()
    pipe.name = "x.mp3"
    with AudioFile(pipe, "w", 44100, 2) as f:
        f.write(x)
    data = bytes(pipe.data)
    assert b"Info" not in data[:2000] and b"LAME" not in data[:2000]
    with AudioFile(io.BytesIO(data)) as f:
        y = f.read(f.frames + 5000)
    assert y.shape[1] >= x.shape[1]  # the codec's delay and padding stay in: a tagless MP3


def test_an_empty_mp3_is_a_valid_file():
    data = AudioFile.encode(np.zeros((2, 0), np.float32), 44100, "mp3", 2)
    with AudioFile(io.BytesIO(data)) as f:
        assert f.frames <= 1
        assert np.all(f.read(10) == 0)


def test_writing_in_many_small_blocks_gives_the_same_bytes():
    x = _signal(44100, 2)
    whole = AudioFile.encode(x, 44100, "mp3", 2, quality="V2")
    buffer = io.BytesIO()
    with AudioFile(buffer, "w", 44100, 2, format="mp3", quality="V2") as f:
        for start in range(0, x.shape[1], 777):
            f.write(x[:, start : start + 777])
    assert buffer.getvalue() == whole


def test_non_finite_samples_are_silence_or_full_scale_without_a_warning(recwarn):
    x = np.zeros((2, 44100), np.float32)
    x[:, 1000:2000] = np.nan
    x[:, 20000] = np.inf
    x[:, 30000] = -np.inf
    data = AudioFile.encode(x, 44100, "mp3", 2)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    with AudioFile(io.BytesIO(data)) as f:
        y = f.read(f.frames)
    assert np.isfinite(y).all()
    assert np.abs(y[:, 1200:1800]).max() < 0.05  # NaN: silence
    assert np.abs(y[:, 19900:20100]).max() > 0.3  # +inf: a full-scale click
