"""Soak test: long runs must keep memory (RSS) and open file descriptors flat, and threads must scale.

Usage::

    python bench/soak.py                      # the issue's numbers: 5,000 reader and writer cycles, 1,000 plugin
                                              # and hosted-plugin load/unload cycles, 20,000 blocks, scaling
    python bench/soak.py --readers 600 --writers 300 --plugins 200 --hosted 100 --blocks 2000 --no-scaling --json

Each phase measures RSS (``/proc/self/statm``) and the number of open descriptors (``/proc/self/fd``) after its
first 100 cycles (the baseline: caches, JIT and codec libraries are warm by then) and at the end, and reports
the change in percent. ``--json`` prints one JSON document (what tests/robustness/test_leaks.py reads).

Scaling: ``F`` files are each read, processed through a board and written, by 1, 2 and 4 threads; the speedup
over one thread shows that decoding, the kernels and encoding release the GIL (2 cores here: ~2x at most).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import stompbox
from stompbox.io import AudioFile

SR = 44100
PAGE = os.sysconf("SC_PAGE_SIZE")
HOSTED = "/usr/lib/vst3/ZamCompX2.vst3"  # Debian zam-plugins; skipped when absent


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE / 2**20


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def soak(name: str, cycles: int, step: Callable[[int], None], baseline_at: int = 100) -> dict:
    """Run ``step(i)`` ``cycles`` times; RSS and descriptors after ``baseline_at`` cycles and at the end."""
    started = time.perf_counter()
    base_rss = base_fds = None
    for i in range(cycles):
        step(i)
        if i + 1 == min(baseline_at, cycles):
            gc.collect()
            base_rss, base_fds = rss_mb(), fd_count()
    gc.collect()
    end_rss, end_fds = rss_mb(), fd_count()
    assert base_rss is not None and base_fds is not None
    return {
        "phase": name,
        "cycles": cycles,
        "seconds": round(time.perf_counter() - started, 2),
        "rss_mb_at_100": round(base_rss, 1),
        "rss_mb_end": round(end_rss, 1),
        "rss_change_pct": round(100 * (end_rss - base_rss) / base_rss, 2),
        "fds_at_100": base_fds,
        "fds_end": end_fds,
    }


def make_files(folder: Path) -> list[Path]:
    t = np.arange(SR // 4) / SR
    audio = (0.3 * np.stack([np.sin(2 * np.pi * 440 * t), np.sin(2 * np.pi * 550 * t)])).astype(np.float32)
    paths = []
    for ext in ("wav", "flac", "mp3", "ogg", "m4a"):
        path = folder / f"quarter.{ext}"
        with AudioFile(str(path), "w", SR, 2) as out:
            out.write(audio)
        paths.append(path)
    return paths


def readers(paths: list[Path], cycles: int) -> dict:
    def step(i: int) -> None:
        with AudioFile(str(paths[i % len(paths)])) as f:
            while f.read(8192).shape[1]:
                pass
            if f.frames > 100:
                f.seek(f.frames // 2)
                f.read(100)

    return soak("open/read/seek/close readers", cycles, step)


def writers(folder: Path, cycles: int) -> dict:
    block = (np.random.default_rng(0).standard_normal((2, 4410)) * 0.1).astype(np.float32)
    formats = ("wav", "flac", "mp3", "m4a")

    def step(i: int) -> None:
        path = folder / f"out.{formats[i % len(formats)]}"
        if i % 10 == 9:  # every tenth write fails half-way: the temporary file must go, fds must close
            try:
                with AudioFile(str(path), "w", SR, 2) as out:
                    out.write(block)
                    raise RuntimeError("simulated failure")
            except RuntimeError:
                pass
            return
        with AudioFile(str(path), "w", SR, 2) as out:
            out.write(block)

    result = soak("open/write/close writers", cycles, step)
    result["files_left"] = sorted(p.name for p in folder.iterdir() if p.name.startswith("."))  # temp files
    return result


def plugins(cycles: int) -> dict:
    block = (np.random.default_rng(1).standard_normal((2, 2048)) * 0.1).astype(np.float32)
    impulse = np.exp(-np.arange(512) / 60.0).astype(np.float32)

    def step(i: int) -> None:
        board = stompbox.Pedalboard(
            [
                stompbox.Compressor(),
                stompbox.Reverb(),
                stompbox.Chorus(),
                stompbox.Convolution(impulse, sample_rate=SR),
                stompbox.PitchShift(semitones=3),
                stompbox.Resample(target_sample_rate=22050),
            ]
        )
        board.process(block, SR)
        del board

    return soak("built-in plugin create/process/delete", cycles, step)


def hosted(cycles: int) -> dict | None:
    if not os.path.isdir(HOSTED):
        return None
    block = (np.random.default_rng(2).standard_normal((2, 1024)) * 0.1).astype(np.float32)

    def step(i: int) -> None:
        plugin = stompbox.load_plugin(HOSTED)
        plugin.process(block, SR)
        del plugin

    return soak("hosted VST3 load/process/unload", cycles, step)


def blocks(cycles: int) -> dict:
    board = stompbox.Pedalboard([stompbox.Delay(delay_seconds=0.3, feedback=0.5), stompbox.Reverb()])
    rng = np.random.default_rng(3)
    block = (rng.standard_normal((2, 512)) * 0.1).astype(np.float32)

    def step(i: int) -> None:
        board.process(block, SR, reset=False)

    return soak("streamed 512-frame blocks", cycles, step)


def scaling(folder: Path, files: int = 8, seconds: float = 20.0) -> dict:
    rng = np.random.default_rng(4)
    sources = []
    for k in range(files):
        path = folder / f"long{k}.flac"
        with AudioFile(str(path), "w", SR, 2) as out:
            for _ in range(int(seconds)):
                out.write((rng.standard_normal((2, SR)) * 0.1).astype(np.float32))
        sources.append(path)

    def job(k: int) -> None:
        board = stompbox.Pedalboard([stompbox.Compressor(), stompbox.LowpassFilter(), stompbox.Reverb()])
        with AudioFile(str(sources[k])) as f, AudioFile(str(folder / f"done{k}.flac"), "w", SR, 2) as out:
            while (block := f.read(SR)).shape[1]:
                out.write(board.process(block, SR, reset=False))

    job(0)  # warm up (JIT caches, codecs)
    timings = {}
    for threads in (1, 2, 4):
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(job, range(files)))
        timings[threads] = time.perf_counter() - started
    audio_seconds = files * seconds
    return {
        "files": files,
        "seconds_of_audio": audio_seconds,
        "cores": os.cpu_count(),
        "wall_seconds": {str(t): round(s, 2) for t, s in timings.items()},
        "x_realtime": {str(t): round(audio_seconds / s, 1) for t, s in timings.items()},
        "speedup": {str(t): round(timings[1] / s, 2) for t, s in timings.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=int, default=5000)
    parser.add_argument("--writers", type=int, default=5000)
    parser.add_argument("--plugins", type=int, default=1000)
    parser.add_argument("--hosted", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=20000)
    parser.add_argument("--no-scaling", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    report: dict = {"phases": []}
    with tempfile.TemporaryDirectory(prefix="stompbox-soak-") as tmp:
        folder = Path(tmp)
        paths = make_files(folder)
        out_folder = folder / "out"
        out_folder.mkdir()
        phases = [
            lambda: readers(paths, args.readers),
            lambda: writers(out_folder, args.writers),
            lambda: plugins(args.plugins),
            lambda: hosted(args.hosted),
            lambda: blocks(args.blocks),
        ]
        for phase in phases:
            result = phase()
            if result is None:
                continue
            report["phases"].append(result)
            if not args.json:
                print(json.dumps(result), flush=True)
        if not args.no_scaling:
            report["scaling"] = scaling(folder)
            if not args.json:
                print(json.dumps(report["scaling"]), flush=True)
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
