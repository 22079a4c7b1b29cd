"""Audio file I/O throughput, stompbox against pedalboard and soundfile, on the same files in one run.

Usage:
    python bench/io.py [--seconds 60] [--repeat 3]      # throughput table, then each job again with a core loaded
    python bench/io.py --no-load                         # the first run only
    python bench/io.py --cpu                             # CPU time instead of wall time (a shared machine)
    python bench/io.py --memory [--hours 1]              # peak RSS of a chunked read + re-write job
    python bench/io.py --encode [--seconds 20]           # MP3/Ogg encode, quiet and second core busy

Throughput: the test files (stereo 44.1 kHz, the synthesised example music looped to --seconds) are written
once as WAV16, FLAC, MP3 and OGG; then, for each library, best of --repeat: decode whole, decode in 4096-frame
chunks and in 1-second chunks, encode the same array, 200 random seeks each followed by a 1024-frame read, 200
crops (a seek and four 4096-frame reads, as a training loader takes random excerpts), the seeks and crops again
in the FLAC as stompbox writes it (with a seek table; the others are libsndfile's, without), and a full read through
``resampled_to(48000)`` (soundfile's column is ``soundfile`` decode + one-shot ``soxr.resample``). Figures are
multiples of real time (higher is faster); ``sb/pb`` is stompbox over pedalboard (>= 1.0: stompbox faster).

Encode (``--encode``): MP3 and Ogg encode ratios, quiet and with the second core kept busy by a spinning process,
as wall time and as this process's CPU time (median of alternating rounds; see ``bench/_sidebyside.py``).

Loaded run (``sb/pb loaded``): each job is measured again, for both libraries, while a busy process (a Python
spin loop) is pinned to the last CPU, as on a server whose other core has work of its own: a decode that wins
only with an idle second core does not win there. The benchmark itself is not pinned. Its x-realtime figures
are not printed, only the ratio, beside the first run's.

``--cpu`` times each job by the process's CPU time (all its threads) instead of the wall clock. On a machine
shared with other work, a short job's wall time is mostly time spent waiting for a core (200 WAV seeks take
about 2 ms of CPU, and their best wall time of three varied 2-10x run to run with eight other processes on two
cores); its CPU time is steady to a few percent. Two-thread decodes cost more CPU than they save in wall time,
so their rows then say what the decode costs a server whose cores are all busy.

Memory: each job runs in its own subprocess and reports its peak RSS (``VmHWM``) after the job minus that after
its imports: read a --hours long stereo WAV in 1-second chunks and write each chunk to a new WAV.
The machine is shared and noisy: quote the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np
import soundfile as sf

SR = 44100
FORMATS = {"wav": "PCM_16", "flac": "PCM_16", "mp3": "MPEG_LAYER_III", "ogg": "VORBIS"}
LIBRARIES = ("stompbox", "pedalboard", "soundfile")


def _audiofile(library: str):
    if library == "stompbox":
        from stompbox.io import AudioFile
    else:
        from pedalboard.io import AudioFile
    return AudioFile


def make_files(folder: str, seconds: float) -> tuple[np.ndarray, dict[str, str]]:
    from stompbox.examples import example_clip

    clip = example_clip(SR, 8.0)
    reps = int(np.ceil(seconds / 8.0))
    audio = np.ascontiguousarray(np.tile(clip, reps)[:, : int(seconds * SR)])
    paths = {}
    for ext, subtype in FORMATS.items():
        path = os.path.join(folder, f"bench.{ext}")
        with sf.SoundFile(path, "w", SR, 2, subtype=subtype) as f:
            for i in range(0, audio.shape[1], 65536):  # chunked: large Vorbis writes crash libvorbis
                f.write(audio[:, i : i + 65536].T)
        paths[ext] = path
    return audio, paths


#: the clock of best_time: wall time, or the process's CPU time (--cpu)
CLOCK: Callable[[], float] = time.perf_counter


def best_time(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = CLOCK()
        fn()
        best = min(best, CLOCK() - start)
    return best


# -- jobs: each returns a callable doing the work once ----------------------------------------------------
def job_decode(library: str, path: str) -> Callable[[], object]:
    if library == "soundfile":
        return lambda: sf.read(path, dtype="float32", always_2d=True)
    AudioFile = _audiofile(library)

    def run() -> None:
        with AudioFile(path) as f:
            f.read(f.frames)

    return run


def job_chunked(library: str, path: str, size: int = 4096) -> Callable[[], object]:
    def run() -> None:
        if library == "soundfile":
            with sf.SoundFile(path) as f:
                while len(f.read(size, dtype="float32")):
                    pass
            return
        with _audiofile(library)(path) as f:
            while f.read(size).shape[1]:
                pass

    return run


def job_encode(library: str, ext: str, audio: np.ndarray, folder: str) -> Callable[[], object]:
    out = os.path.join(folder, f"{library}-out.{ext}")

    def run() -> None:
        if library == "soundfile":
            with sf.SoundFile(out, "w", SR, 2, subtype=FORMATS[ext]) as f:
                for i in range(0, audio.shape[1], 65536):
                    f.write(audio[:, i : i + 65536].T)
            return
        with _audiofile(library)(out, "w", SR, 2) as f:
            if library == "pedalboard" and ext == "ogg":
                for i in range(0, audio.shape[1], 65536):  # its big Vorbis writes hit the libvorbis crash too
                    f.write(audio[:, i : i + 65536])
            else:
                f.write(audio)

    return run


def job_seek(library: str, path: str, frames: int, reads: int = 1, size: int = 1024) -> Callable[[], object]:
    """200 random seeks, each followed by ``reads`` reads of ``size`` frames (4 x 4096: a training crop)."""
    positions = np.random.default_rng(1).integers(0, frames - reads * size, 200)

    def run() -> None:
        if library == "soundfile":
            with sf.SoundFile(path) as f:
                for p in positions:
                    f.seek(int(p))
                    for _ in range(reads):
                        f.read(size, dtype="float32")
            return
        with _audiofile(library)(path) as f:
            for p in positions:
                f.seek(int(p))
                for _ in range(reads):
                    f.read(size)

    return run


def job_resample(library: str, path: str) -> Callable[[], object]:
    def run() -> None:
        if library == "soundfile":
            import soxr

            x, rate = sf.read(path, dtype="float32", always_2d=True)
            soxr.resample(x, rate, 48000, "HQ")
            return
        with _audiofile(library)(path) as f:
            r = f.resampled_to(48000)
            while r.read(48000).shape[1]:
                pass

    return run


def available(library: str) -> bool:
    try:
        if library != "soundfile":
            _audiofile(library)
        return True
    except ImportError:
        return False


class BusyCore:
    """A spinning process pinned to the last CPU while the ``with`` block runs (nothing on a one-CPU machine)."""

    def __init__(self) -> None:
        self.cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> BusyCore:
        if len(self.cpus) >= 2:
            self._process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            os.sched_setaffinity(self._process.pid, {self.cpus[-1]})
            time.sleep(0.05)  # running before the first measurement
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()


def _speeds(
    libs: list[str], label: str, make: Callable[[str], Callable[[], object]], seconds: float, repeat: int
) -> dict[str, float]:
    speeds: dict[str, float] = {}
    for lib in libs:
        try:
            speeds[lib] = seconds / best_time(make(lib), repeat)
        except Exception as error:  # noqa: BLE001 - one library failing a job is a result
            print(f"  ({lib} failed {label}: {' '.join(str(error).split())[:80]})", file=sys.stderr)
    return speeds


def _ratio(speeds: dict[str, float]) -> str:
    if "stompbox" in speeds and "pedalboard" in speeds:
        return f"{speeds['stompbox'] / speeds['pedalboard']:>8.2f}"
    return f"{'-':>8}"


def throughput(seconds: float, repeat: int, loaded: bool = True) -> None:
    libs = [lib for lib in LIBRARIES if available(lib)]
    loaded = loaded and len(BusyCore().cpus) >= 2
    clock = "CPU time" if CLOCK is time.process_time else "wall time"
    print(f"# {seconds:g} s stereo 44.1 kHz, best of {repeat} by {clock}; x realtime (higher is faster)")
    if loaded:
        print("# sb/pb loaded: the same job with a busy process pinned to the last CPU (both libraries)")
    print(
        f"{'job':<22}"
        + "".join(f"{lib:>12}" for lib in LIBRARIES)
        + f"{'sb/pb':>8}"
        + (f"{'sb/pb loaded':>14}" if loaded else "")
    )
    with tempfile.TemporaryDirectory() as folder:
        audio, paths = make_files(folder, seconds)
        rows: list[tuple[str, Callable[[str], Callable[[], object]]]] = []
        for ext, path in paths.items():
            rows.append((f"decode {ext}", lambda lib, p=path: job_decode(lib, p)))
        for ext, path in paths.items():
            rows.append((f"chunked decode {ext}", lambda lib, p=path: job_chunked(lib, p)))
        for ext, path in paths.items():
            rows.append((f"1 s chunks {ext}", lambda lib, p=path: job_chunked(lib, p, SR)))
        for ext in paths:
            rows.append((f"encode {ext}", lambda lib, e=ext: job_encode(lib, e, audio, folder)))
        for ext, path in paths.items():
            rows.append((f"200 seeks {ext}", lambda lib, p=path: job_seek(lib, p, audio.shape[1])))
        for ext, path in paths.items():
            rows.append((f"200 crops {ext}", lambda lib, p=path: job_seek(lib, p, audio.shape[1], 4, 4096)))
        # the same FLAC as stompbox writes it, with a seek table (the files above come from libsndfile: none)
        from stompbox.io import AudioFile

        tabled = os.path.join(folder, "tabled.flac")
        with AudioFile(tabled, "w", SR, audio.shape[0]) as f:
            f.write(audio)
        rows.append(("200 seeks flac+table", lambda lib: job_seek(lib, tabled, audio.shape[1])))
        rows.append(("200 crops flac+table", lambda lib: job_seek(lib, tabled, audio.shape[1], 4, 4096)))
        for ext in ("wav", "flac"):
            rows.append((f"resampled_to 48k {ext}", lambda lib, p=paths[ext]: job_resample(lib, p)))
        for label, make in rows:
            speeds = _speeds(libs, label, make, seconds, repeat)
            cells = "".join(f"{speeds[lib]:>12.0f}" if lib in speeds else f"{'-':>12}" for lib in LIBRARIES)
            line = f"{label:<22}{cells}{_ratio(speeds)}"
            if loaded:
                with BusyCore():
                    line += f"{_ratio(_speeds(libs, label, make, seconds, repeat)):>14}"
            print(line, flush=True)


def codec_encode(seconds: float, rounds: int) -> None:
    """Encode MP3 and Ogg Vorbis (each library's defaults: MP3 at 320 kbps, Vorbis at its top quality) to a path,
    stompbox against pedalboard, quiet and with the second core busy (see ``_sidebyside``)."""
    from _sidebyside import HEADER, row

    print(f"# encode {seconds:g} s stereo 44.1 kHz to a file; stompbox/pedalboard, median of {rounds} rounds")
    print(HEADER)
    with tempfile.TemporaryDirectory() as folder:
        audio = make_files(folder, seconds)[0]
        for ext in ("mp3", "ogg"):
            ours, theirs = job_encode("stompbox", ext, audio, folder), job_encode("pedalboard", ext, audio, folder)
            ours(), theirs()  # imports and first-call costs outside the timing
            print(row(f"encode {ext}", ours, theirs, seconds, rounds), flush=True)


_MEMORY_JOB = """
import json, sys
library, source, target = sys.argv[1:4]
if library == "stompbox":
    from stompbox.io import AudioFile
else:
    from pedalboard.io import AudioFile
def peak_kib():  # VmHWM: ru_maxrss would include the peak of the process that started this one
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
base = peak_kib()
with AudioFile(source) as f, AudioFile(target, "w", f.samplerate, f.num_channels) as o:
    rate = int(f.samplerate)
    while True:
        block = f.read(rate)
        if block.shape[1] == 0:
            break
        o.write(block)
peak = peak_kib()
print(json.dumps({"peak_mb": (peak - base) / 1024.0}))
"""


def memory(hours: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "long.wav")
        rng = np.random.default_rng(0)
        minute = (rng.standard_normal((SR * 60, 2)) * 3000).astype(np.int16)
        with sf.SoundFile(source, "w", SR, 2, subtype="PCM_16") as f:
            for _ in range(int(hours * 60)):
                f.write(minute)
        print(f"# read + re-write {hours:g} h stereo 44.1 kHz WAV16 in 1 s chunks; peak RSS above baseline")
        for lib in ("stompbox", "pedalboard"):
            if not available(lib):
                continue
            target = os.path.join(folder, f"{lib}.wav")
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", _MEMORY_JOB, lib, source, target], capture_output=True, text=True
            )
            took = time.perf_counter() - start
            if done.returncode:
                print(f"{lib:<12} failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            peak = json.loads(done.stdout.strip().splitlines()[-1])["peak_mb"]
            print(f"{lib:<12} {peak:8.1f} MB   ({took:.1f} s)")
            os.remove(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory", action="store_true", help="measure peak RSS of a long chunked job instead")
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument(
        "--encode", action="store_true", help="MP3/Ogg encode ratios only, quiet and with the second core busy"
    )
    parser.add_argument("--no-load", action="store_true", help="skip the run with a busy process on the last CPU")
    parser.add_argument("--cpu", action="store_true", help="time jobs by process CPU time, not wall time")
    args = parser.parse_args()
    if args.cpu:
        global CLOCK
        CLOCK = time.process_time
    if args.encode:
        codec_encode(min(args.seconds, 20.0), max(args.repeat, 3))
    elif args.memory:
        memory(args.hours)
    else:
        throughput(args.seconds, args.repeat, loaded=not args.no_load)


if __name__ == "__main__":
    main()
