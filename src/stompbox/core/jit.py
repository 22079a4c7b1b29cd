"""The Numba guard (defined in ``stompbox._base.jit``; this path is kept for imports)."""

from __future__ import annotations

from .._base.jit import Integer, Number, kernel, loaded

__all__ = ["Integer", "Number", "kernel", "loaded"]
