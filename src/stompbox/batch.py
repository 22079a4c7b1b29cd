"""Many files through one chain: streaming one file, and batches over any ``concurrent.futures.Executor``.

The unit of work is :func:`process_file`: open a file, stream it through a chain in bounded memory (blocks of
``block_frames``, ``reset=False``, latency flushed at the end so the output has exactly the input's length
plus the tail), and write the result atomically (a temporary file in the same folder, renamed into place on
success, so an output that exists is always complete).

:func:`process_files` runs :func:`process_file` over many files with any executor: a process pool by default,
a thread pool (the DSP kernels release the GIL), or a Dask ``distributed`` client's ``get_executor()``. The
chain travels as its dict form (see :mod:`stompbox.chains`), each file gets a fresh copy of the chain (so
outputs do not depend on which worker ran them or in which order), and one failing file is reported without
stopping the others.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._base import limits
from .io.formats import AUDIO_EXTENSIONS, default_bit_depth

if TYPE_CHECKING:  # the plugin machinery loads with the chain (a command's output is opened before it)
    import numpy as np

    from .core.plugin import Plugin

__all__ = [
    "AUDIO_EXTENSIONS",
    "BatchReport",
    "FileResult",
    "default_bit_depth",
    "find_audio_files",
    "process_file",
    "process_files",
    "stream_through",
]

#: frames per block when streaming (libvorbis is only safe with writes of <= 64k frames)
BLOCK_FRAMES = 1 << 15
#: the longest tail rendered unless ``max_tail_seconds`` says otherwise (see :mod:`stompbox.limits`)
MAX_AUTO_TAIL_SECONDS = limits.BATCH_MAX_TAIL_SECONDS


def conform_reader(
    reader: Any,
    out_path: str | os.PathLike[str],
    samplerate: float | None = None,
    num_channels: int | None = None,
    resample_quality: Any = None,
) -> tuple[Any, int, str | None]:
    """``reader`` as ``out_path`` will be written: at ``samplerate`` and with ``num_channels`` when given (a
    streaming resampler and channel mixer), and otherwise at a rate the output's format can store: Opus, MP3
    and AAC take only a few rates, and an input at another one is resampled to the nearest of them (the lowest
    above it, e.g. 44.1 kHz to 48 kHz for Opus), as FFmpeg does.

    Returns the reader, the output rate (an int) and, when the rate was changed without being asked, a one-line
    note saying so (None otherwise). Raises ``ValueError`` for a fractional output rate.
    """
    from .io.formats import storable_rate

    note = None
    if samplerate is None:
        extension = os.path.splitext(os.fspath(out_path))[1]
        samplerate = storable_rate(extension, reader.samplerate)
        if samplerate != reader.samplerate:
            kind = extension.lstrip(".").upper()
            note = f"{kind} cannot store {reader.samplerate:g} Hz: resampled to {samplerate:g} Hz"
    if samplerate != reader.samplerate:
        reader = reader.resampled_to(samplerate, resample_quality)
    if num_channels is not None and num_channels != reader.num_channels:
        reader = reader.with_channels(num_channels)
    rate = reader.samplerate
    if not float(rate).is_integer():
        raise ValueError(f"cannot write a fractional sample rate ({rate} Hz); give samplerate")
    return reader, int(rate), note


def stream_through(
    plugin: Plugin,
    reader: Any,
    write: Callable[[np.ndarray], Any],
    *,
    tail_frames: int = 0,
    tail: str | float | None = None,
    max_tail_seconds: float = MAX_AUTO_TAIL_SECONDS,
    block_frames: int = BLOCK_FRAMES,
    progress: Callable[[int], Any] | None = None,
) -> tuple[int, int]:
    """Stream everything ``reader`` holds through ``plugin`` into ``write``, in bounded memory.

    The plugin is reset, then fed blocks with ``reset=False``. A plugin with latency withholds its first
    ``latency_samples`` output samples, so after the input the plugin is fed silence until exactly
    ``frames read + tail_frames`` samples have come out: the output lines up sample for sample with
    ``plugin(whole_input_plus_tail_silence, samplerate)`` and has that length. This is
    :func:`stompbox.render.render_reader` with a tail counted in frames.

    Parameters
    ----------
    plugin : Plugin
        The effect or board (it is reset first).
    reader : readable audio file
        Anything with ``read(n)`` giving float32 ``(channels, n)`` (empty at the end), ``samplerate`` and
        ``num_channels``.
    write : callable
        Called with each float32 ``(channels, n)`` output block, in order.
    tail_frames : int
        Samples of silence to render after the input, letting reverbs and delays ring out (>= 0).
    tail : "auto" or float, optional
        Instead of ``tail_frames``: seconds, or ``"auto"`` to render until the output falls silent (below
        -80 dBFS for the chain's own tail time; see :func:`stompbox.render.render`), at most
        ``max_tail_seconds``.
    max_tail_seconds : float
        The longest ``"auto"`` tail (a frozen reverb or a delay with feedback 1 never falls silent).
    block_frames : int
        Frames per block (>= 1); memory use is proportional to it.
    progress : callable, optional
        Called with the number of input frames of each block read.

    Returns
    -------
    (int, int)
        Frames read and frames written.
    """
    from .render import render_reader

    if tail_frames < 0:
        raise ValueError(f"tail_frames must be >= 0 (got {tail_frames})")
    if tail is None and tail_frames:
        tail = tail_frames / float(reader.samplerate)  # render_reader rounds it back to tail_frames
    return render_reader(
        plugin,
        reader,
        write,
        tail,
        max_tail_seconds=max_tail_seconds,
        buffer_size=block_frames,
        block_frames=block_frames,
        progress=progress,
    )


def _as_plugin(chain: Plugin | dict[str, Any] | list[Any] | str | os.PathLike[str]) -> Plugin:
    from .chains import from_dict, load_chain
    from .core.plugin import Plugin

    if isinstance(chain, Plugin):
        return chain
    if isinstance(chain, dict | list):
        plugin = from_dict(chain)
        if plugin is None:
            raise ValueError("The chain describes no plugin.")
        return plugin
    return load_chain(chain)


def _api_defaults(source: Any, output_path: str) -> tuple[int, Any]:
    """The Python API's output defaults: the input's bit depth where the format allows, the writer's quality."""
    return default_bit_depth(source.file_dtype, output_path), None


def process_file(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    chain: Plugin | dict[str, Any] | list[Any] | str | os.PathLike[str],
    *,
    tail: str | float | None = None,
    max_tail_seconds: float = MAX_AUTO_TAIL_SECONDS,
    samplerate: float | None = None,
    num_channels: int | None = None,
    bit_depth: int | None = None,
    quality: Any = None,
    block_frames: int = BLOCK_FRAMES,
    progress: Callable[[int], Any] | None = None,
    write_behind: bool = True,
    keep_tags: bool = True,
    output_defaults: Callable[[Any, str], tuple[int, Any]] | None = None,
) -> tuple[int, int]:
    """Render one file through ``chain`` into ``output_path`` (format from its extension), atomically.

    Parameters
    ----------
    input_path, output_path : str or os.PathLike
        Files to read and to write. The output's folder must exist.
    chain : Plugin, dict, list, or path of a chain file
        The effects. A plugin object is used (and reset) as is; a dict/list/path is built afresh.
    tail : "auto", float or None
        Seconds of silence rendered after the input so effects ring out (0 to ``max_tail_seconds``), or
        ``"auto"``: until the output falls silent (see :func:`stompbox.render.render`). None: no tail.
    max_tail_seconds : float
        The longest tail (default 60 s): ``"auto"`` stops there, a longer ``tail`` raises ``LimitError``.
    samplerate : float, optional
        Output sample rate in Hz; the input is resampled (streaming) before the effects. By default the
        input's, or the nearest rate the output's format can store (see :func:`conform_reader`).
    num_channels : int, optional
        Output channel count; the input is mixed down or up before the effects.
    bit_depth : int, optional
        Output bit depth (8/16/24/32); by default the input's, where the format allows.
    quality : optional
        Encoder quality passed to the writer (e.g. ``"V2"`` for MP3).
    block_frames : int
        Frames per block (memory is proportional to it).
    progress : callable, optional
        Called with the number of input frames consumed after each block.
    write_behind : bool
        Encode a compressed output (FLAC, MP3, Ogg, Opus, M4A) on a second thread while the next block is
        processed (see :mod:`stompbox.io.write_behind`): faster when a core is free. :func:`process_files`
        turns it off when its workers already keep every core busy.
    keep_tags : bool
        Copy the input's tags and cover art (:attr:`stompbox.io.ReadableAudioFile.tags`) into the output, when
        its format takes tags (MP3, FLAC, Ogg, Opus, M4A, WAV). Default True.
    output_defaults : callable, optional
        ``output_defaults(input_file, output_path) -> (bit_depth, quality)``: the bit depth and encoder quality
        used where ``bit_depth`` or ``quality`` is None. By default, the input's bit depth where the format
        allows and the writer's default quality (pedalboard's); the ``stompbox`` command passes FFmpeg's.

    Returns
    -------
    (int, int)
        Frames read and frames written.
    """
    from .io import AudioFile
    from .io.tags import carried_tags
    from .io.write_behind import behind

    plugin = _as_plugin(chain)
    if tail is not None and tail != "auto" and not 0 <= float(tail) < float("inf"):
        raise ValueError(f"tail must be 'auto' or a finite number of seconds >= 0 (got {tail!r})")
    limits.check_tail(0.0 if tail in (None, "auto") else float(tail), max_tail_seconds)  # before any file opens
    with AudioFile(os.fspath(input_path)) as source:
        reader, rate, _ = conform_reader(source, output_path, samplerate, num_channels)
        default_bits, default_quality = (output_defaults or _api_defaults)(source, os.fspath(output_path))
        bits = bit_depth or default_bits
        quality = default_quality if quality is None else quality
        tags = carried_tags(source, output_path) if keep_tags else None
        with (
            AudioFile(
                os.fspath(output_path), "w", rate, reader.num_channels, bit_depth=bits, quality=quality, tags=tags
            ) as out,
            behind(out, write_behind) as write,
        ):
            counts = stream_through(
                plugin,
                reader,
                write,
                tail_frames=0 if tail in (None, "auto") else int(round(float(tail) * rate)),
                tail="auto" if tail == "auto" else None,
                max_tail_seconds=max_tail_seconds,
                block_frames=block_frames,
                progress=progress,
            )
    return counts


# ---------------------------------------------------------------------------------------------- batches


@dataclass
class FileResult:
    """What happened to one file of a batch.

    Attributes
    ----------
    input, output : str
        The paths.
    status : str
        ``"ok"``, ``"skipped"`` (the output existed and ``skip_existing`` was set) or ``"failed"``.
    error : str or None
        One-line description of the failure.
    frames_in, frames_out : int
        Frames read and written.
    seconds : float
        Wall-clock time of the work on this file (in its worker).
    """

    input: str
    output: str
    status: str
    error: str | None = None
    frames_in: int = 0
    frames_out: int = 0
    seconds: float = 0.0


@dataclass
class BatchReport:
    """The results of :func:`process_files`, in input order, and the batch's wall-clock time."""

    results: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> list[FileResult]:
        """The files rendered successfully."""
        return [r for r in self.results if r.status == "ok"]

    @property
    def failed(self) -> list[FileResult]:
        """The files that failed, each with its error message."""
        return [r for r in self.results if r.status == "failed"]

    @property
    def skipped(self) -> list[FileResult]:
        """The files left alone because their output existed (``skip_existing``)."""
        return [r for r in self.results if r.status == "skipped"]

    def summary(self) -> str:
        """One line: counts, time and throughput."""
        rate = len(self.ok) / self.seconds if self.seconds > 0 else float("inf")
        return (
            f"{len(self.ok)} processed, {len(self.failed)} failed, {len(self.skipped)} skipped "
            f"in {self.seconds:.2f} s ({rate:.1f} files/s)"
        )


def find_audio_files(folder: str | os.PathLike[str], extensions: Sequence[str] | None = None) -> list[str]:
    """Audio files under ``folder`` (recursive, sorted) by extension; hidden files and folders are skipped."""
    wanted = {e.lower() if e.startswith(".") else "." + e.lower() for e in extensions} if extensions else None
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            ext = os.path.splitext(name)[1].lower()
            if not name.startswith(".") and (ext in wanted if wanted else ext in AUDIO_EXTENSIONS):
                found.append(os.path.join(root, name))
    return sorted(found)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


#: chains built by this worker (one per thread: a board is not shared between threads), by description
_BUILT = threading.local()


def _chain_for(description: dict[str, Any]) -> Plugin:
    """The board ``description`` describes, built once per worker thread and reset for each file."""
    key = json.dumps(description, sort_keys=True, default=str)
    cache = getattr(_BUILT, "chains", None)
    if cache is None:
        cache = _BUILT.chains = {}
    plugin = cache.get(key)
    if plugin is None:
        if len(cache) > 8:  # a long-lived worker serving many different chains
            cache.clear()
        plugin = cache[key] = _as_plugin(description)
    return plugin


def _groups(todo: list[int], workers: int) -> list[list[int]]:
    """Cut the files into tasks for ``workers`` workers: groups of up to 16 files, fewer round trips to the
    workers (the parent's CPU time and the pool's per-task cost), each a quarter of what is left per worker, so
    groups shrink towards the end and no worker sits idle while another finishes a large last group."""
    groups = []
    start = 0
    while start < len(todo):
        size = max(1, min(16, (len(todo) - start) // (4 * workers)))
        groups.append(todo[start : start + size])
        start += size
    return groups


def _work(input_path: str, output_path: str, chain: dict[str, Any], options: dict[str, Any]) -> FileResult:
    """One file, in a worker: never raises for a bad file, returns its result."""
    start = time.perf_counter()
    try:
        parent = os.path.dirname(os.path.abspath(output_path))
        os.makedirs(parent, exist_ok=True)
        frames_in, frames_out = process_file(input_path, output_path, _chain_for(chain), **options)
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the batch
        return FileResult(input_path, output_path, "failed", _one_line(error), seconds=time.perf_counter() - start)
    return FileResult(input_path, output_path, "ok", None, frames_in, frames_out, time.perf_counter() - start)


def _work_group(files: list[tuple[str, str]], chain: dict[str, Any], options: dict[str, Any]) -> list[FileResult]:
    """Several files in one task (see :func:`_work`)."""
    return [_work(src, out, chain, options) for src, out in files]


def _outputs_for(
    inputs: list[str], outputs_or_dir: Any, root: str | os.PathLike[str] | None, extension: str | None
) -> list[str]:
    if isinstance(outputs_or_dir, str | os.PathLike):
        folder = os.fspath(outputs_or_dir)
        outputs = []
        for path in inputs:
            relative = os.path.relpath(path, root) if root is not None else os.path.basename(path)
            if extension:
                relative = os.path.splitext(relative)[0] + ("" if extension.startswith(".") else ".") + extension
            outputs.append(os.path.join(folder, relative))
        seen: dict[str, str] = {}
        for src, out in zip(inputs, outputs, strict=True):
            key = os.path.abspath(out)
            if key in seen:
                raise ValueError(f"{seen[key]} and {src} would both be written to {out}")
            seen[key] = src
        return outputs
    outputs = [os.fspath(p) for p in outputs_or_dir]
    if len(outputs) != len(inputs):
        raise ValueError(f"{len(inputs)} inputs but {len(outputs)} outputs")
    return outputs


def process_files(
    inputs: Sequence[str | os.PathLike[str]],
    outputs_or_dir: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    chain: Plugin | dict[str, Any] | list[Any] | str | os.PathLike[str],
    executor: concurrent.futures.Executor | None = None,
    *,
    jobs: int | None = None,
    root: str | os.PathLike[str] | None = None,
    extension: str | None = None,
    skip_existing: bool = False,
    progress: bool = False,
    tail: str | float | None = None,
    max_tail_seconds: float = MAX_AUTO_TAIL_SECONDS,
    samplerate: float | None = None,
    num_channels: int | None = None,
    bit_depth: int | None = None,
    quality: Any = None,
    keep_tags: bool = True,
    output_defaults: Callable[[Any, str], tuple[int, Any]] | None = None,
) -> BatchReport:
    """Render many files through one chain, in parallel; one failing file does not stop the others.

    Parameters
    ----------
    inputs : sequence of paths
        Files to read.
    outputs_or_dir : sequence of paths, or a folder
        One output per input, or a folder: each output is then the input's path relative to ``root`` (its
        file name when ``root`` is None) under that folder. Missing folders are created.
    chain : Plugin, dict, list, or path of a chain file
        The effects. It is sent to the workers in its dict form, built once per worker thread and reset
        before every file.
    executor : concurrent.futures.Executor, optional
        Where the work runs: any executor (``ThreadPoolExecutor``, ``ProcessPoolExecutor``, a Dask client's
        ``get_executor()``). By default a process pool of ``jobs`` workers, created and shut down here; with
        ``jobs=1`` the files are processed one after the other in this process.
    jobs : int, optional
        Workers of the default pool (default: the number of CPUs).
    root : path, optional
        See ``outputs_or_dir``.
    extension : str, optional
        Change the outputs' extension (and so their format), e.g. ``"flac"``.
    skip_existing : bool
        Leave inputs whose output already exists (outputs are written atomically, so an existing output is a
        complete one): resuming an interrupted batch.
    progress : bool
        Show a tqdm progress bar (on stderr).
    tail, max_tail_seconds, samplerate, num_channels, bit_depth, quality, keep_tags, output_defaults
        As in :func:`process_file` (``output_defaults`` is sent to the workers: with a process pool, a
        module-level function).

    Returns
    -------
    BatchReport
        Results in input order, with ``summary()``.
    """
    start = time.perf_counter()
    limits.check_tail(0.0 if tail in (None, "auto") else float(tail), max_tail_seconds)  # once, not per file
    plugin = _as_plugin(chain)
    description = plugin.to_dict()
    sources = [os.fspath(p) for p in inputs]
    outputs = _outputs_for(sources, outputs_or_dir, root, extension)
    options = {
        "tail": tail,
        "max_tail_seconds": max_tail_seconds,
        "samplerate": samplerate,
        "num_channels": num_channels,
        "bit_depth": bit_depth,
        "quality": quality,
        "keep_tags": keep_tags,
        "output_defaults": output_defaults,
    }
    results: list[FileResult | None] = [None] * len(sources)
    todo = []
    for i, (src, out) in enumerate(zip(sources, outputs, strict=True)):
        if skip_existing and os.path.exists(out):
            results[i] = FileResult(src, out, "skipped")
        else:
            todo.append(i)
    pooled = executor is not None or ((jobs or os.cpu_count() or 1) > 1 and len(todo) > 1)
    options["write_behind"] = not pooled  # a pool's workers already keep the cores busy
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="file", leave=False)
    own_executor = None
    try:
        if executor is None and pooled:
            # The first file is rendered here, before the pool forks: the workers then inherit everything a
            # file needs (the chain's compiled kernels, the codecs' first-use set-up) instead of each paying
            # for it, and then rendering the same file themselves.
            first = todo.pop(0)
            results[first] = _work(sources[first], outputs[first], description, options)
            if bar is not None:
                bar.update(1)
            workers = min(jobs or os.cpu_count() or 1, len(todo))
            executor = own_executor = concurrent.futures.ProcessPoolExecutor(max_workers=workers)
        if executor is None:
            for i in todo:
                results[i] = _work(sources[i], outputs[i], description, options)
                if bar is not None:
                    bar.update(1)
        else:
            workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1
            groups = _groups(todo, workers)
            futures = {
                executor.submit(_work_group, [(sources[i], outputs[i]) for i in group], description, options): group
                for group in groups
            }
            for future in concurrent.futures.as_completed(futures):
                group = futures[future]
                try:
                    done = future.result()
                except Exception as error:  # noqa: BLE001 - the worker itself died (e.g. a crashed process)
                    message = f"worker failed: {_one_line(error)}"
                    done = [FileResult(sources[i], outputs[i], "failed", message) for i in group]
                for i, result in zip(group, done, strict=True):
                    results[i] = result
                if bar is not None:
                    bar.update(len(group))
    finally:
        if own_executor is not None:
            own_executor.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()
    return BatchReport([r for r in results if r is not None], time.perf_counter() - start)
