"""PitchShift and time_stretch: pitch of shifted sines, lengths, latency, alignment, streaming, errors."""

from __future__ import annotations

import numpy as np
import pytest

import stompbox
from _audio import SR, music, process_in_blocks, sine
from stompbox import PitchShift, time_stretch
from stompbox.effects.pitch import frame_size


def dominant_freq(y: np.ndarray, sr: int = SR) -> float:
    """Frequency (Hz) of the strongest partial of the middle half of ``y``: an 8x zero-padded Hann spectrum
    with parabolic interpolation of the log magnitude (error well below 0.01 % for a steady sine)."""
    y = np.asarray(y, np.float64).sum(axis=0) if np.ndim(y) == 2 else np.asarray(y, np.float64)
    y = y[len(y) // 4 : -len(y) // 4]
    spec = np.abs(np.fft.rfft(y * np.hanning(len(y)), 8 * len(y)))
    k = int(np.argmax(spec))
    a, b, c = np.log(spec[k - 1 : k + 2] + 1e-30)
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * sr / (8 * len(y))


def envelope_lag(out: np.ndarray, ref: np.ndarray) -> int:
    """Lag (samples) of the cross-correlation peak between the amplitude envelopes of ``out`` and ``ref``."""
    a = np.abs(np.asarray(out, np.float64)).sum(axis=0)
    b = np.abs(np.asarray(ref, np.float64)).sum(axis=0)
    c = np.correlate(a, b, "full")
    return int(np.argmax(c)) - (len(b) - 1)


def rms_db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.square(np.asarray(x, np.float64)))))


# --------------------------------------------------------------------------------------------- PitchShift
@pytest.mark.parametrize("semitones", [-24, -12, -7, -5, -1, 1, 3, 7, 12, 19])
def test_pitch_shift_moves_a_sine_by_the_interval(semitones):
    x = sine(440.0, 1.0)
    y = PitchShift(semitones)(x, SR)
    expected = 440.0 * 2 ** (semitones / 12)
    # the output frequency is set by the phase advance per hop, which is exact: allow 0.05 % (under a cent)
    assert dominant_freq(y) == pytest.approx(expected, rel=5e-4)
    # the level of a steady sine is kept (the peak-shifted region keeps the window's shape): within 1 dB
    assert abs(rms_db(y[:, SR // 4 : -SR // 4]) - rms_db(x)) < 1.0


def test_pitch_shift_of_a_harmonic_tone_keeps_it_harmonic():
    t = np.arange(SR) / SR
    x = sum(0.2 / h * np.sin(2 * np.pi * 220 * h * t + h) for h in range(1, 9))[None].astype(np.float32)
    y = PitchShift(5)(x, SR)[0, SR // 4 : -SR // 4].astype(np.float64)
    spec = np.abs(np.fft.rfft(y * np.hanning(len(y)))) ** 2
    freqs = np.fft.rfftfreq(len(y), 1 / SR)
    near = np.zeros(freqs.shape, bool)
    for h in range(1, 9):
        target = 220 * h * 2 ** (5 / 12)
        near |= np.abs(freqs - target) < 0.015 * target
    # energy away from the shifted partials (smearing, phasiness, spurious partials): measured -47 dB
    assert 10 * np.log10(spec[~near].sum() / spec.sum()) < -35


def test_pitch_shift_zero_reproduces_the_input():
    x = music(1.0)
    np.testing.assert_allclose(PitchShift(0)(x, SR), x, atol=1e-6)
    # pedalboard's test_pitch_shift_latency_compensation: inside a board too
    board = stompbox.Pedalboard([PitchShift(0)])
    np.testing.assert_allclose(board(x, SR), x, atol=1e-6)


@pytest.mark.parametrize(("sr", "latency"), [(44100, 2047), (48000, 2047), (22050, 1023), (96000, 4095)])
def test_latency_is_one_frame_minus_one(sr, latency):
    plugin = PitchShift(3)
    plugin(np.zeros((1, 64), np.float32), sr)
    assert plugin.latency_samples == latency == frame_size(sr) - 1
    assert latency / sr < 0.05  # pedalboard's is about 1 s


@pytest.mark.parametrize("semitones", [0, 1, -1, 3])
def test_output_is_aligned_with_the_input(semitones):
    x = np.zeros((1, SR), np.float32)
    x[0, 20000:20200] = np.hanning(200) * np.sin(2 * np.pi * 2000 * np.arange(200) / SR)
    y = PitchShift(semitones)(x, SR)
    assert y.shape == x.shape
    assert abs(envelope_lag(y, x)) <= 2


def test_output_keeps_length_and_layout():
    x = music(0.3)
    for arr in (x, x.T, x[0]):
        y = PitchShift(4)(arr, SR)
        assert y.shape == arr.shape and y.dtype == np.float32


@pytest.mark.parametrize("block", [1, 7, 512, 8192])
def test_any_block_size_gives_the_whole_array_result(block):
    x = music(0.4 if block == 1 else 1.0)
    plugin = PitchShift(5)
    whole = plugin(x, SR)
    streamed = process_in_blocks(plugin, x, SR, block)
    # the stream withholds the latency, so streamed[j] is whole[j]
    assert streamed.shape[1] == x.shape[1] - plugin.latency_samples
    np.testing.assert_allclose(streamed, whole[:, : streamed.shape[1]], atol=1e-6)


def test_streaming_withholds_exactly_the_latency():
    plugin = PitchShift(-3)
    x = music(0.5)
    sizes = [plugin.process(x[:, i : i + 1000], SR, reset=False).shape[1] for i in range(0, x.shape[1], 1000)]
    assert sizes[0] == 0 and sizes[-1] == x.shape[1] - (len(sizes) - 1) * 1000
    assert sum(sizes) == x.shape[1] - plugin.latency_samples


def test_channels_are_processed_together():
    left = music(0.5, channels=1)[0]
    x = np.stack([left, 0.5 * left])
    y = PitchShift(7)(x, SR)
    # one move and one rotation per region for all channels: the channel ratio survives exactly
    np.testing.assert_allclose(y[1], 0.5 * y[0], atol=1e-6)


def test_semitone_range_and_error_text():
    assert PitchShift(72).semitones == 72 and PitchShift(-72).semitones == -72
    for bad in (72.5, -73):
        with pytest.raises(ValueError, match="Semitones of pitch must be a value between -72st and 72st"):
            PitchShift(bad)
    plugin = PitchShift(1)
    with pytest.raises(ValueError):
        plugin.semitones = 100


def test_extreme_shifts_stay_finite():
    x = music(0.3)
    for st in (-72, 72):
        y = PitchShift(st)(x, SR)
        assert np.isfinite(y).all()


def test_parameter_change_mid_stream_takes_effect():
    plugin = PitchShift(0)
    x = sine(440.0, 2.0)
    first = plugin.process(x[:, :SR], SR, reset=False)
    plugin.semitones = 12
    second = plugin.process(x[:, SR:], SR, reset=False)
    assert np.isfinite(first).all() and np.isfinite(second).all()
    assert dominant_freq(second[:, SR // 4 :]) == pytest.approx(880.0, rel=1e-3)


def test_nan_does_not_poison_the_state():
    x = music(0.5)
    bad = x.copy()
    bad[:, 5000:5010] = np.nan
    plugin = PitchShift(4)
    y = plugin(bad, SR)
    assert y.shape == x.shape
    # after a reset the plugin behaves exactly like a fresh one
    np.testing.assert_array_equal(plugin(x, SR), PitchShift(4)(x, SR))
    # and in a stream the audio recovers once the non-finite samples have left the frame
    plugin.reset()
    plugin.process(bad[:, :0], SR, reset=False)
    out = np.concatenate([plugin.process(bad[:, i : i + 4096], SR, reset=False) for i in range(0, 22050, 4096)], 1)
    assert np.isfinite(out[:, 5010 + 2 * frame_size(SR) :]).all()


# --------------------------------------------------------------------------------------------- time_stretch
@pytest.mark.parametrize("factor", [0.5, 0.8, 1.0, 1.25, 2.0, 3.7, 7.3])
def test_time_stretch_length_and_pitch(factor):
    x = sine(440.0, 1.0)[0]
    y = time_stretch(x, SR, factor)
    # N / factor rounded half up (pedalboard 0.9.26: 44100 / 7.3 = 6041.1 -> 6041, 22050 / 7.3 -> 3021)
    assert y.shape == (1, int(np.floor(SR / factor + 0.5))) and y.dtype == np.float32
    assert dominant_freq(y) == pytest.approx(440.0, rel=1e-3)


@pytest.mark.parametrize("semitones", [-12, -5, 7, 12])
def test_time_stretch_pitch_shift(semitones):
    y = time_stretch(sine(440.0, 1.0)[0], SR, 1.0, float(semitones))
    assert y.shape == (1, SR)
    assert dominant_freq(y) == pytest.approx(440.0 * 2 ** (semitones / 12), rel=1e-2)


def test_time_stretch_passthrough_is_the_input():
    x = music(1.0)
    np.testing.assert_allclose(time_stretch(x, SR, 1.0, 0.0), x, atol=1e-5)  # pedalboard allows 0.25


def test_time_stretch_layouts():
    x = music(0.5)
    assert time_stretch(x, SR, 2.0).shape == (2, x.shape[1] // 2)
    assert time_stretch(np.ascontiguousarray(x.T), SR, 2.0).shape == (x.shape[1] // 2, 2)
    assert time_stretch(x[0], SR, 2.0).shape == (1, x.shape[1] // 2)
    assert time_stretch(x[:, :0], SR, 2.0).shape == (2, 0)
    assert time_stretch(x[:, :5], SR, 2.0).shape == (2, 3)  # 2.5 rounds up
    assert time_stretch(x[:, :22049], SR, 2.0).shape == (2, 11025)


@pytest.mark.parametrize("factor", [0.5, 1.6])
def test_time_stretch_keeps_events_at_scaled_times(factor):
    x = np.zeros((1, SR), np.float32)
    burst = np.hanning(400) * np.sin(2 * np.pi * 1500 * np.arange(400) / SR)
    x[0, 10000:10400] = burst
    y = time_stretch(x, SR, factor)
    env = np.convolve(np.abs(y[0].astype(np.float64)), np.ones(200), "same")
    # the burst's centre (input 10200) lands at output 10200 / factor, within 2 ms
    assert abs(int(np.argmax(env)) - 10200 / factor) < 0.002 * SR


def test_time_stretch_factor_arrays():
    x = sine(440.0, 1.0)[0]
    const = time_stretch(x, SR, np.full(SR, 1.25))
    assert const.shape == time_stretch(x, SR, 1.25).shape
    np.testing.assert_allclose(const, time_stretch(x, SR, 1.25), atol=1e-6)
    stretch = np.where(np.arange(SR) < SR // 2, 1.0, 2.0)
    y = time_stretch(x, SR, stretch)
    assert y.shape == (1, int(SR // 2 + SR // 4))
    pitch = np.where(np.arange(SR) < SR // 2, 0.0, 12.0)
    z = time_stretch(sine(440.0, 2.0)[0], SR, 1.0, np.concatenate([pitch, np.full(SR, 12.0)]))
    assert dominant_freq(z[:, : SR // 2]) == pytest.approx(440.0, rel=1e-2)
    assert dominant_freq(z[:, SR:]) == pytest.approx(880.0, rel=1e-2)


@pytest.mark.parametrize(
    "options",
    [
        {"high_quality": False},
        {"transient_mode": "mixed"},
        {"transient_mode": "smooth", "transient_detector": "soft"},
        {"transient_detector": "percussive"},
        {"retain_phase_continuity": False},
        {"use_long_fft_window": True},
        {"use_long_fft_window": False},
        {"use_time_domain_smoothing": True, "preserve_formants": False},
    ],
)
def test_time_stretch_options(options):
    y = time_stretch(sine(440.0, 1.0)[0], SR, 1.25, 7.0, **options)
    assert y.shape == (1, SR * 4 // 5)
    assert dominant_freq(y) == pytest.approx(440.0 * 2 ** (7 / 12), rel=1e-2)


def test_time_stretch_errors():
    x = sine(440.0, 0.1)[0]
    n = x.shape[0]
    with pytest.raises(TypeError):
        time_stretch(x.astype(np.float64), SR)
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="stretch_factor must be greater than 0.0x"):
            time_stretch(x, SR, bad)
    with pytest.raises(ValueError, match="pitch_shift_in_semitones must be between -72 and \\+72"):
        time_stretch(x, SR, 1.0, 73.0)
    with pytest.raises(ValueError, match="buffer"):
        time_stretch(x, SR, np.ones(10))
    bad = np.ones(n)
    bad[0] = 0.0
    with pytest.raises(ValueError, match="element at index 0 was 0"):
        time_stretch(x, SR, bad)
    pitch = np.zeros(n)
    pitch[5] = 73.0
    with pytest.raises(ValueError, match="element at index 5 was 73"):
        time_stretch(x, SR, 1.0, pitch)
    with pytest.raises(ValueError, match="transient_mode.*crisp"):
        time_stretch(x, SR, transient_mode="sharp")
    with pytest.raises(ValueError, match="transient_detector.*compound"):
        time_stretch(x, SR, transient_detector="sharp")
    with pytest.raises(ValueError, match="samplerate"):
        time_stretch(x, 0, 1.0)


def test_time_stretch_nan_input_gives_finite_output_elsewhere():
    x = music(1.0)
    x[:, 1000:1010] = np.nan
    y = time_stretch(x, SR, 1.5, 2.0)
    assert np.isfinite(y[:, 4096:]).all()
