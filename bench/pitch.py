"""Pitch shifting and time stretching: speed and measured quality, stompbox vs pedalboard (and python-stretch).

Run ``python bench/pitch.py [--seconds 20]``. Engines that are not installed are skipped.

Speed: one call on stereo 44.1 kHz music, best of 2 runs, reported as x realtime.
Quality (each a number derived from a known answer, lower is better unless said):
- ``cents``: worst pitch error of a shifted 440 Hz sine over -12, -5, +3, +7, +12 semitones;
- ``residue``: energy not within +/-1.5 % of the expected partials of a shifted 10-partial 220 Hz tone (dB,
  relative to the whole output): smearing, phasiness and spurious partials;
- ``ripple``: peak-to-peak of the 20 ms RMS envelope of a shifted sine (dB): amplitude modulation;
- ``smear``: energy of a shifted click train more than 10 ms away from the clicks (dB): transient smearing;
- ``latency``: streaming latency in ms.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _audio import music  # noqa: E402

SR = 44100
Shift = Callable[[np.ndarray, float], np.ndarray]  # (channels, n) float32, semitones -> same shape


def _engines() -> dict[str, tuple[Shift, Callable[[np.ndarray, float], np.ndarray], float]]:
    """name -> (pitch shift, time stretch, latency ms)"""
    import stompbox

    engines = {
        "stompbox": (
            lambda x, st: stompbox.PitchShift(st)(x, SR),
            lambda x, f: stompbox.time_stretch(x, SR, f),
            _latency(stompbox.PitchShift(3)),
        )
    }
    try:
        import pedalboard

        engines["pedalboard"] = (
            lambda x, st: pedalboard.PitchShift(st)(x, SR),
            lambda x, f: pedalboard.time_stretch(x, SR, f),
            _latency(pedalboard.PitchShift(3)),
        )
    except ImportError:
        pass
    try:
        from python_stretch import Signalsmith

        def signalsmith(x: np.ndarray, st: float, factor: float = 1.0) -> np.ndarray:
            s = Signalsmith.Stretch()
            s.preset(x.shape[0], SR)
            s.setTransposeSemitones(st)
            s.setTimeFactor(factor)
            return s.process(x)  # the wrapper compensates its own latency on a whole buffer

        engines["python-stretch"] = (signalsmith, lambda x, f: signalsmith(x, 0.0, f), float("nan"))
    except ImportError:
        pass
    return engines


def _latency(plugin) -> float:
    """Streaming latency (ms): samples withheld when 5 s are fed in 512-sample blocks with reset=False."""
    x = np.zeros((1, SR * 5), np.float32)
    returned = sum(plugin.process(x[:, i : i + 512], SR, reset=False).shape[1] for i in range(0, x.shape[1], 512))
    return 1000.0 * (x.shape[1] - returned) / SR


def _freq(y: np.ndarray) -> float:
    y = np.asarray(y, np.float64).ravel()
    y = y[len(y) // 4 : -len(y) // 4]
    spec = np.abs(np.fft.rfft(y * np.hanning(len(y)), 8 * len(y)))
    k = int(np.argmax(spec))
    a, b, c = np.log(spec[k - 1 : k + 2] + 1e-30)
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * SR / (8 * len(y))


def _tone(freqs: list[float], seconds: float = 2.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (sum(0.3 / (i + 1) * np.sin(2 * np.pi * f * t + i) for i, f in enumerate(freqs)))[None].astype(np.float32)


def quality(shift: Shift) -> dict[str, float]:
    sine = _tone([440.0])
    cents = max(abs(1200 * np.log2(_freq(shift(sine, st)) / (440 * 2 ** (st / 12)))) for st in (-12, -5, 3, 7, 12))
    partials = [220.0 * h for h in range(1, 11)]
    residues = []
    for st in (-5, 3, 7):
        y = shift(_tone(partials), st)[0, SR // 2 : -SR // 2].astype(np.float64)
        spec = np.abs(np.fft.rfft(y * np.hanning(len(y)))) ** 2
        f = np.fft.rfftfreq(len(y), 1 / SR)
        near = np.zeros_like(f, bool)
        for p in partials:
            q = p * 2 ** (st / 12)
            near |= np.abs(f - q) < 0.015 * q
        residues.append(10 * np.log10(spec[~near].sum() / spec.sum()))
    y = shift(sine, 5)[0, SR // 2 : -SR // 2].astype(np.float64)
    frames = y[: len(y) // 882 * 882].reshape(-1, 882)
    env = 10 * np.log10(np.mean(frames**2, axis=1))
    clicks = np.zeros((1, 2 * SR), np.float32)
    pos = np.arange(SR // 4, 2 * SR - SR // 4, SR // 4)
    clicks[0, pos] = 0.8
    yc = shift(clicks, 5)[0].astype(np.float64)
    near = np.zeros(yc.shape, bool)
    for p in pos:
        near[max(0, p - SR // 100) : p + SR // 100] = True
    smear = 10 * np.log10(np.sum(yc[~near] ** 2) / max(np.sum(yc**2), 1e-30))
    return {
        "cents": cents,
        "residue": float(np.mean(residues)),
        "ripple": float(env.max() - env.min()),
        "smear": smear,
    }


def speed(fn: Callable[[], np.ndarray], seconds: float) -> float:
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return seconds / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the speed test signal (s)")
    args = parser.parse_args()
    x = music(args.seconds)
    print(f"{'engine':15} {'PS+3 x rt':>10} {'TS1.25 x rt':>12} {'cents':>7} {'residue':>8} {'ripple':>7} "
          f"{'smear':>7} {'latency ms':>11}")  # fmt: skip
    for name, (shift, stretch, latency) in _engines().items():
        shift(x[:, : SR // 10], 3)  # compile / warm up
        stretch(x[:, : SR // 10], 1.25)
        ps = speed(lambda: shift(x, 3), args.seconds)  # noqa: B023 - called before the loop moves on
        ts = speed(lambda: stretch(x, 1.25), args.seconds)  # noqa: B023
        q = quality(shift)
        print(
            f"{name:15} {ps:10.1f} {ts:12.1f} {q['cents']:7.2f} {q['residue']:8.1f} {q['ripple']:7.2f} "
            f"{q['smear']:7.1f} {latency:11.1f}"
        )


if __name__ == "__main__":
    main()
