"""Rendering with tails: process audio, then keep feeding silence so reverbs and delays ring out.

``stompbox.render(audio, sample_rate, plugins, tail="auto")`` returns the processed audio followed by the
effects' tail, cut where the output falls below ``threshold_db`` for good; ``render_file`` does the same for a
file of any length in bounded memory, and :func:`render_reader` is the streaming core both use (and the CLI can
call with any reader and writer).

How ``tail="auto"`` decides where the tail ends: after the input, blocks of silence are pushed through the
plugin (``reset=False``, so its delay lines and reverb tanks keep their state, and its latency is flushed).
The output is kept until it has stayed below the threshold for a *hold* time, then cut right after its last
sample at or above the threshold (any channel), so the output ends exactly where it first stays below the
threshold. The hold is the plugin's own ``tail_seconds`` (the time its tail takes to fall 60 dB, which is
longer than any silent gap inside the tail, such as the gap between two echoes of a delay), at least
``MIN_HOLD_SECONDS``, at most ``max_tail_seconds``; pass ``hold_seconds`` for a plugin that reports no tail
(a hosted plugin, say). Only the hold time is rendered past the end, so the cost is small.
"""

from __future__ import annotations

import math
import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ._base import limits
from .core.layout import channels_first_view, check_buffer_size, check_sample_rate, restore_layout
from .core.plugin import Plugin

__all__ = ["MIN_HOLD_SECONDS", "render", "render_file", "render_reader"]

#: the shortest silence after which ``tail="auto"`` decides the tail has ended
MIN_HOLD_SECONDS = 0.5

Tail = str | float | int | None


def _as_plugin(plugins: Plugin | Sequence[Plugin]) -> Plugin:
    if isinstance(plugins, Plugin):
        return plugins
    if isinstance(plugins, list | tuple):
        from .board import Pedalboard

        for item in plugins:
            if not isinstance(item, Plugin):
                raise TypeError(f"plugins must be a Plugin or a list of Plugins (got a {type(item).__name__})")
        return Pedalboard(list(plugins))
    raise TypeError(f"plugins must be a Plugin or a list of Plugins (got {type(plugins).__name__})")


def _check_tail(tail: Tail, max_tail_seconds: float) -> float | str | None:
    if tail is None:
        return None
    if isinstance(tail, str):
        if tail.strip().lower() == "auto":
            return "auto"
        raise ValueError(f"tail must be 'auto', a number of seconds >= 0, or None (got {tail!r})")
    if isinstance(tail, bool):
        raise TypeError("tail must be 'auto', a number of seconds >= 0, or None (got a bool)")
    value = float(tail)
    if not 0.0 <= value < math.inf:
        raise ValueError(f"tail must be 'auto', a finite number of seconds >= 0, or None (got {tail!r})")
    return limits.check_tail(value, max_tail_seconds)  # `tail=1e12` grew to a MemoryError


def _render_blocks(
    plugin: Plugin,
    blocks: Iterable[np.ndarray],
    rate: float,
    channels: int,
    tail: float | str | None,
    threshold_db: float,
    max_tail_seconds: float,
    hold_seconds: float | None,
    buffer_size: int,
    counts: list[int],
) -> Iterator[np.ndarray]:
    """Yield the output blocks of ``plugin`` over ``blocks`` ((channels, n) arrays) plus its tail.

    ``counts`` receives ``[frames in, frames out]`` as the generator runs.
    """
    plugin.reset()
    read = written = 0
    for block in blocks:
        n = block.shape[-1]
        if n == 0:
            continue
        read += n
        out = plugin.process(block, rate, buffer_size=buffer_size, reset=False, layout="channels-first")
        if out.shape[-1]:
            written += out.shape[-1]
            counts[:] = [read, written]
            yield out
    counts[:] = [read, written]
    max_tail = int(round(max_tail_seconds * rate))
    if tail == "auto":
        hint = plugin.tail_seconds
        hold_s = hold_seconds if hold_seconds is not None else max(MIN_HOLD_SECONDS, hint)
        if not math.isfinite(hold_s):
            hold_s = max_tail_seconds
        hold = max(1, int(round(min(hold_s, max_tail_seconds) * rate)))
        threshold = 10.0 ** (threshold_db / 20.0)
    else:
        hold = 0
        threshold = math.inf
        max_tail = 0 if tail is None else int(round(float(tail) * rate))
    silence = np.zeros((channels, buffer_size), np.float32)
    # output before `read` is always kept; past it, output waits in `pending` until a loud sample releases it
    pending: list[np.ndarray] = []
    pending_start = written  # output index of the first pending frame (valid when pending is not empty)
    last_loud = -1  # output index of the last sample at or above the threshold, past the input's end
    rendered = written
    fed = 0
    budget = max_tail + hold + plugin.latency_samples + 2 * buffer_size
    while True:
        if tail == "auto":  # render until the output has been quiet for `hold` past its last loud sample
            goal = min(max(read, last_loud + 1) + hold, read + max_tail)
        else:
            goal = read + max_tail
        if rendered >= goal:
            break
        n = min(buffer_size, goal - rendered)
        out = plugin.process(silence[:, :n], rate, buffer_size=buffer_size, reset=False, layout="channels-first")
        fed += n
        if fed > budget:
            raise RuntimeError(
                f"{type(plugin).__name__} kept withholding output after {fed} frames of silence (latency "
                f"reported: {plugin.latency_samples} samples)"
            )
        m = out.shape[-1]
        if not m:
            continue
        start = rendered
        rendered += m
        # the part inside the input's length (latency being flushed) is always output
        keep = max(0, min(m, read - start))
        if keep:
            written += keep
            counts[:] = [read, written]
            yield out[:, :keep]
        rest = out[:, keep:]
        if not rest.shape[-1]:
            continue
        if tail != "auto":
            take = min(rest.shape[-1], read + max_tail - (start + keep))
            if take > 0:
                written += take
                counts[:] = [read, written]
                yield rest[:, :take]
            continue
        if not pending:
            pending_start = start + keep
        pending.append(rest)
        loud = np.flatnonzero((np.abs(rest) >= threshold).any(axis=0))
        if loud.size:
            last_loud = min(start + keep + int(loud[-1]), read + max_tail - 1)
            # release everything up to the loud sample
            release = np.concatenate(pending, axis=1) if len(pending) > 1 else pending[0]
            upto = last_loud + 1 - pending_start
            written += upto
            counts[:] = [read, written]
            yield release[:, :upto]
            remainder = release[:, upto:]
            pending = [remainder] if remainder.shape[-1] else []
            pending_start = last_loud + 1
    counts[:] = [read, written]


def render(
    audio: np.ndarray,
    sample_rate: float,
    plugins: Plugin | Sequence[Plugin],
    tail: Tail = "auto",
    *,
    threshold_db: float = -80.0,
    max_tail_seconds: float = limits.DEFAULT_MAX_TAIL_SECONDS,
    hold_seconds: float | None = None,
    buffer_size: int = 8192,
    layout: str | None = None,
) -> np.ndarray:
    """Process ``audio`` through ``plugins`` and let their tails ring out.

    The plugins are reset first. The output starts like ``plugins.process(audio, sample_rate)`` (latency
    compensated) and goes on past the input's end with what the effects make from silence.

    Parameters
    ----------
    audio : numpy.ndarray
        float32/float64 audio, 1-D (mono), ``(channels, samples)`` or ``(samples, channels)``.
    sample_rate : float
        In Hz.
    plugins : Plugin or list of Plugin
        The effect, board, or a list of effects (run in order).
    tail : "auto", float or None
        ``"auto"``: render until the output stays below ``threshold_db`` and end right after its last louder
        sample (never before the input's end). A number: exactly that many seconds (0 to ``max_tail_seconds``)
        after the input.
        ``None``: no tail (the input's length).
    threshold_db : float
        The level, in dBFS, under which ``"auto"`` counts the output as silent (default -80).
    max_tail_seconds : float
        The longest tail rendered (default 30 s; a finite number >= 0): ``"auto"`` stops there (a frozen
        reverb or a delay with feedback 1 never falls silent), and a longer number raises ``LimitError``
        (see :mod:`stompbox.limits`). Raise it to render a longer tail.
    hold_seconds : float, optional
        How long the output must stay below the threshold before ``"auto"`` stops (default: the plugin's
        ``tail_seconds``, at least 0.5 s).
    buffer_size : int
        Block size in samples.
    layout : {"channels-first", "channels-last"}, optional
        The layout of a 2-D ``audio``, if its shape is ambiguous.

    Returns
    -------
    numpy.ndarray
        float32 audio in the input's layout, at least as long as the input.
    """
    rate = check_sample_rate(sample_rate)
    size = check_buffer_size(buffer_size)
    mode = _check_tail(tail, max_tail_seconds)
    _check_limits(threshold_db, max_tail_seconds, hold_seconds)
    plugin = _as_plugin(plugins)
    view, found = channels_first_view(audio, None, layout)
    channels, frames = view.shape
    blocks = (view[:, start : start + size] for start in range(0, frames, size))
    counts = [0, 0]
    parts = list(
        _render_blocks(plugin, blocks, rate, channels, mode, threshold_db, max_tail_seconds, hold_seconds, size, counts)
    )
    if parts:
        out = np.concatenate(parts, axis=1) if len(parts) > 1 else np.ascontiguousarray(parts[0], np.float32)
    else:
        out = np.zeros((channels, 0), np.float32)
    if found is None and out.shape[0] != 1:
        return out
    return restore_layout(out, found)


def _check_limits(threshold_db: float, max_tail_seconds: float, hold_seconds: float | None) -> None:
    if not math.isfinite(float(threshold_db)):
        raise ValueError(f"threshold_db must be a finite number of dBFS (got {threshold_db!r})")
    limits.check_tail(0.0, max_tail_seconds)
    if hold_seconds is not None and not 0.0 < float(hold_seconds) < math.inf:
        raise ValueError(f"hold_seconds must be a finite number of seconds > 0 (got {hold_seconds!r})")


def render_reader(
    plugins: Plugin | Sequence[Plugin],
    reader: Any,
    write: Callable[[np.ndarray], Any],
    tail: Tail = "auto",
    *,
    threshold_db: float = -80.0,
    max_tail_seconds: float = limits.DEFAULT_MAX_TAIL_SECONDS,
    hold_seconds: float | None = None,
    buffer_size: int = 8192,
    block_frames: int = 1 << 16,
    progress: Callable[[int], Any] | None = None,
) -> tuple[int, int]:
    """The streaming core of :func:`render_file`: everything ``reader`` holds, through ``plugins``, into
    ``write``, plus the tail (see :func:`render` for ``tail`` and the other options).

    ``reader`` is anything with ``read(n)`` giving float32 ``(channels, n)`` (empty at the end),
    ``samplerate`` and ``num_channels``; ``write`` is called with each float32 ``(channels, n)`` output block.
    Memory is bounded by the block sizes and, for ``"auto"``, the hold time. ``progress`` is called with the
    frames of each input block read. Returns the frames read and written.
    """
    rate = check_sample_rate(reader.samplerate)
    size = check_buffer_size(buffer_size)
    mode = _check_tail(tail, max_tail_seconds)
    _check_limits(threshold_db, max_tail_seconds, hold_seconds)
    plugin = _as_plugin(plugins)

    def blocks() -> Iterator[np.ndarray]:
        while True:
            block = reader.read(block_frames)
            if block.shape[-1] == 0:
                return
            if progress is not None:
                progress(block.shape[-1])
            yield block

    counts = [0, 0]
    for out in _render_blocks(
        plugin, blocks(), rate, reader.num_channels, mode, threshold_db, max_tail_seconds, hold_seconds, size, counts
    ):
        write(np.ascontiguousarray(out, dtype=np.float32))
    return counts[0], counts[1]


def render_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    plugins: Plugin | Sequence[Plugin],
    tail: Tail = "auto",
    *,
    threshold_db: float = -80.0,
    max_tail_seconds: float = limits.DEFAULT_MAX_TAIL_SECONDS,
    hold_seconds: float | None = None,
    buffer_size: int = 8192,
    bit_depth: int | None = None,
    quality: Any = None,
    progress: Callable[[int], Any] | None = None,
    keep_tags: bool = True,
) -> tuple[int, int]:
    """Render a file through ``plugins`` with its tail (see :func:`render`), streaming in bounded memory.

    The output (format from its extension; bit depth by default the input's where the format allows) is
    written atomically, with the input's tags and cover art where its format takes tags (unless
    ``keep_tags=False``). Returns the frames read and written.
    """
    from .io import AudioFile
    from .io.formats import default_bit_depth
    from .io.tags import carried_tags
    from .io.write_behind import behind

    if os.path.abspath(os.fspath(input_path)) == os.path.abspath(os.fspath(output_path)):
        raise ValueError("render_file cannot write over its input: give another output path")
    with AudioFile(os.fspath(input_path)) as reader:
        bits = bit_depth or default_bit_depth(reader.file_dtype, output_path)
        rate, channels = reader.samplerate, reader.num_channels
        tags = carried_tags(reader, output_path) if keep_tags else None
        with (
            AudioFile(os.fspath(output_path), "w", rate, channels, bit_depth=bits, quality=quality, tags=tags) as out,
            behind(out) as write,
        ):
            return render_reader(
                plugins,
                reader,
                write,
                tail,
                threshold_db=threshold_db,
                max_tail_seconds=max_tail_seconds,
                hold_seconds=hold_seconds,
                buffer_size=buffer_size,
                progress=progress,
            )


class _CallableModule(types.ModuleType):
    """``stompbox.render`` is the function; if the module was imported first (``from stompbox.render import
    render_file``) the package attribute is this module, which then forwards calls to :func:`render`."""

    def __call__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        return render(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
