"""Chorus and Phaser: pass-through, derived delays and notches, streaming, validation."""

from __future__ import annotations

import numpy as np
import pytest

from _audio import SR, music, noise, rms, sine
from stompbox import Chorus, Phaser


def test_chorus_mix_zero_is_pass_through():
    x = music(0.5)
    np.testing.assert_array_equal(Chorus(mix=0.0)(x, SR), x)


def test_chorus_without_depth_is_a_fractional_delay():
    # depth 0: a fixed delay of centre_delay_ms, read with linear interpolation between samples
    x = noise(0.3, channels=2)
    delay = 7.0 * SR / 1000.0  # 308.7 samples
    whole, frac = int(delay), np.float32(delay) - int(delay)
    y = Chorus(depth=0.0, mix=1.0, centre_delay_ms=7.0)(x, SR)
    expected = np.zeros_like(x)
    expected[:, whole:] = x[:, : x.shape[1] - whole] * (1 - frac)
    expected[:, whole + 1 :] += x[:, : x.shape[1] - whole - 1] * frac
    np.testing.assert_allclose(y, expected, atol=2e-6)


def test_chorus_feedback_makes_echoes():
    x = np.zeros((1, SR // 10), np.float32)
    x[0, 0] = 1.0
    y = Chorus(depth=0.0, centre_delay_ms=5.0, feedback=0.5, mix=1.0)(x, SR)
    d = int(round(5.0 * SR / 1000.0))  # 220.5 samples: energy at ~220, ~441, ~661
    first = np.abs(y[0, d - 50 : d + 50]).sum()
    second = np.abs(y[0, 2 * d - 50 : 2 * d + 50]).sum()
    assert first == pytest.approx(1.0, abs=1e-5)
    assert second == pytest.approx(0.5, abs=1e-5)  # the output is fed back negated: -0.5 per round trip
    assert y[0, 2 * d - 50 : 2 * d + 50].sum() == pytest.approx(-0.5, abs=1e-5)
    assert np.abs(y[0, : d - 1]).max() == 0.0


def test_chorus_modulates_the_delay():
    x = sine(1000.0, 1.0)
    still = Chorus(depth=0.0, mix=1.0)(x, SR)
    moving = Chorus(depth=1.0, rate_hz=3.0, mix=1.0)(x, SR)
    # a moving delay shifts the pitch (Doppler), so the output no longer equals a delayed sine
    assert rms(moving[:, 2000:] - still[:, 2000:]) > 0.1


def test_phaser_mix_zero_is_pass_through():
    x = music(0.5)
    np.testing.assert_allclose(Phaser(mix=0.0)(x, SR), x, atol=0)


@pytest.mark.parametrize("centre", [500.0, 1000.0, 3000.0])
def test_phaser_notch_at_centre_frequency(centre):
    # six first-order all-passes at the same cutoff give -540 degrees there: half dry + half wet cancels
    tone = sine(centre, 0.5)
    y = Phaser(depth=0.0, centre_frequency_hz=centre, mix=0.5)(tone, SR)
    assert rms(y[:, SR // 10 :]) < 0.003 * rms(tone)
    # an all-pass changes no level: the wet signal alone keeps the input's RMS
    wet = Phaser(depth=0.0, centre_frequency_hz=centre, mix=1.0)(tone, SR)
    assert rms(wet[:, SR // 10 :]) == pytest.approx(rms(tone), rel=1e-3)
    # an octave away the notch is gone
    off = sine(centre * 2, 0.5)
    assert rms(Phaser(depth=0.0, centre_frequency_hz=centre, mix=0.5)(off, SR)[:, SR // 10 :]) > 0.3 * rms(off)


@pytest.mark.parametrize("cls", [Chorus, Phaser])
def test_state_continues_with_reset_false(cls):
    x = music(0.4)
    plugin = cls(feedback=0.5)
    whole = plugin(x, SR)
    plugin.reset()
    half = x.shape[1] // 2
    parts = [plugin(x[:, :half], SR, reset=False), plugin(x[:, half:], SR, reset=False)]
    np.testing.assert_allclose(np.concatenate(parts, axis=1), whole, atol=1e-6)


@pytest.mark.parametrize("cls", [Chorus, Phaser])
def test_mix_change_while_streaming_ramps(cls):
    plugin = cls(mix=0.0, depth=0.0)
    x = np.ones((1, 4000), np.float32)
    plugin(x, SR, reset=False)
    plugin.mix = 1.0
    y = plugin(x, SR, reset=False)
    assert np.max(np.abs(np.diff(y[0]))) < 0.01  # 50 ms linear ramp, no click


def test_chorus_validation():
    with pytest.raises(ValueError, match="Rate must be between 0 Hz and 100 Hz."):
        Chorus(rate_hz=101)
    with pytest.raises(ValueError, match="Mix must be between 0.0 and 1.0."):
        Chorus(mix=1.5)
    for name, value in [
        ("depth", 1.5),
        ("depth", -0.1),
        ("feedback", 1.5),
        ("centre_delay_ms", -1),
        ("centre_delay_ms", 200),
    ]:
        with pytest.raises(ValueError):
            Chorus(**{name: value})
    c = Chorus(feedback=-1.0, depth=1.0, centre_delay_ms=0.0, rate_hz=0.0)
    assert (c.feedback, c.depth, c.centre_delay_ms, c.rate_hz) == (-1.0, 1.0, 0.0, 0.0)
    assert np.all(np.isfinite(c(music(0.2), SR)))


def test_phaser_validation():
    for name, value in [("rate_hz", 101), ("depth", 1.5), ("feedback", -1.5), ("centre_frequency_hz", 0), ("mix", 2)]:
        with pytest.raises(ValueError):
            Phaser(**{name: value})
    p = Phaser(rate_hz=0.0, depth=1.0, centre_frequency_hz=30000.0, feedback=0.99, mix=1.0)
    assert np.all(np.isfinite(p(music(0.2), SR)))


def test_defaults():
    c = Chorus()
    assert (c.rate_hz, c.depth, c.centre_delay_ms, c.feedback, c.mix) == (1.0, 0.25, 7.0, 0.0, 0.5)
    p = Phaser()
    assert (p.rate_hz, p.depth, p.centre_frequency_hz, p.feedback, p.mix) == (1.0, 0.5, 1300.0, 0.0, 0.5)


@pytest.mark.parametrize("rate", [1, 8, 16, 40])
def test_phaser_below_41_hz_stays_finite_and_all_pass(rate):
    """At these rates 0.49 x rate is below the sweep's 20 Hz floor: the cutoff used to be swept above Nyquist,
    where the all-pass gains leave (0, 1) and 8 or 16 Hz turned finite input into inf (pedalboard 0.9.26:
    NaN). Now the sweep collapses onto 0.49 x rate, so the LFO no longer matters, and the chain of first-order
    all-passes keeps white noise's power (mix=1, no feedback: the output is the chain's alone)."""
    x = (np.random.default_rng(0).standard_normal(80000) * 0.3).astype(np.float32)
    y = Phaser(mix=1.0)(x, rate)
    assert np.isfinite(y).all()
    assert np.array_equal(y, Phaser(mix=1.0, depth=1.0, rate_hz=50.0)(x, rate))
    assert rms(y) == pytest.approx(rms(x), rel=0.01)


@pytest.mark.parametrize("cls", [Chorus, Phaser])
def test_rates_below_1_hz_are_refused_at_once(cls):
    """Chorus()(x, 1e-9) and Phaser()(x, 1e-9) ran for minutes in a compiled loop Ctrl-C could not stop."""
    from stompbox.limits import LimitError

    with pytest.raises(LimitError, match="from 1 Hz to 10,000,000 Hz"):
        cls()(noise(0.01), 1e-9)
