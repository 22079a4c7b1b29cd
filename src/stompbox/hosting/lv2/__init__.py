"""``LV2Plugin``: an LV2 effect or instrument hosted through ctypes over liblilv (Debian ``liblilv-0-0``).

lilv reads the plugins' Turtle descriptions and loads their libraries; its ``lilv_instance_*`` helpers are
static inline functions in the C header, so this host calls the plugin's ``LV2_Descriptor`` (``connect_port``,
``activate``, ``run``, ``deactivate``) itself. Host features offered: ``urid:map``/``urid:unmap``,
``options:options`` (block lengths, sequence size, sample rate), ``buf-size:boundedBlockLength``,
``worker:schedule`` (run synchronously), ``log:log`` (ignored), ``state:loadDefaultState``.

Ports: control inputs become :attr:`parameters` (name, unit, range, default, toggle, integer, enumeration from
the description); control outputs are readable in :attr:`control_outputs`; audio ports of any count are mapped
onto the stream's channels (see :class:`LV2Plugin`); atom inputs get an ``LV2_Atom_Sequence`` (MIDI for
instruments), atom outputs an empty chunk to write into, CV inputs a buffer holding their default.
"""

from ..._base.errors import PluginLoadError
from .plugin import LV2Plugin
from .world import installed_lv2_plugins, lilv, lv2_plugin_names

__all__ = ["LV2Plugin", "PluginLoadError", "installed_lv2_plugins", "lilv", "lv2_plugin_names"]
