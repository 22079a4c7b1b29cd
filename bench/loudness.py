"""Loudness metering speed and memory: stompbox.analysis vs pyloudnorm (and pedalboard has no meter).

Usage:
    python bench/loudness.py [--seconds 300] [--repeat 3]

Measures, on --seconds of stereo 44.1 kHz noise-like music (float32):

- ``loudness()`` (integrated + momentary/short-term + LRA + sample and true peak) in x realtime, stereo and
  mono;
- ``pyloudnorm.Meter.integrated_loudness`` (integrated only; skipped when pyloudnorm is absent) and the
  difference of the two readings in LU;
- the streaming meter's stored state after the run (bytes per hour of stereo audio);
- ``render(..., tail="auto")`` of a Reverb vs ``process`` of the same input padded with the tail's length.

Best of --repeat runs; the machine is shared and noisy, so quote ratios.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import stompbox
from stompbox.analysis import LoudnessMeter, loudness
from stompbox.render import render

SR = 44100


def best(fn, repeat):
    times = []
    value = None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = int(args.seconds * SR)
    rng = np.random.default_rng(0)
    envelope = np.repeat(10 ** (rng.uniform(-30, 0, n // SR + 1) / 20), SR)[:n]
    audio = (0.3 * envelope * rng.standard_normal((2, n))).astype(np.float32)
    loudness(audio[:, : SR * 4], SR)  # compile
    t_full, result = best(lambda: loudness(audio, SR), args.repeat)
    print(
        f"stompbox loudness(): {args.seconds / t_full:8.0f} x realtime  I = {result.integrated:.3f} LUFS, "
        f"LRA = {result.loudness_range:.2f} LU, TP = {result.true_peak:.2f} dBTP"
    )
    t_mono, _ = best(lambda: loudness(audio[0], SR), args.repeat)
    print(f"  mono (half the work):  {args.seconds / t_mono:8.0f} x realtime")
    try:
        import pyloudnorm

        meter = pyloudnorm.Meter(SR)
        data = audio.T.astype(np.float64)
        t_ref, ref = best(lambda: meter.integrated_loudness(data), args.repeat)
        print(
            f"pyloudnorm integrated:   {args.seconds / t_ref:8.0f} x realtime  I = {ref:.3f} LUFS "
            f"(difference {result.integrated - ref:+.3f} LU; speed ratio {t_ref / t_full:.1f}x)"
        )
    except ImportError:
        print("pyloudnorm not installed: skipped")
    m = LoudnessMeter(SR, 2)
    for start in range(0, n, 8192):
        m.add(audio[:, start : start + 8192])
    stored = m.segment_energies().nbytes
    print(
        f"streaming meter: {stored} bytes stored for {args.seconds:.0f} s "
        f"({stored * 3600 / args.seconds / 1e6:.2f} MB per hour of stereo); "
        f"equal to the whole-array result: {m.result().integrated == result.integrated}"
    )
    clip = audio[:, : SR * 10]
    reverb = stompbox.Reverb(room_size=0.8)
    t_render, out = best(lambda: render(clip, SR, reverb, "auto"), args.repeat)
    tail = out.shape[1] - clip.shape[1]
    padded = np.concatenate([clip, np.zeros((2, tail), np.float32)], axis=1)
    t_process, _ = best(lambda: reverb.process(padded, SR), args.repeat)
    print(
        f"render(Reverb, tail='auto'): tail {tail / SR:.2f} s, {t_render * 1e3:.1f} ms vs process of the "
        f"padded input {t_process * 1e3:.1f} ms (the hold past the end costs the difference)"
    )


if __name__ == "__main__":
    main()
