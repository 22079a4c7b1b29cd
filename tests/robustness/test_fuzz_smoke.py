"""A short, bounded run of each atheris harness (``fuzz/``): a few hundred inputs per target, in a subprocess
with a timeout, must finish without a crash, a hang or an unexpected exception. The long runs are
``python fuzz/run.py`` (100,000 inputs per target)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

RUNNER = Path(__file__).resolve().parents[2] / "fuzz" / "run.py"


@pytest.mark.parametrize("target", ["audiofile", "chains", "grammar"])
def test_short_fuzz_run(target: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(RUNNER), "--runs", "400", "--timeout", "20", "--no-save", target],
        capture_output=True,
        text=True,
        timeout=120,
    )
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert len(results) == 1 and results[0]["findings"] == []
    assert results[0]["executions"] >= 400
