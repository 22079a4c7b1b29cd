"""A VST3 host in pure Python (ctypes): no compiler and no SDK needed at install time."""

from ..._base.errors import PluginLoadError
from .plugin import VST3Plugin, installed_vst3_plugins

__all__ = ["PluginLoadError", "VST3Plugin", "installed_vst3_plugins"]
