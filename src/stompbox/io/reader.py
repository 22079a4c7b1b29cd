"""``AudioReader``: the one base of every reader (files, the resampling and channel-converting wrappers, raw
streams, arrays), with the chaining methods written once.

A reader is a seekable stream of float32 ``(channels, frames)`` blocks. A subclass provides ``samplerate``,
``num_channels``, ``frames``, ``read``, ``seek``, ``tell``, ``close`` and ``closed`` (and, when it has them,
``name``, ``file_dtype``, ``exact_duration_known``); it gets ``duration``, ``seekable``, use as a context
manager, and the streaming conversions :meth:`~AudioReader.resampled_to`, :meth:`~AudioReader.with_channels`,
:meth:`~AudioReader.mono` and :meth:`~AudioReader.stereo`, which wrap it in another reader and so chain:
``f.resampled_to(48000).mono()``.

The wrapper classes (:class:`~stompbox.io.ResampledReadableAudioFile`,
:class:`~stompbox.io.ChannelConvertedReadableAudioFile`) are readers themselves, defined above this module;
``stompbox.io`` hands them to :func:`provide_wrappers` when it is imported (which importing any of its modules
does), and they are loaded on first use.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from .errors import ClosedFileError

__all__ = ["AudioReader", "check_num_frames", "provide_wrappers"]

_resampled: Callable[[AudioReader, float, Any], AudioReader] | None = None
_converted: Callable[[AudioReader, int], AudioReader] | None = None


def provide_wrappers(
    resampled: Callable[[AudioReader, float, Any], AudioReader], converted: Callable[[AudioReader, int], AudioReader]
) -> None:
    """Set the wrappers the chaining methods build: ``resampled(reader, rate, quality)`` and
    ``converted(reader, num_channels)`` (called by ``stompbox.io``; not for users)."""
    global _resampled, _converted
    _resampled, _converted = resampled, converted


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


def _same_rate(a: Any, b: Any) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):  # not a number: the wrapper says what is wrong with it
        return False


class AudioReader:
    """Base class of every stompbox reader: a stream of float32 ``(channels, frames)`` blocks.

    Subclasses provide ``samplerate``, ``num_channels``, ``frames``, ``read(num_frames)``, ``seek(frame)``,
    ``tell()``, ``close()`` and ``closed``. Reading a closed reader raises
    :class:`~stompbox.io.ClosedFileError`.
    """

    if TYPE_CHECKING:  # provided by subclasses, as attributes or as read-only properties

        @property
        def samplerate(self) -> float: ...
        @property
        def num_channels(self) -> int: ...
        @property
        def frames(self) -> int: ...
        @property
        def closed(self) -> bool: ...

    def read(self, num_frames: int) -> np.ndarray:
        """Read up to ``num_frames`` frames as float32 ``(num_channels, n)``; ``(num_channels, 0)`` at the end."""
        raise NotImplementedError

    def seek(self, position: int) -> None:
        """Move to frame ``position``."""
        raise NotImplementedError

    def tell(self) -> int:
        """Current position in frames."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the reader; reading afterwards raises :class:`~stompbox.io.ClosedFileError`."""
        raise NotImplementedError

    @property
    def duration(self) -> float:
        """Length in seconds (``frames / samplerate``)."""
        return float(self.frames / self.samplerate)

    def seekable(self) -> bool:
        """Whether :meth:`seek` works."""
        return True

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedFileError()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ chaining
    def resampled_to(self, target_sample_rate: float, quality: Any = None) -> AudioReader:
        """This reader at ``target_sample_rate`` Hz, resampled as a stream in constant memory (``self`` if the
        rate is the same); ``quality`` defaults to ``Quality.WindowedSinc32`` (see
        :class:`~stompbox.io.ResampledReadableAudioFile`)."""
        if _same_rate(target_sample_rate, self.samplerate):
            return self
        if _resampled is None:
            raise RuntimeError("stompbox.io is not initialised")
        return _resampled(self, target_sample_rate, quality)

    def with_channels(self, num_channels: int) -> AudioReader:
        """This reader with ``num_channels`` channels, converted as a stream (``self`` if already so; see
        :class:`~stompbox.io.ChannelConvertedReadableAudioFile` for the rule)."""
        if num_channels == self.num_channels:
            return self
        if _converted is None:
            raise RuntimeError("stompbox.io is not initialised")
        return _converted(self, num_channels)

    def mono(self) -> AudioReader:
        """This reader as one channel, in constant memory: stereo is averaged, surround downmixed as FFmpeg does
        (see :class:`~stompbox.io.ChannelConvertedReadableAudioFile`)."""
        return self.with_channels(1)

    def stereo(self) -> AudioReader:
        """This reader as two channels, in constant memory: mono is duplicated, surround downmixed as FFmpeg does
        (centre and surrounds at -3 dB, the LFE dropped, scaled not to clip; see
        :class:`~stompbox.io.ChannelConvertedReadableAudioFile`)."""
        return self.with_channels(2)
