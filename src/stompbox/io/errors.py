"""Exceptions of the audio file layer."""

from __future__ import annotations


class AudioFileError(ValueError):
    """Base class of audio file errors (a ``ValueError``, as pedalboard raises for bad files)."""


class UnsupportedFormatError(AudioFileError):
    """The data is not audio in a format stompbox can read, or a format/setting it cannot write."""


class CorruptAudioError(AudioFileError):
    """The file looked like audio but its data could not be decoded (truncated or damaged)."""


class ClosedFileError(AudioFileError, RuntimeError):
    """An operation on an audio file that has been closed."""

    def __init__(self, message: str = "I/O operation on a closed file.") -> None:
        super().__init__(message)
