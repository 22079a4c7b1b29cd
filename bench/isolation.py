"""Crash isolation overhead: an isolated plugin (child process, shared memory) vs the same plugin in-process.

Usage:
    python bench/isolation.py [--seconds 60] [--repeat 5] [--buffer-size 8192]

Renders --seconds of mono 44.1 kHz noise through ZamComp (LV2 and VST3, from Debian's zam-plugins) with
``process(x, 44100, buffer_size=...)``, best of --repeat, in-process and with ``isolated=True``; prints
x realtime for both and the ratio in-process time / isolated time (1.0 = no overhead), the same inside a
Pedalboard (one round trip per block instead of per call), and the cost of one 512-sample streaming call
(``reset=False``), i.e. the round trip. Outputs are checked to be identical.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from stompbox import Pedalboard
from stompbox.hosting import load_plugin

TARGETS = {"ZamComp.lv2": "urn:zamaudio:ZamComp", "ZamComp.vst3": "/usr/lib/vst3/ZamComp.vst3"}


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


CALLS = 200


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--buffer-size", type=int, default=8192)
    args = ap.parse_args()
    rate = 44100
    x = (np.random.default_rng(0).standard_normal((1, int(args.seconds * rate))) * 0.2).astype(np.float32)
    settings = {"threshold_db": -30.0, "ratio": 4.0}
    for label, target in TARGETS.items():
        if target.startswith("/") and not os.path.exists(target):
            continue
        plain = load_plugin(target, parameter_values=settings)
        isolated = load_plugin(target, parameter_values=settings, isolated=True)
        y_plain = plain(x, rate, buffer_size=args.buffer_size)
        y_iso = isolated(x, rate, buffer_size=args.buffer_size)
        same = np.array_equal(y_plain, y_iso)
        t_plain = best(lambda p=plain: p(x, rate, buffer_size=args.buffer_size), args.repeat)
        t_iso = best(lambda p=isolated: p(x, rate, buffer_size=args.buffer_size), args.repeat)
        small = np.ascontiguousarray(x[:, :512])
        t_small_plain = best(lambda p=plain, s=small: [p(s, rate, reset=False) for _ in range(CALLS)], 3)
        t_small_iso = best(lambda p=isolated, s=small: [p(s, rate, reset=False) for _ in range(CALLS)], 3)
        board = Pedalboard([isolated])
        t_board = best(lambda b=board: b(x, rate, buffer_size=args.buffer_size), args.repeat)
        print(
            f"{label:13s} buffer {args.buffer_size}: in-process {args.seconds / t_plain:6.0f}x realtime, "
            f"isolated {args.seconds / t_iso:6.0f}x (ratio {t_plain / t_iso:.2f}), inside a Pedalboard "
            f"{args.seconds / t_board:6.0f}x (ratio {t_plain / t_board:.2f}); 512-sample streaming call "
            f"{t_small_plain / CALLS * 1e6:.0f} us in-process vs {t_small_iso / CALLS * 1e6:.0f} us isolated; "
            f"identical output: {same}"
        )
        isolated.close()


if __name__ == "__main__":
    main()
