"""Formats stompbox reads but does not write (libsndfile: CAF, W64, AU, mu-law, a-law, IMA/MS ADPCM, ALAC in CAF,
MPEG Layer II; FFmpeg: AC3, ADTS AAC, ALAC in M4A, Opus by FFmpeg) and files from other encoders: they open by
content, read to a consistent length, and 200 random seeks (forward and backward) read exactly what a linear
decode reads. Raw elementary streams (ADTS, AC3) have no index, so their seeks cannot trust FFmpeg's estimated
timestamps: they decode from the start (backwards) or on from where they are (forwards).
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf

from stompbox.io import AudioFile

SR = 44100
SECONDS = 3


def source(rate: int = SR) -> np.ndarray:
    t = np.arange(rate * SECONDS) / rate
    rng = np.random.default_rng(7)
    rows = [0.3 * np.sin(2 * np.pi * f * t) + 0.05 * rng.standard_normal(t.size) for f in (330.0, 495.0)]
    return np.array(rows, np.float32)


def libsndfile_bytes(fmt: str, subtype: str) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, source().T, SR, format=fmt, subtype=subtype)
    return buffer.getvalue()


def ffmpeg_bytes(container: str, codec: str, rate: int = SR) -> bytes:
    av = pytest.importorskip("av")
    x = source(rate)
    buffer = io.BytesIO()
    with av.open(buffer, "w", format=container) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.layout = "stereo"
        size = stream.codec_context.frame_size or 1024
        sample_format = stream.codec_context.format.name
        for start in range(0, x.shape[1], size):
            block = np.ascontiguousarray(x[:, start : start + size])
            if sample_format == "s16p":
                block = np.ascontiguousarray((block * 32767).astype(np.int16))
            elif sample_format == "s16":  # interleaved
                block = np.ascontiguousarray((block.T * 32767).astype(np.int16)).reshape(1, -1)
            elif sample_format == "s32p":
                block = np.ascontiguousarray((block * 2**31).astype(np.int32))
            frame = av.AudioFrame.from_ndarray(block, format=sample_format, layout="stereo")
            frame.sample_rate, frame.pts = rate, start
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buffer.getvalue()


CASES = {
    "caf-pcm16": (lambda: libsndfile_bytes("CAF", "PCM_16"), "CAF", True),
    "w64-pcm24": (lambda: libsndfile_bytes("W64", "PCM_24"), "W64", True),
    "au-pcm16": (lambda: libsndfile_bytes("AU", "PCM_16"), "AU", True),
    "wav-ulaw": (lambda: libsndfile_bytes("WAV", "ULAW"), "WAV", True),
    "wav-alaw": (lambda: libsndfile_bytes("WAV", "ALAW"), "WAV", True),
    "wav-ima-adpcm": (lambda: libsndfile_bytes("WAV", "IMA_ADPCM"), "WAV", False),
    "wav-ms-adpcm": (lambda: libsndfile_bytes("WAV", "MS_ADPCM"), "WAV", False),
    "caf-alac": (lambda: libsndfile_bytes("CAF", "ALAC_16"), "CAF", True),
    "mp2": (lambda: ffmpeg_bytes("mp2", "mp2"), "MP3", False),
    "ffmpeg-mp3": (lambda: ffmpeg_bytes("mp3", "libmp3lame"), "MP3", True),
    "ac3": (lambda: ffmpeg_bytes("ac3", "ac3"), "AC3", False),
    "adts-aac": (lambda: ffmpeg_bytes("adts", "aac"), "AAC", False),
    "m4a-alac": (lambda: ffmpeg_bytes("ipod", "alac"), "MOV", True),
    "ffmpeg-opus": (lambda: ffmpeg_bytes("ogg", "libopus", 48000), "OGG", True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_reads_and_seeks_exactly(name):
    make, container, exact_length = CASES[name]
    data = make()
    rate = 48000 if "opus" in name else SR
    with AudioFile(io.BytesIO(data)) as f:
        assert f.format == container and f.samplerate == rate and f.num_channels == 2
        linear = f.read(f.frames + 20000)
        assert f.exact_duration_known and f.frames == linear.shape[1] and f.tell() == f.frames
        if exact_length:
            assert f.frames == rate * SECONDS
        else:  # block codecs pad to whole blocks (ADPCM, AC3, AAC priming): never shorter, at most 2 blocks more
            assert rate * SECONDS <= f.frames <= rate * SECONDS + 4096
        assert np.all(np.isfinite(linear)) and 0.1 < np.max(np.abs(linear)) < 1.1
        rng = np.random.default_rng(11)
        targets = rng.integers(0, f.frames - 1, 200)
        for target in targets:
            f.seek(int(target))
            assert f.tell() == target
            got = f.read(50)
            np.testing.assert_array_equal(got, linear[:, target : target + 50], err_msg=f"{name} seek {target}")
        f.seek(f.frames)
        assert f.read(10).shape == (2, 0)


def test_seek_within_a_tagless_mp3_is_exact_and_the_length_becomes_known(tmp_path):
    """Without a LAME/Xing frame the length is walked at open (issue 17: frame by frame, exact); seeks land
    exactly."""
    data = AudioFile.encode(source(), SR, "mp3", 2)
    tag = data.index(b"Xing") if b"Xing" in data else data.index(b"Info")
    first = data.rfind(b"\xff", 0, tag)
    second = data.index(b"\xff\xfb", tag)
    tagless = data[:first] + data[second:]
    with AudioFile(io.BytesIO(tagless)) as f:
        assert f.exact_duration_known  # walked at open
        linear = np.concatenate([block for block in f.chunks(4096)], axis=1)
        assert f.exact_duration_known and f.frames == linear.shape[1]
        rng = np.random.default_rng(2)
        for target in rng.integers(0, linear.shape[1] - 100, 100):
            f.seek(int(target))
            np.testing.assert_array_equal(f.read(100), linear[:, target : target + 100])


def test_seek_after_the_end_then_back(tmp_path):
    for ext in ("mp3", "ogg", "flac", "m4a"):
        data = AudioFile.encode(source(), SR, ext, 2)
        with AudioFile(io.BytesIO(data)) as f:
            linear = f.read(f.frames)
            assert f.read(100).shape == (2, 0)  # decoders drained at the end
            for target in (0, 1, f.frames - 1, 12345, 2):
                f.seek(target)
                np.testing.assert_array_equal(f.read(1000), linear[:, target : target + 1000], err_msg=ext)


@pytest.mark.parametrize("quality", [64, 128, 500])
def test_vorbis_seeks_after_short_reads_near_the_start(quality):
    """libsndfile's Vorbis seek depends on what the handle decoded before: after a short read near the start, a
    later seek landed 448 frames early (even with a pre-roll). Seeks use a fresh handle."""
    x = np.random.default_rng(9).uniform(-0.9, 0.9, (2, 60000)).astype(np.float32)
    data = AudioFile.encode(x, SR, "ogg", 2, quality=quality)
    with AudioFile(io.BytesIO(data)) as f:
        linear = f.read(f.frames)
        rng = np.random.default_rng(1)
        for _ in range(300):
            target = int(rng.integers(0, 1500) if rng.random() < 0.5 else rng.integers(0, f.frames - 1))
            count = int(rng.integers(1, 1500))
            f.seek(target)
            np.testing.assert_array_equal(f.read(count), linear[:, target : target + count])
        for first, second in [(1, 25000), (0, 16808 + 8192), (100, 40000)]:
            f.seek(first)
            f.read(10)
            f.seek(second)
            np.testing.assert_array_equal(f.read(1000), linear[:, second : second + 1000])


@pytest.mark.parametrize("quality", [64, 128])
@pytest.mark.parametrize("from_path", [False, True])
def test_vorbis_seeks_into_the_last_page(quality, from_path, tmp_path):
    """libsndfile misplaces a Vorbis seek that lands in the file's last page (whose end is trimmed to the exact
    length): in these files the targets from 2,646 (128 kbps) or 9,824 (64 kbps) frames before the end came out
    wrong (shifted: 48 frames late in a 20 s file). Seeks start their pre-roll just before the last page instead.
    Every target in the last 30,000 frames, read to the end, must be what a linear decode reads."""
    from stompbox.io.codecs.ogg_pages import MAX_PAGE, last_page_span

    x = np.random.default_rng(1).uniform(-0.5, 0.5, (2, 5 * SR)).astype(np.float32)
    data = AudioFile.encode(x, SR, "ogg", 2, quality=quality)
    span = last_page_span(data[-2 * MAX_PAGE :])
    assert span is not None and span > 8192  # longer than the seek pre-roll: the pre-roll alone lands in it
    path = tmp_path / "noise.ogg"
    path.write_bytes(data)
    with AudioFile(str(path) if from_path else io.BytesIO(data)) as f:
        linear = f.read(f.frames)
        assert linear.shape[1] == 5 * SR
        wrong = []
        for target in range(linear.shape[1] - 30000, linear.shape[1], 97):
            f.seek(target)
            if not np.array_equal(f.read(linear.shape[1]), linear[:, target:]):
                wrong.append(linear.shape[1] - target)
        assert wrong == []


def test_last_page_span_reads_granules_backwards_and_checks_crcs():
    """The span is the last page's granule position minus the previous page's, as a forward parse of the whole
    file gives it; a tail cut inside the second-last page, a damaged CRC or bytes that are not Ogg give None."""
    import struct

    from stompbox.io.codecs.ogg_pages import MAX_PAGE, last_page_span

    x = np.random.default_rng(3).uniform(-0.5, 0.5, (2, 3 * SR)).astype(np.float32)
    data = AudioFile.encode(x, SR, "ogg", 2, quality=128)
    granules, at = [], 0
    while at < len(data):  # forward: header, segment table, body
        assert data[at : at + 4] == b"OggS"
        granules.append(struct.unpack("<q", data[at + 6 : at + 14])[0])
        segments = data[at + 26]
        at += 27 + segments + sum(data[at + 27 : at + 27 + segments])
    assert last_page_span(data) == last_page_span(data[-2 * MAX_PAGE :]) == granules[-1] - granules[-2] > 0
    last_two = len(data) - data.rfind(b"OggS", 0, data.rfind(b"OggS"))
    assert last_page_span(data[-last_two:]) == granules[-1] - granules[-2]
    assert last_page_span(data[-last_two + 1 :]) is None
    damaged = bytearray(data)
    damaged[-1] ^= 0xFF
    assert last_page_span(bytes(damaged)) is None
    assert last_page_span(b"\0" * 1000) is None and last_page_span(b"") is None
    assert last_page_span(b"xxOggS") is None and last_page_span(data[-27:] + b"OggS") is None


@pytest.mark.parametrize("rate", [16000, 22050, 44100])
@pytest.mark.parametrize("channels", [1, 2])
def test_mp3_seeks_are_exact_or_within_a_float_rounding_step(rate, channels):
    """mpg123 rounds its synthesis filter differently after a seek in mono MP3s and in MPEG-2/2.5 (rates below
    32 kHz): the samples after a seek are in place (no shift; the pre-roll fills the bit reservoir) and differ from
    a linear decode by at most two float32 rounding steps (measured: <= 2.4e-7 over 9 rates x 2 layouts, at most
    1.8e-7 for samples in [-1, 1]). MPEG-1 stereo is bit-exact."""
    x = np.random.default_rng(5).uniform(-0.9, 0.9, (channels, rate * 3)).astype(np.float32)
    data = AudioFile.encode(x, rate, "mp3", channels, quality="V4")
    with AudioFile(io.BytesIO(data)) as f:
        linear = f.read(f.frames)
        worst = 0.0
        for target in np.random.default_rng(6).integers(0, f.frames - 1, 60):
            f.seek(int(target))
            want = linear[:, target : target + 1500]
            got = f.read(1500)
            assert got.shape == want.shape
            worst = max(worst, float(np.max(np.abs(got - want))))
    if channels == 2 and rate >= 32000:
        assert worst == 0.0
    else:
        assert worst <= 2 * np.finfo(np.float32).eps * max(1.0, float(np.max(np.abs(linear))))


def test_last_page_span_of_damaged_tails_is_a_number_or_none():
    """Any cut, flipped or spliced tail: no exception, and a span only where two checked pages end the bytes."""
    from stompbox.io.codecs.ogg_pages import last_page_span

    x = np.random.default_rng(8).uniform(-0.5, 0.5, (1, SR)).astype(np.float32)
    data = AudioFile.encode(x, SR, "ogg", 1, quality=64)
    rng = np.random.default_rng(9)
    for _ in range(300):
        tail = bytearray(data[-int(rng.integers(0, 9000)) :])
        for _ in range(int(rng.integers(0, 4))):
            if tail:
                tail[int(rng.integers(0, len(tail)))] = int(rng.integers(0, 256))
        if rng.random() < 0.3:
            tail += b"OggS"[: int(rng.integers(1, 5))]
        span = last_page_span(bytes(tail))
        assert span is None or (isinstance(span, int) and span >= -(2**63))
