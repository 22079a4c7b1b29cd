"""Start-up cost: ``import``, the first effect class, and the first ``process()`` in a fresh interpreter.

Each figure is the best of several fresh processes (the machine is shared), with a warm Numba cache (one
untimed run first). Phases, for stompbox and for pedalboard 0.9.26 side by side:

- ``import``: ``import stompbox`` / ``import pedalboard``;
- ``setup``: building a board of the effect (for stompbox this is where the first effect class loads Numba and
  its compiled kernels' target, once per process);
- ``first process``: the first ``board(audio, 44100)`` call on 4096 stereo samples, the latency an audio
  callback or a service's first request sees;
- ``total``: all three, the time from nothing to the first processed block.

Run: ``python bench/startup.py [EFFECT ...]`` (default: a few effects of each family; pedalboard optional).

``python bench/startup.py cli`` times the command instead: each subcommand on a 2-s stereo WAV, as a fresh
process (best of several), beside ``python -c pass``, ``python -c "import numpy"``, ``sox`` and ``ffmpeg`` doing
the same job. It prints each time, its ratio to ``python -c pass`` and what it adds to Python's own start-up
(the issue's bound: ``info``, ``convert`` and ``loudness`` within 0.15 s of it), and whether the process imported
Numba, SciPy or PyAV; then the time to the first byte of ``render in.wav - --type wav reverb`` on a 10-minute
input, as a pipe's reader sees it, beside ``python -c pass`` (the bound: 0.2 s more).

The commands run with their modules' bytecode cached, as an installed package has it (pip compiles it):
with ``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__`` beside a source checkout, every run would compile
stompbox's sources again, tens of milliseconds no user pays. The cache goes to a temporary folder
(``PYTHONPYCACHEPREFIX``); ``--no-bytecode`` measures without it.
"""

from __future__ import annotations

import json
import subprocess
import sys

EFFECTS = ["Compressor", "LowpassFilter", "LadderFilter", "Delay", "Chorus", "Reverb", "Distortion"]
RUNS = 5

PROBE = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import {module} as lib
t2 = time.perf_counter()
board = lib.Pedalboard([getattr(lib, {effect!r})()])
t3 = time.perf_counter()
board(np.random.default_rng(0).standard_normal((2, 4096)).astype(np.float32), 44100)
t4 = time.perf_counter()
print(json.dumps({{"import": t2 - t1, "setup": t3 - t2, "first": t4 - t3, "total": t4 - t1}}))
"""


def measure(module: str, effect: str) -> dict[str, float] | None:
    """Best-of-RUNS phase times (s) of a fresh interpreter, or None if ``module`` cannot run the effect."""
    code = PROBE.format(module=module, effect=effect)
    best: dict[str, float] = {}
    for run in range(RUNS + 1):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            return None
        if run == 0:
            continue  # warms the Numba cache and the OS file cache
        times = json.loads(result.stdout.strip().splitlines()[-1])
        for key, value in times.items():
            best[key] = min(best.get(key, value), value)
    return best


def main(effects: list[str]) -> None:
    try:
        import pedalboard  # noqa: F401

        have_pedalboard = True
    except ImportError:
        have_pedalboard = False
    print(f"best of {RUNS} fresh interpreters, warm cache; times in ms; ratio = pedalboard / stompbox")
    header = f"{'effect':14s} {'sb import':>9s} {'sb setup':>9s} {'sb first':>9s} {'sb total':>9s}"
    if have_pedalboard:
        header += f" {'pb import':>9s} {'pb first':>9s} {'pb total':>9s} {'first ratio':>11s} {'total ratio':>11s}"
    print(header)
    for effect in effects:
        sb = measure("stompbox", effect)
        if sb is None:
            print(f"{effect:14s} stompbox failed")
            continue
        line = f"{effect:14s}" + "".join(f" {sb[k] * 1e3:9.1f}" for k in ("import", "setup", "first", "total"))
        pb = measure("pedalboard", effect) if have_pedalboard else None
        if pb is not None:
            line += "".join(f" {pb[k] * 1e3:9.1f}" for k in ("import", "first", "total"))
            line += f" {pb['first'] / sb['first']:11.2f} {pb['total'] / sb['total']:11.2f}"
        print(line)


_ENV: dict[str, str] | None = None  # the environment of the timed commands (see cli())


def _best(argv: list[str], runs: int = RUNS) -> float:
    """Best wall time (s) of ``runs`` fresh processes of ``argv`` (one untimed run first)."""
    import time

    best = float("inf")
    for run in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, timeout=300, check=False, env=_ENV)
        if run:
            best = min(best, time.perf_counter() - start)
    return best


def _first_byte(argv: list[str], runs: int = RUNS) -> float:
    """Best time (s) from the start of ``argv`` to the first byte on its standard output (a pipe)."""
    import time

    best = float("inf")
    for run in range(runs + 1):
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_ENV)
        assert process.stdout is not None
        process.stdout.read(1)
        if run:
            best = min(best, time.perf_counter() - start)
        process.kill()
        process.communicate()
    return best


def _heavy_imports(args: list[str]) -> str:
    """The heavy modules a subcommand's process imported (from ``-X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "stompbox", *args], capture_output=True, text=True, env=_ENV
    )
    found = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    heavy = [name for name in ("numba", "scipy", "av", "matplotlib", "soxr") if name in found]
    return ",".join(heavy) or "-"


def cli(bytecode: bool = True) -> None:
    import os
    import shutil
    import tempfile

    global _ENV
    folder = tempfile.mkdtemp(prefix="stompbox-startup-")
    if bytecode:
        _ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        _ENV["PYTHONPYCACHEPREFIX"] = os.path.join(folder, "pycache")
    try:
        wav = os.path.join(folder, "in.wav")
        subprocess.run(
            ["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "2", "sine", "440"], check=True
        )
        python = [sys.executable]
        jobs = {
            "info": (["info", wav], ["soxi", wav], ["ffprobe", "-v", "error", "-show_streams", wav]),
            "convert": (["convert", wav, os.path.join(folder, "o.flac")], ["sox", wav, os.path.join(folder, "s.flac")],
                        ["ffmpeg", "-v", "error", "-y", "-i", wav, os.path.join(folder, "f.flac")]),
            "loudness": (["loudness", wav], ["sox", wav, "-n", "stats"],
                         ["ffmpeg", "-v", "error", "-i", wav, "-af", "ebur128", "-f", "null", "-"]),
            "render gain": (["render", wav, os.path.join(folder, "o.wav"), "gain", "gain_db=-3"],
                            ["sox", wav, os.path.join(folder, "s.wav"), "gain", "-3"],
                            ["ffmpeg", "-v", "error", "-y", "-i", wav, "-af", "volume=-3dB",
                             os.path.join(folder, "f.wav")]),
        }  # fmt: skip
        base = _best([*python, "-c", "pass"])
        numpy = _best([*python, "-c", "import numpy"])
        print(
            f"best of {RUNS} fresh processes; times in ms; python -c pass {base * 1e3:.0f}, import numpy "
            f"{numpy * 1e3:.0f}"
        )
        print(
            f"{'command':12s} {'stompbox':>9s} {'ratio':>6s} {'+python':>8s} {'sox':>7s} {'ffmpeg':>7s}  heavy imports"
        )
        for name, (args, sox, ffmpeg) in jobs.items():
            ours = _best([*python, "-m", "stompbox", *args])
            theirs = [_best(c) if shutil.which(c[0]) else float("nan") for c in (sox, ffmpeg)]
            print(
                f"{name:12s} {ours * 1e3:9.0f} {ours / base:6.1f} {(ours - base) * 1e3:8.0f} {theirs[0] * 1e3:7.0f} "
                f"{theirs[1] * 1e3:7.0f}  {_heavy_imports(args)}"
            )
        long = os.path.join(folder, "long.wav")
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", long, "synth", "600", "sine", "440"],
                       check=True)  # fmt: skip
        first = _first_byte([*python, "-m", "stompbox", "render", long, "-", "--type", "wav", "-q", "reverb"])
        sox = _first_byte(["sox", long, "-t", "wav", "-", "reverb"]) if shutil.which("sox") else float("nan")
        pass_ = _first_byte([*python, "-c", "print(1)"])
        print(
            f"render 10-min in.wav - reverb: first byte {first * 1e3:.0f} ms, {(first - pass_) * 1e3:.0f} ms after "
            f"python -c 'print(1)' ({pass_ * 1e3:.0f} ms); sox {sox * 1e3:.0f} ms"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["cli"]:
        cli(bytecode="--no-bytecode" not in sys.argv[2:])
    else:
        main(sys.argv[1:] or EFFECTS)
