"""Measuring and showing audio: loudness per ITU-R BS.1770-4 / EBU R 128 (:mod:`stompbox.analysis.loudness`)
and plots of waveforms and spectrograms (:mod:`stompbox.analysis.plot`, needs the optional extra ``plot``).
Submodules are imported on use so ``import stompbox.analysis`` stays light.

``stompbox.analysis.loudness(audio, sample_rate)`` measures an array; the module of the same name holds the
rest (the module object is callable too, so the call works whichever was imported first).
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY_NAMES: dict[str, str] = {
    name: ".loudness"
    for name in (
        "loudness",
        "loudness_of_file",
        "LoudnessMeter",
        "LoudnessResult",
        "LoudnessNormalize",
        "NormalizeReport",
        "normalize_file",
        "normalization_gain_db",
    )
}

__all__ = sorted(_LAZY_NAMES)


def __getattr__(name: str) -> Any:
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
