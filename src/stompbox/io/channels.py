"""``ChannelConvertedReadableAudioFile``: a reader that changes the channel count of another, as a stream.

Also home of :class:`WrappedReader`, the shared base of the streaming reader wrappers (channel conversion and
resampling); they chain (``f.resampled_to(48000).mono()``) through :class:`~stompbox.io.reader.AudioReader`.
"""

from __future__ import annotations

import numbers
import threading
from typing import Any

import numpy as np

from .._base import channels as _base_channels
from .audiofile import AudioFile
from .errors import ClosedFileError
from .reader import AudioReader, check_num_frames

__all__ = ["ChannelConvertedReadableAudioFile", "WrappedReader", "convert_channels", "check_num_frames"]


def convert_channels(
    block: np.ndarray, num_channels: int, source_layout: str | None = None, target_layout: str | None = None
) -> np.ndarray:
    """Convert a float32 ``(channels, n)`` block to ``num_channels`` channels (C-contiguous float32).

    The one conversion rule of stompbox (:mod:`stompbox._base.channels`): FFmpeg's downmix with ITU-R BS.775
    levels, scaled so that it never clips; mono copied to every channel; missing speakers silent.
    """
    return _base_channels.convert_channels(block, num_channels, source_layout, target_layout)


class WrappedReader(AudioFile, AudioReader):
    """Common part of the readers that wrap another reader (not created directly). An :class:`AudioFile` (as
    pedalboard's wrappers are) and an :class:`~stompbox.io.reader.AudioReader`, whose chaining methods it has.

    Closing a wrapper does not close the wrapped file; ``closed`` is True when either is closed.
    """

    _CLASS_NAME = "WrappedReader"

    def __init__(self, audio_file: Any) -> None:
        for attribute in ("read", "seek", "tell", "samplerate", "num_channels", "frames"):
            if not hasattr(audio_file, attribute):
                raise TypeError(
                    f"{type(self).__name__} wraps a readable audio file (e.g. stompbox.io.AudioFile(path)), "
                    f"not {type(audio_file).__name__}."
                )
        if getattr(audio_file, "closed", False):
            raise ClosedFileError()
        self._file: Any = audio_file  # any reader: what it has beyond the attributes checked is looked up
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
        result: str = self._file.file_dtype
        return result

    @property
    def exact_duration_known(self) -> bool:
        """False while the underlying file's length is an estimate (e.g. an untagged MP3)."""
        return bool(getattr(self._file, "exact_duration_known", True))

    @property
    def channel_layout(self) -> str:
        """The layout of the channels, named as FFmpeg names it (the wrapped reader's; see
        :attr:`stompbox.io.ReadableAudioFile.channel_layout`)."""
        layout = getattr(self._file, "channel_layout", None)
        return layout if isinstance(layout, str) else _base_channels.layout_name(0, self.num_channels)

    @property
    def tags(self) -> dict[str, Any]:
        """The wrapped file's tags (see :attr:`stompbox.io.ReadableAudioFile.tags`)."""
        return dict(getattr(self._file, "tags", {}) or {})

    @property
    def closed(self) -> bool:
        """True once this wrapper or the wrapped file is closed."""
        return self._closed or bool(getattr(self._file, "closed", False))

    # subclasses define samplerate, num_channels, frames, read, seek, tell

    def seekable(self) -> bool:
        """Whether :meth:`seek` works (it does when the wrapped file is seekable)."""
        return bool(self._file.seekable()) if hasattr(self._file, "seekable") else True

    def close(self) -> None:
        """Close this wrapper (the wrapped file stays open; close it separately)."""
        with self._lock:
            self._closed = True

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
    The conversion rule (:mod:`stompbox._base.channels`) follows the wrapped reader's ``channel_layout`` and
    the target count's layout (mono, stereo, 3.0, quad, 5.0, 5.1, 6.1, 7.1):

    - from mono, the one channel copied to every output channel (pedalboard's rule);
    - stereo to mono, the mean of left and right (pedalboard's rule, and FFmpeg's);
    - surround to fewer channels, FFmpeg's default downmix (ITU-R BS.775 levels): centre and surrounds at
      -3 dB into the front pair, the LFE dropped, then scaled so that no output can clip. 5.1 to stereo is
      ``L' = (L + 0.7071 C + 0.7071 Ls) / 2.4142`` and ``R' = (R + 0.7071 C + 0.7071 Rs) / 2.4142``; 5.1 to
      mono is ``(0.7071 (L + R) + C + 0.5 (Ls + Rs)) / 3.4142``;
    - to more channels, the speakers both layouts have are kept and the others are silent (stereo to 5.1
      fills front left and right);
    - beyond 8 channels (no standard layout), mono is the mean and otherwise channel ``i`` stays channel
      ``i``.

    Frames, sample rate, ``tell`` and ``seek`` are the wrapped reader's; memory use is one block.
    """

    _CLASS_NAME = "ChannelConvertedReadableAudioFile"

    def __init__(self, audio_file: Any, num_channels: int) -> None:
        super().__init__(audio_file)
        if isinstance(num_channels, bool) or not isinstance(num_channels, numbers.Integral):
            raise TypeError(f"num_channels must be an int, not {type(num_channels).__name__}.")
        if num_channels < 1:
            raise ValueError(f"num_channels must be at least 1 (got {num_channels}).")
        self._channels: int = int(num_channels)
        layout = getattr(audio_file, "channel_layout", None)
        self._source_layout: str | None = layout if isinstance(layout, str) else None

    @property
    def samplerate(self) -> int | float:
        """Sample rate in Hz (the wrapped reader's)."""
        result: int | float = self._file.samplerate
        return result

    @property
    def num_channels(self) -> int:
        """Channels of the converted output."""
        return self._channels

    @property
    def channel_layout(self) -> str:
        """The output's layout: the standard layout of its channel count (see :mod:`stompbox._base.channels`)."""
        return _base_channels.default_layout(self._channels)

    @property
    def frames(self) -> int:
        """Length in frames (the wrapped reader's)."""
        result: int = self._file.frames
        return result

    def read(self, num_frames: int = 0) -> np.ndarray:
        """Read up to ``num_frames`` frames as float32 ``(num_channels, n)``; ``(num_channels, 0)`` at the end."""
        self._check_open()
        count = check_num_frames(num_frames)
        with self._lock:
            return convert_channels(self._file.read(count), self._channels, self._source_layout)

    def seek(self, position: int) -> None:
        """Move to frame ``position`` (sample-exact when the wrapped reader's seek is)."""
        self._check_open()
        with self._lock:
            self._file.seek(position)

    def tell(self) -> int:
        """Current position in frames."""
        result: int = self._file.tell()
        return result
