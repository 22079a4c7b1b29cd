"""The shared base of plugins that run an aligned pipeline of streaming stages (Resample, the codecs, the
fixed-block test plugin). Kept free of Numba so that light modules can build on it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.plugin import Plugin, _all_finite


class PipelinePlugin(Plugin, block_invariant=True):
    """Base of plugins whose processing is an :class:`~stompbox.effects.resample.AlignedPipeline` that
    ``_update()`` builds into ``self._pipeline``: reset, latency and processing are the pipeline's.

    ``_sanitize_input = True`` replaces NaN and infinity before the pipeline (codecs must not be fed them). With
    :class:`~stompbox.core.plugin.PairedChannels`, the latency is that of the first pair's copy.
    """

    _abstract = True
    _sanitize_input: bool = False
    _pipeline: Any = None  # an AlignedPipeline (effects.resample)
    #: what the pipeline was built for (stream format and settings): ``_update`` rebuilds it when this changes
    _config: tuple[Any, ...] | None = None

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._sr = float(sample_rate)
        self._channels = num_channels

    def _reset_state(self) -> None:
        if self._pipeline is not None:
            self._pipeline.reset()

    @property
    def latency_samples(self) -> int:
        pairs = getattr(self, "_pairs", None)
        if pairs:
            return int(pairs[0].latency_samples)
        return self._pipeline.latency if self._pipeline is not None else 0

    def _process(self, block: np.ndarray) -> np.ndarray:
        assert self._pipeline is not None
        if self._sanitize_input and not _all_finite(block):  # checked in one compiled pass; copied only if needed
            block = np.nan_to_num(block, nan=0.0, posinf=1.0, neginf=-1.0)
        result: np.ndarray = self._pipeline.process(block)
        return result
