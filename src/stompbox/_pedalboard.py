"""The names pedalboard keeps in ``pedalboard._pedalboard``, for code that imports them from there.

``from pedalboard._pedalboard import load_plugin`` (seen in pedalboard's issue threads) becomes
``from stompbox._pedalboard import load_plugin``, or runs unchanged after :func:`stompbox.compat.install`.
Everything here is stompbox's own implementation under pedalboard's name.
"""

from __future__ import annotations

from typing import Any

from .board import Chain, Pedalboard
from .core import Plugin
from .hosting import AudioProcessorParameter, ExternalPlugin, load_plugin
from .hosting.external import (
    FLOAT_SUFFIXES,
    HIDDEN_NAME_PATTERNS,
    TRUE_STRINGS,
    BooleanWithParameter,
    FloatWithParameter,
    ParameterAccess,
    StringWithParameter,
    WrappedBool,
    looks_like_float,
    python_parameter_name,
)
from .hosting.external import ReadOnlyDict as ReadOnlyDictWrapper
from .hosting.external import _with_parameter as wrap_type
from .hosting.external import normalize_parameter_name as normalize_python_parameter_name
from .hosting.external import strip_float_suffixes as strip_common_float_suffixes
from .hosting.vst3 import VST3Plugin

__all__ = [
    "AudioProcessorParameter",
    "BooleanWithParameter",
    "Chain",
    "ExternalPlugin",
    "FLOAT_SUFFIXES_TO_IGNORE",
    "FloatWithParameter",
    "PARAMETER_NAME_REGEXES_TO_IGNORE",
    "Pedalboard",
    "Plugin",
    "ReadOnlyDictWrapper",
    "StringWithParameter",
    "TRUE_BOOLEANS",
    "VST3Plugin",
    "WrappedBool",
    "get_text_for_raw_value",
    "load_plugin",
    "looks_like_float",
    "normalize_python_parameter_name",
    "strip_common_float_suffixes",
    "to_python_parameter_name",
    "wrap_type",
]

#: unit suffixes dropped before a parameter's text is read as a number
FLOAT_SUFFIXES_TO_IGNORE: list[str] = list(FLOAT_SUFFIXES)
#: parameter names hidden from a plugin's Python attributes (placeholder MIDI CC and P001-style parameters)
PARAMETER_NAME_REGEXES_TO_IGNORE = set(HIDDEN_NAME_PATTERNS)
#: texts read as True for a boolean parameter
TRUE_BOOLEANS: set[str] = set(TRUE_STRINGS)

# the plugin classes load_plugin tries (pedalboard's macOS AudioUnitPlugin has no counterpart)
_AVAILABLE_PLUGIN_CLASSES: list[type] = [VST3Plugin]
_AudioProcessorParameter = AudioProcessorParameter
_PythonExternalPluginMixin = ParameterAccess


def get_text_for_raw_value(parameter: AudioProcessorParameter, raw_value: float, slow: bool = False) -> str | None:
    """The plugin's text for ``raw_value`` (0 to 1) of ``parameter``, or None if it gives none. (``slow`` is
    accepted for pedalboard's signature; stompbox asks the plugin directly in every case.)"""
    text = parameter.get_text_for_raw_value(raw_value)
    return text if text else None


def to_python_parameter_name(parameter: Any) -> str | None:
    """The attribute name under which a plugin exposes ``parameter`` (its name and unit label, normalised), or
    None if it has neither."""
    if isinstance(parameter, AudioProcessorParameter):
        return parameter.python_name
    return python_parameter_name(getattr(parameter, "name", "") or "", getattr(parameter, "label", "") or "")
