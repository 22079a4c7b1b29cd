"""Resample an impulse response as pedalboard's Convolution does, so the two sound the same.

Measured on pedalboard 0.9.26 (an IR at another rate is fed through its Convolution with a unit impulse, which
returns the resampled, normalised IR): the IR is resampled by linear interpolation at positions ``k * ratio``
(``ratio`` = IR rate / stream rate, starting at 0, no delay), with a 2-pole Butterworth low-pass (bilinear
transform, Q = 1/sqrt(2)) at the lower of the two Nyquist frequencies: applied to the IR before interpolating
when it is downsampled, to the interpolated IR when it is upsampled. This module reproduces that within
-100 dB (tests/conformance/test_space_conformance.py). It is cheap and not band-limited (the linear
interpolation aliases a little); ``Convolution(..., ir_resampling="soxr")`` uses soxr's band-limited resampler.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.jit import kernel


def lowpass_coefficients(cutoff: float) -> tuple[float, float, float, float, float]:
    """``(b0, b1, b2, a1, a2)`` of a 2-pole Butterworth low-pass at ``cutoff`` (a fraction of the sample rate,
    clamped to at least 0.001), by the bilinear transform of ``1 / (s^2 + sqrt(2) s + 1)``."""
    k = 1.0 / math.tan(math.pi * max(0.001, cutoff))
    norm = 1.0 / (1.0 + math.sqrt(2.0) * k + k * k)
    return norm, 2.0 * norm, norm, 2.0 * norm * (1.0 - k * k), norm * (1.0 - math.sqrt(2.0) * k + k * k)


@kernel
def _biquad(x: np.ndarray, b0: float, b1: float, b2: float, a1: float, a2: float) -> np.ndarray:
    """Filter the rows of ``x`` (float64) with a biquad, zero initial state (direct form I)."""
    out = np.empty_like(x)
    for c in range(x.shape[0]):
        x1 = x2 = y1 = y2 = 0.0
        for i in range(x.shape[1]):
            x0 = x[c, i]
            y0 = b0 * x0 + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            out[c, i] = y0
            x2, x1, y2, y1 = x1, x0, y1, y0
    return out


@kernel
def _interpolate(x: np.ndarray, ratio: float, length: int) -> np.ndarray:
    """Linear interpolation of the rows of ``x`` at positions ``k * ratio``, k < ``length`` (zeros past the end)."""
    channels, n = x.shape
    out = np.zeros((channels, length))
    for k in range(length):
        position = k * ratio
        i = int(math.floor(position))
        frac = position - i
        for c in range(channels):
            a = x[c, i] if i < n else 0.0
            b = x[c, i + 1] if i + 1 < n else 0.0
            out[c, k] = a + frac * (b - a)
    return out


def resample_impulse_response(ir: np.ndarray, from_rate: float, to_rate: float) -> np.ndarray:
    """``ir`` (channels, n) at ``from_rate`` Hz -> (channels, round(n * to_rate / from_rate)) float32 at ``to_rate``."""
    ratio = float(from_rate) / float(to_rate)
    length = max(1, int(round(ir.shape[1] / ratio)))
    x = np.ascontiguousarray(ir, np.float64)
    if ratio > 1.0:  # downsampling: band-limit first
        x = _biquad(x, *lowpass_coefficients(0.5 / ratio))
        return _interpolate(x, ratio, length).astype(np.float32)
    y = _interpolate(x, ratio, length)
    return _biquad(y, *lowpass_coefficients(0.5 * ratio)).astype(np.float32)
