"""The step protocol of the compiled plan (core/plan.py) for the built-in effects with state: running an effect's
steps on blocks is its ``_process``, sample for sample, whatever the block sizes, across parameter changes and
when the Python path and the steps take turns on one stream; the compiled plan gives the same samples."""

from __future__ import annotations

import numpy as np
import pytest

import stompbox
from stompbox.core.plan import compile_plan, run_steps

SR = 44100
SIZES = (1, 7, 128, 512, 300)  # and whatever is left at the end: a last partial block
MAX_FRAMES = 512


def _signal(channels: int, frames: int = 6000) -> np.ndarray:
    rng = np.random.default_rng(channels)
    t = np.arange(frames) / SR
    tone = 0.5 * np.sin(2 * np.pi * 330 * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t))
    x = tone + 0.05 * rng.standard_normal((channels, frames))
    x[:, 2500:3200] *= 0.002  # a quiet stretch: gates close, compressors release
    return x.astype(np.float32)


# name, settings, a parameter change made at the 9th block (mid-stream)
CASES = [
    ("Reverb", {"room_size": 0.8, "width": 0.6}, ("room_size", 0.3)),
    ("Reverb", {}, ("freeze_mode", 1.0)),
    ("Chorus", {"feedback": 0.4, "centre_delay_ms": 3.0, "depth": 0.8}, ("rate_hz", 4.0)),
    ("Phaser", {"feedback": 0.6, "rate_hz": 2.0}, ("centre_frequency_hz", 400.0)),
    ("LadderFilter", {"cutoff_hz": 800.0, "resonance": 0.7, "drive": 2.5}, ("cutoff_hz", 3000.0)),
    ("LadderFilter", {"mode": stompbox.LadderFilter.HPF24}, ("mode", stompbox.LadderFilter.BPF12)),
    ("Compressor", {"threshold_db": -25.0, "ratio": 6.0, "attack_ms": 2.0}, ("threshold_db", -12.0)),
    ("NoiseGate", {"threshold_db": -30.0, "ratio": 8.0, "release_ms": 20.0}, ("ratio", 2.0)),
    ("Limiter", {"threshold_db": -12.0, "release_ms": 40.0}, ("threshold_db", -4.0)),
    ("BrickwallLimiter", {"ceiling_db": -6.0}, ("release_ms", 20.0)),
    ("BrickwallLimiter", {"ceiling_db": -9.0, "true_peak": True}, ("ceiling_db", -3.0)),
    ("BrickwallLimiter", {"ceiling_db": -6.0, "lookahead_ms": 2.0}, ("lookahead_ms", 4.0)),
]
IDS = [f"{name}-{change[0]}" for name, _, change in CASES]


def _make(name: str, settings: dict) -> stompbox.Plugin:
    return getattr(stompbox, name)(**settings)


def _owners(plugin: stompbox.Plugin, steps: list) -> list:
    owners = [plugin]
    for step in steps:
        if step.plugin is not None and all(step.plugin is not o for o in owners):
            owners.append(step.plugin)
    return owners


class _Stepper:
    """Runs a plugin through its plan steps block by block, as a plan's owner does: bring coefficients up to date
    before a block, rebuild the steps when an array was replaced, advance the clocks after it."""

    def __init__(self, plugin: stompbox.Plugin, channels: int, compiled: bool = False) -> None:
        self.plugin = plugin
        self.compiled = compiled
        plugin._ensure_format(float(SR), channels)
        plugin._begin_step()
        self._build()

    def _build(self) -> None:
        self.steps = self.plugin._plan_steps(MAX_FRAMES)
        assert self.steps is not None, f"{type(self.plugin).__name__} has no plan steps"
        self.owners = _owners(self.plugin, self.steps)
        self.generations = [o._plan_generation for o in self.owners]
        self.plan = compile_plan(self.plugin, MAX_FRAMES) if self.compiled else None

    def block(self, block: np.ndarray) -> np.ndarray:
        for owner in self.owners:
            owner._begin_step()
        if [o._plan_generation for o in self.owners] != self.generations:
            self._build()
        if self.plan is not None:
            assert self.plan.run(block) == 0
        else:
            run_steps(block, self.steps)
        for owner in self.owners:
            owner._clock += block.shape[1]
        return block


def _blocks(frames: int):
    pos, i = 0, 0
    while pos < frames:
        size = SIZES[i % len(SIZES)]
        yield i, pos, min(frames, pos + size)
        pos += size
        i += 1


def _set(plugin: stompbox.Plugin, change: tuple) -> None:
    setattr(plugin, change[0], change[1])


@pytest.mark.parametrize("channels", [1, 2])
@pytest.mark.parametrize(("name", "settings", "change"), CASES, ids=IDS)
def test_steps_equal_process_sample_for_sample_across_a_parameter_change(name, settings, change, channels):
    x = _signal(channels)
    stepped, reference = _make(name, settings), _make(name, settings)
    stepper = _Stepper(stepped, channels)
    reference._ensure_format(float(SR), channels)
    out, expected = [], []
    for i, start, stop in _blocks(x.shape[1]):
        if i == 9:
            _set(stepped, change)
            _set(reference, change)
        block = np.ascontiguousarray(x[:, start:stop])
        expected.append(reference._step(block.copy()).copy())  # the Python path: _process
        out.append(stepper.block(block))
    np.testing.assert_array_equal(np.concatenate(out, axis=1), np.concatenate(expected, axis=1))


@pytest.mark.parametrize(("name", "settings", "change"), CASES, ids=IDS)
def test_steps_are_block_size_invariant(name, settings, change):
    x = _signal(2)
    stepper = _Stepper(_make(name, settings), 2)
    out = [stepper.block(np.ascontiguousarray(x[:, start:stop])) for _, start, stop in _blocks(x.shape[1])]
    whole = _make(name, settings)
    whole._ensure_format(float(SR), 2)
    expected = whole._step(x.copy())  # one block of the whole signal, the Python path
    np.testing.assert_array_equal(np.concatenate(out, axis=1), expected)


@pytest.mark.parametrize(("name", "settings", "change"), CASES[::2], ids=IDS[::2])
def test_python_path_and_steps_take_turns_on_one_stream(name, settings, change):
    """Odd blocks through ``_process`` (longer than the steps' max_frames: scratch may grow, and the steps are then
    rebuilt), even blocks through the steps: the stream sounds as if one path had done it all."""
    x = _signal(2, 8000)
    plugin, reference = _make(name, settings), _make(name, settings)
    stepper = _Stepper(plugin, 2)
    reference._ensure_format(float(SR), 2)
    bounds = [0, 100, 1400, 1900, 3300, 3811, 3812, 4000, 8000]  # the Python path's blocks of 1300+ frames
    out, expected = [], []
    for k in range(len(bounds) - 1):
        block = np.ascontiguousarray(x[:, bounds[k] : bounds[k + 1]])
        expected.append(reference._step(block.copy()).copy())
        if k % 2:
            out.append(plugin._step(block).copy())
        else:
            out.append(stepper.block(block).copy())
    np.testing.assert_array_equal(np.concatenate(out, axis=1), np.concatenate(expected, axis=1))


@pytest.mark.parametrize(
    ("name", "settings", "change"), [CASES[0], CASES[2], CASES[3], CASES[4], CASES[6], CASES[8], CASES[10]]
)
def test_compiled_plan_gives_the_same_samples(name, settings, change):
    x = _signal(2)
    stepper = _Stepper(_make(name, settings), 2, compiled=True)
    reference = _make(name, settings)
    reference._ensure_format(float(SR), 2)
    for i, start, stop in _blocks(x.shape[1]):
        if i == 9:
            _set(stepper.plugin, change)
            _set(reference, change)
        block = np.ascontiguousarray(x[:, start:stop])
        expected = reference._step(block.copy())
        np.testing.assert_array_equal(stepper.block(block), expected)


@pytest.mark.parametrize(("channels", "compiled"), [(3, False), (4, False), (5, False), (4, True)])
def test_reverb_on_channel_pairs_runs_each_pair_s_steps_on_its_rows(channels, compiled):
    x = _signal(channels)
    stepper = _Stepper(stompbox.Reverb(room_size=0.7), channels, compiled=compiled)
    assert [step.rows for step in stepper.steps] == [(k, min(k + 2, channels)) for k in range(0, channels, 2)]
    reference = stompbox.Reverb(room_size=0.7)
    out, expected = [], []
    for i, start, stop in _blocks(x.shape[1]):
        if i == 9:
            stepper.plugin.damping = reference.damping = 0.9
        out.append(stepper.block(np.ascontiguousarray(x[:, start:stop])))
        expected.append(reference.process(x[:, start:stop], SR, reset=False, layout="channels-first"))
    np.testing.assert_array_equal(np.concatenate(out, axis=1), np.concatenate(expected, axis=1))


def test_plugins_without_a_plan_now_say_so():
    x = _signal(2, 512)
    compressor = stompbox.Compressor(threshold_db=-20, ratio=4)
    compressor.sidechain = x
    compressor._ensure_format(float(SR), 2)
    assert compressor._plan_steps(MAX_FRAMES) is None  # a sidechain key is read in Python
    reverb = stompbox.Reverb(room_size=np.linspace(0.1, 0.9, 512))
    reverb._ensure_format(float(SR), 2)
    assert reverb._plan_steps(MAX_FRAMES) is None  # automation renders its curves in Python


@pytest.mark.parametrize(("name", "settings", "change"), CASES, ids=IDS)
def test_steps_take_arrays_only(name, settings, change):
    plugin = _make(name, settings)
    plugin._ensure_format(float(SR), 2)
    plugin._begin_step()
    for step in plugin._plan_steps(MAX_FRAMES):
        assert all(isinstance(a, np.ndarray) and a.flags.c_contiguous for a in step.args)
