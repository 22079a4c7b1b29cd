"""Routing: ChannelMap, ChannelMatrix and Split, alone and inside boards."""

from __future__ import annotations

import numpy as np
import pytest

import stompbox as sb
from _audio import music
from stompbox.routing import ChannelMap, ChannelMatrix, Split

SR = 44100


def test_channel_map_reorders_duplicates_picks_and_silences():
    x = music(0.2, SR, channels=4)
    np.testing.assert_array_equal(ChannelMap([1, 0, 3, 2]).process(x, SR), x[[1, 0, 3, 2]])
    np.testing.assert_array_equal(ChannelMap([2]).process(x, SR, layout="channels-first"), x[2:3])
    y = ChannelMap([0, 0, None]).process(x[0], SR)  # mono in: three channels out, channels-first
    assert y.shape == (3, x.shape[1])
    np.testing.assert_array_equal(y[1], x[0])
    assert not y[2].any()
    with pytest.raises(ValueError, match="uses channel 5, but the audio has 4 channels"):
        ChannelMap([5]).process(x, SR)
    with pytest.raises(ValueError):
        ChannelMap([-1])


def test_channel_matrix_mixes_down_and_up():
    x = music(0.2, SR, channels=2)
    mono = ChannelMatrix([[0.5, 0.5]]).process(x, SR, layout="channels-first")
    np.testing.assert_allclose(mono[0], 0.5 * (x[0] + x[1]), atol=1e-7)
    with pytest.raises(ValueError, match="2 input columns, but the audio has 3"):
        ChannelMatrix([[1, 0], [0, 1]]).process(music(0.1, SR, channels=3), SR)


def test_a_board_follows_the_changing_channel_count_in_any_block_size():
    x = music(0.3, SR, channels=1)[0]
    board = sb.Pedalboard([ChannelMap([0, 0]), sb.Delay(0.01, 0.3), ChannelMatrix([[1.0, -1.0], [0.5, 0.5]])])
    whole = board.process(x, SR)
    assert whole.shape == (2, x.size)
    np.testing.assert_array_equal(board.process(x, SR, buffer_size=100), whole)
    assert not whole[0].any()  # both channels were identical: their difference is silence


def test_split_runs_each_group_alone_and_aligns_latency():
    x = music(0.3, SR, channels=6)
    split = Split([sb.Reverb(), sb.BrickwallLimiter(-6), None], channels=[[0, 1], [2, 3], [5]])
    y = split.process(x, SR, buffer_size=777)
    assert y.shape == (5, x.shape[1])
    np.testing.assert_allclose(y[:2], sb.Reverb().process(x[:2], SR), atol=1e-7)
    np.testing.assert_allclose(y[2:4], sb.BrickwallLimiter(-6).process(x[2:4], SR), atol=1e-7)
    np.testing.assert_array_equal(y[4], x[5])  # the pass-through branch is delayed to line up, then compensated
    assert split.latency_samples == sb.BrickwallLimiter(-6).latency_samples or split.latency_samples > 0
    assert split.to_dict()["channels"] == [[0, 1], [2, 3], [5]]


def test_split_defaults_to_pairs_and_checks_groups():
    x = music(0.2, SR, channels=4)
    y = Split([sb.Gain(-6), sb.Gain(6)]).process(x, SR)
    np.testing.assert_allclose(y[:2], x[:2] * 10 ** (-6 / 20), rtol=1e-6)
    np.testing.assert_allclose(y[2:], x[2:] * 10 ** (6 / 20), rtol=1e-6)
    with pytest.raises(ValueError, match="one channel group per plugin"):
        Split([sb.Gain()], channels=[[0], [1]])
    with pytest.raises(ValueError, match="names channel 7"):
        Split([sb.Gain()], channels=[[7]]).process(x, SR)
