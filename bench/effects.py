"""Throughput of every built-in effect, stompbox against pedalboard, on the same input in one run.

Usage: python bench/effects.py [--seconds 60] [--repeat 3] [--only Gain,Delay]
       python bench/effects.py --codecs [--seconds 20]   # codec effects, quiet and with the second core busy
       python bench/effects.py --sweep [--seconds 5] [--blocks 128,256,512,4096] [--only Delay,Board]

Prints, for each effect, the throughput of each library as a multiple of real time and the ratio
stompbox / pedalboard (>= 1.0 means stompbox is at least as fast), then two-thread scaling figures (stompbox's and
pedalboard's): the throughput of two threads, each processing its own copy with its own plugin, over that of one
thread; one- and two-thread rounds alternate and the best of each is kept. Memory-bound effects (Gain, Invert,
Clipping, Bitcrush) are limited by the machine's memory bandwidth. pedalboard's two-thread figure can exceed 2x:
each of its calls page-faults in a fresh output buffer (about 5,700 minor faults per call on 60 s of stereo,
measured with getrusage), which makes its one-thread time the slow one, so read that column with care.
The machine is shared and noisy: quote the ratios, not the seconds.

``--sweep`` streams ``--seconds`` (default 5) of stereo through each effect, and through the Distortion -> Delay ->
Reverb board ("Board"), in blocks of each size of ``--blocks`` with ``reset=False`` (one ``process`` call per block,
as a live or chunked stream makes them) and prints stompbox's throughput over pedalboard's for every block size,
side by side: the median of ``--repeat`` rounds, each timing both libraries back to back (each the best of a few
passes).
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable

import numpy as np

import stompbox

try:
    import pedalboard
except ImportError:  # the comparison column is left empty
    pedalboard = None

SR = 44100

# name -> constructor keyword arguments (the same for both libraries)
EFFECTS: dict[str, dict] = {
    "Gain": {"gain_db": -3.0},
    "Invert": {},
    "Clipping": {"threshold_db": -6.0},
    "Distortion": {"drive_db": 25.0},
    "Bitcrush": {"bit_depth": 8},
    "LowpassFilter": {"cutoff_frequency_hz": 1000.0},
    "HighpassFilter": {"cutoff_frequency_hz": 200.0},
    "LowShelfFilter": {"cutoff_frequency_hz": 200.0, "gain_db": 6.0},
    "HighShelfFilter": {"cutoff_frequency_hz": 4000.0, "gain_db": -6.0},
    "PeakFilter": {"cutoff_frequency_hz": 1000.0, "gain_db": 6.0, "q": 2.0},
    "LadderFilter": {"cutoff_hz": 800.0, "resonance": 0.5, "drive": 2.0},
    "Delay": {"delay_seconds": 0.3, "feedback": 0.4, "mix": 0.5},
    "Compressor": {"threshold_db": -20.0, "ratio": 4.0},
    "Limiter": {"threshold_db": -10.0},
    "BrickwallLimiter": {},
    "NoiseGate": {"threshold_db": -40.0},
    "Reverb": {"room_size": 0.75},
    "Chorus": {},
    "Phaser": {},
    "Convolution": {"impulse_response_filename": "__ir1__", "sample_rate": SR},
    "Convolution5s": {"impulse_response_filename": "__ir5__", "sample_rate": SR},
    "PitchShift": {"semitones": 3.0},
    "Resample": {"target_sample_rate": 8000.0},
    "MP3Compressor": {},
    "GSMFullRateCompressor": {},
}


def impulse_response(seconds: float) -> np.ndarray:
    """A decaying noise impulse response (a small room's tail), float32 stereo."""
    rng = np.random.default_rng(7)
    n = int(seconds * SR)
    return (rng.standard_normal((2, n)) * np.exp(-np.arange(n) / (0.25 * n))).astype(np.float32)


def make(module, name: str):
    """Build effect ``name`` of ``module`` (stompbox or pedalboard) with its bench settings."""
    kwargs = dict(EFFECTS[name])
    cls = getattr(module, name.removesuffix("5s"))
    if kwargs.get("impulse_response_filename") in ("__ir1__", "__ir5__"):
        kwargs["impulse_response_filename"] = impulse_response(
            1.0 if kwargs["impulse_response_filename"] == "__ir1__" else 5.0
        )
    return cls(**kwargs)


def signal(seconds: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    t = np.arange(int(seconds * SR)) / SR
    tone = 0.3 * np.sin(2 * np.pi * 220 * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 0.5 * t))
    return (tone + 0.05 * rng.standard_normal((2, t.size))).astype(np.float32)


def best_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def two_thread_scaling(make: Callable[[], object], audio: np.ndarray, repeat: int) -> float:
    """Throughput of two threads (each its own plugin and copy) over one thread's.

    Each thread processes its copy enough times to run for about 0.5 s, so thread start-up and timer noise do
    not decide the figure for the fastest effects.
    """
    plugins = [make(), make()]
    copies = [audio.copy(), audio.copy()]
    for p in plugins:
        p(audio[:, :4096], SR)  # warm up (compile) before timing
    once = best_time(lambda: plugins[0](copies[0], SR), 1)
    laps = max(1, int(np.ceil(0.5 / max(once, 1e-6))))

    def work(plugin, audio) -> None:
        for _ in range(laps):
            plugin(audio, SR)

    def both() -> None:
        threads = [threading.Thread(target=work, args=(p, c)) for p, c in zip(plugins, copies, strict=True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    # one thread and two threads alternate, so both see the same machine load and allocator state
    single = double = float("inf")
    for _ in range(repeat):
        single = min(single, best_time(lambda: work(plugins[0], copies[0]), 1))
        double = min(double, best_time(both, 1))
    return 2 * single / double


BOARD = ("Distortion", "Delay", "Reverb")


def make_streamed(module, name: str):
    """An effect of the sweep: a built-in by name, or "Board" (Distortion -> Delay -> Reverb)."""
    if name == "Board":
        return module.Pedalboard([make(module, part) for part in BOARD])
    return make(module, name)


def stream_time(plugin, audio: np.ndarray, block: int, budget: float = 0.3) -> float:
    """Seconds to push ``audio`` through ``plugin`` one ``block``-frame call at a time, ``reset=False``: the best
    of up to five passes within about ``budget`` seconds (a loaded machine's stalls hit single passes)."""
    chunks = [np.ascontiguousarray(audio[:, i : i + block]) for i in range(0, audio.shape[1], block)]
    plugin.process(chunks[0], SR, reset=False)  # compile / warm up outside the timing
    best, spent = float("inf"), 0.0
    for _ in range(5):
        start = time.perf_counter()
        for chunk in chunks:
            plugin.process(chunk, SR, reset=False)
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
        if spent > budget:
            break
    return best


def sweep(args: argparse.Namespace) -> None:
    blocks = [int(b) for b in args.blocks.split(",")]
    names = [n for n in [*EFFECTS, "Board"] if not args.only or n in args.only.split(",")]
    audio = signal(args.seconds)
    print(
        f"{args.seconds:g} s of stereo in blocks, reset=False; stompbox/pedalboard throughput, median of {args.repeat}"
    )
    print(f"{'effect':<22}" + "".join(f"{f'{b} frames':>14}" for b in blocks))
    for name in names:
        if pedalboard is None or not (name == "Board" or hasattr(pedalboard, name.removesuffix("5s"))):
            continue
        try:
            ours, theirs = make_streamed(stompbox, name), make_streamed(pedalboard, name)
        except (AttributeError, ImportError):
            continue
        line = f"{name:<22}"
        for block in blocks:
            ratios = sorted(
                stream_time(theirs, audio, block) / stream_time(ours, audio, block) for _ in range(args.repeat)
            )
            line += f"{ratios[len(ratios) // 2]:>13.2f}x"
        print(line, flush=True)


def codec_effects(seconds: float, rounds: int) -> None:
    """MP3Compressor and GSMFullRateCompressor on whole arrays, stompbox against pedalboard, quiet and with the
    second core busy (see ``_sidebyside``)."""
    from _sidebyside import HEADER, row

    audio = signal(seconds)
    print(f"{seconds:g} s of stereo at {SR} Hz, whole calls; stompbox/pedalboard, median of {rounds} rounds")
    print(HEADER)
    for name in ("MP3Compressor", "GSMFullRateCompressor"):
        if pedalboard is None:
            break
        ours, theirs = make(stompbox, name), make(pedalboard, name)
        ours(audio[:, :4096], SR), theirs(audio[:, :4096], SR)  # compile / warm caches outside the timing
        print(row(name, lambda p=ours: p(audio, SR), lambda p=theirs: p(audio, SR), seconds, rounds), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=None, help="60 (5 with --sweep)")
    parser.add_argument("--sweep", action="store_true", help="stream in blocks of each --blocks size")
    parser.add_argument("--blocks", default="128,256,512,4096")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument("--no-threads", action="store_true")
    parser.add_argument("--codecs", action="store_true", help="codec effects, quiet and with the second core busy")
    args = parser.parse_args()
    if args.codecs:
        codec_effects(20.0 if args.seconds is None else args.seconds, max(args.repeat, 3))
        return
    if args.sweep:
        args.seconds = 5.0 if args.seconds is None else args.seconds
        sweep(args)
        return
    args.seconds = 60.0 if args.seconds is None else args.seconds
    names = [n for n in EFFECTS if not args.only or n in args.only.split(",")]
    audio = signal(args.seconds)
    duration = audio.shape[1] / SR
    print(f"{args.seconds:g} s of stereo float32 at {SR} Hz; best of {args.repeat}; x = multiple of real time")
    print(f"{'effect':<18}{'stompbox x':>12}{'pedalboard x':>14}{'ratio':>8}{'sb 2 threads':>14}{'pb 2 threads':>14}")
    ratios = []
    for name in names:
        try:
            ours = make(stompbox, name)
        except (AttributeError, ImportError):
            print(f"{name:<18}{'(not built yet)':>12}")
            continue
        ours(audio[:, :4096], SR)  # compile / warm caches outside the timing
        t_ours = best_time(lambda ours=ours: ours(audio, SR), args.repeat)
        line = f"{name:<18}{duration / t_ours:>12.0f}"
        if pedalboard is not None and hasattr(pedalboard, name.removesuffix("5s")):
            theirs = make(pedalboard, name)
            theirs(audio[:, :4096], SR)
            t_theirs = best_time(lambda theirs=theirs: theirs(audio, SR), args.repeat)
            ratio = t_theirs / t_ours
            ratios.append(ratio)
            line += f"{duration / t_theirs:>14.0f}{ratio:>8.2f}"
        else:
            line += f"{'-':>14}{'-':>8}"
        if not args.no_threads:
            scaling = two_thread_scaling(lambda name=name: make(stompbox, name), audio, args.repeat)
            line += f"{scaling:>13.2f}x"
            if pedalboard is not None and hasattr(pedalboard, name.removesuffix("5s")):
                scaling = two_thread_scaling(lambda name=name: make(pedalboard, name), audio, args.repeat)
                line += f"{scaling:>13.2f}x"
        print(line, flush=True)
    if ratios:
        print(f"geometric mean ratio stompbox/pedalboard: {np.exp(np.mean(np.log(ratios))):.2f}")


if __name__ == "__main__":
    main()
