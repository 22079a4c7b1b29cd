"""BrickwallLimiter: a lookahead peak limiter with a fixed ceiling and no makeup gain."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from ..core.jit import Integer, Number, kernel
from ..core.params import Param
from ..core.plan import PlanStep
from ..core.plugin import Plugin

#: extra latency of the true-peak sidechain, in samples at the processing rate (pedalboard reports the same)
TRUE_PEAK_LATENCY = 60
#: half-band stages of the 4x oversampled sidechain: (n, Kaiser beta); a stage has 4n+3 taps (order 4n+2).
#: Their delay (29.5 + 6.25 = 35.75 samples) puts detected peaks where pedalboard's sidechain puts them.
_STAGES = ((29, 9.0), (12, 10.1))


@cache
def _halfband_taps(n: int, beta: float) -> np.ndarray:
    """The non-zero off-centre taps of a Kaiser-windowed half-band lowpass of order ``4n+2``.

    A half-band filter has 0.5 at its centre and zeros at every even distance from it; the remaining ``2n+2``
    taps (at odd distances) are returned, scaled so that they sum to exactly 0.5 (unity gain at DC for both
    polyphase branches of a 2x interpolator).
    """
    order = 4 * n + 2
    k = np.arange(order + 1) - order / 2
    h = 0.5 * np.sinc(k / 2) * np.kaiser(order + 1, beta)
    odd = h[::2]  # indices 0, 2, ..., order: odd distances from the (odd) centre index 2n+1
    return np.ascontiguousarray(odd * (0.5 / odd.sum()), dtype=np.float32)


@kernel
def _upsample2(
    x: np.ndarray,
    history: np.ndarray,
    taps: np.ndarray,
    centre: int,
    out: np.ndarray,
    ext: np.ndarray,
    acc: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """2x interpolation of each row of ``x`` with a half-band filter, continuing from ``history``, into
    ``out[:, :2n]``.

    ``history`` holds the last ``len(taps) - 1`` inputs of each channel (oldest first) and is updated. Output
    sample ``2m`` is ``2 * sum_j taps[j] * x[m - j]`` (the filtered branch) and ``2m + 1`` is ``x[m - centre]``.
    The loops run tap by tap over all samples, so the inner loop is a vectorisable multiply-add. ``ext``
    (``>= len(taps) - 1 + n``) and ``acc`` (``>= n``) are float32 scratch.
    """
    channels, n = x.shape
    m_taps = taps.shape[0]
    keep = m_taps - 1
    ext = ext[: keep + n]
    acc = acc[:n]
    for c in range(channels):
        ext[:keep] = history[c]
        ext[keep:] = x[c]
        acc[:] = 0.0
        for j in range(m_taps):
            t = taps[j]
            window = ext[keep - j : keep - j + n]  # a view: plain range indices let the loop vectorise
            for i in range(n):
                acc[i] += t * window[i]
        for i in range(n):
            out[c, 2 * i] = 2.0 * acc[i]
            out[c, 2 * i + 1] = ext[keep + i - centre]
        history[c] = ext[n:]


@kernel
def _limit(
    block: np.ndarray,
    ring: np.ndarray,
    pos: Integer,
    peaks: np.ndarray,
    use_peaks: bool,
    state: np.ndarray,
    ceiling: Number,
    release: Number,
) -> Integer:  # pragma: no cover - compiled
    """Stereo-linked lookahead limiting, in place; returns the new ring position.

    The input goes through a delay line of ``ring.shape[1]`` samples (the lookahead). Each sample's peak (the
    largest ``|x|`` over channels, or ``peaks[i]`` from the true-peak sidechain when ``use_peaks``) sets a
    target gain ``ceiling / peak``; the gain drops to it at once, is held for the lookahead length after the
    last sample over the ceiling, then recovers exponentially (``release``); the delayed sample times the gain,
    clipped to the ceiling, is the output. ``state`` = (gain, hold counter).
    """
    channels, n = block.shape
    size = ring.shape[1]
    gain = state[0]
    hold = int(state[1])
    for i in range(n):
        if use_peaks:
            peak = peaks[i]
        else:
            peak = 0.0
            for c in range(channels):
                a = abs(block[c, i])
                if a > peak:
                    peak = a
        target = ceiling / max(peak, 1e-30) if peak > ceiling else 1.0
        if target < gain:
            gain = target
            hold = size
        elif target < 1.0:
            hold = size
        elif hold > 0:
            hold -= 1
        else:
            gain += (1.0 - release) * (1.0 - gain)
        for c in range(channels):
            delayed = ring[c, pos]
            ring[c, pos] = block[c, i]
            v = delayed * gain
            block[c, i] = ceiling if v > ceiling else (-ceiling if v < -ceiling else v)
        pos += 1
        if pos == size:
            pos = 0
    state[0] = gain
    state[1] = hold
    return pos


@kernel
def _group_peaks(up: np.ndarray, peaks: np.ndarray) -> None:  # pragma: no cover - compiled
    """``peaks[i]`` = the largest ``|up[c, 4i + k]|`` over channels ``c`` and ``k`` in 0..3."""
    channels = up.shape[0]
    for i in range(peaks.shape[0]):
        p = 0.0
        for c in range(channels):
            for k in range(4 * i, 4 * i + 4):
                a = abs(up[c, k])
                if a > p:
                    p = a
        peaks[i] = p


#: frames per tile of the true-peak sidechain (its scratch arrays hold one tile)
TILE = 256


@kernel
def _brickwall_kernel(
    block: np.ndarray,
    ring: np.ndarray,
    state: np.ndarray,
    coef: np.ndarray,
    history: np.ndarray,
    taps: np.ndarray,
    up: np.ndarray,
    work: np.ndarray,
    peaks: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """The BrickwallLimiter's step: :func:`_limit` on the block in place, with the true-peak sidechain when
    ``coef[2]`` is set (then worked through in tiles of ``peaks.shape[0]`` frames, so the scratch stays small).

    ``state`` float64 (gain, hold counter, ring position); ``coef`` float64 (ceiling, release, true peak);
    ``history`` float32 ``(channels, 59 + 25)``: the two half-band stages' input histories; ``taps`` float32:
    the first stage's taps, then the second's; ``up`` float32 ``(channels, 6 * tile)``: the 2x and 4x signals;
    ``work`` float32 (the stages' ``ext`` and ``acc``); ``peaks`` float64 ``(tile,)``.
    """
    n = block.shape[1]
    ceiling = coef[0]
    release = coef[1]
    pos: Integer = np.int64(state[2])
    if coef[2] == 0.0:
        pos = _limit(block, ring, pos, peaks, False, state, ceiling, release)
    else:  # (a true-peak limiter; the sample-peak one's step is _sample_peak_kernel, with fewer arguments)
        tile = peaks.shape[0]
        n1 = 2 * _STAGES[0][0] + 2
        keep1 = n1 - 1
        h1 = history[:, :keep1]
        h2 = history[:, keep1:]
        t1 = taps[:n1]
        t2 = taps[n1:]
        half = work.shape[0] // 2
        ext = work[:half]
        acc = work[half:]
        for start in range(0, n, tile):
            stop = min(n, start + tile)
            m = stop - start
            x = block[:, start:stop]
            up1 = up[:, : 2 * m]
            up2 = up[:, 2 * tile : 2 * tile + 4 * m]
            _upsample2(x, h1, t1, _STAGES[0][0], up1, ext, acc)
            _upsample2(up1, h2, t2, _STAGES[1][0], up2, ext, acc)
            _group_peaks(up2, peaks[:m])
            pos = _limit(x, ring, pos, peaks[:m], True, state, ceiling, release)
    state[2] = pos


@kernel
def _sample_peak_kernel(
    block: np.ndarray, ring: np.ndarray, state: np.ndarray, coef: np.ndarray
) -> None:  # pragma: no cover - compiled
    """The step of a BrickwallLimiter without ``true_peak``: :func:`_limit` on the block, in place (``state``
    and ``coef`` as in :func:`_brickwall_kernel`)."""
    state[2] = _limit(block, ring, np.int64(state[2]), state, False, state, coef[0], coef[1])  # (no peaks read)


class BrickwallLimiter(Plugin, block_invariant=True):
    """A lookahead brick-wall peak limiter: the output never exceeds ``ceiling_db``, and there is no makeup gain.

    The signal is delayed by the lookahead while a sidechain measures its peak (the largest magnitude over all
    channels, so the gain is linked across channels). When a peak would exceed the ceiling the gain drops at
    once to ``ceiling / peak``, early enough to meet the delayed peak; it is held for the lookahead length, then
    recovers with the release time constant. A final clip at the ceiling guarantees the sample-peak limit.

    With ``true_peak=True`` the sidechain measures a 4x oversampled copy of the signal (two cascaded half-band
    interpolators), so peaks between samples are caught too; this adds 60 samples of latency.

    The delay is reported as :attr:`latency_samples` (``int(sample_rate * lookahead_ms / 1000)``, at least 1,
    plus 60 with ``true_peak``): ``process()`` with ``reset=True`` compensates it, so output lines up with input;
    with ``reset=False`` the first call of a stream returns that many fewer samples.

    ``ceiling_db`` and ``release_ms`` are automatable at sub-block granularity (the value at the start of every
    32-sample sub-block, aligned to the stream); ``lookahead_ms`` is not (it sets the latency). The gain is
    linked across all channels, however many: the peak is the largest magnitude over every channel.
    """

    ceiling_db = Param(
        -1.0, unit="dB", doc="output ceiling", error="ceiling_db must be a finite number", automatable=True
    )
    release_ms = Param(
        100.0,
        minimum=0.0,
        min_exclusive=True,
        unit="ms",
        doc="release time constant",
        error="{name} must be > {minimum:g}",
        automatable=True,
    )
    lookahead_ms = Param(
        5.0,
        minimum=0.0,
        maximum=100.0,
        min_exclusive=True,
        unit="ms",
        doc="lookahead and hold time (a change while streaming clears the delay line)",
        error="{name} must be in ({minimum:g}, {maximum:g}]",
    )
    true_peak = Param(False, kind=bool, doc="detect inter-sample peaks with a 4x oversampled sidechain")

    _sr = 0.0
    _latency = 0
    _layout_key: tuple[int, bool] | None = None

    @property
    def latency_samples(self) -> int:
        """Lookahead delay in samples at the current sample rate (0 before the first ``process``)."""
        return self._latency

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._sr = sample_rate
        self._channels = num_channels
        self._layout_key = None
        self._state = np.zeros(3, np.float64)  # gain, hold counter, ring position
        self._coef = np.zeros(3, np.float64)  # ceiling, release, true peak (written in place by _update)
        taps = [_halfband_taps(n, beta) for n, beta in _STAGES]
        self._taps = np.concatenate(taps)
        self._history = np.zeros((num_channels, sum(len(t) - 1 for t in taps)), np.float32)
        self._up = np.zeros((num_channels, 6 * TILE), np.float32)
        self._work = np.zeros(2 * (len(taps[0]) - 1 + 2 * TILE), np.float32)
        self._peaks = np.zeros(TILE, np.float64)
        self._ring = np.zeros((num_channels, 1), np.float32)
        self._args = self._step_args()

    def _step_args(self) -> tuple[np.ndarray, ...]:
        """The arrays of the plugin's one step (see :func:`_brickwall_kernel` and :func:`_sample_peak_kernel`)."""
        if not self._coef[2]:
            return (self._ring, self._state, self._coef)
        return (self._ring, self._state, self._coef, self._history, self._taps, self._up, self._work, self._peaks)

    @property
    def _kernel(self) -> Any:
        return _brickwall_kernel if self._coef[2] else _sample_peak_kernel

    def _update(self) -> None:
        sr = self._sr
        with np.errstate(over="ignore"):  # an absurd ceiling_db or release_ms rounds to inf in float32: allowed
            ceiling = float(np.float32(10.0) ** (np.float32(self.ceiling_db) / np.float32(20.0)))
            release_ms = float(np.float32(self.release_ms))
        # releases beyond 2**40 samples (~800 years) are indistinguishable from no release
        release_samples = max(1, int(min(sr * release_ms / 1000.0, 2.0**40)))
        self._coef[0] = ceiling
        self._coef[1] = float(np.exp(np.float32(-1.0) / np.float32(release_samples)))
        lookahead = max(1, int(sr * float(np.float32(self.lookahead_ms)) / 1000.0))
        true_peak = bool(self.true_peak)
        key = (lookahead, true_peak)
        if key != self._layout_key:  # the delay line (and sidechain) must be rebuilt: state starts afresh
            self._layout_key = key
            self._latency = lookahead + (TRUE_PEAK_LATENCY if true_peak else 0)
            self._coef[2] = 1.0 if true_peak else 0.0
            self._ring = np.zeros((self._channels, self._latency), np.float32)
            self._args = self._step_args()
            self._plan_changed()
            self._reset_state()

    def _reset_state(self) -> None:
        self._ring[:] = 0.0
        self._state[:] = (1.0, 0.0, 0.0)
        self._history[:] = 0.0

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        if self._automation:
            return None
        return [PlanStep(self._kernel, self._args)]

    def _process(self, block: np.ndarray) -> np.ndarray:
        self._kernel(block, *self._args)
        return block
