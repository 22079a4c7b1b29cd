"""stompbox: streaming audio I/O and effects for Python, drop-in compatible with pedalboard's API.

``import stompbox as pedalboard`` runs pedalboard code unchanged::

    import stompbox
    from stompbox.io import AudioFile

    board = stompbox.Pedalboard([stompbox.Distortion(drive_db=25), stompbox.Reverb(room_size=0.75)])
    with AudioFile("in.wav") as f, AudioFile("out.wav", "w", f.samplerate, f.num_channels) as o:
        while f.tell() < f.frames:
            o.write(board(f.read(f.samplerate), f.samplerate, reset=False))

Heavy modules (NumPy, the plugin machinery, Numba kernels, codecs, plugin hosts) are imported the first time
they are used: ``import stompbox`` itself takes only a few milliseconds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import effects as _effects
from ._base.errors import StompboxError as StompboxError
from ._base.version import __pedalboard_version__ as __pedalboard_version__
from ._base.version import __version__ as __version__
from .core import registry

version = __version__

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
    "live",
    "compat",
    "midi_utils",
    "limits",
}
_LAZY_NAMES: dict[str, str] = {
    # the containers and the plugin base: NumPy and the plugin machinery load on first use, so a command that
    # only reads files (``stompbox info``) or prints its version does not pay for them
    "Pedalboard": ".board",
    "Chain": ".board",
    "Mix": ".board",
    "PluginContainer": ".board",
    "process": ".board",
    "Plugin": ".core.plugin",
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
    {"Chain", "Mix", "Pedalboard", "Plugin", "PluginContainer", "StompboxError", "process", "io", "utils", "version"}
    | set(_effects.EXPORTS)
    | set(_LAZY_NAMES)
)


if TYPE_CHECKING:  # the lazily loaded names, for type checkers and IDEs ("name as name": an explicit re-export, which
    # strict checkers need to accept ``from stompbox import Pedalboard``)
    from . import io as io
    from . import utils as utils
    from .board import Chain as Chain
    from .board import Mix as Mix
    from .board import Pedalboard as Pedalboard
    from .board import PluginContainer as PluginContainer
    from .board import process as process
    from .chains import load_chain as load_chain
    from .core.automation import LFO as LFO
    from .core.automation import Automation as Automation
    from .core.automation import Curve as Curve
    from .core.automation import Envelope as Envelope
    from .core.plugin import Plugin as Plugin
    from .effects.basic import Bitcrush as Bitcrush
    from .effects.basic import Clipping as Clipping
    from .effects.basic import Distortion as Distortion
    from .effects.basic import Gain as Gain
    from .effects.basic import Invert as Invert
    from .effects.brickwall import BrickwallLimiter as BrickwallLimiter
    from .effects.codecs import GSMFullRateCompressor as GSMFullRateCompressor
    from .effects.codecs import MP3Compressor as MP3Compressor
    from .effects.convolution import Convolution as Convolution
    from .effects.delay import Delay as Delay
    from .effects.dynamics import Compressor as Compressor
    from .effects.dynamics import Limiter as Limiter
    from .effects.dynamics import NoiseGate as NoiseGate
    from .effects.filters import HighpassFilter as HighpassFilter
    from .effects.filters import HighShelfFilter as HighShelfFilter
    from .effects.filters import IIRFilter as IIRFilter
    from .effects.filters import LowpassFilter as LowpassFilter
    from .effects.filters import LowShelfFilter as LowShelfFilter
    from .effects.filters import PeakFilter as PeakFilter
    from .effects.ladder import LadderFilter as LadderFilter
    from .effects.modulation import Chorus as Chorus
    from .effects.modulation import Phaser as Phaser
    from .effects.pitch import PitchShift as PitchShift
    from .effects.pitch import time_stretch as time_stretch
    from .effects.resample import Resample as Resample
    from .effects.reverb import Reverb as Reverb
    from .hosting import AudioProcessorParameter as AudioProcessorParameter
    from .hosting import ExternalPlugin as ExternalPlugin
    from .hosting import ExternalPluginReloadType as ExternalPluginReloadType
    from .hosting import VST3Plugin as VST3Plugin
    from .hosting import find_plugins as find_plugins
    from .hosting import load_plugin as load_plugin
    from .render import render as render
    from .render import render_file as render_file
    from .routing import ChannelMap as ChannelMap
    from .routing import ChannelMatrix as ChannelMatrix
    from .routing import Split as Split


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


def _load_public(name: str) -> Any:
    return getattr(importlib.import_module(__name__), name)


def _load_internal(name: str) -> Any:
    return getattr(importlib.import_module("._internal", __name__), name)


# the public plugin names that are not built-in effects (those are declared by .effects), for chain files
registry.provide("container", ["Pedalboard", "Chain", "Mix"], _load_public)
registry.provide("routing", ["ChannelMap", "ChannelMatrix", "Split"], _load_public)
registry.provide("hosted", ["ExternalPlugin", "VST3Plugin"], _load_public)
registry.provide(
    "internal",
    [
        "AddLatency",
        "FixedSizeBlockTestPlugin",
        "ForceMonoTestPlugin",
        "PrimeWithSilenceTestPlugin",
        "ResampleWithLatency",
    ],
    _load_internal,
)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
