"""Memoryless effects: Gain, Invert, Clipping, Distortion and Bitcrush (one pass over the samples, in place)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..core.jit import Number, kernel
from ..core.params import Param
from ..core.plan import PlanStep, run_steps
from ..core.plugin import Plugin


@kernel
def _clip(src: np.ndarray, dst: np.ndarray, limit: Number) -> None:  # pragma: no cover - compiled
    for i in range(src.shape[0]):
        v: Number = np.float32(src[i])
        if v > limit:
            v = limit
        elif v < -limit:
            v = -limit
        dst[i] = v  # NaN passes through, as with np.clip


@kernel
def _crush(src: np.ndarray, dst: np.ndarray, scale: Number) -> None:  # pragma: no cover - compiled
    for i in range(src.shape[0]):
        dst[i] = np.round(np.float32(src[i]) * scale) / scale


@kernel
def _scale(src: np.ndarray, dst: np.ndarray, factor: Number) -> None:  # pragma: no cover - compiled
    for i in range(src.shape[0]):
        dst[i] = np.float32(src[i]) * factor


#: the Taylor coefficients ``1 / k!`` of ``exp(z) - 1`` (k = 1..8), for :func:`_drive_block`
_E1 = 1.0
_E2 = 0.5
_E3 = 0.16666666666666666
_E4 = 0.041666666666666664
_E5 = 0.008333333333333333
_E6 = 0.001388888888888889
_E7 = 0.0001984126984126984
_E8 = 2.48015873015873e-05


# The block kernels (the plan steps) work in place, each sample read and written at the same index, which the
# compiler vectorises (a loop from one array into another that may overlap it is not).
@kernel
def _gain_block(block: np.ndarray, factor: np.ndarray) -> None:  # pragma: no cover - compiled
    f = factor[0]
    for c in range(block.shape[0]):
        row = block[c]
        for i in range(row.shape[0]):
            row[i] = row[i] * f


@kernel
def _invert_block(block: np.ndarray) -> None:  # pragma: no cover - compiled
    for c in range(block.shape[0]):
        row = block[c]
        for i in range(row.shape[0]):
            row[i] = -row[i]


@kernel
def _clip_block(block: np.ndarray, limit: np.ndarray) -> None:  # pragma: no cover - compiled
    hi = limit[0]
    for c in range(block.shape[0]):
        row = block[c]
        for i in range(row.shape[0]):
            v = row[i]
            if v > hi:
                v = hi
            elif v < -hi:
                v = -hi
            row[i] = v


@kernel
def _drive_block(block: np.ndarray, factor: np.ndarray) -> None:  # pragma: no cover - compiled
    """``block = tanh(block * factor[0])`` in place, each sample correctly rounded to float32 (checked against
    float64 tanh on a dense grid), in a form that vectorises: ``tanh(x) = u / (u + 2)`` with ``u = exp(2|x|) - 1``,
    computed in double precision as ``exp(z) - 1`` by its Taylor series (8 terms) at ``z = 2|x| / 128`` and squared
    up seven times (``(1 + u)^2 - 1 = u (2 + u)``, which keeps small values exact). Above ``|x| = 9.1`` tanh
    rounds to 1."""
    f = factor[0]
    for c in range(block.shape[0]):
        row = block[c]
        for i in range(row.shape[0]):
            x = np.float64(row[i] * f)
            z = min(abs(x), 9.1) * 0.015625
            p = _E8
            p = _E7 + z * p
            p = _E6 + z * p
            p = _E5 + z * p
            p = _E4 + z * p
            p = _E3 + z * p
            p = _E2 + z * p
            u = z * (_E1 + z * p)
            u = u * (2.0 + u)
            u = u * (2.0 + u)
            u = u * (2.0 + u)
            u = u * (2.0 + u)
            u = u * (2.0 + u)
            u = u * (2.0 + u)
            u = u * (2.0 + u)
            t = np.divide(u, u + 2.0)  # (a ufunc: no zero-division check, so the loop vectorises)
            t = -t if x < 0.0 else t
            t = x if (x != x or x == 0.0) else t  # NaN stays NaN, -0.0 stays -0.0
            row[i] = np.float32(t)


@kernel
def _crush_block(block: np.ndarray, scale: np.ndarray) -> None:  # pragma: no cover - compiled
    f = scale[0]
    for c in range(block.shape[0]):
        row = block[c]
        for i in range(row.shape[0]):
            row[i] = np.round(row[i] * f) / f


def _flat(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``src`` and ``dst`` as 1-D arrays in the same sample order (views when their memory layouts agree; else
    ``src`` is first copied into ``dst``, converted to float32), for kernels that run over raw memory."""
    order: Literal["C", "F"] = "F" if dst.flags.f_contiguous and not dst.flags.c_contiguous else "C"
    flat_dst = dst.reshape(-1, order=order)
    if not (src.flags.f_contiguous if order == "F" else src.flags.c_contiguous):
        np.copyto(dst, src, casting="same_kind")
        return flat_dst, flat_dst
    return src.reshape(-1, order=order), flat_dst


class _Memoryless(Plugin, block_invariant=True, stateful=False, pointwise=True):
    """What the memoryless effects share: no state, block-invariant, and pointwise (see ``Plugin._map``).

    Each subclass implements ``_map`` in one pass and names the block kernel of its compiled step, ``_kernel``,
    which runs the same per-sample code on a ``(channels, n)`` block in place with the coefficient ``_coef`` (a
    one-element float32 array that ``_update`` writes in place); ``_process`` is that step.
    """

    _abstract = True
    _kernel: Any = None

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._coef = np.ones(1, np.float32)

    def _steps(self) -> list[PlanStep]:
        return [PlanStep(self._kernel, (self._coef,))]

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        return None if self._automation else self._steps()

    def _process(self, block: np.ndarray) -> np.ndarray:
        if block.flags.c_contiguous:
            run_steps(block, self._steps())
        else:  # a strided view: each row is contiguous
            for row in block:
                run_steps(row[None], self._steps())
        return block


def db_to_gain(db: float) -> float:
    """Decibels to a linear amplitude factor: ``10 ** (db / 20)`` (``inf`` past float range, not an error)."""
    return float(10.0 ** (min(db, 7000.0) / 20.0)) if db < 7000.0 else float("inf")


class Gain(_Memoryless):
    """Multiply the signal by a fixed gain: output is exactly ``x * 10 ** (gain_db / 20)``.

    Automated (an array, an ``Envelope`` or an ``LFO``), sample ``i`` is multiplied by ``10 ** (gain_db[i] / 20)``.
    """

    gain_db = Param(1.0, unit="dB", doc="gain applied to the signal", per_sample=True)

    def _update(self) -> None:
        self._coef[0] = db_to_gain(self.gain_db)

    @property
    def _kernel(self) -> Any:
        return _gain_block

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        np.multiply(src, self._coef[0], out=dst, dtype=np.float32, casting="same_kind")

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        # the gain of every sample in double precision; the product is rounded to float32 once
        np.multiply(block, np.power(10.0, curves["gain_db"] / 20.0), out=block, casting="unsafe")
        return block


class Invert(_Memoryless):
    """Flip the polarity of the signal (multiply every sample by -1)."""

    def _steps(self) -> list[PlanStep]:
        return [PlanStep(_invert_block, ())]

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        np.negative(src, out=dst, dtype=np.float32, casting="same_kind")


class Clipping(_Memoryless):
    """Hard-clip the signal at a threshold: samples are limited to ``±10 ** (threshold_db / 20)``."""

    threshold_db = Param(-6.0, unit="dB", doc="level above which samples are clipped", per_sample=True)

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        limit = np.power(10.0, curves["threshold_db"] / 20.0).astype(np.float32)
        np.minimum(block, limit, out=block)
        np.maximum(block, -limit, out=block)
        return block

    def _update(self) -> None:
        self._coef[0] = db_to_gain(self.threshold_db)

    @property
    def _kernel(self) -> Any:
        return _clip_block

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        _clip(*_flat(src, dst), self._coef[0])


class Distortion(_Memoryless):
    """Drive the signal into a ``tanh`` waveshaper: ``tanh(x * 10 ** (drive_db / 20))``.

    ``gain_db=`` is accepted as an alias of ``drive_db``.
    """

    drive_db = Param(25.0, unit="dB", doc="gain applied before the tanh waveshaper", per_sample=True)

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        block *= np.power(10.0, curves["drive_db"] / 20.0).astype(np.float32)
        np.tanh(block, out=block)
        return block

    def __init__(self, drive_db: float | Any = 25.0, **kwargs: Any) -> None:
        if "gain_db" in kwargs:
            drive_db = kwargs.pop("gain_db")
        if kwargs:
            raise TypeError(f"Distortion() got an unexpected keyword argument {next(iter(kwargs))!r}")
        super().__init__(drive_db=drive_db)

    @property
    def gain_db(self) -> float:
        """Alias of :attr:`drive_db`."""
        return float(self.drive_db)

    @gain_db.setter
    def gain_db(self, value: float) -> None:
        self.drive_db = value

    def _update(self) -> None:
        self._coef[0] = db_to_gain(self.drive_db)

    @property
    def _kernel(self) -> Any:
        return _drive_block

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        flat_src, flat_dst = _flat(src, dst)
        if flat_src is not flat_dst:  # (copying an array onto itself, when src is dst, is harmless)
            np.copyto(flat_dst, flat_src, casting="same_kind")
        _drive_block(flat_dst[None], self._coef)  # in place: the loop vectorises


class Bitcrush(_Memoryless):
    """Reduce the signal's resolution to ``bit_depth`` bits: ``round(x * 2**b) / 2**b``.

    Samples are not clamped: ``±1.5`` stays ``±1.5``. ``bit_depth=0`` gives silence; fractional depths are
    allowed.
    """

    bit_depth = Param(
        8.0,
        minimum=0.0,
        maximum=32.0,
        unit="bits",
        doc="resolution of the output",
        error="Bit depth must be between {minimum:g} and {maximum:g} bits.",
        per_sample=True,
    )

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        scale = np.power(2.0, curves["bit_depth"]).astype(np.float32)
        block *= scale
        np.round(block, out=block)
        block /= scale
        return block

    def _update(self) -> None:
        self._coef[0] = 2.0**self.bit_depth

    @property
    def _kernel(self) -> Any:
        return _crush_block

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        _crush(*_flat(src, dst), self._coef[0])
