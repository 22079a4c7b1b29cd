"""Helpers shared by the CLI subcommands."""

from __future__ import annotations

import math
import os
import sys
from typing import Any

import numpy as np

from .._base.errors import StompboxError

__all__ = ["CLIError", "open_reader", "ArraySource", "dbfs", "show_progress", "CHANNELS_HELP"]

#: ``--channels``: the conversion rule of :class:`stompbox.io.ChannelConvertedReadableAudioFile`, in one line.
CHANNELS_HELP = (
    "output channel count; fewer channels are downmixed as FFmpeg does (centre and surrounds at -3 dB, LFE "
    "dropped, scaled so it cannot clip; stereo to mono is the mean), mono is copied to every channel, and "
    "speakers a smaller layout lacks are silent"
)


class CLIError(StompboxError):
    """An error reported as ``stompbox: error: <message>`` with exit status ``status`` (default 1)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def open_reader(path: str) -> Any:
    """Open ``path`` for reading, turning the common failures into one-line :class:`CLIError` messages."""
    if not os.path.exists(path):
        raise CLIError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory")
    from ..io import AudioFile

    try:
        return AudioFile(path)
    except (ValueError, RuntimeError, OSError, TypeError) as error:
        raise CLIError(f"{path}: {' '.join(str(error).split())}") from error


def dbfs(peak: float) -> float:
    """A linear peak in dB relative to full scale (-inf for silence)."""
    return 20.0 * math.log10(peak) if peak > 0 else -math.inf


def show_progress(quiet: bool, seconds: float) -> bool:
    """Whether to draw a progress bar: on a terminal, not ``--quiet``, and for files longer than 20 s."""
    return not quiet and seconds >= 20.0 and sys.stderr.isatty()


class ArraySource:
    """An in-memory float32 ``(channels, n)`` array with the reader API (for generated audio)."""

    def __init__(self, samples: np.ndarray, samplerate: int, name: str = "") -> None:
        self._data = np.ascontiguousarray(samples, dtype=np.float32)
        self.samplerate = samplerate
        self.name = name
        self.file_dtype = "float32"
        self.exact_duration_known = True
        self.closed = False
        self._pos = 0

    @property
    def num_channels(self) -> int:
        return self._data.shape[0]

    @property
    def frames(self) -> int:
        return self._data.shape[1]

    @property
    def duration(self) -> float:
        return self.frames / self.samplerate

    def read(self, num_frames: int) -> np.ndarray:
        out = np.ascontiguousarray(self._data[:, self._pos : self._pos + num_frames])
        self._pos += out.shape[1]
        return out

    def seek(self, frame: int) -> None:
        self._pos = int(frame)

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> ArraySource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def resampled_to(self, rate: float, quality: Any = None) -> Any:
        from ..io.channels import WrappedReader

        return WrappedReader.resampled_to(self, rate, quality)  # type: ignore[arg-type]

    def with_channels(self, num_channels: int) -> Any:
        from ..io.channels import WrappedReader

        return WrappedReader.with_channels(self, num_channels)  # type: ignore[arg-type]


def conform(
    reader: Any, out_path: str, samplerate: float | None, channels: int | None, quality: Any, quiet: bool
) -> tuple[Any, int]:
    """:func:`stompbox.batch.conform_reader` for a command: a note on stderr when the output's format made it
    change the rate (unless ``quiet``), a :class:`CLIError` for a fractional rate."""
    from ..batch import conform_reader

    try:
        reader, rate, note = conform_reader(reader, out_path, samplerate, channels, quality)
    except ValueError as error:
        raise CLIError(str(error).replace("give samplerate", "pass --samplerate")) from error
    if note and not quiet:
        print(f"stompbox: note: {note}", file=sys.stderr)
    return reader, rate
