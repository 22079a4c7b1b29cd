"""Dynamics processors: Compressor, Limiter and NoiseGate (the JUCE ``dsp`` designs pedalboard wraps).

All three are built from the same two pieces, which live here as Numba kernels:

- a *ballistics filter*: a one-pole envelope follower with separate attack and release coefficients,
  ``y[n] = v + c * (y[n-1] - v)`` where ``c`` is the attack coefficient while the detector value ``v`` rises
  above the envelope and the release coefficient otherwise; ``c = exp(-2*pi*1000 / (ms * sample_rate))`` (0 for
  times under 1 microsecond), so the envelope covers 63% (1 - 1/e) of a step in ``ms / (2*pi)``
  milliseconds. A "peak" follower uses ``v = |x|``; an "RMS" follower smooths ``x**2`` and
  returns the square root.
- a *static gain computer* with a hard knee: a compressor applies ``(env / threshold) ** (1/ratio - 1)`` when the
  envelope is at or above the threshold; an expander (the gate) applies ``(env / threshold) ** (ratio - 1)`` when
  it is at or below it.

Envelopes are per channel and carry over between blocks, so block processing equals whole-array processing.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.jit import kernel
from ..core.params import Param
from ..core.plugin import Plugin

# detector modes of the shared kernel
_COMPRESS = 0  # peak follower of |x|, gain above the threshold
_GATE = 1  # RMS follower (attack 0, release 50 ms) into a peak follower, gain below the threshold


def ballistics_coefficient(time_ms: float, sample_rate: float) -> float:
    """The one-pole coefficient for an attack or release time: ``exp(-2*pi*1000 / (time_ms * sample_rate))``.

    Times under one microsecond give 0 (the envelope follows the detector instantly). The coefficient is
    rounded to float32, as in the single-precision reference implementation.
    """
    if time_ms < 1e-3:
        return 0.0
    return float(np.float32(math.exp(-2.0 * math.pi * 1000.0 / sample_rate / float(np.float32(time_ms)))))


def db_to_gain_floor(db: float, floor_db: float) -> float:
    """``10 ** (db / 20)`` in single precision, or 0 at or below ``floor_db``."""
    if db <= floor_db:
        return 0.0
    return float(np.float32(10.0) ** (np.float32(db) * np.float32(0.05)))


def _threshold_pair(threshold_db: float) -> tuple[float, float]:
    """(threshold, 1/threshold) with the -200 dB floor; a zero threshold has an infinite inverse."""
    threshold = db_to_gain_floor(threshold_db, -200.0)
    return threshold, (1.0 / threshold if threshold > 0.0 else math.inf)


@kernel
def _follow(value, previous, attack, release):  # pragma: no cover - compiled
    """One step of the ballistics filter."""
    c = attack if value > previous else release
    return value + c * (previous - value)


@kernel
def _compressor_gain(env, threshold, threshold_inv, exponent):  # pragma: no cover - compiled
    """Hard-knee downward gain: 1 below the threshold, ``(env/threshold)**exponent`` at or above it."""
    if env < threshold:
        return 1.0
    ratio = env * threshold_inv
    if ratio != ratio:  # 0 * inf with a zero threshold: everything is "above", gain tends to 0
        return 0.0
    return ratio**exponent


@kernel
def _dynamics_kernel(
    block, env, rms, mode, attack, release, threshold, threshold_inv, exponent, rms_release
):  # pragma: no cover - compiled
    """Shared per-sample loop of Compressor (``mode`` 0) and NoiseGate (``mode`` 1), in place.

    ``env`` (and ``rms`` for the gate) hold one envelope value per channel and are updated.
    """
    channels, n = block.shape
    for c in range(channels):
        e = env[c]
        r = rms[c]
        for i in range(n):
            x = block[c, i]
            if mode == _COMPRESS:
                e = _follow(abs(x), e, attack, release)
                g = _compressor_gain(e, threshold, threshold_inv, exponent)
            else:
                r = _follow(x * x, r, 0.0, rms_release)
                e = _follow(math.sqrt(r), e, attack, release)
                if e > threshold:
                    g = 1.0
                else:
                    ratio = e * threshold_inv
                    g = 0.0 if ratio != ratio else ratio**exponent
            block[c, i] = g * x
        env[c] = e
        rms[c] = r


@kernel
def _limiter_kernel(block, env1, env2, state, coeffs):  # pragma: no cover - compiled
    """Two compressor stages, a linearly ramped output gain and a hard clip at +-1, in place.

    ``coeffs`` = (attack1, release1, threshold1, inverse1, exponent1, attack2, release2, threshold2, inverse2,
    exponent2); ``state`` = (current gain, target gain, step, remaining ramp samples), shared by all channels.
    """
    channels, n = block.shape
    a1, r1, t1, i1, x1, a2, r2, t2, i2, x2 = (
        coeffs[0],
        coeffs[1],
        coeffs[2],
        coeffs[3],
        coeffs[4],
        coeffs[5],
        coeffs[6],
        coeffs[7],
        coeffs[8],
        coeffs[9],
    )
    for c in range(channels):
        e1 = env1[c]
        e2 = env2[c]
        for i in range(n):
            x = block[c, i]
            e1 = _follow(abs(x), e1, a1, r1)
            x = x * _compressor_gain(e1, t1, i1, x1)
            e2 = _follow(abs(x), e2, a2, r2)
            block[c, i] = x * _compressor_gain(e2, t2, i2, x2)
        env1[c] = e1
        env2[c] = e2
    current, target, step, remaining = state[0], state[1], state[2], state[3]
    if remaining > 0.0:  # ramp the output gain towards its new target, one value per sample for all channels
        for i in range(n):
            if remaining > 0.0:
                remaining -= 1.0
                current = current + step if remaining > 0.0 else target
            for c in range(channels):
                block[c, i] *= current
    else:
        current = target
        for c in range(channels):
            for i in range(n):
                block[c, i] *= current
    for c in range(channels):
        for i in range(n):
            v = block[c, i]
            block[c, i] = 1.0 if v > 1.0 else (-1.0 if v < -1.0 else v)
    state[0], state[2], state[3] = current, step, remaining


class _Dynamics(Plugin):
    """Per-channel envelope state shared by the dynamics processors."""

    _abstract = True

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._sr = sample_rate
        self._env = np.zeros(num_channels, np.float64)
        self._rms = np.zeros(num_channels, np.float64)

    def _reset_state(self) -> None:
        self._env[:] = 0.0
        self._rms[:] = 0.0


class Compressor(_Dynamics):
    """A downward compressor with a hard knee and no makeup gain (the JUCE ``dsp::Compressor`` design).

    The detector is a peak follower of ``|x|`` per channel (one-pole attack and release: as in JUCE, the
    envelope covers 63% of a step in ``attack_ms / (2*pi)`` or ``release_ms / (2*pi)`` milliseconds). Above
    the threshold the gain is ``(envelope / threshold) ** (1 / ratio - 1)``, so a steady level ``L`` dB above
    the threshold comes out ``L / ratio`` dB above it. The defaults (``ratio=1``) leave the signal unchanged.

    Parameters
    ----------
    threshold_db : float
        Level above which the signal is compressed, in dBFS (default 0; any finite value).
    ratio : float
        Compression ratio, >= 1 (default 1: no compression).
    attack_ms : float
        Attack time in milliseconds, >= 0 (default 1.0).
    release_ms : float
        Release time in milliseconds, >= 0 (default 100).
    """

    threshold_db = Param(0.0, unit="dB", doc="level above which the signal is compressed")
    ratio = Param(
        1.0,
        minimum=1.0,
        doc="compression ratio (input dB over the threshold per output dB)",
        error="Compressor ratio must be a value >= 1.0.",
    )
    attack_ms = Param(1.0, minimum=0.0, unit="ms", doc="attack time constant")
    release_ms = Param(100.0, minimum=0.0, unit="ms", doc="release time constant")

    def __init__(
        self, threshold_db: float = 0, ratio: float = 1, attack_ms: float = 1.0, release_ms: float = 100
    ) -> None:
        super().__init__(threshold_db=threshold_db, ratio=ratio, attack_ms=attack_ms, release_ms=release_ms)

    def _update(self) -> None:
        self._attack = ballistics_coefficient(self.attack_ms, self._sr)
        self._release = ballistics_coefficient(self.release_ms, self._sr)
        self._threshold, self._threshold_inv = _threshold_pair(self.threshold_db)
        self._exponent = float(np.float32(1.0) / np.float32(self.ratio) - np.float32(1.0))

    def _process(self, block: np.ndarray) -> np.ndarray:
        _dynamics_kernel(
            block,
            self._env,
            self._rms,
            _COMPRESS,
            self._attack,
            self._release,
            self._threshold,
            self._threshold_inv,
            self._exponent,
            0.0,
        )
        return block


class NoiseGate(_Dynamics):
    """A downward expander / noise gate (the JUCE ``dsp::NoiseGate`` design).

    The level detector is an RMS follower (instant attack, 50 ms release) feeding a peak follower with the
    given attack and release. Below the threshold the gain is ``(envelope / threshold) ** (ratio - 1)``: a
    steady signal ``L`` dB under the threshold comes out ``L * ratio`` dB under it. With the default -100 dB
    threshold, normal signals pass unchanged.

    Parameters
    ----------
    threshold_db : float
        Level below which the signal is attenuated, in dBFS (default -100; any finite value).
    ratio : float
        Expansion ratio, >= 1 (default 10; 1 leaves the signal unchanged).
    attack_ms : float
        Attack time of the envelope in milliseconds, >= 0 (default 1.0).
    release_ms : float
        Release time of the envelope in milliseconds, >= 0 (default 100).
    """

    threshold_db = Param(-100.0, unit="dB", doc="level below which the signal is attenuated")
    ratio = Param(10.0, minimum=1.0, doc="expansion ratio below the threshold")
    attack_ms = Param(1.0, minimum=0.0, unit="ms", doc="attack time constant of the envelope")
    release_ms = Param(100.0, minimum=0.0, unit="ms", doc="release time constant of the envelope")

    def __init__(
        self, threshold_db: float = -100.0, ratio: float = 10, attack_ms: float = 1.0, release_ms: float = 100.0
    ) -> None:
        super().__init__(threshold_db=threshold_db, ratio=ratio, attack_ms=attack_ms, release_ms=release_ms)

    def _update(self) -> None:
        self._attack = ballistics_coefficient(self.attack_ms, self._sr)
        self._release = ballistics_coefficient(self.release_ms, self._sr)
        self._rms_release = ballistics_coefficient(50.0, self._sr)
        self._threshold, self._threshold_inv = _threshold_pair(self.threshold_db)
        self._exponent = float(np.float32(self.ratio) - np.float32(1.0))

    def _process(self, block: np.ndarray) -> np.ndarray:
        _dynamics_kernel(
            block,
            self._env,
            self._rms,
            _GATE,
            self._attack,
            self._release,
            self._threshold,
            self._threshold_inv,
            self._exponent,
            self._rms_release,
        )
        return block


class Limiter(_Dynamics):
    """A loudness-maximising limiter (the JUCE ``dsp::Limiter`` design), as in pedalboard.

    Two compressor stages in series (a fixed -10 dB, 4:1, 2 ms / 200 ms stage, then a 1000:1 stage at
    ``threshold_db`` with a near-instant attack and the given release), then a **makeup gain** of
    ``10 ** (7.5/40) * 10 ** (-threshold_db/20)`` (so quiet material is boosted), then a hard clip at +-1.0.
    The output never exceeds 1.0 in magnitude. When ``threshold_db`` changes while streaming, the makeup gain
    moves to its new value over 1 ms. Use :class:`BrickwallLimiter` for a ceiling without makeup gain.

    Parameters
    ----------
    threshold_db : float
        Threshold of the limiting stage in dBFS (default -10; any finite value).
    release_ms : float
        Release time of the limiting stage in milliseconds, >= 0 (default 100).
    """

    threshold_db = Param(-10.0, unit="dB", doc="threshold of the limiting stage (output is boosted to match)")
    release_ms = Param(100.0, minimum=0.0, unit="ms", doc="release time of the limiting stage")

    def __init__(self, threshold_db: float = -10.0, release_ms: float = 100.0) -> None:
        super().__init__(threshold_db=threshold_db, release_ms=release_ms)

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        super()._prepare(sample_rate, num_channels)
        self._env2 = np.zeros(num_channels, np.float64)
        self._gain_state = np.zeros(4, np.float64)  # current, target, step, remaining ramp samples
        self._ramp_steps = int(math.floor(0.001 * sample_rate))
        self._coeffs = np.zeros(10, np.float64)

    def _reset_state(self) -> None:
        super()._reset_state()
        self._env2[:] = 0.0
        self._gain_state[0] = self._gain_state[1]
        self._gain_state[2:] = 0.0

    def _update(self) -> None:
        sr = self._sr
        t1, i1 = _threshold_pair(-10.0)
        t2, i2 = _threshold_pair(self.threshold_db)
        self._coeffs[:] = (
            ballistics_coefficient(2.0, sr),
            ballistics_coefficient(200.0, sr),
            t1,
            i1,
            0.25 - 1.0,
            ballistics_coefficient(0.001, sr),
            ballistics_coefficient(self.release_ms, sr),
            t2,
            i2,
            float(np.float32(1.0) / np.float32(1000.0) - np.float32(1.0)),
        )
        makeup = np.float32(10.0 ** (10.0 * (1.0 - 0.25) / 40.0)) * np.float32(
            db_to_gain_floor(-self.threshold_db, -100.0)
        )
        state = self._gain_state
        target = float(makeup)
        if target != state[1]:
            state[1] = target
            if self._ramp_steps > 0:
                state[3] = float(self._ramp_steps)
                state[2] = (target - state[0]) / self._ramp_steps
            else:
                state[0] = target
                state[3] = 0.0

    def _process(self, block: np.ndarray) -> np.ndarray:
        _limiter_kernel(block, self._env, self._env2, self._gain_state, self._coeffs)
        return block
