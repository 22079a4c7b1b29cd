"""Every code example of README.md runs: the Python block as written, and each ``stompbox`` command line of the
command-line block on files made here (the live-audio lines ``play``/``record`` run in tests/live against a
private audio server; a pipe into ``aplay`` is checked up to the pipe, its WAV bytes on stdout)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

README = Path(__file__).resolve().parent.parent / "README.md"
SR = 44100


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """Input files the examples name: in.flac/in.wav/in.mp3/in.m4a, a chain file, a folder of inputs."""
    rng = np.random.default_rng(0)
    x = (0.2 * rng.standard_normal((SR, 2))).astype(np.float32)
    from stompbox.io import AudioFile

    for name in ("in.flac", "in.wav", "in.mp3", "in.m4a", "a.flac", "b.flac"):
        with AudioFile(str(tmp_path / name), "w", SR, 2) as f:
            f.write(x.T)
    (tmp_path / "in_dir").mkdir()
    for i in range(3):
        sf.write(tmp_path / "in_dir" / f"take{i}.wav", x, SR)
    import stompbox

    stompbox.Pedalboard([stompbox.Gain(-3), stompbox.Reverb()]).save(str(tmp_path / "chain.yaml"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_has_the_examples_this_test_runs():
    assert len(blocks("python")) == 1
    assert any("stompbox render" in b for b in blocks("sh"))


def test_python_example_runs_as_written(workdir):
    (code,) = blocks("python")
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own example
    out, wet = namespace["out"], namespace["wet"]
    assert out.shape == (2, SR) and out.dtype == np.float32
    assert wet.shape[1] > SR  # the reverb's tail was rendered
    assert (workdir / "chain.yaml").exists() and (workdir / "out.m4a").exists()
    with namespace["AudioFile"]("out.m4a") as f:
        assert f.samplerate == 48000 and abs(f.frames - 48000) < 2048


def command_lines() -> list[str]:
    lines = []
    for block in blocks("sh"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("stompbox ") and not line.startswith(("stompbox play", "stompbox record")):
                lines.append(line)
    return lines


@pytest.mark.parametrize("line", command_lines())
def test_command_line_example_runs(workdir, line):
    piped = "|" in line
    command = line.split("|")[0].strip() if piped else line
    args = shlex.split(command)
    if args[1] == "demo":  # the quick start: covered with its outputs in tests/test_cli.py
        pytest.skip("stompbox demo is tested in tests/test_cli.py")
    if any("*" in a for a in args):
        import glob

        args = [m for a in args for m in (sorted(glob.glob(a)) if "*" in a else [a])]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, "-m", "stompbox.cli.main", *args[1:]],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    if piped:
        assert result.stdout[:4] == b"RIFF" and len(result.stdout) > SR * 2 * 2
