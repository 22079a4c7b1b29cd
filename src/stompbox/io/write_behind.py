"""Write-behind: a writer's ``write`` run on a thread of its own, so encoding overlaps the work that makes the
next block.

Encoders release the GIL (libsndfile's FLAC, Vorbis and LAME, PyAV's AAC), and so do stompbox's DSP kernels:
rendering a file through effects into a compressed format used one core for both, one after the other. Behind
:class:`WriteBehind`, block *k* is encoded while block *k + 1* is processed; a 120-s FLAC render through
Distortion, Delay and Reverb took 0.66 s in line and 0.43 s this way. The bytes written are the same.

:func:`behind` decides per writer: WAV and AIFF writing is little more than a copy, and handing blocks to a
thread would cost more than it saves (200 two-second WAVs went 8 % slower). Rendering 200 two-second files to
FLAC in one process went from 90 to 110 files a second.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import numpy as np

_DONE = object()


class WriteBehind:
    """Call ``write`` with each block on a worker thread, in order, at most ``depth`` blocks behind.

    Use it as a context manager around the producing loop::

        with AudioFile(path, "w", rate, channels) as out, WriteBehind(out.write) as write:
            for block in blocks:
                write(block)

    Each block is copied when handed over (the producer may reuse its array). Memory is bounded by ``depth``
    blocks. An error of ``write`` is raised in the producer by its next ``write()`` or at the end of the
    ``with`` block; an error in the producer stops the worker (blocks not yet written are dropped) and
    propagates. Leaving the block waits until every block has been written.

    Parameters
    ----------
    write : callable
        Called with each block, in order, on the worker thread.
    depth : int
        Blocks that may wait for the worker (>= 1).
    """

    def __init__(self, write: Callable[[np.ndarray], Any], depth: int = 2) -> None:
        if depth < 1:
            raise ValueError(f"depth must be at least 1 (got {depth})")
        self._write = write
        self._queue: queue.Queue[Any] = queue.Queue(depth)
        self._error: BaseException | None = None
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="stompbox-write-behind", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            block = self._queue.get()
            if block is _DONE:
                return
            if self._error is not None or self._stop:
                continue  # drain: the producer is told at its next write or at the end
            try:
                self._write(block)
            except BaseException as error:  # noqa: BLE001 - handed to the producer's thread
                self._error = error

    def _raise_pending(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def __call__(self, block: np.ndarray) -> None:
        """Hand ``block`` to the worker (waits while ``depth`` blocks are already waiting)."""
        self._raise_pending()
        self._queue.put(np.array(block, copy=True))

    write = __call__

    def __enter__(self) -> WriteBehind:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None:
            self._stop = True
        self._queue.put(_DONE)
        self._thread.join()
        if exc_type is None:
            self._raise_pending()


@contextlib.contextmanager
def behind(writer: Any, enabled: bool = True, depth: int = 2) -> Iterator[Callable[[np.ndarray], Any]]:
    """The ``write`` to use for ``writer`` (a :class:`~stompbox.io.WriteableAudioFile`): a :class:`WriteBehind`
    when its format is compressed (FLAC, MP3, Ogg, Opus, M4A) and the machine has a second core, else its own
    ``write`` (also when not ``enabled``: a caller whose workers already keep every core busy, where the extra
    thread only competes; 200 two-second files to FLAC by two processes on two cores went 5 % slower with it)."""
    settings = getattr(writer, "_settings", None)
    if not enabled or (os.cpu_count() or 1) < 2 or getattr(settings, "format", "wav") in ("wav", "aiff"):
        yield writer.write
        return
    with WriteBehind(writer.write, depth) as write:
        yield write
