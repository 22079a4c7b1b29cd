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


if __name__ == "__main__":
    main(sys.argv[1:] or EFFECTS)
