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
