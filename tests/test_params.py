"""Parameters are declared once: the declaration makes the constructor (signature, order, defaults), the
docstring's Parameters section, the range in error messages and the public read-only spec."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import stompbox
from stompbox.core import Param, Plugin, registry
from stompbox.core.params import is_generated_init

# the built-ins whose constructors take more than their parameters (an impulse response; pedalboard's gain_db
# alias of drive_db): the only hand-written constructors left
HAND_WRITTEN = {"Convolution", "Distortion"}


def test_constructors_are_generated_from_the_declarations():
    for name, cls in registry.builtin_effects().items():
        assert is_generated_init(cls.__init__) == (name not in HAND_WRITTEN), name
        if name in HAND_WRITTEN:
            continue
        parameters = list(inspect.signature(cls).parameters.values())
        specs = cls.parameter_specs()
        assert [p.name for p in parameters] == list(specs), name
        for p in parameters:
            assert p.kind is p.POSITIONAL_OR_KEYWORD
            assert p.default == specs[p.name].default, (name, p.name)


def test_positional_and_keyword_arguments_follow_the_declaration_order():
    reverb = stompbox.Reverb(0.8, 0.2, wet_level=0.1)
    stored = tuple(float(np.float32(v)) for v in (0.8, 0.2, 0.1, 0.4))  # parameters are stored as float32
    assert (reverb.room_size, reverb.damping, reverb.wet_level, reverb.dry_level) == stored
    with pytest.raises(TypeError, match="multiple values for argument 'room_size'"):
        stompbox.Reverb(0.8, room_size=0.5)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        stompbox.Gain(1.0, 2.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'gain'"):
        stompbox.Gain(gain=1.0)
    ladder = stompbox.LadderFilter(stompbox.LadderFilter.Mode.HPF24, 300)
    assert ladder.mode is stompbox.LadderFilter.Mode.HPF24 and ladder.cutoff_hz == 300.0


def test_the_docstring_lists_every_parameter_once_with_its_default():
    for name, cls in registry.builtin_effects().items():
        doc = inspect.getdoc(cls) or ""
        for spec in cls.parameter_specs().values():
            entries = [line for line in doc.splitlines() if line.startswith(f"{spec.name} : ")]
            assert len(entries) == 1, (name, spec.name)
            assert f"default {spec.format(spec.default)}" in entries[0], (name, entries[0])
    gain = inspect.getdoc(stompbox.Gain) or ""
    assert "gain_db : float or automation, default 1\n    Gain applied to the signal, in dB" in gain
    assert "Range [0, 32] bits." in (inspect.getdoc(stompbox.Bitcrush) or "")


def test_error_texts_are_filled_from_the_declared_range():
    # pedalboard's texts, byte for byte, though the numbers are written once (in the range)
    with pytest.raises(ValueError, match=r"^Bit depth must be between 0 and 32 bits\. "):
        stompbox.Bitcrush(33)
    with pytest.raises(ValueError, match=r"^Room Size value must be between 0\.0 and 1\.0\. "):
        stompbox.Reverb(room_size=2)


def test_the_spec_is_public_and_read_only():
    specs = stompbox.Limiter.parameter_specs()
    with pytest.raises(TypeError):
        specs["x"] = specs["threshold_db"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        specs["threshold_db"].default = 3.0  # type: ignore[misc]
    assert specs["threshold_db"].automation == "per block"
    assert stompbox.Gain.parameter_specs()["gain_db"].automation == "per sample"
    assert stompbox.Reverb.parameter_specs()["freeze_mode"].automation == ""
    assert stompbox.Delay.parameter_specs()["delay_seconds"].range == "[0, 30] s"
    ladder = stompbox.LadderFilter.parameter_specs()["mode"]
    assert ladder.choices == ("LPF12", "HPF12", "BPF12", "LPF24", "HPF24", "BPF24") and ladder.range is None


def test_automation_is_accepted_only_where_declared():
    reverb = stompbox.Reverb()
    reverb.room_size = np.linspace(0.0, 1.0, 100)
    with pytest.raises(TypeError, match="freeze_mode cannot be automated"):
        reverb.freeze_mode = np.linspace(0.0, 1.0, 100)


def test_a_new_plugin_gets_its_constructor_and_docstring_from_its_params():
    class Tremolo(Plugin):
        """Toy amplitude modulation."""

        depth = Param(0.5, minimum=0.0, maximum=1.0, doc="modulation depth", automatable=True)
        rate_hz = Param(4.0, minimum=0.0, maximum=50.0, unit="Hz", doc="rate", error="Rate {maximum:g} at most.")
        wide = Param(False, kind=bool, doc="stereo", keyword_only=True)

    signature = inspect.signature(Tremolo)
    assert str(signature) == "(depth: 'float | Automation' = 0.5, rate_hz: float = 4.0, *, wide: bool = False) -> None"
    toy = Tremolo(0.25, 2.0, wide=True)
    assert (toy.depth, toy.rate_hz, toy.wide) == (0.25, 2.0, True)
    with pytest.raises(TypeError):
        Tremolo(0.25, 2.0, True)
    with pytest.raises(ValueError, match=r"^Rate 50 at most\."):
        Tremolo(rate_hz=60)
    doc = inspect.getdoc(Tremolo) or ""
    assert doc.startswith(
        "Toy amplitude modulation.\n\nParameters\n----------\ndepth : float or automation, default 0.5"
    )
    assert "rate_hz : float, default 4\n    Rate. Range [0, 50] Hz." in doc


def test_automation_is_declared_on_the_parameter_not_in_a_class_set():
    with pytest.raises(TypeError, match="declare automation on the parameter"):

        class Old(Plugin):
            level = Param(0.0)
            _automatable = frozenset({"level"})

    with pytest.raises(TypeError, match="Only float parameters can be automated"):
        Param(1, kind=int, automatable=True)


def test_the_chain_schema_is_made_from_the_declarations():
    import json

    jsonschema = pytest.importorskip("jsonschema")
    from stompbox.chains import dumps, schema

    validator = jsonschema.Draft202012Validator(schema())
    board = stompbox.Pedalboard(
        [stompbox.Gain(stompbox.LFO(rate_hz=2.0, depth=3.0, offset=-3.0)), stompbox.LadderFilter(mode="HPF24")]
    )
    board.append(stompbox.Mix([stompbox.Reverb(room_size=0.9), None]))
    validator.validate(json.loads(dumps(board)))
    bad = {"stompbox_chain": 1, "chain": {"type": "Reverb", "params": {"room_size": 1.5}}}
    assert not validator.is_valid(bad)  # out of the declared range
    bad["chain"]["params"] = {"room_sise": 0.5}
    assert not validator.is_valid(bad)  # not a parameter
    bad["chain"] = {"type": "Reverb", "params": {"freeze_mode": {"automation": "lfo"}}}
    assert not validator.is_valid(bad)  # not automatable
    bad["chain"] = {"type": "LadderFilter", "params": {"mode": "LPF36"}}
    assert not validator.is_valid(bad)
