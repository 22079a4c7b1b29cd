"""Memoryless effects: Gain, Invert, Clipping, Distortion and Bitcrush (vectorised NumPy, in place)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..core.jit import Number, kernel
from ..core.params import Param
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

    Each subclass implements ``_map`` in one pass; ``_process`` is ``_map`` in place.
    """

    _abstract = True

    def _process(self, block: np.ndarray) -> np.ndarray:
        if block.flags.c_contiguous:
            self._map(block, block)
        else:  # the last, shorter block of a call is a view into the staging array: each row is contiguous
            for row in block:
                self._map(row[None], row[None])
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
        self._factor = np.float32(db_to_gain(self.gain_db))

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        np.multiply(src, self._factor, out=dst, dtype=np.float32, casting="same_kind")

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        # the gain of every sample in double precision; the product is rounded to float32 once
        np.multiply(block, np.power(10.0, curves["gain_db"] / 20.0), out=block, casting="unsafe")
        return block


class Invert(_Memoryless):
    """Flip the polarity of the signal (multiply every sample by -1)."""

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
        self._limit = np.float32(db_to_gain(self.threshold_db))

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        _clip(*_flat(src, dst), self._limit)


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
        self._factor = np.float32(db_to_gain(self.drive_db))

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        np.multiply(src, self._factor, out=dst, dtype=np.float32, casting="same_kind")
        np.tanh(dst, out=dst)


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
        self._scale = np.float32(2.0**self.bit_depth)

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        _crush(*_flat(src, dst), self._scale)
