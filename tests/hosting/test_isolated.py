"""Crash-isolated plugins: a deliberately crashing LADSPA plugin (tests/hosting/crashy/crashy.c, compiled by a
fixture; skipped without a C compiler) and ZamComp / synthv1 run in a child process."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import _audio
from stompbox import Pedalboard
from stompbox.hosting import IsolatedPlugin, PluginCrashedError, PluginTimeoutError, load_plugin

SR = 44100
SOURCE = os.path.join(os.path.dirname(__file__), "crashy", "crashy.c")
ZAMCOMP = "urn:zamaudio:ZamComp"
needs_zam = pytest.mark.skipif(not os.path.isdir("/usr/lib/lv2/ZamComp.lv2"), reason="zam-plugins not installed")


@pytest.fixture(scope="module")
def crashy(tmp_path_factory) -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the crashing test plugin")
    out = str(tmp_path_factory.mktemp("crashy") / "crashy.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", out, SOURCE], check=True, capture_output=True)
    return out


def test_isolated_plugin_has_the_plugin_api(crashy):
    p = load_plugin(crashy, isolated=True)
    try:
        assert isinstance(p, IsolatedPlugin) and p.is_alive and p.plugin_class == "LADSPAPlugin"
        assert p.name == "Crashy test plugin" and p.is_effect and not p.is_instrument
        assert list(p.parameters) == ["mode", "gain"]
        assert p.mode == 0.0 and p.gain == 1.0
        p.gain = 0.25
        assert p.gain == 0.25 and p.parameters["gain"].raw_value == pytest.approx(0.125)
        with pytest.raises(ValueError, match="out of range"):
            p.gain = 5
        x = _audio.noise(0.3, channels=2)
        assert np.allclose(p(x, SR), 0.25 * x)
        assert np.allclose(p(x.T, SR), 0.25 * x.T)  # layouts work as in-process
        assert np.allclose(p(x[0], SR, buffer_size=100), 0.25 * x[0])
        assert np.allclose(Pedalboard([p])(x, SR, buffer_size=1000), 0.25 * x)  # per-block path
    finally:
        p.close()
    assert not p.is_alive


@pytest.mark.parametrize("mode,signal_name", [(1, "SIGSEGV"), (2, "SIGABRT"), (4, "exit status 3")])
def test_crash_raises_and_a_fresh_instance_works(crashy, mode, signal_name):
    p = load_plugin(crashy, isolated=True, parameter_values={"gain": 0.5})
    x = _audio.noise(0.1, channels=1)
    assert np.allclose(p(x, SR), 0.5 * x)
    p.mode = mode
    with pytest.raises(PluginCrashedError, match=signal_name) as info:
        p(x, SR)
    assert not isinstance(info.value, PluginTimeoutError)
    assert not p.is_alive
    with pytest.raises(PluginCrashedError):  # the dead instance keeps saying so
        p(x, SR)
    with pytest.raises(PluginCrashedError):
        _ = p.gain
    fresh = load_plugin(crashy, isolated=True, parameter_values={"gain": 0.5})
    assert np.allclose(fresh(x, SR), 0.5 * x)
    fresh.close()
    # restart() brings the same object back, with the parameters it had (so set mode back first)
    p.restart()
    assert p.mode == mode
    p.mode = 0
    assert np.allclose(p(x, SR), 0.5 * x)
    p.close()


def test_crash_inside_a_board_raises(crashy):
    p = load_plugin(crashy, isolated=True)
    board = Pedalboard([p])
    x = _audio.noise(0.1, channels=2)
    assert np.allclose(board(x, SR), x)
    p.mode = 1
    with pytest.raises(PluginCrashedError, match="SIGSEGV"):
        board(x, SR)
    p.close()


def test_hang_times_out_and_kills_the_child(crashy):
    p = load_plugin(crashy, isolated=True, timeout=1.0)
    p.mode = 3
    pid = p.pid
    with pytest.raises(PluginTimeoutError, match="did not answer") as info:
        p(_audio.noise(0.1, channels=1), SR)
    assert isinstance(info.value, PluginCrashedError) and isinstance(info.value, TimeoutError)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    p.close()


def test_load_errors_are_raised_in_the_parent(crashy):
    with pytest.raises(ImportError):
        load_plugin("/no/such/plugin.vst3", isolated=True)
    with pytest.raises(ValueError, match="does not contain"):
        load_plugin(crashy, plugin_name="nope", isolated=True)


@needs_zam
def test_isolated_zamcomp_equals_in_process():
    settings = {"threshold_db": -30.0, "ratio": 4.0}
    plain = load_plugin(ZAMCOMP, parameter_values=settings)
    iso = load_plugin(ZAMCOMP, parameter_values=settings, isolated=True)
    try:
        assert iso.threshold_db == -30.0 and iso.parameters["threshold_db"].range == (-80.0, 0.0, None)
        assert iso.presets == plain.presets
        x = _audio.music(1.0, channels=2)
        assert np.array_equal(iso(x, SR), plain(x, SR))
        assert np.array_equal(Pedalboard([iso])(x, SR, buffer_size=2048), plain(x, SR, buffer_size=2048))
        state = iso.raw_state
        iso.threshold_db = -10.0
        iso.raw_state = state
        assert iso.threshold_db == -30.0
        assert "gr" in iso.control_outputs
    finally:
        iso.close()


def test_isolated_instrument_renders_like_in_process():
    if not os.path.isdir("/usr/lib/lv2/synthv1.lv2"):
        pytest.skip("synthv1-lv2 not installed")
    msgs = [([0x90, 69, 100], 0.05), ([0x80, 69, 0], 0.3)]
    plain = load_plugin("/usr/lib/lv2/synthv1.lv2")
    iso = load_plugin("/usr/lib/lv2/synthv1.lv2", isolated=True)
    try:
        assert iso.is_instrument
        for p in (plain, iso):
            p([([0x90, 60, 100], 0.0)], 0.2, SR)  # warm up parameter smoothing
        a, b = plain(msgs, 0.5, SR), iso(msgs, 0.5, SR)
        assert a.shape == b.shape == (2, SR // 2)
        assert np.allclose(a, b, atol=1e-6) and np.any(b)
    finally:
        iso.close()
