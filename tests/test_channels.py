"""Any channel count: every built-in effect on 1, 2, 6 and 32 channels equals processing each channel (or each
stereo pair, for pair-wise effects) alone; the linked limiter links all channels."""

from __future__ import annotations

import numpy as np
import pytest

import _contract
import stompbox as sb
from _audio import music

SR = _contract.SR
# every effect the registry knows (tests/_contract.py): each channel alone, or each stereo pair alone for the
# PairedChannels effects; the two that link their channels by design are tested below
PER_CHANNEL = [name for name in _contract.subjects() if _contract.per_channel(name)]
PAIRWISE = [name for name in _contract.subjects() if _contract.pairwise(name)]
AUTOMATED = [name for name in PER_CHANNEL if _contract.automatable(name)]


def _pairs(name: str) -> sb.Plugin:
    plugin = _contract.make(name)
    plugin.channel_pairs = True
    return plugin


def _alone(make, audio):
    return make().process(audio, SR, layout="channels-first")


@pytest.mark.parametrize("channels", [1, 2, 6, 32])
@pytest.mark.parametrize("name", PER_CHANNEL)
def test_each_channel_is_processed_alone(name, channels):
    x = music(0.2, SR, channels=32)[:channels]
    make = lambda: _contract.make(name)  # noqa: E731
    y = make().process(x, SR, layout="channels-first", buffer_size=1000)
    assert y.shape == x.shape
    for c in range(channels):
        np.testing.assert_allclose(y[c], _alone(make, x[c : c + 1])[0], atol=1e-6)


@pytest.mark.parametrize("channels", [2, 6])
@pytest.mark.parametrize("name", AUTOMATED)
def test_each_channel_is_processed_alone_under_automation(name, channels):
    x = music(0.2, SR, channels=6)[:channels]
    make = lambda: _contract.automated(name)  # noqa: E731
    y = make().process(x, SR, layout="channels-first", buffer_size=1000)
    for c in range(channels):
        np.testing.assert_allclose(y[c], _alone(make, x[c : c + 1])[0], atol=1e-6)


@pytest.mark.parametrize("channels", [1, 2, 6, 7])
@pytest.mark.parametrize("name", PAIRWISE)
def test_pairwise_effects_process_each_pair_alone(name, channels):
    seconds = 0.5 if "MP3" in name else 0.2
    x = music(seconds, SR, channels=8)[:channels]
    make = lambda: _pairs(name)  # noqa: E731
    y = make().process(x, SR, layout="channels-first")
    assert y.shape == x.shape
    for first in range(0, channels, 2):
        part = x[first : first + 2]
        np.testing.assert_allclose(y[first : first + 2], _alone(make, part), atol=1e-6)


def test_pairwise_effects_on_32_channels():
    x = music(0.1, SR, channels=32)
    y = sb.Reverb().process(x, SR, layout="channels-first")  # pairs by default
    np.testing.assert_allclose(y[30:32], sb.Reverb().process(x[30:32], SR), atol=1e-6)
    np.testing.assert_allclose(y[:2], sb.Reverb().process(x[:2], SR), atol=1e-6)


def test_wide_audio_is_processed_in_pairs_by_default_and_pedalboards_behaviour_is_a_switch_away():
    x = music(0.1, SR, channels=3)
    r = sb.Reverb()
    np.testing.assert_allclose(r.process(x, SR)[2], sb.Reverb().process(x[2], SR), atol=1e-6)
    assert sb.MP3Compressor().process(np.zeros((3, 4000), np.float32), SR).shape == (3, 4000)
    r.channel_pairs = False  # pedalboard's behaviour: 3+ channels pass through the reverb untouched
    np.testing.assert_array_equal(r.process(x, SR), x)
    with pytest.raises(ValueError, match="mono or stereo"):
        m = sb.MP3Compressor()
        m.channel_pairs = False
        m.process(np.zeros((3, 4000), np.float32), SR)


@pytest.mark.parametrize("channels", [1, 2, 6, 32])
def test_brickwall_limiter_links_all_channels(channels):
    x = music(0.2, SR, channels=32)[:channels] * 3.0
    y = sb.BrickwallLimiter(-6).process(x, SR, layout="channels-first")
    ceiling = 10 ** (-6 / 20)
    assert np.max(np.abs(y)) <= ceiling * (1 + 1e-6)
    # one gain for all channels: identical channels stay identical, and a quiet channel is ducked by the loud one
    same = np.repeat(x[:1], channels, axis=0)
    z = sb.BrickwallLimiter(-6).process(same, SR, layout="channels-first")
    np.testing.assert_allclose(z, np.repeat(sb.BrickwallLimiter(-6).process(x[:1], SR), channels, axis=0), atol=1e-6)
    if channels > 1:
        quiet = x.copy()
        quiet[-1] *= 0.01
        q = sb.BrickwallLimiter(-6).process(quiet, SR, layout="channels-first")
        assert np.max(np.abs(q[-1])) < 0.9 * np.max(np.abs(quiet[-1]))  # ducked although far below the ceiling


def test_64_channels_and_channels_last_layout():
    x = music(0.1, SR, channels=64)
    y = sb.Pedalboard([sb.PeakFilter(1000, 6), sb.Compressor(-20, 4)]).process(x.T, SR, layout="channels-last")
    assert y.shape == x.T.shape
    ref = sb.Pedalboard([sb.PeakFilter(1000, 6), sb.Compressor(-20, 4)]).process(x[40], SR)
    np.testing.assert_allclose(y[:, 40], ref, atol=1e-6)
