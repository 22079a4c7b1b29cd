"""Batch throughput: files per second through one chain, serial vs process pools vs thread pools.

Usage:
    python bench/batch.py [--files 200] [--seconds 2] [--repeat 2] [--chain talk|light] [--format flac]

A folder of --files stereo 44.1 kHz 16-bit WAV files (slices of the synthesised example music, --seconds each)
is written once; then each configuration renders all of them through the chain with
``stompbox.batch.process_files`` into a fresh folder (as WAV, or in --format), best of --repeat.
Configurations: in-process serial (``jobs=1``), a process pool of 1 and of 2 workers, a thread pool of 2 (the
Numba kernels release the GIL). The outputs of every configuration are checked to be byte-identical to the
serial ones. Figures: files/s and the speed-up over the 1-process pool. The machine is shared and noisy: quote
the ratios.

Then the command line end to end, as a user runs it: ``python -m stompbox batch IN OUT --chain FILE --jobs N`` for
N = 1 and 2 (alternating, best of --repeat), with the wall time of the whole command (interpreter start-up,
imports and Numba's set-up included) and the processing time the command reports itself. The start-up is the
same for any N, so it caps the whole command's speed-up on a short job (Amdahl): use --seconds to see longer
files amortise it.

The chains: ``talk`` = Distortion(drive_db=25) -> Delay(0.4 s, feedback 0.35) -> Reverb(room_size=0.75), the
command line's demo chain; ``light`` = Gain -> HighpassFilter (I/O-bound: shows pool overhead).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import soundfile as sf

import stompbox
from stompbox.batch import find_audio_files, process_files
from stompbox.examples import example_clip

SR = 44100


def make_chain(name: str) -> stompbox.Pedalboard:
    if name == "light":
        return stompbox.Pedalboard([stompbox.Gain(gain_db=-3), stompbox.HighpassFilter(cutoff_frequency_hz=80)])
    return stompbox.Pedalboard(
        [
            stompbox.Distortion(drive_db=25),
            stompbox.Delay(delay_seconds=0.4, feedback=0.35, mix=0.3),
            stompbox.Reverb(room_size=0.75),
        ]
    )


def make_files(folder: str, count: int, seconds: float) -> list[str]:
    music = example_clip(SR, 8.0)
    n = int(seconds * SR)
    rng = np.random.default_rng(0)
    for i in range(count):
        start = int(rng.integers(0, music.shape[1] - n)) if music.shape[1] > n else 0
        piece = np.resize(music[:, start:], (2, n)) if music.shape[1] - start < n else music[:, start : start + n]
        sf.write(os.path.join(folder, f"f{i:04d}.wav"), piece.T, SR, subtype="PCM_16")
    return find_audio_files(folder)


def run(inputs, out, chain, config: str, extension: str | None = None) -> float:
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    start = time.perf_counter()
    if config == "serial":
        report = process_files(inputs, out, chain, jobs=1, extension=extension)
    elif config.startswith("processes"):
        workers = int(config.split("x")[1])
        with concurrent.futures.ProcessPoolExecutor(workers) as pool:
            # warm the workers (imports, Numba cache loads) so the figure is steady-state throughput
            list(pool.map(_warm, [chain.to_dict()] * workers))
            start = time.perf_counter()
            report = process_files(inputs, out, chain, pool, extension=extension)
    else:
        workers = int(config.split("x")[1])
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            report = process_files(inputs, out, chain, pool, extension=extension)
    seconds = time.perf_counter() - start
    if report.failed:
        raise RuntimeError(f"{config}: {report.failed[0].input}: {report.failed[0].error}")
    return seconds


def run_cli(in_dir: str, out: str, chain_file: str, jobs: int, extension: str | None = None) -> tuple[float, float]:
    """Wall time of ``stompbox batch`` in a fresh interpreter, and the processing time it reports."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "stompbox", "batch", in_dir, out, "--chain", chain_file, "--jobs", str(jobs)]
    if extension:
        command += ["--format", extension]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    processed = re.search(r"in ([0-9.]+) s", done.stdout)
    assert processed, done.stdout
    return wall, float(processed.group(1))


def _warm(description) -> None:
    from stompbox.chains import from_dict

    board = from_dict(description)
    board(np.zeros((2, 4096), np.float32), SR)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--chain", choices=("talk", "light"), default="talk")
    parser.add_argument("--format", default=None, help="output format (default: WAV, as the inputs)")
    args = parser.parse_args()
    chain = make_chain(args.chain)
    _warm(chain.to_dict())  # this process's kernels, for the serial run
    configs = ["serial", "processes x1", "processes x2", "threads x2"]
    with tempfile.TemporaryDirectory(prefix="stompbox-bench-batch-") as tmp:
        os.makedirs(os.path.join(tmp, "in"))
        inputs = make_files(os.path.join(tmp, "in"), args.files, args.seconds)
        audio_seconds = args.files * args.seconds
        results = {}
        for config in configs:
            out = os.path.join(tmp, config.replace(" ", ""))
            results[config] = min(run(inputs, out, chain, config, args.format) for _ in range(args.repeat))
        chain_file = os.path.join(tmp, "chain.json")
        chain.save(chain_file)
        cli: dict[int, tuple[float, float]] = {}
        for _ in range(args.repeat):
            for jobs in (1, 2):
                wall, busy = run_cli(
                    os.path.join(tmp, "in"), os.path.join(tmp, f"cli{jobs}"), chain_file, jobs, args.format
                )
                best = cli.get(jobs, (float("inf"), float("inf")))
                cli[jobs] = (min(best[0], wall), min(best[1], busy))
        reference = os.path.join(tmp, "serial")
        for config in [*configs[1:], "cli 1", "cli 2"]:
            other = os.path.join(tmp, config.replace(" ", ""))
            names = sorted(os.listdir(reference))
            _, mismatch, errors = filecmp.cmpfiles(reference, other, names, shallow=False)
            assert not mismatch and not errors, f"{config}: outputs differ from serial: {mismatch[:3]}"
    print(
        f"{args.files} files x {args.seconds:g} s stereo, chain '{args.chain}', to {args.format or 'wav'}, "
        f"{os.cpu_count()} CPUs"
    )
    print(f"{'configuration':<14} {'files/s':>8} {'x realtime':>11} {'vs 1 process':>13}")
    base = results["processes x1"]
    for config, seconds in results.items():
        rate = args.files / seconds
        print(f"{config:<14} {rate:8.1f} {audio_seconds / seconds:11.0f} {base / seconds:12.2f}x")
    print("outputs of every configuration and command are byte-identical to the serial run")
    print(f"{'command line':<14} {'wall s':>8} {'processing s':>13}")
    for jobs, (wall, busy) in cli.items():
        print(f"--jobs {jobs:<7} {wall:8.2f} {busy:13.2f}")
    (w1, b1), (w2, b2) = cli[1], cli[2]
    print(f"--jobs 2 over --jobs 1: whole command {w1 / w2:.2f}x, processing {b1 / b2:.2f}x")


if __name__ == "__main__":
    main()
