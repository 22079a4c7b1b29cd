"""Exceptions raised by stompbox: one root, :class:`StompboxError`, exported as ``stompbox.StompboxError``.

Every exception stompbox defines derives from :class:`StompboxError` and also from the built-in exception that
pedalboard raises in the same place, so code written for pedalboard keeps working (``except RuntimeError``,
``except ImportError``), while new code can catch the more natural ``ValueError`` or everything at once with
``except stompbox.StompboxError``.

The audio file errors (:class:`~stompbox.io.AudioFileError` and its subclasses) live in ``stompbox.io.errors``
and derive from this root too.
"""

from __future__ import annotations

__all__ = [
    "AbstractPluginError",
    "AudioDeviceError",
    "ChainFormatError",
    "ChoiceError",
    "ClosedError",
    "DuplicatePluginError",
    "LayoutError",
    "LimitError",
    "PluginLoadError",
    "StompboxError",
]


class StompboxError(Exception):
    """Base class of every exception defined by stompbox."""


class LayoutError(StompboxError, ValueError, RuntimeError):
    """An audio array whose shape or channel layout cannot be used (3-D, ambiguous square, wrong channels)."""


class LimitError(StompboxError, ValueError):
    """A number outside the range stompbox accepts for it (a sample rate, a resampling ratio, a channel count,
    a tail length, a nesting depth, a chain file's size). The message states the allowed range; the ranges
    are listed in :mod:`stompbox.limits`."""


class DuplicatePluginError(StompboxError, ValueError, RuntimeError):
    """The same plugin instance appears more than once in one processing tree."""


class ClosedError(StompboxError, ValueError, RuntimeError):
    """An operation on an audio file or stream that has already been closed."""


class ChainFormatError(StompboxError, ValueError):
    """A chain description that cannot be turned into plugins (unknown type, bad parameter, bad file)."""


class AudioDeviceError(StompboxError, RuntimeError):
    """A live audio device that cannot be opened or that stopped while running (pedalboard: ``RuntimeError``)."""


class PluginLoadError(StompboxError, ImportError):
    """A third-party plugin (VST3, LV2, LADSPA) that cannot be loaded: a missing file, not a plugin, a library
    that fails to load or a plugin that fails to start. An ``ImportError``, as pedalboard raises."""


class ChoiceError(StompboxError, ValueError, TypeError):
    """A value that is not one of an enum parameter's members (``LadderFilter(mode=7)``): a ``ValueError``, and
    the ``TypeError`` pedalboard raises (its bindings reject the argument's type)."""


class AbstractPluginError(StompboxError, TypeError, RuntimeError):
    """A plugin base class instantiated directly (``IIRFilter()``): a ``TypeError``, and the ``RuntimeError``
    pedalboard raises."""
