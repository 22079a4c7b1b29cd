"""Loudness per ITU-R BS.1770-4 and EBU R 128: integrated, momentary and short-term loudness, loudness range
(EBU Tech 3342), sample peak and true peak; a streaming meter; loudness normalisation of arrays and files.

How the measurement works (BS.1770-4, Annex 1 and 2; EBU Tech 3341/3342):

- **K-weighting**: each channel goes through two biquads, a high shelf (+4 dB above ~1.7 kHz, the acoustic
  effect of the head) and a high-pass (the "RLB" curve, ~38 Hz). Both are designed for the stream's sample rate
  from their analogue prototypes by the bilinear transform, with constants that reproduce the coefficients
  BS.1770 publishes for 48 kHz (checked in the tests).
- **Energies, not audio**: the meter keeps, per channel, the sum of squares of the K-weighted signal over each
  100 ms segment (segment ``k`` ends at sample ``round(k * sample_rate / 10)``). That is one float per 100 ms per
  channel (about 7 MB per day of stereo), so any length of audio is measured in bounded memory, and the result
  is the same whichever way the audio was split into blocks.
- **Momentary** loudness is measured over 400 ms windows (4 segments), **short-term** over 3 s windows
  (30 segments), both every 100 ms, counting complete windows only; a window's loudness is
  ``-0.691 + 10 log10(sum_c G_c * mean_square_c)`` with channel weights ``G`` (1.41 for the surround channels).
- **Integrated** loudness is the gated mean of the 400 ms blocks (75 % overlap): blocks above the absolute gate
  (-70 LUFS), then above the relative gate (10 LU below the mean of those).
- **Loudness range** (Tech 3342): short-term values above -70 LUFS and above 20 LU below their mean; LRA is
  the spread between their 10th and 95th percentiles (linear interpolation between ranks).
- **True peak** (Annex 2): each channel is oversampled 4x by a polyphase windowed-sinc interpolator (24 taps
  per phase, Kaiser window, every phase normalised to unity gain at DC) and the largest absolute value is
  reported in dBTP. The samples themselves are phase 0, so the true peak is never below the sample peak. The
  4x grid under-reads a full-scale tone by at most ~0.2 dB (Tech 3341 allows +0.2/-0.4 dB).
"""

from __future__ import annotations

import math
import os
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base import jit, limits
from .._base.layout import detect_layout
from ..core.jit import kernel

__all__ = [
    "LoudnessMeter",
    "LoudnessNormalize",
    "LoudnessResult",
    "NormalizeReport",
    "k_weighting_coefficients",
    "loudness",
    "loudness_of_file",
    "measure_reader",
    "normalization_gain_db",
    "normalize_file",
    "normalize_reader",
]

#: the constant of BS.1770's loudness formula, ``L = -0.691 + 10 log10(sum G_c z_c)``
LOUDNESS_OFFSET = -0.691
ABSOLUTE_GATE_LUFS = -70.0
RELATIVE_GATE_LU = -10.0
LRA_RELATIVE_GATE_LU = -20.0
LRA_PERCENTILES = (10.0, 95.0)
SEGMENTS_PER_SECOND = 10
MOMENTARY_SEGMENTS = 4  # 400 ms
SHORT_TERM_SEGMENTS = 30  # 3 s
MIN_SAMPLE_RATE = 4000.0  # the shelf's corner (1.68 kHz) must sit well below Nyquist

# analogue prototypes of the two K-weighting stages (reproduce BS.1770's 48 kHz coefficients)
_SHELF_HZ = 1681.974450955533
_SHELF_GAIN_DB = 3.999843853973347
_SHELF_Q = 0.7071752369554196
_SHELF_BAND_EXPONENT = 0.4996667741545416  # the shelf's mid-band gain is Vh ** this
_HIGHPASS_HZ = 38.13547087602444
_HIGHPASS_Q = 0.5003270373238773

_TP_OVERSAMPLING = 4
_TP_TAPS = 24  # per phase (even)
_TP_BETA = 8.0
_CHUNK = 1 << 16  # frames per kernel call (bounds the temporary copies)
#: a reader at most this long is measured with NumPy (:func:`measure_reader`) while Numba is not loaded yet:
#: loading it takes longer than measuring a short file without it
NUMPY_SECONDS = 5.0

# default channel weights by channel count (BS.1770-4 Table 3; channel orders as in WAV files)
_DEFAULT_WEIGHTS = {
    5: (1.0, 1.0, 1.0, 1.41, 1.41),  # L, R, C, Ls, Rs
    6: (1.0, 1.0, 1.0, 0.0, 1.41, 1.41),  # L, R, C, LFE, Ls, Rs (5.1; the LFE is not measured)
}


# ---------------------------------------------------------------------------------------------- filters
def k_weighting_coefficients(sample_rate: float) -> np.ndarray:
    """The two K-weighting biquads for ``sample_rate`` (Hz): float64 ``(2, 5)``, rows ``[b0, b1, b2, a1, a2]``
    (``a0 = 1``), the high shelf first, then the high-pass.

    Designed from the analogue prototypes by the bilinear transform with the corner frequency prewarped, so
    at 48 kHz they equal the coefficients printed in BS.1770-4 (to ~1e-8).
    """
    rate = float(sample_rate)
    k = math.tan(math.pi * _SHELF_HZ / rate)
    vh = 10.0 ** (_SHELF_GAIN_DB / 20.0)
    vb = vh**_SHELF_BAND_EXPONENT
    a0 = 1.0 + k / _SHELF_Q + k * k
    shelf = [
        (vh + vb * k / _SHELF_Q + k * k) / a0,
        2.0 * (k * k - vh) / a0,
        (vh - vb * k / _SHELF_Q + k * k) / a0,
        2.0 * (k * k - 1.0) / a0,
        (1.0 - k / _SHELF_Q + k * k) / a0,
    ]
    k = math.tan(math.pi * _HIGHPASS_HZ / rate)
    a0 = 1.0 + k / _HIGHPASS_Q + k * k
    highpass = [1.0, -2.0, 1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / _HIGHPASS_Q + k * k) / a0]
    return np.array([shelf, highpass], dtype=np.float64)


def _k_energy_kernel(
    block: np.ndarray,
    coeffs: np.ndarray,
    state: np.ndarray,
    acc: np.ndarray,
    ends: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """K-weight ``block`` ((channels, n), not modified) and sum the squares per 100 ms segment.

    ``coeffs`` is float64 ``(2, 5)`` (:func:`k_weighting_coefficients`); ``state`` float64 ``(channels, 8)``:
    each stage's ``[x1, x2, y1, y2]``; ``acc`` float64 ``(channels,)``: the open segment's sum so far.
    ``ends`` (int64, ascending, in ``[1, n]``) are the block positions where segments end: after sample
    ``ends[e] - 1``, ``out[e, c]`` receives the segment's sum and the accumulator restarts. Direct form I in
    double precision.
    """
    b0, b1, b2, a1, a2 = coeffs[0, 0], coeffs[0, 1], coeffs[0, 2], coeffs[0, 3], coeffs[0, 4]
    d0, d1, d2, c1, c2 = coeffs[1, 0], coeffs[1, 1], coeffs[1, 2], coeffs[1, 3], coeffs[1, 4]
    channels, n = block.shape
    m = ends.shape[0]
    for c in range(channels):
        row = block[c]
        x1, x2, y1, y2 = state[c, 0], state[c, 1], state[c, 2], state[c, 3]
        u1, u2, v1, v2 = state[c, 4], state[c, 5], state[c, 6], state[c, 7]
        s = acc[c]
        e = 0
        nxt = ends[0] if m > 0 else n + 1
        for i in range(n):
            x = np.float64(row[i])
            y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            v = d0 * y + d1 * u1 + d2 * u2 - c1 * v1 - c2 * v2
            u2 = u1
            u1 = y
            v2 = v1
            v1 = v
            s += v * v
            if i + 1 == nxt:
                out[e, c] = s
                s = 0.0
                e += 1
                nxt = ends[e] if e < m else n + 1
        # keep decaying state out of the subnormal range (slow arithmetic on long silences)
        if abs(y1) < 1e-30 and abs(y2) < 1e-30:
            y1 = 0.0
            y2 = 0.0
        if abs(v1) < 1e-30 and abs(v2) < 1e-30:
            v1 = 0.0
            v2 = 0.0
        state[c, 0], state[c, 1], state[c, 2], state[c, 3] = x1, x2, y1, y2
        state[c, 4], state[c, 5], state[c, 6], state[c, 7] = u1, u2, v1, v2
        acc[c] = s


def _true_peak_filter() -> np.ndarray:
    """Phases 1..3 of the 4x interpolator: float64 ``(3, taps)``. Phase ``p`` gives the signal at
    ``j + p/4`` from the samples ``j - taps/2 + 1 .. j + taps/2``."""
    half = _TP_TAPS // 2
    k = np.arange(_TP_TAPS)
    phases = []
    for p in range(1, _TP_OVERSAMPLING):
        u = p / _TP_OVERSAMPLING + half - 1 - k  # distance from each tap's sample to the interpolated point
        window = np.i0(_TP_BETA * np.sqrt(np.maximum(0.0, 1.0 - (u / half) ** 2))) / np.i0(_TP_BETA)
        h = np.sinc(u) * window
        phases.append(h / h.sum())
    return np.array(phases, dtype=np.float64)


_TP_FILTER = _true_peak_filter()


def _true_peak_kernel(buf: np.ndarray, h: np.ndarray, peaks: np.ndarray) -> None:  # pragma: no cover - compiled
    """Largest absolute interpolated value per channel of ``buf`` ((channels, taps + n) float64: the last
    ``taps`` samples of history, then the new block), between ``buf[j]`` and ``buf[j + 1]`` for the ``n``
    points ``j = taps/2 - 1 ...``; ``peaks`` (float64 ``(channels,)``) is raised in place. ``h`` holds the
    three interpolating phases (:func:`_true_peak_filter`).

    Works on tiles of points with the tap loop outside, so the inner loop runs over independent points (the
    compiler vectorises it); every point still sums its taps in the same order, so the result does not depend
    on how the stream was split into blocks.
    """
    taps = h.shape[1]
    channels, total = buf.shape
    n = total - taps
    tile = 512
    a0 = np.empty(tile)
    a1 = np.empty(tile)
    a2 = np.empty(tile)
    for c in range(channels):
        row = buf[c]
        peak = peaks[c]
        for t0 in range(0, n, tile):
            m = min(tile, n - t0)
            a0[:m] = 0.0
            a1[:m] = 0.0
            a2[:m] = 0.0
            for k in range(taps):
                h0 = h[0, k]
                h1 = h[1, k]
                h2 = h[2, k]
                seg = row[t0 + k : t0 + k + m]  # the k-th tap of points t0 .. t0 + m - 1
                for i in range(m):
                    x = seg[i]
                    a0[i] += h0 * x
                    a1[i] += h1 * x
                    a2[i] += h2 * x
            for i in range(m):
                v = max(abs(a0[i]), abs(a1[i]), abs(a2[i]))
                if v > peak:
                    peak = v
        peaks[c] = peak


_COMPILED: dict[str, Any] = {}


def _compiled(fn: Any) -> Any:
    """``fn`` compiled by Numba, on first use (importing this module loads no Numba)."""
    found = _COMPILED.get(fn.__name__)
    if found is None:
        found = _COMPILED[fn.__name__] = kernel(fn)
    return found


#: samples per step of the NumPy K-weighting (:func:`_k_energy_numpy`)
_IIR_BLOCK = 256


def _all_pole(v: np.ndarray, a1: float, a2: float, y1: np.ndarray, y2: np.ndarray) -> np.ndarray:
    """``y[n] = v[n] - a1 y[n-1] - a2 y[n-2]`` along the last axis of float64 ``v`` ``(channels, n)``, from the
    outputs ``y1``, ``y2`` before it, in NumPy: blocks of :data:`_IIR_BLOCK` samples are filtered from zero state
    by one matrix product (the filter's impulse response as a Toeplitz matrix), then each block gets the decay of
    the state the block before left it (a 2-value recursion over blocks)."""
    channels, n = v.shape
    size = _IIR_BLOCK
    blocks = -(-n // size)
    padded = np.zeros((channels, blocks * size))
    padded[:, :n] = v
    h = np.zeros(size + 2)  # the impulse response; h[k] for k >= 0 at h[k + 2]
    h[2] = 1.0
    for k in range(1, size):
        h[k + 2] = -a1 * h[k + 1] - a2 * h[k]
    index = np.arange(size)
    toeplitz = np.where(index[:, None] >= index[None, :], h[2:][np.maximum(index[:, None] - index[None, :], 0)], 0.0)
    # the response of a block to the state (y[-1], y[-2]) before it: g1 to y[-1], g2 to y[-2]
    g1 = np.zeros(size)
    g2 = np.zeros(size)
    p1, p2, q1, q2 = 1.0, 0.0, 0.0, 1.0  # (y[k-1], y[k-2]) as multiples of y[-1] and of y[-2]
    for k in range(size):
        g1[k] = -a1 * p1 - a2 * p2
        g2[k] = -a1 * q1 - a2 * q2
        p1, p2, q1, q2 = g1[k], p1, g2[k], q1
    zero_state = padded.reshape(channels, blocks, size) @ toeplitz.T
    # the states each block starts from: (y[-1], y[-2]) of the block before, a 2 x 2 recursion over blocks
    last, before = zero_state[:, :, -1].T.copy(), zero_state[:, :, -2].T.copy()  # (blocks, channels)
    starts1 = np.empty((blocks, channels))
    starts2 = np.empty((blocks, channels))
    s1, s2 = np.asarray(y1, np.float64).copy(), np.asarray(y2, np.float64).copy()
    m11, m12, m21, m22 = g1[-1], g2[-1], g1[-2], g2[-2]
    for b in range(blocks):
        starts1[b] = s1
        starts2[b] = s2
        s1, s2 = last[b] + m11 * s1 + m12 * s2, before[b] + m21 * s1 + m22 * s2
    out = zero_state + starts1.T[:, :, None] * g1 + starts2.T[:, :, None] * g2
    return out.reshape(channels, blocks * size)[:, :n]


def _biquad(x: np.ndarray, b: np.ndarray, a1: float, a2: float, state: np.ndarray) -> np.ndarray:
    """One direct-form-I biquad over float64 ``x`` ``(channels, n)``; ``state`` ``(channels, 4)`` is
    ``[x1, x2, y1, y2]``, updated in place (as the compiled kernel keeps it)."""
    n = x.shape[1]
    history = np.concatenate([state[:, 1:2], state[:, 0:1], x], axis=1)  # x[-2], x[-1], x[0..]
    v = b[0] * history[:, 2:] + b[1] * history[:, 1 : n + 1] + b[2] * history[:, :n]
    y = _all_pole(v, a1, a2, state[:, 2], state[:, 3])
    state[:, 0], state[:, 1] = history[:, -1], history[:, -2]
    state[:, 2], state[:, 3] = y[:, -1], (y[:, -2] if n > 1 else state[:, 2])
    return y


def _k_energy_numpy(
    block: np.ndarray,
    coeffs: np.ndarray,
    state: np.ndarray,
    acc: np.ndarray,
    ends: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`_k_energy_kernel` in NumPy (no Numba to load: a short file is measured sooner), the same sums
    within float64 rounding (the filters are the same recursions, evaluated by blocks)."""
    n = block.shape[1]
    if n == 0:
        return
    x = np.asarray(block, np.float64)
    first = state[:, 0:4].copy()
    second = state[:, 4:8].copy()
    y = _biquad(x, coeffs[0, :3], coeffs[0, 3], coeffs[0, 4], first)
    v = _biquad(y, coeffs[1, :3], coeffs[1, 3], coeffs[1, 4], second)
    state[:, 0:4], state[:, 4:8] = first, second
    squares = v * v
    starts = np.concatenate([[0], ends]).astype(np.int64)
    for e in range(len(ends)):  # each segment summed on its own (differences of running sums lost digits)
        out[e] = squares[:, starts[e] : starts[e + 1]].sum(axis=1)
    if len(ends):
        out[0] += acc
        acc[:] = 0.0
    acc += squares[:, starts[-1] :].sum(axis=1)


def _true_peak_numpy(buf: np.ndarray, h: np.ndarray, peaks: np.ndarray) -> None:
    """:func:`_true_peak_kernel` in NumPy."""
    taps = h.shape[1]
    n = buf.shape[1] - taps
    if n <= 0:
        return
    windows = np.lib.stride_tricks.sliding_window_view(buf, taps, axis=1)[:, :n]  # (channels, n, taps)
    for phase in h:
        np.maximum(peaks, np.abs(windows @ phase).max(axis=1), out=peaks)


# ---------------------------------------------------------------------------------------------- results
def _db(power_or_amplitude: float, factor: float) -> float:
    return factor * math.log10(power_or_amplitude) if power_or_amplitude > 0 else -math.inf


@dataclass(frozen=True)
class LoudnessResult:
    """The loudness of a signal (BS.1770-4 / EBU R 128). Silence and too-short signals give ``-inf``.

    Attributes
    ----------
    integrated : float
        Integrated (programme) loudness in LUFS, gated (absolute -70 LUFS, relative -10 LU).
    momentary_max : float
        Largest momentary (400 ms) loudness in LUFS.
    short_term_max : float
        Largest short-term (3 s) loudness in LUFS.
    loudness_range : float
        Loudness range (LRA, EBU Tech 3342) in LU (0 when fewer than two short-term values pass the gates).
    sample_peak : float
        Largest absolute sample value of any channel, in dBFS.
    true_peak : float
        Largest absolute value of the 4x-oversampled signal of any channel, in dBTP.
    momentary, short_term : numpy.ndarray
        Loudness series in LUFS, one value every 100 ms: ``momentary[j]`` covers ``[0.1 j, 0.1 j + 0.4)`` s and
        ``short_term[j]`` covers ``[0.1 j, 0.1 j + 3)`` s (complete windows only).
    relative_gate : float
        The relative gate of the integrated loudness, in LUFS (``-inf`` if no block passed the absolute gate).
    loudness_range_low, loudness_range_high : float
        The 10th and 95th percentiles of the gated short-term loudness, in LUFS (``-inf`` when undefined).
    channel_sample_peaks, channel_true_peaks : tuple of float
        Per-channel sample peaks (dBFS) and true peaks (dBTP).
    sample_rate : float
        In Hz.
    num_channels, frames : int
        Channel count and length in samples of the measured signal.
    """

    integrated: float
    momentary_max: float
    short_term_max: float
    loudness_range: float
    sample_peak: float
    true_peak: float
    momentary: np.ndarray = field(repr=False)
    short_term: np.ndarray = field(repr=False)
    relative_gate: float
    loudness_range_low: float
    loudness_range_high: float
    channel_sample_peaks: tuple[float, ...]
    channel_true_peaks: tuple[float, ...]
    sample_rate: float
    num_channels: int
    frames: int

    @property
    def duration(self) -> float:
        """Length of the measured signal in seconds."""
        return self.frames / self.sample_rate

    def to_dict(self) -> dict[str, Any]:
        """The scalar figures as a JSON-ready dict (``-inf`` becomes ``None``)."""

        def clean(value: float) -> float | None:
            return None if not math.isfinite(value) else round(float(value), 3)

        return {
            "integrated_lufs": clean(self.integrated),
            "momentary_max_lufs": clean(self.momentary_max),
            "short_term_max_lufs": clean(self.short_term_max),
            "loudness_range_lu": clean(self.loudness_range),
            "sample_peak_dbfs": clean(self.sample_peak),
            "true_peak_dbtp": clean(self.true_peak),
            "sample_rate": self.sample_rate,
            "num_channels": self.num_channels,
            "frames": self.frames,
            "duration_seconds": round(self.duration, 6),
        }

    def summary(self) -> str:
        """A few lines for people: ``Integrated: -23.0 LUFS`` and so on."""

        def f(value: float, unit: str) -> str:
            return f"{value:.1f} {unit}" if math.isfinite(value) else f"-inf {unit}"

        return "\n".join(
            [
                f"Integrated:      {f(self.integrated, 'LUFS')}",
                f"Loudness range:  {f(self.loudness_range, 'LU')}",
                f"Momentary max:   {f(self.momentary_max, 'LUFS')}",
                f"Short-term max:  {f(self.short_term_max, 'LUFS')}",
                f"True peak:       {f(self.true_peak, 'dBTP')}",
                f"Sample peak:     {f(self.sample_peak, 'dBFS')}",
            ]
        )


# ---------------------------------------------------------------------------------------------- the meter
class LoudnessMeter:
    """A streaming BS.1770-4 / EBU R 128 loudness meter: feed blocks with :meth:`add`, read :meth:`result`.

    Memory is bounded by one float per 100 ms per channel (plus the block being added), so files of any length
    can be measured; the result equals :func:`loudness` of the whole signal however it was split into blocks.

    Parameters
    ----------
    sample_rate : float
        Sample rate in Hz (>= 4000).
    num_channels : int, optional
        Channel count (>= 1). By default it is taken from the first block (the smaller dimension of a 2-D
        block, as for ``process``).
    channel_weights : sequence of float, optional
        Weight of each channel in the loudness sum. By default 1.0 for every channel, except 5 channels
        (L, R, C, Ls, Rs: ``1, 1, 1, 1.41, 1.41``) and 6 channels (5.1 as in WAV files, L, R, C, LFE, Ls, Rs:
        ``1, 1, 1, 0, 1.41, 1.41``).
    compiled : bool
        Filter with the Numba kernels (default), or with NumPy (no Numba to load: faster for a few seconds of
        audio, slower for long files; the same figures within float64 rounding).

    Examples
    --------
    >>> meter = LoudnessMeter(48000, 2)
    >>> for block in blocks:  # doctest: +SKIP
    ...     meter.add(block)
    >>> meter.result().integrated  # doctest: +SKIP
    -23.0
    """

    def __init__(
        self,
        sample_rate: float,
        num_channels: int | None = None,
        channel_weights: Sequence[float] | None = None,
        *,
        compiled: bool = True,
    ) -> None:
        self._numpy = not compiled
        rate = limits.check_sample_rate(sample_rate, "sample_rate")
        if rate < MIN_SAMPLE_RATE:
            raise limits.LimitError(
                f"sample_rate must be at least {MIN_SAMPLE_RATE:g} Hz for loudness (got {sample_rate!r})"
            )
        self.sample_rate = rate
        self._weights_arg = None if channel_weights is None else tuple(float(w) for w in channel_weights)
        self._coeffs = k_weighting_coefficients(rate)
        self.num_channels = 0
        self.frames = 0
        self._next_segment = 1  # the number of the next segment to end (segment k ends at _boundary(k))
        self._chunks: list[np.ndarray] = []  # finished segment energies, (segments, channels) arrays
        if num_channels is not None:
            self._setup(int(num_channels))

    # ------------------------------------------------------------------ state
    def _setup(self, channels: int) -> None:
        if channels < 1:
            raise ValueError(f"num_channels must be at least 1 (got {channels})")
        weights = self._weights_arg or _DEFAULT_WEIGHTS.get(channels, (1.0,) * channels)
        if len(weights) != channels:
            raise ValueError(f"channel_weights has {len(weights)} values for {channels} channels")
        if any(not (w >= 0 and math.isfinite(w)) for w in weights):
            raise ValueError(f"channel weights must be finite and >= 0 (got {weights})")
        self.num_channels = channels
        self.channel_weights = np.array(weights, dtype=np.float64)
        self._state = np.zeros((channels, 8))
        self._acc = np.zeros(channels)
        self._history = np.zeros((channels, _TP_TAPS))
        self._true_peaks = np.zeros(channels)
        self._sample_peaks = np.zeros(channels)

    def _boundary(self, k: np.ndarray | int) -> Any:
        """Sample index where segment ``k`` (1-based) ends: ``round(k * sample_rate / 10)``."""
        return np.floor(np.asarray(k, dtype=np.float64) * self.sample_rate / SEGMENTS_PER_SECOND + 0.5).astype(np.int64)

    def reset(self) -> None:
        """Forget everything measured (keeps the sample rate, channel count and weights)."""
        self.frames = 0
        self._next_segment = 1
        self._chunks = []
        if self.num_channels:
            self._setup(self.num_channels)

    # ------------------------------------------------------------------ feeding
    def _as_block(self, block: Any, layout: str | None) -> np.ndarray:
        array = np.asarray(block)
        if array.dtype.kind in "iu":
            raise TypeError("Audio must be float32 or float64 samples (got integers).")
        if array.dtype not in (np.float32, np.float64):
            array = array.astype(np.float64)
        if array.ndim == 1:
            array = array[np.newaxis, :]
        elif array.ndim != 2:
            raise ValueError(f"Audio must be 1-D or 2-D (got {array.ndim} dimensions)")
        elif layout == "channels-last":
            array = array.T
        elif layout is None:  # stompbox's layout rule: the meter's channel count wins, else the smaller dimension
            hint = ("channels-first", self.num_channels) if self.num_channels else None
            if detect_layout(array.shape, hint) == "channels-last":  # a square array is ambiguous (LayoutError)
                array = array.T
        elif layout != "channels-first":
            raise ValueError(f"layout must be 'channels-first' or 'channels-last' (got {layout!r})")
        if not self.num_channels:
            self._setup(array.shape[0])
        if array.shape[0] != self.num_channels:
            raise ValueError(f"Expected {self.num_channels} channels, got a block of shape {np.shape(block)}")
        return array

    def add(self, block: Any, *, layout: str | None = None) -> LoudnessMeter:
        """Measure the next block of the stream.

        Parameters
        ----------
        block : numpy.ndarray
            float32/float64 audio: 1-D (mono), ``(channels, n)`` or ``(n, channels)`` (the axis whose length is
            the meter's channel count is the channels; if both are, channels-first).
        layout : {"channels-first", "channels-last"}, optional
            Say which axis is the channels instead.

        Returns
        -------
        LoudnessMeter
            ``self``, so ``LoudnessMeter(sr).add(audio).result()`` reads well.
        """
        array = self._as_block(block, layout)
        for start in range(0, array.shape[1], _CHUNK):
            self._add_chunk(array[:, start : start + _CHUNK])
        return self

    def _add_chunk(self, chunk: np.ndarray) -> None:
        n = chunk.shape[1]
        if n == 0:
            return
        chunk = np.ascontiguousarray(chunk)
        if chunk.dtype not in (np.float32, np.float64):
            chunk = chunk.astype(np.float64)
        start = self.frames
        stop = start + n
        last = int(stop * SEGMENTS_PER_SECOND / self.sample_rate) + 2
        ks = np.arange(self._next_segment, max(self._next_segment, last + 1))
        ends = self._boundary(ks) if ks.size else np.zeros(0, np.int64)
        ends = ends[ends <= stop]
        out = np.zeros((ends.shape[0], self.num_channels))
        energy, peak = (_k_energy_numpy, _true_peak_numpy) if self._numpy else (
            _compiled(_k_energy_kernel), _compiled(_true_peak_kernel))  # fmt: skip
        energy(chunk, self._coeffs, self._state, self._acc, ends - start, out)
        if ends.shape[0]:
            self._chunks.append(out)
            self._next_segment += ends.shape[0]
        buf = np.empty((self.num_channels, _TP_TAPS + n))
        buf[:, :_TP_TAPS] = self._history
        buf[:, _TP_TAPS:] = chunk
        peak(buf, _TP_FILTER, self._true_peaks)
        self._history = buf[:, -_TP_TAPS:].copy()
        np.maximum(self._sample_peaks, np.abs(chunk).max(axis=1), out=self._sample_peaks)
        self.frames = stop

    # ------------------------------------------------------------------ reading
    def segment_energies(self) -> np.ndarray:
        """The finished 100 ms segments' sums of squared K-weighted samples: float64 ``(segments, channels)``."""
        if len(self._chunks) > 1:
            self._chunks = [np.concatenate(self._chunks)]
        if not self._chunks:
            return np.zeros((0, max(self.num_channels, 1)))
        return self._chunks[0]

    def _window_powers(self, energies: np.ndarray, size: int) -> np.ndarray:
        """Weighted mean square of every complete window of ``size`` segments (hop: one segment)."""
        count = energies.shape[0] - size + 1
        if count <= 0:
            return np.zeros(0)
        weighted = energies @ self.channel_weights
        sums = weighted[:count].copy()
        for offset in range(1, size):
            sums += weighted[offset : offset + count]
        starts = self._boundary(np.arange(count))
        lengths = self._boundary(np.arange(size, size + count)) - starts
        result: np.ndarray = sums / lengths
        return result

    def result(self) -> LoudnessResult:
        """The loudness of everything added so far (the meter can keep going afterwards)."""
        if not self.num_channels:
            self._setup(1)
        energies = self.segment_energies()
        block_powers = self._window_powers(energies, MOMENTARY_SEGMENTS)
        st_powers = self._window_powers(energies, SHORT_TERM_SEGMENTS)
        with np.errstate(divide="ignore"):
            momentary = LOUDNESS_OFFSET + 10.0 * np.log10(block_powers)
            short_term = LOUDNESS_OFFSET + 10.0 * np.log10(st_powers)
        integrated, relative_gate = _gated_mean(block_powers, momentary, RELATIVE_GATE_LU)
        lra, low, high = _loudness_range(st_powers, short_term)
        # the last true-peak points (between the last samples and the silence after them), on copies
        peaks = self._true_peaks.copy()
        flush = np.zeros((self.num_channels, _TP_TAPS + _TP_TAPS // 2))
        flush[:, :_TP_TAPS] = self._history
        if self.frames:
            (_true_peak_numpy if self._numpy else _compiled(_true_peak_kernel))(flush, _TP_FILTER, peaks)
        peaks = np.maximum(peaks, self._sample_peaks)
        return LoudnessResult(
            integrated=integrated,
            momentary_max=float(momentary.max()) if momentary.size else -math.inf,
            short_term_max=float(short_term.max()) if short_term.size else -math.inf,
            loudness_range=lra,
            sample_peak=_db(float(self._sample_peaks.max()), 20.0),
            true_peak=_db(float(peaks.max()), 20.0),
            momentary=momentary,
            short_term=short_term,
            relative_gate=relative_gate,
            loudness_range_low=low,
            loudness_range_high=high,
            channel_sample_peaks=tuple(_db(float(p), 20.0) for p in self._sample_peaks),
            channel_true_peaks=tuple(_db(float(p), 20.0) for p in peaks),
            sample_rate=self.sample_rate,
            num_channels=self.num_channels,
            frames=self.frames,
        )


def _gated_mean(powers: np.ndarray, levels: np.ndarray, relative_lu: float) -> tuple[float, float]:
    """BS.1770 gating: (loudness of the blocks above both gates, the relative gate), ``-inf`` if none pass."""
    above = levels > ABSOLUTE_GATE_LUFS
    if not above.any():
        return -math.inf, -math.inf
    relative = LOUDNESS_OFFSET + 10.0 * math.log10(float(powers[above].mean())) + relative_lu
    kept = above & (levels > relative)
    if not kept.any():
        return -math.inf, relative
    return LOUDNESS_OFFSET + 10.0 * math.log10(float(powers[kept].mean())), relative


def _loudness_range(powers: np.ndarray, levels: np.ndarray) -> tuple[float, float, float]:
    """EBU Tech 3342: (LRA, low percentile, high percentile) of the short-term values."""
    above = levels > ABSOLUTE_GATE_LUFS
    if not above.any():
        return 0.0, -math.inf, -math.inf
    relative = LOUDNESS_OFFSET + 10.0 * math.log10(float(powers[above].mean())) + LRA_RELATIVE_GATE_LU
    kept = levels[above & (levels > relative)]
    if kept.size < 2:
        return 0.0, -math.inf, -math.inf
    low, high = (float(v) for v in np.percentile(kept, LRA_PERCENTILES))
    return high - low, low, high


# ---------------------------------------------------------------------------------------------- functions
def loudness(
    audio: np.ndarray,
    sample_rate: float,
    *,
    layout: str | None = None,
    channel_weights: Sequence[float] | None = None,
) -> LoudnessResult:
    """Measure the loudness of an array (ITU-R BS.1770-4 / EBU R 128).

    Parameters
    ----------
    audio : numpy.ndarray
        float32/float64 audio: 1-D (mono), ``(channels, samples)`` or ``(samples, channels)`` (the smaller
        dimension is the channels unless ``layout`` says otherwise).
    sample_rate : float
        Sample rate in Hz (>= 4000).
    layout : {"channels-first", "channels-last"}, optional
        Which axis is the channels, for square or ambiguous arrays.
    channel_weights : sequence of float, optional
        See :class:`LoudnessMeter`.

    Returns
    -------
    LoudnessResult
        Integrated, momentary and short-term loudness (LUFS), loudness range (LU), sample peak (dBFS) and true
        peak (dBTP).
    """
    array = np.asarray(audio)
    channels = None
    if array.ndim == 2:
        if layout == "channels-last":
            channels = array.shape[1]
        elif layout == "channels-first":
            channels = array.shape[0]
        elif layout is None:
            if array.shape[0] and array.shape[1]:  # stompbox's layout rule: a square array is ambiguous
                channels = array.shape[0 if detect_layout(array.shape) == "channels-first" else 1]
            else:
                channels = max(array.shape[0], 1)
        else:
            raise ValueError(f"layout must be 'channels-first' or 'channels-last' (got {layout!r})")
    meter = LoudnessMeter(sample_rate, channels, channel_weights)
    return meter.add(array, layout=layout).result()


def measure_reader(
    reader: Any,
    *,
    block_frames: int = 1 << 16,
    channel_weights: Sequence[float] | None = None,
    progress: Callable[[int], Any] | None = None,
) -> LoudnessResult:
    """Measure everything an open reader holds, block by block (bounded memory).

    ``reader`` is anything with ``read(n)`` returning float32 ``(channels, n)`` (empty at the end),
    ``samplerate`` and ``num_channels``: a ``ReadableAudioFile``, or a resampled/re-channelled view of one.
    ``progress`` is called with the frames of each block.
    """
    frames = int(getattr(reader, "frames", 0) or 0)
    short = 0 < frames <= NUMPY_SECONDS * float(reader.samplerate) and bool(getattr(reader, "exact_duration_known", 1))
    meter = LoudnessMeter(
        reader.samplerate, reader.num_channels, channel_weights, compiled=not (short and not jit.loaded())
    )
    while True:
        block = reader.read(block_frames)
        if block.shape[-1] == 0:
            break
        meter.add(block, layout="channels-first")
        if progress is not None:
            progress(block.shape[-1])
    return meter.result()


def loudness_of_file(
    path: str | os.PathLike[str] | Any,
    *,
    block_frames: int = 1 << 16,
    channel_weights: Sequence[float] | None = None,
    progress: Callable[[int], Any] | None = None,
) -> LoudnessResult:
    """Measure the loudness of an audio file of any length, streaming it through :class:`LoudnessMeter`.

    Parameters
    ----------
    path : str, os.PathLike or file-like
        Anything ``stompbox.io.AudioFile`` opens for reading.
    block_frames : int
        Frames read at once (memory is proportional to it).
    channel_weights : sequence of float, optional
        See :class:`LoudnessMeter`.
    progress : callable, optional
        Called with the number of frames of each block read.
    """
    from ..io import AudioFile

    with AudioFile(os.fspath(path) if isinstance(path, os.PathLike) else path) as reader:
        return measure_reader(reader, block_frames=block_frames, channel_weights=channel_weights, progress=progress)


# ---------------------------------------------------------------------------------------------- normalising
def normalization_gain_db(result: LoudnessResult, target_lufs: float, true_peak_db: float | None = -1.0) -> float:
    """The gain (dB) that takes ``result``'s integrated loudness to ``target_lufs``, lowered if needed so the
    true peak stays at or below ``true_peak_db`` (``None``: no ceiling). 0 dB for silence.

    True peak scales exactly with a gain (the interpolator is linear), so capping the gain at
    ``true_peak_db - true_peak`` guarantees the ceiling without changing the signal's shape.
    """
    if not math.isfinite(result.integrated):
        return 0.0
    gain = float(target_lufs) - result.integrated
    if true_peak_db is not None and math.isfinite(result.true_peak):
        gain = min(gain, float(true_peak_db) - result.true_peak)
    return gain


@dataclass(frozen=True)
class NormalizeReport:
    """What a normalisation did.

    Attributes
    ----------
    before : LoudnessResult
        The measurement of the input (first pass).
    gain_db : float
        The gain applied, in dB.
    limited_by_true_peak : bool
        True if the gain was lowered to keep the true peak under the ceiling (the output is then quieter than
        the target).
    integrated : float
        The output's integrated loudness, LUFS (input + gain: gating is scale-invariant, so this is exact).
    true_peak : float
        The output's true peak, dBTP (input + gain, exact before any integer quantisation by the writer).
    """

    before: LoudnessResult
    gain_db: float
    limited_by_true_peak: bool
    integrated: float
    true_peak: float


def _report(before: LoudnessResult, target_lufs: float, true_peak_db: float | None) -> NormalizeReport:
    gain = normalization_gain_db(before, target_lufs, true_peak_db)
    limited = math.isfinite(before.integrated) and gain < float(target_lufs) - before.integrated - 1e-9
    return NormalizeReport(before, gain, bool(limited), before.integrated + gain, before.true_peak + gain)


def normalize_reader(
    reader: Any,
    write: Callable[[np.ndarray], Any],
    target_lufs: float = -14.0,
    true_peak_db: float | None = -1.0,
    *,
    block_frames: int = 1 << 16,
    progress: Callable[[int], Any] | None = None,
) -> NormalizeReport:
    """Two streaming passes over a seekable reader: measure, ``seek(0)``, then ``write`` each block times the
    gain (float32 ``(channels, n)``). ``progress`` gets the frames of each block of both passes."""
    before = measure_reader(reader, block_frames=block_frames, progress=progress)
    report = _report(before, target_lufs, true_peak_db)
    scale = 10.0 ** (report.gain_db / 20.0)
    reader.seek(0)
    while True:
        block = reader.read(block_frames)
        if block.shape[-1] == 0:
            break
        write((block * scale).astype(np.float32, copy=False))
        if progress is not None:
            progress(block.shape[-1])
    return report


def normalize_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    target_lufs: float = -14.0,
    true_peak_db: float | None = -1.0,
    *,
    bit_depth: int | None = None,
    quality: Any = None,
    block_frames: int = 1 << 16,
    progress: Callable[[int], Any] | None = None,
) -> NormalizeReport:
    """Normalise a file's integrated loudness to ``target_lufs`` in two streaming passes (bounded memory).

    The gain is capped so the true peak stays at or below ``true_peak_db`` (dBTP; ``None`` for no ceiling): the
    signal is only scaled, never limited, so a peaky file can end up quieter than the target (the report says
    so). The output (format from its extension) is written atomically; integer formats are quantised by the
    writer, which can move the true peak by about one least significant bit.

    Returns
    -------
    NormalizeReport
        The input's measurement, the gain and the output's loudness and true peak.
    """
    from ..io import AudioFile
    from ..io.formats import default_bit_depth

    if os.path.abspath(os.fspath(input_path)) == os.path.abspath(os.fspath(output_path)):
        raise ValueError("normalize_file cannot write over its input: give another output path")
    with AudioFile(os.fspath(input_path)) as reader:
        rate = reader.samplerate
        bits = bit_depth or default_bit_depth(reader.file_dtype, output_path)
        with AudioFile(os.fspath(output_path), "w", rate, reader.num_channels, bit_depth=bits, quality=quality) as out:
            return normalize_reader(
                reader, out.write, target_lufs, true_peak_db, block_frames=block_frames, progress=progress
            )


class LoudnessNormalize:
    """Loudness normalisation: measure, then scale to ``target_lufs`` with a true-peak ceiling.

    Not a streaming effect (the gain depends on the whole signal), so it works on whole arrays
    (:meth:`process`, or calling the object) and on files in two streaming passes (:meth:`process_file`).

    The true-peak ceiling caps the gain, it does not limit: if reaching the target would push the true peak
    above ``true_peak_db``, the gain is lowered to put the true peak exactly on the ceiling, and the output is
    quieter than the target (see :attr:`last_report`). The waveform's shape is never changed.

    Parameters
    ----------
    target_lufs : float
        Target integrated loudness in LUFS (-70 to 0; -14 suits streaming services, -23 is EBU R 128).
    true_peak_db : float or None
        Ceiling for the true peak in dBTP (-20 to 0), or ``None`` for no ceiling.
    """

    def __init__(self, target_lufs: float = -14.0, true_peak_db: float | None = -1.0) -> None:
        self.target_lufs = target_lufs
        self.true_peak_db = true_peak_db
        self.last_report: NormalizeReport | None = None

    @property
    def target_lufs(self) -> float:
        """The integrated loudness to reach, in LUFS (settable)."""
        return self._target

    @target_lufs.setter
    def target_lufs(self, value: float) -> None:
        value = float(value)
        if not -70.0 <= value <= 0.0:
            raise ValueError(f"target_lufs must be between -70 and 0 LUFS (got {value})")
        self._target = value

    @property
    def true_peak_db(self) -> float | None:
        """The highest true peak allowed after the gain, in dBTP, or None for no limit (settable)."""
        return self._ceiling

    @true_peak_db.setter
    def true_peak_db(self, value: float | None) -> None:
        if value is not None:
            value = float(value)
            if not -20.0 <= value <= 0.0:
                raise ValueError(f"true_peak_db must be between -20 and 0 dBTP, or None (got {value})")
        self._ceiling = value

    def gain_db(self, result: LoudnessResult) -> float:
        """The gain this normaliser applies to a signal measured as ``result``."""
        return normalization_gain_db(result, self._target, self._ceiling)

    def process(self, audio: np.ndarray, sample_rate: float, *, layout: str | None = None) -> np.ndarray:
        """Return ``audio`` (any layout, float32/float64) scaled to the target, as float32 in its layout."""
        before = loudness(audio, sample_rate, layout=layout)
        self.last_report = _report(before, self._target, self._ceiling)
        scale = 10.0 ** (self.last_report.gain_db / 20.0)
        result: np.ndarray = (np.asarray(audio) * scale).astype(np.float32)
        return result

    __call__ = process

    def process_file(
        self,
        input_path: str | os.PathLike[str],
        output_path: str | os.PathLike[str],
        **kwargs: Any,
    ) -> NormalizeReport:
        """:func:`normalize_file` with this normaliser's target and ceiling."""
        self.last_report = normalize_file(input_path, output_path, self._target, self._ceiling, **kwargs)
        return self.last_report

    def __repr__(self) -> str:
        return f"LoudnessNormalize(target_lufs={self._target!r}, true_peak_db={self._ceiling!r})"


class _CallableModule(types.ModuleType):
    """Lets ``stompbox.analysis.loudness(audio, sr)`` work even when the name is bound to this module (which
    happens when ``stompbox.analysis.loudness`` was imported as a module before the function was looked up)."""

    def __call__(self, audio: np.ndarray, sample_rate: float, **kwargs: Any) -> LoudnessResult:
        return loudness(audio, sample_rate, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
