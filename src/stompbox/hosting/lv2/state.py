"""An LV2 plugin's presets and state through lilv: control values plus whatever the plugin saves through
``state:interface``, as Turtle text (its ``raw_state``)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from .abi import ATOM, GET_VALUE_FN, PRESET, RDFS_LABEL, SET_VALUE_FN

if TYPE_CHECKING:
    from .instance import Lv2Instance
    from .plugin import LV2Plugin
    from .world import Lilv


def presets(plugin: LV2Plugin) -> dict[str, str]:
    """The presets in the plugin's bundle (and any other loaded bundle): label -> preset URI."""
    world, lib = plugin._world, plugin._world.lib
    out: dict[str, str] = {}
    with world.lock:
        related = lib.lilv_plugin_get_related(plugin._plugin, world.uri(PRESET))
        for node in world.iter_nodes(related):
            lib.lilv_world_load_resource(world.world, node)
            label = lib.lilv_world_get(world.world, node, world.uri(RDFS_LABEL), None)
            uri = world.string(node)
            out[world.take_string(label) or uri] = uri
        lib.lilv_nodes_free(related)
    return out


def load_preset(plugin: LV2Plugin, uri: str) -> None:
    """Apply the preset with this URI (``ValueError`` if lilv cannot read it)."""
    _apply_new(
        plugin,
        lambda world, urids: world.lib.lilv_state_new_from_world(world.world, urids, world.uri(uri)),
        f"The preset {uri} could not be read.",
    )


def save(plugin: LV2Plugin) -> str:
    """The plugin's state (control values and what it saves itself) as Turtle text."""
    world = plugin._world
    lib = world.lib
    inst = cast("Lv2Instance", plugin._instances[0])  # (an LV2 plugin's instances are LV2 instances)
    float_urid = world.urids.map(ATOM + "Float")
    scratch = ctypes.c_float()

    def get_value(symbol: bytes, _user: Any, size: Any, type_: Any) -> int | None:
        for i, c in enumerate(plugin._controls):
            if c.symbol.encode() == symbol:
                scratch.value = float(plugin._control_values[i])
                size[0], type_[0] = 4, float_urid
                return ctypes.addressof(scratch)
        return None

    callback = GET_VALUE_FN(get_value)
    with plugin._lock, world.lock:
        state = lib.lilv_state_new_from_instance(
            plugin._plugin,
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
            raise RuntimeError(f"{plugin.name}: the plugin's state could not be saved.")
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


def restore(plugin: LV2Plugin, text: str) -> None:
    """Apply a state saved by :func:`save` (``ValueError`` for text that is not one)."""
    _apply_new(
        plugin,
        lambda world, urids: world.lib.lilv_state_new_from_string(world.world, urids, text.encode()),
        "Not an LV2 state (Turtle text from raw_state).",
    )


def _apply_new(plugin: LV2Plugin, new_state: Callable[[Lilv, int], int], error: str) -> None:
    """Apply the lilv state that ``new_state(world, urid_map)`` makes, then free it (``ValueError(error)`` if
    it makes none)."""
    world = plugin._world
    with world.lock:
        state = new_state(world, ctypes.addressof(world.urids.map_struct))
    if not state:
        raise ValueError(error)
    try:
        _apply(plugin, state)
    finally:
        world.lib.lilv_state_free(state)


def _apply(plugin: LV2Plugin, state: int) -> None:
    """Set the control values a lilv state holds, and hand the rest to the plugin's ``state:interface``."""
    world = plugin._world
    lib = world.lib
    float_urid = world.urids.map(ATOM + "Float")
    double_urid = world.urids.map(ATOM + "Double")
    int_urid = world.urids.map(ATOM + "Int")

    def set_value(symbol: bytes, _user: Any, value: int, size: int, type_: int) -> None:
        if type_ == float_urid and size == 4:
            v = ctypes.c_float.from_address(value).value
        elif type_ == double_urid and size == 8:
            v = ctypes.c_double.from_address(value).value
        elif type_ == int_urid and size == 4:
            v = float(ctypes.c_int32.from_address(value).value)
        else:
            return
        plugin._set_port_by_symbol(symbol.decode(), v)

    callback = SET_VALUE_FN(set_value)
    with plugin._lock:
        lib.lilv_state_emit_port_values(state, callback, None)
        if plugin._has_state:
            for instance in plugin._instances:
                inst = cast("Lv2Instance", instance)
                lib.lilv_state_restore(state, inst.ptr, None, None, 0, inst.features.array)
