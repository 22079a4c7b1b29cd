"""A short, bounded run of each atheris harness (``fuzz/``): a few hundred inputs per target, in a subprocess
with a timeout, must finish without a crash, a hang or an unexpected exception. The long runs are
``python fuzz/run.py`` (100,000 inputs per target, a new random seed each time): they look for new bugs, and
what they find becomes a corpus case or a regression test.

The seed here is fixed, so that this test checks the harnesses and the committed corpus the same way every
time: a test suite that fails at random on a bug nobody has seen yet is not a specification. (A seed-less run
in CI found the negative-seek bug of ``test_findings.py``, after it had passed many times.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

RUNNER = Path(__file__).resolve().parents[2] / "fuzz" / "run.py"


@pytest.mark.parametrize("target", ["audiofile", "chains", "grammar", "limits"])
def test_short_fuzz_run(target: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(RUNNER), "--runs", "400", "--timeout", "20", "--no-save", "--seed", "1", target],
        capture_output=True,
        text=True,
        timeout=120,
    )
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert len(results) == 1 and results[0]["findings"] == []
    assert results[0]["executions"] >= 400
