"""The subjects of the contract tests (block invariance, channels, automation, pickling, hostile arrays): every
built-in effect the registry knows, plus every plugin class defined in tests/_toy_effect.py.

An effect is tested at the settings below when it has an entry (settings that make it audible in a short
test), at its defaults otherwise: a new effect is covered without editing anything here. Arguments that have
no default are given by name (an impulse response).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import _toy_effect
from stompbox.core import Plugin, registry
from stompbox.core.automation import Automation, Envelope
from stompbox.core.params import ParamSpec
from stompbox.core.plugin import PairedChannels

SR = 44100
IR = (np.random.default_rng(0).standard_normal(600) * np.exp(-np.arange(600) / 100)).astype(np.float32)

#: constructor arguments that have no default, by name
REQUIRED: dict[str, Any] = {"impulse_response_filename": IR, "sample_rate": SR}

#: settings that make each effect do something audible in 0.1-1 s of audio (optional; defaults otherwise)
SETTINGS: dict[str, dict[str, Any]] = {
    "Gain": {"gain_db": -3.0},
    "Clipping": {"threshold_db": -3.0},
    "Distortion": {"drive_db": 20.0},
    "Bitcrush": {"bit_depth": 5.0},
    "LowpassFilter": {"cutoff_frequency_hz": 1000.0},
    "HighpassFilter": {"cutoff_frequency_hz": 2000.0},
    "LowShelfFilter": {"cutoff_frequency_hz": 200.0, "gain_db": 6.0, "q": 0.9},
    "HighShelfFilter": {"cutoff_frequency_hz": 4000.0, "gain_db": -6.0},
    "PeakFilter": {"cutoff_frequency_hz": 1000.0, "gain_db": 6.0, "q": 2.0},
    "LadderFilter": {"cutoff_hz": 800.0, "resonance": 0.7, "drive": 2.5},
    "Delay": {"delay_seconds": 0.0123, "feedback": 0.7, "mix": 0.6},
    "Compressor": {"threshold_db": -25.0, "ratio": 6.0, "attack_ms": 2.0, "release_ms": 80.0},
    "Limiter": {"threshold_db": -12.0, "release_ms": 60.0},
    "NoiseGate": {"threshold_db": -35.0, "ratio": 8.0, "attack_ms": 2.0, "release_ms": 50.0},
    "Chorus": {"rate_hz": 2.0, "feedback": 0.4, "mix": 0.7},
    "Phaser": {"rate_hz": 2.0, "feedback": 0.4, "mix": 0.7},
    "Reverb": {"room_size": 0.8},
    "Resample": {"target_sample_rate": 8000.0},
    "BrickwallLimiter": {"ceiling_db": -6.0},
    "PitchShift": {"semitones": 3.0},
}

#: effects whose channels interact by design: the limiter links its gain across all channels, the pitch shifter
#: locks the phases of all channels together. Every other effect processes each channel (or, for
#: PairedChannels, each stereo pair) as if it were alone.
LINKED = {"BrickwallLimiter", "PitchShift"}


#: effects whose copy made mid-stream starts its codec afresh (libsndfile's GSM codec state cannot be copied); a
#: copy made between streams sounds the same
RESTART_WHEN_COPIED = {"GSMFullRateCompressor"}


def subjects() -> dict[str, type[Plugin]]:
    """Every built-in effect (from the registry) and the toy effects, by name."""
    found = dict(registry.builtin_effects())
    for cls in registry.defined():
        if cls.__module__ == _toy_effect.__name__:
            found[cls.__name__] = cls
    return dict(sorted(found.items()))


def make(name: str, **overrides: Any) -> Plugin:
    """A new instance of the effect ``name`` at its contract settings (with ``overrides``)."""
    import inspect

    cls = subjects()[name]
    kwargs: dict[str, Any] = {
        arg: REQUIRED[arg]
        for arg, p in inspect.signature(cls).parameters.items()
        if p.default is inspect.Parameter.empty and arg in REQUIRED
    }
    if "sample_rate" in inspect.signature(cls).parameters and "impulse_response_filename" in kwargs:
        kwargs["sample_rate"] = SR
    kwargs.update(SETTINGS.get(name, {}))
    kwargs.update(overrides)
    return cls(**kwargs)


def per_channel(name: str) -> bool:
    """Whether each channel of ``name`` is processed as if it were alone."""
    return name not in LINKED and not issubclass(subjects()[name], PairedChannels)


def pairwise(name: str) -> bool:
    return issubclass(subjects()[name], PairedChannels)


def _target(spec: ParamSpec, start: float) -> float:
    """A value of the parameter clearly away from ``start``, inside the declared range."""
    lo, hi = spec.minimum, spec.maximum
    if lo is not None and hi is not None:
        return lo + (0.2 if start > (lo + hi) / 2 else 0.8) * (hi - lo)
    if lo is not None:
        return start * 4.0 if start > 0 else lo + 1.0
    return start - 20.0  # unbounded, or bounded above only: levels in dB


def automated(name: str) -> Plugin:
    """The effect at its contract settings with every automatable parameter on a 0.3-s ramp from its setting
    to a value well inside its range."""
    plugin = make(name)
    for pname, spec in type(plugin).parameter_specs().items():
        if spec.automatable:
            start = float(getattr(plugin, pname))
            setattr(plugin, pname, Envelope([(0.0, start), (0.3, _target(spec, start))]))
    return plugin


def automatable(name: str) -> bool:
    return any(spec.automatable for spec in subjects()[name].parameter_specs().values())


__all__ = ["IR", "SR", "Automation", "automatable", "automated", "make", "pairwise", "per_channel", "subjects"]
