"""IIR filters: first-order low/high-pass and RBJ-cookbook shelf and peak biquads.

Every filter here is one recursion, run by one Numba kernel in direct form I on float64 state:

    y[n] = b0 x[n] + b1 x[n-1] + b2 x[n-2] - a1 y[n-1] - a2 y[n-2]

(a first-order filter is the same with ``b2 = a2 = 0``). The coefficients are designed in single precision with
the same formulas, operation order and clamps as pedalboard 0.9.26 (which uses JUCE's
``IIR::Coefficients<float>``), so the frequency responses are the same to float32 rounding; the recursion itself
runs in double precision, which only lowers the noise floor.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.jit import kernel
from ..core.params import Param
from ..core.plan import PlanStep
from ..core.plugin import Plugin

_F = np.float32
_PI = _F(math.pi)

#: Highest cutoff of the first-order filters, as a fraction of the sample rate (just below Nyquist: the
#: bilinear-transform prewarping ``tan(pi f / sr)`` is infinite at Nyquist and changes sign above it).
FIRST_ORDER_MAX_CUTOFF = 0.4999

CUTOFF_ERROR = "Cutoff frequency must be greater than {minimum:g}Hz."
Q_ERROR = "Q value must be greater than {minimum:g}."


@kernel
def _iir_kernel(block: np.ndarray, coeffs: np.ndarray, state: np.ndarray) -> None:  # pragma: no cover - compiled
    """Filter ``block`` ((channels, n) float32) in place with one biquad per channel, in double precision.

    ``coeffs`` is float64 ``[b0, b1, b2, a1, a2]`` (normalised, ``a0 = 1``); ``state`` is float64
    ``(channels, 4)``: each channel's last two inputs and outputs ``[x1, x2, y1, y2]``, updated in place.
    Direct form I: ``y = b0 x + b1 x1 + b2 x2 - a2 y2 - a1 y1``, summed so that only one multiply and one
    add sit on the sample-to-sample path, and two channels at a time so the CPU overlaps their recursions.
    """
    b0 = coeffs[0]
    b1 = coeffs[1]
    b2 = coeffs[2]
    a1 = coeffs[3]
    a2 = coeffs[4]
    channels, n = block.shape
    c = 0
    while c + 1 < channels:
        left = block[c]
        right = block[c + 1]
        x1, x2, y1, y2 = state[c, 0], state[c, 1], state[c, 2], state[c, 3]
        u1, u2, v1, v2 = state[c + 1, 0], state[c + 1, 1], state[c + 1, 2], state[c + 1, 3]
        for i in range(n):
            x = np.float64(left[i])
            u = np.float64(right[i])
            y = (b0 * x + b1 * x1 + b2 * x2 - a2 * y2) - a1 * y1
            v = (b0 * u + b1 * u1 + b2 * u2 - a2 * v2) - a1 * v1
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            u2 = u1
            u1 = u
            v2 = v1
            v1 = v
            left[i] = y
            right[i] = v
        state[c, 0], state[c, 1], state[c, 2], state[c, 3] = x1, x2, y1, y2
        state[c + 1, 0], state[c + 1, 1], state[c + 1, 2], state[c + 1, 3] = u1, u2, v1, v2
        c += 2
    if c < channels:
        row = block[c]
        x1, x2, y1, y2 = state[c, 0], state[c, 1], state[c, 2], state[c, 3]
        for i in range(n):
            x = np.float64(row[i])
            y = (b0 * x + b1 * x1 + b2 * x2 - a2 * y2) - a1 * y1
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            row[i] = y
        state[c, 0], state[c, 1], state[c, 2], state[c, 3] = x1, x2, y1, y2
    # keep a decaying output out of the subnormal range (slow arithmetic on long silences)
    for c in range(channels):
        for k in range(2, 4):
            if abs(state[c, k]) < 1e-30:
                state[c, k] = 0.0


@kernel
def _iir_tv_kernel(block: np.ndarray, coeffs: np.ndarray, state: np.ndarray) -> None:  # pragma: no cover - compiled
    """Like :func:`_iir_kernel` with coefficients that change every sample: ``coeffs`` is float64
    ``(5, n)`` (``b0, b1, b2, a1, a2`` of each sample). Direct form I keeps the past inputs and outputs, so a
    change of coefficients changes the recursion smoothly (no stored state has to be re-interpreted)."""
    channels, n = block.shape
    for c in range(channels):
        row = block[c]
        x1, x2, y1, y2 = state[c, 0], state[c, 1], state[c, 2], state[c, 3]
        for i in range(n):
            x = np.float64(row[i])
            y = coeffs[0, i] * x + coeffs[1, i] * x1 + coeffs[2, i] * x2 - coeffs[4, i] * y2 - coeffs[3, i] * y1
            x2 = x1
            x1 = x
            y2 = y1
            y1 = y
            row[i] = y
        state[c, 0], state[c, 1], state[c, 2], state[c, 3] = x1, x2, y1, y2
    for c in range(channels):
        for k in range(2, 4):
            if abs(state[c, k]) < 1e-30:
                state[c, k] = 0.0


def _first_order_curves(kind: str, sample_rate: float, cutoff_hz: np.ndarray) -> np.ndarray:
    """:func:`_first_order` for one cutoff per sample, in double precision: ``(5, n)`` coefficients."""
    f = np.minimum(cutoff_hz, FIRST_ORDER_MAX_CUTOFF * sample_rate)
    n = np.tan(np.pi * f / sample_rate)
    inv = 1.0 / (n + 1.0)
    coeffs = np.zeros((5, f.shape[0]))
    if kind == "low":
        coeffs[0] = coeffs[1] = n * inv
    else:
        coeffs[0] = inv
        coeffs[1] = -inv
    coeffs[3] = (n - 1.0) * inv
    return coeffs


def _biquad_curves(
    kind: str, sample_rate: float, cutoff_hz: np.ndarray, q: np.ndarray, gain_db: np.ndarray
) -> np.ndarray:
    """:func:`_biquad` for per-sample parameters (arrays of one length), in double precision, with the same
    clamps: ``(5, n)`` coefficients."""
    sr = float(sample_rate)
    f = np.clip(cutoff_hz, 0.01, sr / 2 - 100.0) if sr / 2 - 100.0 > 0.01 else np.full_like(cutoff_hz, 0.01)
    f = np.minimum(np.maximum(f, 2.0), FIRST_ORDER_MAX_CUTOFF * sr)
    db = np.clip(gain_db, -300.0, 300.0)
    factor = np.where(db > -100.0, np.power(10.0, db * 0.05), 0.0)
    big_a = np.sqrt(np.maximum(factor, 1e-15))
    omega = 2.0 * np.pi * f / sr
    cos_w = np.cos(omega)
    sin_w = np.sin(omega)
    if kind == "peak":
        alpha = sin_w / (q * 2.0)
        c2 = -2.0 * cos_w
        b = (1.0 + alpha * big_a, c2, 1.0 - alpha * big_a)
        a = (1.0 + alpha / big_a, c2, 1.0 - alpha / big_a)
    else:
        am1, ap1 = big_a - 1.0, big_a + 1.0
        beta = sin_w * np.sqrt(big_a) / q
        am1_cos = am1 * cos_w
        if kind == "lowshelf":
            b = (big_a * (ap1 - am1_cos + beta), big_a * 2.0 * (am1 - ap1 * cos_w), big_a * (ap1 - am1_cos - beta))
            a = (ap1 + am1_cos + beta, -2.0 * (am1 + ap1 * cos_w), ap1 + am1_cos - beta)
        else:
            b = (big_a * (ap1 + am1_cos + beta), -2.0 * big_a * (am1 + ap1 * cos_w), big_a * (ap1 + am1_cos - beta))
            a = (ap1 - am1_cos + beta, 2.0 * (am1 - ap1 * cos_w), ap1 - am1_cos - beta)
    inv = 1.0 / a[0]
    return np.stack([b[0] * inv, b[1] * inv, b[2] * inv, a[1] * inv, a[2] * inv])


def _normalise(b: list[np.float32], a: list[np.float32]) -> np.ndarray:
    """``[b0, b1, b2, a1, a2]`` divided by ``a0`` in single precision (as JUCE does), as float64; a first-order
    design (two ``b`` and two ``a`` values) gets ``b2 = a2 = 0``."""
    inv = _F(1) / a[0] if a[0] != 0 else _F(0)
    if len(b) == 2:
        return np.array([b[0] * inv, b[1] * inv, 0.0, a[1] * inv, 0.0], dtype=np.float64)
    return np.array([b[0] * inv, b[1] * inv, b[2] * inv, a[1] * inv, a[2] * inv], dtype=np.float64)


def _first_order(kind: str, sample_rate: float, cutoff_hz: float) -> np.ndarray:
    """Bilinear-transform first-order low-pass or high-pass, prewarped so the -3 dB point is at the cutoff."""
    f = _F(min(cutoff_hz, FIRST_ORDER_MAX_CUTOFF * sample_rate))
    n = _F(np.tan(_PI * f / _F(sample_rate)))
    if kind == "low":
        return _normalise([n, n], [n + _F(1), n - _F(1)])
    return _normalise([_F(1), _F(-1)], [n + _F(1), n - _F(1)])


def _clamped_biquad_cutoff(sample_rate: float, cutoff_hz: float) -> np.float32:
    """The cutoff a shelf or peak filter is designed at: within [0.01 Hz, sr/2 - 100 Hz] as in pedalboard, at
    least 2 Hz (JUCE's floor), and always below ``0.4999 * sr`` so very low sample rates stay stable."""
    sr = _F(sample_rate)
    hi = sr / _F(2) - _F(100)
    f = _F(cutoff_hz)
    if f < _F(0.01):
        f = _F(0.01)
    elif f > hi:
        f = hi
    f = max(f, _F(2))
    return _F(min(f, _F(FIRST_ORDER_MAX_CUTOFF) * sr))


def _shelf_amplitude(gain_db: float) -> np.float32:
    """``A = sqrt(10 ** (gain_db / 20))`` in single precision; gains below -300 dB are taken as -300 dB and
    above +300 dB as +300 dB, so coefficients stay finite."""
    db = min(max(float(gain_db), -300.0), 300.0)
    factor = _F(10.0) ** (_F(db) * _F(0.05)) if db > -100.0 else _F(0)
    return _F(np.sqrt(max(factor, _F(1e-15))))


def _biquad(kind: str, sample_rate: float, cutoff_hz: float, q: float, gain_db: float) -> np.ndarray:
    """RBJ Audio EQ Cookbook shelf and peak designs (the shelf slope set through ``q``), in single precision."""
    one, two = _F(1), _F(2)
    big_a = _shelf_amplitude(gain_db)
    q32 = _F(q)
    omega = (two * _PI * _clamped_biquad_cutoff(sample_rate, cutoff_hz)) / _F(sample_rate)
    cos_w = _F(np.cos(omega))
    sin_w = _F(np.sin(omega))
    if kind == "peak":
        alpha = sin_w / (q32 * two)
        c2 = _F(-2) * cos_w
        return _normalise(
            [one + alpha * big_a, c2, one - alpha * big_a], [one + alpha / big_a, c2, one - alpha / big_a]
        )
    am1, ap1 = big_a - one, big_a + one
    beta = sin_w * _F(np.sqrt(big_a)) / q32
    am1_cos = am1 * cos_w
    if kind == "lowshelf":
        b = [big_a * (ap1 - am1_cos + beta), big_a * two * (am1 - ap1 * cos_w), big_a * (ap1 - am1_cos - beta)]
        a = [ap1 + am1_cos + beta, _F(-2) * (am1 + ap1 * cos_w), ap1 + am1_cos - beta]
    else:
        b = [big_a * (ap1 + am1_cos + beta), big_a * _F(-2) * (am1 + ap1 * cos_w), big_a * (ap1 + am1_cos - beta)]
        a = [ap1 - am1_cos + beta, two * (am1 - ap1 * cos_w), ap1 - am1_cos - beta]
    return _normalise(b, a)


def _decay_seconds(coeffs: np.ndarray, sample_rate: float) -> float:
    """Time for the impulse response to fall by 60 dB, from the largest pole radius."""
    radius = float(np.max(np.abs(np.roots([1.0, coeffs[3], coeffs[4]])))) if coeffs[4] else abs(coeffs[3])
    if not radius or not math.isfinite(radius):
        return 0.0
    if radius >= 1.0:
        return float("inf")
    return float(-3.0 / math.log10(radius) / sample_rate)


class _BiquadPlugin(Plugin, block_invariant=True, whole_call=True):
    """Shared machinery: float64 state ``(channels, 4)``, coefficients from :meth:`_design`, one kernel."""

    _abstract = True

    def _design(self, sample_rate: float) -> np.ndarray:
        raise NotImplementedError

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._state = np.zeros((num_channels, 4), np.float64)
        self._coeffs = np.array([1.0, 0.0, 0.0, 0.0, 0.0])

    def _reset_state(self) -> None:
        self._state[:] = 0.0

    def _update(self) -> None:
        assert self._format is not None
        self._coeffs[:] = self._design(self._format[0])  # in place: compiled plans refer to this array

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        return None if self._automation else [PlanStep(_iir_kernel, (self._coeffs, self._state))]

    def _process(self, block: np.ndarray) -> np.ndarray:
        _iir_kernel(block, self._coeffs, self._state)
        return block

    def _design_curves(self, sample_rate: float, curves: dict[str, np.ndarray], n: int) -> np.ndarray:
        raise NotImplementedError

    def _curve(self, curves: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
        """The per-sample values of ``name``: its automation curve, or its static value repeated."""
        curve = curves.get(name)
        return curve if curve is not None else np.full(n, float(self._values[name]))

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        # coefficients are designed for every sample (vectorised), then one time-varying recursion
        assert self._format is not None
        coeffs = self._design_curves(self._format[0], curves, block.shape[1])
        _iir_tv_kernel(block, np.ascontiguousarray(coeffs), self._state)
        return block

    @property
    def tail_seconds(self) -> float:
        sample_rate = self._format[0] if self._format is not None else 44100.0
        return _decay_seconds(self._design(sample_rate), sample_rate)


class _FirstOrder(_BiquadPlugin):
    """The first-order filters: one parameter, the -3 dB frequency, and a design of the ``_kind`` family."""

    _abstract = True
    _kind = ""

    cutoff_frequency_hz = Param(
        50.0, minimum=0.0, min_exclusive=True, unit="Hz", doc="-3 dB frequency", error=CUTOFF_ERROR, per_sample=True
    )

    def _design(self, sample_rate: float) -> np.ndarray:
        return _first_order(self._kind, sample_rate, self.cutoff_frequency_hz)

    def _design_curves(self, sample_rate: float, curves: dict[str, np.ndarray], n: int) -> np.ndarray:
        return _first_order_curves(self._kind, sample_rate, self._curve(curves, "cutoff_frequency_hz", n))


class LowpassFilter(_FirstOrder):
    """A first-order low-pass filter: 6 dB/octave above the cutoff, -3.01 dB at the cutoff.

    The bilinear transform of ``H(s) = 1 / (1 + s / wc)`` with prewarping, so the digital magnitude is
    ``|H(f)| = 1 / sqrt(1 + (tan(pi f / sr) / tan(pi fc / sr)) ** 2)``: exactly -3.01 dB at the cutoff and a
    zero at Nyquist. Cutoffs at or above Nyquist are processed at ``0.4999 * sample_rate`` (where the filter is
    close to a pass-through); pedalboard gives non-finite output there instead. Automated, the coefficients are
    designed for every sample, in double precision.
    """

    _kind = "low"


class HighpassFilter(_FirstOrder):
    """A first-order high-pass filter: 6 dB/octave below the cutoff, -3.01 dB at the cutoff.

    The bilinear transform of ``H(s) = (s / wc) / (1 + s / wc)`` with prewarping:
    ``|H(f)| = 1 / sqrt(1 + (tan(pi fc / sr) / tan(pi f / sr)) ** 2)``, with a zero at DC. Cutoffs at or above
    Nyquist are processed at ``0.4999 * sample_rate`` (where the filter removes nearly everything); pedalboard
    gives non-finite output there instead. Automated, the coefficients are designed for every sample, in double
    precision.
    """

    _kind = "high"


class IIRFilter(_BiquadPlugin):
    """An abstract base of the second-order (biquad) equaliser filters: :class:`HighShelfFilter`,
    :class:`LowShelfFilter` and :class:`PeakFilter`. Do not instantiate it directly.

    All of them are RBJ Audio EQ Cookbook designs (JUCE's ``makeLowShelf`` / ``makeHighShelf`` /
    ``makePeakFilter``), one filter per channel. The design frequency is kept within
    ``[2 Hz, sample_rate / 2 - 100 Hz]`` (as pedalboard does), so a cutoff at or above Nyquist is safe. A gain
    of 0 dB is a pass-through; gains beyond +-300 dB are treated as +-300 dB. ``q`` (default 1/sqrt(2) as a
    float32) sets the bandwidth of the peak and the steepness of a shelf's transition (1/sqrt(2) is the steepest
    without overshoot).

    Automated (an array, an ``Envelope`` or an ``LFO``), the coefficients are designed for every sample
    (vectorised, double precision) and run through a direct-form-I recursion, whose state (past inputs and
    outputs) stays meaningful when the coefficients move, so sweeps have no steps.
    """

    _abstract = True
    _kind = ""

    cutoff_frequency_hz = Param(
        440.0,
        minimum=0.0,
        min_exclusive=True,
        unit="Hz",
        doc="cutoff (shelves) or centre (peak) frequency",
        error=CUTOFF_ERROR,
        per_sample=True,
    )
    gain_db = Param(0.0, unit="dB", doc="gain of the shelf or peak", per_sample=True)
    q = Param(0.7071067690849304, minimum=0.0, min_exclusive=True, doc="quality factor", error=Q_ERROR, per_sample=True)

    def _design(self, sample_rate: float) -> np.ndarray:
        return _biquad(self._kind, sample_rate, self.cutoff_frequency_hz, self.q, self.gain_db)

    def _design_curves(self, sample_rate: float, curves: dict[str, np.ndarray], n: int) -> np.ndarray:
        return _biquad_curves(
            self._kind,
            sample_rate,
            self._curve(curves, "cutoff_frequency_hz", n),
            self._curve(curves, "q", n),
            self._curve(curves, "gain_db", n),
        )


class LowShelfFilter(IIRFilter):
    """A low shelf: frequencies below the cutoff are boosted (or cut) by ``gain_db``.

    The response is ``gain_db`` at DC, ``gain_db / 2`` at the cutoff and 0 dB far above it. See
    :class:`IIRFilter` for the design.
    """

    _kind = "lowshelf"


class HighShelfFilter(IIRFilter):
    """A high shelf: frequencies above the cutoff are boosted (or cut) by ``gain_db``.

    The response is 0 dB at DC, ``gain_db / 2`` at the cutoff and ``gain_db`` at Nyquist. See
    :class:`IIRFilter` for the design.
    """

    _kind = "highshelf"


class PeakFilter(IIRFilter):
    """A peak (bell) filter: frequencies around the centre are boosted (or cut) by ``gain_db``.

    The response is ``gain_db`` at ``cutoff_frequency_hz`` and 0 dB at DC and Nyquist; ``q`` sets the
    bandwidth. See :class:`IIRFilter` for the design.
    """

    _kind = "peak"
