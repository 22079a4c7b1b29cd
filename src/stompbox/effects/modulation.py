"""Chorus and Phaser: LFO-modulated delay line and all-pass chain, with JUCE's parameter smoothing.

Both follow the published structure of JUCE's ``dsp::Chorus`` and ``dsp::Phaser`` (the engines behind
pedalboard's effects of the same names), computed in single precision like the reference so the outputs agree
to within rounding. Also home of the linear parameter smoother shared by the time-based effects.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.jit import Integer, Number, kernel
from ..core.params import Param
from ..core.plan import PlanStep
from ..core.plugin import Plugin

F32 = np.float32
TWO_PI_F32 = F32(2.0 * math.pi)
PI_F32 = F32(math.pi)

# ---------------------------------------------------------------------------------------------- smoothing
# A smoother is one row of a float32 (k, 4) array: current value, target, step, steps left. It ramps linearly
# to a new target over a fixed number of samples, in single precision, as JUCE's linear SmoothedValue does.
CUR, TGT, STEP, LEFT = 0, 1, 2, 3


@kernel
def _next_value(sm: np.ndarray, k: int) -> Number:  # pragma: no cover - compiled
    """Advance smoother ``k`` by one sample and return its value."""
    value: Number
    if sm[k, LEFT] <= 0.0:
        value = sm[k, TGT]
        return value
    sm[k, LEFT] -= 1.0
    if sm[k, LEFT] > 0.0:
        sm[k, CUR] += sm[k, STEP]
    else:
        sm[k, CUR] = sm[k, TGT]
    value = sm[k, CUR]
    return value


class Smoothers:
    """A bank of linear parameter smoothers (float32), each with its own ramp length in samples."""

    def __init__(self, ramp_samples: list[int], extra_rows: int = 0) -> None:
        # ``extra_rows`` more rows after the smoothers hold other float32 values of the owner's kernel (not
        # smoothed: snap() leaves them alone), so that one array carries them all
        self.state = np.zeros((len(ramp_samples) + extra_rows, 4), np.float32)
        self.ramps = list(ramp_samples)

    def set_target(self, k: int, value: Number) -> None:
        """Start a ramp from the current value to ``value`` (or jump when the ramp length is 0)."""
        sm = self.state
        value = F32(value)
        if value == sm[k, TGT]:
            return
        steps = self.ramps[k]
        sm[k, TGT] = value
        if steps <= 0:
            sm[k, CUR] = value
            sm[k, LEFT] = 0.0
            return
        sm[k, LEFT] = steps
        sm[k, STEP] = (value - sm[k, CUR]) / F32(steps)

    def snap(self) -> None:
        """Jump every smoother to its target (after a reset)."""
        rows = len(self.ramps)
        self.state[:rows, CUR] = self.state[:rows, TGT]
        self.state[:rows, LEFT] = 0.0

    def value(self, k: int) -> float:
        return float(self.state[k, CUR] if self.state[k, LEFT] > 0 else self.state[k, TGT])


def _ramp(sample_rate: float, seconds: float) -> int:
    return max(0, int(math.floor(seconds * sample_rate)))


# ---------------------------------------------------------------------------------------------- chorus
# smoother rows shared by both effects: LFO frequency, LFO amplitude, dry gain, wet gain, feedback per channel
_FREQ, _DEPTH, _DRY, _WET, _FB = 0, 1, 2, 3, 4


@kernel
def _lfo(
    out: np.ndarray, n: int, sm: np.ndarray, osc: np.ndarray, base_inc: Number
) -> None:  # pragma: no cover - compiled
    """Fill ``out[:n]`` with JUCE's sine oscillator, ``sin(phase - pi)`` (single precision), times the smoothed
    amplitude; ``osc[0]`` is the phase, advanced by ``base_inc * frequency`` per sample and wrapped at 2 pi."""
    pi = np.float32(np.pi)
    two_pi = np.float32(2.0 * np.pi)
    ph = osc[0]
    for i in range(n):
        inc = base_inc * _next_value(sm, _FREQ)
        out[i] = np.sin(ph - pi)
        nxt = ph + inc
        while nxt >= two_pi:
            nxt -= two_pi
        ph = nxt
    osc[0] = ph
    if sm[_DEPTH, LEFT] <= 0.0:
        amp = sm[_DEPTH, TGT]
        for i in range(n):
            out[i] *= amp
    else:
        for i in range(n):
            out[i] *= _next_value(sm, _DEPTH)


@kernel
def _mix(block: np.ndarray, wet: np.ndarray, sm: np.ndarray) -> None:  # pragma: no cover - compiled
    """``block = wet_gain * wet + dry_gain * block`` with per-sample smoothed gains (a linear dry/wet mixer)."""
    channels, n = block.shape
    if sm[_DRY, LEFT] <= 0.0 and sm[_WET, LEFT] <= 0.0:
        g_dry = sm[_DRY, TGT]
        g_wet = sm[_WET, TGT]
        for c in range(channels):
            for i in range(n):
                block[c, i] = wet[c, i] * g_wet + block[c, i] * g_dry
        return
    for i in range(n):
        g_dry = _next_value(sm, _DRY)
        g_wet = _next_value(sm, _WET)
        for c in range(channels):
            block[c, i] = wet[c, i] * g_wet + block[c, i] * g_dry


@kernel
def _chorus_kernel(
    block: np.ndarray,
    ring: np.ndarray,
    pos: np.ndarray,
    last: np.ndarray,
    sm: np.ndarray,
    osc: np.ndarray,
    delays: np.ndarray,
    wet: np.ndarray,
    coef: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Chorus on a ``(channels, n)`` float32 block, in place.

    ``ring`` is ``(channels, size)``, size a power of two > ``max_delay + 1``, holding past delay-line inputs;
    ``pos[0]`` is its write position (an integer, in a float64 array). The delay in ms is
    ``max(1, 20 * lfo + centre)`` (``lfo`` swings by +-depth/2), read with linear interpolation; the delay-line
    input is the dry sample minus the fed-back previous output. ``delays`` (at least ``n``) and ``wet``
    (``(channels, >= n)``) are scratch; ``coef`` is float64 ``[base_inc, centre_ms, sample_rate, max_delay]``
    (the float32 ones stored exactly).
    """
    base_inc = np.float32(coef[0])
    centre_ms = np.float32(coef[1])
    sample_rate = coef[2]
    max_delay = np.float32(coef[3])
    n: int
    channels, n = block.shape
    mask: int = ring.shape[1] - 1
    f20 = np.float32(20.0)
    one = np.float32(1.0)
    zero = np.float32(0.0)
    _lfo(delays, n, sm, osc, base_inc)
    for i in range(n):
        lfo = f20 * delays[i] + centre_ms
        if lfo < one:
            lfo = one
        d: Number = np.float32(np.float64(lfo) * sample_rate / 1000.0)
        if d > max_delay:
            d = max_delay
        elif d < zero:
            d = zero
        delays[i] = d
    start = np.int64(pos[0])
    for c in range(channels):
        ring_c = ring[c]
        p = start
        fb_state = last[c]
        for i in range(n):
            ring_c[p] = block[c, i] - fb_state
            d = delays[i]
            di = np.int64(np.floor(d))
            frac = d - np.float32(di)
            v1 = ring_c[(p - di) & mask]
            v2 = ring_c[(p - di - 1) & mask]
            out = v1 + frac * (v2 - v1)
            wet[c, i] = out
            fb_state = out * _next_value(sm, _FB + c)
            p = (p + 1) & mask
        last[c] = fb_state
    _mix(block, wet, sm)
    pos[0] = (start + n) & mask


@kernel
def _chorus_step(
    block: np.ndarray, ring: np.ndarray, sm: np.ndarray, mem: np.ndarray, coef: np.ndarray, work: np.ndarray
) -> None:  # pragma: no cover - compiled
    """The Chorus's step: :func:`_chorus_kernel` on the parts of its arrays (see ``_Modulation``)."""
    c = block.shape[0]
    _chorus_kernel(block, ring, coef[4:5], mem[2 : 2 + c], sm, mem[0:1], work[0], work[2 : 2 + c], coef)


class _Modulation(Plugin, block_invariant=True):
    """Shared plumbing of Chorus and Phaser: smoothers, LFO phase, feedback memory and scratch rows.

    Every parameter is automatable at sub-block granularity: the value at the start of every 32-sample
    sub-block (aligned to the stream) is taken, and while any parameter is automated the internal ramps glide to
    it over those 32 samples instead of 50 ms (piecewise-linear, at most 32 samples late).
    """

    _abstract = True
    #: seconds of JUCE's parameter ramps
    _RAMP = 0.05
    #: the LFO runs at sample_rate / _LFO_DECIMATION
    _LFO_DECIMATION = 1

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._sr = sample_rate
        self._channels = num_channels
        lfo_rate = sample_rate / self._LFO_DECIMATION
        ramp, lfo_ramp = _ramp(sample_rate, self._RAMP), _ramp(lfo_rate, self._RAMP)
        self._sm = Smoothers([lfo_ramp, lfo_ramp, ramp, ramp] + [ramp] * num_channels)
        self._default_ramps = list(self._sm.ramps)
        chunk, lfo_chunk = self._automation_chunk, max(1, self._automation_chunk // self._LFO_DECIMATION)
        self._automation_ramps = [lfo_chunk, lfo_chunk, chunk, chunk] + [chunk] * num_channels
        self._base_inc = F32(TWO_PI_F32 / F32(lfo_rate))
        # float32 state: LFO phase, the phaser's all-pass gain, feedback memories (channels), all-pass states
        self._mem = np.zeros(2 + num_channels * (1 + self._STAGES), np.float32)
        self._frames = 0  # the scratch's length (grown by _reserve)
        self._work = np.zeros((num_channels + 2, 0), np.float32)  # scratch: LFO, phaser gains, wet (channels)

    #: all-pass stages per channel kept in ``_mem`` (the Phaser's)
    _STAGES = 0

    # views of the step's arrays (properties, so that a pickled plugin's views still share its arrays)
    @property
    def _osc(self) -> np.ndarray:
        return self._mem[0:1]

    @property
    def _last(self) -> np.ndarray:
        return self._mem[2 : 2 + self._channels]

    @property
    def _scratch(self) -> np.ndarray:
        row: np.ndarray = self._work[0]
        return row

    @property
    def _wet(self) -> np.ndarray:
        return self._work[2:]

    def _set_targets(self, rate: Number, amplitude: Number, mix: float, feedback: float) -> None:
        sm = self._sm
        # while automated, parameters glide to each sub-block's value over that sub-block (not 50 ms)
        sm.ramps = list(self._automation_ramps if self._automation else self._default_ramps)
        mix32 = F32(min(max(mix, 0.0), 1.0))
        sm.set_target(_FREQ, rate)
        sm.set_target(_DEPTH, F32(amplitude))
        sm.set_target(_DRY, F32(1.0) - mix32)
        sm.set_target(_WET, mix32)
        for c in range(self._channels):
            sm.set_target(_FB + c, feedback)

    def _reset_state(self) -> None:
        self._sm.snap()
        self._osc[:] = 0.0
        self._last[:] = 0.0

    def _reserve(self, frames: int) -> None:
        """Make the scratch arrays hold blocks of ``frames`` (reallocating them changes the step's arrays)."""
        if frames > self._frames:
            self._frames = max(frames, 256)
            self._work = np.zeros((self._channels + 2, self._frames), np.float32)
            self._args = self._step_args()
            self._plan_changed()

    def _step_args(self) -> tuple[np.ndarray, ...]:
        raise NotImplementedError

    _kernel: Any = None

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        if self._automation:
            return None
        self._reserve(max_frames)
        return [PlanStep(self._kernel, self._args)]

    def _process(self, block: np.ndarray) -> np.ndarray:
        if block.shape[1] > self._frames:
            self._reserve(block.shape[1])
        self._kernel(block, *self._args)
        return block


class Chorus(_Modulation):
    """A chorus: the signal mixed with a copy whose delay is swept by a sine LFO.

    The delay (in ms) is ``centre_delay_ms + 10 * depth * sin(2 pi rate_hz t)``, never below 1 ms, read with
    linear interpolation; the delayed signal minus ``feedback`` times the previous output feeds the delay line.
    With a short centre delay and high feedback it becomes a flanger; with ``mix=1`` a vibrato. Changes of rate,
    depth, feedback and mix made while streaming ramp over 50 ms. Sample-for-sample compatible with
    pedalboard's ``Chorus`` (JUCE's ``dsp::Chorus``). All parameters are automatable (per 32-sample sub-block,
    see ``_Modulation``).
    """

    rate_hz = Param(
        1.0,
        minimum=0.0,
        maximum=100.0,
        unit="Hz",
        doc="LFO rate",
        error="Rate must be between {minimum:g} Hz and {maximum:g} Hz.",
        automatable=True,
    )
    depth = Param(0.25, minimum=0.0, maximum=1.0, doc="LFO depth (1 sweeps the delay by +-10 ms)", automatable=True)
    centre_delay_ms = Param(
        7.0,
        minimum=0.0,
        maximum=100.0,
        unit="ms",
        doc="delay at the centre of the sweep (values below 1 act as 1)",
        automatable=True,
    )
    feedback = Param(
        0.0, minimum=-1.0, maximum=1.0, doc="fraction of the output fed back into the delay line", automatable=True
    )
    mix = Param(
        0.5,
        minimum=0.0,
        maximum=1.0,
        doc="wet fraction of the output",
        error="Mix must be between {minimum:.1f} and {maximum:.1f}.",
        automatable=True,
    )

    _MAX_CENTRE_MS = 100.0
    _kernel = staticmethod(_chorus_step)

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        super()._prepare(sample_rate, num_channels)
        # room for the longest delay: 10 ms of sweep at depth 1 plus the longest centre delay
        longest = int(math.ceil((20.0 * 1.0 * 0.5 + self._MAX_CENTRE_MS) * sample_rate / 1000.0))
        self._max_delay = F32(longest)
        size = 1 << (longest + 2).bit_length()
        self._ring = np.zeros((num_channels, size), np.float32)
        # base_inc, centre_ms, sample_rate, max_delay, ring position
        self._coef = np.array([self._base_inc, 0.0, sample_rate, self._max_delay, 0.0], np.float64)
        self._args = self._step_args()
        self._plan_changed()

    def _step_args(self) -> tuple[np.ndarray, ...]:
        return (self._ring, self._sm.state, self._mem, self._coef, self._work)

    def _reset_state(self) -> None:
        super()._reset_state()
        self._ring[:] = 0.0
        self._coef[4] = 0.0  # the ring position

    def _update(self) -> None:
        self._coef[1] = F32(min(max(self.centre_delay_ms, 1.0), self._MAX_CENTRE_MS))
        self._set_targets(self.rate_hz, F32(self.depth) * F32(0.5), self.mix, self.feedback)

    @property
    def tail_seconds(self) -> float:
        if self.mix == 0.0:
            return 0.0
        delay = (self.centre_delay_ms + 10.0 * self.depth) / 1000.0
        fb = abs(self.feedback)
        if fb >= 1.0:
            return float("inf")
        repeats = 1 if fb == 0.0 else 1 + int(math.ceil(-3.0 / math.log10(fb)))
        return delay * repeats


# ---------------------------------------------------------------------------------------------- phaser
_PHASER_STAGES = 6
_UPDATE_EVERY = 4  # the LFO and the all-pass coefficients are updated every 4 samples


@kernel
def _phaser_kernel(
    block: np.ndarray,
    s1: np.ndarray,
    last: np.ndarray,
    sm: np.ndarray,
    osc: np.ndarray,
    gstate: np.ndarray,
    phase: np.ndarray,
    lfo: np.ndarray,
    gains: np.ndarray,
    wet: np.ndarray,
    coef: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Phaser on a ``(channels, n)`` float32 block, in place.

    Every 4th sample (counted across blocks by ``phase[0]``, an integer in a float64 array) the LFO gives a new
    normalised position ``clip(lfo + norm_centre, 0, 1)``, mapped log-linearly to a cutoff between 20 Hz and the
    top frequency; the six first-order TPT all-pass stages (states ``s1[c, stage]``) share that cutoff's gain
    ``G`` until the next update. ``gstate[0]`` holds the ``G`` in force at the start of the block. The stage
    input is the dry sample minus the fed-back previous output. ``lfo`` and ``gains`` (at least ``n // 4 + 1``)
    and ``wet`` (``(channels, >= n)``) are scratch; ``coef`` is float64 ``[base_inc, norm_centre, log_min,
    log_range, sample_rate]`` (the float32 ones stored exactly).
    """
    base_inc = np.float32(coef[0])
    norm_centre = np.float32(coef[1])
    log_min = np.float32(coef[2])
    log_range = np.float32(coef[3])
    sample_rate = coef[4]
    counter0 = np.int64(phase[0])
    channels, n = block.shape
    first = (4 - counter0) % 4  # index of the first update in this block
    n_down = (n - first + 3) // 4 if n > first else 0
    if n_down > 0:
        _lfo(lfo, n_down, sm, osc, base_inc)
    zero = np.float32(0.0)
    one = np.float32(1.0)
    ten = np.float32(10.0)
    two = np.float32(2.0)
    for k in range(n_down):
        pos = lfo[k] + norm_centre
        if pos < zero:
            pos = zero
        elif pos > one:
            pos = one
        freq = ten ** (pos * log_range + log_min)
        g = np.float32(np.tan(np.pi * np.float64(freq) / sample_rate))
        gains[k] = g / (one + g)
    g_start = gstate[0]
    g_now = g_start
    for c in range(channels):
        counter: Integer = counter0
        k = 0
        g_now = g_start
        fb_state = last[c]
        st = s1[c]
        for i in range(n):
            x = block[c, i]
            out = x - fb_state
            if counter == 0:
                g_now = gains[k]
                k += 1
            for stage in range(6):
                s = st[stage]
                v = g_now * (out - s)
                y = v + s
                st[stage] = y + v
                out = two * y - out
            wet[c, i] = out
            fb_state = out * _next_value(sm, _FB + c)
            counter += 1
            if counter == 4:
                counter = 0
        last[c] = fb_state
    gstate[0] = g_now
    phase[0] = (counter0 + n) % 4
    _mix(block, wet, sm)


@kernel
def _phaser_step(
    block: np.ndarray, sm: np.ndarray, mem: np.ndarray, coef: np.ndarray, work: np.ndarray
) -> None:  # pragma: no cover - compiled
    """The Phaser's step: :func:`_phaser_kernel` on the parts of its three arrays (see ``_Modulation``)."""
    c = block.shape[0]
    s1 = mem[2 + c : 2 + 7 * c].reshape((c, _PHASER_STAGES))
    _phaser_kernel(
        block, s1, mem[2 : 2 + c], sm, mem[0:1], mem[1:2], coef[5:6], work[0], work[1], work[2 : 2 + c], coef
    )


class Phaser(_Modulation):
    """A six-stage phaser: first-order all-pass filters whose common cutoff is swept by a sine LFO.

    The cutoff moves on a logarithmic scale from 20 Hz to ``min(20 kHz, 0.49 * sample_rate)``: its position is
    ``log(centre_frequency_hz / 20) / log(20000 / 20) + depth / 2 * sin(2 pi rate_hz t)``, clipped to [0, 1]. The
    LFO and the filter coefficients are updated every 4 samples. The all-pass chain's output, times
    ``feedback``, is subtracted from its next input; the result is mixed with the dry signal, which puts moving
    notches in the spectrum. Changes made while streaming ramp over 50 ms. Sample-for-sample compatible with
    pedalboard's ``Phaser`` (JUCE's ``dsp::Phaser``). All parameters are automatable (per 32-sample sub-block,
    gliding over it).
    """

    _LFO_DECIMATION = _UPDATE_EVERY
    _kernel = staticmethod(_phaser_step)
    _STAGES = _PHASER_STAGES

    rate_hz = Param(1.0, minimum=0.0, maximum=100.0, unit="Hz", doc="LFO rate", automatable=True)
    depth = Param(
        0.5, minimum=0.0, maximum=1.0, doc="LFO depth (fraction of the log frequency range)", automatable=True
    )
    centre_frequency_hz = Param(
        1300.0,
        minimum=0.0,
        min_exclusive=True,
        unit="Hz",
        doc="centre of the sweep (20 Hz to 20 kHz is the useful range)",
        automatable=True,
    )
    feedback = Param(
        0.0, minimum=-1.0, maximum=1.0, doc="fraction of the output fed back into the filters", automatable=True
    )
    mix = Param(0.5, minimum=0.0, maximum=1.0, doc="wet fraction of the output", automatable=True)

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        super()._prepare(sample_rate, num_channels)
        top = min(20000.0, 0.49 * sample_rate)
        # The sweep spans 20 Hz to `top`. Below 40.8 Hz `top` is under 20 Hz: the sweep then sits at `top`, not
        # above Nyquist, where tan() gives all-pass gains outside (0, 1) and the filters blow up (pedalboard
        # 0.9.26 turns finite input into NaN at 8 or 16 Hz this way).
        self._log_min = F32(np.log10(F32(min(20.0, top))))
        self._log_range = F32(np.log10(F32(top))) - self._log_min
        # base_inc, norm_centre, log_min, log_range, sample_rate, samples since the last LFO update (mod 4)
        self._coef = np.array([self._base_inc, 0.0, self._log_min, self._log_range, sample_rate, 0.0], np.float64)
        self._args = self._step_args()
        self._plan_changed()

    def _step_args(self) -> tuple[np.ndarray, ...]:
        return (self._sm.state, self._mem, self._coef, self._work)

    @property
    def _s1(self) -> np.ndarray:
        return self._mem[2 + self._channels :].reshape(self._channels, _PHASER_STAGES)

    @property
    def _gstate(self) -> np.ndarray:
        return self._mem[1:2]

    def _reset_state(self) -> None:
        super()._reset_state()
        self._s1[:] = 0.0
        self._coef[5] = 0.0  # samples since the last LFO update
        # before the first update the filters sit at 1 kHz
        g = F32(math.tan(math.pi * min(1000.0, 0.49 * self._sr) / self._sr))  # (below Nyquist at any rate)
        self._gstate[0] = g / (F32(1.0) + g)

    def _update(self) -> None:
        # the centre is normalised on the 20 Hz - 20 kHz log scale (pedalboard sets it before the sample rate
        # is known, so this range does not follow the stream's rate)
        log_min = np.log10(F32(20.0))
        norm_centre = (np.log10(F32(self.centre_frequency_hz)) - log_min) / (np.log10(F32(20000.0)) - log_min)
        self._coef[1] = F32(norm_centre)
        self._set_targets(self.rate_hz, F32(self.depth) * F32(0.5), self.mix, self.feedback)

    @property
    def tail_seconds(self) -> float:
        return 0.0 if self.mix == 0.0 else 0.05
