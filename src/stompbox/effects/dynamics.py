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
from typing import Any

import numpy as np

from ..core.jit import kernel
from ..core.params import Param
from ..core.plan import PlanStep
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


#: samples per tile of the dynamics kernels (their scratch arrays hold one tile)
TILE = 512
_FLT_MIN32 = np.float32(np.finfo(np.float32).tiny)
_FLT_MAX32 = np.float32(np.finfo(np.float32).max)
# logf (fdlibm): log(1 + f) = f - hfsq + s (hfsq + R(s * s)), s = f / (2 + f), ln 2 split for k ln 2
_LG1, _LG2, _LG3, _LG4 = (np.float32(v) for v in (0.66666662693, 0.40000972152, 0.28498786688, 0.24279078841))
_LOG_LN2_HI = np.float32(6.9313812256e-01)
_LOG_LN2_LO = np.float32(9.0580006145e-06)
# expf (fdlibm): exp(t) = 1 - ((t c) / (c - 2) - t), c = t - t**2 (P1 + t**2 P2), after y = k ln 2 + t
_EXP_LN2_HI = np.float32(6.9314575195e-01)
_EXP_LN2_LO = np.float32(1.4286067653e-06)
_INV_LN2_32 = np.float32(1.4426950216e00)
_P1 = np.float32(1.6666625440e-1)
_P2 = np.float32(-2.7667332906e-3)


@kernel
def _gain_row(
    x: np.ndarray, q: np.ndarray, e: float, above: bool, wide: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``x[i] *= q[i] ** e`` where the gain computer acts (``q > 1`` when ``above``, else ``q < 1``).

    ``q ** e`` is ``exp(e * log(q))`` in single precision, as NumPy's float32 ``log`` and ``exp`` compute it
    (the classic fdlibm ``logf``/``expf`` reductions and polynomials, under 1 ulp each; the product's rounding
    makes large ``|e * log(q)|``, that is very small gains, less exact, as it always has), written as plain
    arithmetic on whole rows that the compiler vectorises (16 lanes), so one formula serves every block.
    ``wide`` is float32 ``(4, >= n)`` scratch. ``q`` that is 0, subnormal, infinite or NaN takes
    single-precision ``powf`` instead (rare: silent input, zero thresholds). Elsewhere the gain is exactly 1.
    """
    n = x.shape[0]
    one = np.float32(1.0)
    e32 = np.float32(e)
    w = wide[0, :n]
    wb = wide[0].view(np.int32)[:n]
    kb = wide[1].view(np.int32)[:n]
    s1 = wide[2, :n]
    s1b = wide[2].view(np.int32)[:n]
    s2 = wide[3, :n]
    s2b = wide[3].view(np.int32)[:n]
    special = 0
    for i in range(n):
        v = q[i]
        act = (v > one) if above else (v < one)
        normal = v >= _FLT_MIN32 and v <= _FLT_MAX32
        special += act and not normal
        w[i] = v if (act and normal) else one
    for i in range(n):  # (integer work in loops of its own, float work in others: both vectorise)
        b = wb[i]
        mant = b & 0x007FFFFF
        big = mant > 0x003504F3
        kb[i] = ((b >> 23) - 127) + (1 if big else 0)
        wb[i] = mant | (0x3F000000 if big else 0x3F800000)  # m in [sqrt(2) / 2, sqrt(2))
    for i in range(n):
        f = w[i] - one
        kf = np.float32(kb[i])
        s = np.divide(f, np.float32(2.0) + f)
        z = s * s
        w2 = z * z
        r = z * (_LG1 + w2 * _LG3) + w2 * (_LG2 + w2 * _LG4)
        hfsq = np.float32(0.5) * f * f
        lg = kf * _LOG_LN2_HI - ((hfsq - (s * (hfsq + r) + kf * _LOG_LN2_LO)) - f)
        y = e32 * lg
        y = y if y > np.float32(-120.0) else np.float32(-120.0)  # (y <= 0) below this the gain rounds to 0
        kk = np.floor(y * _INV_LN2_32 + np.float32(0.5))
        t = (y - kk * _EXP_LN2_HI) - kk * _EXP_LN2_LO
        tt = t * t
        c = t - tt * (_P1 + tt * _P2)
        w[i] = one - (np.divide(t * c, c - np.float32(2.0)) - t)
        kb[i] = np.int32(kk)
    for i in range(n):  # 2 ** k as two normal factors (k may be below -126)
        k = kb[i]
        k1 = k >> 1
        s1b[i] = (k1 + 127) << 23
        s2b[i] = (k - k1 + 127) << 23
    for i in range(n):
        x[i] *= (w[i] * s1[i]) * s2[i]
    if special:
        for i in range(n):
            v = q[i]
            if ((v > one) if above else (v < one)) and not (v >= _FLT_MIN32 and v <= _FLT_MAX32):
                x[i] *= v**e32


@kernel
def _dynamics(
    block: np.ndarray,
    key: np.ndarray,
    state: np.ndarray,
    coef: np.ndarray,
    ratio: np.ndarray,
    wide: np.ndarray,
    use_rms: bool,
    above: bool,
) -> None:  # pragma: no cover - compiled
    """Envelope follower and hard-knee gain computer of Compressor and NoiseGate (and each Limiter stage).

    The envelope follows ``key`` (the block itself, or a sidechain signal of its shape); ``state`` is float64
    ``(2, channels)`` (peak envelope, RMS state), ``coef`` float64 ``[attack, release, rms_release,
    threshold_inv, exponent]``. The gain ``(env / threshold) ** exponent`` is applied where the envelope is
    above (``above``) or below the threshold; a ratio of 1 (exponent 0) leaves the signal alone. The block is
    worked through in tiles of ``TILE`` samples, so the scratch stays in cache whatever the block's length:
    ``ratio`` float32 ``(channels, TILE)`` and ``wide`` float32 ``(4, TILE)``.
    """
    channels, n = block.shape
    tile = ratio.shape[1]
    exponent = coef[4]
    for start in range(0, n, tile):
        stop = min(n, start + tile)
        count = _envelope(
            key[:, start:stop], ratio, state[0], state[1], coef[0], coef[1], coef[2], use_rms, coef[3], above
        )
        if count == 0 or exponent == 0.0:
            continue
        for c in range(channels):
            _gain_row(block[c, start:stop], ratio[c], exponent, above, wide)


#: the float64 memory of a dynamics plugin's step: coefficients (10: one stage's 5, or the Limiter's two stages),
#: the Limiter's output gain ramp (4), then the envelope state (2 rows per stage, one column per channel)
_COEF, _GAIN_RAMP, _STATE = 0, 10, 14


@kernel
def _compressor_kernel(block: np.ndarray, mem: np.ndarray, scratch: np.ndarray) -> None:  # pragma: no cover
    """The Compressor's step: peak envelope of the block itself, gain above the threshold. ``mem`` is laid out
    as ``_COEF``/``_GAIN_RAMP``/``_STATE`` say; ``scratch`` float32 ``(channels + 4, TILE)``."""
    channels = block.shape[0]
    state = mem[_STATE : _STATE + 2 * channels].reshape((2, channels))
    _dynamics(block, block, state, mem[_COEF : _COEF + 5], scratch[:channels], scratch[channels:], False, True)


@kernel
def _gate_kernel(block: np.ndarray, mem: np.ndarray, scratch: np.ndarray) -> None:  # pragma: no cover
    """The NoiseGate's step: RMS-then-peak envelope of the block itself, gain below the threshold (arrays as
    for :func:`_compressor_kernel`)."""
    channels = block.shape[0]
    state = mem[_STATE : _STATE + 2 * channels].reshape((2, channels))
    _dynamics(block, block, state, mem[_COEF : _COEF + 5], scratch[:channels], scratch[channels:], True, False)


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
    (``above``) or below the threshold, in single precision (``powf``).
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


@kernel
def _limiter_kernel(block: np.ndarray, mem: np.ndarray, scratch: np.ndarray) -> None:  # pragma: no cover
    """The Limiter's step: two compressor stages (their coefficients ``mem[0:5]`` and ``mem[5:10]``, their
    envelope states the first and second pair of state rows, see :func:`_dynamics`), then the makeup gain ramp
    and the clip (:func:`_ramp_and_clip`)."""
    channels = block.shape[0]
    state = mem[_STATE : _STATE + 4 * channels].reshape((4, channels))
    ratio = scratch[:channels]
    wide = scratch[channels:]
    _dynamics(block, block, state[0:2], mem[0:5], ratio, wide, False, True)
    _dynamics(block, block, state[2:4], mem[5:10], ratio, wide, False, True)
    _ramp_and_clip(block, mem[_GAIN_RAMP : _GAIN_RAMP + 4])


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
        self._channels = num_channels
        # envelope state, float64 (rows, channels): peak envelope and RMS state (twice for the Limiter)
        # the step's two arrays (state and coefficients; scratch): views below name their parts
        self._mem = np.zeros(_STATE + self._STATE_ROWS * num_channels, np.float64)
        self._scratch = np.zeros((num_channels + 4, TILE), np.float32)  # (the kernels work in tiles)
        #: the plugin's one step: self._kernel(block, *self._args)
        self._args = (self._mem, self._scratch)

    _STATE_ROWS = 2
    _kernel: Any = None

    # views of the step's arrays (properties, so that a pickled plugin's views still share its arrays)
    @property
    def _coef(self) -> np.ndarray:
        """Coefficients, float64: attack, release, RMS release, 1 / threshold, exponent (twice for the Limiter),
        written in place by ``_update``."""
        return self._mem[_COEF:_GAIN_RAMP]

    @property
    def _gain_state(self) -> np.ndarray:
        """The Limiter's output gain: current, target, step, remaining ramp samples."""
        return self._mem[_GAIN_RAMP:_STATE]

    @property
    def _state(self) -> np.ndarray:
        """Envelope state, float64 ``(rows, channels)``: peak envelope and RMS state (twice for the Limiter)."""
        return self._mem[_STATE:].reshape(self._STATE_ROWS, -1)

    @property
    def _env(self) -> np.ndarray:
        result: np.ndarray = self._state[0]
        return result

    @property
    def _rms(self) -> np.ndarray:
        result: np.ndarray = self._state[1]
        return result

    def _reset_state(self) -> None:
        self._mem[_STATE:] = 0.0

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        if self._automation or getattr(self, "_key", None) is not None:
            return None
        return [PlanStep(self._kernel, self._args)]

    def _process(self, block: np.ndarray) -> np.ndarray:
        if getattr(self, "_key", None) is None:
            self._kernel(block, *self._args)
        else:  # a sidechain key drives the detector: the same kernel, fed the key's block
            key, channels = self._detector_input(block), block.shape[0]
            ratio, wide = self._scratch[:channels], self._scratch[channels:]
            _dynamics(block, key, self._state, self._coef[:5], ratio, wide, self._use_rms, self._above)
        return block

    def _set_coefficients(self, attack_ms: float, release_ms: float, threshold_db: float, exponent: float) -> None:
        coef = self._coef
        coef[0] = ballistics_coefficient(attack_ms, self._sr)
        coef[1] = ballistics_coefficient(release_ms, self._sr)
        coef[2] = self._rms_release = ballistics_coefficient(50.0, self._sr) if self._use_rms else 0.0
        coef[3] = _threshold_inverse(threshold_db)
        coef[4] = exponent


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
    _kernel = staticmethod(_compressor_kernel)

    def _update(self) -> None:
        exponent = float(np.float32(1.0) / np.float32(self.ratio) - np.float32(1.0))
        self._set_coefficients(self.attack_ms, self.release_ms, self.threshold_db, exponent)


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
    _kernel = staticmethod(_gate_kernel)

    def _update(self) -> None:
        exponent = float(np.float32(self.ratio) - np.float32(1.0))
        self._set_coefficients(self.attack_ms, self.release_ms, self.threshold_db, exponent)


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

    _STATE_ROWS = 4  # stage 1 (envelope, unused RMS state), stage 2 (the same)
    _use_rms = False
    _above = True
    _kernel = staticmethod(_limiter_kernel)

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._ramp_steps = int(math.floor(0.001 * sample_rate))
        super()._prepare(sample_rate, num_channels)

    def _reset_state(self) -> None:
        super()._reset_state()
        self._gain_state[0] = self._gain_state[1]
        self._gain_state[2:] = 0.0

    def _update(self) -> None:
        sr = self._sr
        coef = self._coef
        # stage 1: -10 dB, 4:1, 2 ms / 200 ms; stage 2: threshold_db, 1000:1, 1 microsecond / release_ms
        coef[0:5] = (
            ballistics_coefficient(2.0, sr),
            ballistics_coefficient(200.0, sr),
            0.0,
            _threshold_inverse(-10),
            float(np.float32(1.0) / np.float32(4.0) - np.float32(1.0)),
        )
        coef[5:10] = (
            ballistics_coefficient(0.001, sr),
            ballistics_coefficient(self.release_ms, sr),
            0.0,
            _threshold_inverse(self.threshold_db),
            float(np.float32(1.0) / np.float32(1000.0) - np.float32(1.0)),
        )
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
