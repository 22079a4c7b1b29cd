"""Test-support plugins with the names pedalboard keeps in ``pedalboard_native._internal``.

They exercise the engine's latency compensation and block handling; they are not meant as effects.
"""

from __future__ import annotations

import numpy as np

from .core.params import Param
from .core.plugin import Plugin


class AddLatency(Plugin):
    """A pure delay of ``samples`` samples that reports it as latency, so ``process`` gives the input back.

    Parameters
    ----------
    samples : int
        Latency in samples (>= 0, default 44100).
    """

    samples = Param(44100, minimum=0, kind=int, unit="samples", doc="delay reported as latency")

    def __init__(self, samples: int = 44100) -> None:
        super().__init__(samples=samples)

    @property
    def latency_samples(self) -> int:
        return int(self.samples)

    def _reset_state(self) -> None:
        channels = self._format[1] if self._format else 1
        self._line = np.zeros((channels, self.samples), np.float32)

    def _process(self, block: np.ndarray) -> np.ndarray:
        if self._line.shape[1] != self.samples:  # latency changed mid-stream: start the line again
            self._reset_state()
        if not self.samples:
            return block
        joined = np.concatenate([self._line, block], axis=1)
        n = block.shape[1]
        self._line = joined[:, n:]
        return np.ascontiguousarray(joined[:, :n])
