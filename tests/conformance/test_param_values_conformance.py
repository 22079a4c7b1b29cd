"""Built-in parameters read back as pedalboard's do (float32 values), and bad arguments raise pedalboard's
exception types."""

from __future__ import annotations

import numpy as np
import pytest

import stompbox

EFFECTS = [
    "Bitcrush", "Chorus", "Clipping", "Compressor", "Delay", "Distortion", "Gain", "HighShelfFilter",
    "HighpassFilter", "LadderFilter", "Limiter", "LowShelfFilter", "LowpassFilter", "MP3Compressor", "NoiseGate",
    "PeakFilter", "Phaser", "PitchShift", "Resample", "Reverb",
]  # fmt: skip
# pedalboard stores the shelf and peak filters' gain as a linear factor: gain_db reads back through 20*log10
LINEAR_GAIN = {("HighShelfFilter", "gain_db"), ("LowShelfFilter", "gain_db"), ("PeakFilter", "gain_db")}


def float_params(plugin) -> list[str]:
    names = [n for n in dir(type(plugin)) if isinstance(getattr(type(plugin), n, None), property)]
    return [n for n in names if not n.startswith("_") and isinstance(getattr(plugin, n), float)]


@pytest.mark.parametrize("name", EFFECTS)
def test_float_parameters_read_back_as_pedalboards(pb, name):
    theirs, ours = getattr(pb, name)(), getattr(stompbox, name)()
    params = float_params(theirs)
    assert params
    for param in params:
        for candidate in (getattr(theirs, param) + 0.1, 0.3, 1.3):
            try:
                setattr(theirs, param, candidate)
            except Exception:  # noqa: S112 - out of pedalboard's range: try the next value
                continue
            setattr(ours, param, candidate)
            got, expected = getattr(ours, param), getattr(theirs, param)
            if (name, param) in LINEAR_GAIN:
                assert got == float(np.float32(candidate))
                assert got == pytest.approx(expected, abs=1e-5)
            else:
                assert got == expected, (param, candidate)
            break
        else:
            raise AssertionError(f"no value accepted for {name}.{param}")


def test_a_value_read_back_can_be_set_again():
    reverb = stompbox.Reverb(room_size=1.0, width=0.3)
    assert reverb.width == 0.30000001192092896
    again = stompbox.Reverb(room_size=reverb.room_size, width=reverb.width)
    assert again.width == reverb.width
    chorus = stompbox.Chorus(mix=0.95)
    assert stompbox.Chorus(mix=chorus.mix).mix == chorus.mix


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.LadderFilter(mode=7),
        lambda m: m.LadderFilter(mode=1.5),
        lambda m: m.Resample(quality=99),
        lambda m: m.IIRFilter(),
    ],
)
def test_bad_constructions_raise_pedalboards_exception_type(pb, make):
    with pytest.raises(Exception) as theirs:
        make(pb)
    with pytest.raises(type(theirs.value)):
        make(stompbox)
