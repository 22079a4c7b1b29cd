"""The exceptions of the plugin layer (defined in ``stompbox._base.errors``; this path is kept for imports)."""

from __future__ import annotations

from .._base.errors import (
    AbstractPluginError,
    ChoiceError,
    ClosedError,
    DuplicatePluginError,
    LayoutError,
    StompboxError,
)

__all__ = ["AbstractPluginError", "ChoiceError", "ClosedError", "DuplicatePluginError", "LayoutError", "StompboxError"]
