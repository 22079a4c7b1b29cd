"""Numba kernels of :mod:`stompbox.io.codecs.wav`: interleaved file samples to float32 ``(channels, frames)`` in one
pass (imported only when a reader first needs them)."""

from __future__ import annotations

import numpy as np

from ..._base.jit import kernel


@kernel
def deinterleave(src: np.ndarray, out: np.ndarray, col: int, bias: float, scale: float) -> None:
    """``out[c, col + i] = (float32(src[i * channels + c]) - bias) * scale`` for ``i < len(src) // channels``.

    In float32 arithmetic (``bias`` is 128 for unsigned 8-bit PCM, else 0; ``scale`` is
    ``1 / (2**(bits-1) - 1)`` for integer PCM as pedalboard reads it, 1 for floats). Mono and stereo have
    their own loops, which vectorise.
    """
    channels = out.shape[0]
    n = src.shape[0] // channels
    b = np.float32(bias)
    s = np.float32(scale)
    # Rows sliced first: indexing them with a plain ``i`` lets LLVM vectorise (``col + i`` would not).
    if channels == 1:
        row = out[0, col : col + n]
        for i in range(n):
            row[i] = (np.float32(src[i]) - b) * s
    elif channels == 2:
        left = out[0, col : col + n]
        right = out[1, col : col + n]
        for i in range(n):
            left[i] = (np.float32(src[2 * i]) - b) * s
            right[i] = (np.float32(src[2 * i + 1]) - b) * s
    else:
        for c in range(channels):
            row = out[c, col : col + n]
            for i in range(n):
                row[i] = (np.float32(src[i * channels + c]) - b) * s


@kernel
def deinterleave24(src: np.ndarray, out: np.ndarray, col: int, scale: float) -> None:
    """Packed little-endian 24-bit samples (bytes) to float32 ``float32(value) * float32(scale)``."""
    channels = out.shape[0]
    n = src.shape[0] // (3 * channels)
    s = np.float32(scale)
    for c in range(channels):
        row = out[c, col : col + n]
        for i in range(n):
            j = 3 * (i * channels + c)
            value = np.int32(src[j]) | (np.int32(src[j + 1]) << 8) | (np.int32(src[j + 2]) << 16)
            if value >= 8388608:  # sign of the 24-bit value
                value -= 16777216
            row[i] = np.float32(value) * s


@kernel
def quantize_interleave(src: np.ndarray, out: np.ndarray, full: float, low: float, high: float, shift: int) -> None:
    """``out[i, c] = clip(round(src[c, i] * full), low, high) << shift`` (NaN as 0): float32 ``(channels, n)``
    to interleaved integers ``(n, channels)`` in one pass.

    The exact inverse of reading (``k * float32(1 / full)``): when ``full`` is 2**23 - 1 (24-bit), where float32
    cannot hold ``k / full`` exactly, the neighbour whose float32 value is the sample is chosen.
    """
    n, channels = out.shape
    scale = np.float32(1.0 / full)
    fix = full == 8388607.0
    for c in range(channels):
        row = src[c]
        for i in range(n):
            x = row[i]
            v = np.rint(np.float64(x) * full)
            v = min(max(v, low), high)
            if v != v:
                v = 0.0
            k = np.int64(v)
            if fix and np.float32(k) * scale != x:
                other = k + 1 if np.float32(k) * scale < x else k - 1
                if low <= other <= high and np.float32(other) * scale == x:
                    k = other
            out[i, c] = k << shift
