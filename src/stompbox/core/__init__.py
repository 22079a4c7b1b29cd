"""The core of stompbox: the Plugin contract, parameters, the plugin registry, layout rules and the Numba guard.

:class:`Plugin`, :class:`Param` and :class:`ParamSpec` (and NumPy with them) are loaded on first use, so that
``import stompbox`` and the registry's look-ups by name stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._base.lazy import lazy_names
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


__getattr__, __dir__ = lazy_names(globals(), _LAZY_NAMES)
