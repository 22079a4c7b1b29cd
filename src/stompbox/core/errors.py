"""Exceptions raised by stompbox.

Several of them derive from two built-in exceptions at once, so that code written for pedalboard (which raises
``RuntimeError`` in these places) keeps working, while new code can catch the more natural ``ValueError``.
"""

from __future__ import annotations


class StompboxError(Exception):
    """Base class of every exception defined by stompbox."""


class LayoutError(StompboxError, ValueError, RuntimeError):
    """An audio array whose shape or channel layout cannot be used (3-D, ambiguous square, wrong channels)."""


class DuplicatePluginError(StompboxError, ValueError, RuntimeError):
    """The same plugin instance appears more than once in one processing tree."""


class ClosedError(StompboxError, ValueError, RuntimeError):
    """An operation on an audio file or stream that has already been closed."""


class ChoiceError(StompboxError, ValueError, TypeError):
    """A value that is not one of an enum parameter's members (``LadderFilter(mode=7)``): a ``ValueError``, and
    the ``TypeError`` pedalboard raises (its bindings reject the argument's type)."""


class AbstractPluginError(StompboxError, TypeError, RuntimeError):
    """A plugin base class instantiated directly (``IIRFilter()``): a ``TypeError``, and the ``RuntimeError``
    pedalboard raises."""
