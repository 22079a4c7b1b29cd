"""stompbox's VST3 host against pedalboard 0.9.26 hosting the same Zam plugins (Debian zam-plugins).

Same plugin, same parameter values, same input: the outputs must agree within -60 dB (they are bit-identical
for most cases: both hosts hand the plugin the same samples). Parameter inference (type, range, step, valid
values) and set-by-value/raw/text read-backs must agree too.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import _audio
from stompbox.hosting import load_plugin

VST3_DIR = "/usr/lib/vst3"
pytestmark = pytest.mark.skipif(
    not os.path.isdir(f"{VST3_DIR}/ZamComp.vst3"),
    reason="zam-plugins not installed (apt-get install zam-plugins)",
)
SR = 44100

CASES = {
    "ZamComp": [{}, {"threshold_db": -30, "ratio": 8}, {"attack_ms": 1, "release_ms": 200, "makeup_db": 6}],
    "ZamDelay": [{}, {"time_ms": 300, "feedback": 0.5}, {"lpf_hz": 2000, "dry_wet": 1.0}],
    "ZamEQ2": [
        {},
        {"boost_cut_1_db": 6, "frequency_1_hz": 1000},
        {"boost_cut_l_db": -10, "master_gain_db": -3},
    ],
    "ZamGate": [{}, {"threshold_db": -30}, {"threshold_db": -20, "attack_ms": 5, "release_ms": 50}],
    "ZamTube": [{}, {"tube_drive": 5}, {"tube_drive": 8, "bass": 8, "treble": 2}],
    "ZamAutoSat": [{}],  # no parameters of its own (only the host-info buffer size and sample rate)
    "ZaMaximX2": [{}],  # 480 samples of latency, compensated by both hosts
}


@pytest.fixture(scope="module")
def signals():
    return {1: _audio.music(2.0, channels=1), 2: _audio.music(2.0, channels=2)}


@pytest.mark.parametrize(
    "name,settings",
    [(name, s) for name, cases in CASES.items() for s in cases],
    ids=[f"{name}-{i}" for name, cases in CASES.items() for i in range(len(cases))],
)
def test_output_matches_pedalboard(pb, signals, name, settings):
    path = f"{VST3_DIR}/{name}.vst3"
    ours = load_plugin(path, parameter_values=settings)
    ref = pb.load_plugin(path, parameter_values=settings)
    x = signals[2 if name.endswith("X2") else 1]
    y_ours, y_ref = ours(x, SR), ref(x, SR)
    assert y_ours.shape == y_ref.shape == x.shape
    assert np.max(np.abs(y_ref)) > 0.01
    diffs = [_audio.diff_db(y_ours, y_ref)]
    # ZamTube under pedalboard is not deterministic: measured, 2 of 30 fresh pedalboard instances in one process
    # gave output differing from sample 8 on (-57 to -70 dB from the others), while 30 stompbox instances were
    # identical to each other and to pedalboard's usual output. So a miss is re-checked against fresh pedalboard
    # instances, and stompbox's own output must be reproducible.
    for _ in range(3):
        if diffs[-1] < -60:
            break
        diffs.append(_audio.diff_db(y_ours, pb.load_plugin(path, parameter_values=settings)(x, SR)))
    assert min(diffs) < -60, diffs
    np.testing.assert_array_equal(load_plugin(path, parameter_values=settings)(x, SR), y_ours)


def _check_same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, abs=1e-6)
    return a == b


@pytest.mark.parametrize("name", ["ZamComp", "ZamEQ2"])
def test_parameter_inference_matches_pedalboard(pb, name):
    path = f"{VST3_DIR}/{name}.vst3"
    ours, ref = load_plugin(path), pb.load_plugin(path)
    assert list(ours.parameters) == list(ref.parameters)
    for key, theirs in ref.parameters.items():
        mine = ours.parameters[key]
        for attr in ("name", "type", "label", "min_value", "max_value", "step_size", "approximate_step_size"):
            assert _check_same(getattr(mine, attr), getattr(theirs, attr)), (key, attr)
        assert mine.valid_values == pytest.approx(theirs.valid_values) if mine.type is float else True
        assert mine.default_raw_value == pytest.approx(theirs.default_raw_value, abs=1e-6)


@pytest.mark.parametrize("name", ["ZamComp", "ZamEQ2"])
def test_setting_parameters_reads_back_like_pedalboard(pb, name):
    """Set every writable parameter by value (middle of its range), by raw value and by its text form."""
    path = f"{VST3_DIR}/{name}.vst3"
    ours, ref = load_plugin(path), pb.load_plugin(path)
    for key, theirs in ref.parameters.items():
        mine = ours.parameters[key]
        if key in ("buffer_size_frames", "sample_rate_frames", "gain_reduction_db", "output_level_db"):
            continue  # read-only (host-reported and meter) parameters
        if key == "current_program":
            continue  # JUCE maps the program-change parameter to its own program list; not a plain parameter
        if theirs.type is float:
            value = theirs.min_value + 0.37 * (theirs.max_value - theirs.min_value)
            setattr(ref, key, value)
            setattr(ours, key, value)
            assert float(getattr(ours, key)) == pytest.approx(float(getattr(ref, key)), abs=1e-6), key
            assert mine.raw_value == pytest.approx(theirs.raw_value, abs=1e-6), key
            text = f"{theirs.min_value + 0.8 * (theirs.max_value - theirs.min_value)}"
        else:
            text = theirs.valid_values[-1]
        setattr(ref, key, text)
        setattr(ours, key, text)
        assert str(getattr(ours, key)) == str(getattr(ref, key)), key
        ref.parameters[key].raw_value = 0.25
        mine.raw_value = 0.25
        assert mine.string_value == theirs.string_value, key
        assert mine.raw_value == pytest.approx(theirs.raw_value, abs=1e-6), key


def test_raw_state_is_interchangeable_with_pedalboard(pb, signals):
    path = f"{VST3_DIR}/ZamComp.vst3"
    x = signals[1]
    ours = load_plugin(path, parameter_values={"threshold_db": -27, "ratio": 7})
    ref = pb.load_plugin(path)
    ref.raw_state = ours.raw_state  # pedalboard reads our container
    assert float(ref.threshold_db) == pytest.approx(-27, abs=0.05)
    np.testing.assert_array_equal(ours(x, SR), ref(x, SR))
    ref.attack_ms = 4
    ref(x[:, :64], SR)  # pedalboard's state reflects parameter changes only after audio has been processed
    fresh = load_plugin(path)
    fresh.preset_data = ref.preset_data  # and we read pedalboard's .vstpreset
    assert float(fresh.attack_ms) == pytest.approx(4, abs=0.01)
    fresh.raw_state = ref.raw_state
    assert float(fresh.attack_ms) == pytest.approx(4, abs=0.01)


@pytest.mark.parametrize("name", ["ZamComp", "ZamEQ2"])
def test_parameter_metadata_reads_as_pedalboards(pb, name):
    """What a parameter-dump script prints: the same flags, step counts, texts and float32 raw values, and the
    same plugin identifier."""
    path = f"{VST3_DIR}/{name}.vst3"
    ours, ref = load_plugin(path), pb.load_plugin(path)
    assert ours.identifier == ref.identifier
    host_state = ("buffer_size_frames", "gain_reduction_db", "output_level_db")  # set by each host as it runs
    for key, theirs in ref.parameters.items():
        mine = ours.parameters[key]
        flags = ("is_discrete", "num_steps", "is_boolean", "is_orientation_inverted", "is_meta_parameter")
        for attr in (*flags, "is_automatable", "index"):
            assert getattr(mine, attr) == getattr(theirs, attr), (key, attr)
        if key not in host_state:
            assert type(mine.raw_value) is float
            assert mine.raw_value == theirs.raw_value, key  # float32 values, compared exactly
            assert mine.string_value == theirs.string_value, key


def test_continuous_and_stepped_parameters():
    eq = load_plugin(f"{VST3_DIR}/ZamEQ2.vst3")
    gain = eq.parameters["boost_cut_1_db"]
    assert (gain.num_steps, gain.is_discrete, gain.is_boolean) == (2**31 - 1, True, False)
    assert gain.raw_value == float(np.float32(50 / 70))  # 0 dB in [-50, 20], as float32
    assert gain.string_value == "0.000001"  # the plugin's text for that float32 value
    program = eq.parameters["current_program"]
    assert program.num_steps == len(program.valid_values)  # states, not steps between them
