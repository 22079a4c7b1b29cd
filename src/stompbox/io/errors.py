"""Exceptions of the audio file layer.

Each is a :class:`stompbox.StompboxError`, and every one but :class:`AudioWriteError` a ``ValueError``
(pedalboard raises ``ValueError`` for files it cannot open); some also derive from the built-in exception that
names the problem best, so ``except FileNotFoundError`` and ``except ValueError`` both work.
"""

from __future__ import annotations

from .._base.errors import ClosedError, StompboxError


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


class TruncatedAudioWarning(UserWarning):
    """A file's audio data ends before the length its header declares (a cut download, a copy interrupted):
    what is present is read, the length is corrected, and this warning names the file, once per opened file.
    Damage in the middle of the audio is a :class:`CorruptAudioError` instead."""


class AudioWriteError(StompboxError, OSError, RuntimeError):
    """An encoder could not write a file: the target refused bytes or a seek, or the codec library failed.

    A ``RuntimeError`` (pedalboard raises ``RuntimeError`` "Unable to write data to audio file.") and an
    ``OSError``. An exception raised by a file-like object's own ``write``/``seek`` reaches the caller as it is.
    """


class ClosedFileError(AudioFileError, ClosedError):
    """An operation on an audio file that has been closed (also a ``RuntimeError``, as pedalboard raises)."""

    def __init__(self, message: str = "I/O operation on a closed file.") -> None:
        super().__init__(message)


__all__ = [
    "AudioFileError",
    "AudioWriteError",
    "AudioFileNotFoundError",
    "ClosedFileError",
    "CorruptAudioError",
    "NotAnAudioFileError",
    "TruncatedAudioWarning",
    "UnsupportedFormatError",
]
