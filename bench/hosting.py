"""Hosted VST3 plugins: stompbox's ctypes host against pedalboard 0.9.26 hosting the same plugin.

Measures (best of several runs, the machine is shared):
- whole-file speed: 60 s of audio through the plugin at buffer_size 8192 (x realtime), and the ratio
  stompbox / pedalboard (>= 1.0 means stompbox is at least as fast);
- per-call overhead: one ``process(block, reset=False)`` call on a 512-frame block (microseconds), which is
  what streaming and live audio pay per block.

Run: ``python bench/hosting.py`` (needs Debian's zam-plugins; pedalboard optional).
"""

from __future__ import annotations

import os
import time

import numpy as np

PLUGINS = ["ZamComp", "ZamDelay", "ZamEQ2", "ZamGate"]
SR = 44100


def best(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def measure(plugin, audio: np.ndarray, block: np.ndarray) -> tuple[float, float]:
    plugin(audio[:, :4096], SR)
    whole = best(lambda: plugin(audio, SR), 3)
    plugin(block, SR, reset=False)
    calls = 2000

    def run_blocks() -> None:
        for _ in range(calls):
            plugin(block, SR, reset=False)

    per_call = best(run_blocks, 5) / calls
    return whole, per_call


def main() -> None:
    from stompbox.hosting import load_plugin

    try:
        import pedalboard
    except ImportError:
        pedalboard = None
    rng = np.random.default_rng(0)
    seconds = 60
    audio = (rng.standard_normal((1, SR * seconds)) * 0.2).astype(np.float32)
    block = np.ascontiguousarray(audio[:, :512])
    header = ("plugin", "stompbox x rt", "pedalboard x rt", "ratio", "sb us/512", "pb us/512")
    print("{:10s} {:>14s} {:>16s} {:>6s} {:>10s} {:>10s}".format(*header))
    for name in PLUGINS:
        path = f"/usr/lib/vst3/{name}.vst3"
        if not os.path.exists(path):
            print(f"{name}: not installed")
            continue
        ours = load_plugin(path)
        whole_s, call_s = measure(ours, audio, block)
        if pedalboard is not None:
            ref = pedalboard.load_plugin(path)
            whole_p, call_p = measure(ref, audio, block)
            print(
                f"{name:10s} {seconds / whole_s:14.0f} {seconds / whole_p:16.0f} {whole_p / whole_s:6.2f} "
                f"{call_s * 1e6:10.1f} {call_p * 1e6:10.1f}"
            )
        else:
            print(f"{name:10s} {seconds / whole_s:14.0f} {'-':>16s} {'-':>6s} {call_s * 1e6:10.1f} {'-':>10s}")


if __name__ == "__main__":
    main()
