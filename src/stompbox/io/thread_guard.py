"""One operation at a time on an audio file object: a second thread gets a ``RuntimeError``, not a crash.

A decoder, an encoder or a resampler stream has one position and one set of buffers; two threads driving it at
once would corrupt them (the resampler's C library aborts the process). pedalboard's answer is kept: an
operation that moves a file's state (read, seek, write, flush, close) takes the file's lock *without waiting*,
and raises ``RuntimeError`` with pedalboard's text when another thread holds it. Code that shares one file
between threads must bring its own lock; it then sees no error. The same thread may nest operations (the lock
is reentrant), as a wrapping reader does when it reads the file it wraps.
"""

from __future__ import annotations

import threading
from typing import Any

READING = (
    "Another thread is currently reading from this AudioFile. Note that using multiple concurrent readers on the "
    "same AudioFile object will produce nondeterministic results."
)
WRITING = (
    "Another thread is currently writing to this AudioFile. Note that using multiple concurrent writers on the "
    "same AudioFile object will produce nondeterministic results."
)
CLOSING_READER = (
    "Another thread is currently reading from this AudioFile; it cannot be closed until the other thread "
    "completes its operation."
)
CLOSING_WRITER = (
    "Another thread is currently writing to this AudioFile; it cannot be closed until the other thread "
    "completes its operation."
)


class Exclusive:
    """``with guard:`` holds ``lock`` for the block, or raises ``RuntimeError(message)`` at once when another
    thread holds it."""

    __slots__ = ("_lock", "_message")

    def __init__(self, lock: Any, message: str) -> None:
        self._lock = lock
        self._message = message

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise RuntimeError(self._message)

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class Guards:
    """The lock of one file object and its guards: ``reading``/``writing`` for operations, ``closing`` for
    ``close()``, and ``lock`` itself (waited for) for quick reads of the state such as ``tell()``."""

    __slots__ = ("lock", "operation", "closing")

    def __init__(self, writer: bool = False) -> None:
        self.lock = threading.RLock()
        self.operation = Exclusive(self.lock, WRITING if writer else READING)
        self.closing = Exclusive(self.lock, CLOSING_WRITER if writer else CLOSING_READER)
