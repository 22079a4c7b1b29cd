"""Loading third-party plugins in this process: which format a path or URI is, where installed plugins are,
and the loader that tries the format's host (:func:`load_in_process`).

It sits above the format hosts (:mod:`~stompbox.hosting.vst3`, :mod:`~stompbox.hosting.lv2`,
:mod:`~stompbox.hosting.ladspa`, each imported when first needed) and below :mod:`~stompbox.hosting.isolated`
and :func:`stompbox.hosting.load_plugin`, which add crash isolation.
"""

from __future__ import annotations

import os
from typing import Any

from .._base.errors import PluginLoadError
from .external import ExternalPlugin, is_plugin_uri

__all__ = ["find_plugins", "is_plugin_uri", "load_in_process", "plugin_format"]


def find_plugins() -> list[str]:
    """Everything :func:`load_plugin` can load from the standard places: the paths of the VST3 bundles
    (``~/.vst3``, ``/usr/lib/vst3``, ``/usr/local/lib/vst3``), then the URIs of the LV2 plugins lilv finds
    (``LV2_PATH`` or ``~/.lv2``, ``/usr/lib/lv2``, ...), then the paths of the LADSPA libraries
    (``LADSPA_PATH`` or ``~/.ladspa``, ``/usr/lib/ladspa``, ...; a library may hold several plugins, chosen
    with ``plugin_name``). A format whose host library is missing (liblilv) is left out."""
    from .ladspa import installed_ladspa_plugins
    from .vst3 import installed_vst3_plugins

    found = installed_vst3_plugins()
    try:
        from .lv2 import installed_lv2_plugins

        found += installed_lv2_plugins()
    except ImportError:
        pass
    return found + installed_ladspa_plugins()


def plugin_format(target: str | os.PathLike[str]) -> str:
    """``"vst3"``, ``"lv2"`` or ``"ladspa"``: the format :func:`load_plugin` will try for a path or URI."""
    text = os.fspath(target)
    if text.rstrip("/").endswith(".vst3") or ".vst3/" in text:
        return "vst3"
    if is_plugin_uri(text):
        return "lv2"
    path = text.rstrip("/")
    if os.path.isdir(path):
        return "lv2" if os.path.isfile(os.path.join(path, "manifest.ttl")) else "vst3"
    if os.path.isfile(os.path.join(os.path.dirname(path), "manifest.ttl")):
        return "lv2"
    if path.endswith(".so") and os.path.isfile(path):
        try:
            from .ladspa import _descriptors

            _descriptors(path)
            return "ladspa"
        except ImportError:
            return "vst3"
    if path.endswith(".so") and os.sep not in path and not os.path.exists(path):
        from .ladspa import installed_ladspa_plugins

        if any(os.path.basename(p) == path for p in installed_ladspa_plugins()):
            return "ladspa"
    return "vst3"


def load_in_process(
    path_to_plugin_file: str | os.PathLike[str],
    parameter_values: dict[str, Any] | None = None,
    plugin_name: str | None = None,
    initialization_timeout: float = 10.0,
) -> ExternalPlugin:
    """Load a VST3, LV2 or LADSPA plugin in this process (see :func:`stompbox.hosting.load_plugin`)."""
    kind = plugin_format(path_to_plugin_file)
    if kind == "lv2":
        from .lv2 import LV2Plugin

        candidates: tuple[type, ...] = (LV2Plugin,)
    elif kind == "ladspa":
        from .ladspa import LADSPAPlugin

        candidates = (LADSPAPlugin,)
    else:
        from .vst3 import VST3Plugin

        candidates = (VST3Plugin,)
    errors = []
    for cls in candidates:
        try:
            plugin: ExternalPlugin = cls(
                path_to_plugin_file,
                parameter_values=parameter_values,
                plugin_name=plugin_name,
                initialization_timeout=initialization_timeout,
            )
            return plugin
        except ImportError as e:
            errors.append(f"{cls.__name__}: {e}")
    names = ", ".join(c.__name__ for c in candidates)
    raise PluginLoadError(f"Failed to load plugin as {names}. Errors were:\n\t" + "\n\t".join(errors))
