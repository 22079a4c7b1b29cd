"""``ChannelConvertedReadableAudioFile``: a reader that changes the channel count of another, as a stream.

Also home of :class:`WrappedReader`, the shared base of the streaming reader wrappers (channel conversion and
resampling), so that they chain: ``f.resampled_to(48000).mono()``.
"""

from __future__ import annotations

import numbers
import threading
from typing import Any

import numpy as np

__all__ = ["ChannelConvertedReadableAudioFile", "WrappedReader", "convert_channels", "check_num_frames"]


def check_num_frames(num_frames: Any) -> int:
    """Validate a ``read()`` count as pedalboard does and return it as an int > 0."""
    if type(num_frames) is int and num_frames > 0:  # the usual case, without the abstract-class checks
        return num_frames
    if isinstance(num_frames, bool) or not isinstance(num_frames, numbers.Real):
        raise TypeError(f"read() expects a number of frames, not {type(num_frames).__name__}.")
    if isinstance(num_frames, numbers.Integral):
        count = int(num_frames)
    else:
        value = float(num_frames)
        if not value.is_integer():
            raise ValueError("ReadableAudioFile cannot read a fractional number of samples.")
        count = int(value)
    if count == 0:
        raise ValueError(
            "ReadableAudioFile will not read an entire file at once, due to the possibility that a file may "
            "be larger than available memory. Please pass a number of frames to read (available from the "
            "'frames' attribute)."
        )
    if count < 0:
        raise ValueError(f"Cannot read a negative number of frames ({count}).")
    return count


def convert_channels(block: np.ndarray, num_channels: int) -> np.ndarray:
    """Convert a float32 ``(channels, n)`` block to ``num_channels`` channels (C-contiguous float32).

    The rule (documented in :class:`ChannelConvertedReadableAudioFile`): to one channel, the mean of all
    channels; from one channel, copies of it; from C > 1 to M > 1 channels, the first M channels when
    M < C, and the channels repeated in order (channel ``i`` is source channel ``i % C``) when M > C.
    """
    source = block.shape[0]
    if source == 0:  # a file without channels (e.g. a broken MP3): silence
        return np.zeros((num_channels, block.shape[1]), np.float32)
    if source == num_channels:
        return np.ascontiguousarray(block, dtype=np.float32)
    if num_channels == 1:
        return np.ascontiguousarray(block.mean(axis=0, dtype=np.float32)[None, :])
    if source == 1:
        return np.ascontiguousarray(np.broadcast_to(block, (num_channels, block.shape[1])), dtype=np.float32)
    if num_channels < source:
        return np.ascontiguousarray(block[:num_channels], dtype=np.float32)
    return np.ascontiguousarray(block[np.arange(num_channels) % source], dtype=np.float32)


class WrappedReader:
    """Common part of the readers that wrap another reader (not created directly).

    Closing a wrapper does not close the wrapped file; ``closed`` is True when either is closed.
    """

    _CLASS_NAME = "WrappedReader"

    @staticmethod
    def encode(*args: Any, **kwargs: Any) -> bytes:
        """:meth:`stompbox.io.AudioFile.encode` (pedalboard's wrapping readers inherit it)."""
        from .audiofile import AudioFile

        return AudioFile.encode(*args, **kwargs)

    def __init__(self, audio_file: Any) -> None:
        for attribute in ("read", "seek", "tell", "samplerate", "num_channels", "frames"):
            if not hasattr(audio_file, attribute):
                raise TypeError(
                    f"{type(self).__name__} wraps a readable audio file (e.g. stompbox.io.AudioFile(path)), "
                    f"not {type(audio_file).__name__}."
                )
        if getattr(audio_file, "closed", False):
            raise RuntimeError("I/O operation on a closed file.")
        self._file = audio_file
        self._closed = False
        self._lock = threading.RLock()  # as a file's: one read, seek or close at a time (the resampler's C
        # library aborted the process when two threads drove one stream)

    # -- passthrough properties ---------------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        """Name (path) of the underlying file, or None for a file-like object."""
        return getattr(self._file, "name", None)

    @property
    def file_dtype(self) -> str:
        """Sample type stored in the underlying file ("int16", "float32", ...)."""
        return self._file.file_dtype

    @property
    def exact_duration_known(self) -> bool:
        """False while the underlying file's length is an estimate (e.g. an untagged MP3)."""
        return bool(getattr(self._file, "exact_duration_known", True))

    @property
    def closed(self) -> bool:
        """True once this wrapper or the wrapped file is closed."""
        return self._closed or bool(getattr(self._file, "closed", False))

    @property
    def duration(self) -> float:
        """Length in seconds (``frames / samplerate``)."""
        return self.frames / self.samplerate

    # subclasses define samplerate, num_channels, frames, read, seek, tell

    def seekable(self) -> bool:
        """Whether :meth:`seek` works (it does when the wrapped file is seekable)."""
        return bool(self._file.seekable()) if hasattr(self._file, "seekable") else True

    def close(self) -> None:
        """Close this wrapper (the wrapped file stays open; close it separately)."""
        with self._lock:
            self._closed = True

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("I/O operation on a closed file.")

    def __enter__(self) -> WrappedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- chaining -----------------------------------------------------------------------------------------
    def resampled_to(self, target_sample_rate: float, quality: Any = None) -> Any:
        """Return a reader of this one at ``target_sample_rate`` Hz (``self`` if the rate is the same)."""
        from .quality import Quality
        from .resample import ResampledReadableAudioFile

        if target_sample_rate == self.samplerate:
            return self
        return ResampledReadableAudioFile(
            self, target_sample_rate, Quality.WindowedSinc32 if quality is None else quality
        )

    def with_channels(self, num_channels: int) -> Any:
        """Return a reader of this one with ``num_channels`` channels (``self`` if already so)."""
        if num_channels == self.num_channels:
            return self
        return ChannelConvertedReadableAudioFile(self, num_channels)

    def mono(self) -> Any:
        """Return a one-channel reader of this one (the mean of the channels)."""
        return self.with_channels(1)

    def stereo(self) -> Any:
        """Return a two-channel reader of this one (mono is duplicated)."""
        return self.with_channels(2)

    def _repr_fields(self) -> str:
        name = self.name
        where = f'filename="{name}"' if name else f"file_like={self._file!r}"
        return (
            f"{where} samplerate={self.samplerate} num_channels={self.num_channels} frames={self.frames} "
            f"file_dtype={self.file_dtype}"
        )

    def __repr__(self) -> str:
        if self.closed:
            return f"<stompbox.io.{self._CLASS_NAME} closed at {hex(id(self))}>"
        return f"<stompbox.io.{self._CLASS_NAME} {self._repr_fields()} at {hex(id(self))}>"


class ChannelConvertedReadableAudioFile(WrappedReader):
    """A reader with a different channel count, converting another reader block by block.

    Parameters
    ----------
    audio_file : ReadableAudioFile
        Any stompbox reader (a file, a resampled reader, ...). It is not closed by :meth:`close`.
    num_channels : int
        Channels of the output (>= 1).

    Notes
    -----
    Conversion rule: to mono, the mean of all channels; from mono, the one channel copied to every output
    channel; from C > 1 to M > 1 channels, the first M channels when M < C (e.g. stereo from 5.1 keeps
    front left and right, with no centre or surround fold-down), and the source channels repeated in order
    when M > C (stereo to 4 channels gives L, R, L, R). Frames, sample rate, ``tell`` and ``seek`` are the
    wrapped reader's; memory use is one block.
    """

    _CLASS_NAME = "ChannelConvertedReadableAudioFile"

    def __init__(self, audio_file: Any, num_channels: int) -> None:
        super().__init__(audio_file)
        if isinstance(num_channels, bool) or not isinstance(num_channels, numbers.Integral):
            raise TypeError(f"num_channels must be an int, not {type(num_channels).__name__}.")
        if num_channels < 1:
            raise ValueError(f"num_channels must be at least 1 (got {num_channels}).")
        self._channels = int(num_channels)

    @property
    def samplerate(self) -> int | float:
        """Sample rate in Hz (the wrapped reader's)."""
        return self._file.samplerate

    @property
    def num_channels(self) -> int:
        """Channels of the converted output."""
        return self._channels

    @property
    def frames(self) -> int:
        """Length in frames (the wrapped reader's)."""
        return self._file.frames

    def read(self, num_frames: int = 0) -> np.ndarray:
        """Read up to ``num_frames`` frames as float32 ``(num_channels, n)``; ``(num_channels, 0)`` at the end."""
        self._check_open()
        count = check_num_frames(num_frames)
        with self._lock:
            return convert_channels(self._file.read(count), self._channels)

    def seek(self, position: int) -> None:
        """Move to frame ``position`` (sample-exact when the wrapped reader's seek is)."""
        self._check_open()
        with self._lock:
            self._file.seek(position)

    def tell(self) -> int:
        """Current position in frames."""
        return self._file.tell()
