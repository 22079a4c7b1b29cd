"""A stand-in for compiled plans in the live tests: a gain plugin whose plan is a tiny Numba ``cfunc``.

``PlanGain`` keeps its factor in a one-element float32 array that ``_update`` writes in place (as real plan
steps keep their coefficients). :func:`compile_standin` plays :func:`stompbox.core.plan.compile_plan` for boards
made only of PlanGains: its plan multiplies the block by every factor in turn, reports a non-finite output in bit
0 of its result, and keeps a log the tests read: ``periods[0]`` blocks run, ``periods[1]`` the value of
``periods[0]`` when the product now applied (``seen[0]``) was first applied.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import types

from stompbox.core._plan_kernels import address_as_pointer
from stompbox.core.params import Param
from stompbox.core.plugin import Plugin

_SIGNATURE = types.int64(types.CPointer(types.float32), types.int64, types.int64, types.CPointer(types.int64))


@numba.cfunc(_SIGNATURE, nogil=True, cache=False, error_model="numpy")
def _gain_plan(block_ptr, channels, n, table_ptr):  # pragma: no cover - compiled
    block = numba.carray(block_ptr, (channels, n))
    table = numba.carray(table_ptr, (4,))
    count = table[0]
    periods = numba.carray(address_as_pointer(table[1], np.int64), (2,))
    seen = numba.carray(address_as_pointer(table[2], np.float32), (1,))
    coefs = numba.carray(address_as_pointer(table[3], np.int64), (count,))
    factor = np.float32(1.0)
    for k in range(count):
        factor *= numba.carray(address_as_pointer(coefs[k], np.float32), (1,))[0]
    bad = 0
    for c in range(channels):
        for i in range(n):
            v = block[c, i] * factor
            block[c, i] = v
            if not np.isfinite(v):
                bad = 1
    periods[0] += 1
    if factor != seen[0]:
        seen[0] = factor
        periods[1] = periods[0]
    return bad


class PlanGain(Plugin):
    """Multiply by ``10 ** (gain_db / 20)``; its plan is :func:`_gain_plan`."""

    gain_db = Param(0.0, unit="dB", doc="gain")

    def __init__(self, **params: Any) -> None:
        self._coef = np.ones(1, np.float32)
        self.resets = 0
        super().__init__(**params)

    def _update(self) -> None:
        self._coef[0] = np.float32(10.0 ** (self.gain_db / 20.0))  # in place: a built plan sees it

    def _reset_state(self) -> None:
        self.resets += 1

    def _process(self, block: np.ndarray) -> np.ndarray:
        block *= self._coef[0]
        return block

    def _plan_steps(self, max_frames: int) -> list | None:
        return []  # "has steps" for the stream's bookkeeping; compile_standin builds the plan


class StandInPlan:
    """What the stream uses of a Plan: ``address``, ``table``, ``plugins`` and ``checked``."""

    def __init__(self, gains: list[PlanGain], plugins: list[Plugin]) -> None:
        self.plugins = plugins
        self.checked = gains[:1]
        self.periods = np.zeros(2, np.int64)
        self.seen = np.full(1, np.nan, np.float32)
        self.coefs = np.array([g._coef.ctypes.data for g in gains], np.int64)
        self.table = np.array(
            [len(gains), self.periods.ctypes.data, self.seen.ctypes.data, self.coefs.ctypes.data], np.int64
        )
        self.address = _gain_plan.address


def compile_standin(board: Plugin, max_frames: int) -> StandInPlan | None:
    """A plan for a board of PlanGains (None for anything else, as compile_plan says "cannot")."""
    plugins = list(board._iter_tree())
    leaves = [p for p in plugins if not p._children()]
    if not leaves or not all(isinstance(p, PlanGain) for p in leaves):
        return None
    return StandInPlan(leaves, plugins)
