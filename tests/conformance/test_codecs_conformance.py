"""Resample, MP3Compressor and GSMFullRateCompressor against pedalboard 0.9.26.

Neither resampler nor codec is the same code as pedalboard's (JUCE interpolators and LAME/libgsm linked
in-process there; our own kernels and libsndfile here), so outputs are not bit-identical. What must hold: the
same length, finite output, the same alignment (both line up with the input), and a difference bounded by what
the two implementations' legitimate differences explain. Measured on ``music(1.0)`` at 44.1 kHz (diff_db of
ours vs theirs):

- zero-order hold: identical (-inf dB) for 8000 and 22050 Hz targets;
- anti-aliased windowed sincs: -12 to -47 dB (the worst at a 96 kHz target, where our filter's transition
  band starts below 22.05 kHz and the test signal's noise bursts have energy up there);
- the interpolators and WindowedSinc: -6 to -30 dB (JUCE's sub-sample timing differs from our exactly
  time-aligned interpolation; on an in-band sine ours is the more accurate, see the last test);
- MP3 (two independent LAME VBR-2 encodes): -12.5 to -32 dB; GSM 06.10: -7.1 to -12.8 dB.
"""

from __future__ import annotations

import numpy as np
import pytest

import stompbox
from _audio import SR, diff_db, music, speech

SINC = ["WindowedSinc256", "WindowedSinc32", "WindowedSinc8"]
INTERP = ["Linear", "CatmullRom", "Lagrange", "WindowedSinc"]


def _lag(ours: np.ndarray, theirs: np.ndarray, span: int = 200) -> int:
    a, b = ours[0], theirs[0]
    core = slice(span + 2000, a.shape[-1] - span - 2000)
    lags = np.arange(-span, span + 1)
    return int(lags[int(np.argmax([np.dot(a[core], b[core.start + k : core.stop + k]) for k in lags]))])


def _compare(ours: np.ndarray, theirs: np.ndarray, x: np.ndarray, hold: bool = False) -> float:
    assert ours.shape == theirs.shape == x.shape
    assert np.all(np.isfinite(ours))
    if hold:  # a zero-order hold lags by up to one held sample by nature: compare the two holds directly
        assert _lag(ours, theirs) == 0
        return diff_db(ours, theirs)
    # both line up with the input (comparing the two directly can peak one sample off when both are smoothed
    # versions with a sub-sample difference in timing)
    assert _lag(x, ours) == 0
    assert _lag(x, theirs) == 0
    return diff_db(ours, theirs)


@pytest.mark.parametrize("target", [8000, 22050, 12345.67, 96000])
@pytest.mark.parametrize("quality", ["ZeroOrderHold", *INTERP, *SINC])
def test_resample_matches_pedalboard(pb, target, quality):
    x = music(1.0)
    ours = stompbox.Resample(target, getattr(stompbox.Resample.Quality, quality))(x, SR)
    theirs = pb.Resample(target, getattr(pb.Resample.Quality, quality))(x, SR)
    db = _compare(ours, theirs, x, hold=quality == "ZeroOrderHold")
    if quality == "ZeroOrderHold" and target in (8000, 22050):
        bound = -100.0  # the same hold, sample for sample
    elif quality in SINC:
        bound = -10.0
    else:
        bound = -5.0
    assert db <= bound, f"{quality} -> {target}: {db:.1f} dB"


@pytest.mark.parametrize("target", [8000, 12345.67, 96000])
@pytest.mark.parametrize("quality", ["Linear", "CatmullRom", "Lagrange", "WindowedSinc", *SINC])
def test_resample_reconstructs_a_sine_at_least_as_well_as_pedalboard(pb, target, quality):
    t = np.arange(int(0.5 * SR)) / SR
    x = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None]
    core = slice(2000, -2000)  # away from the onset and the end
    ours = np.abs(stompbox.Resample(target, getattr(stompbox.Resample.Quality, quality))(x, SR) - x)[:, core]
    theirs = np.abs(pb.Resample(target, getattr(pb.Resample.Quality, quality))(x, SR) - x)[:, core]
    assert ours.max() <= theirs.max() + 1e-4


@pytest.mark.parametrize("sr", [44100, 22050, 8000])
@pytest.mark.parametrize("signal", ["music", "speech"])
def test_mp3_matches_pedalboard(pb, sr, signal):
    x = (music if signal == "music" else speech)(1.0, sr=sr)
    ours = stompbox.MP3Compressor(2)(x, sr)
    theirs = pb.MP3Compressor(2)(x, sr)
    assert _compare(ours, theirs, x) <= -10.0


@pytest.mark.parametrize("sr", [44100, 22050, 8000])
@pytest.mark.parametrize("signal", ["music", "speech"])
def test_gsm_matches_pedalboard(pb, sr, signal):
    x = (music if signal == "music" else speech)(1.0, sr=sr)
    ours = stompbox.GSMFullRateCompressor()(x, sr)
    theirs = pb.GSMFullRateCompressor()(x, sr)
    assert _compare(ours, theirs, x) <= -5.0


def test_mp3_rate_errors_agree_on_type(pb):
    x = np.zeros((1, 1000), np.float32)
    for sr in (96000, 6000, 44101):
        with pytest.raises(ValueError):
            pb.MP3Compressor()(x, sr)
        with pytest.raises(ValueError):
            stompbox.MP3Compressor()(x, sr)
