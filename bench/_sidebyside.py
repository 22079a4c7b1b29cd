"""Side-by-side timing shared by the benchmarks: stompbox against pedalboard on the same job, quiet and with the
machine's second core kept busy.

On a 2-core machine a job that only wins with an idle second core (a read-ahead or encode thread) is not a win on
a loaded server. :func:`second_core_busy` keeps one core spinning (a separate process, so it does not hold this
process's GIL) while the timings run. :func:`ratios` alternates the two libraries round by round, so both see
the same load, and reports the median ratio of wall time and of CPU time (``time.process_time``: this process's
threads only, so the spinner and other processes on the machine do not count; for a job on one thread it is the
steadiest figure on a shared machine).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@contextlib.contextmanager
def second_core_busy() -> Iterator[None]:
    """Keep one core busy (a process spinning in a loop) while the ``with`` block runs."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True:\n    pass"])
    try:
        time.sleep(0.2)  # let it start spinning
        yield
    finally:
        spinner.kill()
        spinner.wait()


@dataclass
class SideBySide:
    """Median ratios (stompbox's throughput over pedalboard's: >= 1 means stompbox is at least as fast) and each
    library's best throughput as a multiple of real time."""

    wall: float
    cpu: float
    ours_x: float
    theirs_x: float


def _timed(job: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    job()
    return time.perf_counter() - wall, time.process_time() - cpu


def ratios(ours: Callable[[], object], theirs: Callable[[], object], seconds: float, rounds: int) -> SideBySide:
    """Time ``ours`` and ``theirs`` (each doing ``seconds`` of audio) in ``rounds`` alternating rounds."""
    walls, cpus = [], []
    best_ours = best_theirs = float("inf")
    for _ in range(rounds):
        ours_wall, ours_cpu = _timed(ours)
        theirs_wall, theirs_cpu = _timed(theirs)
        walls.append(theirs_wall / ours_wall)
        cpus.append(theirs_cpu / max(ours_cpu, 1e-9))
        best_ours, best_theirs = min(best_ours, ours_wall), min(best_theirs, theirs_wall)
    walls.sort()
    cpus.sort()
    return SideBySide(walls[len(walls) // 2], cpus[len(cpus) // 2], seconds / best_ours, seconds / best_theirs)


HEADER = f"{'job':<24}{'sb x':>8}{'pb x':>8}{'quiet wall':>12}{'quiet cpu':>11}{'loaded wall':>13}{'loaded cpu':>12}"


def row(label: str, ours: Callable[[], object], theirs: Callable[[], object], seconds: float, rounds: int) -> str:
    """One line of :data:`HEADER`: the ratios quiet, then with the second core busy."""
    quiet = ratios(ours, theirs, seconds, rounds)
    with second_core_busy():
        loaded = ratios(ours, theirs, seconds, rounds)
    return (
        f"{label:<24}{quiet.ours_x:>8.0f}{quiet.theirs_x:>8.0f}{quiet.wall:>12.2f}{quiet.cpu:>11.2f}"
        f"{loaded.wall:>13.2f}{loaded.cpu:>12.2f}"
    )
