"""Gain, Invert, Clipping, Distortion and Bitcrush against pedalboard 0.9.26."""

from __future__ import annotations

import pytest

import stompbox
from _audio import SR, diff_db, music, speech

CASES = [
    ("Gain", {"gain_db": -12.0}),
    ("Gain", {"gain_db": 1.0}),
    ("Gain", {"gain_db": 18.0}),
    ("Invert", {}),
    ("Clipping", {"threshold_db": -6.0}),
    ("Clipping", {"threshold_db": -20.0}),
    ("Clipping", {"threshold_db": 3.0}),
    ("Distortion", {"drive_db": 25.0}),
    ("Distortion", {"drive_db": 0.0}),
    ("Distortion", {"drive_db": 48.0}),
    ("Bitcrush", {"bit_depth": 8}),
    ("Bitcrush", {"bit_depth": 3}),
    ("Bitcrush", {"bit_depth": 12.5}),
]


@pytest.mark.parametrize("signal", ["music", "speech"])
@pytest.mark.parametrize(("name", "params"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_matches_pedalboard(pb, name, params, signal):
    x = music(1.0) if signal == "music" else speech(1.0)
    ours = getattr(stompbox, name)(**params)(x, SR)
    theirs = getattr(pb, name)(**params)(x, SR)
    assert diff_db(ours, theirs) <= -60
