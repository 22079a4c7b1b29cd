"""Built-in effects, one module per family, each class next to its kernels.

Modules are imported on first use, so ``import stompbox`` stays light (Numba and SciPy load only when an effect
that needs them is used).
"""

from __future__ import annotations

import importlib
from typing import Any

from ..core import registry

# public name -> module (relative to this package) that defines it
EXPORTS: dict[str, str] = {
    "Gain": "basic",
    "Invert": "basic",
    "Clipping": "basic",
    "Distortion": "basic",
    "Bitcrush": "basic",
    "IIRFilter": "filters",
    "LowpassFilter": "filters",
    "HighpassFilter": "filters",
    "LowShelfFilter": "filters",
    "HighShelfFilter": "filters",
    "PeakFilter": "filters",
    "LadderFilter": "ladder",
    "Delay": "delay",
    "Compressor": "dynamics",
    "Limiter": "dynamics",
    "NoiseGate": "dynamics",
    "BrickwallLimiter": "brickwall",
    "Reverb": "reverb",
    "Chorus": "modulation",
    "Phaser": "modulation",
    "Convolution": "convolution",
    "Resample": "resample",
    "MP3Compressor": "codecs",
    "GSMFullRateCompressor": "codecs",
    "PitchShift": "pitch",
    "time_stretch": "pitch",
}

__all__ = sorted(EXPORTS)


def __getattr__(name: str) -> Any:
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


# the effect classes (time_stretch is a function); the registry imports a module when its effect is looked up
registry.provide("effect", [name for name in EXPORTS if name[:1].isupper()], __getattr__)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(EXPORTS))
