"""LadderFilter: a multi-mode Moog-style ladder filter with drive, as in pedalboard 0.9.26.

The model (the one behind JUCE's ``dsp::LadderFilter``, which pedalboard wraps):

- four identical one-pole low-pass stages in series, each ``y = b1 * x[n-1] + a1 * y[n-1] + b0 * x[n]`` with
  ``a1 = exp(-2 pi fc / sr)``, ``g = 1 - a1``, ``b0 = g / 1.3`` and ``b1 = 0.3 g / 1.3`` (a pole at ``a1`` and
  a zero at ``-0.3``);
- the input is driven into a saturator, ``dx = gain * tanh(drive * x)``, and the last stage is fed back,
  saturated, with a loop gain of ``-4 k``: ``u = dx - 4 k (gain2 * tanh(drive2 * s4) - comp * dx)``, where
  ``k = 0.1 + 0.9 * resonance`` and ``comp`` (0.5 in low/band-pass modes) compensates the pass-band loss;
- ``gain``, ``drive2`` and ``gain2`` are fixed curves of ``drive``
  (``gain = 0.6103 * drive ** -2.642 + 0.3903``, ``drive2 = 0.04 * drive + 0.96``);
- the output is a mix of the five taps ``(u, s1, s2, s3, s4)`` that selects the mode (e.g. ``s2`` for LPF12,
  ``s4`` for LPF24, ``s3 - s2`` for BPF12, ``u - 4 s1 + 6 s2 - 4 s3 + s4`` for HPF24), times 1.2;
- ``tanh`` is read from a 128-point linearly interpolated table over [-5, 5] (inputs are clamped there);
- the cutoff coefficient ``a1`` and the resonance ``k`` glide linearly to new values over 50 ms when a parameter
  changes while a stream is running (no glide after a reset); changing the mode clears the filter's state.

Everything runs in single precision in the same operation order as the reference, so output matches it to
float rounding. The per-sample loop is one Numba kernel.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from ..core.jit import kernel
from ..core.params import Param
from ..core.plugin import Plugin

_F = np.float32

# parameter vector layout for the kernel
_DRIVE, _GAIN, _DRIVE2, _GAIN2, _COMP = 0, 1, 2, 3, 4
_TAPS = 5  # 5 output tap weights: 5..9
_B0C, _B1C, _LUT_SCALE, _LUT_OFFSET, _LUT_MIN, _LUT_MAX, _MINUS4, _ONE, _MINUS1 = range(10, 19)

_LUT_POINTS = 128
_LUT_RANGE = 5.0
_RAMP_SECONDS = 0.05
_OUTPUT_GAIN = 1.2

#: output tap weights (before the 1.2 output gain) and feedback compensation per mode
_MODE_TAPS: dict[int, tuple[tuple[float, float, float, float, float], float]] = {
    0: ((0, 0, 1, 0, 0), 0.5),  # LPF12
    1: ((1, -2, 1, 0, 0), 0.0),  # HPF12
    2: ((0, 0, -1, 1, 0), 0.5),  # BPF12 (as in pedalboard; newer JUCE releases use s1 - s2)
    3: ((0, 0, 0, 0, 1), 0.5),  # LPF24
    4: ((1, -4, 6, -4, 1), 0.0),  # HPF24
    5: ((0, 0, 1, -2, 1), 0.5),  # BPF24
}


def _tanh_table() -> np.ndarray:
    """128 samples of tanh over [-5, 5] (computed in float32) plus a guard point equal to the last."""
    lo, hi = _F(-_LUT_RANGE), _F(_LUT_RANGE)
    i = np.arange(_LUT_POINTS, dtype=np.float32)
    x = lo + ((hi - lo) * i) / _F(_LUT_POINTS - 1)
    table = np.tanh(np.clip(x, lo, hi)).astype(np.float32)
    return np.append(table, table[-1]).astype(np.float32)


_TABLE = _tanh_table()


@kernel
def _saturate(lut, p, v):  # pragma: no cover - compiled
    """Table tanh of ``v``: clamp to [-5, 5], linear interpolation between 128 points. NaN stays NaN."""
    if v != v:
        return v
    lo = p[_LUT_MIN]
    hi = p[_LUT_MAX]
    if v < lo:
        v = lo
    elif v > hi:
        v = hi
    index = p[_LUT_SCALE] * v + p[_LUT_OFFSET]
    i = int(index)
    if i > lut.shape[0] - 2:
        i = lut.shape[0] - 2
    elif i < 0:
        i = 0
    frac = index - np.float32(i)
    x0 = lut[i]
    return x0 + frac * (lut[i + 1] - x0)


@kernel
def _ladder_kernel(block, state, lut, p, smooth, counts):  # pragma: no cover - compiled
    """Run the ladder over ``block`` ((channels, n) float32) in place, all in float32.

    ``state`` is float32 ``(channels, 5)``; ``p`` the float32 parameter vector; ``smooth`` float32
    ``[cutoff_now, cutoff_target, cutoff_step, res_now, res_target, res_step]`` and ``counts`` int64
    ``[cutoff_steps_left, res_steps_left]`` (the linear glides, shared by all channels, advanced once per
    sample; updated in place).
    """
    channels, n = block.shape
    drive = p[_DRIVE]
    gain = p[_GAIN]
    drive2 = p[_DRIVE2]
    gain2 = p[_GAIN2]
    comp = p[_COMP]
    t0 = p[_TAPS]
    t1 = p[_TAPS + 1]
    t2 = p[_TAPS + 2]
    t3 = p[_TAPS + 3]
    t4 = p[_TAPS + 4]
    b0c = p[_B0C]
    b1c = p[_B1C]
    minus4 = p[_MINUS4]
    one = p[_ONE]
    minus1 = p[_MINUS1]
    cut = smooth[0]
    res = smooth[3]
    cut_left = counts[0]
    res_left = counts[1]
    for c in range(channels):
        row = block[c]
        cut = smooth[0]
        res = smooth[3]
        cut_left = counts[0]
        res_left = counts[1]
        s0 = state[c, 0]
        s1 = state[c, 1]
        s2 = state[c, 2]
        s3 = state[c, 3]
        s4 = state[c, 4]
        for i in range(n):
            if cut_left > 0:
                cut_left -= 1
                cut = cut + smooth[2] if cut_left > 0 else smooth[1]
            if res_left > 0:
                res_left -= 1
                res = res + smooth[5] if res_left > 0 else smooth[4]
            a1 = cut
            g = a1 * minus1 + one
            b0 = g * b0c
            b1 = g * b1c
            dx = gain * _saturate(lut, p, drive * row[i])
            a = dx + res * minus4 * (gain2 * _saturate(lut, p, drive2 * s4) - dx * comp)
            b = b1 * s0 + a1 * s1 + b0 * a
            cc = b1 * s1 + a1 * s2 + b0 * b
            d = b1 * s2 + a1 * s3 + b0 * cc
            e = b1 * s3 + a1 * s4 + b0 * d
            s0 = a
            s1 = b
            s2 = cc
            s3 = d
            s4 = e
            row[i] = a * t0 + b * t1 + cc * t2 + d * t3 + e * t4
        state[c, 0] = s0
        state[c, 1] = s1
        state[c, 2] = s2
        state[c, 3] = s3
        state[c, 4] = s4
    if channels > 0:
        smooth[0] = cut
        smooth[3] = res
        counts[0] = cut_left
        counts[1] = res_left


def _approximately_equal(a: np.float32, b: np.float32) -> bool:
    """Equal within float32 epsilon, relative (or within the smallest normal float, absolute)."""
    diff = abs(float(a) - float(b))
    return diff <= float(np.finfo(np.float32).tiny) or diff <= float(np.finfo(np.float32).eps) * max(
        abs(float(a)), abs(float(b))
    )


class LadderFilter(Plugin):
    """A multi-mode audio filter modelled on the classic Moog synthesizer ladder filter, with drive.

    Depending on ``mode``, frequencies above, below, or on both sides of the cutoff are attenuated, at 12 or
    24 dB/octave. Higher ``resonance`` gives a peak at the cutoff; ``drive`` saturates the input and the
    feedback path. When a parameter changes during a stream (``reset=False``), cutoff and resonance glide to
    their new values over 50 ms; changing ``mode`` clears the filter's state.

    Parameters
    ----------
    mode : LadderFilter.Mode
        ``LPF12``, ``HPF12``, ``BPF12``, ``LPF24``, ``HPF24`` or ``BPF24`` (low/high/band-pass at 12 or 24
        dB/octave; default ``LPF12``). The members are also class attributes: ``LadderFilter.HPF24``.
    cutoff_hz : float
        Cutoff frequency in Hz, >= 0 (default 200). 0 gives silence; cutoffs above Nyquist are allowed (the
        stages then pass nearly everything). Negative values are rejected (pedalboard outputs NaN for them).
    resonance : float
        Feedback amount, 0 to 1 (default 0).
    drive : float
        Input saturation, >= 1 (default 1.0); higher values distort more.
    """

    class Mode(enum.IntEnum):
        """Filter response of a :class:`LadderFilter`."""

        #: low-pass 12 dB/octave
        LPF12 = 0
        #: high-pass 12 dB/octave
        HPF12 = 1
        #: band-pass 12 dB/octave
        BPF12 = 2
        #: low-pass 24 dB/octave
        LPF24 = 3
        #: high-pass 24 dB/octave
        HPF24 = 4
        #: band-pass 24 dB/octave
        BPF24 = 5

    LPF12 = Mode.LPF12
    HPF12 = Mode.HPF12
    BPF12 = Mode.BPF12
    LPF24 = Mode.LPF24
    HPF24 = Mode.HPF24
    BPF24 = Mode.BPF24

    mode = Param(Mode.LPF12, kind=Mode, doc="filter response (low/high/band-pass, 12 or 24 dB/octave)")
    cutoff_hz = Param(
        200.0, minimum=0.0, unit="Hz", doc="cutoff frequency", error="Cutoff frequency must not be negative."
    )
    resonance = Param(
        0.0, minimum=0.0, maximum=1.0, doc="feedback around the ladder", error="Resonance must be between 0.0 and 1.0."
    )
    drive = Param(1.0, minimum=1.0, doc="input saturation", error="Drive must be greater than 1.0.")

    def __init__(
        self, mode: LadderFilter.Mode = Mode.LPF12, cutoff_hz: float = 200, resonance: float = 0, drive: float = 1.0
    ) -> None:
        super().__init__(mode=mode, cutoff_hz=cutoff_hz, resonance=resonance, drive=drive)

    # ------------------------------------------------------------------ plugin hooks
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._state = np.zeros((num_channels, 5), np.float32)
        # ramp length: floor(0.05 s * sr), both held in single precision as the reference does
        self._ramp_steps = int(math.floor(float(_F(_RAMP_SECONDS)) * float(_F(sample_rate))))
        self._smooth = np.zeros(6, np.float32)
        self._counts = np.zeros(2, np.int64)
        self._params_vec = np.zeros(19, np.float32)
        self._applied_mode: LadderFilter.Mode | None = None

    def _reset_state(self) -> None:
        self._state[:] = 0.0
        self._smooth[0] = self._smooth[1]
        self._smooth[3] = self._smooth[4]
        self._counts[:] = 0

    def _set_target(self, which: int, value: np.float32) -> None:
        """Start a linear glide of smoother ``which`` (0 cutoff, 1 resonance) towards ``value``."""
        base = 3 * which
        if _approximately_equal(value, self._smooth[base + 1]):
            return
        if self._ramp_steps <= 0:
            self._smooth[base] = self._smooth[base + 1] = value
            self._counts[which] = 0
            return
        self._smooth[base + 1] = value
        self._counts[which] = self._ramp_steps
        self._smooth[base + 2] = (value - self._smooth[base]) / _F(self._ramp_steps)

    def _update(self) -> None:
        assert self._format is not None
        sample_rate = _F(self._format[0])
        scaler = _F(-2.0 * math.pi) / sample_rate
        self._set_target(0, _F(np.exp(_F(self.cutoff_hz) * scaler)))
        self._set_target(1, _F(0.1) + _F(self.resonance) * (_F(1.0) - _F(0.1)))

        drive = _F(self.drive)
        drive2 = drive * _F(0.04) + _F(0.96)
        p = self._params_vec
        p[_DRIVE] = drive
        p[_GAIN] = np.power(drive, _F(-2.642)) * _F(0.6103) + _F(0.3903)
        p[_DRIVE2] = drive2
        p[_GAIN2] = np.power(drive2, _F(-2.642)) * _F(0.6103) + _F(0.3903)
        taps, comp = _MODE_TAPS[int(self.mode)]
        p[_COMP] = comp
        p[_TAPS : _TAPS + 5] = np.array(taps, np.float32) * _F(_OUTPUT_GAIN)
        p[_B0C] = _F(0.76923076923)
        p[_B1C] = _F(0.23076923076)
        p[_LUT_SCALE] = _F(_LUT_POINTS - 1) / (_F(_LUT_RANGE) - _F(-_LUT_RANGE))
        p[_LUT_OFFSET] = -_F(-_LUT_RANGE) * p[_LUT_SCALE]
        p[_LUT_MIN] = -_LUT_RANGE
        p[_LUT_MAX] = _LUT_RANGE
        p[_MINUS4] = -4.0
        p[_ONE] = 1.0
        p[_MINUS1] = -1.0

        if self._applied_mode is not None and self._applied_mode != self.mode:
            self._reset_state()  # a new mode starts from a clean ladder (as the reference does)
        self._applied_mode = self.mode

    def _param_changed(self, name: str) -> None:
        super()._param_changed(name)
        if name == "mode" and self._format is not None and self._applied_mode not in (None, self.mode):
            # The mode change clears the ladder now: parameters set before it take effect without a glide,
            # parameters set after it glide from there (the order of the reference's setters).
            with self._lock:
                self._update()
                self._dirty = False

    def _process(self, block: np.ndarray) -> np.ndarray:
        _ladder_kernel(block, self._state, _TABLE, self._params_vec, self._smooth, self._counts)
        return block

    @property
    def tail_seconds(self) -> float:
        """An estimate of the time for the response to fall 60 dB: four one-pole stages, lengthened by the
        feedback (resonance)."""
        sample_rate = self._format[0] if self._format is not None else 44100.0
        if self.cutoff_hz <= 0.0:
            return 0.0
        stage = 6.91 * sample_rate / (2.0 * math.pi * self.cutoff_hz)  # samples for one pole to fall 60 dB
        return float(4.0 * stage / (1.0 - 0.97 * self.resonance) / sample_rate)
