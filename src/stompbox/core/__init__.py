"""The core of stompbox: the Plugin contract, parameters, layout rules and the Numba guard."""

from .errors import ClosedError, DuplicatePluginError, LayoutError, StompboxError
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
]
