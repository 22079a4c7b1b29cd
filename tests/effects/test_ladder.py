"""LadderFilter: slopes, resonance, drive, parameter glides, mode changes, validation and streaming."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _audio import SR, music, noise, process_in_blocks, rms
from stompbox import LadderFilter

Mode = LadderFilter.Mode


def tone_gain_db(plugin, freq: float, sr: int = SR, seconds: float = 1.0, amplitude: float = 0.01) -> float:
    """Steady-state gain at ``freq`` (a quiet sine, so the saturator is in its linear region), fitted on the
    second half of the output."""
    t = np.arange(int(seconds * sr)) / sr
    x = (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    y = plugin(x, sr).astype(np.float64)
    half = len(t) // 2
    basis = np.stack([np.sin(2 * np.pi * freq * t[half:]), np.cos(2 * np.pi * freq * t[half:])], axis=1)
    coef, *_ = np.linalg.lstsq(basis, y[half:], rcond=None)
    return 20 * math.log10(math.hypot(*coef) / amplitude)


def octave_drop(mode: Mode, cutoff: float, freq: float) -> float:
    """How many dB the response falls from ``freq`` to one octave further from the cutoff."""
    further = freq * 2 if freq > cutoff else freq / 2
    return tone_gain_db(LadderFilter(mode, cutoff), freq) - tone_gain_db(LadderFilter(mode, cutoff), further)


@pytest.mark.parametrize(
    ("mode", "freq", "slope"),
    [
        (Mode.LPF24, 1600.0, 24.0),
        (Mode.LPF12, 1600.0, 12.0),
        (Mode.HPF24, 50.0, 24.0),
        (Mode.HPF12, 50.0, 12.0),
        (Mode.BPF24, 50.0, 12.0),  # a 24 dB/oct band-pass is 12 dB/oct on each side
        (Mode.BPF24, 1600.0, 12.0),
    ],
)
def test_slopes_well_away_from_cutoff(mode, freq, slope):
    # cutoff 200 Hz: 1600-3200 Hz is three octaves above it, 25-50 Hz two octaves below
    assert octave_drop(mode, 200.0, freq) == pytest.approx(slope, abs=1.0)


def test_lpf24_passes_low_frequencies_and_is_down_well_above_cutoff():
    f = LadderFilter(Mode.LPF24, 1000)
    assert abs(tone_gain_db(f, 50)) < 0.5
    assert tone_gain_db(f, 8000) < -60  # three octaves above: ~24 dB/oct


@pytest.mark.parametrize("mode", [Mode.BPF12, Mode.BPF24])
def test_band_pass_peaks_near_cutoff(mode):
    at = tone_gain_db(LadderFilter(mode, 1000), 1000)
    assert at > tone_gain_db(LadderFilter(mode, 1000), 250) + 5
    assert at > tone_gain_db(LadderFilter(mode, 1000), 4000) + 10


def test_resonance_makes_a_peak_at_cutoff():
    flat = tone_gain_db(LadderFilter(Mode.LPF24, 500, resonance=0.0), 500)
    peaked = tone_gain_db(LadderFilter(Mode.LPF24, 500, resonance=0.9), 500)
    assert peaked > flat + 15
    below = tone_gain_db(LadderFilter(Mode.LPF24, 500, resonance=0.9), 100)
    assert peaked > below + 15


def third_harmonic_db(drive: float) -> float:
    t = np.arange(SR) / SR
    x = (0.5 * np.sin(2 * np.pi * 100 * t)).astype(np.float32)
    y = LadderFilter(Mode.LPF12, 15000, drive=drive)(x, SR).astype(np.float64)[SR // 2 :]
    spectrum = np.abs(np.fft.rfft(y * np.hanning(len(y))))
    bin_hz = SR / len(y)
    return 20 * math.log10(spectrum[round(300 / bin_hz)] / spectrum[round(100 / bin_hz)])


def test_drive_adds_odd_harmonics():
    assert third_harmonic_db(10.0) > third_harmonic_db(1.0) + 20
    assert third_harmonic_db(10.0) > -20


def test_cutoff_change_glides_over_50_ms():
    x = noise(0.5, channels=1, seed=3)[0]
    ramp = int(0.05 * SR)
    gliding = LadderFilter(Mode.LPF24, 200)
    gliding(x, SR, reset=False)
    gliding.cutoff_hz = 8000
    y = gliding(x, SR, reset=False)
    settled = LadderFilter(Mode.LPF24, 8000)(x, SR)
    # right after the change the cutoff is still low: much less energy than the settled filter
    assert rms(y[: ramp // 10]) < 0.3 * rms(settled[: ramp // 10])
    # once the 50 ms glide is over (plus a few ms to forget the old state) it is the 8 kHz filter
    tail = slice(ramp + 441, None)
    assert np.max(np.abs(y[tail] - settled[tail])) < 1e-4
    # a reset ends any glide at once
    gliding.cutoff_hz = 200
    gliding.reset()
    np.testing.assert_array_equal(gliding(x, SR, reset=False), LadderFilter(Mode.LPF24, 200)(x, SR))


def test_mode_change_clears_the_ladder():
    f = LadderFilter(Mode.LPF12, 500, resonance=0.5)
    f(noise(0.1, channels=2), SR, reset=False)
    f.mode = Mode.HPF24
    np.testing.assert_array_equal(f(np.zeros((2, 1000), np.float32), SR, reset=False), 0.0)


def test_channels_are_independent():
    x = music(0.3, channels=3)
    f = LadderFilter(Mode.BPF24, 700, resonance=0.6, drive=3)
    together = f(x, SR)
    for c in range(3):
        np.testing.assert_array_equal(together[c], LadderFilter(Mode.BPF24, 700, resonance=0.6, drive=3)(x[c], SR))


def test_zero_cutoff_gives_silence_and_high_cutoff_is_finite():
    x = music(0.2)
    np.testing.assert_array_equal(LadderFilter(Mode.LPF24, 0)(x, SR), 0.0)
    assert np.isfinite(LadderFilter(Mode.LPF24, 10 * SR, resonance=1.0, drive=20)(x, SR)).all()


def test_mode_enum_and_class_attributes():
    assert [m.name for m in Mode] == ["LPF12", "HPF12", "BPF12", "LPF24", "HPF24", "BPF24"]
    assert [int(m) for m in Mode] == [0, 1, 2, 3, 4, 5]
    assert LadderFilter.HPF24 is Mode.HPF24 and LadderFilter.LPF12 is Mode.LPF12
    assert LadderFilter(mode=4).mode is Mode.HPF24
    assert LadderFilter(mode="BPF12").mode is Mode.BPF12
    f = LadderFilter()
    assert (f.mode, f.cutoff_hz, f.resonance, f.drive) == (Mode.LPF12, 200, 0, 1.0)
    with pytest.raises(ValueError):
        LadderFilter(mode=6)


def test_validation_messages():
    with pytest.raises(ValueError, match="Resonance must be between 0.0 and 1.0."):
        LadderFilter(resonance=1.5)
    with pytest.raises(ValueError, match="Resonance must be between 0.0 and 1.0."):
        LadderFilter().resonance = -0.1
    with pytest.raises(ValueError, match="Drive must be greater than 1.0."):
        LadderFilter(drive=0.5)
    with pytest.raises(ValueError, match="Cutoff frequency must not be negative."):
        LadderFilter(cutoff_hz=-100)
    LadderFilter(resonance=1.0, drive=1.0)  # the bounds themselves are allowed


MODES = list(Mode)


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
@pytest.mark.parametrize("block", [1, 7, 512, 8192])
def test_block_invariance(mode, block):
    x = music(0.05 if block == 1 else 0.5)
    whole = LadderFilter(mode, 900, resonance=0.7, drive=2.5)(x, SR)
    pieces = process_in_blocks(LadderFilter(mode, 900, resonance=0.7, drive=2.5), x, SR, block)
    assert np.max(np.abs(pieces - whole)) <= 1e-6


def test_nan_does_not_poison_state():
    f = LadderFilter(Mode.LPF24, 1000, resonance=0.8, drive=2)
    x = music(0.2)
    bad = x.copy()
    bad[0, 50] = np.nan
    out = f(bad, SR, reset=False)
    assert np.isnan(out[0, 50])  # NaN passes through rather than being hidden
    assert np.isfinite(f(x, SR, reset=False)).all()  # the engine cleared the state after the bad block
    f.reset()
    np.testing.assert_array_equal(f(x, SR, reset=False), LadderFilter(Mode.LPF24, 1000, resonance=0.8, drive=2)(x, SR))


def test_tail_grows_with_resonance_and_falls_with_cutoff():
    assert LadderFilter(cutoff_hz=200, resonance=0.9).tail_seconds > LadderFilter(cutoff_hz=200).tail_seconds
    assert LadderFilter(cutoff_hz=2000).tail_seconds < LadderFilter(cutoff_hz=200).tail_seconds
    # the response really has died away by then
    f = LadderFilter(Mode.LPF24, 200, resonance=0.5)
    impulse = np.zeros(int(SR * (f.tail_seconds + 0.1)), np.float32)
    impulse[0] = 1.0
    y = f(impulse, SR)
    after = int(f.tail_seconds * SR)
    assert np.max(np.abs(y[after:])) < 1e-3 * np.max(np.abs(y))
