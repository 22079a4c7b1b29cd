"""The C ABI of LV2 and liblilv as ctypes declares it: the URIs, the structures a host hands to plugins, the
callback types, and the signatures of the lilv functions this host calls."""

from __future__ import annotations

import ctypes
from typing import Any

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


LOG_PRINTF = LOG_FN(_ignore_log)
LOG_VPRINTF = VLOG_FN(_ignore_log)


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
SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
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
