"""Gain, Invert, Clipping, Distortion and Bitcrush against their closed-form definitions."""

from __future__ import annotations

import numpy as np
import pytest

from _audio import SR, music
from stompbox import Bitcrush, Clipping, Distortion, Gain, Invert


def test_gain_is_exact():
    x = music(0.5)
    for db in (-60, -6, 0, 1, 12):
        np.testing.assert_allclose(Gain(db)(x, SR), x * np.float32(10 ** (db / 20)), rtol=1e-7)
    assert Gain().gain_db == 1.0


def test_minus_six_db_is_about_half():
    np.testing.assert_allclose(Gain(-6)(np.ones(10, np.float32), SR), 0.501187, rtol=1e-5)


def test_invert():
    x = music(0.2)
    np.testing.assert_array_equal(Invert()(x, SR), -x)


@pytest.mark.parametrize("threshold_db", [-20.0, -6.0, 0.0, 6.0])
def test_clipping_limits_at_threshold(threshold_db):
    x = music(0.5) * 2
    limit = np.float32(10 ** (threshold_db / 20))
    y = Clipping(threshold_db)(x, SR)
    np.testing.assert_array_equal(y, np.clip(x, -limit, limit))
    assert np.max(np.abs(y)) <= limit


@pytest.mark.parametrize("drive_db", [0.0, 6.0, 25.0, 60.0])
def test_distortion_is_tanh_of_driven_signal(drive_db):
    x = music(0.5)
    expected = np.tanh(x.astype(np.float64) * 10 ** (drive_db / 20))
    np.testing.assert_allclose(Distortion(drive_db)(x, SR), expected, rtol=4e-7, atol=2e-7)


def test_distortion_gain_db_alias():
    d = Distortion(gain_db=12)
    assert d.drive_db == 12 and d.gain_db == 12
    d.gain_db = 3
    assert d.drive_db == 3
    with pytest.raises(TypeError):
        Distortion(volume=3)


@pytest.mark.parametrize("bits", [0, 1, 4, 8, 16, 5.5])
def test_bitcrush_quantises_without_clamping(bits):
    x = np.linspace(-1.5, 1.5, 1001, dtype=np.float32)
    y = Bitcrush(bits)(x, SR)
    scale = 2.0**bits
    np.testing.assert_allclose(y, np.round(x * np.float32(scale)) / np.float32(scale), atol=1e-7)
    if bits == 1:
        assert set(np.unique(y)) <= {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5}
    if bits == 0:
        assert set(np.unique(y)) <= {-2.0, -1.0, 0.0, 1.0, 2.0}


@pytest.mark.parametrize("bits", [-0.1, 32.5])
def test_bitcrush_range(bits):
    with pytest.raises(ValueError, match="Bit depth must be between 0 and 32 bits"):
        Bitcrush(bits)


def _layouts(x: np.ndarray) -> dict[str, np.ndarray]:
    """The same stereo audio in every memory layout a caller can hand over."""
    wide = np.zeros((2, 2 * x.shape[1] + 10), np.float32)
    wide[:, 10::2] = x
    return {
        "C float32": x,
        "C float64": x.astype(np.float64),
        "channels-last float32": np.ascontiguousarray(x.T),
        "channels-last float64": np.ascontiguousarray(x.T, dtype=np.float64),
        "strided view": wide[:, 10::2],
        "offset view": np.concatenate([x, x], axis=1)[:, 7 : 7 + x.shape[1]],
        "mono 1-D": x[0].copy(),
    }


@pytest.mark.parametrize(
    "make",
    [lambda: Gain(-3), Invert, lambda: Clipping(-3), lambda: Distortion(20), lambda: Bitcrush(5)],
    ids=["Gain", "Invert", "Clipping", "Distortion", "Bitcrush"],
)
def test_one_pass_equals_staged_blocks_in_every_layout(make):
    # A memoryless effect called alone maps the caller's array straight into the output (Plugin._map); inside a
    # board it is run on float32 staging blocks (the last, shorter one a strided view). Both must give the same
    # bits, in the caller's layout, whatever the input's dtype and memory layout.
    from stompbox import Pedalboard

    x = music(100_000 / SR) * 1.5  # 100,000 frames: more than one staging block, the last one partial
    x[0, 123] = np.nan
    x[1, 456] = np.inf
    for name, audio in _layouts(x).items():
        alone = make()(audio, SR)
        staged = Pedalboard([make()])(audio, SR)
        assert alone.dtype == np.float32 and alone.shape == audio.shape, name
        assert alone.flags.c_contiguous, name
        np.testing.assert_array_equal(alone, staged, err_msg=name)
        reference = make()(np.ascontiguousarray(audio, np.float32), SR)
        np.testing.assert_array_equal(alone, reference, err_msg=name)
    # the caller's array is never written to
    before = x.copy()
    make()(x, SR)
    np.testing.assert_array_equal(x, before)
