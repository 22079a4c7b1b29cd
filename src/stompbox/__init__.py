"""stompbox: streaming audio I/O and effects for Python, drop-in compatible with pedalboard's API.

``import stompbox as pedalboard`` runs pedalboard code unchanged::

    import stompbox
    from stompbox.io import AudioFile

    board = stompbox.Pedalboard([stompbox.Distortion(drive_db=25), stompbox.Reverb(room_size=0.75)])
    with AudioFile("in.wav") as f, AudioFile("out.wav", "w", f.samplerate, f.num_channels) as o:
        while f.tell() < f.frames:
            o.write(board(f.read(f.samplerate), f.samplerate, reset=False))

Heavy modules (Numba kernels, codecs, plugin hosts) are imported the first time they are used.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import effects as _effects
from .board import Chain, Mix, Pedalboard, PluginContainer, process
from .core import Plugin

__version__ = "0.1.0"
version = __version__
#: the pedalboard release whose public API stompbox implements (the ``__version__`` that
#: :mod:`stompbox.compat`'s ``pedalboard`` module reports; ``__version__`` stays stompbox's own)
__pedalboard_version__ = "0.9.26"

# submodules and names loaded on first access: name -> module
_LAZY_MODULES = {
    "io",
    "utils",
    "effects",
    "core",
    "board",
    "cli",
    "analysis",
    "chains",
    "hosting",
    "routing",
    "batch",
    "compat",
    "midi_utils",
}
_LAZY_NAMES: dict[str, str] = {
    "load_chain": ".chains",
    "load_plugin": ".hosting",
    "find_plugins": ".hosting",
    "VST3Plugin": ".hosting",
    "ExternalPlugin": ".hosting",
    "ExternalPluginReloadType": ".hosting",
    "AudioProcessorParameter": ".hosting",
    "render": ".render",
    "render_file": ".render",
    "Automation": ".core.automation",
    "Envelope": ".core.automation",
    "LFO": ".core.automation",
    "Curve": ".core.automation",
    "ChannelMap": ".routing",
    "ChannelMatrix": ".routing",
    "Split": ".routing",
}

__all__ = sorted(
    {"Chain", "Mix", "Pedalboard", "Plugin", "PluginContainer", "process", "io", "utils", "version"}
    | set(_effects.EXPORTS)
    | set(_LAZY_NAMES)
)


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _effects.EXPORTS:
        value = getattr(_effects, name)
    elif name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
