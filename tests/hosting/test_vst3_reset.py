"""Hosted VST3 plugins: reset semantics (reload when the plugin's own reset keeps audio) and the compiled block
loop (block sizes seen by the plugin, in boards and alone)."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import _audio
from stompbox import Gain, Pedalboard
from stompbox.hosting import ExternalPluginReloadType, load_plugin

VST3_DIR = "/usr/lib/vst3"
pytestmark = pytest.mark.skipif(
    not os.path.isdir(f"{VST3_DIR}/ZamComp.vst3"),
    reason="zam-plugins not installed (apt-get install zam-plugins)",
)
SR = 44100
BUNDLES = sorted(os.path.basename(p)[:-5] for p in glob.glob(f"{VST3_DIR}/Za*.vst3"))
#: ZamHeadX2 prepares its HRTF convolution on a thread of its own after set-up: how much of the first call's
#: first 32768 samples it has convolved depends on timing (measured: up to 3.4e-3 apart between runs), so its
#: first call is not reproducible in any host that does not wait for it; later calls are.
TIMING_DEPENDENT = {"ZamHeadX2"}


def channels_of(name: str) -> int:
    return 2 if name.endswith("X2") or name == "ZamVerb" else 1


@pytest.mark.parametrize("name", [b for b in BUNDLES if b not in TIMING_DEPENDENT])
def test_every_reset_returns_to_the_fresh_state(name):
    """Processing with reset=True twice gives what a fresh instance gives: ZamTube keeps a tone across its own
    deactivate/activate (measured -62 dBFS after noise), so it is detected and reloaded on reset."""
    x = _audio.music(0.5, channels=channels_of(name))
    plugin = load_plugin(f"{VST3_DIR}/{name}.vst3")
    first, second, third = plugin(x, SR), plugin(x, SR), plugin(x, SR)
    assert plugin._reload_type in (
        ExternalPluginReloadType.ClearsAudioOnReset,
        ExternalPluginReloadType.PersistsAudioOnReset,
    )
    np.testing.assert_array_equal(second, first)
    np.testing.assert_array_equal(third, first)
    np.testing.assert_array_equal(load_plugin(f"{VST3_DIR}/{name}.vst3")(x, SR), first)


def test_zamtube_is_reloaded_with_its_parameters():
    path = f"{VST3_DIR}/ZamTube.vst3"
    x = _audio.music(0.5, channels=1)
    plugin = load_plugin(path, parameter_values={"tube_drive": 6.0, "bass": 7.0})
    first = plugin(x, SR)
    assert plugin._reload_type is ExternalPluginReloadType.PersistsAudioOnReset
    state = plugin.raw_state
    again = plugin(x, SR)  # reloaded: a new instance with the same state
    np.testing.assert_array_equal(again, first)
    assert plugin.tube_drive == pytest.approx(6.0, abs=1e-3) and plugin.bass == pytest.approx(7.0, abs=1e-3)
    assert plugin.raw_state == state
    plugin.tube_drive = 2.0  # parameters set after a reload reach the new instance
    changed = plugin(x, SR)
    assert _audio.diff_db(changed, first) > -40
    np.testing.assert_array_equal(changed, load_plugin(path, parameter_values={"tube_drive": 2.0, "bass": 7.0})(x, SR))


@pytest.mark.parametrize("buffer_size", [1, 100, 1000, 8192, 20000])
def test_long_arrays_run_in_exactly_buffer_size_blocks(buffer_size):
    """The compiled block loop hands the plugin blocks of buffer_size (capped at 8192): the same output as
    feeding it those blocks one call at a time."""
    path = f"{VST3_DIR}/ZamDelay.vst3"
    x = _audio.music(0.6 if buffer_size > 1 else 0.02, channels=1)
    layout = {"layout": "channels-first"}
    whole = load_plugin(path, parameter_values={"time_ms": 20.0, "feedback": 0.5})(x, SR, buffer_size=buffer_size)
    step = min(buffer_size, 8192)
    stepwise = load_plugin(path, parameter_values={"time_ms": 20.0, "feedback": 0.5})
    pieces = [stepwise(x[:, i : i + step], SR, reset=False, **layout) for i in range(0, x.shape[1], step)]
    np.testing.assert_array_equal(whole, np.concatenate(pieces, axis=1))


def test_inside_a_board_the_plugin_sees_the_boards_block_size():
    path = f"{VST3_DIR}/ZamComp.vst3"
    x = _audio.music(1.0, channels=1)
    settings = {"threshold_db": -30.0, "ratio": 8.0, "attack_ms": 1.0}
    alone = load_plugin(path, parameter_values=settings)
    board = Pedalboard([Gain(0.0), load_plugin(path, parameter_values=settings)])
    for buffer_size in (512, 8192):
        np.testing.assert_array_equal(
            board(x, SR, buffer_size=buffer_size), alone(x, SR, buffer_size=buffer_size), err_msg=str(buffer_size)
        )


def test_fast_path_leaves_the_bus_pointers_and_clocks_as_the_slow_path():
    """After a long call (compiled loop), short calls (Python loop) still work and continue the stream."""
    path = f"{VST3_DIR}/ZamDelay.vst3"
    x = _audio.music(1.0, channels=1)
    streamed = load_plugin(path)
    head = streamed(x[:, :30000], SR, reset=False)  # > 8192: compiled loop
    tail = streamed(x[:, 30000:], SR, reset=False, buffer_size=8192)  # 14100: compiled loop again
    assert streamed._instance._context.projectTimeSamples == x.shape[1]
    whole = load_plugin(path)(x, SR)
    np.testing.assert_array_equal(np.concatenate([head, tail], axis=1), whole)
    small = streamed(x[:, :256], SR, reset=False)  # Python path after the compiled one: same buffers
    assert np.all(np.isfinite(small)) and small.shape == (1, 256)
