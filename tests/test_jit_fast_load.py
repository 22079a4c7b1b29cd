"""Kernels loaded from Numba's cache without its full target set-up (``stompbox._base.jit._fast_cache_load``).

A fresh interpreter with a warm cache runs every built-in effect (default parameters, mono and stereo, a few
modes, automated parameters), the loudness meter, the compiled PCM conversions and a hosted VST3 (when
zam-plugins are installed). With the fast load (the default) the process must never set up Numba's whole
compilation target, and every output must equal, bit for bit, the same script's with
``STOMPBOX_NUMBA_FAST_LOAD=0`` (Numba's own way). Machine code linked against a symbol the fast load did not
register would crash here, not in a user's process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

SCRIPT = r"""
import json, sys
import numpy as np
import stompbox as sb
from stompbox.core.automation import LFO, Envelope

SR = 44100
rng = np.random.default_rng(7)
stereo = (rng.standard_normal((2, SR // 2)) * 0.3).astype(np.float32)
mono = stereo[:1].copy()
ir = (rng.standard_normal((2, 3000)) * np.exp(-np.arange(3000) / 400.0)).astype(np.float32)
boards = {
    "defaults": [getattr(sb, name)() for name in (
        "Gain", "Invert", "Clipping", "Distortion", "Bitcrush", "LowpassFilter", "HighpassFilter",
        "LowShelfFilter", "HighShelfFilter", "PeakFilter", "LadderFilter", "Delay", "Compressor", "Limiter",
        "NoiseGate", "BrickwallLimiter", "Reverb", "Chorus", "Phaser", "Resample", "PitchShift",
    )],
    "modes": [
        sb.LadderFilter(mode=sb.LadderFilter.Mode.BPF12, drive=3.0),
        sb.LadderFilter(mode=sb.LadderFilter.Mode.HPF24),
        sb.Delay(delay_seconds=0.01, feedback=0.5, mix=0.5),
        sb.Reverb(freeze_mode=1.0),
        sb.Resample(target_sample_rate=8000, quality=sb.Resample.Quality.Linear),
        sb.Resample(target_sample_rate=11025, quality=sb.Resample.Quality.WindowedSinc),
        sb.Convolution(ir, sample_rate=SR),
        sb.Bitcrush(bit_depth=4),
    ],
    "automated": [
        sb.Gain(gain_db=Envelope([(0.0, -20.0), (0.5, 6.0)])),
        sb.LowpassFilter(cutoff_frequency_hz=Envelope([(0.0, 200.0), (0.5, 8000.0)], "exponential")),
        sb.Delay(delay_seconds=LFO("sine", 2.0, 0.002, 0.01), mix=0.5),
        sb.Compressor(threshold_db=LFO("triangle", 1.0, 10.0, -20.0)),
    ],
}
out = {}
for name, plugins in boards.items():
    for i, plugin in enumerate(plugins):
        for label, audio in (("stereo", stereo), ("mono", mono)):
            y = sb.Pedalboard([plugin])(audio, SR)
            out[f"{name}/{i}/{type(plugin).__name__}/{label}"] = float(np.sum(np.abs(y.astype(np.float64)))), y.shape
stretched = sb.time_stretch(stereo, SR, 1.5)
out["time_stretch"] = float(np.sum(np.abs(stretched.astype(np.float64)))), stretched.shape
from stompbox.analysis.loudness import loudness
result = loudness(stereo, SR)
out["loudness"] = result.integrated, result.true_peak
import io
from stompbox.io import AudioFile
for subtype in (16, 24, 32):
    buffer = io.BytesIO()
    with AudioFile(buffer, "w", SR, 2, bit_depth=subtype, format="wav") as f:
        f.write(stereo)
    buffer.seek(0)
    with AudioFile(buffer) as f:
        back = f.read(f.frames)
    out[f"wav{subtype}"] = float(np.sum(np.abs(back.astype(np.float64)))), back.shape
import os
if os.path.isdir("/usr/lib/vst3/ZamCompX2.vst3"):  # a hosted VST3 runs its blocks through a compiled kernel
    plugin = sb.load_plugin("/usr/lib/vst3/ZamCompX2.vst3")
    y = plugin(stereo, SR)
    out["vst3"] = float(np.sum(np.abs(y.astype(np.float64)))), y.shape
refreshed = "numba.np.polynomial.polynomial_core" in sys.modules  # imported only by the target's set-up
print(json.dumps({"refreshed": refreshed, "out": out}))
"""


def _run(fast: bool) -> dict:
    env = dict(os.environ, STOMPBOX_NUMBA_FAST_LOAD="1" if fast else "0")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cached_kernels_load_without_the_target_set_up_and_compute_the_same():
    warming = _run(fast=True)  # compiles whatever this checkout has not compiled yet: a miss goes Numba's way
    fast = _run(fast=True)
    plain = _run(fast=False)
    assert warming["out"] == fast["out"]
    assert not fast["refreshed"], "a warm-cache run set up Numba's whole target: the fast load was not used"
    assert plain["refreshed"]
    assert fast["out"].keys() == plain["out"].keys()
    for key, value in plain["out"].items():
        assert fast["out"][key] == value, key
    # the outputs are real audio, not silence
    assert all(np.isfinite(v[0]) for v in fast["out"].values())
    assert fast["out"]["defaults/16/Reverb/stereo"][0] > 100.0
