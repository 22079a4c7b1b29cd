"""Type checkers read stompbox as pedalboard's stubs read: the public names resolve, AudioFile(...) gives a reader
or a writer, and a wrong argument (bytes, a text-mode file) is a type error. Skipped without mypy or pyright."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")
CHECKERS = [c for c in ("mypy", "pyright") if importlib.util.find_spec(c) is not None]

PASSES = """
from stompbox import Chorus, Compressor, LadderFilter, Pedalboard, Reverb, load_plugin
from stompbox.io import AudioFile, ReadableAudioFile, StreamResampler, WriteableAudioFile

board = Pedalboard([Compressor(threshold_db=-50, ratio=25), Chorus(), Reverb(room_size=0.25)])
board.append(LadderFilter(mode=LadderFilter.Mode.HPF12, cutoff_hz=900))
with AudioFile("in.wav").resampled_to(44100.0) as f:
    audio = f.read(f.frames)
with open("in.wav", "rb") as raw:
    with AudioFile(raw) as r:
        r.read(r.frames)
reader: ReadableAudioFile = AudioFile("in.wav")
writer: WriteableAudioFile = AudioFile("out.wav", "w", 44100.0, 2)
effected = board(audio, 44100.0)
plugin = load_plugin
"""
FAILS = {
    "bytes": 'from stompbox.io import AudioFile\nAudioFile(b"not a path")\n',
    "text file": 'from stompbox.io import AudioFile\nwith open("x", "r") as f:\n    AudioFile(f)\n',
    "no such module": "from stompbox.pedalboard import load_plugin  # noqa\n",
}


def check(checker: str, tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    source = tmp_path / "snippet.py"
    source.write_text(text)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", checker, str(source)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


@pytest.mark.skipif(not CHECKERS, reason="neither mypy nor pyright is installed")
@pytest.mark.parametrize("checker", CHECKERS)
def test_pedalboard_style_code_type_checks(checker, tmp_path):
    done = check(checker, tmp_path, PASSES)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(not CHECKERS, reason="neither mypy nor pyright is installed")
@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("case", sorted(FAILS))
def test_wrong_arguments_are_type_errors(checker, case, tmp_path):
    done = check(checker, tmp_path, FAILS[case])
    assert done.returncode != 0, done.stdout
