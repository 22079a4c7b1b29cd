"""Reading edge cases found by running pedalboard's own test suite: a file-like read from where it is positioned,
MP3 with junk after its last frame, user overrides of ``read`` honoured, MP3 bitrates clamped per sample rate."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest

from stompbox.io import AudioFile

SR = 44100


def _encoded(fmt: str, frames: int = SR, channels: int = 1, samplerate: int = SR, **kwargs: object) -> bytes:
    rng = np.random.default_rng(7)
    samples = (rng.random((channels, frames), dtype=np.float32) - 0.5) * 0.5
    return AudioFile.encode(samples, samplerate, fmt, channels, **kwargs)


@pytest.mark.parametrize("fmt", ["wav", "flac", "ogg", "mp3"])
def test_a_file_like_is_read_from_where_it_is_positioned(fmt: str) -> None:
    data = _encoded(fmt)
    with AudioFile(io.BytesIO(data)) as f:
        expected = f.read(f.frames)
    prefix = b"\x00not audio\xff" * 77
    stream = io.BytesIO(prefix + data)
    stream.seek(len(prefix))
    with AudioFile(stream) as f:
        assert f.frames == expected.shape[1]
        np.testing.assert_array_equal(f.read(f.frames), expected)
        f.seek(100)
        np.testing.assert_array_equal(f.read(50), expected[:, 100:150])


def _mp3_with_junk(samplerate: int) -> tuple[bytes, int]:
    """A 2 s stereo 320 kbps MP3 followed by random bytes, and its first audio frame's byte offset (its first
    frame is the LAME tag: skipping it leaves a stream whose length is an estimate)."""
    data = _encoded("mp3", 2 * samplerate, 2, samplerate, quality=320)
    tag_frame = 144 * 320_000 // samplerate  # bytes of an MPEG-1 Layer III frame without padding
    junk = np.random.default_rng(3).random(12345, dtype=np.float32).tobytes()
    return data + junk, tag_frame


@pytest.mark.parametrize("samplerate", [44100, 32000])
def test_mp3_with_junk_after_its_last_frame_reads_to_the_junk(samplerate: int) -> None:
    data, tag_frame = _mp3_with_junk(samplerate)
    whole = 2 * samplerate
    # Without the LAME tag, no decoder trims the encoder delay and padding: the stream holds whole frames.
    frames_in_stream = -(-(whole + 576) // 1152) * 1152
    stream = io.BytesIO(data)
    stream.seek(tag_frame)
    with AudioFile(stream) as f:
        assert f.exact_duration_known  # the frames are walked at open (issue 17), up to the junk
        estimate = f.frames
        audio = f.read(estimate + 10_000)
        assert f.exact_duration_known
        assert whole <= audio.shape[1] == f.frames <= estimate
        assert abs(audio.shape[1] - frames_in_stream) <= 1152
        assert np.abs(audio[:, -2000:]).max() > 0.05  # the last frames are audio, not dropped
        f.seek(0)
        np.testing.assert_array_equal(f.read(audio.shape[1] + 1), audio)
    stream.seek(tag_frame)
    with AudioFile(stream) as f:  # small reads: the same number of frames
        total = 0
        while block := f.read(1000).shape[1]:
            total += block
        assert total == audio.shape[1] == f.frames


def test_an_mp3_stream_starting_mid_frame_with_junk_after_it_is_read_by_ffmpeg() -> None:
    """libsndfile needs a frame at the start; FFmpeg finds the first one, and skips the junk at the end."""
    samplerate = 32000
    data, tag_frame = _mp3_with_junk(samplerate)
    stream = io.BytesIO(data)
    stream.seek(tag_frame - 400)  # inside the LAME tag frame
    with AudioFile(stream) as f:
        assert not f.exact_duration_known
        estimate = f.frames
        audio = f.read(estimate)
        assert f.exact_duration_known
        assert audio.shape[1] == f.frames == -(-(2 * samplerate + 576) // 1152) * 1152 <= estimate


def test_mp3_with_junk_and_a_lame_tag_is_exact() -> None:
    data, _ = _mp3_with_junk(SR)
    with AudioFile(io.BytesIO(data)) as f:
        assert f.exact_duration_known and f.frames == 2 * SR
        assert f.read(3 * SR).shape == (2, 2 * SR)


def test_an_overridden_read_of_a_real_file_is_called(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "a.wav")
    with open(path, "wb") as out:
        out.write(_encoded("wav"))
    stream = open(path, "rb")  # noqa: SIM115 - closed below
    real_read = stream.read
    failing = [False]

    def read(*args: object) -> bytes:
        if failing[0]:
            raise ValueError("the user's read failed")
        return real_read(*args)

    stream.read = read  # type: ignore[method-assign]
    try:
        with AudioFile(stream) as f:
            assert f.read(1).shape == (1, 1)
            failing[0] = True
            with pytest.raises(ValueError, match="the user's read failed"):
                for _ in range(f.frames):
                    f.read(1)
    finally:
        stream.close()


def test_repr_of_a_memoryview_reader_names_the_memoryview() -> None:
    view = memoryview(_encoded("wav"))
    with AudioFile(view) as f:
        assert f"file_like={view!r}" in repr(f)


@pytest.mark.parametrize(("samplerate", "highest"), [(8000, 64), (11025, 64), (22050, 160), (24000, 160)])
def test_mp3_bitrates_above_a_rates_highest_are_clamped(samplerate: int, highest: int) -> None:
    asked = _encoded("mp3", samplerate, 1, samplerate, quality=320)
    clamped = _encoded("mp3", samplerate, 1, samplerate, quality=highest)
    assert asked == clamped
    with AudioFile(io.BytesIO(), "w", samplerate, 1, format="mp3", quality=320) as f:
        assert f.quality == "320 kbps"  # as pedalboard names it


def test_mp3_vbr_levels_are_lames_own() -> None:
    """V0..V9 set LAME's VBR quality 0..9 (libsndfile multiplies its compression level by 10): V9 was 9.99."""
    from stompbox.io.formats import settings

    for level in range(10):
        assert settings("mp3", 16, f"V{level}", SR, 1).compression_level * 10 == pytest.approx(level)
