"""Exceptions of the audio file layer.

Every one is a ``ValueError`` (pedalboard raises ``ValueError`` for files it cannot open) and a
:class:`stompbox.core.errors.StompboxError`; some also derive from the built-in exception that names the
problem best, so ``except FileNotFoundError`` and ``except ValueError`` both work.
"""

from __future__ import annotations

from ..core.errors import ClosedError, StompboxError


class AudioFileError(StompboxError, ValueError):
    """Base class of audio file errors (a ``ValueError``, as pedalboard raises for bad files)."""


class AudioFileNotFoundError(AudioFileError, FileNotFoundError):
    """The path does not exist (pedalboard: ``ValueError`` "file does not exist")."""


class NotAnAudioFileError(AudioFileError, IsADirectoryError):
    """The path is a directory."""


class UnsupportedFormatError(AudioFileError):
    """The data is not audio in a format stompbox can read, or a format/setting it cannot write."""


class CorruptAudioError(AudioFileError):
    """The file looked like audio but its data could not be decoded (truncated or damaged)."""


class ClosedFileError(AudioFileError, ClosedError):
    """An operation on an audio file that has been closed (also a ``RuntimeError``, as pedalboard raises)."""

    def __init__(self, message: str = "I/O operation on a closed file.") -> None:
        super().__init__(message)


__all__ = [
    "AudioFileError",
    "AudioFileNotFoundError",
    "ClosedFileError",
    "CorruptAudioError",
    "NotAnAudioFileError",
    "UnsupportedFormatError",
]
