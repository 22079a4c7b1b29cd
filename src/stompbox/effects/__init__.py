"""Built-in effects, one module per family, each class next to its kernels.

Modules are imported on first use, so ``import stompbox`` stays light (Numba and SciPy load only when an effect
that needs them is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._base.lazy import lazy_names
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


if TYPE_CHECKING:  # the lazily loaded names, for type checkers and IDEs ("name as name": re-exported)
    from .basic import Bitcrush as Bitcrush
    from .basic import Clipping as Clipping
    from .basic import Distortion as Distortion
    from .basic import Gain as Gain
    from .basic import Invert as Invert
    from .brickwall import BrickwallLimiter as BrickwallLimiter
    from .codecs import GSMFullRateCompressor as GSMFullRateCompressor
    from .codecs import MP3Compressor as MP3Compressor
    from .convolution import Convolution as Convolution
    from .delay import Delay as Delay
    from .dynamics import Compressor as Compressor
    from .dynamics import Limiter as Limiter
    from .dynamics import NoiseGate as NoiseGate
    from .filters import HighpassFilter as HighpassFilter
    from .filters import HighShelfFilter as HighShelfFilter
    from .filters import IIRFilter as IIRFilter
    from .filters import LowpassFilter as LowpassFilter
    from .filters import LowShelfFilter as LowShelfFilter
    from .filters import PeakFilter as PeakFilter
    from .ladder import LadderFilter as LadderFilter
    from .modulation import Chorus as Chorus
    from .modulation import Phaser as Phaser
    from .pitch import PitchShift as PitchShift
    from .pitch import time_stretch as time_stretch
    from .resample import Resample as Resample
    from .reverb import Reverb as Reverb


__getattr__, __dir__ = lazy_names(globals(), EXPORTS)


# the effect classes (time_stretch is a function); the registry imports a module when its effect is looked up
registry.provide("effect", [name for name in EXPORTS if name[:1].isupper()], __getattr__)
