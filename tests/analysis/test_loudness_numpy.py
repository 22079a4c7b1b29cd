"""The loudness meter's NumPy filters (``LoudnessMeter(compiled=False)``) give the compiled kernels' figures, and
a short file is measured without loading Numba (its start-up took longer than the measurement)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

from stompbox.analysis.loudness import LoudnessMeter

loudness_module = importlib.import_module("stompbox.analysis.loudness")


@pytest.mark.parametrize("rate", [8000, 44100, 48000, 96000])
@pytest.mark.parametrize("channels", [1, 2, 6])
def test_numpy_filters_give_the_kernels_figures(rate, channels):
    rng = np.random.default_rng(rate + channels)
    x = (0.1 * rng.standard_normal((channels, int(rate * 4.3)))).astype(np.float32)
    x[:, rate : 2 * rate] *= 0.001  # a quiet second: gating and a long decay of the filters' state
    x[0, rate // 3] = 0.99  # a peak between samples
    results, energies = [], []
    for compiled in (True, False):
        meter = LoudnessMeter(rate, channels, compiled=compiled)
        for start in range(0, x.shape[1], 7777):  # blocks that cut segments and filter blocks anywhere
            meter.add(x[:, start : start + 7777], layout="channels-first")
        results.append(meter.result())
        energies.append(meter.segment_energies())
    ours, theirs = results[1], results[0]
    for name in ("integrated", "momentary_max", "short_term_max", "loudness_range", "true_peak", "sample_peak"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), abs=1e-9), name
    # a segment where the loud part's filter transient decays into the quiet one: 2e-8 apart (1e-7 dB)
    np.testing.assert_allclose(energies[1], energies[0], rtol=1e-6, atol=1e-18)


def test_a_short_file_is_measured_without_numba(tmp_path):
    from stompbox.io import AudioFile

    path = tmp_path / "short.wav"
    t = np.arange(48000 * 2) / 48000
    with AudioFile(str(path), "w", 48000, 2) as f:
        f.write(np.stack([0.1 * np.sin(2 * np.pi * 1000 * t)] * 2).astype(np.float32))
    code = (
        "import sys; from stompbox.analysis.loudness import loudness_of_file; "
        f"r = loudness_of_file({str(path)!r}); print(round(r.integrated, 3), 'numba' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    level, numba = done.stdout.split()
    assert numba == "False"
    assert float(level) == pytest.approx(-20.0, abs=0.2)  # a 1 kHz sine at -20 dBFS peak in both channels: -20 LUFS
