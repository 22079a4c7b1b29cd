"""The Numba guard: every per-sample kernel in stompbox is compiled through :func:`kernel`.

Kernels are ``@njit(nogil=True, cache=True)``. Numba's on-disk cache raises at decoration time when neither the
package folder, nor the user cache (``~/.cache``), nor ``NUMBA_CACHE_DIR`` is writable (a read-only install, a
locked-down container). Before Numba is first imported we check for that case and point ``NUMBA_CACHE_DIR`` at a
private temporary folder; if caching still fails, the kernel is compiled without a cache, which costs compile time
but never an import error.

A kernel whose machine code is in the cache is loaded without Numba's full target set-up (see
:func:`_fast_cache_load`): a process that only runs cached kernels starts about 0.09 s sooner.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])

#: A scalar argument of a kernel: a Python number or a NumPy scalar. Kernels are compiled per argument type, so a
#: float32 scalar (``np.float32(x)``) is passed as one on purpose: the kernel then computes in single precision.
Number: TypeAlias = "float | np.floating[Any]"
#: An integer argument or result of a kernel: a Python int or a NumPy integer (an int64 ring position, say).
Integer: TypeAlias = "int | np.integer[Any]"

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _writable(path: Path) -> bool:
    """Whether files can be created in ``path`` (creating it if it is missing)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".stompbox-probe-"):
            pass
        return True
    except OSError:
        return False


def _choose_cache_dir() -> str | None:
    """Return a cache dir to force through ``NUMBA_CACHE_DIR``, or None when Numba's defaults work."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        if _writable(Path(os.environ["NUMBA_CACHE_DIR"])):
            return None
    elif _writable(_PACKAGE_DIR / "core" / "__pycache__"):
        return None
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        if _writable(Path(xdg) / "numba"):
            return None
    fallback = Path(tempfile.gettempdir()) / f"stompbox-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    return str(fallback) if _writable(fallback) else ""


_guarded = False


def _guard() -> None:
    global _guarded
    if _guarded:
        return
    _guarded = True
    cache_dir = _choose_cache_dir()
    if cache_dir:
        os.environ["NUMBA_CACHE_DIR"] = cache_dir
        import sys

        if "numba" in sys.modules:  # imported before us: numba.config has already read the environment
            import numba

            numba.config.CACHE_DIR = cache_dir
    if FAST_LOAD:
        _start_runtime()
    else:
        _import_arraymath_quietly()


def _start_runtime() -> None:
    """Start Numba's memory manager (NRT) now, while the first effect class is imported: it compiles a few
    functions (~25 ms) that every kernel's machine code links against, and doing it here keeps that one-off cost
    out of the first ``process()`` call, which may sit in an audio callback or a service's first request."""
    try:
        from numba.core.registry import cpu_target
        from numba.core.runtime import rtsys

        rtsys.initialize(cpu_target.target_context)
    except Exception:  # pragma: no cover - another Numba layout: the first load or compilation starts it
        pass


def loaded() -> bool:
    """Whether stompbox's Numba kernels are set up in this process (an effect module has been imported), so
    that calling one costs no more than the call and, the first time, loading its machine code from the cache.
    The I/O layer uses its compiled conversions only then: it never loads Numba itself (Numba and LLVM take
    about 110 MB of memory and a tenth of a second to load, more than the conversions of an hour of audio would
    save)."""
    return _guarded


def _import_arraymath_quietly() -> None:
    """Import ``numba.np.arraymath`` without its BLAS probe, before Numba's first compilation in this process.

    Numba's target set-up imports ``numba.np.arraymath``, which imports ``scipy.linalg`` (~0.2 s and tens of MB)
    just to learn whether a BLAS exists. The probe is answered by whether SciPy is installed at all; Numba's own
    ``ensure_blas()`` still runs, and imports SciPy, the first time compiled code actually calls a BLAS routine.
    """
    import importlib
    import importlib.util
    import sys

    if "numba.np.arraymath" in sys.modules:
        return
    try:
        linalg: Any = importlib.import_module("numba.np.linalg")
        original = linalg.ensure_blas
    except (ImportError, AttributeError):  # another Numba layout: let Numba probe as it always does
        return
    if not callable(original):
        return
    have_scipy = importlib.util.find_spec("scipy") is not None

    def _probe() -> None:
        if not have_scipy:
            raise ImportError("scipy 0.16+ is required for linear algebra")

    linalg.ensure_blas = _probe
    try:
        arraymath: Any = importlib.import_module("numba.np.arraymath")
    except ImportError:  # pragma: no cover - Numba reports it again where it matters
        return
    finally:
        linalg.ensure_blas = original
    if getattr(arraymath, "ensure_blas", None) is _probe:
        arraymath.ensure_blas = original


#: Off with ``STOMPBOX_NUMBA_FAST_LOAD=0``: every cache load then sets up Numba's whole target first, as Numba does.
FAST_LOAD = os.environ.get("STOMPBOX_NUMBA_FAST_LOAD", "1") != "0"


def _fast_cache_load(dispatcher: Any) -> None:
    """Let ``dispatcher`` load its cached machine code without setting up Numba's whole compilation target.

    Numba refreshes its CPU target before every cache load: it imports and installs the typing and lowering
    registries of everything Numba can compile (about 0.1 s, once per process), although machine code loaded
    from the cache only needs the symbols it links against. Those are Numba's C helpers, Python's exception
    objects and the math library (registered when the target context is created), and the NRT memory manager's
    (registered by ``rtsys.initialize``, which this calls). A miss (a signature not in the cache, or a cache
    written by another Numba) goes the ordinary way: the compiler refreshes the whole target before compiling.

    Only stompbox's own kernels load this way (the cache object is patched per dispatcher), and only with the
    Numba cache layout this was written against; anything else keeps Numba's behaviour.
    """
    if not FAST_LOAD:
        return
    cache: Any = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "_load_overload", None)
    guard = getattr(cache, "_guard_against_spurious_io_errors", None)
    if not (callable(load) and callable(guard)):
        return
    try:
        from numba.core.runtime import rtsys
    except ImportError:  # pragma: no cover - another Numba layout
        return
    if not callable(getattr(rtsys, "initialize", None)):  # pragma: no cover - another Numba layout
        return

    def load_overload(sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)  # the NRT's symbols: allocation, reference counts
        with guard():
            found = load(sig, target_context)
        if found is None:  # compiling after all: the compiler sets up the whole target first
            _import_arraymath_quietly()
        return found

    cache.load_overload = load_overload


def kernel(fn: F) -> F:
    """Compile ``fn`` as a Numba kernel: ``njit(nogil=True, cache=True)``, falling back to no cache.

    Use it as a decorator on module-level functions that loop over samples. The compiled function releases the
    GIL, so Python threads can run DSP on several cores at once.
    """
    _guard()
    from numba import njit

    try:
        dispatcher = njit(nogil=True, cache=True)(fn)
    except (RuntimeError, OSError):  # no usable cache locator: compile in memory instead
        _import_arraymath_quietly()
        return njit(nogil=True, cache=False)(fn)  # type: ignore[no-any-return]
    _fast_cache_load(dispatcher)
    return dispatcher  # type: ignore[no-any-return]
