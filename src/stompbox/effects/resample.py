"""Resample: a degradation effect that takes the signal down to a lower rate and back up.

This module also holds the streaming building blocks shared with the codec effects (:mod:`.codecs`) and the
test-support plugins (:mod:`stompbox._internal`):

- a *stage* turns a stream into a stream, possibly at another rate, and promises a *lookahead*: output sample
  ``j`` (time ``j / out_rate``) is ready as soon as input sample ``floor(j * in_rate / out_rate + lookahead)``
  has arrived. Every stage is time-aligned (its output sample ``j`` represents the instant ``j / out_rate`` of
  the input), and what it outputs depends only on absolute sample positions, never on how the input was cut
  into blocks;
- :class:`AlignedResampler` is such a stage: JUCE-style interpolators (zero-order hold, linear, Catmull-Rom,
  Lagrange) and Kaiser-windowed sinc filters, computed sample by sample from absolute positions in a Numba
  kernel, so its lookahead is an exact integer (unlike soxr, whose output arrives in bursts whose size depends
  on its internal block schedule);
- :class:`FixedBlockAdapter` is a stage that hands a wrapped function blocks of exactly ``block_size`` samples
  (what codecs need);
- :class:`AlignedPipeline` chains stages and delays the result by the constant
  ``ceil(sum of the stages' lookaheads, in input samples)``. That is the plugin's ``latency_samples``: the
  engine compensates it, so output sample ``i`` lines up with input sample ``i``, and the output is
  bit-identical for any block size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .._base import limits
from ..core.jit import kernel
from ..core.params import Param
from ..io.quality import Quality
from .pipeline_plugin import PipelinePlugin

#: Largest ratio (either way) between the input rate and ``target_sample_rate`` that Resample accepts.
MAX_RATIO = limits.MAX_RESAMPLING_RATIO
#: Largest ``target_sample_rate`` accepted, in Hz.
MAX_TARGET_RATE = limits.MAX_SAMPLE_RATE
#: Largest input block pushed through a pipeline at once (bounds the memory of the intermediate signal).
_SUB_BLOCK = 2048
#: Table resolution of the windowed-sinc kernels, in points per zero crossing.
_TABLE_STEPS = 512
#: Kaiser window shape of the windowed-sinc kernels (~ -80 dB side lobes).
_KAISER_BETA = 8.0

# Zero crossings per side for each windowed-sinc quality, and whether it lowers its cutoff to the lower
# Nyquist frequency (anti-aliasing). ``WindowedSinc`` mimics JUCE's interpolator: long and not anti-aliased.
_SINC: dict[Quality, tuple[int, bool]] = {
    Quality.WindowedSinc: (100, False),
    Quality.WindowedSinc256: (256, True),
    Quality.WindowedSinc128: (128, True),
    Quality.WindowedSinc64: (64, True),
    Quality.WindowedSinc32: (32, True),
    Quality.WindowedSinc16: (16, True),
    Quality.WindowedSinc8: (8, True),
}
# Lookahead (input samples) of the interpolators: the point after the output instant that they read.
_INTERP_LOOKAHEAD = {Quality.ZeroOrderHold: 0, Quality.Linear: 1, Quality.CatmullRom: 2, Quality.Lagrange: 2}
# History (input samples before floor(t)) that each interpolator reads.
_INTERP_HISTORY = {Quality.ZeroOrderHold: 0, Quality.Linear: 0, Quality.CatmullRom: 1, Quality.Lagrange: 1}


# --------------------------------------------------------------------------------------------- kernels
@kernel
def _interp_kernel(
    buf: np.ndarray,
    base: int,
    k0: int,
    k1: int,
    src: float,
    dst: float,
    kind: int,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Interpolate outputs ``k0..k1-1`` at input times ``t = k * src / dst``.

    ``buf[:, i]`` holds input sample ``base + i``. ``kind``: 0 hold, 1 linear, 2 Catmull-Rom, 3 Lagrange
    (4 points at -1, 0, 1, 2 around ``floor(t)``).
    """
    channels = buf.shape[0]
    for k in range(k0, k1):
        t = (k * src) / dst
        i0 = math.floor(t)
        f = t - i0
        p = int(i0) - base
        o = k - k0
        for c in range(channels):
            row = buf[c]
            if kind == 0:
                out[c, o] = row[p]
            elif kind == 1:
                a = np.float64(row[p])
                out[c, o] = a + f * (np.float64(row[p + 1]) - a)
            else:
                xm = np.float64(row[p - 1])
                x0 = np.float64(row[p])
                x1 = np.float64(row[p + 1])
                x2 = np.float64(row[p + 2])
                if kind == 2:
                    out[c, o] = x0 + 0.5 * f * (
                        x1 - xm + f * (2.0 * xm - 5.0 * x0 + 4.0 * x1 - x2 + f * (3.0 * (x0 - x1) + x2 - xm))
                    )
                else:
                    cm = -f * (f - 1.0) * (f - 2.0) / 6.0
                    c0 = (f + 1.0) * (f - 1.0) * (f - 2.0) / 2.0
                    c1 = -(f + 1.0) * f * (f - 2.0) / 2.0
                    c2 = (f + 1.0) * f * (f - 1.0) / 6.0
                    out[c, o] = cm * xm + c0 * x0 + c1 * x1 + c2 * x2


@kernel
def _sinc_kernel(
    buf: np.ndarray,
    base: int,
    k0: int,
    k1: int,
    src: float,
    dst: float,
    table: np.ndarray,
    steps: float,
    zc: float,
    fc: float,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Windowed-sinc outputs ``k0..k1-1`` at input times ``t = k * src / dst``.

    The tap for input ``j`` is ``h(|t - j| * fc)``, where ``h`` (sampled in ``table`` at ``steps`` points per
    zero crossing, ``zc`` crossings per side) is a Kaiser-windowed sinc, and ``fc`` <= 1 is the cutoff relative
    to the input's Nyquist frequency. Taps are normalised to sum to one (exact DC gain). The weights of one
    output are computed once, then applied to each channel as a contiguous dot product.
    """
    channels = buf.shape[0]
    half = zc / fc
    last = table.shape[0] - 2
    weights = np.zeros(int(2 * half) + 3)
    scale = fc * steps
    for k in range(k0, k1):
        t = (k * src) / dst
        j_lo = int(math.ceil(t - half))
        n_taps = int(math.floor(t + half)) - j_lo + 1
        wsum = 0.0
        u = (t - j_lo) * scale
        for m in range(n_taps):
            a = abs(u - m * scale)
            idx = int(a)
            w = 0.0
            if idx <= last:
                w = table[idx] + (a - idx) * (table[idx + 1] - table[idx])
            weights[m] = w
            wsum += w
        inv = 1.0 / wsum if wsum != 0.0 else 0.0
        p = j_lo - base
        o = k - k0
        for c in range(channels):
            row = buf[c]
            acc = 0.0
            for m in range(n_taps):
                acc += weights[m] * row[p + m]
            out[c, o] = acc * inv


@kernel
def _phase_kernel(
    buf: np.ndarray,
    base: int,
    k0: int,
    k1: int,
    period: int,
    step: int,
    offsets: np.ndarray,
    counts: np.ndarray,
    weights: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Windowed-sinc outputs ``k0..k1-1`` for a rational rate ratio, from weights computed once per phase.

    Output ``k = n * period + r`` reads ``counts[r]`` inputs from ``n * step + offsets[r]`` with the normalised
    weights ``weights[r]`` (what :func:`_sinc_kernel` computes for it, see :func:`_phase_tables`).
    """
    channels = buf.shape[0]
    for k in range(k0, k1):
        n = k // period
        r = k - n * period
        p = n * step + offsets[r] - base
        count = counts[r]
        w = weights[r]
        o = k - k0
        for c in range(channels):
            row = buf[c]
            acc0 = 0.0
            acc1 = 0.0
            m = 0
            while m + 1 < count:  # two sums: the additions of one do not wait for the other's
                acc0 += w[m] * row[p + m]
                acc1 += w[m + 1] * row[p + m + 1]
                m += 2
            if m < count:
                acc0 += w[m] * row[p + m]
            out[c, o] = acc0 + acc1


#: Most phases (output samples before the pattern of input times repeats) and weights kept per resampler
_MAX_PERIOD = 8192
_MAX_WEIGHTS = 1 << 21
_PHASES: dict[tuple[float, float, int, float], tuple[int, int, np.ndarray, np.ndarray, np.ndarray] | None] = {}


def _phase_tables(
    src: float, dst: float, zc: int, fc: float, table: np.ndarray
) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray] | None:
    """The weights of :func:`_sinc_kernel` for every phase of an integer rate ratio, or None.

    With integer rates, output ``k``'s input time ``k * src / dst`` advances by ``step = src / g`` input samples
    every ``period = dst / g`` outputs (``g = gcd(src, dst)``): the weights depend only on ``k % period``, so
    they are computed once per phase (the same table interpolation, normalised to sum to one) instead of once
    per output sample. Returns ``(period, step, offsets, counts, weights)``; None for non-integer rates or a
    period too long to be worth it.
    """
    key = (src, dst, zc, fc)
    if key in _PHASES:
        return _PHASES[key]
    result = None
    if float(src).is_integer() and float(dst).is_integer():
        g = math.gcd(int(src), int(dst))
        period, step = int(dst) // g, int(src) // g
        half = zc / fc
        width = int(2 * half) + 3
        if period <= _MAX_PERIOD and period * width <= _MAX_WEIGHTS:
            t = np.arange(period, dtype=np.float64) * src / dst
            offsets = np.ceil(t - half).astype(np.int64)
            counts = (np.floor(t + half).astype(np.int64) - offsets + 1).astype(np.int64)
            m = np.arange(width, dtype=np.float64)
            scale = fc * _TABLE_STEPS
            a = np.abs(((t - offsets) * scale)[:, None] - m[None, :] * scale)
            idx = a.astype(np.int64)
            last = table.shape[0] - 2
            inside = (idx <= last) & (m[None, :] < counts[:, None])
            safe = np.minimum(idx, last)
            weights = np.where(inside, table[safe] + (a - safe) * (table[safe + 1] - table[safe]), 0.0)
            sums = weights.sum(axis=1, keepdims=True)
            weights = np.divide(weights, sums, out=np.zeros_like(weights), where=sums != 0.0)
            result = (period, step, offsets, counts, np.ascontiguousarray(weights))
    _PHASES[key] = result
    return result


def _sinc_table(zero_crossings: int) -> np.ndarray:
    u = np.arange(zero_crossings * _TABLE_STEPS + 2, dtype=np.float64) / _TABLE_STEPS
    window = np.kaiser(2 * len(u) - 1, _KAISER_BETA)[len(u) - 1 :]
    table = np.sinc(u) * window
    table[-2:] = 0.0
    return table


_TABLES: dict[int, np.ndarray] = {}


# --------------------------------------------------------------------------------------------- stages
class Stage:
    """A streaming step: push ``(channels, n)`` float32 blocks, get whatever output is ready.

    Attributes
    ----------
    in_rate, out_rate : float
        Rates of the input and output streams (Hz; only their ratio matters).
    lookahead : float
        Output sample ``j`` is ready once input sample ``floor(j * in_rate / out_rate + lookahead)`` has arrived.
    """

    in_rate: float = 1.0
    out_rate: float = 1.0
    lookahead: float = 0.0

    def push(self, block: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError


class AlignedResampler(Stage):
    """A deterministic streaming resampler whose lookahead is an exact integer.

    Output sample ``k`` is the input interpolated at time ``k * source_rate / target_rate`` (input samples);
    the signal before the first input sample is silence. Outputs depend only on absolute positions, so any
    way of cutting the input into blocks gives bit-identical output.

    Parameters
    ----------
    source_rate, target_rate : float
        Input and output rates in Hz (> 0).
    num_channels : int
        Channels of every block.
    quality : Quality
        ``ZeroOrderHold``, ``Linear``, ``CatmullRom`` and ``Lagrange`` are interpolators (no anti-aliasing, as
        in pedalboard); ``WindowedSinc`` is a 100-zero-crossing windowed sinc that is not anti-aliased;
        ``WindowedSinc256`` ... ``WindowedSinc8`` are Kaiser-windowed sincs with that many zero crossings per
        side whose cutoff follows the lower of the two Nyquist frequencies (anti-aliased).
    """

    def __init__(self, source_rate: float, target_rate: float, num_channels: int, quality: Quality) -> None:
        self.in_rate = float(source_rate)
        self.out_rate = float(target_rate)
        self.channels = int(num_channels)
        self.quality = Quality(quality)
        self._identity = self.in_rate == self.out_rate
        if self._identity:
            self.lookahead, history = 0, 0
        elif self.quality in _SINC:
            zc, antialias = _SINC[self.quality]
            fc = min(1.0, self.out_rate / self.in_rate) if antialias else 1.0
            if antialias:
                fc *= max(0.8, 1.0 - 2.0 / zc)  # leave room for the transition band below Nyquist
            if zc not in _TABLES:
                _TABLES[zc] = _sinc_table(zc)
            self._table, self._zc, self._fc = _TABLES[zc], zc, fc
            self._phases = _phase_tables(self.in_rate, self.out_rate, zc, fc, self._table)
            self.lookahead = history = int(math.ceil(zc / fc))
        else:
            self.lookahead = _INTERP_LOOKAHEAD[self.quality]
            history = _INTERP_HISTORY[self.quality]
        self._history = history
        self.reset()

    def reset(self) -> None:
        pad = self._history + 2
        self._buf = np.zeros((self.channels, pad), np.float32)
        self._base = -pad  # absolute index of self._buf[:, 0]
        self._received = 0  # input samples pushed so far
        self._done = 0  # output samples produced so far

    def _time(self, k: int) -> float:
        return (k * self.in_rate) / self.out_rate

    def _ready(self) -> int:
        """Number of outputs computable from the input received so far."""
        limit = self._received - 1 - self.lookahead  # floor(t_k) must not exceed this
        if limit < 0:
            return 0
        count = int(math.ceil((limit + 1) * self.out_rate / self.in_rate))
        while count > 0 and math.floor(self._time(count - 1)) > limit:
            count -= 1
        while math.floor(self._time(count)) <= limit:
            count += 1
        return count

    def push(self, block: np.ndarray) -> np.ndarray:
        if self._identity:
            return block.copy()
        self._buf = np.concatenate([self._buf, block], axis=1)
        self._received += block.shape[1]
        ready = self._ready()
        out = np.empty((self.channels, max(0, ready - self._done)), np.float32)
        if out.shape[1]:
            if self.quality in _SINC and self._phases is not None:
                period, step, offsets, counts, weights = self._phases
                _phase_kernel(self._buf, self._base, self._done, ready, period, step, offsets, counts, weights, out)
            elif self.quality in _SINC:
                _sinc_kernel(
                    self._buf, self._base, self._done, ready, self.in_rate, self.out_rate,
                    self._table, float(_TABLE_STEPS), float(self._zc), self._fc, out,
                )  # fmt: skip
            else:
                _interp_kernel(
                    self._buf, self._base, self._done, ready, self.in_rate, self.out_rate, int(self.quality), out
                )
            self._done = ready
        keep_from = min(int(math.floor(self._time(self._done))) - self._history - 1, self._received)
        drop = keep_from - self._base
        if drop > 0:
            self._buf = self._buf[:, drop:]
            self._base += drop
        return out


class FunctionStage(Stage):
    """A sample-aligned stage that applies ``fn`` to each block as it comes (lookahead 0) at ``rate`` Hz."""

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray], rate: float = 1.0) -> None:
        self._fn = fn
        self.in_rate = self.out_rate = float(rate)

    def push(self, block: np.ndarray) -> np.ndarray:
        return self._fn(block)

    def reset(self) -> None:
        pass


class FixedBlockAdapter(Stage):
    """Hand ``process_block`` blocks of exactly ``block_size`` samples, whatever sizes arrive.

    Input is collected until a whole block is there; each block's output (same length) is released at once.
    Output sample ``j`` is therefore ready when the last sample of its block arrives: a lookahead of
    ``block_size - 1`` samples.

    Parameters
    ----------
    block_size : int
        Samples per block handed to ``process_block`` (>= 1).
    num_channels : int
        Channels of the stream.
    process_block : callable
        ``(channels, block_size)`` float32 -> ``(channels, block_size)`` float32; may keep state between calls.
    reset : callable, optional
        Called by :meth:`reset` to clear ``process_block``'s state.
    rate : float
        The stream's sample rate (only used to express the lookahead in a pipeline).
    batch : bool
        If True, ``process_block`` accepts any whole number of blocks at once (``(channels, k * block_size)``)
        and is called once per push with all the complete blocks (fewer calls, same result).
    """

    def __init__(
        self,
        block_size: int,
        num_channels: int,
        process_block: Callable[[np.ndarray], np.ndarray],
        reset: Callable[[], None] | None = None,
        rate: float = 1.0,
        batch: bool = False,
    ) -> None:
        if block_size < 1:
            raise ValueError(f"block_size must be at least 1 (got {block_size}).")
        self.block_size = int(block_size)
        self.channels = int(num_channels)
        self.in_rate = self.out_rate = float(rate)
        self.lookahead = self.block_size - 1
        self._fn = process_block
        self._reset_fn = reset
        self._batch = batch
        self.reset()

    def reset(self) -> None:
        self._pending = np.zeros((self.channels, 0), np.float32)
        if self._reset_fn is not None:
            self._reset_fn()

    def push(self, block: np.ndarray) -> np.ndarray:
        data = np.concatenate([self._pending, block], axis=1) if self._pending.shape[1] else block
        whole = (data.shape[1] // self.block_size) * self.block_size
        if self._batch:
            out = self._fn(np.ascontiguousarray(data[:, :whole])) if whole else data[:, :0]
            self._pending = np.array(data[:, whole:], np.float32)
            return out
        out = np.empty((self.channels, whole), np.float32)
        for start in range(0, whole, self.block_size):
            chunk = np.ascontiguousarray(data[:, start : start + self.block_size])
            out[:, start : start + self.block_size] = self._fn(chunk)
        self._pending = np.array(data[:, whole:], np.float32)
        return out


class AlignedPipeline:
    """Stages in series, delayed by a constant so that each call returns as many samples as it was given.

    The constant is :attr:`latency` = ``ceil(sum of lookahead_i * source_rate / in_rate_i) + extra_delay``
    samples at the source rate: every stage promises its output by then, so the output never runs dry, and it
    is exactly the input (through the stages) delayed by :attr:`latency` samples.

    Parameters
    ----------
    stages : sequence of Stage
        Applied in order; the first stage's ``in_rate`` is the source rate, the last stage's ``out_rate`` must
        equal it.
    num_channels : int
        Channels of the stream.
    extra_delay : int
        Further delay added on top of the stages' lookahead (>= 0).
    sub_block : int
        Largest piece of a block pushed through the stages at once (bounds the memory of the intermediate
        signal; stages with a fixed cost per push, such as a codec, run faster with larger pieces).
    """

    def __init__(
        self, stages: Sequence[Stage], num_channels: int, extra_delay: int = 0, sub_block: int = _SUB_BLOCK
    ) -> None:
        self.stages = list(stages)
        self.channels = int(num_channels)
        self.sub_block = max(1, int(sub_block))
        total = 0.0
        if self.stages:
            source = self.stages[0].in_rate
            for stage in self.stages:
                total += stage.lookahead * source / stage.in_rate
        self.latency = int(math.ceil(total - 1e-9)) + int(extra_delay)
        self.reset()

    def reset(self) -> None:
        for stage in self.stages:
            stage.reset()
        self._fifo = np.zeros((self.channels, self.latency), np.float32)

    def process(self, block: np.ndarray) -> np.ndarray:
        """Push one ``(channels, n)`` block; return ``n`` samples, delayed by :attr:`latency`."""
        n = block.shape[1]
        pieces = [self._fifo]
        step = self.sub_block
        for start in range(0, n, step):
            data = np.ascontiguousarray(block[:, start : start + step], dtype=np.float32)
            for stage in self.stages:
                data = stage.push(data)
            pieces.append(data)
        joined = np.concatenate(pieces, axis=1) if len(pieces) > 1 else pieces[0]
        if joined.shape[1] < n:  # impossible if every stage keeps its promise
            raise RuntimeError("internal error: a streaming stage delivered less than its stated lookahead")
        self._fifo = joined[:, n:]
        return np.ascontiguousarray(joined[:, :n])


def check_target_rate(target: float, sample_rate: float) -> None:
    """Raise ``LimitError`` (a ``ValueError``) if ``target`` (Hz) is outside the sample-rate rule of
    :mod:`stompbox.limits`, or resampling ``sample_rate`` to it is beyond :data:`MAX_RATIO`."""
    limits.check_sample_rate(target, "target_sample_rate")
    limits.check_resampling_ratio(sample_rate, target)


# --------------------------------------------------------------------------------------------- plugins
class Resample(PipelinePlugin):
    """Degrade the signal by resampling it to ``target_sample_rate`` and back to the input rate.

    The output stays at the input's sample rate; what changes is the bandwidth (content above the target's
    Nyquist frequency is removed by the anti-aliased qualities, or folded back by the interpolators) and the
    interpolation error. The round trip adds a fixed latency (reported by :attr:`latency_samples`) that
    ``process`` compensates, so the output lines up with the input; the result does not depend on
    ``buffer_size``. The qualities ``ZeroOrderHold``, ``Linear``, ``CatmullRom`` and ``Lagrange`` are
    interpolators, which alias; ``WindowedSinc``, ``WindowedSinc256`` ... ``WindowedSinc8`` are windowed sinc
    filters with that many zero crossings, all but ``WindowedSinc`` anti-aliased.
    """

    Quality = Quality
    ZeroOrderHold = Quality.ZeroOrderHold
    Linear = Quality.Linear
    CatmullRom = Quality.CatmullRom
    Lagrange = Quality.Lagrange
    WindowedSinc = Quality.WindowedSinc
    WindowedSinc256 = Quality.WindowedSinc256
    WindowedSinc128 = Quality.WindowedSinc128
    WindowedSinc64 = Quality.WindowedSinc64
    WindowedSinc32 = Quality.WindowedSinc32
    WindowedSinc16 = Quality.WindowedSinc16
    WindowedSinc8 = Quality.WindowedSinc8

    target_sample_rate = Param(
        8000.0,
        minimum=0.0,
        min_exclusive=True,
        maximum=MAX_TARGET_RATE,
        unit="Hz",
        doc="rate the signal is resampled to and back from (at most 4096 times above or below the input rate)",
        error="Target sample rate must be greater than 0Hz (and at most 10 MHz).",
    )
    quality = Param(Quality.WindowedSinc32, kind=Quality, doc="resampling method")

    #: extra delay (samples) on top of the resamplers' own; ResampleWithLatency sets it
    _extra_latency = 0

    _pipeline: AlignedPipeline | None = None

    def _update(self) -> None:
        target = float(self.target_sample_rate)
        config = (self._sr, self._channels, target, self.quality, self._extra_latency)
        if config == self._config:
            return
        check_target_rate(target, self._sr)
        stages = [
            AlignedResampler(self._sr, target, self._channels, self.quality),
            AlignedResampler(target, self._sr, self._channels, self.quality),
        ]
        self._pipeline = AlignedPipeline(stages, self._channels, self._extra_latency)
        self._config = config
