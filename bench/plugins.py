"""Hosted VST3 plugins: stompbox's ctypes host against pedalboard 0.9.26 hosting the same plugin.

Measures, for each plugin, on 60 s of audio in the plugin's channel count (stereo for the X2 variants):

- whole-file speed at buffer_size 8192 (x realtime) and the ratio pedalboard time / stompbox time (>= 1.0 means
  stompbox is at least as fast). The two hosts are timed in alternation, best of several rounds, so a busy
  moment of the shared machine does not land on one side only;
- per-call overhead: one ``process(block, reset=False)`` call on a 512-frame block (microseconds), which is what
  streaming and live audio pay per block.

Run: ``python bench/plugins.py [PLUGIN ...]`` (needs Debian's zam-plugins; pedalboard optional).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

PLUGINS = ["ZamComp", "ZamCompX2", "ZamDelay", "ZamEQ2", "ZamGate", "ZamTube"]
VST3_DIR = "/usr/lib/vst3"
SR = 44100
SECONDS = 60
ROUNDS = 7


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def per_call(plugin, block: np.ndarray, calls: int = 2000) -> float:
    """Best-of-5 seconds per ``process(block, reset=False)`` call."""
    plugin(block, SR, reset=False)

    def run() -> None:
        for _ in range(calls):
            plugin(block, SR, reset=False)

    return min(timed(run) for _ in range(5)) / calls


def main(names: list[str]) -> None:
    from stompbox.hosting import load_plugin

    try:
        import pedalboard
    except ImportError:
        pedalboard = None
    rng = np.random.default_rng(0)
    header = ("plugin", "ch", "stompbox x rt", "pedalboard x rt", "ratio", "sb us/512", "pb us/512")
    print(f"{SECONDS} s of noise at {SR} Hz, buffer_size 8192, best of {ROUNDS} alternating rounds")
    print("{:10s} {:>3s} {:>14s} {:>16s} {:>6s} {:>10s} {:>10s}".format(*header))
    for name in names:
        path = f"{VST3_DIR}/{name}.vst3"
        if not os.path.exists(path):
            print(f"{name}: not installed")
            continue
        channels = 2 if name.endswith("X2") else 1
        audio = (rng.standard_normal((channels, SR * SECONDS)) * 0.2).astype(np.float32)
        block = np.ascontiguousarray(audio[:, :512])
        ours = load_plugin(path)
        theirs = pedalboard.load_plugin(path) if pedalboard is not None else None
        hosts = [h for h in (ours, theirs) if h is not None]
        for host in hosts:
            host(audio[:, :4096], SR)  # load, configure and warm up outside the timing
        best = [float("inf")] * len(hosts)
        for _ in range(ROUNDS):
            for i, host in enumerate(hosts):
                best[i] = min(best[i], timed(lambda host=host, audio=audio: host(audio, SR)))
        calls = [per_call(host, block) for host in hosts]
        line = f"{name:10s} {channels:3d} {SECONDS / best[0]:14.0f}"
        if theirs is not None:
            line += f" {SECONDS / best[1]:16.0f} {best[1] / best[0]:6.2f} {calls[0] * 1e6:10.1f} {calls[1] * 1e6:10.1f}"
        else:
            line += f" {'-':>16s} {'-':>6s} {calls[0] * 1e6:10.1f} {'-':>10s}"
        print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or PLUGINS)
