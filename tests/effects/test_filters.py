"""First-order low/high-pass, shelf and peak filters against their analytic responses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _audio import SR, music, noise
from stompbox import HighpassFilter, HighShelfFilter, IIRFilter, LowpassFilter, LowShelfFilter, PeakFilter


def tone_gain_db(plugin, freq: float, sr: int = SR, seconds: float = 1.0, amplitude: float = 0.25) -> float:
    """Steady-state gain at ``freq``: a sine through the plugin, amplitude fitted (sin + cos least squares) on
    the second half of the output, in dB relative to the input amplitude."""
    t = np.arange(int(seconds * sr)) / sr
    x = (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    y = plugin(x, sr).astype(np.float64)
    half = len(t) // 2
    basis = np.stack([np.sin(2 * np.pi * freq * t[half:]), np.cos(2 * np.pi * freq * t[half:])], axis=1)
    coef, *_ = np.linalg.lstsq(basis, y[half:], rcond=None)
    return 20 * math.log10(math.hypot(*coef) / amplitude)


def first_order_db(kind: str, freq: float, cutoff: float, sr: int = SR) -> float:
    """Analytic magnitude of the bilinear (prewarped) first-order filter."""
    ratio = math.tan(math.pi * freq / sr) / math.tan(math.pi * cutoff / sr)
    if kind == "high":
        ratio = 1 / ratio
    return -10 * math.log10(1 + ratio**2)


@pytest.mark.parametrize("cutoff", [100.0, 1000.0, 8000.0])
def test_first_order_is_minus_3db_at_cutoff(cutoff):
    assert tone_gain_db(LowpassFilter(cutoff), cutoff) == pytest.approx(-3.0103, abs=0.01)
    assert tone_gain_db(HighpassFilter(cutoff), cutoff) == pytest.approx(-3.0103, abs=0.01)


@pytest.mark.parametrize("freq", [50.0, 250.0, 2000.0, 4000.0, 12000.0])
def test_first_order_follows_analytic_magnitude(freq):
    cutoff = 1000.0
    assert tone_gain_db(LowpassFilter(cutoff), freq) == pytest.approx(first_order_db("low", freq, cutoff), abs=0.02)
    assert tone_gain_db(HighpassFilter(cutoff), freq) == pytest.approx(first_order_db("high", freq, cutoff), abs=0.02)


def test_first_order_slope_is_6db_per_octave():
    # far above the cutoff (and far below Nyquist) the low-pass falls 6.02 dB per octave
    lp = LowpassFilter(50)
    assert tone_gain_db(lp, 800) - tone_gain_db(lp, 1600) == pytest.approx(6.02, abs=0.1)
    hp = HighpassFilter(10000)
    assert tone_gain_db(hp, 200) - tone_gain_db(hp, 100) == pytest.approx(6.02, abs=0.1)


@pytest.mark.parametrize("gain_db", [-12.0, 6.0, 18.0])
@pytest.mark.parametrize("q", [0.5, 0.7071067690849304, 2.0])
def test_shelves_give_half_the_gain_at_cutoff(gain_db, q):
    assert tone_gain_db(LowShelfFilter(1000, gain_db, q), 1000) == pytest.approx(gain_db / 2, abs=0.02)
    assert tone_gain_db(HighShelfFilter(1000, gain_db, q), 1000) == pytest.approx(gain_db / 2, abs=0.02)


@pytest.mark.parametrize("gain_db", [-12.0, 6.0, 18.0])
def test_shelves_give_full_gain_inside_the_shelf_and_none_outside(gain_db):
    low, high = LowShelfFilter(1000, gain_db), HighShelfFilter(1000, gain_db)
    assert tone_gain_db(low, 20) == pytest.approx(gain_db, abs=0.05)
    assert tone_gain_db(low, 18000) == pytest.approx(0.0, abs=0.05)
    assert tone_gain_db(high, 18000) == pytest.approx(gain_db, abs=0.1)
    assert tone_gain_db(high, 20) == pytest.approx(0.0, abs=0.05)


def rbj_peak_db(freq: float, centre: float, gain_db: float, q: float, sr: int = SR) -> float:
    """Magnitude of the RBJ cookbook peaking EQ, evaluated on the unit circle in double precision."""
    big_a = 10 ** (gain_db / 40)
    w0 = 2 * math.pi * centre / sr
    alpha = math.sin(w0) / (2 * q)
    b = [1 + alpha * big_a, -2 * math.cos(w0), 1 - alpha * big_a]
    a = [1 + alpha / big_a, -2 * math.cos(w0), 1 - alpha / big_a]
    z = np.exp(-1j * 2 * math.pi * freq / sr * np.arange(3))
    return float(20 * math.log10(abs(np.dot(b, z) / np.dot(a, z))))


@pytest.mark.parametrize(("centre", "gain_db", "q"), [(1000.0, 12.0, 1.0), (200.0, -18.0, 4.0), (6000.0, 6.0, 0.5)])
def test_peak_gives_full_gain_at_centre_and_follows_the_cookbook(centre, gain_db, q):
    peak = PeakFilter(centre, gain_db, q)
    assert tone_gain_db(peak, centre) == pytest.approx(gain_db, abs=0.01)
    assert abs(tone_gain_db(peak, centre / 40)) < 0.2  # far below: no change
    for ratio in (0.5, 0.9, 1.25, 3.0):
        freq = centre * ratio
        assert tone_gain_db(peak, freq) == pytest.approx(rbj_peak_db(freq, centre, gain_db, q), abs=0.02)


def test_zero_gain_eq_is_identity():
    x = music(0.3)
    for cls in (LowShelfFilter, HighShelfFilter, PeakFilter):
        np.testing.assert_allclose(cls(440, 0.0)(x, SR), x, atol=1e-6)


def test_defaults_and_hierarchy():
    assert LowpassFilter().cutoff_frequency_hz == 50 and HighpassFilter().cutoff_frequency_hz == 50
    for cls in (LowShelfFilter, HighShelfFilter, PeakFilter):
        f = cls()
        assert isinstance(f, IIRFilter)
        assert (f.cutoff_frequency_hz, f.gain_db) == (440, 0.0)
        assert f.q == pytest.approx(1 / math.sqrt(2), rel=1e-7)
    assert not isinstance(LowpassFilter(), IIRFilter)  # as in pedalboard
    with pytest.raises(TypeError, match="abstract"):
        IIRFilter()


@pytest.mark.parametrize("cls", [LowpassFilter, HighpassFilter, LowShelfFilter, HighShelfFilter, PeakFilter])
@pytest.mark.parametrize("bad", [0.0, -10.0])
def test_cutoff_must_be_positive(cls, bad):
    with pytest.raises(ValueError, match="Cutoff frequency must be greater than 0Hz."):
        cls(bad)
    f = cls()
    with pytest.raises(ValueError, match="Cutoff frequency must be greater than 0Hz."):
        f.cutoff_frequency_hz = bad
    assert f.cutoff_frequency_hz == cls().cutoff_frequency_hz  # unchanged after the failed assignment


@pytest.mark.parametrize("cls", [LowShelfFilter, HighShelfFilter, PeakFilter])
def test_q_must_be_positive(cls):
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="Q value must be greater than 0."):
            cls(q=bad)
        with pytest.raises(ValueError, match="Q value must be greater than 0."):
            cls().q = bad


@pytest.mark.parametrize("sr", [44100, 48000, 8000])
def test_cutoff_at_or_above_nyquist_stays_finite(sr):
    x = noise(0.2, sr=sr)
    for cutoff in (sr / 2, sr / 2 + 1, 4 * sr):
        low = LowpassFilter(cutoff)(x, sr)
        assert np.isfinite(low).all()
        np.testing.assert_allclose(low, x, atol=0.05)  # at Nyquist the low-pass is nearly a pass-through
        assert np.isfinite(HighpassFilter(cutoff)(x, sr)).all()
        for cls in (LowShelfFilter, HighShelfFilter, PeakFilter):
            assert np.isfinite(cls(cutoff, 12.0, 4.0)(x, sr)).all()


def test_extreme_gains_stay_finite():
    x = noise(0.1)
    for gain_db in (-1000.0, -150.0, 150.0, 1000.0):
        for cls in (LowShelfFilter, HighShelfFilter, PeakFilter):
            assert np.isfinite(cls(1000, gain_db)(x, SR)).all()


ALL = [
    lambda: LowpassFilter(300),
    lambda: HighpassFilter(2000),
    lambda: LowShelfFilter(150, 9.0, 0.9),
    lambda: HighShelfFilter(5000, -6.0),
    lambda: PeakFilter(900, 10.0, 3.0),
]


@pytest.mark.parametrize("make", ALL, ids=["lowpass", "highpass", "lowshelf", "highshelf", "peak"])
def test_nan_does_not_poison_state(make):
    f = make()
    x = music(0.2)
    bad = x.copy()
    bad[:, 100] = np.nan
    f(bad, SR, reset=False)
    after = f(x, SR, reset=False)  # the engine clears state after a non-finite block
    assert np.isfinite(after).all()
    f.reset()
    np.testing.assert_array_equal(f(x, SR, reset=False), make()(x, SR))


def test_parameter_change_applies_to_the_next_block():
    x = noise(0.2, channels=1)[0]
    f = LowpassFilter(500)
    first = f(x, SR, reset=False)
    f.cutoff_frequency_hz = 5000
    second = f(x, SR, reset=False)
    assert np.std(second) > 2 * np.std(first)


def test_tail_seconds_from_pole_radius():
    # a first-order low-pass at fc has its pole at (1 - n) / (1 + n), n = tan(pi fc / sr)
    n = math.tan(math.pi * 50 / SR)
    pole = (1 - n) / (1 + n)
    expected = -3 / math.log10(pole) / SR
    f = LowpassFilter(50)
    f(np.zeros(16, np.float32), SR)
    assert f.tail_seconds == pytest.approx(expected, rel=1e-3)
    assert PeakFilter(1000, 6, 10).tail_seconds > PeakFilter(1000, 6, 1).tail_seconds
