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

from ..core.jit import Number, kernel
from ..core.params import Param
from ..core.plugin import Plugin, SidechainInput


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


def _threshold_inverse(threshold_db: float) -> float:
    """1 / threshold with the -200 dB floor (a zero threshold has an infinite inverse)."""
    threshold = db_to_gain_floor(threshold_db, -200.0)
    return float(np.float32(1.0) / np.float32(threshold)) if threshold > 0.0 else math.inf


@kernel
def _follow(
    x: float,
    e: float,
    r: float,
    attack: float,
    release: float,
    rms_release: float,
    use_rms: bool,
) -> tuple[float, float]:  # pragma: no cover - compiled
    """One step of the ballistics filter: returns the new (envelope, RMS state)."""
    if use_rms:
        v = x * x
        r = v + (0.0 if v > r else rms_release) * (r - v)
        v = math.sqrt(r)
    else:
        v = abs(x)
    return v + (attack if v > e else release) * (e - v), r


@kernel
def _envelope(
    block: np.ndarray,
    out: np.ndarray,
    env: np.ndarray,
    rms: np.ndarray,
    attack: float,
    release: float,
    rms_release: float,
    use_rms: bool,
    threshold_inv: float,
    above: bool,
) -> int:  # pragma: no cover - compiled
    """The ballistics filter shared by all dynamics processors: writes each sample's envelope, divided by the
    threshold, into ``out`` and returns how many samples the gain computer will touch (ratio over 1 when
    ``above``, under 1 otherwise).

    Peak mode follows ``|x|``; RMS mode (``use_rms``) first follows ``x**2`` with an instant attack and
    ``rms_release``, and feeds the square root of that to the peak follower. ``env`` and ``rms`` hold one value
    per channel and carry the state across blocks. Two channels are run side by side: the recursion is a
    chain of dependent operations, and two independent chains keep the CPU twice as busy.
    """
    channels, n = block.shape
    count = 0
    sign = 1.0 if above else -1.0  # count where sign * (ratio - 1) > 0
    c = 0
    while c + 1 < channels:
        e0, r0, e1, r1 = env[c], rms[c], env[c + 1], rms[c + 1]
        for i in range(n):
            e0, r0 = _follow(block[c, i], e0, r0, attack, release, rms_release, use_rms)
            e1, r1 = _follow(block[c + 1, i], e1, r1, attack, release, rms_release, use_rms)
            q0 = e0 * threshold_inv
            q1 = e1 * threshold_inv
            out[c, i] = q0
            out[c + 1, i] = q1
            count += (sign * (q0 - 1.0) > 0.0) + (sign * (q1 - 1.0) > 0.0)
        env[c], rms[c], env[c + 1], rms[c + 1] = e0, r0, e1, r1
        c += 2
    if c < channels:
        e0, r0 = env[c], rms[c]
        for i in range(n):
            e0, r0 = _follow(block[c, i], e0, r0, attack, release, rms_release, use_rms)
            q0 = e0 * threshold_inv
            out[c, i] = q0
            count += sign * (q0 - 1.0) > 0.0
        env[c], rms[c] = e0, r0
    return count


@kernel
def _sparse_gain(
    block: np.ndarray,
    ratio: np.ndarray,
    exponent: Number,
    above: bool,
) -> None:  # pragma: no cover - compiled
    """``block *= ratio ** exponent`` (single precision) where the gain computer acts; for few such samples."""
    channels, n = block.shape
    exponent = np.float32(exponent)
    for c in range(channels):
        for i in range(n):
            r = ratio[c, i]
            if (r > 1.0) if above else (r < 1.0):
                block[c, i] *= r**exponent


def _apply_gain(block: np.ndarray, ratio: np.ndarray, count: int, exponent: float, above: bool) -> None:
    """The hard-knee gain computer: ``block *= (env / threshold) ** exponent`` where the envelope is above the
    threshold (compressor, ``above=True``) or below it (expander); elsewhere the gain is exactly 1.

    ``ratio`` is ``env / threshold`` (float32, used as scratch) and ``count`` the number of samples to change.
    When most samples change, NumPy computes ``exp(exponent * log(r))`` with ``r`` clamped to 1 on the
    unaffected side (vectorised); when few do, a kernel computes ``r ** exponent`` for those alone.
    """
    if count == 0 or exponent == 0.0:
        return
    if 2 * count < ratio.size:
        _sparse_gain(block, ratio, exponent, above)
        return
    if above:
        np.fmax(ratio, np.float32(1.0), out=ratio)  # fmax: 0 * inf (zero threshold, silent input) counts as 1
    else:
        np.fmin(ratio, np.float32(1.0), out=ratio)
    with np.errstate(divide="ignore"):  # a ratio of 0 (subnormal input) gives log -inf, then gain 0 or inf: wanted
        np.log(ratio, out=ratio)
    ratio *= np.float32(exponent)
    np.exp(ratio, out=ratio)
    block *= ratio


@kernel
def _dynamics_tv(
    block: np.ndarray,
    key: np.ndarray,
    env: np.ndarray,
    rms: np.ndarray,
    attack: np.ndarray,
    release: np.ndarray,
    rms_release: float,
    use_rms: bool,
    threshold_inv: np.ndarray,
    exponent: np.ndarray,
    above: bool,
) -> None:  # pragma: no cover - compiled
    """Envelope follower and hard-knee gain computer in one pass, with per-sample ``attack``, ``release``,
    ``threshold_inv`` and ``exponent`` (float64 arrays of the block's length): the automated path of
    Compressor and NoiseGate. The envelope follows ``key`` (the block itself, or a sidechain signal of the same
    shape); the gain ``(env / threshold) ** exponent`` is applied to ``block`` where the envelope is above
    (``above``) or below the threshold, in single precision like :func:`_sparse_gain`.
    """
    channels, n = block.shape
    for c in range(channels):
        e, r = env[c], rms[c]
        for i in range(n):
            e, r = _follow(key[c, i], e, r, attack[i], release[i], rms_release, use_rms)
            q = np.float32(e * threshold_inv[i])
            if (q > 1.0) if above else (q < 1.0):
                block[c, i] *= q ** np.float32(exponent[i])
        env[c], rms[c] = e, r


def _coefficient_curve(time_ms: np.ndarray, sample_rate: float) -> np.ndarray:
    """:func:`ballistics_coefficient` of every sample (float32-rounded, as the static path)."""
    ms = time_ms.astype(np.float32).astype(np.float64)
    with np.errstate(divide="ignore"):
        coeff = np.exp(-2.0 * math.pi * 1000.0 / sample_rate / ms).astype(np.float32).astype(np.float64)
    return np.where(time_ms < 1e-3, 0.0, coeff)


def _threshold_inverse_curve(threshold_db: np.ndarray) -> np.ndarray:
    """:func:`_threshold_inverse` of every sample."""
    db = threshold_db.astype(np.float32)
    threshold = np.power(np.float32(10.0), db * np.float32(0.05)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inverse = (np.float32(1.0) / threshold).astype(np.float64)
    return np.where((threshold_db <= -200.0) | (threshold == 0), np.inf, inverse)


@kernel
def _ramp_and_clip(block: np.ndarray, state: np.ndarray) -> None:  # pragma: no cover - compiled
    """Multiply by the Limiter's output gain, stepping it linearly while a ramp is pending, then clip to +-1.

    ``state`` = (current gain, target gain, step, remaining ramp samples); the gain sequence is the same for
    all channels. The last ramp sample lands exactly on the target.
    """
    channels, n = block.shape
    target, step = state[1], state[2]
    ramp = min(n, int(state[3]))
    current = state[0]
    for c in range(channels):
        g = state[0]
        left = state[3]
        for i in range(ramp):
            left -= 1.0
            g = g + step if left > 0.0 else target
            v = block[c, i] * g
            block[c, i] = 1.0 if v > 1.0 else (-1.0 if v < -1.0 else v)
        current = g
        gain = np.float32(target)  # reached when ramp < n
        for i in range(ramp, n):
            block[c, i] = min(max(block[c, i] * gain, np.float32(-1.0)), np.float32(1.0))
    if ramp < n:
        current = target
    state[0] = current
    state[3] = max(state[3] - ramp, 0.0)


class _Dynamics(Plugin, block_invariant=True):
    """Per-channel envelope state shared by the dynamics processors."""

    _abstract = True
    #: set by each processor: whether the gain computer acts above the threshold (else below), and the detector
    _above: bool
    _use_rms: bool
    _rms_release: float

    def _curve(self, curves: dict[str, np.ndarray], name: str, n: int) -> np.ndarray:
        curve = curves.get(name)
        return curve if curve is not None else np.full(n, float(self._values[name]))

    def _detector_input(self, block: np.ndarray) -> np.ndarray:
        """What the envelope follows: the sidechain key of this block if one is set, else the block."""
        key = self._key_block(block.shape[1], block.shape[0]) if isinstance(self, SidechainInput) else None
        return block if key is None else key

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        n = block.shape[1]
        key = self._detector_input(block)
        if key is block:
            key = block.copy()  # the detector must see the input, not the output being written
        ratio = self._curve(curves, "ratio", n)
        exponent = (
            (1.0 / ratio.astype(np.float32) - np.float32(1.0)) if self._above else (ratio.astype(np.float32) - 1.0)
        ).astype(np.float64)
        _dynamics_tv(
            block,
            key,
            self._env,
            self._rms,
            _coefficient_curve(self._curve(curves, "attack_ms", n), self._sr),
            _coefficient_curve(self._curve(curves, "release_ms", n), self._sr),
            self._rms_release,
            self._use_rms,
            _threshold_inverse_curve(self._curve(curves, "threshold_db", n)),
            exponent,
            self._above,
        )
        return block

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._sr = sample_rate
        self._env = np.zeros(num_channels, np.float64)
        self._rms = np.zeros(num_channels, np.float64)

    def _reset_state(self) -> None:
        self._env[:] = 0.0
        self._rms[:] = 0.0

    def _scratch(self, block: np.ndarray) -> np.ndarray:
        """A float32 array of the block's shape for the envelope (reused between blocks)."""
        buffer = getattr(self, "_buffer", None)
        channels, n = block.shape
        if buffer is None or buffer.shape[0] != channels or buffer.shape[1] < n:
            buffer = self._buffer = np.empty((channels, max(n, 1024)), np.float32)
        return buffer[:, :n]


class Compressor(SidechainInput, _Dynamics):
    """A downward compressor with a hard knee and no makeup gain (the JUCE ``dsp::Compressor`` design).

    The detector is a peak follower of ``|x|`` per channel (one-pole attack and release: as in JUCE, the
    envelope covers 63% of a step in ``attack_ms / (2*pi)`` or ``release_ms / (2*pi)`` milliseconds). Above
    the threshold the gain is ``(envelope / threshold) ** (1 / ratio - 1)``, so a steady level ``L`` dB above
    the threshold comes out ``L / ratio`` dB above it. The defaults (``ratio=1``) leave the signal unchanged.

    Sidechain: set ``compressor.sidechain = key`` (an array lined up with the stream from its start), or pass
    ``process(audio, sr, sidechain=key)`` for one call (see :class:`~stompbox.core.plugin.SidechainInput`): the
    gain is computed from the key's envelope and applied to the input, so the input ducks under the key. A
    sidechain is not saved in chain files.

    All four parameters are automatable per sample (arrays, ``Envelope``, ``LFO``): the attack and release
    coefficients, the threshold and the ratio of every sample enter the detector and gain computer directly.
    """

    threshold_db = Param(0.0, unit="dB", doc="level above which the signal is compressed", per_sample=True)
    ratio = Param(
        1.0,
        minimum=1.0,
        doc="compression ratio (input dB over the threshold per output dB)",
        error="Compressor ratio must be a value >= {minimum:.1f}.",
        per_sample=True,
    )
    attack_ms = Param(1.0, minimum=0.0, unit="ms", doc="attack time constant", per_sample=True)
    release_ms = Param(100.0, minimum=0.0, unit="ms", doc="release time constant", per_sample=True)

    _above = True
    _use_rms = False
    _rms_release = 0.0

    def _update(self) -> None:
        self._attack = ballistics_coefficient(self.attack_ms, self._sr)
        self._release = ballistics_coefficient(self.release_ms, self._sr)
        self._threshold_inv = _threshold_inverse(self.threshold_db)
        self._exponent = float(np.float32(1.0) / np.float32(self.ratio) - np.float32(1.0))

    def _process(self, block: np.ndarray) -> np.ndarray:
        ratio = self._scratch(block)
        key = block if self._key is None else self._detector_input(block)
        count = _envelope(
            key, ratio, self._env, self._rms, self._attack, self._release, 0.0, False, self._threshold_inv, True
        )
        _apply_gain(block, ratio, count, self._exponent, True)  # ratio 1 (exponent 0) leaves the signal alone
        return block


class NoiseGate(SidechainInput, _Dynamics):
    """A downward expander / noise gate (the JUCE ``dsp::NoiseGate`` design).

    The level detector is an RMS follower (instant attack, 50 ms release) feeding a peak follower with the
    given attack and release. Below the threshold the gain is ``(envelope / threshold) ** (ratio - 1)``: a
    steady signal ``L`` dB under the threshold comes out ``L * ratio`` dB under it. With the default -100 dB
    threshold, normal signals pass unchanged.

    Sidechain: ``gate.sidechain = key`` or ``process(audio, sr, sidechain=key)``: the gate opens and closes with
    the key's level instead of the input's (see :class:`Compressor`).

    All four parameters are automatable per sample (arrays, ``Envelope``, ``LFO``).
    """

    threshold_db = Param(-100.0, unit="dB", doc="level below which the signal is attenuated", per_sample=True)
    ratio = Param(10.0, minimum=1.0, doc="expansion ratio below the threshold", per_sample=True)
    attack_ms = Param(1.0, minimum=0.0, unit="ms", doc="attack time constant of the envelope", per_sample=True)
    release_ms = Param(100.0, minimum=0.0, unit="ms", doc="release time constant of the envelope", per_sample=True)

    _above = False
    _use_rms = True

    def _update(self) -> None:
        self._attack = ballistics_coefficient(self.attack_ms, self._sr)
        self._release = ballistics_coefficient(self.release_ms, self._sr)
        self._rms_release = ballistics_coefficient(50.0, self._sr)
        self._threshold_inv = _threshold_inverse(self.threshold_db)
        self._exponent = float(np.float32(self.ratio) - np.float32(1.0))

    def _process(self, block: np.ndarray) -> np.ndarray:
        ratio = self._scratch(block)
        count = _envelope(
            block if self._key is None else self._detector_input(block),
            ratio,
            self._env,
            self._rms,
            self._attack,
            self._release,
            self._rms_release,
            True,
            self._threshold_inv,
            False,
        )
        _apply_gain(block, ratio, count, self._exponent, False)  # ratio 1 (exponent 0) leaves the signal alone
        return block


class Limiter(_Dynamics):
    """A loudness-maximising limiter (the JUCE ``dsp::Limiter`` design), as in pedalboard.

    Two compressor stages in series (a fixed -10 dB, 4:1, 2 ms / 200 ms stage, then a 1000:1 stage at
    ``threshold_db`` with a near-instant attack and the given release), then a **makeup gain** of
    ``10 ** (7.5/40) * 10 ** (-threshold_db/20)`` (so quiet material is boosted), then a hard clip at +-1.0.
    The output never exceeds 1.0 in magnitude. When ``threshold_db`` changes while streaming, the makeup gain
    moves to its new value over 1 ms. Use :class:`BrickwallLimiter` for a ceiling without makeup gain.

    Both parameters are automatable at sub-block granularity: the value at the start of every 32-sample
    sub-block (aligned to the stream) is applied to that sub-block; the makeup gain then ramps to its new value
    over 1 ms, so a threshold sweep is smooth.
    """

    threshold_db = Param(
        -10.0, unit="dB", doc="threshold of the limiting stage (output is boosted to match)", automatable=True
    )
    release_ms = Param(100.0, minimum=0.0, unit="ms", doc="release time of the limiting stage", automatable=True)

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        super()._prepare(sample_rate, num_channels)
        self._env2 = np.zeros(num_channels, np.float64)
        self._gain_state = np.zeros(4, np.float64)  # current, target, step, remaining ramp samples
        self._ramp_steps = int(math.floor(0.001 * sample_rate))

    def _reset_state(self) -> None:
        super()._reset_state()
        self._env2[:] = 0.0
        self._gain_state[0] = self._gain_state[1]
        self._gain_state[2:] = 0.0

    def _update(self) -> None:
        sr = self._sr
        # stage 1: -10 dB, 4:1, 2 ms / 200 ms; stage 2: threshold_db, 1000:1, 1 microsecond / release_ms
        self._stage1 = (ballistics_coefficient(2.0, sr), ballistics_coefficient(200.0, sr), _threshold_inverse(-10))
        self._stage2 = (
            ballistics_coefficient(0.001, sr),
            ballistics_coefficient(self.release_ms, sr),
            _threshold_inverse(self.threshold_db),
        )
        self._exponent1 = float(np.float32(1.0) / np.float32(4.0) - np.float32(1.0))
        self._exponent2 = float(np.float32(1.0) / np.float32(1000.0) - np.float32(1.0))
        makeup = np.float32(10.0 ** (10.0 * (1.0 - 0.25) / 40.0)) * np.float32(
            db_to_gain_floor(-self.threshold_db, -100.0)
        )
        state = self._gain_state
        target = float(makeup)
        if target != state[1]:  # a new makeup gain is reached by a linear ramp over 1 ms
            state[1] = target
            if self._ramp_steps > 0:
                state[3] = float(self._ramp_steps)
                state[2] = (target - state[0]) / self._ramp_steps
            else:
                state[0] = target
                state[3] = 0.0

    def _process(self, block: np.ndarray) -> np.ndarray:
        ratio = self._scratch(block)
        attack, release, inverse = self._stage1
        count = _envelope(block, ratio, self._env, self._rms, attack, release, 0.0, False, inverse, True)
        _apply_gain(block, ratio, count, self._exponent1, True)
        attack, release, inverse = self._stage2
        count = _envelope(block, ratio, self._env2, self._rms, attack, release, 0.0, False, inverse, True)
        _apply_gain(block, ratio, count, self._exponent2, True)
        _ramp_and_clip(block, self._gain_state)
        return block
