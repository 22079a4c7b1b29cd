"""Chains as data: plugins and boards to and from plain dicts, JSON and YAML files.

The dict form of a plugin is ``{"type": "Gain", "params": {"gain_db": 1.0}}``; a container is
``{"type": "Pedalboard", "plugins": [...]}``. A saved file wraps the dict as ``{"stompbox_chain": 1, "chain":
{...}}``. The same file drives Python (:func:`load_chain`) and the command line.

This is the public path; the code lives in :mod:`stompbox.core.serial`, below the containers and effects that
use it (plugin types are found in :mod:`stompbox.core.registry`).
"""

from __future__ import annotations

from ._base.errors import ChainFormatError
from .core.serial import (
    FORMAT_VERSION,
    MAX_DEPTH,
    dumps,
    file_reference,
    from_dict,
    load_chain,
    loads,
    plugin_class,
    resolve_reference,
    save,
    schema,
    to_dict,
)

__all__ = [
    "FORMAT_VERSION",
    "MAX_DEPTH",
    "ChainFormatError",
    "dumps",
    "file_reference",
    "from_dict",
    "load_chain",
    "loads",
    "plugin_class",
    "resolve_reference",
    "save",
    "schema",
    "to_dict",
]
