"""Compressor, Limiter, NoiseGate and BrickwallLimiter against pedalboard 0.9.26.

Each case runs the music-like (stereo) and speech-like (mono) test signals through both libraries; the RMS of
the difference must be at least 60 dB below the RMS of pedalboard's output. Measured when written: Compressor
-119 to -145 dB, Limiter -119 to -155 dB, NoiseGate below -130 dB, BrickwallLimiter -98 dB or better in
sample-peak mode and -83 to -88 dB in true-peak mode (our 4x sidechain uses its own half-band filters, so its
peak estimates differ from pedalboard's by a hair).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import stompbox
from _audio import SR, diff_db, music, speech


@cache
def _signal(kind: str, sr: int) -> np.ndarray:
    return music(2.0, sr=sr) if kind == "music" else speech(2.0, sr=sr)


CASES = [
    ("Compressor", {}, SR),
    ("Compressor", {"threshold_db": -20, "ratio": 4}, SR),
    ("Compressor", {"threshold_db": -30, "ratio": 20, "attack_ms": 0.1, "release_ms": 10}, SR),
    ("Compressor", {"threshold_db": -20, "ratio": 2, "attack_ms": 30, "release_ms": 500}, SR),
    ("Compressor", {"threshold_db": -40, "ratio": 100, "attack_ms": 0, "release_ms": 0}, SR),
    ("Compressor", {"threshold_db": -18, "ratio": 6, "attack_ms": 3, "release_ms": 80}, 48000),
    ("Limiter", {}, SR),
    ("Limiter", {"threshold_db": -3, "release_ms": 50}, SR),
    ("Limiter", {"threshold_db": -30, "release_ms": 500}, SR),
    ("Limiter", {"threshold_db": 0, "release_ms": 1}, SR),
    ("Limiter", {"threshold_db": -6}, 48000),
    ("NoiseGate", {}, SR),
    ("NoiseGate", {"threshold_db": -30, "ratio": 10}, SR),
    ("NoiseGate", {"threshold_db": -20, "ratio": 2, "attack_ms": 5, "release_ms": 300}, SR),
    ("NoiseGate", {"threshold_db": -50, "ratio": 100, "attack_ms": 0, "release_ms": 0}, SR),
    ("NoiseGate", {"threshold_db": -25, "ratio": 4}, 48000),
    ("BrickwallLimiter", {"ceiling_db": -6}, SR),
    ("BrickwallLimiter", {"ceiling_db": -12, "release_ms": 30, "lookahead_ms": 1}, SR),
    ("BrickwallLimiter", {"ceiling_db": -20, "release_ms": 1000, "lookahead_ms": 100}, SR),
    ("BrickwallLimiter", {"ceiling_db": -6, "release_ms": 0.01, "lookahead_ms": 0.01}, SR),
    ("BrickwallLimiter", {"ceiling_db": -12, "true_peak": True}, SR),
    ("BrickwallLimiter", {"ceiling_db": -20, "release_ms": 20, "true_peak": True}, SR),
    ("BrickwallLimiter", {"ceiling_db": -9}, 48000),
]


@pytest.mark.parametrize("signal", ["music", "speech"])
@pytest.mark.parametrize(("name", "params", "sr"), CASES, ids=[f"{n}-{p}-{sr}" for n, p, sr in CASES])
def test_matches_pedalboard(pb, name, params, sr, signal):
    x = _signal(signal, sr)
    ours = getattr(stompbox, name)(**params)(x, sr)
    theirs = getattr(pb, name)(**params)(x, sr)
    assert ours.shape == theirs.shape == x.shape
    assert diff_db(ours, theirs) <= -60


@pytest.mark.parametrize("name", ["Compressor", "Limiter", "NoiseGate"])
def test_parameter_change_while_streaming(pb, name):
    """State carries over a parameter change with reset=False; the Limiter's makeup gain ramps over 1 ms."""
    x = _signal("music", SR)
    params = {
        "Compressor": ("threshold_db", -30, -15),
        "Limiter": ("threshold_db", -20, -8),
        "NoiseGate": ("threshold_db", -40, -20),
    }
    attr, first, second = params[name]
    outputs = []
    for lib in (stompbox, pb):
        plugin = getattr(lib, name)(**{attr: first})
        if name != "Limiter":
            plugin.ratio = 4
        a = plugin.process(x[:, :30000], SR, reset=False)
        setattr(plugin, attr, second)
        b = plugin.process(x[:, 30000:], SR, reset=False)
        outputs.append(np.concatenate([a, b], axis=1))
    assert diff_db(*outputs) <= -60


@pytest.mark.parametrize("true_peak", [False, True])
def test_brickwall_streaming_lengths_match(pb, true_peak):
    """Streaming with reset=False withholds the same latency as pedalboard, and gives the same samples."""
    x = _signal("music", SR)
    outputs = []
    for lib in (stompbox, pb):
        plugin = lib.BrickwallLimiter(ceiling_db=-10, true_peak=true_peak)
        pieces = [plugin.process(x[:, i : i + 4096], SR, reset=False) for i in range(0, x.shape[1], 4096)]
        outputs.append(pieces)
    ours, theirs = outputs
    assert [p.shape for p in ours] == [p.shape for p in theirs]
    assert ours[0].shape[1] == 4096 - (220 + 60 * true_peak)
    assert diff_db(np.concatenate(ours, axis=1), np.concatenate(theirs, axis=1)) <= -60


@pytest.mark.parametrize("name", ["Compressor", "Limiter", "NoiseGate", "BrickwallLimiter"])
def test_same_defaults_and_repr_values(pb, name):
    ours, theirs = getattr(stompbox, name)(), getattr(pb, name)()
    for param in type(ours).parameter_specs():
        assert float(getattr(ours, param)) == pytest.approx(float(getattr(theirs, param)))
