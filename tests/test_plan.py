"""Compiled plans of boards (core/plan.py): the plan gives the same samples as running the plugins one by one in
Python, whatever the block sizes, parameter changes and non-finite input."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import stompbox as sb
from stompbox.core import plan as plans

SR = 44100


def _leaf(rng: np.random.Generator) -> sb.Plugin:
    kind = rng.integers(0, 12)
    return [
        lambda: sb.Gain(float(rng.uniform(-12, 6))),
        lambda: sb.Invert(),
        lambda: sb.Clipping(float(rng.uniform(-12, 0))),
        lambda: sb.Distortion(float(rng.uniform(0, 30))),
        lambda: sb.Bitcrush(float(rng.uniform(4, 16))),
        lambda: sb.LowpassFilter(float(rng.uniform(200, 8000))),
        lambda: sb.HighpassFilter(float(rng.uniform(50, 2000))),
        lambda: sb.LowShelfFilter(float(rng.uniform(100, 500)), float(rng.uniform(-6, 6))),
        lambda: sb.HighShelfFilter(float(rng.uniform(2000, 8000)), float(rng.uniform(-6, 6))),
        lambda: sb.PeakFilter(float(rng.uniform(300, 3000)), float(rng.uniform(-6, 6)), float(rng.uniform(0.5, 4))),
        lambda: sb.Delay(float(rng.uniform(0.0, 0.01)), float(rng.uniform(0, 0.9)), float(rng.uniform(0, 1))),
        lambda: sb.Delay(0.0, 0.5, 0.5),
    ][kind]()


def _board(seed: int) -> sb.Pedalboard:
    rng = np.random.default_rng(seed)
    plugins: list[sb.Plugin | None] = []
    for _ in range(int(rng.integers(1, 6))):
        pick = rng.integers(0, 10)
        if pick == 0:
            plugins.append(sb.Mix([None if rng.integers(0, 3) == 0 else _leaf(rng) for _ in range(3)]))
        elif pick == 1:
            plugins.append(sb.Chain([_leaf(rng), _leaf(rng)]))
        elif pick == 2:
            plugins.append(None)
        else:
            plugins.append(_leaf(rng))
    return sb.Pedalboard(plugins)


def _audio(frames: int, channels: int = 2, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((channels, frames)) * 0.4).astype(np.float32)


def _stream(board: sb.Plugin, audio: np.ndarray, block: int, call: int) -> np.ndarray:
    """``audio`` through ``board`` in calls of ``call`` frames (``reset=False``), each cut in ``block`` blocks."""
    pieces = [
        board.process(audio[:, i : i + call], SR, buffer_size=block, reset=False)
        for i in range(0, audio.shape[1], call)
    ]
    return np.concatenate(pieces, axis=1)


@pytest.fixture
def python_path(monkeypatch):
    """Run boards without plans inside the ``with``."""

    class Switch:
        def __enter__(self):
            monkeypatch.setattr(plans, "ENABLED", False)

        def __exit__(self, *exc):
            monkeypatch.setattr(plans, "ENABLED", True)

    return Switch()


@pytest.mark.parametrize("block", [1, 7, 128, 512, 4096])
def test_plan_equals_python_path_on_random_boards(block, python_path):
    frames = 600 if block < 100 else 9000
    audio = _audio(frames)
    for seed in range(4 if block < 100 else 8):
        call = 3 * block + 5  # each call ends in a shorter block
        with python_path:
            expected = _stream(_board(seed), audio, block, call)
        got = _stream(_board(seed), audio, block, call)
        np.testing.assert_array_equal(got, expected, err_msg=f"seed {seed}")


def test_a_board_runs_as_one_compiled_segment():
    board = sb.Pedalboard([sb.Gain(-3), sb.Mix([None, sb.Chain([sb.Delay(0.01), sb.PeakFilter()])]), sb.Distortion()])
    board.process(_audio(512), SR, buffer_size=256, reset=False)
    runner = board._runner
    assert runner is not None and len(runner.program) == 1
    assert isinstance(runner.program[0], plans.Segment)


def test_python_only_children_split_the_plan_into_segments(python_path):
    def make():
        gain = sb.Gain()
        gain.gain_db = np.linspace(-6, 6, 9000)  # automated: no plan steps
        return sb.Pedalboard([sb.LowpassFilter(2000), sb.Delay(0.005, 0.3), gain, sb.HighpassFilter(100)])

    audio = _audio(9000)
    with python_path:
        expected = _stream(make(), audio, 256, 1000)
    board = make()
    got = _stream(board, audio, 256, 1000)
    np.testing.assert_array_equal(got, expected)
    kinds = [type(item).__name__ for item in board._runner.program]
    assert kinds == ["Segment", "Gain", "Segment"]


def test_parameter_changes_mid_stream(python_path):
    audio = _audio(20000)

    def run() -> np.ndarray:
        delay, peak, gain = sb.Delay(0.001, 0.5, 0.5), sb.PeakFilter(1000, 3), sb.Gain(0)
        board = sb.Pedalboard([gain, sb.Mix([peak, None]), delay])
        out = []
        for k, start in enumerate(range(0, audio.shape[1], 1000)):
            if k == 3:
                delay.delay_seconds = 0.2  # the delay line grows: a new array under the plan
            if k == 5:
                peak.gain_db = -9.0
                gain.gain_db = 4.0
            if k == 7:
                delay.feedback = 0.9
                delay.delay_seconds = 0.0  # a pass-through
            if k == 9:
                delay.delay_seconds = 0.003
            out.append(board.process(audio[:, start : start + 1000], SR, buffer_size=128, reset=False))
        return np.concatenate(out, axis=1)

    with python_path:
        expected = run()
    np.testing.assert_array_equal(run(), expected)


def test_non_finite_output_resets_only_that_plugin(python_path):
    audio = _audio(2048)
    audio[:, 700] = np.inf  # the first delay's output is not finite; clipping makes the second's finite

    def run():
        first, second = sb.Delay(0.001, 0.5, 0.5), sb.Delay(0.002, 0.5, 0.5)
        board = sb.Pedalboard([first, sb.Clipping(0.0), second])
        out = _stream(board, audio[:, :1024], 256, 1024)
        return out, first, second

    with python_path:
        expected, _, _ = run()
    got, first, second = run()
    np.testing.assert_array_equal(got, expected)
    assert not first._buffers.any()  # reset after the block holding the infinity (its last output block)
    assert second._buffers.any()


def test_nan_in_a_mix_branch_resets_the_branch_plugins(python_path):
    audio = _audio(4096)
    audio[0, 1000] = np.nan

    def run():
        board = sb.Pedalboard([sb.Mix([sb.LowpassFilter(500), sb.Delay(0.001, 0.5)]), sb.HighpassFilter(50)])
        return _stream(board, audio, 512, 2048)

    with python_path:
        expected = run()
    np.testing.assert_array_equal(run(), expected)


def test_compile_plan_run_and_c_entry_point_match_process():
    audio = _audio(777, channels=3)

    def board():
        return sb.Pedalboard([sb.HighShelfFilter(3000, 4), sb.Delay(0.003, 0.4), sb.Distortion(12)])

    reference = board()
    expected = reference.process(audio, SR, buffer_size=1000, reset=False)

    ours = board()
    ours.process(audio[:, :0], SR, reset=False)  # prepare
    plan = plans.compile_plan(ours, 1024)
    assert plan is not None
    block = audio.copy()
    assert plan.run(block) == 0
    np.testing.assert_array_equal(block, expected)

    again = board()
    again.process(audio[:, :0], SR, reset=False)
    plan = plans.compile_plan(again, 1024)
    entry = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)(
        plan.address
    )
    block = audio.copy()
    assert entry(block.ctypes.data, 3, block.shape[1], plan.table.ctypes.data) == 0
    np.testing.assert_array_equal(block, expected)


def test_a_plugin_without_steps_has_no_plan():
    gain = sb.Gain()
    gain.gain_db = np.linspace(0, 1, 100)
    board = sb.Pedalboard([sb.Delay(), gain])
    board.process(_audio(16), SR, reset=False)
    assert plans.compile_plan(board, 128) is None


def test_steps_must_be_arrays():
    from stompbox.effects.basic import _gain_block

    gain = sb.Gain()
    step = plans.PlanStep(_gain_block, (1.0,), None, gain)  # type: ignore[arg-type]
    with pytest.raises(plans.PlanError, match="C-contiguous numpy array"):
        plans.compile_steps([step], [gain], 128)
