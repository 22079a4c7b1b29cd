"""The checks a stream's repeated calls skip (``Plugin._accept``, the cached tree) must never change what a call
does: every call is held to what a fresh plugin's checks would say."""

from __future__ import annotations

import numpy as np
import pytest

import stompbox
from stompbox._base.errors import LayoutError
from stompbox.core.errors import DuplicatePluginError


def _noise(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 0.1).astype(np.float32)


def test_a_square_block_after_reset_is_ambiguous_again():
    # reset() forgets the layout; the next square array must raise as on a fresh plugin, not reuse the stream's
    gain = stompbox.Gain(gain_db=-6)
    gain.process(_noise((2, 64)), 44100, reset=False)
    gain.process(_noise((2, 64)), 44100, reset=False)
    gain.reset()
    with pytest.raises(LayoutError):
        gain.process(_noise((2, 2)), 44100, reset=False)


def test_a_stream_keeps_its_layout_for_blocks_shorter_than_the_channel_count():
    # the layout established by the first call decides a (2, 1) block of a stereo stream, as before
    gain = stompbox.Gain(gain_db=0)
    first = _noise((2, 256))
    assert np.array_equal(gain.process(first, 44100, reset=False), first)
    short = _noise((2, 1), seed=1)
    out = gain.process(short, 44100, reset=False)
    assert out.shape == (2, 1) and np.array_equal(out, short)
    last = _noise((512, 2), seed=2)  # channels-last now: the channel axis no longer matches the hint
    assert np.array_equal(gain.process(last, 44100, reset=False), last)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "44100", None, True])
def test_a_bad_sample_rate_raises_mid_stream(bad):
    gain = stompbox.Gain()
    gain.process(_noise((2, 64)), 44100, reset=False)
    with pytest.raises((TypeError, ValueError)):
        gain.process(_noise((2, 64)), bad, reset=False)


def test_a_new_sample_rate_or_channel_count_mid_stream_prepares_the_plugin_again():
    lowpass = stompbox.LowpassFilter(cutoff_frequency_hz=1000)
    x = _noise((2, 4096))
    lowpass.process(x, 44100, reset=False)
    at_48k = lowpass.process(x, 48000, reset=False)
    assert np.array_equal(at_48k, stompbox.LowpassFilter(cutoff_frequency_hz=1000).process(x, 48000))
    mono = lowpass.process(x[0], 48000, reset=False)
    assert mono.shape == (4096,)
    assert np.array_equal(mono, stompbox.LowpassFilter(cutoff_frequency_hz=1000).process(x[0], 48000))


def test_float64_and_non_contiguous_blocks_mid_stream_give_the_float32_result():
    delay = stompbox.Delay(delay_seconds=0.001, feedback=0.5)
    reference = stompbox.Delay(delay_seconds=0.001, feedback=0.5)
    x = _noise((2, 2048))
    for start in range(0, 2048, 128):
        block = x[:, start : start + 128]
        assert np.array_equal(
            delay.process(block.astype(np.float64), 44100, reset=False),
            reference.process(np.ascontiguousarray(block), 44100, reset=False),
        )


def test_a_plugin_added_twice_deep_inside_a_board_mid_stream_is_still_refused():
    # the checked tree is cached between calls; a change to a nested board must still be seen
    gain = stompbox.Gain()
    inner = stompbox.Pedalboard([gain])
    board = stompbox.Pedalboard([inner, stompbox.Reverb()])
    board.process(_noise((2, 256)), 44100, reset=False)
    inner.append(stompbox.Chain([gain]))  # the same Gain now sits in two places, one level down
    with pytest.raises(DuplicatePluginError):
        board.process(_noise((2, 256)), 44100, reset=False)


def test_a_plugin_removed_from_a_nested_board_mid_stream_is_no_longer_run():
    gain = stompbox.Gain(gain_db=-20)
    inner = stompbox.Pedalboard([gain])
    board = stompbox.Pedalboard([inner])
    x = _noise((2, 256))
    assert not np.array_equal(board.process(x, 44100, reset=False), x)
    inner.remove(gain)
    assert np.array_equal(board.process(x, 44100, reset=False), x)


def test_a_plugin_added_to_a_nested_board_mid_stream_is_prepared_and_run():
    # only the board that changed was told; the outer board's format is unchanged, yet the new plugin must be
    # prepared before its first block (it raised an AssertionError from the filter's _update)
    x = _noise((2, 4096))
    inner = stompbox.Pedalboard([stompbox.Gain(gain_db=-6)])
    reverb = stompbox.Reverb()
    board = stompbox.Pedalboard([inner, reverb])
    board.process(x[:, :2048], 44100, reset=False)
    inner.append(stompbox.LowpassFilter(cutoff_frequency_hz=500))
    out = board.process(x[:, 2048:], 44100, reset=False)
    # the changed board starts again from silence; the reverb outside it keeps its tail
    expected_inner = stompbox.Pedalboard([stompbox.Gain(gain_db=-6), stompbox.LowpassFilter(cutoff_frequency_hz=500)])
    reference_reverb = stompbox.Reverb()
    reference_reverb.process(stompbox.Gain(gain_db=-6).process(x[:, :2048], 44100), 44100, reset=False)
    expected = reference_reverb.process(expected_inner.process(x[:, 2048:], 44100), 44100, reset=False)
    np.testing.assert_allclose(out, expected, atol=1e-6)


@pytest.mark.parametrize("channels", [3, 5])
@pytest.mark.parametrize("alone", [True, False], ids=["alone", "in-a-board"])
def test_a_parameter_change_reaches_every_channel_pair_of_a_wide_reverb(monkeypatch, channels, alone):
    # a Reverb on more than two channels runs one clone per pair; a parameter change mid-stream must reach the
    # clones on the compiled path as on the Python path (the plan ran the clones with stale coefficients)
    from stompbox.core import plan

    x = _noise((channels, 16384), seed=3)

    def stream(plans_on: bool) -> np.ndarray:
        monkeypatch.setattr(plan, "ENABLED", plans_on)
        reverb = stompbox.Reverb(room_size=0.7)
        target = reverb if alone else stompbox.Pedalboard([reverb])
        out = []
        for i, start in enumerate(range(0, x.shape[1], 512)):
            if i == 9:
                reverb.damping = 0.9
            out.append(target.process(x[:, start : start + 512], 44100, reset=False))
        return np.concatenate(out, axis=1)

    np.testing.assert_array_equal(stream(True), stream(False))


class _Doubled(stompbox.Gain):
    """A user's subclass of a built-in that changes what a block does."""

    def _process(self, block: np.ndarray) -> np.ndarray:
        block *= 2.0
        return block


def test_a_subclass_overriding_process_runs_its_own_code_in_a_board():
    # the compiled plan would run Gain's kernel (silently ignoring the override): such a class runs in Python
    assert _Doubled(gain_db=0)._plan_steps(512) is None
    x = _noise((2, 512))
    board = stompbox.Pedalboard([_Doubled(gain_db=0), stompbox.LowpassFilter(cutoff_frequency_hz=20000)])
    expected = stompbox.LowpassFilter(cutoff_frequency_hz=20000).process(x * 2, 44100)
    for _ in range(2):
        np.testing.assert_allclose(board.process(x, 44100, reset=True), expected, atol=1e-6)
    builtin = stompbox.Gain(gain_db=0)
    builtin.process(x, 44100)
    assert builtin._plan_steps(512) is not None  # the built-in itself still runs in plans
