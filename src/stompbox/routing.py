"""Channel routing: re-ordering, picking, duplicating, mixing and splitting channels.

- :class:`ChannelMap` re-orders, picks, duplicates or drops channels (``ChannelMap([1, 0])`` swaps a stereo
  pair; ``ChannelMap([0, 0])`` makes mono stereo; ``ChannelMap([2])`` keeps the third channel).
- :class:`ChannelMatrix` mixes channels with a gain matrix (``ChannelMatrix([[0.5, 0.5]])`` is a mono
  downmix; it is also how channels are merged).
- :class:`Split` runs a different plugin on each group of channels and joins the results (a reverb on channels
  0-1, a delay on 2-3, ...), aligning the groups' latencies.

They are plugins like any other, so they go in a :class:`~stompbox.Pedalboard`; a board's later plugins see the
new channel count. The output of ``process`` has the channel count the routing produces (mono input that
becomes stereo is returned channels-first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .board import PluginContainer
from .core import serial
from .core.plugin import Plugin

__all__ = ["ChannelMap", "ChannelMatrix", "Split"]


def _index_list(values: Any, what: str, allow_none: bool) -> list[Any]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"{what} must be a sequence of channel indices (got {type(values).__name__}).")
    out: list[Any] = []
    for v in values:
        if v is None and allow_none:
            out.append(None)
        elif isinstance(v, int | np.integer) and not isinstance(v, bool) and v >= 0:
            out.append(int(v))
        else:
            raise ValueError(f"{what} must hold channel indices >= 0{' or None' if allow_none else ''} (got {v!r}).")
    if not out:
        raise ValueError(f"{what} must name at least one channel.")
    return out


class ChannelMap(Plugin, block_invariant=True, stateful=False):
    """Re-order, pick, duplicate or drop channels: output channel ``i`` is input channel ``mapping[i]``.

    Parameters
    ----------
    mapping : sequence of int or None
        For each output channel, the input channel it copies (0-based), or ``None`` for a silent channel.
        The output has ``len(mapping)`` channels. Indices must exist in the input (``ValueError`` otherwise).
    """

    def __init__(self, mapping: Sequence[int | None]) -> None:
        super().__init__()
        self._mapping = _index_list(mapping, "ChannelMap mapping", allow_none=True)

    @property
    def mapping(self) -> list[int | None]:
        """The input channel of each output channel (``None``: silence)."""
        return list(self._mapping)

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        used = [m for m in self._mapping if m is not None]
        if used and max(used) >= num_channels:
            raise ValueError(
                f"ChannelMap {self._mapping} uses channel {max(used)}, but the audio has {num_channels} channel"
                f"{'' if num_channels == 1 else 's'}."
            )

    def _output_channels(self, num_channels: int) -> int:
        return len(self._mapping)

    def _process(self, block: np.ndarray) -> np.ndarray:
        out = np.zeros((len(self._mapping), block.shape[1]), np.float32)
        for i, source in enumerate(self._mapping):
            if source is not None:
                out[i] = block[source]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ChannelMap", "params": {"mapping": self.mapping}}

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> ChannelMap:
        return cls(data.get("params", {}).get("mapping", []))

    def _repr_params(self) -> str:
        return f" mapping={self._mapping}"


class ChannelMatrix(Plugin, block_invariant=True, stateful=False):
    """Mix channels with a matrix of gains: ``out[i] = sum_j matrix[i][j] * in[j]``.

    Parameters
    ----------
    matrix : array_like
        ``(output_channels, input_channels)`` linear gains (finite). ``[[0.5, 0.5]]`` averages a stereo pair
        to mono; ``[[1, 0, 0.707], [0, 1, 0.707]]`` folds a centre channel into left and right.
    """

    def __init__(self, matrix: Any) -> None:
        super().__init__()
        m = np.asarray(matrix, dtype=np.float64)
        if m.ndim != 2 or m.size == 0 or not np.all(np.isfinite(m)):
            raise ValueError("ChannelMatrix needs a non-empty 2-D matrix of finite gains (outputs x inputs).")
        self._matrix = m

    @property
    def matrix(self) -> np.ndarray:
        """The gains, ``(output_channels, input_channels)`` (a copy)."""
        return self._matrix.copy()

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        if self._matrix.shape[1] != num_channels:
            raise ValueError(
                f"ChannelMatrix has {self._matrix.shape[1]} input columns, but the audio has {num_channels} "
                f"channel{'' if num_channels == 1 else 's'}."
            )
        self._m32 = self._matrix.astype(np.float32)

    def _output_channels(self, num_channels: int) -> int:
        return int(self._matrix.shape[0])

    def _process(self, block: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self._m32 @ block)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ChannelMatrix", "params": {"matrix": self._matrix.tolist()}}

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> ChannelMatrix:
        return cls(data.get("params", {}).get("matrix", []))

    def _repr_params(self) -> str:
        return f" matrix={self._matrix.tolist()}"


class Split(PluginContainer):
    """Run each plugin on its own group of channels; the outputs are joined, group after group.

    ``Split([Reverb(), Delay()], channels=[[0, 1], [2, 3]])`` reverberates channels 0-1 and delays 2-3: the
    output has the reverb's two channels then the delay's two. A ``None`` plugin passes its group through. A
    group may name any input channels, in any order, repeated or not. Latencies of the branches are aligned to
    the slowest one.

    Parameters
    ----------
    plugins : list of Plugin or None
        One plugin (use a :class:`~stompbox.Chain` for several) per group.
    channels : list of list of int
        The input channels of each group (``len(channels) == len(plugins)``). By default consecutive pairs:
        group ``k`` is channels ``2k, 2k + 1``.
    """

    def __init__(
        self, plugins: Sequence[Plugin | None] | None = None, channels: Sequence[Sequence[int]] | None = None
    ) -> None:
        plugins = list(plugins or [])
        if channels is None:
            channels = [[2 * k, 2 * k + 1] for k in range(len(plugins))]
        groups = [_index_list(g, "Split channels group", allow_none=False) for g in channels]
        if len(groups) != len(plugins):
            raise ValueError(
                f"Split needs one channel group per plugin ({len(plugins)} plugins, {len(groups)} groups)."
            )
        self._groups: list[list[int]] | None = None
        super().__init__(plugins)
        self._groups = groups

    @property
    def channels(self) -> list[list[int]]:
        """The input channels of each group."""
        return [list(g) for g in self._groups or []]

    def _structure_changed(self) -> None:
        super()._structure_changed()
        groups = getattr(self, "_groups", None)
        if groups is not None and len(groups) != len(self._plugins):
            raise ValueError("Split: add or remove plugins by building a new Split with matching channel groups.")

    def _children(self) -> list[Plugin]:
        return [p for p in self._plugins if p is not None]

    def _branches(self) -> list[tuple[Plugin | None, list[int]]]:
        assert self._groups is not None
        return list(zip(self._plugins, self._groups, strict=True))

    def _prepare_children(self, sample_rate: float, num_channels: int) -> list[bool]:
        for group in self._groups or []:
            if max(group) >= num_channels:
                raise ValueError(f"Split group {group} names channel {max(group)}, but the audio has {num_channels}.")
        return [p._ensure_format(sample_rate, len(g)) for p, g in self._branches() if p is not None]

    def _output_channels(self, num_channels: int) -> int:
        return sum(len(g) if p is None else p._output_channels(len(g)) for p, g in self._branches())

    @property
    def latency_samples(self) -> int:
        return max((c.latency_samples for c in self._children()), default=0)

    def _reset_own(self) -> None:
        latest = self.latency_samples
        self._pads = []
        for plugin, group in self._branches():
            width = len(group) if plugin is None else plugin._output_channels(len(group))
            delay = latest - (0 if plugin is None else plugin.latency_samples)
            self._pads.append(np.zeros((width, delay), np.float32))

    def _process(self, block: np.ndarray) -> np.ndarray:
        n = block.shape[1]
        outs = []
        for k, (plugin, group) in enumerate(self._branches()):
            part = np.ascontiguousarray(block[group])
            out = part if plugin is None else plugin._step(part)
            pad = self._pads[k]
            if pad.shape[1]:
                joined = np.concatenate([pad, out], axis=1)
                out, self._pads[k] = joined[:, :n], joined[:, n:]
            outs.append(out)
        return np.ascontiguousarray(np.concatenate(outs, axis=0), dtype=np.float32)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "Split",
            "plugins": [None if p is None else p.to_dict() for p in self._plugins],
            "channels": self.channels,
        }

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> Split:
        return cls([serial.from_dict(d) for d in data.get("plugins", [])], channels=data.get("channels"))

    def __repr__(self) -> str:
        inner = ", ".join(f"{g}: {p!r}" for p, g in self._branches())
        return f"<stompbox.Split [{inner}] at {id(self):#x}>"
