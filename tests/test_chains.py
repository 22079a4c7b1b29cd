"""Chains as data: to_dict/from_dict, JSON and YAML files, round trips and bad files."""

from __future__ import annotations

import json

import numpy as np
import pytest

import stompbox
from _audio import SR, music
from stompbox import Bitcrush, Chain, Distortion, Gain, Invert, Mix, Pedalboard
from stompbox.chains import ChainFormatError, dumps, from_dict, loads


def board() -> Pedalboard:
    return Pedalboard(
        [Gain(-3.25), None, Mix([Chain([Distortion(drive_db=12.5), Bitcrush(6)]), Invert()]), Gain(0.1 + 0.2)]
    )


def test_dict_form():
    data = board().to_dict()
    assert data["type"] == "Pedalboard"
    assert data["plugins"][0] == {"type": "Gain", "params": {"gain_db": -3.25}}
    assert data["plugins"][1] is None
    assert data["plugins"][2]["type"] == "Mix"
    json.dumps(data)  # JSON-ready


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_file_round_trip_is_exact(tmp_path, suffix):
    original = board()
    path = tmp_path / f"chain{suffix}"
    original.save(path)
    loaded = stompbox.load_chain(path)
    assert isinstance(loaded, Pedalboard)
    assert loaded.to_dict() == original.to_dict()
    # floats survive bit for bit (stored as float32, as pedalboard stores parameters)
    assert loaded[-1].gain_db == original[-1].gain_db == float(np.float32(0.1 + 0.2))
    x = music(0.3)
    np.testing.assert_array_equal(loaded(x, SR), original(x, SR))
    assert not list(tmp_path.glob(".*tmp*"))


def test_from_dict_classmethod_and_bare_lists():
    assert isinstance(Pedalboard.from_dict(board().to_dict()), Pedalboard)
    loaded = from_dict([{"type": "Gain", "params": {"gain_db": 2}}, {"type": "Invert"}])
    assert isinstance(loaded, Pedalboard) and len(loaded) == 2 and loaded[0].gain_db == 2
    with pytest.raises(TypeError):
        Gain.from_dict({"type": "Invert"})


def test_defaults_fill_missing_params():
    assert loads('{"type": "Distortion"}').drive_db == 25.0


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"type": "Fuzzbox"}', "Unknown plugin type 'Fuzzbox'"),
        ('{"type": "Gain", "params": {"gain": 1}}', "gain"),
        ('{"type": "Bitcrush", "params": {"bit_depth": 99}}', "Bit depth"),
        ('{"type": "Gain", "params": {"gain_db": "loud"}}', "number"),
        ('{"stompbox_chain": 99, "chain": {"type": "Gain"}}', "version 99"),
        ('{"params": {}}', "'type'"),
        ("[1, 2", "JSON or YAML"),
        ("null", "no plugin"),
    ],
)
def test_bad_chain_files_are_clear_errors(text, match):
    with pytest.raises(ChainFormatError, match=match):
        loads(text)


def test_yaml_written_by_hand(tmp_path):
    path = tmp_path / "hand.yaml"
    path.write_text("- type: Gain\n  params: {gain_db: 6}\n- type: Clipping\n  params:\n    threshold_db: -1\n")
    loaded = stompbox.load_chain(path)
    assert [type(p).__name__ for p in loaded] == ["Gain", "Clipping"]


def test_bytes_path_is_a_type_error():
    with pytest.raises(TypeError):
        stompbox.load_chain(b"chain.json")


def test_dumps_rejects_unknown_format():
    with pytest.raises(ValueError):
        dumps(Gain(), "toml")
