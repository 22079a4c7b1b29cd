"""What each command imports: only what its work needs (the start-up times themselves are measured by
``bench/startup.py cli``, not here).

A command that runs no compiled effect (``info``, ``convert``, ``loudness`` of a short file) never loads Numba,
nor the plugin machinery, SciPy, PyAV, soxr or tqdm when its input does not need them; ``stompbox --version``
and ``import stompbox`` load not even NumPy. Each case runs in a fresh interpreter, as the command does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from stompbox.io import AudioFile

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}

#: modules a command loads only when its work needs them
HEAVY = ("numba", "llvmlite", "scipy", "av", "soxr", "tqdm", "mutagen", "matplotlib")
#: stompbox's own heavy layers: the plugin machinery and the effects
MACHINERY = ("stompbox.core.plugin", "stompbox.board", "stompbox.effects.basic", "stompbox.effects.reverb")


def _modules_after(*argv: str) -> tuple[int, set[str]]:
    """Exit status and ``sys.modules`` of a fresh interpreter after ``stompbox ARGV`` ran (its output dropped)."""
    code = textwrap.dedent(
        """
        import contextlib, io, json, sys
        from stompbox.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()):
            status = main(sys.argv[1:])
        print(json.dumps([status, sorted(sys.modules)]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=ENV, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    status, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return status, set(modules)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.fixture(scope="module")
def wav(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("startup") / "tone.wav")
    t = np.arange(2 * 44100) / 44100
    with AudioFile(path, "w", 44100, 2, bit_depth=16) as f:
        f.write(np.stack([0.5 * np.sin(2 * np.pi * 440 * t)] * 2).astype(np.float32))
    return path


def test_info_of_a_wav_loads_no_numba_and_no_effects(wav: str) -> None:
    status, modules = _modules_after("info", wav)
    assert status == 0
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, MACHINERY) == []


def test_convert_wav_to_flac_loads_no_numba_and_no_effects(wav: str, tmp_path) -> None:
    status, modules = _modules_after("convert", wav, str(tmp_path / "out.flac"))
    assert status == 0
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, MACHINERY) == []


def test_loudness_of_a_short_file_loads_no_numba(wav: str) -> None:
    status, modules = _modules_after("loudness", wav)
    assert status == 0
    assert _loaded(modules, HEAVY) == []
    assert _loaded(modules, MACHINERY) == []


def test_only_the_running_subcommands_module_is_imported(wav: str) -> None:
    _, modules = _modules_after("info", wav)
    others = {"render", "plot", "batch", "demo", "live", "effects", "plugins", "grammar", "convert", "loudness"}
    assert sorted(f"stompbox.cli.{n}" for n in others if f"stompbox.cli.{n}" in modules) == []


def test_version_and_import_load_not_even_numpy() -> None:
    status, modules = _modules_after("--version")
    assert status == 0
    assert "numpy" not in modules
    done = subprocess.run(
        [sys.executable, "-c", "import sys, stompbox; print('numpy' in sys.modules)"],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    )
    assert done.stdout.strip() == "False"


def test_render_loads_the_effects_it_names(wav: str, tmp_path) -> None:
    """The other side: what a chain needs does load (the laziness is not a missing import)."""
    status, modules = _modules_after("render", "-q", wav, str(tmp_path / "out.wav"), "reverb")
    assert status == 0
    assert "stompbox.effects.reverb" in modules and "stompbox.board" in modules
