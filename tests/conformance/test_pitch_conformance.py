"""PitchShift and time_stretch against pedalboard 0.9.26 (Rubber Band).

The engines differ (our phase vocoder vs Rubber Band R3), so samples are not compared. What must agree:
shapes and lengths, where the pitch lands, where events land in time, the level, and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import stompbox
from _audio import SR, music, sine


def dominant_freq(y: np.ndarray) -> float:
    y = np.asarray(y, np.float64).reshape(-1, np.shape(y)[-1]).sum(axis=0)
    y = y[len(y) // 4 : -len(y) // 4]
    spec = np.abs(np.fft.rfft(y * np.hanning(len(y)), 8 * len(y)))
    k = int(np.argmax(spec))
    a, b, c = np.log(spec[k - 1 : k + 2] + 1e-30)
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * SR / (8 * len(y))


def envelope_lag(out: np.ndarray, ref: np.ndarray) -> int:
    """Lag (samples) of the cross-correlation peak of 10 ms-smoothed amplitude envelopes."""
    kernel = np.ones(441) / 441
    a = np.convolve(np.abs(np.asarray(out, np.float64)).sum(axis=0), kernel, "same")
    b = np.convolve(np.abs(np.asarray(ref, np.float64)).sum(axis=0), kernel, "same")
    c = np.correlate(a - a.mean(), b - b.mean(), "full")
    return int(np.argmax(c)) - (len(b) - 1)


def band_centroid(y: np.ndarray, centre: float) -> float:
    """Power-weighted mean frequency (Hz) of the spectrum of ``y`` within +/-20 % of ``centre``."""
    y = np.asarray(y, np.float64).reshape(-1, np.shape(y)[-1]).sum(axis=0)[SR // 4 : -SR // 4]
    power = np.abs(np.fft.rfft(y * np.hanning(len(y)))) ** 2
    freqs = np.fft.rfftfreq(len(y), 1 / SR)
    band = np.abs(freqs - centre) < 0.2 * centre
    return float((power[band] * freqs[band]).sum() / power[band].sum())


def harmonic_tone(seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return sum(0.25 / h * np.sin(2 * np.pi * 220 * h * t + h) for h in range(1, 7))[None].astype(np.float32)


@pytest.mark.parametrize("semitones", [-12, -5, 3, 7, 12])
def test_pitch_shift_lands_on_the_same_pitch(pb, semitones):
    x = harmonic_tone()
    expected = 220 * 2 ** (semitones / 12)
    ours = stompbox.PitchShift(semitones)(x, SR)
    theirs = pb.PitchShift(semitones)(x, SR)
    assert dominant_freq(ours) == pytest.approx(expected, rel=1e-3)
    # pedalboard's real-time Rubber Band splits a steady partial into sidebands about 1-10 % either side of
    # the target (measured: 100 and 120 Hz for 110 Hz at -12 st; 872 and 888 Hz for a 440 Hz sine at +12 st),
    # so its strongest bin can miss; the power centroid of the band around the shifted fundamental does not
    # (measured within 0.6 %). Both agree within 1 %.
    assert band_centroid(ours, expected) == pytest.approx(band_centroid(theirs, expected), rel=1e-2)


@pytest.mark.parametrize("semitones", [-7, 3, 12])
def test_pitch_shift_shapes_level_and_timing(pb, semitones):
    x = music(1.5)
    for arr in (x, np.ascontiguousarray(x.T), x[0]):
        ours = stompbox.PitchShift(semitones)(arr, SR)
        theirs = pb.PitchShift(semitones)(arr, SR)
        assert ours.shape == theirs.shape == arr.shape and ours.dtype == theirs.dtype
    ours = stompbox.PitchShift(semitones)(x, SR)
    theirs = pb.PitchShift(semitones)(x, SR)
    # level: both keep the loudness of the music within 2 dB of each other (measured 0.1 to 1.2 dB)
    level = 20 * np.log10(np.std(ours) / np.std(theirs))
    assert abs(level) < 2.0
    # timing: ours is aligned with the input (10 ms envelopes agree within 1 ms); pedalboard's output drifts
    # with the shift (measured +8 ms at -7 st, -9 ms at +7 st), so it is only required within 15 ms of ours
    assert abs(envelope_lag(ours, x)) <= 0.001 * SR
    assert abs(envelope_lag(theirs, ours)) <= 0.015 * SR


def test_pitch_shift_zero_in_a_board_matches(pb):
    x = music(1.0)
    ours = stompbox.Pedalboard([stompbox.PitchShift(0)])(x, SR)
    theirs = pb.Pedalboard([pb.PitchShift(0)])(x, SR)
    np.testing.assert_allclose(ours, x, atol=1e-6)
    np.testing.assert_allclose(theirs, x, atol=1e-6)


def test_streaming_latency_is_far_below_pedalboards(pb):
    x = np.zeros((1, 2 * SR), np.float32)
    withheld = {}
    for name, plugin in (("ours", stompbox.PitchShift(3)), ("theirs", pb.PitchShift(3))):
        returned = sum(plugin.process(x[:, i : i + 1000], SR, reset=False).shape[1] for i in range(0, 2 * SR, 1000))
        withheld[name] = x.shape[1] - returned
    assert withheld["ours"] == 2047  # latency_samples at 44.1 kHz
    assert withheld["theirs"] > 10 * withheld["ours"]  # about 1 s vs 46 ms


@pytest.mark.parametrize("factor", [0.5, 0.75, 1.0, 1.25, 2.0, 7.3])
def test_time_stretch_lengths_match(pb, factor):
    x = music(0.5)
    for arr in (x, np.ascontiguousarray(x.T), x[0]):
        ours = stompbox.time_stretch(arr, SR, factor)
        theirs = pb.time_stretch(arr, SR, factor)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32


@pytest.mark.parametrize(("factor", "semitones"), [(1.0, 12.0), (1.25, -5.0), (0.8, 7.0)])
def test_time_stretch_pitch_and_timing_match(pb, factor, semitones):
    x = sine(440.0, 1.0)[0]
    ours = stompbox.time_stretch(x, SR, factor, semitones)
    theirs = pb.time_stretch(x, SR, factor, semitones)
    expected = 440 * 2 ** (semitones / 12)
    assert dominant_freq(ours) == pytest.approx(expected, rel=1e-2)
    assert band_centroid(ours, expected) == pytest.approx(band_centroid(theirs, expected), rel=1e-2)
    # an event lands at the same output time (offline Rubber Band is aligned): within 2 ms
    m = music(1.0)
    assert abs(envelope_lag(stompbox.time_stretch(m, SR, factor), pb.time_stretch(m, SR, factor))) <= 0.002 * SR


def test_time_stretch_passthrough(pb):
    x = music(2.0)
    np.testing.assert_allclose(pb.time_stretch(x, SR, 1.0, 0.0), x, atol=0.25)
    np.testing.assert_allclose(stompbox.time_stretch(x, SR, 1.0, 0.0), x, atol=1e-5)


def test_time_stretch_errors_match(pb):
    x = sine(440.0, 0.1)[0]
    n = x.shape[0]
    bad_stretch = np.ones(n)
    bad_stretch[0] = 0.0
    bad_pitch = np.zeros(n)
    bad_pitch[3] = 73.0
    cases = [
        ((x, SR, 0.0), {}),
        ((x, SR, 1.0, 73.0), {}),
        ((x, SR, np.ones(10)), {}),
        ((x, SR, bad_stretch), {}),
        ((x, SR, 1.0, bad_pitch), {}),
        ((x, SR), {"transient_mode": "sharp"}),
    ]
    for args, kwargs in cases:
        with pytest.raises(ValueError) as theirs:
            pb.time_stretch(*args, **kwargs)
        with pytest.raises(ValueError) as ours:
            stompbox.time_stretch(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(TypeError):
        pb.time_stretch(x.astype(np.float64), SR)
    with pytest.raises(TypeError):
        stompbox.time_stretch(x.astype(np.float64), SR)
    # sharp edges not copied: -1 is a ValueError (pedalboard: MemoryError), and the detector error names itself
    with pytest.raises(ValueError, match="stretch_factor must be greater than 0.0x"):
        stompbox.time_stretch(x, SR, -1.0)
    with pytest.raises(ValueError, match="unknown value for transient_detector"):
        stompbox.time_stretch(x, SR, transient_detector="sharp")


def test_pitch_shift_range_error_matches(pb):
    with pytest.raises(ValueError) as theirs:
        pb.PitchShift(73)
    with pytest.raises(ValueError) as ours:
        stompbox.PitchShift(73)
    assert str(ours.value).startswith(str(theirs.value))
