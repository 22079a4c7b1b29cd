"""The VST3 instrument path, against our own instrument (tests/hosting/synth/synth.c, built by the
``vst3_synth`` fixture; skipped without a C compiler).

What the synth promises (see its source): a note's first sample, at the note-on's sampleOffset, is its full
level ``gain * velocity / 127`` (cosine or falling saw starting at +1); a note-off silences it from its own
offset; pitch is ``440 * 2 ** ((n - 69) / 12)`` Hz. What the host promises (stompbox.hosting.midi): a message
at ``t`` seconds lands on sample ``int(float32(t) * float32(sample_rate))`` of the rendered buffer, which is
what pedalboard 0.9.26 does (measured on 89 random and edge times; ``round(t * sample_rate)`` disagreed with it
on 26 of them), and ``duration`` seconds render that many samples by the same rule.
"""

from __future__ import annotations

import copy
import pickle

import mido
import numpy as np
import pytest

from stompbox.hosting import load_plugin
from stompbox.hosting.midi import sample_index
from stompbox.hosting.vst3 import VST3Plugin, abi
from stompbox.hosting.vst3 import state as vst3_state
from stompbox.hosting.vst3.plugin import midi_controller


def onset(seconds: float, sample_rate: float) -> int:
    """The sample a time falls on (pedalboard's rule: the float32 product, truncated)."""
    return int(np.float32(seconds) * np.float32(sample_rate))


def note_hz(note: int) -> float:
    return 440.0 * 2.0 ** ((note - 69) / 12)


def measured_hz(x: np.ndarray, sample_rate: float) -> float:
    """Frequency from the upward zero crossings of a periodic signal, each placed by linear interpolation."""
    i = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    crossings = i + x[i] / (x[i] - x[i + 1])
    return (len(crossings) - 1) / (crossings[-1] - crossings[0]) * sample_rate


@pytest.fixture
def synth(vst3_synth) -> VST3Plugin:
    return load_plugin(vst3_synth)


def test_loads_as_an_instrument(synth, vst3_synth):
    assert isinstance(synth, VST3Plugin)
    assert synth.is_instrument and not synth.is_effect
    assert synth.name == "StompboxTestSynth" and synth.category == "Instrument|Synth"
    assert synth.manufacturer_name == "stompbox tests"
    assert VST3Plugin.get_plugin_names_for_file(vst3_synth) == ["StompboxTestSynth"]
    assert list(synth.parameters) == ["gain", "waveform"]
    gain, wave = synth.parameters["gain"], synth.parameters["waveform"]
    assert gain.type is float and gain.range == (0.0, 1.0, 0.01) and gain.raw_value == 0.5
    assert wave.type is str and wave.valid_values == ["Sine", "Saw"] and synth.waveform == "Sine"
    with pytest.raises(ValueError, match="instrument"):
        synth(np.zeros((2, 100), np.float32), 44100)


@pytest.mark.parametrize("sample_rate", [44100, 48000])
@pytest.mark.parametrize("buffer_size", [8192, 256])
def test_notes_start_and_stop_on_the_samples_their_timestamps_give(synth, sample_rate, buffer_size):
    notes = [  # (note, velocity, on seconds, off seconds): times between samples, on block edges, at 0
        (69, 127, 0.0, 0.05),
        (60, 100, 0.1234567, 0.2000113),
        (72, 64, 256 * 60 / sample_rate, 0.38),  # on a block boundary of the small buffer size
        (64, 90, 0.4, 0.4 + 2.5 / sample_rate),  # two samples long (0.4 s is on a sample)
        (67, 30, 0.5000049, 0.53),  # 0.53 s at 48 kHz is sample 25439 by the float32 rule (25440 rounded)
        (71, 80, 0.57, 0.7),  # 0.57 * 44100 = 25136.999999999996 in double, 25137 in float32
    ]
    messages = []
    for note, velocity, on, off in notes:
        messages.append(mido.Message("note_on", note=note, velocity=velocity, time=on))
        messages.append((bytes([0x80, note, 0]), off))
    y = synth(messages, 0.75, sample_rate, buffer_size=buffer_size)
    assert y.shape == (2, onset(0.75, sample_rate)) and y.dtype == np.float32
    assert np.array_equal(y[0], y[1])
    x = y[0]
    expected = np.zeros(len(x), bool)
    for note, velocity, on, off in notes:
        start, stop = onset(on, sample_rate), onset(off, sample_rate)
        assert x[start] == np.float32(0.5 * velocity / 127), (note, start)  # first sample: full level
        assert start == 0 or x[start - 1] == 0.0
        assert x[stop - 1] != 0.0 and x[stop] == 0.0
        expected[start:stop] = True
    assert np.all(x[~expected] == 0.0)
    assert np.count_nonzero(x[expected]) >= expected.sum() - 2  # a cosine can land on an exact zero, rarely


def test_times_become_samples_as_in_pedalboard():
    # values measured with pedalboard 0.9.26 hosting this synth (onset sample, and the rendered length)
    assert sample_index(0.53, 48000) == 25439  # float32(0.53) * 48000 = 25439.998
    assert sample_index(0.7, 44100) == 30870  # the double product is 30869.999999999996
    assert sample_index(0.1 + 0.6 / 44100, 44100) == 4410
    assert sample_index(0.0, 44100) == 0 and sample_index(1 / 3, 48000) == 16000


@pytest.mark.parametrize("note", [33, 45, 57, 60, 69, 76, 93, 105])
def test_pitch_matches_the_note_number(synth, note):
    sample_rate = 48000
    y = synth([mido.Message("note_on", note=note, velocity=100, time=0.01)], 1.0, sample_rate)
    hz = measured_hz(y[0, onset(0.01, sample_rate) :], sample_rate)
    assert hz == pytest.approx(note_hz(note), rel=0.005)
    assert hz == pytest.approx(note_hz(note), rel=1e-5)  # what the synth actually gives


def test_chord_and_fft_peaks(synth):
    sample_rate = 44100
    chord = [60, 64, 67]
    y = synth([([0x90, n, 100], 0.0) for n in chord], 1.0, sample_rate)[0]
    spectrum = np.abs(np.fft.rfft(y * np.hanning(len(y))))
    freqs = np.fft.rfftfreq(len(y), 1 / sample_rate)
    peaks = [freqs[i] for i in np.argsort(spectrum)[::-1] if spectrum[i] > spectrum.max() / 2]
    for n in chord:
        assert min(abs(p - note_hz(n)) for p in peaks) < 1.0  # 1 Hz bins


def test_parameter_changes_reach_the_sound(synth):
    sample_rate = 44100
    on = [([0x90, 69, 127], 0.0)]
    assert synth(on, 0.1, sample_rate)[0, 0] == np.float32(0.5)
    synth.gain = 0.25
    assert synth.gain == 0.25 and synth.parameters["gain"].raw_value == pytest.approx(0.25)
    y = synth(on, 1.0, sample_rate)[0]
    assert y[0] == np.float32(0.25) and np.max(np.abs(y)) == pytest.approx(0.25, abs=1e-6)
    # the waveform: a sine has no second harmonic, a (naive) saw has one at half the fundamental
    spectrum = np.abs(np.fft.rfft(y * np.hanning(len(y))))
    assert spectrum[880] / spectrum[440] < 1e-3
    synth.waveform = "Saw"
    y = synth(on, 1.0, sample_rate)[0]
    spectrum = np.abs(np.fft.rfft(y * np.hanning(len(y))))
    assert spectrum[880] / spectrum[440] == pytest.approx(0.5, rel=0.02)
    assert y[0] == np.float32(0.25)
    synth.parameters["gain"].raw_value = 1.0
    assert synth(on, 0.1, sample_rate)[0, 0] == np.float32(1.0)
    with pytest.raises(ValueError, match="out of range"):
        synth.gain = 1.5
    with pytest.raises(ValueError, match="valid values"):
        synth.waveform = "Square"


def test_streaming_with_reset_false_equals_one_call(synth):
    sample_rate = 44100
    whole = synth([([0x90, 57, 100], 0.1), ([0x80, 57, 0], 0.73), ([0x90, 62, 90], 0.6)], 1.0, sample_rate)
    a = synth([([0x90, 57, 100], 0.1)], 0.5, sample_rate)
    b = synth([([0x80, 57, 0], 0.23), ([0x90, 62, 90], 0.1)], 0.5, sample_rate, reset=False)
    assert np.array_equal(np.concatenate([a, b], axis=1), whole)
    # reset=True (the default) starts from silence: no note carries over
    assert not np.any(synth([], 0.2, sample_rate))


def test_channel_counts(synth):
    mono = synth([([0x90, 69, 100], 0.0)], 0.1, 44100, num_channels=1)
    assert mono.shape == (1, 4410) and mono[0, 0] == np.float32(0.5 * 100 / 127)
    with pytest.raises(ValueError, match="3-channel"):
        synth([([0x90, 69, 100], 0.0)], 0.1, 44100, num_channels=3)


def test_raw_state_round_trip(synth, vst3_synth):
    synth.gain = 0.3
    synth.waveform = "Saw"
    data = synth.raw_state
    component, controller = vst3_state.unpack_raw_state(data)
    assert component[:4] == b"SBSY" and len(component) == 24
    fresh = load_plugin(vst3_synth)
    assert fresh.gain == 0.5 and fresh.waveform == "Sine"
    fresh.raw_state = data
    assert fresh.gain == 0.3 and fresh.waveform == "Saw"
    messages = [([0x90, 50, 100], 0.01), ([0x90, 62, 70], 0.2)]
    assert np.array_equal(fresh(messages, 0.5, 48000), synth(messages, 0.5, 48000))
    # and through a preset
    other = load_plugin(vst3_synth)
    other.preset_data = synth.preset_data
    assert other.gain == 0.3 and np.array_equal(other(messages, 0.5, 48000), synth(messages, 0.5, 48000))
    with pytest.raises(ValueError, match="rejected"):
        fresh.raw_state = vst3_state.pack_raw_state(b"not a synth state", b"")
    assert fresh.gain == 0.3  # a rejected state leaves the plugin as it was


def test_pickle_and_deepcopy(synth):
    synth.gain = 0.7
    synth.waveform = "Saw"
    messages = [([0x90, 64, 100], 0.0), ([0x80, 64, 0], 0.2)]
    reference = synth(messages, 0.3, 44100)
    for clone in (pickle.loads(pickle.dumps(synth)), copy.deepcopy(synth)):
        assert clone is not synth and isinstance(clone, VST3Plugin) and clone.is_instrument
        assert clone.gain == 0.7 and clone.waveform == "Saw"
        assert np.array_equal(clone(messages, 0.3, 44100), reference)
        clone.gain = 0.1  # independent instances
        assert synth.gain == 0.7


def test_message_forms_and_bad_input(synth):
    sample_rate = 44100
    forms = [
        [mido.Message("note_on", note=69, velocity=100, time=0.1)],
        [(bytes([0x90, 69, 100]), 0.1)],
        [([0x90, 69, 100], 0.1)],
    ]
    outputs = [synth(m, 0.3, sample_rate) for m in forms]
    assert all(np.array_equal(o, outputs[0]) for o in outputs)
    assert outputs[0][0, 4410] == np.float32(0.5 * 100 / 127) and not np.any(outputs[0][:, :4410])
    # a note-on with velocity 0 is a note-off; messages past the duration are dropped
    y = synth([([0x90, 69, 100], 0.0), ([0x90, 69, 0], 0.1), ([0x90, 70, 100], 5.0)], 0.3, sample_rate)
    assert np.all(y[:, 4410:] == 0.0) and y[0, 4409] != 0.0
    with pytest.raises(TypeError):
        synth(["note"], 0.3, sample_rate)
    with pytest.raises(ValueError, match="reversing"):
        synth([], sample_rate, 0.3)


def test_midi_controller_messages():
    assert midi_controller(bytes([0xB3, 7, 127])) == (3, 7, 1.0)
    assert midi_controller(bytes([0xD0, 64])) == (0, abi.K_CTRL_AFTER_TOUCH, 64 / 127)
    assert midi_controller(bytes([0xE1, 0x7F, 0x7F])) == (1, abi.K_CTRL_PITCH_BEND, 1.0)
    assert midi_controller(bytes([0xE0, 0x00, 0x40])) == (0, abi.K_CTRL_PITCH_BEND, 8192 / 16383)
    assert midi_controller(bytes([0xC2, 5])) == (2, abi.K_CTRL_PROGRAM_CHANGE, 5 / 127)
    for other in ([0x90, 60, 100], [0x80, 60, 0], [0xA0, 60, 10], [0xF0, 1, 0xF7], [0xB0, 7]):
        assert midi_controller(bytes(other)) is None


@pytest.mark.parametrize("buffer_size", [8192, 256])
def test_mapped_controllers_change_parameters_on_their_sample(synth, buffer_size):
    """The synth maps CC 7 to its gain (IMidiMapping): the change applies from the CC's own sample, in any
    block. Unmapped controllers, pitch bend, pressure and program changes change nothing."""
    sample_rate = 44100
    notes = [([0x90, 69, 127], 0.0), ([0x90, 76, 100], 0.05)]
    plain = synth(notes, 0.3, sample_rate, buffer_size=buffer_size)[0]
    t = 0.1234567
    at = sample_index(t, sample_rate)
    others = [([0xB0, 1, 90], 0.02), ([0xE0, 0, 100], 0.03), ([0xD0, 50], 0.04), ([0xC0, 3], 0.06)]
    assert np.array_equal(synth(notes + others, 0.3, sample_rate, buffer_size=buffer_size)[0], plain)
    assert synth.gain == 0.5
    y = synth([*notes, ([0xB0, 7, 32], t)], 0.3, sample_rate, buffer_size=buffer_size)[0]
    assert np.array_equal(y[:at], plain[:at])
    np.testing.assert_allclose(y[at:], plain[at:] * (32 / 127) / 0.5, rtol=1e-6, atol=1e-9)
    # the host and the controller know the new value
    assert synth.parameters["gain"].raw_value == pytest.approx(32 / 127) and synth.gain == 0.25
    assert synth._instance.controller.getParamNormalized(0) == pytest.approx(32 / 127)
