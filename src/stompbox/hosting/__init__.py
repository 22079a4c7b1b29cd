"""Third-party plugins: :func:`load_plugin`, :class:`VST3Plugin`, :func:`find_plugins`.

The VST3 host is imported on first use (``import stompbox`` stays light).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from .external import AudioProcessorParameter, ExternalPlugin

_LAZY = {"VST3Plugin": ".vst3", "PluginLoadError": ".vst3.module"}

__all__ = ["AudioProcessorParameter", "ExternalPlugin", "VST3Plugin", "find_plugins", "load_plugin"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def find_plugins() -> list[str]:
    """Paths of the VST3 plugins installed in the standard folders (``~/.vst3``, ``/usr/lib/vst3``,
    ``/usr/local/lib/vst3``)."""
    from .vst3 import installed_vst3_plugins

    return installed_vst3_plugins()


def load_plugin(
    path_to_plugin_file: str | os.PathLike[str],
    parameter_values: dict[str, Any] | None = None,
    plugin_name: str | None = None,
    initialization_timeout: float = 10.0,
) -> ExternalPlugin:
    """Load a plugin file (a VST3 bundle on Linux) and return it as a stompbox plugin.

    Parameters
    ----------
    path_to_plugin_file : str or os.PathLike
        Path of a ``.vst3`` bundle (or its shared object).
    parameter_values : dict, optional
        Parameter values to set after loading, by Python name.
    plugin_name : str, optional
        Which plugin to load from a file that holds several (``ValueError`` listing them otherwise).
    initialization_timeout : float
        Seconds; accepted for compatibility (loading is synchronous).

    Raises
    ------
    ImportError
        The path does not exist or is not a loadable plugin ("Failed to load plugin as VST3Plugin. Errors
        were: ...").
    ValueError
        A file with several plugins and no ``plugin_name``, or a name it does not hold.
    """
    from .vst3 import VST3Plugin

    errors = []
    for cls in (VST3Plugin,):
        try:
            return cls(
                path_to_plugin_file,
                parameter_values=parameter_values,
                plugin_name=plugin_name,
                initialization_timeout=initialization_timeout,
            )
        except ImportError as e:
            errors.append(f"{cls.__name__}: {e}")
    raise ImportError("Failed to load plugin as VST3Plugin. Errors were:\n\t" + "\n\t".join(errors))
