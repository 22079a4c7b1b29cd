"""One helper thread for the I/O layer's two-part jobs: the second half of a long WAV read, the next step of a
long quantised write. NumPy, ``preadv`` and libsndfile release the GIL, so the two parts run at once.

Readers and writers share the thread: a job waits while another reader's or writer's job runs. A forked child
gets its own thread: the parent's does not exist there, and a job given to it would wait forever.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

_HELPER: tuple[int, ThreadPoolExecutor] | None = None  # (pid, executor)


def helper() -> ThreadPoolExecutor:
    """The helper thread of this process (made on first use)."""
    global _HELPER
    if _HELPER is None or _HELPER[0] != os.getpid():
        _HELPER = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="stompbox-io"))
    return _HELPER[1]
