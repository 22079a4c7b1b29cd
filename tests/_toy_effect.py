"""A new effect as a contributor would write one: one class and its kernel, nothing else.

It is defined here (imported by tests/_contract.py) to show that the contract tests cover a new effect without
any list being edited: its class statement records it in the registry, and the contract suites iterate the
registry. It is not part of stompbox.
"""

from __future__ import annotations

import numpy as np

from stompbox.core import Param, Plugin


def _tremolo(block: np.ndarray, start: int, sample_rate: float, rate_hz: float, depth: float) -> None:
    """The kernel: gain ``1 - depth * (1 + sin(2 pi rate t)) / 2`` at stream time ``t``, in place."""
    t = (start + np.arange(block.shape[1])) / sample_rate
    block *= (1.0 - depth * 0.5 * (1.0 + np.sin(2.0 * np.pi * rate_hz * t))).astype(np.float32)


class ToyTremolo(Plugin, block_invariant=True):
    """A tremolo: the gain follows a sine LFO whose phase counts from the start of the stream."""

    depth = Param(0.5, minimum=0.0, maximum=1.0, doc="how far the gain dips", automatable=True)
    rate_hz = Param(6.0, minimum=0.0, maximum=50.0, unit="Hz", doc="LFO rate")

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._rate = sample_rate

    def _reset_state(self) -> None:
        self._position = 0

    def _process(self, block: np.ndarray) -> np.ndarray:
        _tremolo(block, self._position, self._rate, self.rate_hz, self.depth)
        self._position += block.shape[1]
        return block
