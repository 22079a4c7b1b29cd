"""Measuring and showing audio: loudness per ITU-R BS.1770-4 / EBU R 128 (:mod:`stompbox.analysis.loudness`)
and plots of waveforms and spectrograms (:mod:`stompbox.analysis.plot`, needs the optional extra ``plot``).
Submodules are imported on use so ``import stompbox.analysis`` stays light.

``stompbox.analysis.loudness(audio, sample_rate)`` measures an array; the module of the same name holds the
rest (the module object is callable too, so the call works whichever was imported first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._base.lazy import lazy_names

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


if TYPE_CHECKING:  # the lazily loaded names, for type checkers and IDEs ("name as name": re-exported)
    from .loudness import LoudnessMeter as LoudnessMeter
    from .loudness import LoudnessNormalize as LoudnessNormalize
    from .loudness import LoudnessResult as LoudnessResult
    from .loudness import NormalizeReport as NormalizeReport
    from .loudness import loudness as loudness
    from .loudness import loudness_of_file as loudness_of_file
    from .loudness import normalization_gain_db as normalization_gain_db
    from .loudness import normalize_file as normalize_file


__getattr__, __dir__ = lazy_names(globals(), _LAZY_NAMES)
