"""Bounded memory for any input (issue 17): no read of any file of the robustness corpus (made by
``tests/data/make_corrupt.py``) raises the process's peak RSS by more than 200 MB, whatever its header,
timestamps or packet sizes claim. Each file is read in a worker process as ``_foreign.read_peaks_mb`` says; the
differential suite's files are measured the same way in tests/io/test_differential.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import _foreign

LIMIT_MB = 200.0
DATA = Path(__file__).resolve().parents[1] / "data"

pytestmark = pytest.mark.skipif(not _foreign.can_measure_peak(), reason="needs Linux /proc/self/clear_refs")


def test_reads_of_the_robustness_corpus_stay_bounded(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_corrupt", DATA / "make_corrupt.py")
    make_corrupt = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(make_corrupt)  # type: ignore[union-attr]
    made = make_corrupt.write_cases(tmp_path)
    paths = [str(tmp_path / name) for name, _ in made]
    growth = _foreign.read_peaks_mb(paths)
    assert len(growth) == len(paths)
    worst = max(growth, key=growth.__getitem__)
    assert growth[worst] < LIMIT_MB, f"{worst}: {growth[worst]:.0f} MB"
