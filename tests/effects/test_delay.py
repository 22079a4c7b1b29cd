"""Delay against its definition: echo positions and amplitudes, pass-through cases, streaming, validation."""

from __future__ import annotations

import numpy as np
import pytest

from _audio import SR, music
from stompbox import Delay


def samples(delay_s: float) -> int:
    """pedalboard's rounding: the time is held in float32, multiplied by the rate and truncated (0.01 s at
    44.1 kHz is 440 samples, not 441)."""
    return int(float(np.float32(delay_s)) * SR)


@pytest.mark.parametrize(("delay_s", "feedback", "mix"), [(0.01, 0.5, 0.5), (0.003, 0.9, 1.0), (0.02, 0.0, 0.3)])
def test_impulse_response_has_echoes_at_multiples_of_the_delay(delay_s, feedback, mix):
    """Dry impulse (1 - mix) at 0, then echoes at k*d with amplitude mix * feedback**(k-1), nothing else."""
    d = samples(delay_s)
    x = np.zeros(SR // 2, np.float32)
    x[0] = 1.0
    y = Delay(delay_s, feedback, mix)(x, SR)
    expected = np.zeros_like(x, dtype=np.float64)
    expected[0] = 1 - mix
    for k in range(1, len(x) // d + 1):
        if k * d < len(x):
            expected[k * d] = mix * feedback ** (k - 1)
    np.testing.assert_allclose(y, expected, atol=1e-6, rtol=1e-5)


def test_dry_wet_formula_without_feedback():
    x = music(0.5)
    d = samples(0.05)
    y = Delay(0.05, 0.0, 0.3)(x, SR)
    delayed = np.concatenate([np.zeros((2, d), np.float32), x[:, :-d]], axis=1)
    np.testing.assert_allclose(y, 0.7 * x + 0.3 * delayed, rtol=4e-7, atol=1e-7)


def test_feedback_works_when_the_input_is_long_enough():
    """pedalboard issue #413: with a 1 s delay on a 1 s impulse no echo fits in the output. Padding shows them."""
    x = np.zeros(SR, np.float32)
    x[0] = 1
    low, high = Delay(1.0, 0.1, 1.0), Delay(1.0, 0.9, 1.0)
    np.testing.assert_array_equal(low(x, SR), high(x, SR))  # no echo fits: both are silent
    padded = np.zeros(3 * SR + 10, np.float32)
    padded[0] = 1
    assert low(padded, SR)[2 * SR] == pytest.approx(0.1)
    assert high(padded, SR)[2 * SR] == pytest.approx(0.9)


@pytest.mark.parametrize("delay_s", [0.0, 1 / SR, 0.5 / SR])
def test_zero_sample_delay_passes_input_through(delay_s):
    """A delay that rounds down to 0 samples is an identity (pedalboard drops the wet signal instead)."""
    x = music(0.2)
    np.testing.assert_array_equal(Delay(delay_s, 0.9, 0.7)(x, SR), x)


def test_mix_zero_is_dry_and_feedback_one_does_not_decay():
    x = np.zeros(SR, np.float32)
    x[0] = 1
    np.testing.assert_array_equal(Delay(0.01, 0.5, 0.0)(x, SR), x)
    y = Delay(0.01, 1.0, 1.0)(x, SR)
    d = samples(0.01)
    np.testing.assert_allclose(y[d::d], 1.0)


def test_tail_continues_with_reset_false_and_reset_clears_it():
    x = np.zeros((1, 1000), np.float32)
    x[0, 0] = 1
    delay = Delay(0.03, 0.5, 1.0)  # 1323 samples: the echo falls in the second call
    delay.process(x, SR, reset=False)
    tail = delay.process(np.zeros((1, 2000), np.float32), SR, reset=False)
    assert tail[0, samples(0.03) - 1000] == pytest.approx(1.0)
    delay.reset()
    assert not np.any(delay.process(np.zeros((1, 3000), np.float32), SR, reset=False))


def test_changing_delay_time_while_streaming_keeps_history():
    x = np.zeros((1, 2000), np.float32)
    x[0, 0] = 1
    delay = Delay(0.001, 0.0, 1.0)
    delay.process(x[:, :10], SR, reset=False)
    delay.delay_seconds = 0.01  # the line grows; the impulse written 10 samples ago is still in it
    y = delay.process(x[:, 10:], SR, reset=False)
    assert y[0, samples(0.01) - 10] == pytest.approx(1.0)


def test_nan_does_not_poison_state_after_reset():
    x = music(0.3)
    delay = Delay(0.01, 0.8, 0.5)
    bad = x.copy()
    bad[:, 5] = np.nan
    delay.process(bad, SR, reset=False)
    delay.reset()
    np.testing.assert_array_equal(delay.process(x, SR, reset=False), Delay(0.01, 0.8, 0.5)(x, SR))


def test_tail_seconds():
    assert Delay(0.5, 0.0, 0.5).tail_seconds == pytest.approx(0.5)
    assert Delay(0.0, 0.5, 0.5).tail_seconds == 0.0
    assert Delay(0.1, 0.5, 0.5).tail_seconds >= 0.1 * 10  # 0.5**9 < 1e-3
    assert Delay(0.1, 1.0, 0.5).tail_seconds == float("inf")


def test_validation():
    with pytest.raises(ValueError, match=r"Delay \(in seconds\) must be between 0.0s and 30s."):
        Delay(-0.1)
    with pytest.raises(ValueError, match=r"Delay \(in seconds\) must be between 0.0s and 30s."):
        Delay(30.5)
    with pytest.raises(ValueError, match="Feedback must be between 0.0 and 1.0."):
        Delay(0.5, 1.1)
    with pytest.raises(ValueError, match="Mix must be between 0.0 and 1.0."):
        Delay(0.5, 0.5, -0.1)
    delay = Delay()
    assert (delay.delay_seconds, delay.feedback, delay.mix) == (0.5, 0.0, 0.5)
    Delay(30.0, 1.0, 1.0)


def test_a_delay_that_has_run_still_shows_its_parameters():
    """Its coefficients are its own (they once shadowed the class's parameter table, and repr raised)."""
    delay = Delay(0.25, 0.5, 0.75)
    delay(music(0.1), SR)
    assert repr(delay).startswith("<stompbox.Delay delay_seconds=0.25 feedback=0.5 mix=0.75")
