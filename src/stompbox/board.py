"""Plugins made of plugins: :class:`Chain` (in series), :class:`Mix` (in parallel, summed) and
:class:`Pedalboard`, plus the functional :func:`process`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Self, overload

import numpy as np

from ._base import limits
from ._base.errors import ChainFormatError
from .core import plan as plans
from .core import serial
from .core.plan import PlanStep, owned
from .core.plugin import Plugin, tree_epoch


class PluginContainer(Plugin, stateful=False):  # children recover from non-finite input themselves
    """A plugin holding an ordered, mutable list of plugins (``None`` entries pass audio through)."""

    _abstract = True
    #: the tree epoch in which the children were last prepared (see :meth:`_ensure_format`)
    _children_epoch = -1

    @property
    def _block_invariant(self) -> bool:  # type: ignore[override]
        """A container is block-invariant when all its children are."""
        runner = self._runner
        if runner is not None and runner.compiled and runner.current():
            return True  # built-in effects only (what has plan steps is block-invariant)
        return all(child._block_invariant for child in self._children())

    def _known_latency(self) -> int | None:
        """The latency remembered by a current plan of built-in effects only (whose latency changes only with a
        parameter or the format, both of which make the plan stale), else ``None``."""
        runner = self._runner
        if runner is not None and runner.compiled and runner.current():
            return runner.latency
        return None

    def _remember_latency(self, latency: int) -> int:
        runner = self._runner
        if runner is not None and runner.compiled and runner.current():
            runner.latency = latency
        return latency

    def __init__(self, plugins: Iterable[Plugin | None] | None = None) -> None:
        super().__init__()
        self._plugins: list[Plugin | None] = []
        for plugin in plugins or []:
            self.append(plugin)

    # ------------------------------------------------------------------ list API
    def _check(self, plugin: Any) -> Plugin | None:
        if plugin is None:
            return None
        if not isinstance(plugin, Plugin):
            raise TypeError(
                f"{type(self).__name__} can only contain stompbox plugins (or None), not {type(plugin).__name__}."
            )
        limits.check_nesting(plugin._nesting() + 1)  # this container is one level more
        if any(p is self for p in plugin._iter_tree()):
            raise ValueError(f"A {type(self).__name__} cannot contain itself.")
        return plugin

    def append(self, plugin: Plugin | None) -> None:
        """Add ``plugin`` at the end."""
        self._plugins.append(self._check(plugin))
        self._structure_changed()

    def insert(self, index: int, plugin: Plugin | None) -> None:
        """Insert ``plugin`` before position ``index``."""
        self._plugins.insert(index, self._check(plugin))
        self._structure_changed()

    def remove(self, plugin: Plugin | None) -> None:
        """Remove the first occurrence of ``plugin`` (``ValueError`` if absent)."""
        for i, p in enumerate(self._plugins):
            if p is plugin:
                del self._plugins[i]
                self._structure_changed()
                return
        raise ValueError("remove(x): x not in list")

    # an entry reads as Any: a board holds plugins of many types (and None), and code sets the parameters of the
    # one it picks (``board[0].drive_db = 30``), as with pedalboard
    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> Self: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(self._plugins[index])
        return self._plugins[index]

    @overload
    def __setitem__(self, index: int, plugin: Plugin | None) -> None: ...
    @overload
    def __setitem__(self, index: slice, plugin: Iterable[Plugin | None]) -> None: ...
    def __setitem__(self, index: int | slice, plugin: Any) -> None:
        if isinstance(index, slice):
            self._plugins[index] = [self._check(p) for p in plugin]
        else:
            self._plugins[index] = self._check(plugin)
        self._structure_changed()

    def __delitem__(self, index: int | slice) -> None:
        del self._plugins[index]
        self._structure_changed()

    def __len__(self) -> int:
        return len(self._plugins)

    def __iter__(self) -> Iterator[Plugin | None]:
        return iter(list(self._plugins))

    def __contains__(self, plugin: object) -> bool:
        return any(p is plugin for p in self._plugins)

    def to_dict(self) -> dict[str, Any]:
        limits.check_nesting(self._nesting())  # (a tree nested top-down is only checked when it is used)
        return {"type": type(self).__name__, "plugins": [None if p is None else p.to_dict() for p in self._plugins]}

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> PluginContainer:
        children = data.get("plugins", [])
        if not isinstance(children, list):
            raise ChainFormatError(f"'plugins' of a {cls.__name__} must be a list.")
        return cls([serial.from_dict(d) for d in children])

    def _inner_repr(self) -> str:
        if self._nesting() > limits.MAX_NESTING:  # too deep to be used: do not recurse into it either
            return "..."
        return ", ".join(repr(p) for p in self._plugins)

    # ------------------------------------------------------------------ engine
    def _structure_changed(self) -> None:
        self._forget_format()  # children may be new: prepare again on the next call
        self._tree_changed()
        self._runner = None
        self._plan_changed()  # plans that hold this container's steps are rebuilt

    _runner: plans.ChainRunner | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_runner", None)  # compiled code: a copy builds its own
        return state

    def _plan_runner(self, n: int) -> plans.ChainRunner | None:
        """The compiled plan of this container's children for blocks of ``n`` frames, if plans are used here."""
        if not plans.ENABLED or n > plans.MAX_PLAN_FRAMES:
            return None
        runner = self._runner
        if runner is None:
            runner = self._runner = plans.ChainRunner()
        return runner

    def _children(self) -> list[Plugin]:
        return [p for p in self._plugins if p is not None]

    def _ensure_format(self, sample_rate: float, num_channels: int) -> bool:
        """Prepare children for the format. If any child had to be (re)prepared, the whole tree is reset so
        that it starts a stream together; otherwise the children's running state is kept (a new container
        around plugins that are mid-stream continues that stream)."""
        if self._format == (sample_rate, num_channels):
            if self._children_epoch == tree_epoch():
                return False
            # a container inside changed its plugins mid-stream: it prepares (and resets) itself; the rest of
            # the tree keeps running
            self._children_epoch = tree_epoch()
            self._prepare_children(sample_rate, num_channels)
            return False
        self._adopt_format(sample_rate, num_channels)
        self._children_epoch = tree_epoch()
        changed = self._prepare_children(sample_rate, num_channels)
        if any(changed):
            self._reset_all()
            return True
        self._reset_own()
        self._join_stream()
        return False

    def _prepare_children(self, sample_rate: float, num_channels: int) -> list[bool]:
        """Prepare every child for the format it will see (all the same here: parallel branches)."""
        return [child._ensure_format(sample_rate, num_channels) for child in self._children()]

    def _output_channels(self, num_channels: int) -> int:
        children = self._children()
        return children[0]._output_channels(num_channels) if children else num_channels

    def _reset_own(self) -> None:
        """Reset the container's own state (not its children's)."""

    def _reset_state(self) -> None:
        for child in self._children():
            child._reset_all()
        self._reset_own()

    @property
    def tail_seconds(self) -> float:
        tails = [c.tail_seconds for c in self._children()]
        return max(tails, default=0.0)

    def __repr__(self) -> str:
        n = len(self._plugins)
        inner = self._inner_repr()
        return f"<stompbox.{type(self).__name__} with {n} plugin{'' if n == 1 else 's'}: [{inner}] at {id(self):#x}>"


class Chain(PluginContainer):
    """Plugins run in series: the output of each is the input of the next.

    Parameters
    ----------
    plugins : list of Plugin, optional
        The plugins, in processing order. ``None`` entries pass audio through unchanged.
    """

    def _process(self, block: np.ndarray) -> np.ndarray:
        runner = self._runner
        if runner is not None and runner.current(block.shape[1]) and plans.ENABLED:
            return runner.run(block)  # runs of children with plan steps, one compiled call each
        children = self._children()
        runner = self._plan_runner(block.shape[1]) if children else None
        if runner is not None:
            return runner.process(block, children)
        for child in children:
            block = child._step(block)
        return block

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        steps: list[PlanStep] = []
        for child in self._children():
            child_steps = child._plan_steps(max_frames)
            if child_steps is None:
                return None
            steps += owned(child_steps, child)
        return steps

    def _prepare_children(self, sample_rate: float, num_channels: int) -> list[bool]:
        # in series: each child sees the channel count of the one before it (routing plugins change it)
        changed = []
        for child in self._children():
            changed.append(child._ensure_format(sample_rate, num_channels))
            num_channels = child._output_channels(num_channels)
        return changed

    def _output_channels(self, num_channels: int) -> int:
        for child in self._children():
            num_channels = child._output_channels(num_channels)
        return num_channels

    @property
    def latency_samples(self) -> int:
        known = self._known_latency()
        if known is not None:
            return known
        return self._remember_latency(sum(c.latency_samples for c in self._children()))

    @property
    def tail_seconds(self) -> float:
        return sum(c.tail_seconds for c in self._children())


class Mix(PluginContainer):
    """Plugins run in parallel on copies of the input; their outputs are summed (not averaged).

    Branch latencies are aligned to the slowest branch. A ``None`` branch is the dry input (``Mix([None,
    Reverb()])`` adds the reverb's output to the input). An empty Mix outputs silence.

    Parameters
    ----------
    plugins : list of Plugin or None, optional
        The parallel branches (use a :class:`Chain` for a branch of several plugins).
    """

    def _reset_own(self) -> None:
        latest = self.latency_samples
        channels = self._format[1] if self._format else 1
        self._pads = [
            np.zeros((channels, latest), np.float32)
            if c is None
            else np.zeros((c._output_channels(channels), latest - c.latency_samples), np.float32)
            for c in self._plugins
        ]

    _mix_arrays: tuple[np.ndarray, ...] | None = None

    def _combine(self, per_child: list[list[PlanStep] | None], max_frames: int) -> list[PlanStep] | None:
        """The steps of the whole Mix from its children's (owned), or ``None`` if it must run in Python (a child
        without steps, or latency to align)."""
        if any(steps is None for steps in per_child) or any(pad.shape[1] for pad in self._pads):
            return None
        from .core import _plan_kernels as kernels

        if not self._plugins:
            return [PlanStep(kernels.mix_silence, ())]
        assert self._format is not None
        shape = (self._format[1], max_frames)
        arrays = self._mix_arrays
        if arrays is None or arrays[0].shape[0] != shape[0] or arrays[0].shape[1] < max_frames:
            arrays = self._mix_arrays = (
                np.zeros(shape, np.float32),
                np.zeros(shape, np.float32),
                np.ones(1, np.uint8),
                np.zeros(1, np.uint8),
            )
            self._plan_changed()
        saved, total, first, later = arrays
        steps = [PlanStep(kernels.mix_save, (saved,))]
        found = iter(per_child)
        for i, child in enumerate(self._plugins):
            if i:
                steps.append(PlanStep(kernels.mix_restore, (saved,)))
            if child is not None:
                child_steps = next(found)
                assert child_steps is not None  # (a Mix combines its children's steps when every child has some)
                steps += child_steps
            steps.append(PlanStep(kernels.mix_add, (total, first if i == 0 else later)))
        steps.append(PlanStep(kernels.mix_take, (total,)))
        return steps

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        per_child: list[list[PlanStep] | None] = []
        for child in self._children():
            steps = child._plan_steps(max_frames)
            per_child.append(None if steps is None else owned(steps, child))
        return self._combine(per_child, max_frames)

    def _process(self, block: np.ndarray) -> np.ndarray:
        children = self._children()
        runner = self._plan_runner(block.shape[1])
        if runner is not None:
            if not runner.current(block.shape[1]):
                runner.build(children, block.shape[1], combine=self._combine, container=self)
            if not runner.python:
                if not block.flags.c_contiguous:
                    block = np.ascontiguousarray(block)
                runner.program[0].run(block)  # type: ignore[union-attr]
                return block
        total: np.ndarray | None = None
        for i, child in enumerate(self._plugins):  # a None branch is the input itself
            out = block.copy() if child is None else child._step(block.copy())
            pad = self._pads[i]
            if pad.shape[1]:
                joined = np.concatenate([pad, out], axis=1)
                out, self._pads[i] = joined[:, : block.shape[1]], joined[:, block.shape[1] :]
            if total is None:
                total = np.array(out, np.float32)
            else:
                total += out
        return np.zeros_like(block) if total is None else total

    @property
    def latency_samples(self) -> int:
        known = self._known_latency()
        if known is not None:
            return known
        return self._remember_latency(max((c.latency_samples for c in self._children()), default=0))


class Pedalboard(Chain):
    """A mutable list of plugins run in series: the object most stompbox programs build.

    Supports indexing, slicing, ``append``, ``insert``, ``remove``, ``len``, iteration and nesting (a Pedalboard
    is itself a Plugin). Instruments cannot be added.

    Parameters
    ----------
    plugins : list of Plugin, optional
        The plugins, in processing order.
    """

    def _check(self, plugin: Any) -> Plugin | None:
        checked = super()._check(plugin)
        if checked is not None and checked.is_instrument:
            raise ValueError(
                f"Pedalboard objects may only contain audio effects, not instruments ({checked!r}). "
                "Render the instrument first, then process its output."
            )
        return checked

    def __repr__(self) -> str:
        n = len(self._plugins)
        inner = self._inner_repr()
        return f"<Pedalboard with {n} plugin{'' if n == 1 else 's'}: [{inner}]>"


def process(
    input_array: np.ndarray,
    sample_rate: float,
    plugins: Iterable[Plugin | None] | Plugin,
    buffer_size: int = 8192,
    reset: bool = True,
) -> np.ndarray:
    """Run ``input_array`` through ``plugins`` in series and return float32 audio (see ``Plugin.process``)."""
    if isinstance(plugins, Plugin):
        plugins = [plugins]
    return Chain(list(plugins)).process(input_array, sample_rate, buffer_size, reset)
