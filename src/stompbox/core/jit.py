"""The Numba guard: every per-sample kernel in stompbox is compiled through :func:`kernel`.

Kernels are ``@njit(nogil=True, cache=True)``. Numba's on-disk cache raises at decoration time when neither the
package folder, nor the user cache (``~/.cache``), nor ``NUMBA_CACHE_DIR`` is writable (a read-only install, a
locked-down container). Before Numba is first imported we check for that case and point ``NUMBA_CACHE_DIR`` at a
private temporary folder; if caching still fails, the kernel is compiled without a cache, which costs compile time
but never an import error.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

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
    _load_numba_target()


def loaded() -> bool:
    """Whether stompbox's Numba kernels are set up in this process (an effect module has been imported), so
    that calling one costs no more than the call. The I/O layer uses its compiled conversions only then: it never
    loads Numba itself (Numba and LLVM take about 110 MB of memory and a quarter of a second to load, more
    than the conversions of an hour of audio would save)."""
    return _guarded


def _load_numba_target() -> None:
    """Load Numba's CPU typing and lowering registries now, while the first effect class is imported.

    Numba does this once per process on the first call of any compiled function, even one whose machine code comes
    from the on-disk cache, and it takes most of a second's quarter. Doing it when stompbox's kernels are defined
    keeps that one-off cost out of the first ``process()`` call, which may sit in an audio callback or the first
    request of a service. Its BLAS probe (``numba.np.arraymath`` imports ``scipy.linalg`` just to learn whether a
    BLAS exists, another ~0.2 s) is answered by whether SciPy is installed at all: Numba's own ``ensure_blas()``
    still runs, and imports SciPy, the first time jitted code actually calls a BLAS routine.
    """
    import importlib
    import importlib.util
    import sys

    try:
        from numba.core.registry import cpu_target
    except ImportError:  # pragma: no cover - numba is a hard dependency
        return
    if "numba.np.arraymath" not in sys.modules:
        try:
            linalg = importlib.import_module("numba.np.linalg")
            original = linalg.ensure_blas
        except (ImportError, AttributeError):  # another Numba layout: let Numba probe as it always does
            linalg = original = None
        if linalg is not None and callable(original):
            have_scipy = importlib.util.find_spec("scipy") is not None

            def _probe() -> None:
                if not have_scipy:
                    raise ImportError("scipy 0.16+ is required for linear algebra")

            linalg.ensure_blas = _probe
            try:
                arraymath = importlib.import_module("numba.np.arraymath")
            finally:
                linalg.ensure_blas = original
            if getattr(arraymath, "ensure_blas", None) is _probe:
                arraymath.ensure_blas = original
    try:
        cpu_target.target_context.refresh()
    except Exception:  # pragma: no cover - the first compiled call refreshes again and reports the error there
        pass


def kernel(fn: F) -> F:
    """Compile ``fn`` as a Numba kernel: ``njit(nogil=True, cache=True)``, falling back to no cache.

    Use it as a decorator on module-level functions that loop over samples. The compiled function releases the
    GIL, so Python threads can run DSP on several cores at once.
    """
    _guard()
    from numba import njit

    try:
        return njit(nogil=True, cache=True)(fn)  # type: ignore[no-any-return]
    except (RuntimeError, OSError):  # no usable cache locator: compile in memory instead
        return njit(nogil=True, cache=False)(fn)  # type: ignore[no-any-return]
