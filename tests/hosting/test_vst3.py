"""The ctypes VST3 host, against Debian's zam-plugins (skipped when they are not installed)."""

from __future__ import annotations

import copy
import ctypes
import glob
import os
import pickle

import numpy as np
import pytest

import _audio
import stompbox
from stompbox.hosting import AudioProcessorParameter, ExternalPlugin, find_plugins, load_plugin
from stompbox.hosting.vst3 import VST3Plugin
from stompbox.hosting.vst3 import state as vst3_state

VST3_DIR = "/usr/lib/vst3"
ZAM = sorted(glob.glob(f"{VST3_DIR}/Zam*.vst3") + glob.glob(f"{VST3_DIR}/ZaM*.vst3"))
needs_zam = pytest.mark.skipif(not os.path.isdir(f"{VST3_DIR}/ZamComp.vst3"), reason="zam-plugins not installed")
SR = 44100


def zam(name: str, **kwargs) -> VST3Plugin:
    return load_plugin(f"{VST3_DIR}/{name}.vst3", **kwargs)


@pytest.fixture(scope="module")
def mono():
    return _audio.music(2.0, channels=1)


# ---------------------------------------------------------------------------------------------------- loading
@needs_zam
@pytest.mark.parametrize("path", ZAM, ids=[os.path.basename(p) for p in ZAM])
def test_every_zam_plugin_loads_lists_parameters_and_processes(path):
    plugin = load_plugin(path)
    assert isinstance(plugin, ExternalPlugin) and isinstance(plugin, stompbox.Plugin)
    assert plugin.is_effect and not plugin.is_instrument
    params = plugin.parameters
    assert params and all(isinstance(p, AudioProcessorParameter) for p in params.values())
    channels = plugin._instance.audio_inputs[0].channels
    x = _audio.noise(0.5, channels=channels, amplitude=0.2)
    y = plugin(x, SR)
    assert y.shape == x.shape and y.dtype == np.float32
    assert np.all(np.isfinite(y)) and np.max(np.abs(y)) > 0


@needs_zam
def test_find_plugins_and_names():
    found = find_plugins()
    assert f"{VST3_DIR}/ZamComp.vst3" in found
    assert set(VST3Plugin.installed_plugins) <= set(found)
    assert VST3Plugin.get_plugin_names_for_file(f"{VST3_DIR}/ZamComp.vst3") == ["ZamComp"]


@needs_zam
def test_metadata():
    p = zam("ZamComp")
    assert p.name == "ZamComp"
    assert p.manufacturer_name == "Damien Zammit"
    assert p.category == "Fx|Dynamics|Mono"
    assert p.identifier.startswith("VST3-ZamComp-")


def test_missing_path_raises_import_error():
    with pytest.raises(ImportError):
        load_plugin("./")
    with pytest.raises(ImportError):
        load_plugin("/no/such/plugin.vst3")


def test_non_plugin_shared_object_raises_import_error(tmp_path):
    # a real shared library that is not a plugin: numpy's compiled core
    so = glob.glob(os.path.join(os.path.dirname(np.__file__), "_core", "_multiarray_umath*.so"))
    so += glob.glob(os.path.join(os.path.dirname(np.__file__), "core", "_multiarray_umath*.so"))
    with pytest.raises(ImportError, match="not a VST3 plugin"):
        load_plugin(so[0])
    fake = tmp_path / "Fake.vst3" / "Contents" / "x86_64-linux"
    fake.mkdir(parents=True)
    (fake / "Fake.so").write_bytes(b"this is not an ELF file")
    with pytest.raises(ImportError):
        load_plugin(tmp_path / "Fake.vst3")
    empty = tmp_path / "Empty.vst3"
    empty.mkdir()
    with pytest.raises(ImportError):
        load_plugin(empty)


@needs_zam
def test_unknown_plugin_name_is_a_value_error():
    with pytest.raises(ValueError, match="Nope"):
        zam("ZamComp", plugin_name="Nope")
    assert zam("ZamComp", plugin_name="ZamComp").name == "ZamComp"


@needs_zam
def test_channel_mismatch_is_a_value_error():
    p = zam("ZamComp")  # mono only
    with pytest.raises(ValueError, match="does not support 2-channel"):
        p(_audio.noise(0.1, channels=2), SR)
    y = p(_audio.noise(0.1, channels=1), SR)  # still usable afterwards
    assert np.all(np.isfinite(y))


# ----------------------------------------------------------------------------------------------------
# parameters
@needs_zam
def test_parameter_names_types_and_ranges():
    p = zam("ZamComp")
    params = p.parameters
    assert {"attack_ms", "release_ms", "threshold_db", "ratio", "makeup_db", "knee_db"} <= set(params)
    thr = params["threshold_db"]
    assert thr.type is float and thr.label == "dB"
    assert (thr.min_value, thr.max_value) == (-80.0, 0.0)
    assert params["current_program"].type is str
    assert "Zero" in params["current_program"].valid_values
    with pytest.raises(TypeError):
        params["ratio"] = 3


@needs_zam
def test_attribute_access_sets_through_the_plugin():
    p = zam("ZamComp")
    p.threshold_db = -20
    assert p.threshold_db == pytest.approx(-20.0, abs=0.05)
    assert p.threshold_db.range[:2] == (-80.0, 0.0)  # the value carries its parameter
    p.threshold_db = "-30 dB"
    assert p.threshold_db == pytest.approx(-30.0, abs=0.05)
    p.parameters["ratio"].raw_value = 0.5
    assert p.parameters["ratio"].raw_value == pytest.approx(0.5)
    assert p.ratio == pytest.approx(10.5, abs=0.05)  # 1 + 0.5 * (20 - 1)
    with pytest.raises(ValueError, match=r"out of range \[-80.0dB, 0.0dB\]"):
        p.threshold_db = 5
    with pytest.raises(ValueError, match="must be a number"):
        p.threshold_db = "loud"
    with pytest.raises(ValueError, match="not in list of valid values"):
        p.current_program = "Nonexistent"
    p.some_attribute = 3  # unknown names are ordinary attributes
    assert p.some_attribute == 3


@needs_zam
def test_parameter_values_in_the_constructor():
    p = zam("ZamComp", parameter_values={"threshold_db": -25, "ratio": 6})
    assert p.threshold_db == pytest.approx(-25, abs=0.05) and p.ratio == pytest.approx(6, abs=0.02)
    with pytest.raises(AttributeError, match="Valid options"):
        zam("ZamComp", parameter_values={"nope": 1})
    with pytest.raises(TypeError):
        zam("ZamComp", parameter_values="ZamComp")


@needs_zam
def test_parameter_changes_reach_the_audio(mono):
    p = zam("ZamComp")
    loud = p(mono, SR)
    p.threshold_db = -40
    p.ratio = 20
    quiet = p(mono, SR)
    assert _audio.rms(quiet) < 0.5 * _audio.rms(loud)


# ---------------------------------------------------------------------------------------------------- state
@needs_zam
def test_raw_state_round_trip_restores_parameters_and_output(mono):
    a = zam("ZamComp", parameter_values={"threshold_db": -30, "ratio": 8, "attack_ms": 2})
    blob = a.raw_state
    assert blob.startswith(b"VC2!")
    b = zam("ZamComp")
    b.raw_state = blob
    for name in ("threshold_db", "ratio", "attack_ms"):
        assert getattr(b, name) == pytest.approx(getattr(a, name))
    np.testing.assert_array_equal(b(mono, SR), a(mono, SR))
    with pytest.raises(ValueError):
        b.raw_state = b"garbage"


@needs_zam
def test_preset_data_and_load_preset(tmp_path, mono):
    a = zam("ZamDelay", parameter_values={"time_ms": 250, "feedback": 0.4})
    preset = a.preset_data
    assert preset.startswith(b"VST3") and len(preset[8:40]) == 32
    path = tmp_path / "delay.vstpreset"
    path.write_bytes(preset)
    b = zam("ZamDelay")
    assert b.load_preset(path)
    assert b.time_ms == pytest.approx(250, abs=0.5) and b.feedback == pytest.approx(0.4, abs=1e-3)
    np.testing.assert_array_equal(b(mono, SR), a(mono, SR))
    with pytest.raises(ValueError, match="different plugin"):
        zam("ZamComp").preset_data = preset


def test_state_container_encoding():
    assert vst3_state.encode_block(b"\x00") == "1..."  # size, ".", two 6-bit digits
    for data in (b"", b"\x01", b"abc", bytes(range(256)) * 3):
        assert vst3_state.decode_block(vst3_state.encode_block(data)) == data
    blob = vst3_state.pack_raw_state(b"component\x00bytes", b"ctl")
    assert blob[:4] == b"VC2!" and int.from_bytes(blob[4:8], "little") == len(blob) - 8 and blob[-1:] == b"\0"
    assert vst3_state.unpack_raw_state(blob) == (b"component\x00bytes", b"ctl")
    cid = bytes(range(16))
    assert vst3_state.unpack_preset(vst3_state.pack_preset(cid, b"comp", b"cont")) == (cid, b"comp", b"cont")


@needs_zam
def test_pickle_and_deepcopy_reload_the_plugin(mono):
    a = zam("ZamComp", parameter_values={"threshold_db": -24, "ratio": 5})
    expected = a(mono, SR)
    for clone in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert isinstance(clone, VST3Plugin) and clone is not a
        assert clone.threshold_db == pytest.approx(-24, abs=0.05)
        np.testing.assert_array_equal(clone(mono, SR), expected)


# ---------------------------------------------------------------------------------------------------- engine
@needs_zam
@pytest.mark.parametrize("name", ["ZamComp", "ZamEQ2", "ZamGate"])
def test_block_size_invariance(name, mono):
    p = zam(name)
    whole = p(mono, SR, buffer_size=8192)
    np.testing.assert_array_equal(p(mono, SR, buffer_size=512), whole)
    np.testing.assert_array_equal(p(mono, SR, buffer_size=1000), whole)
    np.testing.assert_array_equal(p(mono, SR, buffer_size=20000), whole)  # split into 8192-frame calls
    np.testing.assert_array_equal(_audio.process_in_blocks(p, mono, SR, 777), whole)


@needs_zam
def test_latency_is_reported_and_compensated():
    p = zam("ZaMaximX2")
    x = _audio.music(1.0, channels=2) * 0.1  # quiet: the limiter only delays
    y = p(x, SR)
    assert p.latency_samples == 480
    assert y.shape == x.shape
    assert _audio.diff_db(y, x) < -60  # aligned with the input, not 480 samples late
    # streaming withholds the latency, as pedalboard does
    p.reset()
    first = p(x[:, :1000], SR, reset=False)
    assert first.shape[1] == 1000 - 480


@needs_zam
def test_reset_gives_repeatable_output(mono):
    p = zam("ZamDelay", parameter_values={"feedback": 0.6})
    np.testing.assert_array_equal(p(mono, SR), p(mono, SR))


@needs_zam
def test_in_a_pedalboard(mono):
    board = stompbox.Pedalboard([stompbox.Gain(gain_db=-6), zam("ZamEQ2")])
    y = board(mono, SR)
    assert y.shape == mono.shape
    assert _audio.diff_db(y, mono * 10 ** (-6 / 20)) < -60  # ZamEQ2 at 0 dB gains is transparent


# ---------------------------------------------------------------------------------------------------- MIDI
@needs_zam
def test_effects_refuse_midi():
    with pytest.raises(ValueError, match="effect"):
        zam("ZamComp")([], 1.0, SR)


def test_midi_message_forms_and_timing():
    from stompbox.hosting.midi import read_midi_messages

    class Msg:  # the mido.Message protocol
        def __init__(self, data, time):
            self._data, self.time = data, time

        def bytes(self):
            return list(self._data)

    events = read_midi_messages(
        [Msg([0x90, 60, 100], 0.5), (bytes([0x80, 60, 0]), 0.75), ([0x90, 64, 90], 0.0), ([0x90, 1, 1], 9.0)],
        duration=1.0,
        sample_rate=48000,
    )
    assert events == [
        (0, bytes([0x90, 64, 90])),
        (24000, bytes([0x90, 60, 100])),
        (36000, bytes([0x80, 60, 0])),
    ]
    with pytest.raises(TypeError):
        read_midi_messages([object()], 1.0, SR)
    with pytest.raises(TypeError):
        read_midi_messages([("note", 0.0)], 1.0, SR)
    with pytest.raises(ValueError, match="timestamp"):
        read_midi_messages([([0x90, 60, 1], 0.0)] * 101, 1.0, SR)
    with pytest.raises(ValueError, match="reversing the order"):
        read_midi_messages([], 44100, 6.0)


def test_event_list_through_the_c_interface():
    """Events added by the host come back through the IEventList vtable with the VST3 layout."""
    from stompbox.hosting.vst3 import abi
    from stompbox.hosting.vst3.hostobjs import EventList
    from stompbox.hosting.vst3.plugin import add_midi_event

    events = EventList()
    try:
        add_midi_event(events, 17, bytes([0x91, 69, 127]))
        add_midi_event(events, 300, bytes([0x81, 69, 64]))
        add_midi_event(events, 301, bytes([0x90, 70, 0]))  # note-on with velocity 0 is a note-off
        add_midi_event(events, 5, bytes([0xF0, 1, 2, 0xF7]))
        vtable = ctypes.cast(events.ptr, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p))).contents
        count = abi.proto(ctypes.c_int32)(vtable[3])
        get = abi.proto(ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(abi.Event))(vtable[4])
        assert count(events.ptr) == 4
        got = []
        for i in range(4):
            ev = abi.Event()
            assert get(events.ptr, i, ctypes.byref(ev)) == abi.K_RESULT_OK
            got.append(ev)
        assert (got[0].type, got[0].sampleOffset, got[0].noteOn.channel, got[0].noteOn.pitch) == (
            0,
            17,
            1,
            69,
        )
        assert got[0].noteOn.velocity == pytest.approx(1.0)
        assert (got[1].type, got[1].sampleOffset, got[1].noteOff.pitch) == (1, 300, 69)
        assert got[1].noteOff.velocity == pytest.approx(64 / 127)
        assert (got[2].type, got[2].noteOff.pitch) == (1, 70)
        assert (got[3].type, got[3].data.size) == (2, 4)
        assert ctypes.string_at(got[3].data.bytes, 4) == bytes([0xF0, 1, 2, 0xF7])
        assert get(events.ptr, 4, ctypes.byref(abi.Event())) != abi.K_RESULT_OK
    finally:
        events.dispose()


def test_memory_stream_through_the_c_interface():
    from stompbox.hosting.vst3 import abi
    from stompbox.hosting.vst3.hostobjs import MemoryStream

    stream = MemoryStream(b"hello world")
    try:
        vtable = ctypes.cast(stream.ptr, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p))).contents
        read = abi.proto(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32))(vtable[3])
        write = abi.proto(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32))(vtable[4])
        seek = abi.proto(ctypes.c_int32, ctypes.c_int64, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64))(vtable[5])
        buf = ctypes.create_string_buffer(32)
        n = ctypes.c_int32()
        assert read(stream.ptr, buf, 5, ctypes.byref(n)) == 0 and n.value == 5 and buf.raw[:5] == b"hello"
        pos = ctypes.c_int64()
        assert seek(stream.ptr, -5, 2, ctypes.byref(pos)) == 0 and pos.value == 6
        assert write(stream.ptr, b"there!", 6, ctypes.byref(n)) == 0 and n.value == 6
        assert bytes(stream.data) == b"hello there!"
        assert seek(stream.ptr, -1, 0, None) != 0
    finally:
        stream.dispose()
