"""An LV2 plugin's ports as its Turtle describes them: kind, direction, side-chain, MIDI, latency; control
inputs as :class:`~stompbox.hosting.ports.ControlPort` (range, default, unit, toggle, integer, enumeration)."""

from __future__ import annotations

import ctypes

from ..ports import ControlPort
from .abi import ATOM, LV2, MIDI_EVENT, PPROPS, UNITS
from .world import Lilv

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


class PortInfo:
    """One port of an LV2 plugin, as described in its Turtle."""

    __slots__ = ("index", "symbol", "name", "kind", "is_input", "sidechain", "midi", "reports_latency", "cv")

    def __init__(self, index: int, symbol: str, name: str, kind: str, is_input: bool) -> None:
        self.index, self.symbol, self.name, self.kind, self.is_input = index, symbol, name, kind, is_input
        self.sidechain = self.midi = self.reports_latency = False
        self.cv = 0.0


def describe_ports(world: Lilv, plugin: int) -> tuple[list[PortInfo], list[ControlPort]]:
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


def _range(world: Lilv, plugin: int, port: int) -> tuple[float | None, float | None, float | None]:
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


def _unit(world: Lilv, plugin: int, port: int) -> str:
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


def _scale_points(world: Lilv, plugin: int, port: int) -> tuple[tuple[float, str], ...]:
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
