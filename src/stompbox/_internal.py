"""Test-support plugins with the names pedalboard keeps in ``pedalboard_native._internal``.

They exercise the engine's latency compensation and block handling; they are not meant as effects.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.params import Param
from .core.plugin import Plugin
from .effects.pipeline_plugin import PipelinePlugin


class AddLatency(Plugin):
    """A pure delay of ``samples`` samples that reports it as latency, so ``process`` gives the input back."""

    samples = Param(44100, minimum=0, kind=int, unit="samples", doc="delay reported as latency")

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


class FixedSizeBlockTestPlugin(PipelinePlugin):
    """An identity whose inner processing only ever sees blocks of exactly ``expected_block_size`` samples.

    Input is collected into fixed blocks (:class:`stompbox.effects.resample.FixedBlockAdapter`), which costs
    ``expected_block_size - 1`` samples of latency; ``process`` compensates it, so the output equals the input
    for any ``buffer_size``.
    """

    expected_block_size = Param(160, minimum=1, kind=int, unit="samples", doc="inner block size")

    def __init__(self, expected_block_size: int = 160) -> None:
        super().__init__(expected_block_size=expected_block_size)
        self.blocks_seen: set[int] = set()

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._channels = num_channels

    def _inner(self, block: np.ndarray) -> np.ndarray:
        if block.shape[1] != self.expected_block_size:  # the contract this plugin exists to check
            raise RuntimeError(f"expected a block of {self.expected_block_size} samples, got {block.shape[1]}")
        self.blocks_seen.add(block.shape[1])
        return block

    def _update(self) -> None:
        from .effects.resample import AlignedPipeline, FixedBlockAdapter

        stage = FixedBlockAdapter(self.expected_block_size, self._channels, self._inner)
        self._pipeline = AlignedPipeline([stage], self._channels)


class ForceMonoTestPlugin(Plugin, stateful=False):
    """Replace every channel by the mean of all channels (mono input is unchanged)."""

    def _process(self, block: np.ndarray) -> np.ndarray:
        if block.shape[0] > 1:
            block[...] = block.mean(axis=0, keepdims=True, dtype=np.float32)
        return block


class PrimeWithSilenceTestPlugin(AddLatency):
    """Primes its (identity) inner processing with ``expected_silent_samples`` of silence after each reset.

    The silence comes out first, so the output is the input delayed by that many samples, reported as latency
    and compensated by ``process``: the output equals the input.

    Parameters
    ----------
    expected_silent_samples : int
        Samples of silence pushed through first (>= 0, default 160).
    """

    samples = Param(160, minimum=0, kind=int, unit="samples", doc="samples of silence primed after a reset")

    def __init__(self, expected_silent_samples: int = 160) -> None:
        Plugin.__init__(self, samples=expected_silent_samples)

    @property
    def expected_silent_samples(self) -> int:
        """Samples of silence primed after a reset."""
        return int(self.samples)

    @expected_silent_samples.setter
    def expected_silent_samples(self, value: int) -> None:
        self.samples = value


def _resample_with_latency() -> type:
    from .effects.resample import Resample
    from .io.quality import Quality

    class ResampleWithLatency(Resample):
        """:class:`stompbox.Resample` plus ``internal_latency`` samples of extra (reported, compensated) delay.

        Parameters
        ----------
        target_sample_rate : float
            As for ``Resample`` (default 8000 Hz).
        quality : Resample.Quality
            As for ``Resample`` (default ``WindowedSinc32``).
        """

        internal_latency = Param(1024, minimum=0, kind=int, unit="samples", doc="extra delay")

        def __init__(
            self,
            target_sample_rate: float = 8000.0,
            internal_latency: int = 1024,
            quality: Quality = Quality.WindowedSinc32,
        ) -> None:
            Plugin.__init__(
                self, target_sample_rate=target_sample_rate, internal_latency=internal_latency, quality=quality
            )
            self._pipeline = None
            self._config = None

        @property
        def _extra_latency(self) -> int:  # type: ignore[override]
            return int(self.internal_latency)

    ResampleWithLatency.__module__ = __name__
    return ResampleWithLatency


def __getattr__(name: str) -> Any:
    if name == "ResampleWithLatency":  # built on first use, so importing this module stays light
        cls = _resample_with_latency()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
