"""The root of stompbox's exceptions, and the error every limit raises (standard library only)."""

from __future__ import annotations


class StompboxError(Exception):
    """Base class of every exception defined by stompbox."""


class LimitError(StompboxError, ValueError):
    """A number outside the range stompbox accepts for it (a sample rate, a resampling ratio, a channel count,
    a tail length, a nesting depth, a chain file's size). The message states the allowed range; the ranges
    are listed in :mod:`stompbox.limits`."""
