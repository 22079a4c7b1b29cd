"""Hosted plugins in chain files: saved by identity (path or URI, plugin name) and complete state (raw_state,
base64), loaded back as the same plugin in the same state, so the chain sounds exactly the same."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import stompbox
from stompbox.chains import ChainFormatError, from_dict

TARGETS = {
    "vst3": "/usr/lib/vst3/ZamCompX2.vst3",
    "lv2 bundle": "/usr/lib/lv2/ZamCompX2.lv2",
    "lv2 uri": "urn:zamaudio:ZamCompX2",
    "ladspa": "/usr/lib/ladspa/ZamCompX2-ladspa.so",
}


def _load(target: str, **kwargs):
    try:
        return stompbox.load_plugin(target, **kwargs)
    except (ImportError, FileNotFoundError, ValueError, OSError) as error:
        pytest.skip(f"{target} is not available here: {error}")


def _set_threshold(plugin, value: float) -> None:
    name = "threshold_db" if "threshold_db" in plugin.parameters else "threshold"
    setattr(plugin, name, value)


@pytest.mark.parametrize("kind", list(TARGETS))
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_board_with_a_hosted_plugin_round_trips_through_a_chain_file(kind, suffix, tmp_path):
    plugin = _load(TARGETS[kind])
    _set_threshold(plugin, -25.0)  # not the default: the state must travel
    board = stompbox.Pedalboard([stompbox.Gain(gain_db=3), plugin])
    x = (0.5 * np.random.default_rng(0).standard_normal((2, 44100))).astype(np.float32)
    path = tmp_path / f"chain{suffix}"
    board.save(path)
    again = stompbox.load_chain(path)
    assert type(again[1]) is type(plugin)
    assert again[1].parameters.keys() == plugin.parameters.keys()
    assert np.array_equal(again(x, 44100), board(x, 44100))
    fresh = _load(TARGETS[kind])  # and the saved state is not just the default
    assert not np.array_equal(stompbox.Pedalboard([stompbox.Gain(gain_db=3), fresh])(x, 44100), board(x, 44100))


def test_the_description_names_the_plugin_and_its_state():
    plugin = _load(TARGETS["vst3"])
    data = plugin.to_dict()
    assert data["type"] == "ExternalPlugin" and data["path"] == TARGETS["vst3"]
    json.dumps(data)  # JSON-ready
    assert from_dict(data).raw_state == plugin.raw_state


def test_an_isolated_plugin_is_saved_as_isolated():
    plugin = _load(TARGETS["vst3"], isolated=True)
    try:
        plugin.threshold_db = -25.0
        data = plugin.to_dict()
        assert data["isolated"] is True
        again = from_dict(data)
        try:
            assert type(again).__name__ == "IsolatedPlugin" and again.threshold_db == -25.0
        finally:
            again.close()
    finally:
        plugin.close()


def test_bad_descriptions_raise_chain_format_errors(tmp_path):
    if not os.path.exists(TARGETS["vst3"]):
        pytest.skip("ZamCompX2.vst3 is not installed")
    with pytest.raises(ChainFormatError, match="ExternalPlugin"):
        from_dict({"type": "ExternalPlugin", "path": TARGETS["vst3"], "raw_state": "not base64!"})
    with pytest.raises(ChainFormatError, match="path"):
        from_dict({"type": "ExternalPlugin", "path": 3})
    with pytest.raises(ImportError, match="missing.vst3"):  # as load_plugin reports it
        from_dict({"type": "ExternalPlugin", "path": str(tmp_path / "missing.vst3")})


def test_a_plugin_inside_the_chain_folder_is_saved_relative_to_it(tmp_path, monkeypatch):
    """A project folder with its plugin (here a copy of a LADSPA library) and its chain can be moved: the
    plugin is named relative to the chain file and found from any current folder. A LADSPA library given by
    bare name (found on LADSPA_PATH) stays a bare name."""
    import shutil

    source = TARGETS["ladspa"]
    if not os.path.isfile(source):
        pytest.skip(f"{source} is not installed")
    project = tmp_path / "project"
    (project / "plugins").mkdir(parents=True)
    shutil.copy(source, project / "plugins" / "comp.so")
    monkeypatch.chdir(project)
    plugin = _load("plugins/comp.so")
    _set_threshold(plugin, -25.0)
    plugin.save(project / "chain.json")
    assert json.loads((project / "chain.json").read_text())["chain"]["path"] == "plugins/comp.so"
    x = (0.5 * np.random.default_rng(1).standard_normal((2, 22050))).astype(np.float32)
    expected = plugin(x, 44100)
    moved = tmp_path / "moved"
    project.rename(moved)
    monkeypatch.chdir(tmp_path)
    assert np.array_equal(stompbox.load_chain(moved / "chain.json")(x, 44100), expected)
    # a bare LADSPA library name is looked up on the LADSPA path, as load_plugin does
    bare = {**plugin.to_dict(), "path": os.path.basename(source)}
    monkeypatch.setenv("LADSPA_PATH", os.path.dirname(source))
    assert np.array_equal(from_dict(bare)(x, 44100), expected)
