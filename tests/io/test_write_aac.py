"""AAC (M4A/MP4) writing: the sample rates FFmpeg's encoder takes, and up to 8 channels."""

from __future__ import annotations

import io

import numpy as np
import pytest

from stompbox.io import AudioFile


@pytest.mark.parametrize("rate", [123, 999, 48001, 176400])
@pytest.mark.parametrize("ext", [".m4a", ".mp4", ".aac"])
def test_aac_at_a_rate_it_cannot_encode_is_a_value_error_and_no_file(tmp_path, ext: str, rate: int) -> None:
    path = tmp_path / f"out{ext}"
    with pytest.raises(ValueError, match="44100"):
        AudioFile(str(path), "w", rate, 1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("rate", [7350, 8000, 11025, 22050, 44100, 96000])
def test_aac_at_each_rate_it_encodes_reads_back_at_that_rate(rate: int) -> None:
    stream = io.BytesIO()
    with AudioFile(stream, "w", rate, 1, format="m4a"):
        pass
    stream.seek(0)
    with AudioFile(stream) as f:
        assert f.samplerate == rate


def test_eight_channel_aac_is_written() -> None:
    av = pytest.importorskip("av")
    t = np.arange(4096) / 44100.0
    # tones under 120 Hz: AAC low-passes the LFE channel (the fourth of 7.1)
    audio = np.stack([0.5 * np.sin(2 * np.pi * (50.0 + 8.0 * c) * t) for c in range(8)]).astype(np.float32)
    stream = io.BytesIO()
    with AudioFile(stream, "w", 44100, 8, format="m4a") as f:  # PyAV's 8-channel planar frames failed
        f.write(audio)
    stream.seek(0)
    # decoded with PyAV into interleaved samples (its planar 8-channel frames are what failed when writing)
    with av.open(stream) as container:
        assert container.streams.audio[0].channels == 8
        resampler = av.AudioResampler(format="flt", layout="7.1", rate=44100)
        blocks = [
            out.to_ndarray().reshape(-1, 8) for frame in container.decode(audio=0) for out in resampler.resample(frame)
        ]
    back = np.concatenate(blocks)
    assert back.shape[0] >= 4096
    levels = np.sqrt((back[1024:3072] ** 2).mean(axis=0))  # every channel carries its tone (RMS 0.5/sqrt(2))
    assert np.all(levels > 0.2)


def test_eight_channel_aac_reads_back_through_stompbox_each_channel_in_its_place() -> None:
    """Reading an 8-channel file through PyAV crashed the process (its planar frames of 8 or more channels
    list a ninth plane); now each channel comes back with its own tone, in its place."""
    rate, n = 44100, 8192
    t = np.arange(n) / rate
    tones = 50.0 + 8.0 * np.arange(8)  # under 120 Hz: AAC low-passes the LFE channel (the fourth of 7.1)
    audio = (0.5 * np.sin(2 * np.pi * tones[:, None] * t)).astype(np.float32)
    stream = io.BytesIO()
    with AudioFile(stream, "w", rate, 8, format="m4a") as f:
        f.write(audio)
    stream.seek(0)
    with AudioFile(stream) as f:
        assert f.num_channels == 8
        back = f.read(f.frames)
    assert back.shape[0] == 8 and back.shape[1] >= n - 2048 and back.flags.c_contiguous
    window = back[:, 1024:5120] * np.hanning(4096)
    peaks = np.argmax(np.abs(np.fft.rfft(window, 8 * 4096, axis=1)), axis=1) * rate / (8 * 4096)
    np.testing.assert_allclose(peaks, tones, atol=3.0)  # tones 8 Hz apart: a swapped channel is 8 Hz off


@pytest.mark.parametrize("rate", [16000, 44100, 48000])
@pytest.mark.parametrize("frames", [1000, 5000, 22050, 48000, 123457])
def test_aac_keeps_the_exact_length_written(rate: int, frames: int) -> None:
    """The edit list that hides the encoder's priming and padding counted in milliseconds (the MP4 movie's
    default time scale): 48000 frames at 44.1 kHz came back as 47981, 1000 as 970. It counts in samples now."""
    stream = io.BytesIO()
    with AudioFile(stream, "w", rate, 1, format="m4a") as f:
        f.write(np.zeros((1, frames), np.float32))
    stream.seek(0)
    with AudioFile(stream) as f:
        assert f.frames == frames and f.exact_duration_known
        assert f.read(frames + 100).shape == (1, frames)


@pytest.mark.parametrize("channels", [3, 4, 5, 7])
def test_aac_without_a_surround_layout_keeps_every_channel_full_band(channels: int) -> None:
    """3 and 7 channels were written as 2.1 and 6.1, whose low-frequency channel the encoder cuts to 120 Hz:
    the third (or fourth) channel of any 3- or 7-channel audio lost its content. Now only 5.1 and 7.1 (6 and 8
    channels, WAV's defaults too) have a low-frequency channel."""
    rate, n = 48000, 48000
    t = np.arange(n) / rate
    tones = 300.0 + 170.0 * np.arange(channels)
    audio = (0.3 * np.sin(2 * np.pi * tones[:, None] * t)).astype(np.float32)
    stream = io.BytesIO()
    with AudioFile(stream, "w", rate, channels, format="m4a") as f:
        f.write(audio)
    stream.seek(0)
    with AudioFile(stream) as f:
        back = f.read(f.frames)
    middle = back[:, 4800:43200]
    peaks = np.argmax(np.abs(np.fft.rfft(middle, axis=1)), axis=1) * rate / middle.shape[1]
    np.testing.assert_allclose(peaks, tones, atol=2.0)
    levels = np.sqrt((middle**2).mean(axis=1))
    assert np.all(levels > 0.15)  # about 0.21 each (a channel cut to 120 Hz keeps nothing of these tones)
