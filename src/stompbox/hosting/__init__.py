"""Third-party plugins: :func:`load_plugin`, :func:`find_plugins`, :class:`VST3Plugin`, :class:`LV2Plugin`,
:class:`LADSPAPlugin` and crash-isolated plugins (:class:`IsolatedPlugin`).

The VST3 host is imported on first use (``import stompbox`` stays light).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .._base.errors import PluginLoadError
from .._base.lazy import lazy_names
from .external import AudioProcessorParameter, ExternalPlugin, ExternalPluginReloadType, set_chain_loader
from .loading import find_plugins, is_plugin_uri, load_in_process, plugin_format

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
    "PluginLoadError",
    "PluginTimeoutError",
    "VST3Plugin",
    "find_plugins",
    "is_plugin_uri",
    "load_plugin",
    "plugin_format",
]


if TYPE_CHECKING:  # the lazily loaded names, for type checkers and IDEs
    from .isolated import IsolatedPlugin, PluginCrashedError, PluginTimeoutError
    from .ladspa import LADSPAPlugin
    from .lv2 import LV2Plugin
    from .vst3 import VST3Plugin


__getattr__, __dir__ = lazy_names(globals(), _LAZY)


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
    return load_in_process(
        path_to_plugin_file,
        parameter_values=parameter_values,
        plugin_name=plugin_name,
        initialization_timeout=initialization_timeout,
    )


# a chain file's hosted plugin is loaded by load_plugin (ExternalPlugin._from_dict calls it; the base class of the
# hosts cannot import the loader above it)
set_chain_loader(load_plugin)
