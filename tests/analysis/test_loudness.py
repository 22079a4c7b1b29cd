"""Loudness (ITU-R BS.1770-4 / EBU R 128) against the EBU Tech 3341 and Tech 3342 test signals, synthesised
from their published definitions (1 kHz sines at stated levels, the same signal in every channel), plus
true peak, the streaming meter, edge cases and normalisation.

Each Tech 3341/3342 signal's expected value follows from the definitions: a 1 kHz sine at ``-X dBFS`` in both
channels of a stereo signal measures ``-X LUFS`` (the -0.691 dB offset cancels K-weighting's gain at 1 kHz and
the two channels add 3 dB to the sine's -3 dB RMS). The specification allows +-0.1 LU (LRA: +-1 LU); we
assert +-0.1 everywhere.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from _array_reader import ArrayReader
from _audio import music, speech
from stompbox.analysis import LoudnessMeter, LoudnessNormalize, loudness, normalization_gain_db
from stompbox.analysis.loudness import k_weighting_coefficients, measure_reader, normalize_reader


def tone_sequence(parts, sr, channels=2, freq=1000.0):
    """Concatenated 1 kHz sine sections ``[(dBFS, seconds), ...]`` (continuous phase), float32."""
    lengths = [int(round(seconds * sr)) for _, seconds in parts]
    gains = np.concatenate([np.full(n, 10 ** (db / 20)) for (db, _), n in zip(parts, lengths, strict=True)])
    t = np.arange(gains.size) / sr
    x = (gains * np.sin(2 * np.pi * freq * t)).astype(np.float32)
    return np.tile(x, (channels, 1))


# ---------------------------------------------------------------------------------------------- K-weighting
def test_k_weighting_reproduces_the_published_48k_coefficients():
    c = k_weighting_coefficients(48000)
    shelf = [1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585]
    highpass = [1.0, -2.0, 1.0, -1.99004745483398, 0.99007225036621]
    np.testing.assert_allclose(c[0], shelf, atol=1e-8)
    np.testing.assert_allclose(c[1], highpass, atol=1e-8)


def _response_db(coeffs, freqs, sr):
    z = np.exp(-2j * np.pi * np.asarray(freqs) / sr)
    h = np.ones_like(z)
    for b0, b1, b2, a1, a2 in coeffs:
        h *= (b0 + b1 * z + b2 * z * z) / (1 + a1 * z + a2 * z * z)
    return 20 * np.log10(np.abs(h))


@pytest.mark.parametrize("sr", [22050, 44100, 96000, 192000])
def test_k_weighting_has_the_same_curve_at_every_rate(sr):
    freqs = np.array([20.0, 38.0, 100.0, 500.0, 1000.0, 1681.0, 4000.0, 8000.0])
    ours = _response_db(k_weighting_coefficients(sr), freqs, sr)
    ref = _response_db(k_weighting_coefficients(48000), freqs, 48000)
    np.testing.assert_allclose(ours, ref, atol=0.05 if sr > 30000 else 0.25)
    # about +0.7 dB at 1 kHz (what the -0.691 offset cancels), a +4 dB shelf, -6 dB at 38 Hz (Q = 0.5)
    assert abs(ours[4] - 0.691) < 0.05
    assert ours[-1] == pytest.approx(4.0, abs=0.1)
    assert ours[1] == pytest.approx(-6.0, abs=0.1)


# ---------------------------------------------------------------------------------------------- EBU Tech 3341
TECH3341 = [
    ("case 1", [(-23, 20)], -23.0),
    ("case 2", [(-33, 20)], -33.0),
    ("case 3", [(-36, 10), (-23, 60), (-36, 10)], -23.0),
    ("case 4", [(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)], -23.0),
    ("case 5", [(-26, 20), (-20, 20.1), (-26, 20)], -23.0),
]


@pytest.mark.parametrize("sr", [44100, 48000])
@pytest.mark.parametrize("name,parts,expected", TECH3341, ids=[c[0] for c in TECH3341])
def test_tech3341_integrated(name, parts, expected, sr):
    r = loudness(tone_sequence(parts, sr), sr)
    assert abs(r.integrated - expected) <= 0.1
    if len(parts) == 1:  # a steady tone: momentary and short-term read the same
        assert abs(r.momentary_max - expected) <= 0.1
        assert abs(r.short_term_max - expected) <= 0.1
        assert np.all(np.abs(r.momentary - expected) <= 0.1)
        assert np.all(np.abs(r.short_term - expected) <= 0.1)


@pytest.mark.parametrize("sr", [44100, 48000])
def test_tech3341_case6_five_channels_with_surround_weights(sr):
    n = 20 * sr
    t = np.arange(n) / sr
    tone = np.sin(2 * np.pi * 1000 * t)
    levels = [-28, -28, -24, -30, -30]  # L, R, C, Ls, Rs
    x = np.stack([10 ** (db / 20) * tone for db in levels]).astype(np.float32)
    assert abs(loudness(x, sr).integrated - (-23.0)) <= 0.1
    # 5.1 (L, R, C, LFE, Ls, Rs): the LFE is not measured
    x6 = np.insert(x, 3, 0.9 * tone.astype(np.float32), axis=0)
    assert abs(loudness(x6, sr).integrated - (-23.0)) <= 0.1


def test_tech3341_case9_short_term_is_constant():
    """1.34 s at -20 dBFS then 1.66 s at -30 dBFS, five times: every 3 s window holds one period."""
    sr = 48000
    r = loudness(tone_sequence([(-20, 1.34), (-30, 1.66)] * 5, sr), sr)
    assert r.short_term.size == 121
    assert np.all(np.abs(r.short_term - (-23.0)) <= 0.1)


def test_tech3341_case12_momentary_is_constant():
    """0.18 s at -20 dBFS then 0.22 s at -30 dBFS, repeated: every 400 ms window holds one period."""
    sr = 48000
    r = loudness(tone_sequence([(-20, 0.18), (-30, 0.22)] * 25, sr), sr)
    assert r.momentary.size == 97
    assert np.all(np.abs(r.momentary - (-23.0)) <= 0.1)
    assert abs(r.momentary_max - (-23.0)) <= 0.1


# ---------------------------------------------------------------------------------------------- EBU Tech 3342
TECH3342 = [
    ("case 1", [(-20, 20), (-30, 20)], 10.0),
    ("case 2", [(-20, 20), (-15, 20)], 5.0),
    ("case 3", [(-40, 20), (-20, 20)], 20.0),
    ("case 4", [(-50, 20), (-35, 20), (-20, 20), (-35, 20), (-50, 20)], 15.0),
]


@pytest.mark.parametrize("sr", [44100, 48000])
@pytest.mark.parametrize("name,parts,expected", TECH3342, ids=[c[0] for c in TECH3342])
def test_tech3342_loudness_range(name, parts, expected, sr):
    r = loudness(tone_sequence(parts, sr), sr)
    assert abs(r.loudness_range - expected) <= 0.1
    assert r.loudness_range == pytest.approx(r.loudness_range_high - r.loudness_range_low)


def test_loudness_range_relative_gate_drops_quiet_passages():
    """Tech 3342 case 1 followed by 20 s at -60 dBFS: above the absolute gate, but ~35 LU below the mean, so
    the -20 LU relative gate drops it (and the few windows across the step) and LRA stays 10 LU."""
    sr = 48000
    r = loudness(tone_sequence([(-20, 20), (-30, 20), (-60, 20)], sr), sr)
    assert abs(r.loudness_range - 10.0) <= 0.1
    assert abs(r.loudness_range_low - (-30.0)) <= 0.1


# ---------------------------------------------------------------------------------------------- gating
def test_absolute_gate_ignores_silence():
    """10 s of tone then 10 s of silence: the 97 blocks inside the tone and the 3 blocks across the step
    (holding 3/4, 1/2 and 1/4 of a tone block's energy) count; the silent ones do not."""
    sr = 48000
    x = tone_sequence([(-23, 10), (-23, 10)], sr)
    steady = loudness(x, sr).integrated
    x[:, 10 * sr :] = 0.0
    expected = steady + 10 * math.log10((97 + 0.75 + 0.5 + 0.25) / 100)
    assert loudness(x, sr).integrated == pytest.approx(expected, abs=1e-3)


def test_relative_gate_ignores_quiet_passages():
    sr = 48000
    r = loudness(tone_sequence([(-23, 20), (-40, 20)], sr), sr)
    assert abs(r.integrated - (-23.0)) <= 0.05
    assert r.relative_gate == pytest.approx(-23.0 + 10 * math.log10(0.5 * (1 + 10**-1.7)) - 10, abs=0.05)


def test_gain_shifts_every_figure_by_the_gain():
    x = music(6.0, sr=44100)
    a = loudness(x, 44100)
    b = loudness(x.astype(np.float64) * 10 ** (-7.5 / 20), 44100)
    for name in ("integrated", "momentary_max", "short_term_max", "sample_peak", "true_peak"):
        assert getattr(b, name) - getattr(a, name) == pytest.approx(-7.5, abs=1e-6), name
    assert b.loudness_range == pytest.approx(a.loudness_range, abs=1e-6)


# ---------------------------------------------------------------------------------------------- peaks
@pytest.mark.parametrize("freq", [997.0, 3000.0, 6000.0, 9000.0, 12000.0, 15000.0, 18000.0, 20000.0])
def test_true_peak_of_sines_within_tech3341_tolerance(freq):
    sr = 48000
    rng = np.random.default_rng(int(freq))
    n = np.arange(sr // 10)
    for phase in rng.uniform(0, 2 * np.pi, 4):
        x = 0.5 * np.sin(2 * np.pi * freq / sr * n + phase)
        x *= np.minimum(1.0, np.minimum(n, n[::-1]) / 200.0)  # short fades: no onset overshoot
        r = loudness(x, sr)
        error = r.true_peak - 20 * math.log10(0.5)
        assert -0.25 <= error <= 0.05, (freq, phase, error)
        assert r.true_peak >= r.sample_peak


def test_true_peak_finds_the_peak_between_samples():
    """A quarter-rate sine at 45 degrees: every sample is at 0.707 of the peak (Tech 3341 case 16's idea)."""
    sr = 48000
    n = np.arange(sr)
    x = np.sin(2 * np.pi * n / 4 + np.pi / 4) * 10 ** (-6 / 20)
    x[:100] *= np.linspace(0, 1, 100)
    x[-100:] *= np.linspace(1, 0, 100)
    r = loudness(np.stack([x, x]), sr)
    assert r.sample_peak == pytest.approx(-9.01, abs=0.02)
    assert -6.25 <= r.true_peak <= -5.95


def test_sample_peak_and_per_channel_peaks():
    x = np.zeros((2, 48000), np.float32)
    x[0, 1000] = 0.5
    x[1, 2000] = -0.25
    r = loudness(x, 48000)
    assert r.sample_peak == pytest.approx(20 * math.log10(0.5))
    assert r.channel_sample_peaks == pytest.approx((20 * math.log10(0.5), 20 * math.log10(0.25)))
    assert r.true_peak >= r.sample_peak
    # a lone sample is its own peak (phase 0); the interpolated ripple around it is below it
    assert r.true_peak == pytest.approx(r.sample_peak, abs=1e-9)


def test_peak_at_the_very_end_is_seen():
    x = np.zeros(48000)
    x[-1] = 0.8
    x[-2] = 0.8
    r = loudness(x, 48000)
    assert r.true_peak > 20 * math.log10(0.8)  # two equal samples: the curve between them overshoots


# ---------------------------------------------------------------------------------------------- streaming
def _streamed(x, sr, sizes, **kwargs):
    meter = LoudnessMeter(sr, x.shape[0], **kwargs)
    pos = 0
    for size in sizes:
        meter.add(x[:, pos : pos + size])
        pos += size
        if pos >= x.shape[1]:
            break
    meter.add(x[:, pos:])
    return meter.result()


@pytest.mark.parametrize("sr", [44100, 11025, 22050])  # 11025: 100 ms is 1102.5 samples
def test_streaming_meter_equals_the_whole_array(sr):
    x = music(8.0, sr=sr)
    whole = loudness(x, sr)
    rng = np.random.default_rng(3)
    for sizes in ([1, 2, 3] + [4410] * 200, rng.integers(1, 30000, 400), [x.shape[1]]):
        r = _streamed(x, sr, sizes)
        assert r.integrated == whole.integrated
        assert r.loudness_range == whole.loudness_range
        assert r.true_peak == whole.true_peak
        assert r.sample_peak == whole.sample_peak
        np.testing.assert_array_equal(r.momentary, whole.momentary)
        np.testing.assert_array_equal(r.short_term, whole.short_term)


def test_result_midway_does_not_disturb_the_stream():
    sr = 44100
    x = music(5.0, sr=sr)
    meter = LoudnessMeter(sr)
    for start in range(0, x.shape[1], 10000):
        meter.add(x[:, start : start + 10000])
        meter.result()
    whole = loudness(x, sr)
    r = meter.result()
    assert (r.integrated, r.true_peak) == (whole.integrated, whole.true_peak)


def test_meter_stores_one_value_per_100_ms_per_channel():
    sr = 48000
    meter = LoudnessMeter(sr, 2)
    block = np.zeros((2, sr), np.float32)
    for _ in range(60):
        meter.add(block)
    assert meter.segment_energies().shape == (600, 2)
    assert meter.frames == 60 * sr


def test_layouts_and_dtypes_agree():
    sr = 44100
    x = music(3.0, sr=sr)
    ref = loudness(x, sr)
    assert loudness(x.T.copy(), sr).integrated == ref.integrated
    assert loudness(x.T, sr, layout="channels-last").integrated == ref.integrated
    assert loudness(x.astype(np.float64), sr).integrated == pytest.approx(ref.integrated, abs=1e-9)
    mono = loudness(x[0], sr)
    assert mono.num_channels == 1
    assert mono.integrated == loudness(x[:1], sr).integrated


def test_reader_measurement_equals_the_array():
    sr = 44100
    x = music(4.0, sr=sr)
    r = measure_reader(ArrayReader(x, sr), block_frames=3000)
    assert r.integrated == loudness(x, sr).integrated


# ---------------------------------------------------------------------------------------------- edge cases
def test_silence_and_short_signals():
    r = loudness(np.zeros((2, 48000)), 48000)
    assert r.integrated == -math.inf and r.true_peak == -math.inf and r.loudness_range == 0.0
    short = loudness(0.5 * np.ones((2, 1000)), 48000)  # shorter than one 400 ms block
    assert short.integrated == -math.inf and short.momentary.size == 0
    assert short.sample_peak == pytest.approx(20 * math.log10(0.5))
    empty = LoudnessMeter(48000, 2).result()
    assert empty.frames == 0 and empty.integrated == -math.inf
    assert empty.to_dict()["integrated_lufs"] is None
    assert "Integrated" in r.summary()


def test_bad_input():
    with pytest.raises(ValueError, match="sample_rate"):
        LoudnessMeter(1000)
    with pytest.raises(ValueError, match="channel_weights"):
        LoudnessMeter(48000, 2, channel_weights=[1.0])
    with pytest.raises(TypeError):
        loudness(np.zeros((2, 48000), np.int16), 48000)
    meter = LoudnessMeter(48000, 2)
    with pytest.raises(ValueError, match="channels"):
        meter.add(np.zeros((3, 100)))
    with pytest.raises(ValueError, match="layout"):
        loudness(np.zeros((2, 100)), 48000, layout="sideways")


def test_custom_channel_weights():
    sr = 48000
    x = tone_sequence([(-23, 5)], sr)
    r = loudness(x, sr, channel_weights=[1.0, 0.0])  # one channel alone is 3 dB quieter
    assert r.integrated == pytest.approx(loudness(x, sr).integrated - 10 * math.log10(2), abs=1e-9)


def test_speech_is_measured_above_the_gate():
    r = loudness(speech(6.0, sr=44100), 44100)
    assert -40 < r.integrated < -10


# ---------------------------------------------------------------------------------------------- normalising
def test_normalize_reaches_the_target():
    sr = 44100
    x = music(6.0, sr=sr) * 0.1
    norm = LoudnessNormalize(target_lufs=-23.0, true_peak_db=-1.0)
    y = norm(x, sr)
    assert y.dtype == np.float32 and y.shape == x.shape
    after = loudness(y, sr)
    assert after.integrated == pytest.approx(-23.0, abs=0.01)
    assert not norm.last_report.limited_by_true_peak
    assert norm.last_report.integrated == pytest.approx(after.integrated, abs=0.01)


def test_normalize_caps_the_gain_at_the_true_peak_ceiling():
    sr = 44100
    x = np.zeros((2, 5 * sr), np.float32)
    x[:, ::4410] = 0.5  # sparse clicks: quiet on average, peaky
    norm = LoudnessNormalize(target_lufs=-14.0, true_peak_db=-1.0)
    y = norm.process(x, sr)
    after = loudness(y, sr)
    assert norm.last_report.limited_by_true_peak
    assert after.true_peak == pytest.approx(-1.0, abs=0.01)
    assert after.integrated < -14.0
    # without a ceiling the target is reached
    free = loudness(LoudnessNormalize(-14.0, None)(x, sr), sr)
    assert free.integrated == pytest.approx(-14.0, abs=0.01)


def test_normalize_leaves_silence_alone():
    x = np.zeros((2, 44100), np.float32)
    assert np.array_equal(LoudnessNormalize()(x, 44100), x)


def test_normalize_reader_two_passes_equal_the_array_version():
    sr = 44100
    x = music(5.0, sr=sr) * 0.2
    reader = ArrayReader(x, sr)
    blocks = []
    report = normalize_reader(reader, blocks.append, -16.0, -1.0, block_frames=7000)
    y = np.concatenate(blocks, axis=1)
    norm = LoudnessNormalize(-16.0, -1.0)
    np.testing.assert_allclose(y, norm(x, sr), rtol=1e-6, atol=1e-9)
    assert report.gain_db == pytest.approx(norm.last_report.gain_db)
    assert reader.seeks == 1


def test_normalization_gain_and_validation():
    r = loudness(music(4.0, sr=44100), 44100)
    assert normalization_gain_db(r, -14.0, None) == pytest.approx(-14.0 - r.integrated)
    assert normalization_gain_db(r, -14.0, -1.0) <= -1.0 - r.true_peak + 1e-12
    with pytest.raises(ValueError, match="target_lufs"):
        LoudnessNormalize(target_lufs=3.0)
    with pytest.raises(ValueError, match="true_peak_db"):
        LoudnessNormalize(true_peak_db=-40.0)
    assert "LoudnessNormalize(" in repr(LoudnessNormalize())


def test_a_square_array_is_ambiguous_as_everywhere_in_stompbox() -> None:
    from stompbox._base.errors import LayoutError
    from stompbox.analysis import LoudnessMeter, loudness

    square = np.zeros((2, 2), np.float32)
    with pytest.raises(LayoutError):
        loudness(square, 48000)
    with pytest.raises(LayoutError):
        LoudnessMeter(48000).add(square)
    assert LoudnessMeter(48000, 2).add(square).num_channels == 2  # the meter's channel count decides
    assert loudness(square, 48000, layout="channels-last") is not None
