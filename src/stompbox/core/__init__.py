"""The core of stompbox: the Plugin contract, parameters, the plugin registry, layout rules and the Numba guard.

:class:`Plugin`, :class:`Param` and :class:`ParamSpec` (and NumPy with them) are loaded on first use, so that
``import stompbox`` and the registry's look-ups by name stay light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import registry
from .errors import ClosedError, DuplicatePluginError, LayoutError, StompboxError
from .registry import UnknownPluginError

# names loaded on first use: name -> module
_LAZY_NAMES: dict[str, str] = {"Param": ".params", "ParamSpec": ".params", "Plugin": ".plugin"}

if TYPE_CHECKING:
    from .params import Param, ParamSpec
    from .plugin import Plugin

__all__ = [
    "ClosedError",
    "DuplicatePluginError",
    "LayoutError",
    "Param",
    "ParamSpec",
    "Plugin",
    "StompboxError",
    "UnknownPluginError",
    "registry",
]


def __getattr__(name: str) -> Any:
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
