"""The loudness, plugins, play and record commands (the live ones only for their argument handling; the
streaming functions behind them are tested against a real audio server in tests/live/)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stompbox.cli.main import main
from stompbox.io import AudioFile


def test_loudness_of_a_file(tmp_path, capsys):
    path = tmp_path / "tone.wav"
    t = np.arange(48000 * 3) / 48000
    # EBU Tech 3341 case 1: a 1 kHz stereo sine at -23 dBFS reads -23 LUFS
    tone = 10 ** (-23 / 20) * np.sin(2 * np.pi * 1000 * t)
    with AudioFile(path, "w", 48000, 2, bit_depth=32) as out:
        out.write(np.stack([tone, tone]).astype(np.float32))
    assert main(["loudness", str(path), "--json", str(path)]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["path"] for r in records] == [str(path)] * 2  # one record per file given, in order, as info's
    assert records[0]["integrated_lufs"] == pytest.approx(-23.0, abs=0.1)
    assert records[0]["samplerate"] == 48000 and records[0]["frames"] == 48000 * 3


def test_loudness_of_a_missing_file_fails_cleanly(tmp_path, capsys):
    assert main(["loudness", str(tmp_path / "nope.wav")]) == 1
    assert "nope.wav" in capsys.readouterr().err


def test_plugins_lists_paths(capsys):
    assert main(["plugins", "--json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), list)


def test_record_needs_positive_seconds(tmp_path, capsys):
    assert main(["record", str(tmp_path / "r.wav"), "--seconds", "0"]) == 2
    assert "--seconds" in capsys.readouterr().err


def test_play_rejects_unknown_effects_before_touching_a_device(tmp_path, capsys):
    assert main(["play", str(tmp_path / "x.wav"), "wobbler"]) == 2
    assert "wobbler" in capsys.readouterr().err
