"""stompbox.render: tails that ring out until the output stays below a threshold, fixed tails, no tail; for
arrays and streamed readers; latency flushed.

The reference for every case is the plugin run over the input followed by a long stretch of silence: the
"auto" output must be a prefix of it that ends where the reference first stays below the threshold for good.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import stompbox
from _array_reader import ArrayReader
from _audio import SR, music
from stompbox.render import render, render_reader

THRESHOLD = 10 ** (-80 / 20)


def _reference(plugin, x, sr, seconds=30.0):
    padded = np.concatenate([x, np.zeros((x.shape[0], int(seconds * sr)), np.float32)], axis=1)
    return plugin.process(padded, sr)


def _quiet_from(y, length):
    """The first index after which every sample of ``y`` stays below -80 dBFS (never before ``length``)."""
    loud = np.flatnonzero((np.abs(y) >= THRESHOLD).any(axis=0))
    return max(length, int(loud[-1]) + 1 if loud.size else 0)


def _burst(sr=SR, seconds=0.5):
    return music(seconds, sr=sr)


@pytest.mark.parametrize(
    "make",
    [
        lambda: stompbox.Reverb(room_size=0.6),
        lambda: stompbox.Delay(delay_seconds=0.25, feedback=0.5, mix=0.5),
        lambda: stompbox.Pedalboard([stompbox.Delay(delay_seconds=0.3, feedback=0.6), stompbox.Reverb()]),
    ],
    ids=["reverb", "delay-feedback", "delay+reverb"],
)
def test_auto_tail_ends_within_10_ms_after_the_output_stays_below_threshold(make):
    x = _burst()
    plugin = make()
    y = render(x, SR, plugin, "auto")
    ref = _reference(make(), x, SR)
    quiet = _quiet_from(ref, x.shape[1])
    assert quiet < ref.shape[1] - SR  # the reference itself did fall silent
    assert 0 <= y.shape[1] - quiet <= 0.010 * SR
    assert y.shape[1] > x.shape[1] + 0.5 * SR  # there was a real tail
    np.testing.assert_array_equal(y, ref[:, : y.shape[1]])


def test_delay_gaps_between_echoes_do_not_end_the_tail():
    """Echoes 0.4 s apart, the input a 10 ms click: long silences inside the tail."""
    x = np.zeros((1, SR // 100), np.float32)
    x[0, 0] = 0.9
    make = lambda: stompbox.Delay(delay_seconds=0.4, feedback=0.3, mix=1.0)  # noqa: E731
    y = render(x, SR, make(), "auto")
    ref = _reference(make(), x, SR, 10.0)
    assert y.shape[1] == _quiet_from(ref, x.shape[1])
    # 0.9 * 0.3^k falls below 1e-4 after k = 8 echoes: the last loud sample is the 8th echo (at 0.4 * 8 s)
    assert y.shape[1] == int(round(0.4 * SR)) * 8 + 1


@pytest.mark.parametrize("seconds", [0.0, 0.25, 1.5])
def test_fixed_tail_has_exact_length(seconds):
    x = _burst()
    make = lambda: stompbox.Reverb(room_size=0.8)  # noqa: E731
    y = render(x, SR, make(), seconds, buffer_size=1000)
    assert y.shape == (2, x.shape[1] + int(round(seconds * SR)))
    np.testing.assert_array_equal(y, _reference(make(), x, SR, 2.0)[:, : y.shape[1]])


def test_no_tail_equals_process():
    x = _burst()
    make = lambda: stompbox.Delay(delay_seconds=0.1, feedback=0.5)  # noqa: E731
    np.testing.assert_array_equal(render(x, SR, make(), None), make().process(x, SR))


def test_memoryless_chain_has_no_tail():
    x = _burst()
    y = render(x, SR, [stompbox.Gain(gain_db=-6), stompbox.Clipping()], "auto")
    assert y.shape == x.shape


def test_latency_is_flushed_and_aligned():
    """A lookahead limiter withholds its latency when streaming: render must flush it."""
    x = _burst()
    make = lambda: stompbox.Pedalboard(  # noqa: E731
        [stompbox.BrickwallLimiter(ceiling_db=-6.0), stompbox.Delay(delay_seconds=0.2, feedback=0.4)]
    )
    for tail in (None, 0.3, "auto"):
        plugin = make()
        y = render(x, SR, plugin, tail, buffer_size=777)
        assert plugin.latency_samples > 0
        ref = _reference(make(), x, SR, 10.0)
        np.testing.assert_allclose(y, ref[:, : y.shape[1]], atol=1e-7)
        if tail == "auto":
            assert abs(y.shape[1] - _quiet_from(ref, x.shape[1])) <= 1


def test_never_ending_tail_stops_at_max_tail_seconds():
    x = _burst()
    plugin = stompbox.Delay(delay_seconds=0.1, feedback=1.0, mix=0.5)
    assert math.isinf(plugin.tail_seconds)
    y = render(x, SR, plugin, "auto", max_tail_seconds=2.0)
    assert y.shape[1] == x.shape[1] + 2 * SR


def test_threshold_and_hold_options():
    x = _burst()
    make = lambda: stompbox.Reverb(room_size=0.7)  # noqa: E731
    loose = render(x, SR, make(), "auto", threshold_db=-40.0)
    strict = render(x, SR, make(), "auto", threshold_db=-90.0)
    assert x.shape[1] < loose.shape[1] < strict.shape[1]
    ref = _reference(make(), x, SR, 10.0)
    loud = np.flatnonzero((np.abs(ref) >= 10 ** (-40 / 20)).any(axis=0))
    assert loose.shape[1] == loud[-1] + 1
    held = render(x, SR, make(), "auto", hold_seconds=5.0)
    np.testing.assert_array_equal(held, render(x, SR, make(), "auto"))


def test_layouts_are_kept():
    x = _burst()
    plugin = stompbox.Reverb()
    stereo = render(x, SR, plugin, "auto")
    last = render(np.ascontiguousarray(x.T), SR, plugin, "auto")
    assert last.shape == stereo.shape[::-1]
    np.testing.assert_array_equal(last.T, stereo)
    mono = render(x[0], SR, stompbox.Delay(delay_seconds=0.1, feedback=0.3), 0.5)
    assert mono.ndim == 1 and mono.shape[0] == x.shape[1] + SR // 2
    assert render(x.astype(np.float64), SR, plugin, 0.1).dtype == np.float32


@pytest.mark.parametrize("tail", [None, 0.7, "auto"])
def test_streaming_reader_equals_the_array_render(tail):
    x = music(1.5, sr=SR)
    make = lambda: stompbox.Pedalboard([stompbox.Delay(delay_seconds=0.2, feedback=0.5), stompbox.Reverb()])  # noqa: E731
    blocks = []
    counts = render_reader(make(), ArrayReader(x, SR), blocks.append, tail, buffer_size=512, block_frames=3001)
    y = np.concatenate(blocks, axis=1)
    expected = render(x, SR, make(), tail)
    np.testing.assert_array_equal(y, expected)
    assert counts == (x.shape[1], expected.shape[1])
    assert all(b.dtype == np.float32 and b.flags.c_contiguous for b in blocks)


def test_stompbox_render_is_callable_however_imported():
    import stompbox.render as module

    x = _burst()
    y = module(x, SR, stompbox.Gain(gain_db=-6), None)
    np.testing.assert_allclose(y, x * 10 ** (-6 / 20), rtol=1e-6)


def test_bad_arguments():
    x = _burst()
    gain = stompbox.Gain()
    with pytest.raises(ValueError, match="tail"):
        render(x, SR, gain, "forever")
    with pytest.raises(ValueError, match="tail"):
        render(x, SR, gain, -1.0)
    with pytest.raises(ValueError, match="threshold_db"):
        render(x, SR, gain, "auto", threshold_db=-math.inf)
    with pytest.raises(ValueError, match="max_tail_seconds"):
        render(x, SR, gain, "auto", max_tail_seconds=math.inf)
    with pytest.raises(TypeError, match="Plugin"):
        render(x, SR, "reverb")
    with pytest.raises(TypeError):
        render([0.0, 1.0], SR, gain)
