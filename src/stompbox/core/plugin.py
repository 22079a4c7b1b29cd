"""The :class:`Plugin` base class: the one place where ``process()`` is implemented.

A plugin is a stateful stream processor. It learns the stream format (sample rate and channel count) once, then
turns float32 ``(channels, n)`` blocks into blocks of the same length. Everything else a caller sees (layout
detection, dtype rules, splitting into ``buffer_size`` blocks, reset, latency compensation, locking) lives here,
so a concrete effect writes only:

- ``_prepare(sample_rate, num_channels)``: allocate state for a stream format (called when it changes);
- ``_reset_state()``: clear tails, delay lines and envelopes, keeping parameters;
- ``_update()``: recompute coefficients after a parameter changed (called before the next block);
- ``_process(block)``: process one C-contiguous float32 ``(channels, n)`` block, in place or into a new array
  of the same shape, and return it. The block is a scratch buffer that the engine reuses: a plugin must not
  keep a reference to it after returning.

Latency model: a plugin with ``latency_samples = L`` returns blocks of the same length as its input, delayed by
``L`` samples. ``process(..., reset=True)`` pushes ``L`` samples of silence through and drops the first ``L``
output samples, so output sample ``i`` lines up with input sample ``i`` and the lengths are equal. With
``reset=False`` nothing is flushed: the first ``L`` samples of a stream are withheld, so early calls return
fewer samples than they were given (as pedalboard does).
"""

from __future__ import annotations

import enum
import os
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._base import limits
from . import plan as plans
from . import registry
from . import traits as traits_module
from .automation import Automation
from .errors import AbstractPluginError, DuplicatePluginError
from .layout import channels_first_view, check_buffer_size, check_sample_rate, restore_layout
from .params import Param, ParamSpec, document, is_generated_init, make_init
from .traits import Traits

if TYPE_CHECKING:
    from .plan import PlanStep

#: the hooks that say what a block does: a class overriding one without giving its own plan steps runs in Python
_PROCESSING_HOOKS = ("_process", "_step", "_map")

DUPLICATE_ERROR = (
    "The same plugin instance is being used multiple times in the same chain of plugins, which would cause "
    "undefined results. Please ensure that no duplicate plugins are present before calling."
)


#: Smallest block, in samples summed over channels (65536 frames of stereo, 512 KiB of float32), in which a
#: block-invariant plugin is run (see ``Plugin._block_invariant``).
_MIN_STEP_SAMPLES = 131072


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

#: Bumped whenever any container's list of plugins changes: a plugin's cached tree (see
#: ``Plugin._locked_tree``) is valid while the epoch it was made in is current.
_tree_epoch = 0

_finite_check: Any = None


def tree_epoch() -> int:
    """The current tree epoch: it changes whenever a container anywhere changes its plugins."""
    return _tree_epoch


def _all_finite(block: np.ndarray) -> bool:
    """Whether a block is free of NaN and infinity (compiled for float32 blocks; loaded on first use, not at the
    top, so that importing stompbox does not import Numba)."""
    global _finite_check
    if block.dtype is _F32 and block.ndim == 2:
        if _finite_check is None:
            from .finite import all_finite

            _finite_check = all_finite
        return bool(_finite_check(block))
    return bool(np.isfinite(block).all())


def _channels_last(audio: np.ndarray) -> bool:
    """Whether a channels-first view is the transpose of a C-contiguous ``(samples, channels)`` array."""
    return audio.shape[0] > 1 and audio.strides[0] == audio.itemsize and not audio.flags.c_contiguous


class Plugin:
    """Base class of every stompbox plugin: a stateful processor of ``(channels, samples)`` float32 audio.

    Do not instantiate it directly; use its subclasses (``Gain``, ``Reverb``, ``Pedalboard``, ...).
    """

    _params: ClassVar[dict[str, Param[Any]]] = {}
    _abstract: ClassVar[bool] = True
    #: the engine traits, declared as class keywords and checked at the class statement (see core/traits.py);
    #: each is also set as the private class attribute the engine reads (``_stateful``, ``_block_invariant``,
    #: ``_whole_call``, ``_chunks_itself``, ``_pointwise``, ``_automation_chunk``)
    engine_traits: ClassVar[Traits] = Traits()
    #: False for memoryless plugins, which need no recovery from non-finite input
    _stateful: ClassVar[bool] = True
    #: names of the parameters that accept automation (from each Param's ``automatable``)
    _automatable: ClassVar[frozenset[str]] = frozenset()
    #: True when the output does not depend on how the audio is cut into blocks (every built-in effect: the
    #: test suite holds them to it). Such plugins are run in blocks of at least ``_MIN_STEP_SAMPLES`` samples
    #: (all channels together) whatever ``buffer_size`` asks: fewer Python round trips per second of audio, so
    #: the GIL is held less and threads scale. Hosted and test plugins see exactly ``buffer_size``.
    _block_invariant: ClassVar[bool] = False
    #: True for block-invariant plugins that keep no block-sized working memory: a call is then run as one
    #: block, in place in the output array (one pass to copy the input in, one through the kernel, a single
    #: GIL release), which streams memory best and lets threads scale. Plugins with block-sized scratch
    #: arrays (an envelope per sample) stay at ``_MIN_STEP_SAMPLES``, where the scratch fits in cache, and so
    #: does any plugin while it is automated (its per-sample curves are block-sized).
    _whole_call: ClassVar[bool] = False
    #: True for plugins that cut what they are given into blocks of ``_chunk`` samples themselves (hosted
    #: plugins whose block loop runs in compiled code): their own ``process`` hands them the whole call as one
    #: block (the output array, in place: one copy of the input) and sets ``_chunk`` to the caller's
    #: ``buffer_size`` for the call, so the plugin still sees exactly that block size. ``_chunk`` is 0 outside
    #: such a call (inside a board, which hands over blocks of its buffer size).
    _chunks_itself: ClassVar[bool] = False
    _chunk: int = 0
    #: automatable parameters applied per sample by :meth:`_process_automated` (each Param's ``per_sample``);
    #: the others are applied per sub-block of ``_automation_chunk`` samples (their value at the sub-block's
    #: first sample, through ``_update``), with sub-blocks aligned to the stream clock so the output does not
    #: depend on block sizes
    _native_automation: ClassVar[frozenset[str]] = frozenset()
    _automation_chunk: ClassVar[int] = 32
    #: True for memoryless plugins whose output sample depends on the input sample alone and that implement
    #: :meth:`_map`: a call without automation then runs as one pass from the caller's array into the output
    #: (no staging blocks, one GIL release), which is what lets memory-bound effects scale across threads
    _pointwise: ClassVar[bool] = False
    #: the compiled plan of the plugin alone, for calls of one block (see :meth:`_solo_step`)
    _solo_runner: plans.ChainRunner | None = None
    #: the checked plugin tree and the tree epoch it was made in (see :meth:`_locked_tree`)
    _tree_cache: tuple[int, list[Plugin]] | None = None
    #: what the last call's checks established, for the next call of the same stream to skip them: the sample
    #: rate (as given and as a float) and the layout and channel count of the input (see :meth:`_accept`)
    _accepted: tuple[Any, float, str | None, int] | None = None

    def __init_subclass__(cls, **traits: Any) -> None:
        super().__init_subclass__()
        declared = traits_module.declare(cls, traits_module.inherited(cls), traits)
        cls.engine_traits = declared
        for trait, attribute in traits_module.ATTRIBUTES.items():
            if attribute in vars(cls):
                continue  # a container's block invariance is a property computed from its children
            if trait == "block_invariant" and trait not in traits and isinstance(getattr(cls, attribute), property):
                continue  # inherited from such a container
            setattr(cls, attribute, getattr(declared, trait))
        params: dict[str, Param[Any]] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Param):
                    params[name] = value
        cls._params = params
        cls._abstract = bool(vars(cls).get("_abstract", False))
        for legacy in ("_automatable", "_native_automation"):
            if legacy in vars(cls):
                raise TypeError(
                    f"{cls.__name__} sets {legacy}; declare automation on the parameter instead: "
                    "Param(..., automatable=True) or Param(..., per_sample=True)."
                )
        cls._automatable = frozenset(name for name, param in params.items() if param.automatable)
        cls._native_automation = frozenset(name for name, param in params.items() if param.per_sample)
        if "__init__" not in vars(cls):
            inherited = cls.__init__
            if inherited is Plugin.__init__ or is_generated_init(inherited):
                cls.__init__ = make_init(cls, params, Plugin.__init__)  # type: ignore[method-assign]
        if "__doc__" in vars(cls) and cls.__doc__:
            cls.__doc__ = document(cls.__doc__, params)
        if not cls._abstract:
            if cls._pointwise and cls._map is Plugin._map:
                raise TypeError(f"{cls.__name__} is declared pointwise but does not implement _map.")
            if cls._native_automation and cls._process_automated is Plugin._process_automated:
                raise TypeError(
                    f"{cls.__name__} declares per-sample automation of {', '.join(sorted(cls._native_automation))} "
                    "but does not implement _process_automated."
                )
        if (
            "_plan_steps" not in vars(cls)
            and any(hook in vars(cls) for hook in _PROCESSING_HOOKS)
            and any(not base._abstract for base in cls.__mro__[1:] if issubclass(base, Plugin))
        ):
            # a subclass of a working plugin that changes what a block does (a user's Gain overriding _process)
            # must run that code: the plan steps it inherits would compile its parent's kernels instead, so it
            # runs in Python
            cls._plan_steps = Plugin._plan_steps  # type: ignore[method-assign]
        registry.record(cls)

    def __init__(self, *args: Any, **params: Any) -> None:
        # A concrete class gets a constructor generated from its declared parameters (see core/params.make_init:
        # inspect.signature shows them, positional order included), which hands every value over by keyword;
        # ``*args`` is here so that type checkers, which cannot see generated constructors, accept positional
        # arguments too.
        if type(self)._abstract:
            raise AbstractPluginError(
                f"{type(self).__name__} is an abstract base class - don't instantiate this directly, use its "
                "subclasses instead."
            )
        if args:
            raise TypeError(f"{type(self).__name__}() takes its parameters by keyword (got {len(args)} positional)")
        self._automation: dict[str, Automation] = {}
        self._curves: dict[str, np.ndarray] | None = None
        self._clock = 0
        self._values: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._format: tuple[float, int] | None = None
        self._layout_hint: tuple[str, int] | None = None
        self._withheld = 0
        self._latency_seen = 0
        self._dirty = True
        for name, param in self._params.items():
            self._values[name] = param.coerce(param.default)
        for name, value in params.items():
            if name not in self._params:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {name!r}")
            setattr(self, name, value)

    # ------------------------------------------------------------------ hooks for subclasses
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        """Allocate state for a new stream format. State is reset right after."""

    def _reset_state(self) -> None:
        """Clear all audio state (tails, delay lines, envelopes, LFO phase); keep parameters."""

    def _update(self) -> None:
        """Recompute derived values (coefficients) from parameters and the stream format."""

    def _process(self, block: np.ndarray) -> np.ndarray:
        """Process one C-contiguous float32 ``(channels, n)`` block; return ``(channels, n)`` float32."""
        raise NotImplementedError

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        """Like :meth:`_process`, with per-sample values (float64 arrays of the block's length) for the
        automated parameters named in ``_native_automation``; the other parameters are static."""
        raise NotImplementedError

    def _map(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Pointwise plugins: write the processed ``src`` into ``dst`` (both ``(channels, n)``, same shape).

        ``src`` is float32 or float64 in any memory layout; ``dst`` is float32 and C- or Fortran-contiguous; they
        may be the same array. The result must equal converting ``src`` to float32 and processing it with
        :meth:`_process`.
        """
        raise NotImplementedError

    def _output_channels(self, num_channels: int) -> int:
        """How many channels the output has for ``num_channels`` in (routing plugins change it)."""
        return num_channels

    def _param_changed(self, name: str) -> None:
        self._request_update()

    # ------------------------------------------------------------------ hooks into the engine's state
    # (subclasses and containers change the engine's bookkeeping through these, never by writing it)
    def _forget_format(self) -> None:
        """Prepare again on the next call (the plugin's structure or its native instance changed)."""
        self._format = None

    def _tree_changed(self) -> None:
        """The plugins inside this one changed (containers call it): every cached plugin tree is rebuilt."""
        global _tree_epoch
        _tree_epoch += 1

    def _adopt_format(self, sample_rate: float, num_channels: int) -> None:
        """Record the stream format without preparing (for plugins that prepare what they hold themselves)."""
        self._format = (sample_rate, num_channels)

    #: called with the plugin when it asks for an update (a live stream running it in a compiled plan applies
    #: the change at once, from the caller's thread); None for plugins nobody watches
    _update_listener: Any = None

    def _request_update(self) -> None:
        """Have ``_update`` recompute derived values before the next block."""
        self._dirty = True
        plans.move_epoch()  # compiled plans over this plugin bring it up to date before their next block
        listener = self._update_listener
        if listener is not None:
            listener(self)

    def _update_now(self) -> None:
        """Recompute derived values now rather than before the next block."""
        self._update()
        self._dirty = False

    def _join_stream(self) -> None:
        """Carry on a stream that is already running (a container around plugins mid-stream): nothing is
        withheld, and the current latency counts as already seen."""
        self._withheld = 0
        self._latency_seen = self.latency_samples

    def _latency_free(self) -> bool:
        """No latency now, and none withheld or pending: output sample ``i`` is input sample ``i``'s."""
        return self._withheld == 0 and self.latency_samples == self._latency_seen == 0

    def _children(self) -> list[Plugin]:
        """Plugins inside this one (containers override)."""
        return []

    # ------------------------------------------------------------------ compiled plans (see core/plan.py)
    #: bumped by :meth:`_plan_changed`; owners of plans rebuild their table when a plugin's generation moved
    _plan_generation: int = 0
    # (the plan epoch, which moves with every plugin's generation and every parameter change, is core/plan.py's)

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        """The compiled steps of this plugin's ``_process`` for blocks of at most ``max_frames`` frames (see
        :mod:`stompbox.core.plan`), or ``None`` when it cannot run in a compiled plan now (the default)."""
        return None

    def _plan_changed(self) -> None:
        """Say that an array a plan step refers to was replaced (plans over this plugin rebuild their table)."""
        self._plan_generation += 1
        plans.move_epoch()

    # ------------------------------------------------------------------ public properties
    @property
    def is_effect(self) -> bool:
        """True: this plugin takes audio in and gives audio out."""
        return True

    @property
    def is_instrument(self) -> bool:
        """True if this plugin makes audio from MIDI rather than processing audio."""
        return False

    @property
    def latency_samples(self) -> int:
        """How many samples this plugin delays its output by at the current sample rate (compensated by
        ``process``)."""
        return 0

    @property
    def tail_seconds(self) -> float:
        """How long the plugin keeps sounding after its input falls silent, in seconds (0 for memoryless)."""
        return 0.0

    @classmethod
    def parameter_specs(cls) -> Mapping[str, ParamSpec]:
        """The declared parameters, in constructor order: name -> :class:`~stompbox.core.params.ParamSpec` (default,
        range, unit, kind, choices, automation, description), read-only.

        This is the public form of the declarations that generate the constructor, the docstring's Parameters
        section, the command line's ``stompbox effects`` listing and the chain-file schema.
        """
        return MappingProxyType({name: param.spec for name, param in cls._params.items()})

    # ------------------------------------------------------------------ the stream engine
    def _ensure_format(self, sample_rate: float, num_channels: int) -> bool:
        """Prepare for this stream format if it changed; returns True if state was reset."""
        if self._format == (sample_rate, num_channels):
            return False
        self._format = None
        self._prepare(sample_rate, num_channels)  # if this raises, the next call prepares again
        self._plan_changed()  # the arrays of any plan step are new
        self._format = (sample_rate, num_channels)
        self._dirty = True
        self._reset_all()
        return True

    def _reset_all(self) -> None:
        if self._dirty and self._format is not None:
            self._update()
            self._dirty = False
        self._reset_state()
        self._clock = 0
        self._withheld = self._latency_seen = self.latency_samples

    def _step(self, block: np.ndarray) -> np.ndarray:
        """Process one block with up-to-date coefficients (what containers call on their children).

        The non-finite rule: NaN and infinity pass through (as in pedalboard), but a block whose output is not
        finite clears the plugin's state right after it, so one bad block cannot poison a stream forever (a
        recursive filter or a reverb would otherwise output NaN until ``reset()``).
        """
        self._begin_step()
        out = self._process(block) if not self._automation else self._step_automated(block)
        self._end_step(out, block.shape[1])
        return out

    def _solo_step(self, block: np.ndarray) -> np.ndarray:
        """:meth:`_step` for a call's single block, through the plugin's compiled plan when it has one: its
        kernels and the non-finite check in one compiled call (what a stream of small blocks pays per call)."""
        runner = self._solo_runner
        if runner is not None and runner.current(block.shape[1]):
            return runner.run(block)
        if (
            type(self)._plan_steps is Plugin._plan_steps
            or self._children()  # (containers run their children's plans themselves)
            or block.shape[1] > plans.MAX_PLAN_FRAMES
            or not plans.ENABLED
        ):
            return self._step(block)
        runner = self._solo_runner = plans.ChainRunner()
        return runner.process(block, [self])

    def _begin_step(self) -> None:
        """Bring coefficients up to date before a block (parameters changed since the last one)."""
        if self._dirty:
            self._update()
            self._dirty = False

    def _end_step(self, out: np.ndarray, frames: int) -> None:
        """Advance the clock by a processed block and apply the non-finite rule (see :meth:`_step`)."""
        self._clock += frames
        if self._stateful and out.size and not _all_finite(out):
            self._reset_state()

    def _step_automated(self, block: np.ndarray) -> np.ndarray:
        """Process a block while some parameters are automated (the clock is the block's first sample)."""
        n = block.shape[1]
        start = self._clock
        assert self._format is not None
        rate = self._format[0]
        native = self._native_automation
        curves: dict[str, np.ndarray] = {}
        slow: dict[str, Automation] = {}
        for name, auto in self._automation.items():
            if name in native:
                curves[name] = auto.render(start, n, rate)
            else:
                slow[name] = auto
        if not slow:
            out = self._process_automated(block, curves)
            for name, curve in curves.items():
                self._values[name] = float(curve[-1])
            return out
        chunk = self._automation_chunk
        first = start - start % chunk
        # each sub-block uses the value at its aligned first sample (for the first, maybe before this block)
        held = {name: auto.render(first, start + n - first, rate)[::chunk] for name, auto in slow.items()}
        out = block
        pos = 0
        while pos < n:
            index = (start + pos - first) // chunk
            stop = min(n, first + (index + 1) * chunk - start)
            for name, values in held.items():
                self._values[name] = float(values[index])
            self._update()
            self._clock = start + pos  # the sub-block's own position (for plugins that read the clock)
            piece = block if (pos == 0 and stop == n) else np.ascontiguousarray(block[:, pos:stop])
            if curves:
                result = self._process_automated(piece, {name: c[pos:stop] for name, c in curves.items()})
            else:
                result = self._process(piece)
            if piece is block:
                out = result
            else:
                block[:, pos:stop] = result
            pos = stop
        self._clock = start  # _step advances it past the block
        for name, curve in curves.items():
            self._values[name] = float(curve[-1])
        return out

    @property
    def automation(self) -> dict[str, Automation]:
        """The automated parameters: name -> :class:`~stompbox.core.automation.Automation` (a copy).

        Reading an automated parameter (``plugin.gain_db``) gives its value at the current stream position;
        assigning a number to it removes its automation.
        """
        return dict(self._automation)

    def reset(self) -> None:
        """Clear the plugin's internal state (tails, delay lines, LFO phase); parameters are kept.

        Also forgets the channel layout remembered from earlier calls.
        """
        with self._lock:
            self._layout_hint = None
            self._accepted = None
            if self._format is not None:
                self._reset_all()

    def _iter_tree(self) -> Iterator[Plugin]:
        """This plugin, then every distinct plugin inside it, depth first. Without recursion (any depth works),
        and a plugin found in several places is given once (a board holding itself twice per level for 60
        levels is 2**60 paths, but 61 plugins)."""
        seen = {id(self)}
        stack: list[Plugin] = [self]
        while stack:
            plugin = stack.pop()
            yield plugin
            for child in reversed(plugin._children()):
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append(child)

    def _nesting(self) -> int:
        """Levels of containers from this plugin down to its deepest plugin (0 for a plugin without children),
        counted one level at a time, so a plugin shared by many branches is visited once per level. Stops
        counting past :data:`~stompbox.limits.MAX_NESTING`."""
        levels, level = 0, [self]
        while levels <= limits.MAX_NESTING:
            below = {id(child): child for plugin in level for child in plugin._children()}
            if not below:
                break
            levels, level = levels + 1, list(below.values())
        return levels

    def _locked_tree(self) -> list[Plugin]:
        """Every plugin of this tree in id order (the order locks are taken in), checked: not too deep, and no
        plugin in two places. Cached until a container anywhere changes its plugins."""
        cached = self._tree_cache
        if cached is not None and cached[0] == _tree_epoch:
            return cached[1]
        tree = self._checked_tree()
        self._tree_cache = (_tree_epoch, tree)
        return tree

    def _checked_tree(self) -> list[Plugin]:
        if not self._children():
            return [self]
        limits.check_nesting(self._nesting())  # 5,000 nested boards raised RecursionError
        plugins = list(self._iter_tree())
        if sum(len(plugin._children()) for plugin in plugins) != len(plugins) - 1:  # a tree: one parent each
            raise DuplicatePluginError(DUPLICATE_ERROR)
        return sorted(plugins, key=id)

    def process(
        self,
        input_array: np.ndarray,
        sample_rate: float,
        buffer_size: int = 8192,
        reset: bool = True,
        *,
        layout: str | None = None,
    ) -> np.ndarray:
        """Run audio through this plugin and return the result as float32.

        Parameters
        ----------
        input_array : numpy.ndarray
            float32 or float64 audio, 1-D (mono), ``(channels, samples)`` or ``(samples, channels)``. The
            smaller dimension of a 2-D array is taken as the channels; the output has the input's layout.
        sample_rate : float
            Sample rate of the audio in Hz (positive).
        buffer_size : int
            The largest block, in samples, handed to the plugin at once (>= 1). Built-in effects give the same
            output for any block size, so they (and boards of nothing else) are run in larger blocks when that
            is faster; hosted plugins get exactly this size.
        reset : bool
            If True (the default), clear the plugin's state first and treat this call as a whole stream: the
            output has exactly the input's length, with any latency compensated. If False, state carries over
            from the previous call (streaming); a plugin with latency then returns fewer samples than it was
            given until its latency has been filled.
        layout : {"channels-first", "channels-last"}, optional
            Say how a 2-D array is laid out instead of letting the shape decide (needed for square arrays, or
            blocks shorter than the channel count, on a fresh plugin).

        Returns
        -------
        numpy.ndarray
            float32 audio in the input's layout.
        """
        audio, layout, rate, block_size = self._accept(input_array, sample_rate, buffer_size, layout)
        tree = self._locked_tree()
        if len(tree) == 1:  # (a plugin without children: the common case of a stream, one lock)
            with self._lock:
                output = self._locked_process(audio, rate, block_size, reset)
        else:
            for plugin in tree:
                plugin._lock.acquire()  # in id order, so boards sharing plugins cannot deadlock
            try:
                output = self._locked_process(audio, rate, block_size, reset)
            finally:
                for plugin in reversed(tree):
                    plugin._lock.release()
        if layout == "channels-first" or (layout is None and output.shape[0] != 1):
            return output  # (mono in, several channels out (routing): channels-first)
        return restore_layout(output, layout)

    __call__ = process

    def _locked_process(self, audio: np.ndarray, rate: float, block_size: int, reset: Any) -> np.ndarray:
        """The body of :meth:`process`, with the tree's locks held."""
        try:
            reset_done = self._ensure_format(rate, audio.shape[0])
            if reset and not reset_done:
                self._reset_all()
            return self._run(audio, block_size, flush=bool(reset))
        finally:
            if self._chunks_itself:
                self._chunk = 0

    def _accept(
        self, input_array: Any, sample_rate: Any, buffer_size: Any, layout: str | None
    ) -> tuple[np.ndarray, str | None, float, int]:
        """Check a call's arguments: the channels-first view of the audio, its layout, the rate and the block
        size (raising the documented errors).

        A stream's calls repeat the same rate, dtype and layout; when they do (same sample rate object value,
        float32/float64 ndarray of the same dimension whose channel axis matches the last call's), the checks
        that call made still hold and only the view is made: the fixed cost of a small block is what a stream
        pays on every call.
        """
        accepted = self._accepted
        if (
            accepted is not None
            and layout is None
            and type(input_array) is np.ndarray
            and (input_array.dtype is _F32 or input_array.dtype is _F64)
            and type(buffer_size) is int
            and buffer_size >= 1
            and sample_rate == accepted[0]
            and type(sample_rate) is type(accepted[0])
        ):
            found, channels = accepted[2], accepted[3]
            shape = input_array.shape
            if found is None:
                if len(shape) == 1:
                    return input_array[np.newaxis, :], None, accepted[1], buffer_size
            elif len(shape) == 2 and shape[0] and shape[1]:
                if found == "channels-first" and shape[0] == channels:
                    return input_array, found, accepted[1], buffer_size
                if found == "channels-last" and shape[1] == channels:
                    return input_array.T, found, accepted[1], buffer_size
        rate = check_sample_rate(sample_rate)
        block_size = check_buffer_size(buffer_size)
        audio, found = channels_first_view(input_array, self._layout_hint, layout)
        if found is not None:
            self._layout_hint = (found, audio.shape[0])
        self._accepted = (sample_rate, rate, found, audio.shape[0])
        return audio, found, rate, block_size

    def _run(self, audio: np.ndarray, block_size: int, flush: bool) -> np.ndarray:
        """Push ``audio`` (a channels-first view, float32 or float64) through in blocks of at most
        ``block_size``; drop withheld (latency) samples; with ``flush``, pad with silence to push the latency
        out and return exactly as many samples as came in.

        Each block is staged in a small C-contiguous float32 scratch array (converted from the input on the
        way), processed there, and copied to the output: one pass over main memory in, one out.
        """
        channels, frames = audio.shape
        if self._pointwise and not self._automation:  # one pass, caller's array -> output, in its layout
            # (a pointwise plugin has no latency: its output sample depends on the input sample alone)
            output = (
                np.empty((frames, channels), np.float32).T
                if _channels_last(audio)
                else np.empty(audio.shape, np.float32)
            )
            self._begin_step()
            self._map(audio, output)
            self._end_step(output, frames)
            return output
        if self._block_invariant:
            block_size = max(block_size, _MIN_STEP_SAMPLES // max(1, channels))
        latency = self.latency_samples
        if latency != self._latency_seen:  # a parameter changed the latency mid-stream: withhold the difference
            self._withheld = max(0, self._withheld + latency - self._latency_seen)
            self._latency_seen = latency
        total = frames + (self._withheld if flush else 0)
        if self._chunks_itself:  # the whole call in one step, processed in place in the output array
            self._chunk = block_size
            block_size = max(block_size, total)
        elif self._whole_call and not self._automation:  # (automation renders per-sample curves per block)
            block_size = max(block_size, total)
        if total <= block_size:
            if total == frames:
                output = audio.astype(_F32, order="C")  # (a copy, converted: the caller's array is kept)
            else:
                output = np.zeros((channels, total), np.float32)
                output[:, :frames] = audio
            if total:
                result = self._solo_step(output)
                if result is not output:
                    if result.shape == output.shape:
                        output[...] = result
                    else:  # a routing plugin changed the channel count
                        output = np.ascontiguousarray(result, dtype=np.float32)
            elif self._output_channels(channels) != channels:
                output = np.zeros((self._output_channels(channels), 0), np.float32)
        else:
            output = np.empty((self._output_channels(channels), total), np.float32)
            scratch = np.empty((channels, block_size), np.float32)
            for start in range(0, total, block_size):
                stop = min(start + block_size, total)
                # C-contiguous also for the last, shorter block: the first channels * m floats of the scratch
                staged = scratch.reshape(-1)[: channels * (stop - start)].reshape(channels, stop - start)
                if stop <= frames:
                    staged[...] = audio[:, start:stop]
                else:
                    have = max(0, frames - start)
                    staged[:, :have] = audio[:, start : start + have]
                    staged[:, have:] = 0.0
                output[:, start:stop] = self._step(staged)
        drop = min(self._withheld, total)
        self._withheld -= drop
        if drop or (flush and total > frames):
            output = np.ascontiguousarray(output[:, drop : drop + frames] if flush else output[:, drop:])
        return output

    # ------------------------------------------------------------------ chains as data
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description: ``{"type": "Gain", "params": {"gain_db": 1.0}}`` (enums by name)."""
        params = {n: (v.name if isinstance(v, enum.Enum) else v) for n, v in self._values.items()}
        for name, auto in self._automation.items():
            try:
                params[name] = auto.to_dict()
            except ValueError as exc:
                raise ValueError(f"{type(self).__name__}.{name}: {exc}") from None
        return {"type": type(self).__name__, "params": params}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | list[Any]) -> Plugin:
        """Build a plugin (or a board) from :meth:`to_dict`'s output."""
        from .serial import from_dict

        plugin = from_dict(data)
        if not isinstance(plugin, cls):
            raise TypeError(f"The description is of a {type(plugin).__name__}, not a {cls.__name__}.")
        return plugin

    def save(self, path: str | os.PathLike[str]) -> None:
        """Save this plugin (or board) as a chain file: JSON, or YAML for ``.yaml``/``.yml`` paths."""
        from .serial import save

        save(self, path)

    # ------------------------------------------------------------------ copying and display
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock", None)
        state.pop("_update_listener", None)  # a live stream's, not part of the plugin
        state.pop("_tree_cache", None)
        state.pop("_solo_runner", None)  # compiled code: a copy builds its own
        state.pop("_accepted", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def _repr_params(self) -> str:
        auto = self._automation
        parts = [
            f"{name}={auto[name]!r}" if name in auto else f"{name}={param.format(self._values[name])}"
            for name, param in self._params.items()
        ]
        return (" " + " ".join(parts)) if parts else ""

    def __repr__(self) -> str:
        return f"<stompbox.{type(self).__name__}{self._repr_params()} at {id(self):#x}>"


class PairedChannels(Plugin):
    """Base for plugins defined on mono and stereo audio only (a stereo reverb, a stereo codec).

    A stream of more than two channels is processed as consecutive pairs ``(0, 1), (2, 3), ...``, each by its
    own copy of the plugin running as a stereo stream (an odd last channel as a mono stream), so channels ``2k``
    and ``2k + 1`` of the output equal processing those two channels alone. Put it before the plugin's other
    base: ``class Reverb(PairedChannels, Plugin)``. It works at the engine level (format, reset, step), so the
    plugin's own hooks are untouched; the copies follow the plugin's parameters and automation. A plugin that
    defines ``latency_samples`` must return ``self._pairs[0].latency_samples`` when ``self._pairs`` is set.
    """

    _abstract = True
    _pairs: list[Plugin] | None = None
    #: the default of :attr:`channel_pairs` for the class
    _channel_pairs_default: ClassVar[bool] = True

    @property
    def channel_pairs(self) -> bool:
        """Process more than two channels as independent stereo pairs (True), or use the plugin's own rule for
        wide audio (False: see the class's documentation)."""
        return bool(self.__dict__.get("_channel_pairs", self._channel_pairs_default))

    @channel_pairs.setter
    def channel_pairs(self, value: bool) -> None:
        self._channel_pairs = bool(value)
        self._forget_format()  # prepare again on the next call

    def _ensure_format(self, sample_rate: float, num_channels: int) -> bool:
        if num_channels <= 2 or not self.channel_pairs:
            if self._pairs is not None:
                self._pairs = None
                self._forget_format()
            return super()._ensure_format(sample_rate, num_channels)
        if self._format == (sample_rate, num_channels) and self._pairs is not None:
            return False
        self._forget_format()
        pairs: list[Plugin] = []
        for first in range(0, num_channels, 2):
            clone = type(self)()
            self._sync(clone)
            clone._ensure_format(sample_rate, min(2, num_channels - first))
            pairs.append(clone)
        self._pairs = pairs
        self._adopt_format(sample_rate, num_channels)
        self._dirty = False
        self._reset_all()
        return True

    def _sync(self, clone: Plugin) -> None:
        clone._values.update(self._values)
        clone._automation = dict(self._automation)
        clone._request_update()

    def _reset_all(self) -> None:
        if self._pairs is None:
            super()._reset_all()
            return
        for clone in self._pairs:
            self._sync(clone)
            clone._reset_all()
        self._dirty = False
        self._clock = 0
        self._withheld = self._latency_seen = self.latency_samples

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        """With channel pairs: the steps of every pair's clone, on the pair's rows (``plugin`` = the clone)."""
        if self._pairs is None:
            return super()._plan_steps(max_frames)
        steps: list[PlanStep] = []
        for k, clone in enumerate(self._pairs):
            clone_steps = clone._plan_steps(max_frames)
            if clone_steps is None:
                return None
            assert clone._format is not None
            for step in clone_steps:
                lo, hi = step.rows if step.rows is not None else (0, clone._format[1])
                steps.append(step._replace(rows=(2 * k + lo, 2 * k + hi), plugin=step.plugin or clone))
        return steps

    def _begin_step(self) -> None:
        if self._pairs is None:
            super()._begin_step()
        elif self._dirty:  # the clones follow the parameters, and are brought up to date now: a compiled plan
            # runs their kernels without calling their own _begin_step
            for clone in self._pairs:
                self._sync(clone)
                clone._begin_step()
            self._dirty = False

    def _step(self, block: np.ndarray) -> np.ndarray:
        if self._pairs is None:
            return super()._step(block)
        self._begin_step()
        out = np.empty_like(block)
        for k, clone in enumerate(self._pairs):
            out[2 * k : 2 * k + 2] = clone._step(np.ascontiguousarray(block[2 * k : 2 * k + 2]))
        self._clock += block.shape[1]
        return out


def _as_key(key: Any, layout: str | None = None) -> np.ndarray | None:
    """A sidechain signal as a C-contiguous float32 ``(channels, samples)`` array (``None`` stays ``None``)."""
    if key is None:
        return None
    from .layout import as_float32_channels_first

    if isinstance(key, np.ndarray) and key.dtype.kind in "iu":
        key = key.astype(np.float64)
    array, _ = as_float32_channels_first(key, None, layout)
    return array


class SidechainInput(Plugin):
    """Base for plugins whose level detector can listen to another signal: a sidechain key.

    The key is given either as an attribute (``plugin.sidechain = key``, or the constructor's ``sidechain=``),
    which lines up sample ``i`` of the key with sample ``i`` of the stream (counted from the last reset, so it
    works in boards and when streaming with ``reset=False``), or per call, ``plugin.process(audio, sr,
    sidechain=key)``, which lines the key up with that call's audio (streaming: pass each block's key with its
    block). Past the key's end the key is silent. Channel ``c`` of the audio is detected from channel
    ``c % key_channels`` of the key, so a mono key drives every channel.

    The hook for other plugins (hosted plugins with a sidechain bus): subclass it (before :class:`Plugin`) and
    call :meth:`_key_block` in ``_process`` to get the key samples of the block being processed.
    """

    _abstract = True
    _key: np.ndarray | None = None
    _key_base = 0

    @property
    def sidechain(self) -> np.ndarray | None:
        """The sidechain key, float32 ``(channels, samples)``, or ``None`` (detect the input itself)."""
        return self._key

    @sidechain.setter
    def sidechain(self, key: np.ndarray | None) -> None:
        self._key = _as_key(key)
        self._key_base = 0
        self._plan_changed()  # whether it can run in a compiled plan may have changed

    def process(
        self,
        input_array: np.ndarray,
        sample_rate: float,
        buffer_size: int = 8192,
        reset: bool = True,
        *,
        layout: str | None = None,
        sidechain: np.ndarray | None = None,
    ) -> np.ndarray:
        """:meth:`Plugin.process`, with an optional ``sidechain`` key for this call's audio (same length,
        same layout rules; mono keys drive all channels)."""
        run = super().process
        if sidechain is None:
            return Plugin.process(self, input_array, sample_rate, buffer_size, reset, layout=layout)
        saved = (self._key, self._key_base)
        self._key = _as_key(sidechain, layout)
        self._key_base = 0 if reset else self._clock
        try:
            return run(input_array, sample_rate, buffer_size, reset, layout=layout)
        finally:
            self._key, self._key_base = saved

    __call__ = process

    def _key_block(self, n: int, channels: int) -> np.ndarray | None:
        """The key for the ``n`` samples being processed, float32 ``(channels, n)``, or ``None``."""
        key = self._key
        if key is None:
            return None
        start = self._clock - self._key_base
        out = np.zeros((channels, n), np.float32)
        lo, hi = max(start, 0), min(start + n, key.shape[1])
        if hi > lo:
            rows = key.shape[0]
            for c in range(channels):
                out[c, lo - start : hi - start] = key[c % rows, lo:hi]
        return out

    def to_dict(self) -> dict[str, Any]:
        if self._key is not None:
            raise ValueError(
                f"{type(self).__name__} has a sidechain signal, which cannot be saved in a chain file; set "
                "sidechain=None before saving and give the key again after loading."
            )
        return super().to_dict()
