"""Long runs stay flat: a bounded run of ``bench/soak.py`` in a fresh subprocess (open/read/close readers,
failing and succeeding writers, plugin create/process/delete, hosted VST3 load/unload when available, streamed
blocks): open file descriptors end where they were after the first 100 cycles, RSS within 5 % of it, and no
temporary file is left behind. The full-size run (5,000 readers and writers, 1,000 plugin cycles) is
``python bench/soak.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


def test_soak_keeps_memory_and_descriptors_flat() -> None:
    args = ["--readers", "800", "--writers", "300", "--plugins", "150", "--hosted", "150", "--blocks", "3000"]
    proc = subprocess.run(
        [sys.executable, str(SOAK), *args, "--no-scaling", "--json"], capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    phases = {p["phase"]: p for p in report["phases"]}
    assert len(phases) >= 4
    for name, phase in phases.items():
        assert phase["fds_end"] == phase["fds_at_100"], name
        assert abs(phase["rss_change_pct"]) <= 5.0, (name, phase)
    assert phases["open/write/close writers"]["files_left"] == []
