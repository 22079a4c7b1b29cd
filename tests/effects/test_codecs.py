"""MP3Compressor and GSMFullRateCompressor: real codec round trips, aligned and block-size invariant."""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf

from _audio import SR, diff_db, music, process_in_blocks, speech
from stompbox import GSMFullRateCompressor, MP3Compressor, Resample

MP3_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]


def _sine(sr: int, seconds: float = 0.5, channels: int = 1, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return np.tile(0.5 * np.sin(2 * np.pi * freq * t), (channels, 1)).astype(np.float32)


def _lag(x: np.ndarray, y: np.ndarray, span: int = 3000) -> int:
    """The shift of y against x (in samples) that maximises their cross-correlation."""
    core = slice(span, x.shape[-1] - span)
    lags = np.arange(-span, span + 1)
    scores = [np.dot(x[core], y[core.start + lag : core.stop + lag]) for lag in lags]
    return int(lags[int(np.argmax(scores))])


# ----------------------------------------------------------------------------------------------- MP3
@pytest.mark.parametrize("sr", MP3_RATES)
@pytest.mark.parametrize("channels", [1, 2])
def test_mp3_sine_round_trip_within_pedalboards_tolerance(sr, channels):
    x = _sine(sr, channels=channels)
    y = MP3Compressor(2)(x, sr)
    assert y.shape == x.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, x, atol=0.25)


@pytest.mark.parametrize("vbr_quality", [0.0, 0.5, 9.5, 10.0])
def test_mp3_quality_range(vbr_quality):
    x = _sine(44100, channels=2)
    np.testing.assert_allclose(MP3Compressor(vbr_quality)(x, 44100), x, atol=0.25)


def test_mp3_is_a_real_lossy_round_trip_aligned_with_the_input():
    x = music(1.5)
    y = MP3Compressor(2)(x, SR)
    assert _lag(x[0], y[0]) == 0  # latency exactly compensated
    error = diff_db(y, x)
    assert -40 < error < -8  # audibly coded (not a pass-through), yet the same signal
    worse = diff_db(MP3Compressor(9.5)(x, SR), x)
    assert worse > error  # lower quality setting, larger error


@pytest.mark.parametrize("sr", [8000, 22050, 44100, 48000])
@pytest.mark.parametrize("vbr_quality", [0.0, 2.0, 9.5])
def test_mp3_every_segment_is_decoded_whole(sr, vbr_quality):
    """Each coded segment comes back whole, at every rate and quality: a VBR stream without a gapless tag is
    decoded to its end (libsndfile stopped at a length estimated from the first frame's bitrate, leaving
    segments half silent), and the lowest qualities are not resampled down by LAME."""
    x = (0.2 * np.random.default_rng(2).standard_normal((2, 3 * sr))).astype(np.float32)
    y = MP3Compressor(vbr_quality)(x, sr)
    step = sr // 20
    for start in range(0, x.shape[1] - step, step):
        block = slice(start, start + step)
        kept = np.sqrt(np.mean(y[:, block] ** 2) / np.mean(x[:, block] ** 2))
        # white noise, the codec's worst case: V9.5 lowpasses it to about half its level; V0-V2 code it to
        # -4..-8 dB of error. A segment cut short would be silence: nothing kept, 0 dB of error.
        assert kept > 0.35, f"{start / sr:.2f} s: {kept:.2f} of the level"
        if vbr_quality <= 2.0:
            assert diff_db(y[:, block], x[:, block]) < -3.0, f"{start / sr:.2f} s"


def test_mp3_output_identical_for_any_buffer_size():
    x = music(1.0)
    plugin = MP3Compressor(2)
    outputs = [plugin(x, SR, buffer_size=b) for b in (128, 1152, 7000, 65536)]
    for other in outputs[1:]:
        np.testing.assert_array_equal(other, outputs[0])


@pytest.mark.parametrize("block", [7, 512, 8192])
def test_mp3_streaming_equals_whole_array_shifted(block):
    x = music(1.0)
    plugin = MP3Compressor(2)
    whole = plugin(x, SR)
    latency = plugin.latency_samples
    streamed = process_in_blocks(plugin, x, SR, block)
    n = x.shape[1] - latency
    assert streamed.shape[1] == n
    np.testing.assert_allclose(streamed, whole[:, :n], atol=1e-6)


def test_mp3_segments_join_without_clicks():
    # a steady tone through the segment joins: the coded error stays as small everywhere as away from joins
    x = _sine(44100, seconds=2.0)
    y = MP3Compressor(2)(x, 44100)
    err = np.abs(y - x)[0]
    assert err.max() < 0.05


@pytest.mark.parametrize("sr", [96000, 6000, 44101])
def test_mp3_rejects_unsupported_rates_listing_all(sr):
    with pytest.raises(ValueError) as info:
        MP3Compressor()(np.zeros((1, 1000), np.float32), sr)
    for rate in MP3_RATES:
        assert str(rate) in str(info.value)


def test_mp3_errors():
    with pytest.raises(ValueError, match="VBR quality must be greater than 0 and less than 10"):
        MP3Compressor(10.5)
    with pytest.raises(ValueError, match="VBR quality"):
        MP3Compressor(-1)
    assert MP3Compressor().vbr_quality == 2.0


# ----------------------------------------------------------------------------------------------- GSM
def test_gsm_at_8k_is_exactly_libsndfiles_one_shot_codec():
    # streaming the codec frame by frame gives the same samples as coding the whole signal at once
    x = speech(1.0, sr=8000)[0]
    buffer = io.BytesIO()
    with sf.SoundFile(buffer, "w", 8000, 1, format="RAW", subtype="GSM610") as f:
        f.write(x)
    buffer.seek(0)
    reference = sf.read(buffer, dtype="float32", samplerate=8000, channels=1, format="RAW", subtype="GSM610")[0]
    y = GSMFullRateCompressor()(x, 8000, buffer_size=100)
    np.testing.assert_array_equal(y, reference[: len(x)])


@pytest.mark.parametrize("sr", [8000, 22050, 44100, 48000])
@pytest.mark.parametrize("channels", [1, 2])
def test_gsm_sine_round_trip_within_pedalboards_tolerance(sr, channels):
    x = _sine(sr, channels=channels)
    y = GSMFullRateCompressor()(x, sr)
    assert y.shape == x.shape
    np.testing.assert_allclose(y, x, atol=0.75)


def test_gsm_forces_mono_and_aligns():
    x = speech(1.5, channels=2)
    x[1] *= 0.5
    y = GSMFullRateCompressor()(x, SR)
    np.testing.assert_array_equal(y[0], y[1])
    mono = x.mean(axis=0)
    assert _lag(mono, y[0]) == 0
    assert -25 < diff_db(y[0], mono) < -3  # a narrow-band, 13 kbit/s coding of the same speech


@pytest.mark.parametrize("quality", [Resample.Quality.WindowedSinc8, Resample.Quality.Linear])
def test_gsm_output_identical_for_buffer_sizes(quality):
    x = music(1.0)
    plugin = GSMFullRateCompressor(quality)
    outputs = [plugin(x, SR, buffer_size=b) for b in (32, 7000, 8192)]
    for other in outputs[1:]:
        np.testing.assert_array_equal(other, outputs[0])


@pytest.mark.parametrize("block", [1, 7, 512, 8192])
def test_gsm_streaming_equals_whole_array_shifted(block):
    x = music(0.3 if block == 1 else 1.0)
    plugin = GSMFullRateCompressor()
    whole = plugin(x, SR)
    latency = plugin.latency_samples
    streamed = process_in_blocks(plugin, x, SR, block)
    n = x.shape[1] - latency
    np.testing.assert_allclose(streamed, whole[:, :n], atol=1e-6)


def test_gsm_repr_and_quality():
    plugin = GSMFullRateCompressor()
    assert plugin.quality is Resample.Quality.WindowedSinc8
    assert repr(plugin).startswith("<stompbox.GSMFullRateCompressor at ")


@pytest.mark.parametrize("sr", MP3_RATES)
@pytest.mark.parametrize("channels", [1, 2])
def test_mp3_latency_covers_the_bit_reservoirs_longest_wait(sr, channels):
    """Loud noise bursts, each followed by silence, make LAME leave the most of a frame for later frames' main
    data while those frames are the smallest (the longest a frame's last byte can wait). Streamed in small
    blocks, every output sample is still there in time (a stage that delivered late would raise), and equals
    the whole-array result."""
    rng = np.random.default_rng(5)
    x = np.zeros((channels, 2 * sr + 52000), np.float32)  # longer than the latency (51441 at 24 kHz stereo)
    for start in range(sr // 10, x.shape[1], sr // 2):
        burst = rng.standard_normal((channels, min(sr // 20, x.shape[1] - start))).astype(np.float32)
        x[:, start : start + burst.shape[1]] = np.clip(0.9 * burst, -1.0, 1.0)
    plugin = MP3Compressor(2)
    whole = plugin(x, sr)
    streamed = process_in_blocks(plugin, x, sr, 577)
    n = x.shape[1] - plugin.latency_samples
    np.testing.assert_allclose(streamed, whole[:, :n], atol=1e-6)
