"""The plugin registry: classes are recorded as they are defined; public names are looked up without getattr on
the package, importing only the module that defines the class asked for."""

from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pytest

import stompbox
from stompbox.core import Plugin, StompboxError, registry

# the effects pedalboard 0.9 ships (its public effect classes), plus stompbox's own BrickwallLimiter
PEDALBOARD_EFFECTS = {
    "Bitcrush", "Chorus", "Clipping", "Compressor", "Convolution", "Delay", "Distortion", "GSMFullRateCompressor",
    "Gain", "HighShelfFilter", "HighpassFilter", "Invert", "LadderFilter", "Limiter", "LowShelfFilter",
    "LowpassFilter", "MP3Compressor", "NoiseGate", "PeakFilter", "Phaser", "PitchShift", "Resample", "Reverb",
}  # fmt: skip


def test_builtin_effects_are_the_concrete_public_effect_classes():
    effects = registry.builtin_effects()
    assert set(effects) == PEDALBOARD_EFFECTS | {"BrickwallLimiter"}
    assert list(effects) == sorted(effects)
    for name, cls in effects.items():
        assert cls is getattr(stompbox, name)
    assert "IIRFilter" not in effects  # the filters' abstract base
    with pytest.raises(TypeError):
        effects["Toy"] = object  # read-only


def test_lookup_by_exact_and_forgiving_name():
    assert registry.lookup("Reverb") is stompbox.Reverb
    assert registry.lookup("reverb") is stompbox.Reverb
    assert registry.lookup("ladder-filter") is stompbox.LadderFilter
    assert registry.lookup("MP3_COMPRESSOR") is stompbox.MP3Compressor
    assert registry.lookup("Pedalboard") is stompbox.Pedalboard
    assert registry.lookup("Split") is stompbox.Split
    assert registry.lookup("AddLatency").__module__ == "stompbox._internal"
    assert registry.find("Pedalboard", "effect") is None
    assert registry.find("IIRFilter") is None
    assert registry.kind_of("Mix") == "container"
    assert registry.kind_of("Gain") == "effect"


def test_unknown_name_names_the_closest():
    with pytest.raises(registry.UnknownPluginError, match=r"did you mean Reverb\?") as caught:
        registry.lookup("revreb", "effect")
    assert isinstance(caught.value, StompboxError) and isinstance(caught.value, LookupError)
    assert "IIRFilter" not in str(caught.value)
    assert registry.find(3) is None  # type: ignore[arg-type]


def test_a_class_is_recorded_when_it_is_defined():
    class Toy(Plugin):
        def _process(self, block: np.ndarray) -> np.ndarray:
            return block

    class ToyBase(Plugin):
        _abstract = True

    assert Toy in registry.defined()
    assert ToyBase not in registry.defined()
    assert registry.find("Toy") is None  # defined, but no public name: chains and the CLI do not see it


def test_looking_up_an_effect_imports_only_its_module():
    code = (
        "import sys\n"
        "from stompbox.core import registry\n"
        "registry.lookup('gain')\n"
        "print(sorted(m for m in sys.modules if m.startswith('stompbox.effects.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['stompbox.effects.basic']"


def test_provide_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        registry.provide("gadget", ["Thing"], lambda name: types.SimpleNamespace())
