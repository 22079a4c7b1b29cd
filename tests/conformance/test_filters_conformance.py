"""Low/high-pass, shelf, peak and ladder filters against pedalboard 0.9.26 (``diff_db <= -60``)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import stompbox
from _audio import SR, diff_db, music, speech


@functools.cache
def signal(kind: str, sr: int) -> np.ndarray:
    x = music(1.0, sr=sr) if kind == "music" else speech(1.0, sr=sr)
    x.setflags(write=False)
    return x


CASES = [
    ("LowpassFilter", {"cutoff_frequency_hz": 50.0}),
    ("LowpassFilter", {"cutoff_frequency_hz": 1000.0}),
    ("LowpassFilter", {"cutoff_frequency_hz": 5.0}),
    ("LowpassFilter", {"cutoff_frequency_hz": 21000.0}),
    ("HighpassFilter", {"cutoff_frequency_hz": 50.0}),
    ("HighpassFilter", {"cutoff_frequency_hz": 2500.0}),
    ("HighpassFilter", {"cutoff_frequency_hz": 5.0}),
    ("HighpassFilter", {"cutoff_frequency_hz": 20000.0}),
    ("LowShelfFilter", {}),
    ("LowShelfFilter", {"cutoff_frequency_hz": 200.0, "gain_db": 12.0}),
    ("LowShelfFilter", {"cutoff_frequency_hz": 30.0, "gain_db": -24.0, "q": 0.3}),
    ("LowShelfFilter", {"cutoff_frequency_hz": 30000.0, "gain_db": 6.0, "q": 4.0}),  # clamped below Nyquist
    ("HighShelfFilter", {"cutoff_frequency_hz": 4000.0, "gain_db": -12.0}),
    ("HighShelfFilter", {"cutoff_frequency_hz": 100.0, "gain_db": 18.0, "q": 2.0}),
    ("HighShelfFilter", {"cutoff_frequency_hz": 12000.0, "gain_db": 30.0, "q": 0.1}),
    ("PeakFilter", {"cutoff_frequency_hz": 1000.0, "gain_db": 12.0, "q": 1.0}),
    ("PeakFilter", {"cutoff_frequency_hz": 60.0, "gain_db": -30.0, "q": 10.0}),
    ("PeakFilter", {"cutoff_frequency_hz": 18000.0, "gain_db": 24.0, "q": 0.1}),
    ("PeakFilter", {"cutoff_frequency_hz": 3000.0, "gain_db": -6.0, "q": 40.0}),
]

LADDER_CASES = [
    {"cutoff_hz": 200.0},
    {"cutoff_hz": 1000.0, "resonance": 0.7, "drive": 3.0},
    {"cutoff_hz": 5000.0, "resonance": 1.0, "drive": 1.0},
    {"cutoff_hz": 60.0, "resonance": 0.3, "drive": 25.0},
]
MODES = ["LPF12", "HPF12", "BPF12", "LPF24", "HPF24", "BPF24"]
LADDER_EXTREMES = [
    ("LPF24", {"cutoff_hz": 30000.0, "resonance": 0.5, "drive": 10.0}),  # above Nyquist
    ("LPF12", {"cutoff_hz": 20.0, "resonance": 0.0, "drive": 50.0}),
    ("BPF24", {"cutoff_hz": 0.0, "resonance": 0.3}),  # silence in both
]


def case_id(name: str, params: dict) -> str:
    return name + "-" + "-".join(f"{k}={v:g}" for k, v in params.items())


@pytest.mark.parametrize("kind", ["music", "speech"])
@pytest.mark.parametrize(("name", "params"), CASES, ids=[case_id(n, p) for n, p in CASES])
def test_iir_matches_pedalboard(pb, name, params, kind):
    x = signal(kind, SR)
    ours = getattr(stompbox, name)(**params)(x, SR)
    theirs = getattr(pb, name)(**params)(x, SR)
    assert diff_db(ours, theirs) <= -60


@pytest.mark.parametrize(("name", "params"), CASES[1::3], ids=[case_id(n, p) for n, p in CASES[1::3]])
def test_iir_matches_pedalboard_at_48k(pb, name, params):
    x = signal("music", 48000)
    ours = getattr(stompbox, name)(**params)(x, 48000)
    theirs = getattr(pb, name)(**params)(x, 48000)
    assert diff_db(ours, theirs) <= -60


@pytest.mark.xfail(strict=True, reason="pedalboard's single-precision filter state is only -46 dB from exact here")
@pytest.mark.parametrize("kind", ["music", "speech"])
def test_very_low_peak_filter(pb, kind):
    """A 3 Hz peak at 44.1 kHz puts both poles within 5e-4 of z = 1. pedalboard runs the recursion in float32,
    whose rounding noise is amplified by ~1/(1 - r)^2 there: its output on 2 s of music is -46 dB away from
    the exact filter (double-precision ``scipy.signal.lfilter`` with the same float32 coefficients), while ours,
    with float64 state, is -152 dB away. Measured on these 1 s signals: ours vs pedalboard -45.9 dB (music),
    -49.6 dB (speech). Emulating float32 state would match it bit for bit, but make ours as noisy as theirs."""
    x = signal(kind, SR)
    params = {"cutoff_frequency_hz": 3.0, "gain_db": 6.0, "q": 0.7}
    assert diff_db(stompbox.PeakFilter(**params)(x, SR), pb.PeakFilter(**params)(x, SR)) <= -60


@pytest.mark.parametrize("kind", ["music", "speech"])
@pytest.mark.parametrize("params", LADDER_CASES, ids=[case_id("", p) for p in LADDER_CASES])
@pytest.mark.parametrize("mode", MODES)
def test_ladder_matches_pedalboard(pb, mode, params, kind):
    x = signal(kind, SR)
    ours = stompbox.LadderFilter(mode=getattr(stompbox.LadderFilter.Mode, mode), **params)(x, SR)
    theirs = pb.LadderFilter(mode=getattr(pb.LadderFilter.Mode, mode), **params)(x, SR)
    assert diff_db(ours, theirs) <= -60


@pytest.mark.parametrize(("mode", "params"), LADDER_EXTREMES, ids=[case_id(m, p) for m, p in LADDER_EXTREMES])
@pytest.mark.parametrize("sr", [SR, 48000])
def test_ladder_extremes_match_pedalboard(pb, mode, params, sr):
    x = signal("music", sr)
    ours = stompbox.LadderFilter(mode=getattr(stompbox.LadderFilter.Mode, mode), **params)(x, sr)
    theirs = pb.LadderFilter(mode=getattr(pb.LadderFilter.Mode, mode), **params)(x, sr)
    if not np.any(theirs):
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert diff_db(ours, theirs) <= -60


def stream(module, changes: list[dict], x: np.ndarray, sr: int) -> np.ndarray:
    """Feed ``x`` in equal parts with ``reset=False``, applying ``changes[k]`` before part ``k``."""
    f = module.LadderFilter(mode=module.LadderFilter.Mode.LPF12, cutoff_hz=300, resonance=0.2, drive=2)
    parts = np.array_split(np.arange(x.shape[1]), len(changes))
    out = []
    for k, (change, idx) in enumerate(zip(changes, parts, strict=True)):
        for name, value in change.items():
            setattr(f, name, getattr(module.LadderFilter.Mode, value) if name == "mode" else value)
        out.append(f(x[:, idx[0] : idx[-1] + 1], sr, reset=k == 0))
    return np.concatenate(out, axis=1)


STREAMS = {
    "glides": [{}, {"cutoff_hz": 3000.0}, {"resonance": 0.9}, {"cutoff_hz": 100.0, "resonance": 0.0}, {"drive": 5.0}],
    "mode-changes": [{}, {"cutoff_hz": 3000.0}, {"mode": "LPF24"}, {"mode": "HPF24", "cutoff_hz": 2000.0}, {}],
    "same-values": [{}, {"cutoff_hz": 300.0}, {"mode": "LPF12"}, {"resonance": 0.2}, {}],
}


@pytest.mark.parametrize("changes", STREAMS.values(), ids=STREAMS.keys())
def test_ladder_parameter_changes_while_streaming(pb, changes):
    """Cutoff and resonance glide over 50 ms when changed between ``reset=False`` calls; a mode change clears
    the ladder (parameters set before it jump, those set after it glide)."""
    x = signal("music", SR)
    assert diff_db(stream(stompbox, changes, x, SR), stream(pb, changes, x, SR)) <= -60


@pytest.mark.parametrize("name", ["LowpassFilter", "PeakFilter"])
def test_iir_parameter_change_while_streaming(pb, name):
    x = signal("speech", SR)
    parts = np.array_split(x, 3, axis=1)
    outs = []
    for module in (stompbox, pb):
        f = getattr(module, name)(cutoff_frequency_hz=500.0)
        pieces = [f(parts[0], SR, reset=True)]
        f.cutoff_frequency_hz = 4000.0
        pieces.append(f(parts[1], SR, reset=False))
        f.cutoff_frequency_hz = 150.0
        pieces.append(f(parts[2], SR, reset=False))
        outs.append(np.concatenate(pieces, axis=1))
    assert diff_db(*outs) <= -60
