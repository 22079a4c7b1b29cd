"""Third-party plugins: :func:`load_plugin`, :func:`find_plugins`, :class:`VST3Plugin`, :class:`LV2Plugin`,
:class:`LADSPAPlugin` and crash-isolated plugins (:class:`IsolatedPlugin`).

The VST3 host is imported on first use (``import stompbox`` stays light).
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from .._base.errors import PluginLoadError
from .external import AudioProcessorParameter, ExternalPlugin, ExternalPluginReloadType

_LAZY = {
    "VST3Plugin": ".vst3",
    "LV2Plugin": ".lv2",
    "LADSPAPlugin": ".ladspa",
    "IsolatedPlugin": ".isolated",
    "PluginCrashedError": ".isolated",
    "PluginTimeoutError": ".isolated",
}

__all__ = [
    "AudioProcessorParameter",
    "ExternalPlugin",
    "ExternalPluginReloadType",
    "IsolatedPlugin",
    "LADSPAPlugin",
    "LV2Plugin",
    "PluginCrashedError",
    "PluginTimeoutError",
    "VST3Plugin",
    "find_plugins",
    "load_plugin",
]


if TYPE_CHECKING:  # the lazily loaded names, for type checkers and IDEs
    from .isolated import IsolatedPlugin, PluginCrashedError, PluginTimeoutError
    from .ladspa import LADSPAPlugin
    from .lv2 import LV2Plugin
    from .vst3 import VST3Plugin


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def is_plugin_uri(text: str) -> bool:
    """Whether ``text`` names a plugin by URI (an LV2 plugin: ``http://...``, ``urn:...``) rather than by file."""
    return "://" in text or text.startswith("urn:")


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


def load_plugin(
    path_to_plugin_file: str | os.PathLike[str],
    parameter_values: dict[str, Any] | None = None,
    plugin_name: str | None = None,
    initialization_timeout: float = 10.0,
    *,
    isolated: bool = False,
    timeout: float | None = 10.0,
) -> ExternalPlugin:
    """Load a VST3, LV2 or LADSPA plugin and return it as a stompbox plugin.

    Parameters
    ----------
    path_to_plugin_file : str or os.PathLike
        A ``.vst3`` bundle (or its shared object); an LV2 plugin URI (``"urn:zamaudio:ZamComp"``) or bundle
        folder (``/usr/lib/lv2/ZamComp.lv2``); or a LADSPA library (``/usr/lib/ladspa/amp_1181.so``).
    parameter_values : dict, optional
        Parameter values to set after loading, by Python name.
    plugin_name : str, optional
        Which plugin to load from a file that holds several (``ValueError`` listing them otherwise): a VST3
        class name, an LV2 plugin name or URI, a LADSPA label, name or unique id.
    initialization_timeout : float
        Seconds. In-process loading is synchronous and ignores it; an isolated plugin that takes longer to
        load raises :class:`PluginTimeoutError`.
    isolated : bool
        Run the plugin in a child process (see :class:`IsolatedPlugin`): a crash or hang in the plugin raises
        :class:`PluginCrashedError` / :class:`PluginTimeoutError` instead of taking Python down.
    timeout : float or None
        Isolated plugins only: seconds any single call may take before the child is killed (None: wait
        forever).

    Raises
    ------
    PluginLoadError
        An ``ImportError``: the path does not exist or is not a loadable plugin ("Failed to load plugin as
        VST3Plugin. Errors were: ...").
    ValueError
        A file with several plugins and no ``plugin_name``, or a name it does not hold.
    """
    if isolated:
        from .isolated import IsolatedPlugin

        return IsolatedPlugin(
            path_to_plugin_file,
            parameter_values=parameter_values,
            plugin_name=plugin_name,
            initialization_timeout=initialization_timeout,
            timeout=timeout,
        )
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
            return cls(
                path_to_plugin_file,
                parameter_values=parameter_values,
                plugin_name=plugin_name,
                initialization_timeout=initialization_timeout,
            )
        except ImportError as e:
            errors.append(f"{cls.__name__}: {e}")
    names = ", ".join(c.__name__ for c in candidates)
    raise PluginLoadError(f"Failed to load plugin as {names}. Errors were:\n\t" + "\n\t".join(errors))
