"""Compressor, Limiter and NoiseGate against their definitions: static curves, time constants, limits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _audio import SR, music, rms
from stompbox import Compressor, Limiter, NoiseGate


def db(x: float) -> float:
    return 20 * math.log10(x)


def square(amplitude: float, seconds: float = 0.5, freq: float = 100.0, channels: int = 1) -> np.ndarray:
    """A square wave: |x| is constant, so peak and RMS followers settle exactly on ``amplitude``."""
    t = np.arange(int(seconds * SR)) / SR
    wave = amplitude * np.sign(np.sin(2 * np.pi * freq * t) + 1e-9)
    return np.tile(wave, (channels, 1)).astype(np.float32)


# ---------------------------------------------------------------- Compressor


@pytest.mark.parametrize(("level_db", "threshold_db", "ratio"), [(-6, -20, 4), (-3, -30, 10), (-12, -18, 2)])
def test_compressor_static_curve_square(level_db, threshold_db, ratio):
    """A steady level L dB over the threshold comes out L/ratio dB over it."""
    x = square(10 ** (level_db / 20))
    y = Compressor(threshold_db, ratio, attack_ms=1, release_ms=100)(x, SR)
    expected = threshold_db + (level_db - threshold_db) / ratio
    assert db(np.max(np.abs(y[:, -2000:]))) == pytest.approx(expected, abs=1e-3)


def test_compressor_static_curve_sine():
    """For a sine the peak follower sits just under the peak, so the level lands within 0.1 dB."""
    t = np.arange(SR) / SR
    x = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)
    y = Compressor(-24, 4, attack_ms=0.5, release_ms=200)(x, SR)
    expected = -24 + (db(0.5) + 24) / 4
    assert db(np.max(np.abs(y[-4410:]))) == pytest.approx(expected, abs=0.1)


def test_compressor_leaves_signal_below_threshold_alone():
    x = square(0.05)
    np.testing.assert_array_equal(Compressor(-20, 8)(x, SR), x)  # 0.05 is -26 dB


def test_compressor_defaults_are_identity():
    x = music(0.5)
    np.testing.assert_array_equal(Compressor()(x, SR), x)


def _envelope_from_gain(y, x, threshold, ratio):
    """Invert the gain computer: env = threshold * gain ** (1 / (1/ratio - 1))."""
    gain = y.astype(np.float64) / x
    return threshold * gain ** (1.0 / (1.0 / ratio - 1.0))


@pytest.mark.parametrize("attack_ms", [2.0, 10.0, 50.0])
def test_compressor_attack_time_constant(attack_ms):
    """The envelope of a step covers 63.2% (1 - 1/e) of it in attack_ms / (2 pi) milliseconds (JUCE's rule)."""
    threshold = 10 ** (-100 / 20)
    x = np.full(SR // 2, 0.5, np.float32)
    env = _envelope_from_gain(Compressor(-100, 2, attack_ms=attack_ms)(x, SR), x, threshold, 2)
    crossing = np.argmax(env >= 0.5 * (1 - math.exp(-1)))
    assert crossing == pytest.approx(attack_ms / (2 * math.pi) * SR / 1000, abs=1.5)


@pytest.mark.parametrize("release_ms", [20.0, 100.0, 400.0])
def test_compressor_release_time_constant(release_ms):
    threshold = 10 ** (-100 / 20)
    x = np.concatenate([np.full(SR // 4, 0.5), np.full(SR, 0.01)]).astype(np.float32)
    env = _envelope_from_gain(Compressor(-100, 2, attack_ms=0.5, release_ms=release_ms)(x, SR), x, threshold, 2)
    tail = env[SR // 4 :]
    crossing = np.argmax(tail <= 0.01 + (0.5 - 0.01) * math.exp(-1))
    assert crossing == pytest.approx(release_ms / (2 * math.pi) * SR / 1000, abs=1.5)


def test_compressor_channels_are_independent():
    x = np.stack([square(0.9)[0], square(0.02)[0]])
    y = Compressor(-20, 10)(x, SR)
    assert np.max(np.abs(y[0, 2000:])) < 0.2  # after the attack
    np.testing.assert_array_equal(y[1], x[1])


# ---------------------------------------------------------------- NoiseGate


@pytest.mark.parametrize(("level_db", "threshold_db", "ratio"), [(-40, -30, 10), (-50, -20, 2), (-26, -24, 4)])
def test_noise_gate_expands_by_ratio(level_db, threshold_db, ratio):
    """A steady level L dB under the threshold comes out ratio * L dB under it."""
    x = square(10 ** (level_db / 20))
    y = NoiseGate(threshold_db, ratio)(x, SR)
    expected = threshold_db + (level_db - threshold_db) * ratio
    assert db(np.max(np.abs(y[:, -2000:]))) == pytest.approx(expected, abs=1e-3)


def test_noise_gate_passes_signal_above_threshold():
    x = square(0.3)
    y = NoiseGate(-30, 10)(x, SR)
    np.testing.assert_array_equal(y[:, 1000:], x[:, 1000:])


def test_noise_gate_defaults_are_identity_on_normal_signals():
    x = music(0.5)
    np.testing.assert_array_equal(NoiseGate()(x, SR), x)


def test_noise_gate_ratio_one_is_identity():
    x = music(0.5)
    np.testing.assert_array_equal(NoiseGate(-20, 1)(x, SR), x)


def test_noise_gate_silences_quiet_passage():
    x = music(2.0)
    y = NoiseGate(-40, 20, release_ms=20)(x, SR)
    quiet = slice(int(0.65 * x.shape[1]), int(0.74 * x.shape[1]))  # after the loud part has released
    assert rms(y[:, quiet]) < 0.01 * rms(x[:, quiet])


# ---------------------------------------------------------------- Limiter


@pytest.mark.parametrize("threshold_db", [-20.0, -10.0, -1.0, 0.0, 6.0])
def test_limiter_output_never_exceeds_one(threshold_db):
    x = np.concatenate([music(1.0) * 4, np.random.default_rng(0).standard_normal((2, SR)).astype(np.float32)], 1)
    y = Limiter(threshold_db)(x, SR)
    assert np.max(np.abs(y)) <= 1.0


@pytest.mark.parametrize("threshold_db", [-10.0, -20.0])
def test_limiter_makeup_gain_on_quiet_signal(threshold_db):
    """Below both stage thresholds the Limiter is a gain of 10**(7.5/40) * 10**(-threshold/20)."""
    x = square(10 ** (-46 / 20))
    y = Limiter(threshold_db)(x, SR)
    makeup = 10 ** (10 * (1 - 0.25) / 40) * 10 ** (-threshold_db / 20)
    np.testing.assert_allclose(y, x * makeup, rtol=1e-5)


def test_limiter_loud_steady_signal_sits_at_full_scale():
    x = square(0.9, seconds=1.0)
    y = Limiter(-10, release_ms=100)(x, SR)
    assert np.max(np.abs(y[:, -4000:])) == pytest.approx(1.0, abs=0.02)


def test_limiter_makeup_gain_ramps_over_one_millisecond_when_threshold_changes():
    x = square(10 ** (-46 / 20), seconds=0.2)
    limiter = Limiter(-20)
    a = limiter.process(x[:, :4000], SR, reset=False)
    limiter.threshold_db = -10
    b = limiter.process(x[:, 4000:], SR, reset=False)
    gain = np.concatenate([a, b], 1)[0] / x[0]
    old, new = 10 ** (7.5 / 40) * 10, 10 ** (7.5 / 40) * 10**0.5
    steps = int(0.001 * SR)
    assert gain[3999] == pytest.approx(old, rel=1e-5)
    np.testing.assert_allclose(gain[4000 : 4000 + steps], np.linspace(old, new, steps + 1)[1:], rtol=1e-4)
    assert gain[4000 + steps] == pytest.approx(new, rel=1e-5)


# ---------------------------------------------------------------- shared behaviour


@pytest.mark.parametrize("make", [lambda: Compressor(-25, 6), lambda: Limiter(-12), lambda: NoiseGate(-35, 8)])
def test_nan_does_not_poison_state_after_reset(make):
    x = music(0.3)
    plugin = make()
    bad = x.copy()
    bad[:, 100] = np.nan
    plugin.process(bad, SR, reset=False)
    plugin.reset()
    np.testing.assert_array_equal(plugin.process(x, SR, reset=False), make()(x, SR))


def test_validation():
    with pytest.raises(ValueError, match=r"Compressor ratio must be a value >= 1.0"):
        Compressor(ratio=0.5)
    with pytest.raises(ValueError, match="attack_ms"):
        Compressor(attack_ms=-1)
    with pytest.raises(ValueError, match="release_ms"):
        Compressor(release_ms=-0.1)
    with pytest.raises(ValueError, match="ratio"):
        NoiseGate(ratio=0.9)
    with pytest.raises(ValueError, match="attack_ms"):
        NoiseGate(attack_ms=-5)
    with pytest.raises(ValueError, match="release_ms"):
        Limiter(release_ms=-1)
    with pytest.raises(ValueError, match="threshold_db"):
        Limiter(threshold_db=float("nan"))
    c = Compressor()
    with pytest.raises(ValueError):
        c.ratio = 0
    assert c.ratio == 1.0
    # everything valid pedalboard accepts is accepted
    Compressor(threshold_db=-300, ratio=1e6, attack_ms=0, release_ms=0)
    NoiseGate(threshold_db=20, ratio=1, attack_ms=0, release_ms=0)
    Limiter(threshold_db=30, release_ms=0)


def test_extreme_thresholds_stay_finite():
    x = music(0.3)
    for plugin in (Compressor(-250, 4), NoiseGate(-250, 4), NoiseGate(50, 4), Limiter(-150), Limiter(120)):
        assert np.all(np.isfinite(plugin(x, SR)))
