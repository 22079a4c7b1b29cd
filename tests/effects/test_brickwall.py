"""BrickwallLimiter against its definition: ceiling, lookahead/hold/release envelope, latency, streaming."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _audio import SR, music, noise, process_in_blocks
from stompbox import BrickwallLimiter


def true_peak(x: np.ndarray, factor: int = 8, skip: int = 0) -> float:
    """Peak of the 8x band-limited interpolation, ignoring ``skip`` samples at each end (filter edges)."""
    from scipy.signal import resample_poly

    up = resample_poly(x.astype(np.float64), factor, 1, axis=-1)
    if skip:
        up = up[..., skip * factor : -skip * factor]
    return float(np.max(np.abs(up)))


def loud() -> np.ndarray:
    return np.concatenate([music(1.0) * 4, noise(0.5, amplitude=0.8)], axis=1)


@pytest.mark.parametrize("ceiling_db", [-20.0, -6.0, -1.0, 0.0, 3.0])
@pytest.mark.parametrize("true_peak_mode", [False, True])
def test_sample_peak_never_exceeds_ceiling(ceiling_db, true_peak_mode):
    y = BrickwallLimiter(ceiling_db, true_peak=true_peak_mode)(loud(), SR)
    assert np.max(np.abs(y)) <= np.float32(10 ** (ceiling_db / 20))


def _quarter_rate_sine(seconds: float = 0.5) -> np.ndarray:
    """A sine at fs/4 sampled 45 degrees off its peaks: every sample is at 0.707 of the true peak (1.0)."""
    n = np.arange(int(seconds * SR))
    return np.sin(np.pi / 2 * n + np.pi / 4).astype(np.float32)[None, :]


def test_sample_peak_mode_misses_inter_sample_peaks():
    ceiling = 10 ** (-6 / 20)
    y = BrickwallLimiter(-6)(_quarter_rate_sine(), SR)
    assert 20 * math.log10(true_peak(y, skip=1000) / ceiling) == pytest.approx(3.01, abs=0.05)


def test_true_peak_mode_catches_inter_sample_peaks():
    ceiling = 10 ** (-6 / 20)
    y = BrickwallLimiter(-6, true_peak=True)(_quarter_rate_sine(), SR)
    assert 20 * math.log10(true_peak(y, skip=1000) / ceiling) <= 0.1


def test_true_peak_of_limited_music_is_within_a_tenth_of_a_db():
    ceiling_db = -3.0
    y = BrickwallLimiter(ceiling_db, true_peak=True)(music(1.0) * 3, SR)
    assert 20 * math.log10(true_peak(y)) <= ceiling_db + 0.1


@pytest.mark.parametrize(
    ("params", "sr", "latency"),
    [
        ({}, SR, 220),
        ({"true_peak": True}, SR, 280),
        ({}, 48000, 240),
        ({"lookahead_ms": 0.001}, SR, 1),
        ({"lookahead_ms": 100}, SR, 4410),
        ({"lookahead_ms": 2, "true_peak": True}, 96000, 252),
    ],
)
def test_latency_samples(params, sr, latency):
    limiter = BrickwallLimiter(**params)
    assert limiter.latency_samples == 0  # not prepared yet
    limiter(np.zeros((2, 100), np.float32), sr)
    assert limiter.latency_samples == latency


@pytest.mark.parametrize("true_peak_mode", [False, True])
def test_whole_array_output_is_aligned_and_quiet_input_is_untouched(true_peak_mode):
    """No makeup gain: a signal under the ceiling comes out unchanged, sample for sample."""
    x = music(1.0) * 0.5  # peaks at about -9 dBFS
    y = BrickwallLimiter(-1.0, true_peak=true_peak_mode)(x, SR)
    assert y.shape == x.shape
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("true_peak_mode", [False, True])
@pytest.mark.parametrize("block", [1, 7, 512, 8192])
def test_streaming_returns_latency_fewer_samples_and_matches_whole(block, true_peak_mode):
    x = loud()[:, : 3000 if block == 1 else 40000]
    limiter = BrickwallLimiter(-8, release_ms=30, true_peak=true_peak_mode)
    whole = limiter(x, SR)
    latency = limiter.latency_samples
    streamed = process_in_blocks(limiter, x, SR, block)
    assert streamed.shape[1] == x.shape[1] - latency
    np.testing.assert_allclose(streamed, whole[:, : x.shape[1] - latency], atol=1e-6)


def test_first_streamed_call_is_shorter_by_the_latency():
    limiter = BrickwallLimiter()
    assert limiter.process(np.zeros((2, 1000), np.float32), SR, reset=False).shape == (2, 780)
    assert limiter.process(np.zeros((2, 1000), np.float32), SR, reset=False).shape == (2, 1000)
    assert limiter.process(np.zeros((2, 100), np.float32), SR, reset=True).shape == (2, 100)


def test_gain_envelope_attack_hold_release():
    """A lone peak: the gain drops to ceiling/peak exactly `latency` samples before it (the lookahead), holds
    until the peak has passed, then recovers as 1 - (1 - g) * exp(-k / release_samples)."""
    ceiling, release_ms, p = 0.5, 10.0, 3000
    x = np.full((1, 6000), 0.1, np.float32)
    x[0, p] = 1.0
    limiter = BrickwallLimiter(20 * math.log10(ceiling), release_ms=release_ms)
    gain = limiter(x, SR)[0] / x[0]
    lat = limiter.latency_samples
    np.testing.assert_allclose(gain[: p - lat], 1.0)
    np.testing.assert_allclose(gain[p - lat : p + 1], ceiling, rtol=1e-6)
    k = np.arange(1, 1000)
    release_samples = int(SR * release_ms / 1000)
    expected = 1 - (1 - ceiling) * np.exp(-1 / release_samples) ** k
    np.testing.assert_allclose(gain[p + 1 : p + 1000], expected, rtol=1e-5)


def test_channels_are_linked():
    x = np.full((2, 4000), 0.1, np.float32)
    x[0, 2000] = 1.0  # a peak on the left only
    y = BrickwallLimiter(-6)(x, SR)
    np.testing.assert_allclose(y[1, 2000], 0.1 * 10 ** (-6 / 20), rtol=1e-5)


def test_changing_lookahead_takes_effect():
    limiter = BrickwallLimiter(lookahead_ms=5)
    limiter(np.zeros((1, 100), np.float32), SR)
    limiter.lookahead_ms = 10
    y = limiter(np.zeros((1, 100), np.float32), SR)
    assert limiter.latency_samples == 441 and y.shape == (1, 100)


def test_nan_does_not_poison_state_after_reset():
    x = loud()[:, :20000]
    limiter = BrickwallLimiter(-6)
    bad = x.copy()
    bad[:, 50] = np.nan
    limiter.process(bad, SR, reset=False)
    limiter.reset()
    np.testing.assert_array_equal(limiter.process(x, SR), BrickwallLimiter(-6)(x, SR))


def test_validation_and_repr():
    with pytest.raises(ValueError, match="release_ms must be > 0"):
        BrickwallLimiter(release_ms=0)
    with pytest.raises(ValueError, match=r"lookahead_ms must be in \(0, 100\]"):
        BrickwallLimiter(lookahead_ms=0)
    with pytest.raises(ValueError, match=r"lookahead_ms must be in \(0, 100\]"):
        BrickwallLimiter(lookahead_ms=100.5)
    with pytest.raises(ValueError, match="ceiling_db must be a finite number"):
        BrickwallLimiter(ceiling_db=float("nan"))
    limiter = BrickwallLimiter(ceiling_db=2.0, true_peak=True)  # a ceiling above 0 dBFS is allowed
    assert "ceiling_db=2 release_ms=100 lookahead_ms=5 true_peak=True" in repr(limiter)
