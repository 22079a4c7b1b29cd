"""The core of stompbox: the Plugin contract, parameters, the plugin registry, layout rules and the Numba guard."""

from .errors import ClosedError, DuplicatePluginError, LayoutError, StompboxError
from .params import Param, ParamSpec
from .plugin import Plugin
from .registry import UnknownPluginError

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
