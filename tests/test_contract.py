"""The plugin contract, checked for every effect the registry knows (tests/_contract.py): the output does not
depend on block sizes, automation is block-size invariant and audible, a pickled plugin sounds the same (also
mid-stream). A new effect is covered by these tests (and by the channel and hostile-array suites) as soon as its
class is defined: tests/_toy_effect.py shows it with a toy tremolo that no list names."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import _contract
from _audio import music, process_in_blocks
from stompbox.core import registry

SR = _contract.SR
NAMES = sorted(_contract.subjects())
AUTOMATABLE = [name for name in NAMES if _contract.automatable(name)]


def test_the_subjects_are_the_registry_s_effects_and_a_toy_no_list_names():
    assert set(NAMES) == set(registry.builtin_effects()) | {"ToyTremolo"}
    assert "ToyTremolo" in AUTOMATABLE and _contract.per_channel("ToyTremolo")


@pytest.mark.parametrize("block", [1, 7, 512, 8192])
@pytest.mark.parametrize("name", NAMES)
def test_any_block_size_gives_the_whole_array_result(name, block):
    x = music(0.05 if block == 1 else 0.5)
    plugin = _contract.make(name)
    whole = plugin(x, SR)
    streamed = process_in_blocks(plugin, x, SR, block)  # a plugin with latency withholds its first samples
    assert streamed.shape[1] == max(0, x.shape[1] - plugin.latency_samples)
    np.testing.assert_allclose(streamed, whole[:, : streamed.shape[1]], atol=1e-6)


@pytest.mark.parametrize("name", AUTOMATABLE)
def test_every_automatable_parameter_is_block_size_invariant_and_moves(name):
    x = music(0.3, SR)
    whole = _contract.automated(name).process(x, SR)
    assert np.all(np.isfinite(whole))
    for size in (512, 37):
        np.testing.assert_allclose(_contract.automated(name).process(x, SR, buffer_size=size), whole, atol=2e-7)
    # streaming with reset=False continues the clock
    plugin = _contract.automated(name)
    plugin.reset()
    pieces = [plugin.process(x[:, i : i + 1000], SR, reset=False) for i in range(0, x.shape[1], 1000)]
    streamed = np.concatenate(pieces, axis=1)  # a plugin with latency withholds its first samples
    np.testing.assert_allclose(streamed, whole[:, : streamed.shape[1]], atol=2e-7)
    # the automation matters: the output differs from the effect held at its starting values
    assert np.max(np.abs(_contract.make(name).process(x, SR) - whole)) > 1e-4


@pytest.mark.parametrize("name", NAMES)
def test_a_pickled_plugin_sounds_the_same_also_mid_stream(name):
    x = music(0.3)
    plugin = _contract.make(name)
    expected = plugin(x, SR)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(plugin))(x, SR), expected)
    half = x.shape[1] // 2
    plugin.reset()
    plugin.process(x[:, :half], SR, reset=False)
    clone = pickle.loads(pickle.dumps(plugin))
    continued, original = clone.process(x[:, half:], SR, reset=False), plugin.process(x[:, half:], SR, reset=False)
    if name in _contract.RESTART_WHEN_COPIED:
        assert continued.shape == original.shape and np.all(np.isfinite(continued))
    else:
        np.testing.assert_array_equal(continued, original)
