"""Engine traits are declared as class keywords and checked at the class statement: a contradictory set raises
there instead of changing output silently."""

from __future__ import annotations

import numpy as np
import pytest

import stompbox
from stompbox.core import Param, Plugin
from stompbox.core.traits import Traits


def test_traits_are_class_keywords_and_set_what_the_engine_reads():
    class Toy(Plugin, block_invariant=True, whole_call=True):
        def _process(self, block: np.ndarray) -> np.ndarray:
            return block

    assert Toy.engine_traits == Traits(block_invariant=True, whole_call=True)
    assert Toy._block_invariant and Toy._whole_call and Toy._stateful and not Toy._pointwise

    class Child(Toy, automation_chunk=64):
        pass

    assert Child.engine_traits == Traits(block_invariant=True, whole_call=True, automation_chunk=64)


def test_a_base_that_declares_nothing_does_not_hide_its_siblings_traits():
    # Compressor(SidechainInput, _Dynamics): the sidechain base declares no traits, _Dynamics is block-invariant
    assert stompbox.Compressor.engine_traits.block_invariant and stompbox.Compressor._block_invariant
    assert stompbox.MP3Compressor._block_invariant  # (PairedChannels, PipelinePlugin)
    assert stompbox.Gain.engine_traits == Traits(stateful=False, block_invariant=True, pointwise=True)


@pytest.mark.parametrize(
    "traits, message",
    [
        ({"pointwise": True, "block_invariant": True}, "declare stateful=False"),
        ({"pointwise": True, "stateful": False}, "declare block_invariant=True"),
        ({"whole_call": True}, "whole_call needs block_invariant=True"),
        ({"chunks_itself": True, "block_invariant": True}, "cannot be block_invariant"),
        ({"automation_chunk": 0}, "automation_chunk must be at least 1"),
        ({"stateful": "no"}, "stateful must be True or False"),
        ({"blockinvariant": True}, "unknown engine trait 'blockinvariant'"),
    ],
)
def test_contradictory_traits_raise_at_the_class_statement(traits, message):
    with pytest.raises(TypeError, match=message):

        class Bad(Plugin, **traits):
            def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
                dst[...] = src


def test_a_trait_set_in_the_class_body_is_refused():
    with pytest.raises(TypeError, match=r"declare the trait as a class keyword.*stateful=False"):

        class Old(Plugin):
            _stateful = False


def test_promises_the_class_does_not_keep_raise():
    with pytest.raises(TypeError, match="pointwise but does not implement _map"):

        class NoMap(Plugin, stateful=False, block_invariant=True, pointwise=True):
            pass

    with pytest.raises(TypeError, match="per-sample automation of level but does not implement _process_automated"):

        class NoCurves(Plugin):
            level = Param(0.0, per_sample=True)

    class Base(Plugin, stateful=False, block_invariant=True, pointwise=True):  # abstract bases may defer them
        _abstract = True


def test_containers_compute_block_invariance_from_their_children():
    assert stompbox.Pedalboard([stompbox.Gain()])._block_invariant
    from stompbox._internal import AddLatency

    assert not stompbox.Pedalboard([stompbox.Gain(), AddLatency(10)])._block_invariant
