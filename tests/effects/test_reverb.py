"""Reverb (Freeverb with JUCE's scalings): identities, freeze, tails, block invariance, validation."""

from __future__ import annotations

import numpy as np
import pytest

from _audio import SR, music, noise, rms
from stompbox import Reverb


def test_dry_half_wet_zero_is_identity():
    x = music(0.5)
    np.testing.assert_array_equal(Reverb(dry_level=0.5, wet_level=0.0)(x, SR), x)
    np.testing.assert_array_equal(Reverb(dry_level=0.5, wet_level=0.0)(x[:1], SR), x[:1])


def test_dry_one_doubles():
    x = music(0.3)
    np.testing.assert_allclose(Reverb(dry_level=1.0, wet_level=0.0)(x, SR), 2 * x, rtol=1e-7)


def test_impulse_response_starts_after_shortest_comb_and_is_wide():
    x = np.zeros((2, SR), np.float32)
    x[:, 0] = 1.0
    y = Reverb(dry_level=0.0, wet_level=1.0)(x, SR)
    # nothing comes out before the shortest comb (1116 samples at 44.1 kHz)
    assert np.all(y[:, :1116] == 0.0)
    assert np.max(np.abs(y[:, 1116:])) > 1e-3
    # the right channel's delay lines are 23 samples longer: the two channels differ
    assert rms(y[0] - y[1]) > 0.1 * rms(y)
    # width 0 mixes the two wet channels equally into each side: the same wet signal left and right
    y0 = Reverb(dry_level=0.0, wet_level=1.0, width=0.0)(x, SR)
    np.testing.assert_allclose(y0[0], y0[1], atol=1e-7)


def test_room_size_lengthens_the_tail():
    x = np.zeros((2, 2 * SR), np.float32)
    x[:, :1000] = noise(1000 / SR, amplitude=0.5)
    small = Reverb(room_size=0.1, dry_level=0.0)(x, SR)
    large = Reverb(room_size=0.95, dry_level=0.0)(x, SR)
    late = slice(SR, 2 * SR)
    assert rms(large[:, late]) > 10 * rms(small[:, late])


def test_freeze_sustains():
    reverb = Reverb(dry_level=0.0, wet_level=1.0)
    reverb(noise(0.5), SR, reset=False)
    reverb.freeze_mode = 1.0
    silence = np.zeros((2, 3 * SR), np.float32)
    held = reverb(silence, SR, reset=False)
    first, last = rms(held[:, SR // 10 : SR]), rms(held[:, 2 * SR :])
    assert first > 1e-3
    assert last > 0.9 * first  # no decay while frozen
    reverb.freeze_mode = 0.0
    released = reverb(np.zeros((2, 4 * SR), np.float32), SR, reset=False)
    assert rms(released[:, -SR // 2 :]) < 0.01 * first


def test_frozen_reverb_ignores_new_input():
    x = noise(0.5)
    y = Reverb(freeze_mode=1.0, dry_level=0.0)(x, SR)
    assert np.all(y == 0.0)


def test_tail_continues_with_reset_false():
    reverb = Reverb()
    reverb(noise(1.0), SR, reset=False)
    tail = reverb(np.zeros((2, SR), np.float32), SR, reset=False)
    assert np.max(np.abs(tail)) > 0.25  # pedalboard's own test expects this
    reverb.reset()
    assert np.all(reverb(np.zeros((2, SR // 10), np.float32), SR) == 0.0)


def test_parameter_change_ramps_over_ten_ms():
    reverb = Reverb(dry_level=0.5, wet_level=0.0)
    x = np.ones((2, 1000), np.float32)
    reverb(x, SR, reset=False)
    reverb.dry_level = 1.0  # internal dry gain 1 -> 2, ramped linearly over 441 samples
    y = reverb(x, SR, reset=False)
    ramp = int(0.01 * SR)
    np.testing.assert_allclose(y[0, :ramp], 1.0 + np.arange(1, ramp + 1) / ramp, rtol=1e-5)
    np.testing.assert_allclose(y[0, ramp:], 2.0)


def test_more_than_two_channels_are_reverberated_in_pairs():
    # pedalboard passes 3+ channels through untouched; stompbox reverberates channels (0, 1) as a stereo pair
    # and channel 2 as mono, each exactly as it would be alone
    x = music(0.2, channels=3)
    y = Reverb()(x, SR)
    np.testing.assert_allclose(y[:2], Reverb()(x[:2], SR), atol=1e-6)
    np.testing.assert_allclose(y[2:], Reverb()(x[2:], SR), atol=1e-6)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("room_size", "Room Size value must be between 0.0 and 1.0."),
        ("damping", "Damping value must be between 0.0 and 1.0."),
        ("wet_level", "Wet Level must be between 0.0 and 1.0."),
        ("dry_level", "Dry Level must be between 0.0 and 1.0."),
        ("width", "Width value must be between 0.0 and 1.0."),
        ("freeze_mode", "Freeze Mode value must be between 0.0 and 1.0."),
    ],
)
def test_validation(name, text):
    with pytest.raises(ValueError, match=text):
        Reverb(**{name: 1.5})
    reverb = Reverb()
    with pytest.raises(ValueError, match=text):
        setattr(reverb, name, -0.1)
    setattr(reverb, name, 1.0)
    assert getattr(reverb, name) == 1.0


def test_defaults_and_tail():
    r = Reverb()
    f32 = [float(np.float32(v)) for v in (0.5, 0.5, 0.33, 0.4, 1.0, 0.0)]  # stored as float32, as pedalboard
    assert [r.room_size, r.damping, r.wet_level, r.dry_level, r.width, r.freeze_mode] == f32
    assert 1.0 < r.tail_seconds < 10.0
    assert Reverb(freeze_mode=1.0).tail_seconds == float("inf")
