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

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np

from .._base.errors import PluginLoadError
from .external import ControlPort, ControlPortPlugin, map_inputs, map_outputs

#: largest block handed to the plugin in one run() (announced as buf-size:maxBlockLength)
MAX_BLOCK = 8192
#: bytes of each atom port buffer (announced as buf-size:sequenceSize)
ATOM_CAPACITY = 1 << 18

LV2 = "http://lv2plug.in/ns/lv2core#"
ATOM = "http://lv2plug.in/ns/ext/atom#"
BUFSZ = "http://lv2plug.in/ns/ext/buf-size#"
URID = "http://lv2plug.in/ns/ext/urid#"
OPTIONS = "http://lv2plug.in/ns/ext/options#"
WORKER = "http://lv2plug.in/ns/ext/worker#"
STATE = "http://lv2plug.in/ns/ext/state#"
PPROPS = "http://lv2plug.in/ns/ext/port-props#"
UNITS = "http://lv2plug.in/ns/extensions/units#"
MIDI_EVENT = "http://lv2plug.in/ns/ext/midi#MidiEvent"
PRESET = "http://lv2plug.in/ns/ext/presets#Preset"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

#: features this host provides (a plugin that requires any other one cannot be loaded)
SUPPORTED_FEATURES = frozenset(
    {
        URID + "map",
        URID + "unmap",
        OPTIONS + "options",
        BUFSZ + "boundedBlockLength",
        WORKER + "schedule",
        "http://lv2plug.in/ns/ext/log#log",
        STATE + "loadDefaultState",
        LV2 + "hardRTCapable",
        LV2 + "isLive",
        LV2 + "inPlaceBroken",
        "http://lv2plug.in/ns/ext/port-props#supportsStrictBounds",
    }
)

UNIT_SYMBOLS = {
    "db": "dB",
    "hz": "Hz",
    "khz": "kHz",
    "mhz": "MHz",
    "ms": "ms",
    "s": "s",
    "min": "min",
    "pc": "%",
    "bpm": "BPM",
    "cent": "ct",
    "semitone12TET": "semi",
    "oct": "oct",
    "degree": "deg",
    "frame": "frames",
    "midiNote": "note",
    "bar": "bars",
    "beat": "beats",
    "cm": "cm",
    "m": "m",
    "km": "km",
    "mm": "mm",
    "inch": "in",
    "mile": "mi",
    "coef": "",
}


# ---------------------------------------------------------------------------------------------------- C ABI
class LV2_Descriptor(ctypes.Structure):
    _fields_ = [
        ("URI", ctypes.c_char_p),
        ("instantiate", ctypes.c_void_p),
        ("connect_port", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)),
        ("activate", ctypes.c_void_p),
        ("run", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32)),
        ("deactivate", ctypes.c_void_p),
        ("cleanup", ctypes.c_void_p),
        ("extension_data", ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p)),
    ]


class LilvInstance(ctypes.Structure):
    _fields_ = [
        ("lv2_descriptor", ctypes.POINTER(LV2_Descriptor)),
        ("lv2_handle", ctypes.c_void_p),
        ("pimpl", ctypes.c_void_p),
    ]


class LV2_Feature(ctypes.Structure):
    _fields_ = [("URI", ctypes.c_char_p), ("data", ctypes.c_void_p)]


MAP_FN = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p, ctypes.c_char_p)
UNMAP_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32)


class LV2_URID_Map(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_void_p), ("map", MAP_FN)]


class LV2_URID_Unmap(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_void_p), ("unmap", UNMAP_FN)]


class LV2_Options_Option(ctypes.Structure):
    _fields_ = [
        ("context", ctypes.c_uint32),
        ("subject", ctypes.c_uint32),
        ("key", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("type", ctypes.c_uint32),
        ("value", ctypes.c_void_p),
    ]


RESPOND_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)
SCHEDULE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)


class LV2_Worker_Schedule(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_void_p), ("schedule_work", SCHEDULE_FN)]


class LV2_Worker_Interface(ctypes.Structure):
    _fields_ = [
        (
            "work",
            ctypes.CFUNCTYPE(
                ctypes.c_int, ctypes.c_void_p, RESPOND_FN, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p
            ),
        ),
        ("work_response", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)),
        ("end_run", ctypes.c_void_p),
    ]


LOG_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p)
VLOG_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_void_p)


class LV2_Log_Log(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_void_p), ("printf", LOG_FN), ("vprintf", VLOG_FN)]


def _ignore_log(*_args: Any) -> int:
    return 0


_LOG_PRINTF = LOG_FN(_ignore_log)
_LOG_VPRINTF = VLOG_FN(_ignore_log)


SET_VALUE_FN = ctypes.CFUNCTYPE(
    None, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32
)
GET_VALUE_FN = ctypes.CFUNCTYPE(
    ctypes.c_void_p,
    ctypes.c_char_p,
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_uint32),
    ctypes.POINTER(ctypes.c_uint32),
)

_P = ctypes.c_void_p
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "lilv_world_new": (_P, []),
    "lilv_world_load_all": (None, [_P]),
    "lilv_world_load_bundle": (None, [_P, _P]),
    "lilv_world_load_resource": (ctypes.c_int, [_P, _P]),
    "lilv_world_get_all_plugins": (_P, [_P]),
    "lilv_world_get": (_P, [_P, _P, _P, _P]),
    "lilv_new_uri": (_P, [_P, ctypes.c_char_p]),
    "lilv_new_file_uri": (_P, [_P, ctypes.c_char_p, ctypes.c_char_p]),
    "lilv_node_free": (None, [_P]),
    "lilv_node_as_string": (ctypes.c_char_p, [_P]),
    "lilv_node_as_uri": (ctypes.c_char_p, [_P]),
    "lilv_node_as_float": (ctypes.c_float, [_P]),
    "lilv_node_is_float": (ctypes.c_bool, [_P]),
    "lilv_node_is_int": (ctypes.c_bool, [_P]),
    "lilv_node_is_uri": (ctypes.c_bool, [_P]),
    "lilv_node_get_path": (_P, [_P, _P]),
    "lilv_free": (None, [_P]),
    "lilv_nodes_begin": (_P, [_P]),
    "lilv_nodes_next": (_P, [_P, _P]),
    "lilv_nodes_is_end": (ctypes.c_bool, [_P, _P]),
    "lilv_nodes_get": (_P, [_P, _P]),
    "lilv_nodes_free": (None, [_P]),
    "lilv_plugins_begin": (_P, [_P]),
    "lilv_plugins_next": (_P, [_P, _P]),
    "lilv_plugins_is_end": (ctypes.c_bool, [_P, _P]),
    "lilv_plugins_get": (_P, [_P, _P]),
    "lilv_plugin_get_uri": (_P, [_P]),
    "lilv_plugin_get_bundle_uri": (_P, [_P]),
    "lilv_plugin_get_name": (_P, [_P]),
    "lilv_plugin_get_author_name": (_P, [_P]),
    "lilv_plugin_get_value": (_P, [_P, _P]),
    "lilv_plugin_get_num_ports": (ctypes.c_uint32, [_P]),
    "lilv_plugin_get_port_by_index": (_P, [_P, ctypes.c_uint32]),
    "lilv_plugin_get_required_features": (_P, [_P]),
    "lilv_plugin_has_extension_data": (ctypes.c_bool, [_P, _P]),
    "lilv_plugin_get_related": (_P, [_P, _P]),
    "lilv_plugin_instantiate": (ctypes.POINTER(LilvInstance), [_P, ctypes.c_double, _P]),
    "lilv_instance_free": (None, [ctypes.POINTER(LilvInstance)]),
    "lilv_port_is_a": (ctypes.c_bool, [_P, _P, _P]),
    "lilv_port_has_property": (ctypes.c_bool, [_P, _P, _P]),
    "lilv_port_supports_event": (ctypes.c_bool, [_P, _P, _P]),
    "lilv_port_get_symbol": (_P, [_P, _P]),
    "lilv_port_get_name": (_P, [_P, _P]),
    "lilv_port_get": (_P, [_P, _P, _P]),
    "lilv_port_get_range": (None, [_P, _P, _P, _P, _P]),
    "lilv_port_get_scale_points": (_P, [_P, _P]),
    "lilv_scale_points_begin": (_P, [_P]),
    "lilv_scale_points_next": (_P, [_P, _P]),
    "lilv_scale_points_is_end": (ctypes.c_bool, [_P, _P]),
    "lilv_scale_points_get": (_P, [_P, _P]),
    "lilv_scale_points_free": (None, [_P]),
    "lilv_scale_point_get_label": (_P, [_P]),
    "lilv_scale_point_get_value": (_P, [_P]),
    "lilv_state_new_from_world": (_P, [_P, _P, _P]),
    "lilv_state_new_from_string": (_P, [_P, _P, ctypes.c_char_p]),
    "lilv_state_new_from_instance": (
        _P,
        [_P, ctypes.POINTER(LilvInstance), _P, _P, _P, _P, _P, GET_VALUE_FN, _P, ctypes.c_uint32, _P],
    ),
    "lilv_state_to_string": (_P, [_P, _P, _P, _P, ctypes.c_char_p, ctypes.c_char_p]),
    "lilv_state_emit_port_values": (None, [_P, SET_VALUE_FN, _P]),
    "lilv_state_restore": (None, [_P, ctypes.POINTER(LilvInstance), _P, _P, ctypes.c_uint32, _P]),
    "lilv_state_free": (None, [_P]),
}


class _Lilv:
    """The lilv library and one world holding every installed plugin description (shared, thread-safe)."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("lilv-0") or "liblilv-0.so.0"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise PluginLoadError(
                f"LV2 hosting needs liblilv (Debian package liblilv-0-0), which could not be loaded: {e}"
            ) from None
        for fname, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, fname)
            fn.restype, fn.argtypes = restype, argtypes
        self.lib = lib
        self.lock = threading.RLock()
        self.world = lib.lilv_world_new()
        lib.lilv_world_load_all(self.world)
        self._nodes: dict[str, int] = {}
        self.urids = UridMap()
        self.loaded_bundles: set[str] = set()

    def uri(self, text: str) -> int:
        """A cached LilvNode for a URI (kept for the life of the process)."""
        node = self._nodes.get(text)
        if node is None:
            node = self.lib.lilv_new_uri(self.world, text.encode())
            self._nodes[text] = node
        return node

    def string(self, node: int | None) -> str:
        if not node:
            return ""
        raw = self.lib.lilv_node_as_string(node)
        return raw.decode("utf-8", "replace") if raw else ""

    def take_string(self, node: int | None) -> str:
        """The string of a node the caller owns, freeing it."""
        if not node:
            return ""
        try:
            return self.string(node)
        finally:
            self.lib.lilv_node_free(node)

    def iter_nodes(self, nodes: int | None) -> Iterator[int]:
        lib = self.lib
        if not nodes:
            return
        it = lib.lilv_nodes_begin(nodes)
        while not lib.lilv_nodes_is_end(nodes, it):
            yield lib.lilv_nodes_get(nodes, it)
            it = lib.lilv_nodes_next(nodes, it)

    def plugins(self) -> Iterator[int]:
        lib = self.lib
        plugins = lib.lilv_world_get_all_plugins(self.world)
        it = lib.lilv_plugins_begin(plugins)
        while not lib.lilv_plugins_is_end(plugins, it):
            yield lib.lilv_plugins_get(plugins, it)
            it = lib.lilv_plugins_next(plugins, it)

    def plugin_uri(self, plugin: int) -> str:
        return self.string(self.lib.lilv_plugin_get_uri(plugin))

    def bundle_path(self, plugin: int) -> str:
        return uri_to_path(self.string(self.lib.lilv_plugin_get_bundle_uri(plugin)))

    def load_bundle(self, path: str) -> None:
        with self.lock:
            if path in self.loaded_bundles:
                return
            node = self.lib.lilv_new_file_uri(self.world, None, (path.rstrip("/") + "/").encode())
            try:
                self.lib.lilv_world_load_bundle(self.world, node)
            finally:
                self.lib.lilv_node_free(node)
            self.loaded_bundles.add(path)


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return os.path.normpath(unquote(parsed.path)) if parsed.scheme == "file" else uri


_LILV: _Lilv | None = None
_LILV_LOCK = threading.Lock()


def lilv() -> _Lilv:
    """The process-wide lilv world (created on first use: reading every installed description takes a
    fraction of a second)."""
    global _LILV
    with _LILV_LOCK:
        if _LILV is None:
            _LILV = _Lilv()
        return _LILV


class UridMap:
    """``urid:map`` and ``urid:unmap``: URIs <-> small integers, one table for the whole process."""

    def __init__(self) -> None:
        self._ids: dict[bytes, int] = {}
        self._uris: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self._lock = threading.Lock()
        self._map_fn = MAP_FN(self._map)
        self._unmap_fn = UNMAP_FN(self._unmap)
        self.map_struct = LV2_URID_Map(None, self._map_fn)
        self.unmap_struct = LV2_URID_Unmap(None, self._unmap_fn)

    def _map(self, _handle: Any, uri: bytes | None) -> int:
        if not uri:
            return 0
        return self.map(uri)

    def map(self, uri: bytes | str) -> int:
        key = uri.encode() if isinstance(uri, str) else uri
        with self._lock:
            urid = self._ids.get(key)
            if urid is None:
                urid = len(self._ids) + 1
                self._ids[key] = urid
                self._uris[urid] = ctypes.create_string_buffer(key)
            return urid

    def _unmap(self, _handle: Any, urid: int) -> int | None:
        buf = self._uris.get(urid)
        return ctypes.addressof(buf) if buf is not None else None

    def unmap(self, urid: int) -> str | None:
        buf = self._uris.get(urid)
        return buf.value.decode() if buf is not None else None


# ---------------------------------------------------------------------------------------------------- discovery
def installed_lv2_plugins() -> list[str]:
    """The URIs of every LV2 plugin lilv finds (``LV2_PATH``, or ``~/.lv2``, ``/usr/lib/lv2``,
    ``/usr/local/lib/lv2`` and the multiarch folder), sorted."""
    world = lilv()
    with world.lock:
        return sorted(world.plugin_uri(p) for p in world.plugins())


def _is_lv2_target(target: str) -> bool:
    if "://" in target or target.startswith("urn:"):
        return not target.startswith("file://") or os.path.exists(uri_to_path(target))
    path = Path(target)
    bundle = path if path.is_dir() else path.parent
    return (bundle / "manifest.ttl").is_file()


def _find(target: str, plugin_name: str | None) -> tuple[_Lilv, int]:
    """The lilv plugin for a URI, or for a bundle folder (or a file in it) plus an optional name/URI."""
    world = lilv()
    with world.lock:
        if ("://" in target or target.startswith("urn:")) and not target.startswith("file://"):
            for p in world.plugins():
                if world.plugin_uri(p) == target:
                    return world, p
            raise PluginLoadError(f"No LV2 plugin with the URI {target!r} is installed.")
        path = uri_to_path(target) if target.startswith("file://") else target
        bundle = os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path))
        if not os.path.isfile(os.path.join(bundle, "manifest.ttl")):
            raise PluginLoadError(f"{target!r} is not an LV2 bundle (no manifest.ttl).")
        found = _bundle_plugins(world, bundle)
        if not found:
            world.load_bundle(bundle)
            found = _bundle_plugins(world, bundle)
        if not found:
            raise PluginLoadError(f"The LV2 bundle {bundle} describes no plugin.")
        if plugin_name is None:
            if len(found) > 1:
                names = "\n".join(f'\t"{_plugin_name(world, p)}" ({world.plugin_uri(p)})' for p in found)
                raise ValueError(
                    f'Plugin file {target} contains {len(found)} plugins, and the "plugin_name" argument was '
                    "not provided. Please specify which plugin to load by passing one of the following names "
                    f'(or URIs) as "plugin_name":\n{names}'
                )
            return world, found[0]
        for p in found:
            if plugin_name in (_plugin_name(world, p), world.plugin_uri(p)):
                return world, p
        names = "\n".join(f'\t"{_plugin_name(world, p)}"' for p in found)
        raise ValueError(f'Plugin file {target} does not contain a plugin named "{plugin_name}". Valid names:\n{names}')


def _bundle_plugins(world: _Lilv, bundle: str) -> list[int]:
    return [p for p in world.plugins() if os.path.realpath(world.bundle_path(p)) == bundle]


def _plugin_classes(world: _Lilv, plugin: int) -> list[str]:
    """The plugin's ``rdf:type`` URIs other than ``lv2:Plugin`` (lilv's class lookup needs the LV2 spec
    bundles, which are often not installed)."""
    lib = world.lib
    nodes = lib.lilv_plugin_get_value(plugin, world.uri(RDF_TYPE))
    out = [world.string(n) for n in world.iter_nodes(nodes)]
    lib.lilv_nodes_free(nodes)
    return sorted(c for c in out if c != LV2 + "Plugin")


def _plugin_name(world: _Lilv, plugin: int) -> str:
    return world.take_string(world.lib.lilv_plugin_get_name(plugin))


def lv2_plugin_names(path: str | os.PathLike[str]) -> list[str]:
    """The names of the plugins described in an LV2 bundle."""
    world = lilv()
    bundle = os.path.realpath(os.fspath(path))
    with world.lock:
        found = _bundle_plugins(world, bundle)
        if not found:
            world.load_bundle(bundle)
            found = _bundle_plugins(world, bundle)
        return [_plugin_name(world, p) for p in found]


# ---------------------------------------------------------------------------------------------------- ports
class PortInfo:
    """One port of an LV2 plugin, as described in its Turtle."""

    __slots__ = ("index", "symbol", "name", "kind", "is_input", "sidechain", "midi", "reports_latency", "cv")

    def __init__(self, index: int, symbol: str, name: str, kind: str, is_input: bool) -> None:
        self.index, self.symbol, self.name, self.kind, self.is_input = index, symbol, name, kind, is_input
        self.sidechain = self.midi = self.reports_latency = False
        self.cv = 0.0


def _describe_ports(world: _Lilv, plugin: int) -> tuple[list[PortInfo], list[ControlPort]]:
    lib, u = world.lib, world.uri
    ports: list[PortInfo] = []
    controls: list[ControlPort] = []
    for index in range(lib.lilv_plugin_get_num_ports(plugin)):
        port = lib.lilv_plugin_get_port_by_index(plugin, index)
        symbol = world.string(lib.lilv_port_get_symbol(plugin, port))
        name = world.take_string(lib.lilv_port_get_name(plugin, port)) or symbol
        is_input = lib.lilv_port_is_a(plugin, port, u(LV2 + "InputPort"))

        def has(prop: str, _port: int = port) -> bool:
            return bool(lib.lilv_port_has_property(plugin, _port, u(prop)))

        if lib.lilv_port_is_a(plugin, port, u(LV2 + "AudioPort")):
            kind = "audio"
        elif lib.lilv_port_is_a(plugin, port, u(LV2 + "ControlPort")):
            kind = "control"
        elif lib.lilv_port_is_a(plugin, port, u(LV2 + "CVPort")):
            kind = "cv"
        elif lib.lilv_port_is_a(plugin, port, u(ATOM + "AtomPort")):
            kind = "atom"
        else:
            kind = "other"
        info = PortInfo(index, symbol, name, kind, bool(is_input))
        info.sidechain = has(LV2 + "isSideChain")
        info.reports_latency = has(LV2 + "reportsLatency")
        if kind == "atom":
            info.midi = bool(lib.lilv_port_supports_event(plugin, port, u(MIDI_EVENT)))
        if kind in ("control", "cv"):
            default, low, high = _range(world, plugin, port)
            if kind == "cv":
                info.cv = default if default is not None else 0.0
            elif is_input:
                low = 0.0 if low is None else low
                high = max(low, 1.0 if high is None else high)
                if default is None:
                    default = low
                default = min(max(default, low), high)
                integer = has(LV2 + "integer")
                toggled = has(LV2 + "toggled")
                if toggled:
                    low, high = 0.0, max(high, 1.0)
                controls.append(
                    ControlPort(
                        index=index,
                        symbol=symbol,
                        name=name,
                        minimum=low,
                        maximum=high,
                        default=default,
                        unit=_unit(world, plugin, port),
                        toggled=toggled,
                        integer=integer,
                        logarithmic=has(PPROPS + "logarithmic"),
                        enumeration=has(LV2 + "enumeration"),
                        scale_points=_scale_points(world, plugin, port),
                    )
                )
        ports.append(info)
    return ports, controls


def _range(world: _Lilv, plugin: int, port: int) -> tuple[float | None, float | None, float | None]:
    lib = world.lib
    nodes = [ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()]
    lib.lilv_port_get_range(plugin, port, *(ctypes.byref(n) for n in nodes))
    values: list[float | None] = []
    for n in nodes:
        if n.value:
            ok = lib.lilv_node_is_float(n.value) or lib.lilv_node_is_int(n.value)
            values.append(float(lib.lilv_node_as_float(n.value)) if ok else None)
            lib.lilv_node_free(n.value)
        else:
            values.append(None)
    return values[0], values[1], values[2]


def _unit(world: _Lilv, plugin: int, port: int) -> str:
    lib = world.lib
    node = lib.lilv_port_get(plugin, port, world.uri(UNITS + "unit"))
    if not node:
        return ""
    try:
        if lib.lilv_node_is_uri(node):
            uri = world.string(node)
            if uri.startswith(UNITS):
                return UNIT_SYMBOLS.get(uri[len(UNITS) :], "")
        symbol = lib.lilv_world_get(world.world, node, world.uri(UNITS + "symbol"), None)
        return world.take_string(symbol)
    finally:
        lib.lilv_node_free(node)


def _scale_points(world: _Lilv, plugin: int, port: int) -> tuple[tuple[float, str], ...]:
    lib = world.lib
    points = lib.lilv_port_get_scale_points(plugin, port)
    if not points:
        return ()
    out = []
    try:
        it = lib.lilv_scale_points_begin(points)
        while not lib.lilv_scale_points_is_end(points, it):
            sp = lib.lilv_scale_points_get(points, it)
            value = lib.lilv_scale_point_get_value(sp)
            if value and (lib.lilv_node_is_float(value) or lib.lilv_node_is_int(value)):
                out.append((float(lib.lilv_node_as_float(value)), world.string(lib.lilv_scale_point_get_label(sp))))
            it = lib.lilv_scale_points_next(points, it)
    finally:
        lib.lilv_scale_points_free(points)
    return tuple(sorted(out))


# ---------------------------------------------------------------------------------------------------- features
class HostFeatures:
    """The feature array handed to ``instantiate`` (one per instance: options carry the sample rate)."""

    def __init__(self, world: _Lilv, sample_rate: float) -> None:
        urids = world.urids
        self._keep: list[Any] = []
        self.worker: _Worker | None = None
        self._sample_rate = ctypes.c_float(sample_rate)
        self._max_block = ctypes.c_int32(MAX_BLOCK)
        self._min_block = ctypes.c_int32(1)
        self._nominal = ctypes.c_int32(MAX_BLOCK)
        self._seq_size = ctypes.c_int32(ATOM_CAPACITY)
        atom_int, atom_float = urids.map(ATOM + "Int"), urids.map(ATOM + "Float")
        opts = [
            (BUFSZ + "maxBlockLength", atom_int, self._max_block),
            (BUFSZ + "minBlockLength", atom_int, self._min_block),
            (BUFSZ + "nominalBlockLength", atom_int, self._nominal),
            (BUFSZ + "sequenceSize", atom_int, self._seq_size),
            ("http://lv2plug.in/ns/ext/parameters#sampleRate", atom_float, self._sample_rate),
        ]
        self.options = (LV2_Options_Option * (len(opts) + 1))()
        for i, (key, type_, value) in enumerate(opts):
            self.options[i] = LV2_Options_Option(0, 0, urids.map(key), 4, type_, ctypes.addressof(value))
        self.log = LV2_Log_Log(None, _LOG_PRINTF, _LOG_VPRINTF)
        self.schedule = LV2_Worker_Schedule(None, SCHEDULE_FN(self._schedule))
        entries = [
            (URID + "map", ctypes.addressof(urids.map_struct)),
            (URID + "unmap", ctypes.addressof(urids.unmap_struct)),
            (OPTIONS + "options", ctypes.addressof(self.options)),
            (BUFSZ + "boundedBlockLength", None),
            (WORKER + "schedule", ctypes.addressof(self.schedule)),
            ("http://lv2plug.in/ns/ext/log#log", ctypes.addressof(self.log)),
            (STATE + "loadDefaultState", None),
        ]
        self.features = [LV2_Feature(uri.encode(), data) for uri, data in entries]
        self.array = (ctypes.POINTER(LV2_Feature) * (len(self.features) + 1))(
            *(ctypes.pointer(f) for f in self.features), None
        )

    def _schedule(self, _handle: Any, size: int, data: int) -> int:
        worker = self.worker
        if worker is None:
            return 1  # LV2_WORKER_ERR_UNKNOWN
        return worker.work(size, data)


class _Worker:
    """``worker:schedule`` done synchronously: the work runs inside ``run()``, its responses are delivered
    after it (as hosts without a worker thread do)."""

    def __init__(self, iface: LV2_Worker_Interface, handle: int) -> None:
        self.iface, self.handle = iface, handle
        self.responses: list[bytes] = []
        self._respond = RESPOND_FN(self._on_respond)

    def _on_respond(self, _handle: Any, size: int, data: int) -> int:
        self.responses.append(ctypes.string_at(data, size))
        return 0

    def work(self, size: int, data: int) -> int:
        return int(self.iface.work(self.handle, self._respond, None, size, data))

    def deliver(self) -> None:
        while self.responses:
            body = self.responses.pop(0)
            buf = ctypes.create_string_buffer(body, len(body))
            self.iface.work_response(self.handle, len(body), buf)
        if self.iface.end_run:
            ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(self.iface.end_run)(self.handle)


class AtomBuffer:
    """An ``LV2_Atom_Sequence`` buffer for an atom port (input: events written before each run; output: an
    empty chunk of the whole capacity for the plugin to write into)."""

    def __init__(self, urids: UridMap, is_input: bool) -> None:
        self.is_input = is_input
        self.data = np.zeros(ATOM_CAPACITY // 4, np.uint32)  # 4-byte aligned (8 via numpy's allocator)
        self.address = self.data.ctypes.data
        self.sequence = urids.map(ATOM + "Sequence")
        self.chunk = urids.map(ATOM + "Chunk")
        self.midi = urids.map(MIDI_EVENT)
        self.clear()

    def clear(self) -> None:
        d = self.data
        if self.is_input:
            d[0], d[1], d[2], d[3] = 8, self.sequence, 0, 0  # atom {size, type}, body {unit, pad}
        else:
            d[0], d[1] = ATOM_CAPACITY - 8, self.chunk

    def write_midi(self, events: list[tuple[int, bytes]]) -> None:
        """Fill the sequence with MIDI events at sample offsets (sorted)."""
        self.clear()
        raw = self.data.view(np.uint8)
        size = 8
        for offset, message in events:
            pos = 8 + size
            need = 16 + ((len(message) + 7) & ~7)
            if pos + need > ATOM_CAPACITY:
                break
            raw[pos : pos + 8] = np.frombuffer(np.int64(offset).tobytes(), np.uint8)
            raw[pos + 8 : pos + 16] = np.frombuffer(np.array([len(message), self.midi], np.uint32).tobytes(), np.uint8)
            raw[pos + 16 : pos + 16 + len(message)] = np.frombuffer(message, np.uint8)
            size += need
        self.data[0] = size


# ---------------------------------------------------------------------------------------------------- instances
class _Instance:
    """One instantiated plugin with its buffers connected."""

    def __init__(self, owner: LV2Plugin, sample_rate: float) -> None:
        world = owner._world
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            # plugins built on Qt (synthv1) create a QApplication even without a UI: let it start headless
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        self.features = HostFeatures(world, sample_rate)
        with world.lock:
            ptr = world.lib.lilv_plugin_instantiate(owner._plugin, sample_rate, self.features.array)
        if not ptr:
            raise PluginLoadError(f"The LV2 plugin {owner.uri} failed to instantiate at {sample_rate:g} Hz.")
        self.ptr = ptr
        self.world = world
        desc = ptr.contents.lv2_descriptor.contents
        self.handle = ptr.contents.lv2_handle
        self._run = desc.run
        self._activate = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(desc.activate) if desc.activate else None
        self._deactivate = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(desc.deactivate) if desc.deactivate else None
        if desc.extension_data:
            worker = desc.extension_data(WORKER.encode() + b"interface")
            if worker:
                iface = ctypes.cast(worker, ctypes.POINTER(LV2_Worker_Interface)).contents
                self.features.worker = _Worker(iface, self.handle)
        connect = desc.connect_port
        n_in = len(owner._audio_in_ports)
        n_out = len(owner._audio_out_ports)
        self.audio_in = np.zeros((n_in, MAX_BLOCK), np.float32)
        self.audio_out = np.zeros((n_out, MAX_BLOCK), np.float32)
        self.control_out = np.zeros(len(owner._ports), np.float32)
        self.atoms: list[AtomBuffer] = []
        self.midi_in: AtomBuffer | None = None
        self._keep: list[Any] = []
        for i, p in enumerate(owner._audio_in_ports):
            connect(self.handle, p.index, self.audio_in[i].ctypes.data)
        for i, p in enumerate(owner._audio_out_ports):
            connect(self.handle, p.index, self.audio_out[i].ctypes.data)
        values = owner._control_values
        for i, c in enumerate(owner._controls):
            connect(self.handle, c.index, values[i : i + 1].ctypes.data)
        for p in owner._ports:
            if p.kind == "control" and not p.is_input:
                connect(self.handle, p.index, self.control_out[p.index : p.index + 1].ctypes.data)
            elif p.kind == "cv" or (p.kind == "audio" and p.sidechain):
                buf = np.full(MAX_BLOCK, p.cv if p.is_input else 0.0, np.float32)
                self._keep.append(buf)
                connect(self.handle, p.index, buf.ctypes.data)
            elif p.kind == "atom":
                atom = AtomBuffer(world.urids, p.is_input)
                self.atoms.append(atom)
                if p.is_input and p.midi and self.midi_in is None:
                    self.midi_in = atom
                connect(self.handle, p.index, atom.address)
            elif p.kind == "other":
                buf = np.zeros(ATOM_CAPACITY // 4, np.float32)
                self._keep.append(buf)
                connect(self.handle, p.index, buf.ctypes.data)
        self.active = False
        # activated right away: some plugins (swh) allocate in activate() and free in cleanup() unconditionally
        self.activate()

    def activate(self) -> None:
        if not self.active:
            if self._activate is not None:
                self._activate(self.handle)
            self.active = True

    def deactivate(self) -> None:
        if self.active:
            if self._deactivate is not None:
                self._deactivate(self.handle)
            self.active = False

    def run(self, n: int) -> None:
        for atom in self.atoms:
            if not atom.is_input or atom is not self.midi_in:
                atom.clear()
        self._run(self.handle, n)
        if self.midi_in is not None:
            self.midi_in.clear()
        worker = self.features.worker
        if worker is not None and worker.responses:
            worker.deliver()

    def free(self) -> None:
        if self.ptr:
            self.deactivate()
            self.world.lib.lilv_instance_free(self.ptr)
            self.ptr = None


class _InstalledPlugins:
    def __get__(self, obj: Any, owner: Any) -> list[str]:
        return installed_lv2_plugins()


# ---------------------------------------------------------------------------------------------------- the plugin
class LV2Plugin(ControlPortPlugin):
    """An LV2 plugin, found by URI or by bundle folder, hosted in-process through liblilv.

    Parameters
    ----------
    path_or_uri : str or os.PathLike
        The plugin's URI (``"urn:zamaudio:ZamComp"``) or its bundle folder (``/usr/lib/lv2/ZamComp.lv2``, or
        a file inside it).
    parameter_values : dict, optional
        Parameter values to set after loading, by Python name (``{"threshold_db": -20}``).
    plugin_name : str, optional
        Which plugin of a bundle that describes several (its name or URI).
    initialization_timeout : float
        Accepted for compatibility (seconds); loading is synchronous.

    Notes
    -----
    Control inputs are :attr:`parameters`: float ports in their own units (range and default from the
    plugin; logarithmic ports map their normalised ``raw_value`` logarithmically), toggles as ``bool``,
    enumerations as ``str`` (their labels). Audio: a plugin with one audio input and one output processes
    each channel of a multichannel stream with its own instance (dual mono); otherwise plugin input ``j``
    gets stream channel ``j % channels`` (a stream with more channels than inputs is averaged down onto
    them) and each stream channel gets the average of the plugin outputs ``j`` with ``j % channels`` equal to
    it (a stereo plugin on a mono stream returns the mean of its outputs; a mono output is copied to every
    channel). Side-chain inputs get silence. Latency reported on a ``lv2:reportsLatency`` port is
    compensated. Instruments (MIDI input and no audio input) render MIDI as VST3 instruments do.
    A plugin that crashes takes the interpreter with it: load it with ``isolated=True`` to avoid that.
    """

    installed_plugins = _InstalledPlugins()

    def __init__(
        self,
        path_or_uri: str | os.PathLike[str],
        parameter_values: dict[str, Any] | None = None,
        plugin_name: str | None = None,
        initialization_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        if parameter_values is not None and not isinstance(parameter_values, dict):
            raise TypeError(
                "Expected a dictionary to be passed to parameter_values, but received a "
                f'{type(parameter_values).__name__}. (If passing a plugin name, pass "plugin_name=..." as a '
                "keyword argument instead.)"
            )
        target = os.fspath(path_or_uri)
        world, plugin = _find(target, plugin_name)
        lib = world.lib
        self._world = world
        self._plugin = plugin
        self._target = target
        self._plugin_name = plugin_name
        with world.lock:
            self.uri = world.plugin_uri(plugin)
            self._name = _plugin_name(world, plugin)
            self._author = world.take_string(lib.lilv_plugin_get_author_name(plugin))
            self._classes = _plugin_classes(world, plugin)
            required = lib.lilv_plugin_get_required_features(plugin)
            missing = [world.string(n) for n in world.iter_nodes(required)]
            lib.lilv_nodes_free(required)
            missing = [f for f in missing if f not in SUPPORTED_FEATURES]
            if missing:
                raise PluginLoadError(
                    f"The LV2 plugin {self.uri} requires host features stompbox does not provide: " + ", ".join(missing)
                )
            self._ports, self._controls = _describe_ports(world, plugin)
            self._has_state = bool(lib.lilv_plugin_has_extension_data(plugin, world.uri(STATE + "interface")))
        self._audio_in_ports = [p for p in self._ports if p.kind == "audio" and p.is_input and not p.sidechain]
        self._audio_out_ports = [p for p in self._ports if p.kind == "audio" and not p.is_input and not p.sidechain]
        self._latency_port = next(
            (p.index for p in self._ports if p.kind == "control" and not p.is_input and p.reports_latency), None
        )
        self._has_midi_in = any(p.kind == "atom" and p.is_input and p.midi for p in self._ports)
        self._is_instrument = bool(self._audio_out_ports) and (
            (LV2 + "InstrumentPlugin" in self._classes and self._has_midi_in)
            or (self._has_midi_in and not self._audio_in_ports)
        )
        self._control_values = np.array([c.default for c in self._controls], np.float32)
        self._instances: list[_Instance] = []
        self._rate = 0.0
        self._latency = 0
        self._instances = [_Instance(self, 44100.0)]  # fail at load time, not on first use
        self._rate = 44100.0
        self._loaded = True
        self._set_initial_parameter_values(parameter_values)

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        """The plugin's name (``doap:name``)."""
        return self._name

    @property
    def descriptive_name(self) -> str:
        return self._name

    @property
    def path_to_plugin_file(self) -> str:
        """The plugin's bundle folder."""
        return self._world.bundle_path(self._plugin)

    @property
    def category(self) -> str:
        """The plugin's classes, e.g. ``"Compressor"`` or ``"Instrument"`` (``|``-separated if several)."""
        names = [c[len(LV2) :].removesuffix("Plugin") for c in self._classes if c.startswith(LV2)]
        return "|".join(n for n in names if n) or "Plugin"

    @property
    def manufacturer_name(self) -> str:
        return self._author

    @property
    def version(self) -> str:
        return ""

    @property
    def identifier(self) -> str:
        """``LV2-<uri>``."""
        return f"LV2-{self.uri}"

    @property
    def is_instrument(self) -> bool:
        """True for an instrument: audio outputs, a MIDI input, and an instrument class or no audio input."""
        return self._is_instrument

    @property
    def is_effect(self) -> bool:
        return bool(self._audio_in_ports) and not self._is_instrument

    @property
    def num_audio_inputs(self) -> int:
        return len(self._audio_in_ports)

    @property
    def num_audio_outputs(self) -> int:
        return len(self._audio_out_ports)

    @staticmethod
    def get_plugin_names_for_file(path: str | os.PathLike[str]) -> list[str]:
        """The names of the plugins an LV2 bundle describes."""
        return lv2_plugin_names(path)

    @property
    def control_outputs(self) -> dict[str, float]:
        """The plugin's control outputs (meters, gain reduction, latency) after the last block, by symbol."""
        if not self._instances:
            return {}
        values = self._instances[0].control_out
        return {p.symbol: float(values[p.index]) for p in self._ports if p.kind == "control" and not p.is_input}

    # ------------------------------------------------------------------ engine hooks
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        wanted = num_channels if (len(self._audio_in_ports) == 1 and len(self._audio_out_ports) == 1) else 1
        if self._rate == sample_rate and len(self._instances) == wanted:
            self._probe_latency()
            return
        saved = self._save_state() if self._has_state and self._instances else None
        self._free_instances()
        self._instances = [_Instance(self, sample_rate) for _ in range(max(1, wanted))]
        self._rate = sample_rate
        if saved:
            self._restore_state_string(saved)
        self._probe_latency()

    def _probe_latency(self) -> None:
        """Run a short block of silence to learn the reported latency (the state is reset right after)."""
        if self._latency_port is None:
            return
        inst = self._instances[0]
        inst.activate()
        inst.audio_in[:, :64] = 0.0
        inst.run(64)
        self._latency = max(0, int(round(float(inst.control_out[self._latency_port]))))

    def _reset_state(self) -> None:
        for inst in self._instances:
            inst.deactivate()
            inst.activate()

    def _process(self, block: np.ndarray) -> np.ndarray:
        channels, n = block.shape
        insts = self._instances
        if len(insts) > 1:
            for start in range(0, n, MAX_BLOCK):
                m = min(MAX_BLOCK, n - start)
                for c, inst in enumerate(insts):
                    inst.audio_in[0, :m] = block[c, start : start + m]
                    inst.run(m)
                    block[c, start : start + m] = inst.audio_out[0, :m]
        else:
            inst = insts[0]
            for start in range(0, n, MAX_BLOCK):
                m = min(MAX_BLOCK, n - start)
                map_inputs(inst.audio_in, block[:, start : start + m], m)
                inst.run(m)
                map_outputs(inst.audio_out, block[:, start : start + m], m)
        self._read_latency()
        return block

    def _read_latency(self) -> None:
        if self._latency_port is not None:
            self._latency = max(0, int(round(float(self._instances[0].control_out[self._latency_port]))))

    def _render_block(self, events: list[tuple[int, bytes]], n: int) -> np.ndarray:
        inst = self._instances[0]
        channels = self._format[1] if self._format else 2
        if inst.midi_in is not None:
            inst.midi_in.write_midi(events)
        inst.audio_in[:, :n] = 0.0
        inst.run(n)
        out = np.zeros((channels, n), np.float32)
        map_outputs(inst.audio_out, out, n)
        return out

    @property
    def latency_samples(self) -> int:
        """The latency the plugin reports on its ``lv2:reportsLatency`` output, in samples."""
        return int(self._latency)

    # ------------------------------------------------------------------ presets and state
    @property
    def presets(self) -> dict[str, str]:
        """The presets in the plugin's bundle (and any other loaded bundle): label -> preset URI."""
        world, lib = self._world, self._world.lib
        out: dict[str, str] = {}
        with world.lock:
            related = lib.lilv_plugin_get_related(self._plugin, world.uri(PRESET))
            for node in world.iter_nodes(related):
                lib.lilv_world_load_resource(world.world, node)
                label = lib.lilv_world_get(world.world, node, world.uri(RDFS_LABEL), None)
                uri = world.string(node)
                out[world.take_string(label) or uri] = uri
            lib.lilv_nodes_free(related)
        return out

    def load_preset(self, preset: str) -> bool:
        """Apply a preset from :attr:`presets`, by label or URI (``ValueError`` if there is no such preset).

        Returns True.
        """
        presets = self.presets
        uri = presets.get(preset, preset if preset in presets.values() else None)
        if uri is None:
            raise ValueError(f"No preset {preset!r} for {self.name}. Presets: {', '.join(presets) or 'none'}")
        world = self._world
        with world.lock:
            state = world.lib.lilv_state_new_from_world(
                world.world, ctypes.addressof(world.urids.map_struct), world.uri(uri)
            )
        if not state:
            raise ValueError(f"The preset {uri} could not be read.")
        try:
            self._apply_state(state)
        finally:
            world.lib.lilv_state_free(state)
        return True

    def _apply_state(self, state: int) -> None:
        lib = self._world.lib
        float_urid = self._world.urids.map(ATOM + "Float")
        double_urid = self._world.urids.map(ATOM + "Double")
        int_urid = self._world.urids.map(ATOM + "Int")

        def set_value(symbol: bytes, _user: Any, value: int, size: int, type_: int) -> None:
            if type_ == float_urid and size == 4:
                v = ctypes.c_float.from_address(value).value
            elif type_ == double_urid and size == 8:
                v = ctypes.c_double.from_address(value).value
            elif type_ == int_urid and size == 4:
                v = float(ctypes.c_int32.from_address(value).value)
            else:
                return
            self._set_port_by_symbol(symbol.decode(), v)

        callback = SET_VALUE_FN(set_value)
        with self._lock:
            lib.lilv_state_emit_port_values(state, callback, None)
            if self._has_state:
                for inst in self._instances:
                    lib.lilv_state_restore(state, inst.ptr, None, None, 0, inst.features.array)

    def _save_state(self) -> str:
        world = self._world
        lib = world.lib
        inst = self._instances[0]
        float_urid = world.urids.map(ATOM + "Float")
        scratch = ctypes.c_float()

        def get_value(symbol: bytes, _user: Any, size: Any, type_: Any) -> int | None:
            for i, c in enumerate(self._controls):
                if c.symbol.encode() == symbol:
                    scratch.value = float(self._control_values[i])
                    size[0], type_[0] = 4, float_urid
                    return ctypes.addressof(scratch)
            return None

        callback = GET_VALUE_FN(get_value)
        with self._lock, world.lock:
            state = lib.lilv_state_new_from_instance(
                self._plugin,
                inst.ptr,
                ctypes.addressof(world.urids.map_struct),
                None,
                None,
                None,
                None,
                callback,
                None,
                0,
                inst.features.array,
            )
            if not state:
                raise RuntimeError(f"{self.name}: the plugin's state could not be saved.")
            try:
                text = lib.lilv_state_to_string(
                    world.world,
                    ctypes.addressof(world.urids.map_struct),
                    ctypes.addressof(world.urids.unmap_struct),
                    state,
                    b"urn:stompbox:state",
                    None,
                )
                result = ctypes.string_at(text).decode()
                lib.lilv_free(text)
            finally:
                lib.lilv_state_free(state)
        return result

    def _restore_state_string(self, text: str) -> None:
        world = self._world
        with world.lock:
            state = world.lib.lilv_state_new_from_string(
                world.world, ctypes.addressof(world.urids.map_struct), text.encode()
            )
        if not state:
            raise ValueError("Not an LV2 state (Turtle text from raw_state).")
        try:
            self._apply_state(state)
        finally:
            world.lib.lilv_state_free(state)

    @property
    def raw_state(self) -> bytes:
        """The plugin's state (control values and anything it saves through ``state:interface``) as Turtle
        bytes, restorable by assigning it back."""
        return self._save_state().encode()

    @raw_state.setter
    def raw_state(self, value: bytes | str) -> None:
        self._restore_state_string(value.decode() if isinstance(value, bytes | bytearray) else str(value))

    # ------------------------------------------------------------------ copies, pickling, teardown
    def __getstate__(self) -> dict[str, Any]:
        return {"target": self._target, "plugin_name": self._plugin_name, "raw_state": self.raw_state}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.__init__(data["target"], plugin_name=data.get("plugin_name"))  # type: ignore[misc]
        if data.get("raw_state"):
            self.raw_state = data["raw_state"]

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_new_lv2, (), self.__getstate__())

    def _free_instances(self) -> None:
        for inst in self._instances:
            inst.free()
        self._instances = []
        self._rate = 0.0

    def close(self) -> None:
        """Release the plugin instances now (otherwise done when garbage-collected)."""
        if "_instances" in self.__dict__:
            with self._lock:
                self._free_instances()
                self._forget_format()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def show_editor(self, close_event: threading.Event | None = None) -> None:
        """Not available: stompbox hosts plugins without their editors."""
        raise RuntimeError("show_editor() is not supported by stompbox's LV2 host (no editor windows).")

    def __repr__(self) -> str:
        return f'<stompbox.LV2Plugin "{self.name}" ({self.uri}) at {id(self):#x}>'


def _new_lv2() -> LV2Plugin:
    return LV2Plugin.__new__(LV2Plugin)
