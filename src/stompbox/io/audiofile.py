"""``AudioFile``: read and write audio files as streams, compatible with ``pedalboard.io.AudioFile``.

``AudioFile(path_or_file)`` returns a :class:`ReadableAudioFile`; ``AudioFile(path_or_file, "w", samplerate,
num_channels, ...)`` returns a :class:`WriteableAudioFile`. Paths may be ``str`` or any ``os.PathLike``; file-like
objects (``io.BytesIO``, open binary files) work for both, and non-seekable streams (pipes) can be read front to
back.
"""

from __future__ import annotations

import atexit
import numbers
import os
import stat
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, overload

import numpy as np

from .._base import atomic, jit, limits
from .._base.atomic import AtomicWrite
from .._base.channels import layout_name
from .._base.errors import LayoutError
from .._base.layout import check_ndim, detect_layout
from . import formats
from .codecs.backends import QUANTIZE, Decoder, Encoder, quantize
from .codecs.codec_choice import open_decoder, open_encoder
from .errors import (
    AudioFileNotFoundError,
    AudioWriteError,
    ClosedFileError,
    CorruptAudioError,
    NotAnAudioFileError,
    UnsupportedFormatError,
)
from .reader import AudioReader, check_num_frames

MODE_ERROR = 'AudioFile instances can only be opened in read mode ("r") or write mode ("w").'


def _path_or_file(obj: Any) -> tuple[str | None, Any]:
    """(path, None) for a path, (None, file) for a file-like object; TypeError for anything else."""
    if isinstance(obj, bytes | bytearray):
        raise TypeError(
            "AudioFile got a bytes object. To read audio from memory, wrap it: AudioFile(io.BytesIO(data)); "
            "to open a file, pass its path as str or pathlib.Path."
        )
    if isinstance(obj, str | os.PathLike):
        return os.fspath(obj), None
    if isinstance(obj, memoryview):
        import io

        return None, io.BytesIO(obj.tobytes())
    if hasattr(obj, "read") or hasattr(obj, "write"):
        return None, obj
    raise TypeError(f"AudioFile expects a path (str or os.PathLike) or a binary file-like object, not {obj!r:.60}.")


def _rate_value(rate: float) -> int | float:
    return int(rate) if float(rate).is_integer() else float(rate)


QUANTIZE_FRAMES = 1 << 16  # frames quantised at a time by NumPy (its float64 temporaries stay this small)
PIPELINE_FRAMES = 1 << 17  # a 24-bit write of twice this quantises in steps on the helper thread as it writes


def quantize_interleave(frames_last: np.ndarray, file_dtype: str) -> np.ndarray:
    """:func:`~stompbox.io.codecs.backends.quantize` of a float ``(frames, channels)`` view of any layout, in one
    pass."""
    from .codecs import _pcm_kernels

    full, container, shift = QUANTIZE[file_dtype]
    low, high = (-full, full - 1) if file_dtype == "int32" else (-full - 1, full)
    channels_first = np.ascontiguousarray(frames_last.T, dtype=np.float32)  # a view when it already is
    out = np.empty(frames_last.shape, container)
    _pcm_kernels.quantize_interleave(channels_first, out, float(full), float(low), float(high), shift)
    return out


def _quantize_in_steps(frames_last: np.ndarray, file_dtype: str) -> np.ndarray:
    """:func:`~stompbox.io.codecs.backends.quantize` of a float ``(frames, channels)`` view of any layout with NumPy,
    :data:`QUANTIZE_FRAMES` at a time, into one interleaved integer array (the same integers as the kernel)."""
    out = np.empty(frames_last.shape, QUANTIZE[file_dtype][1])
    # a (channels, frames) array, or a slice of one: each channel's samples are contiguous
    by_rows = frames_last.shape[1] > 1 and frames_last.strides[0] == frames_last.itemsize
    for start in range(0, frames_last.shape[0], QUANTIZE_FRAMES):
        step = frames_last[start : start + QUANTIZE_FRAMES]
        if by_rows:  # quantise along the rows, then interleave the (smaller) integers
            _interleave(
                quantize(np.asarray(step.T, dtype=np.float32), file_dtype), out[start : start + QUANTIZE_FRAMES]
            )
        else:
            out[start : start + QUANTIZE_FRAMES] = quantize(np.asarray(step, dtype=np.float32), file_dtype)
    return out


def _interleave(rows: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = rows.T`` for a C-contiguous ``(frames, channels)`` ``out``. Two channels of 16 or 32 bits are
    packed into one integer twice as wide per frame (contiguous shifts, ~6x faster than NumPy's transposing
    copy)."""
    channels, frames = rows.shape
    size = rows.dtype.itemsize
    if channels == 2 and size in (2, 4) and out.flags.c_contiguous:
        wide, narrow = (np.uint32, np.uint16) if size == 2 else (np.uint64, np.uint32)
        low, high = (rows[0], rows[1]) if sys.byteorder == "little" else (rows[1], rows[0])
        packed = out.view(wide).reshape(frames)
        np.left_shift(np.ascontiguousarray(high).view(narrow), 8 * size, out=packed, dtype=wide)
        np.bitwise_or(packed, np.ascontiguousarray(low).view(narrow), out=packed)
        return
    out[...] = rows.T


def _release(handle: int) -> None:
    """Close ``handle`` (the file a write replaced) on the I/O helper thread: freeing a large file's blocks takes
    longer than writing a small one."""
    try:
        from .helper_thread import helper

        helper().submit(os.close, handle)
    except RuntimeError:  # the interpreter is shutting down (a writer finished at exit): close it here
        os.close(handle)


_OPEN_WRITERS: weakref.WeakSet[WriteableAudioFile] = weakref.WeakSet()


def _finish_at_exit() -> None:
    """Finish the writers still open at interpreter exit, as collecting them would; discard them instead if the
    program is ending on an uncaught exception (its output would be cut short wherever the exception hit)."""
    died = getattr(sys, "last_value", None) is not None or getattr(sys, "last_exc", None) is not None
    for writer in list(_OPEN_WRITERS):
        try:
            writer._dropped(discard=died)
        except Exception as exc:  # noqa: BLE001 - one failure must not keep the others from finishing
            print(f"stompbox: could not finish {writer._path or 'an audio file'} at exit: {exc}", file=sys.stderr)


atexit.register(_finish_at_exit)


class _OffsetFile:
    """A seekable binary file-like seen from byte ``origin`` on: ``tell()``/``seek()`` count from there."""

    def __init__(self, file: BinaryIO, origin: int) -> None:
        self._file = file
        self._origin = origin

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            self._file.seek(self._origin + max(0, offset))
        else:
            self._file.seek(offset, whence)
            if self._file.tell() < self._origin:
                self._file.seek(self._origin)
        return self.tell()

    def tell(self) -> int:
        return self._file.tell() - self._origin

    def seekable(self) -> bool:
        return True


class _AudioFileMeta(type):
    """``AudioFile(...)`` is a factory returning a reader or a writer (both subclasses of AudioFile).

    The file may also be given by pedalboard's keyword names, ``filename=`` (a path) or ``file_like=`` (a file
    object), to any of the three classes.
    """

    if not TYPE_CHECKING:  # type checkers read AudioFile.__new__'s overloads instead

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            named = [key for key in ("filename", "file_like", "path_or_file") if key in kwargs]
            if named:
                if args or len(named) > 1:
                    given = ", ".join(["a positional file"] * bool(args) + [f"{key}=" for key in named])
                    raise TypeError(f"{cls.__name__}() takes one file (a path or a file-like object); got {given}.")
                args = (kwargs.pop(named[0]),)
            if cls is AudioFile:
                return AudioFile._open(*args, **kwargs)
            return super().__call__(*args, **kwargs)


class AudioFile(metaclass=_AudioFileMeta):
    """Open an audio file for reading (``"r"``, the default) or writing (``"w"``).

    Parameters
    ----------
    path_or_file : str, os.PathLike or file-like
        What to read or write.
    mode : {"r", "w"}
        Read or write.
    samplerate : int
        Sample rate in Hz of a file opened for writing (required for ``"w"``).
    num_channels : int
        Channels of a file opened for writing (default 1).
    bit_depth : int or str
        Bits per sample for PCM formats: 8, 16 (default), 24, 32 (32-bit float, as pedalboard) or 64 (64-bit
        float); ``"int32"`` for 32-bit integer WAV/AIFF. FLAC takes 16 or 24; lossy formats ignore it. Floats
        go into integer files as ``round(x * (2**(bits-1) - 1))``, clipped (the inverse of reading).
    quality : str, int or float, optional
        Encoder quality as pedalboard accepts it: MP3 ``"V0"``..``"V9"`` or ``"320 kbps"`` (default 320 kbps),
        Vorbis kbps (default 500), FLAC level 0-8 (default 8), Opus and AAC kbps. Opus is written at 8, 12,
        16, 24 or 48 kHz only (other rates raise ``ValueError``: resample first, e.g. with ``resampled_to``).
    format : str, optional
        Output format (``"wav"``, ``".mp3"``, ...) when it cannot be taken from the file name.
    tags : dict, optional
        Tags written into the file when it is closed (``{"title": ..., "artist": ..., "cover": b"..."}``; see
        :attr:`ReadableAudioFile.tags`). MP3, FLAC, Ogg Vorbis, Opus, M4A and WAV take them; a file-like
        target must then be readable and seekable.
    """

    if TYPE_CHECKING:  # what AudioFile(...) returns, for type checkers (the metaclass builds it)

        @overload
        def __new__(cls, filename: str | os.PathLike[str], mode: Literal["r"] = "r") -> ReadableAudioFile: ...

        @overload
        def __new__(cls, file_like: BinaryIO | memoryview, mode: Literal["r"] = "r") -> ReadableAudioFile: ...

        @overload
        def __new__(
            cls,
            filename: str | os.PathLike[str] | BinaryIO,
            mode: Literal["w"],
            samplerate: float | None = None,
            num_channels: int = 1,
            bit_depth: int | str = 16,
            quality: str | float | None = None,
            format: str | None = None,
            codec_options: dict[Any, Any] | None = None,
            tags: dict[str, Any] | None = None,
        ) -> WriteableAudioFile: ...

        def __new__(cls, *args: Any, **kwargs: Any) -> Any: ...

    @staticmethod
    def _open(
        path_or_file: Any,
        mode: str = "r",
        samplerate: float | None = None,
        num_channels: int = 1,
        bit_depth: int | str = 16,
        quality: Any = None,
        format: str | None = None,
        codec_options: dict[Any, Any] | None = None,
        tags: dict[str, Any] | None = None,
    ) -> ReadableAudioFile | WriteableAudioFile:
        if not isinstance(mode, str) or mode not in ("r", "w"):
            raise TypeError(MODE_ERROR)
        if mode == "r":
            return ReadableAudioFile(path_or_file)
        if samplerate is None:
            raise TypeError("Opening an audio file for writing requires samplerate and num_channels arguments.")
        return WriteableAudioFile(
            path_or_file, samplerate, num_channels, bit_depth, quality, format, codec_options, tags=tags
        )

    @staticmethod
    def encode(
        samples: np.ndarray,
        samplerate: float,
        format: str,
        num_channels: int = 1,
        bit_depth: int | str = 16,
        quality: Any = None,
        codec_options: dict[Any, Any] | None = None,
        num_threads: int = 1,
    ) -> bytes:
        """Encode ``samples`` to the bytes of a file of ``format`` (e.g. ``"mp3"`` or ``".flac"``): the bytes
        writing them to an ``io.BytesIO`` gives.

        ``num_threads`` (a positive integer) is accepted as pedalboard 0.9.26 accepts it, and validated the same
        way, but every format is encoded on one thread: pedalboard splices separately encoded MP3 chunks (bytes
        that differ from a serial encode), which needs control of LAME's bit reservoir that libsndfile does not
        give. The result is the serial encode, which decodes as pedalboard's threaded one does.
        """
        import io

        if isinstance(num_threads, float) or not isinstance(num_threads, numbers.Integral):
            raise TypeError(f"num_threads must be an integer (got {num_threads!r}).")
        if num_threads < 1:
            raise ValueError("num_threads must be a positive integer.")

        buffer = io.BytesIO()
        with WriteableAudioFile(buffer, samplerate, num_channels, bit_depth, quality, format, codec_options) as out:
            out.write(samples)
        return buffer.getvalue()


class ReadableAudioFile(AudioFile, AudioReader):
    """An audio file opened for reading: a seekable stream of float32 ``(channels, frames)`` blocks.

    Properties are ``samplerate`` (Hz; an int when integral), ``num_channels``, ``frames`` (the length;
    an estimate while ``exact_duration_known`` is False, e.g. for an MP3 without a LAME tag), ``duration``
    (seconds), ``file_dtype`` (``"int16"``, ``"int24"``, ``"float32"``, ...), ``name`` and ``closed``.
    Integer PCM reads as pedalboard reads it, ``k * float32(1 / (2**(bits-1) - 1))`` (int16 ``k / 32767``, so
    -32768 reads as -1.0000305; int32 ``k / 2**31``); :class:`WriteableAudioFile` writes floats as the exact
    inverse, so integer files read and written again at the same bit depth are bit-identical.

    ``seek()`` lands on the exact frame in every format, and the samples read after it are those of a linear
    decode: MP3 and Opus are decoded from a pre-roll before the target, Vorbis from the start of its page. Two
    FFmpeg cases decode linearly instead: raw ADTS/AC3 streams (no index: backward seeks decode from the start)
    and AAC within 60 s of the start or ahead of the position (its decoder's noise substitution depends on
    everything decoded before; further away, a seek is exact in time and differs only in noise-substituted
    bands). In mono MP3s and below 32 kHz (MPEG-2/2.5), mpg123 rounds differently after a seek: the samples
    are in place and within two float32 rounding steps (2.4e-7) of a linear decode's.
    """

    def __init__(self, path_or_file: Any) -> None:
        path, file = _path_or_file(path_or_file)
        self._path = path
        self._fileobj = file
        self._shown = path_or_file if isinstance(path_or_file, memoryview) else file  # repr: what was passed
        self._lock = threading.RLock()  # one read, seek or close at a time: a shared reader's reads are atomic
        self._closed = True
        name: str | None
        if path is not None:
            try:
                status = os.stat(path)  # one call for what exists(), isdir() and getsize() would each ask
            except (OSError, ValueError):
                status = None
            if status is None:
                raise AudioFileNotFoundError(f"Failed to open audio file: file does not exist: {path}")
            if stat.S_ISDIR(status.st_mode):
                raise NotAnAudioFileError(f"Failed to open audio file: {path} is a directory, not an audio file.")
            if status.st_size == 0:
                raise UnsupportedFormatError(f'Failed to open audio file: file "{path}" is empty.')
            name = path
            source: Any = path
            seekable = True
        else:
            given = getattr(file, "name", None)
            name = given if isinstance(given, str) else None
            source, seekable = self._check_file_like(file)
        self._name = name
        self._source = source if seekable else None  # for the tags, read when first asked for
        self._tags: dict[str, Any] | None = None
        self._decoder: Decoder = open_decoder(source, name or repr(file), seekable)
        self._seekable = seekable
        self._closed = False

    @staticmethod
    def _check_file_like(file: Any) -> tuple[Any, bool]:
        if not hasattr(file, "read"):
            raise TypeError(f"A file-like object for reading needs a read() method ({file!r:.60} has none).")
        seekable_attr = getattr(file, "seekable", None)
        if seekable_attr is not None and not callable(seekable_attr):
            raise TypeError("The file-like object's seekable attribute must be a method returning a bool.")
        seekable = bool(seekable_attr()) if seekable_attr is not None else hasattr(file, "seek")
        if not seekable:
            return file, False
        position = file.tell()
        probe = file.read(4)
        if isinstance(probe, str):
            raise TypeError("The file-like object is expected to return bytes from read(), but it returned str.")
        if not probe:
            file.seek(0, os.SEEK_END)
            if file.tell() == 0:
                raise UnsupportedFormatError("Failed to open audio file: the file-like object is empty.")
            raise UnsupportedFormatError(
                "The file-like object is positioned at the end of the stream. Try seeking to the start first: "
                "file.seek(0)."
            )
        file.seek(position)
        # As in pedalboard, the audio starts where the file-like is positioned: a file embedded at an offset
        # reads as if that offset were the start.
        return (_OffsetFile(file, position) if position else file), True

    # ------------------------------------------------------------------ properties
    @property
    def name(self) -> str | None:
        """The path of the file (``None`` for a file-like object without a name)."""
        return self._name

    @property
    def samplerate(self) -> int | float:
        """The file's sample rate in Hz."""
        return _rate_value(self._decoder.samplerate)

    @property
    def num_channels(self) -> int:
        """The number of channels."""
        return self._decoder.num_channels

    @property
    def frames(self) -> int:
        """The length in samples per channel (for some MP3 and OGG streams, an estimate until
        ``exact_duration_known``)."""
        return self._decoder.frames

    @property
    def duration(self) -> float:
        """The length in seconds (``frames / samplerate``)."""
        return self.frames / self._decoder.samplerate

    @property
    def file_dtype(self) -> str:
        """The sample type stored in the file: ``int8``, ``int16``, ``int24``, ``int32``, ``float32`` or
        ``float64`` (lossy formats: ``float32``)."""
        return self._decoder.file_dtype

    @property
    def exact_duration_known(self) -> bool:
        """True once ``frames`` is exact rather than estimated from the header or bitrate."""
        return self._decoder.exact

    @property
    def closed(self) -> bool:
        """True after ``close()``."""
        return self._closed

    @property
    def channel_layout(self) -> str:
        """The layout of the channels, named as FFmpeg names it: ``"mono"``, ``"stereo"``, ``"5.1"``,
        ``"5.1(side)"``, ``"7.1"``... (``ffmpeg -layouts`` lists them). It is what the file states (a WAV/CAF
        channel mask, an M4A's channel configuration) or the layout its format fixes for the channel count
        (FLAC, Ogg Vorbis, Opus). Speakers without a standard name are listed as FFmpeg lists them
        (``"3 channels (FL+FR+SL)"``), and a file that states no speakers for 3 or more channels gives
        ``"N channels"``. Channels are always read in this layout's order, WAV's (FL, FR, FC, LFE, BL, BR, FLC,
        FRC, BC, SL, SR), whatever the file's own order (Vorbis and Opus put the centre second and the LFE
        last)."""
        layout = self._decoder.channel_layout
        return layout if layout else layout_name(0, self.num_channels)

    @property
    def tags(self) -> dict[str, Any]:
        """The file's tags as a new dict: ``"title"``, ``"artist"``, ``"album"``, ``"track"``, ``"date"``,
        ``"comment"`` (strings) and ``"cover"`` (the cover image's bytes), those the file has. Read from ID3v2
        (MP3), Vorbis comments and pictures (FLAC, Ogg Vorbis, Opus), MP4 ``ilst`` atoms (M4A) and WAV's
        ``LIST``/``INFO`` chunk (see :mod:`stompbox.io.tags`); ``{}`` for other formats and non-seekable
        streams. Pass them to a writer to keep them: ``AudioFile(out, "w", ..., tags=f.tags)``."""
        with self._lock:
            self._check_open()
            if self._tags is None:
                from .tags import read_tags

                self._tags = {} if self._source is None else read_tags(self._source, self._decoder.format_name)
            return dict(self._tags)

    @property
    def format(self) -> str:
        """The container format the decoder found (``"WAV"``, ``"FLAC"``, ``"MP3"``, ``"MOV"``...)."""
        return self._decoder.format_name

    @property
    def codec(self) -> str:
        """The codec or sample format inside the container (``"PCM_16"``, ``"VORBIS"``, ``"AAC"``...)."""
        return self._decoder.subtype

    # ------------------------------------------------------------------ reading
    def _check_open(self) -> None:
        if self._closed:
            raise ClosedFileError()

    def read(self, num_frames: int | float = 0) -> np.ndarray:
        """Read up to ``num_frames`` frames as float32 ``(channels, frames)``; fewer at the end, none at EOF."""
        count = num_frames if type(num_frames) is int and num_frames > 0 else check_num_frames(num_frames)
        with self._lock:
            if self._closed:
                raise ClosedFileError()
            return self._decoder.read(count)

    def read_raw(self, num_frames: int | float = 0) -> np.ndarray:
        """Read frames in the file's own sample type (int8/16/32, float32/64); 24-bit files give int32 arrays
        holding 24-bit values, and compressed formats give float32."""
        count = check_num_frames(num_frames)
        with self._lock:
            self._check_open()
            return self._decoder.read_raw(count)

    def chunks(self, num_frames: int = 65536) -> Iterator[np.ndarray]:
        """Yield float32 blocks of ``num_frames`` frames (the last may be shorter) from here to the end."""
        while True:
            block = self.read(num_frames)
            if block.shape[1] == 0:
                return
            yield block
            if block.shape[1] < num_frames:
                return

    def seek(self, position: int) -> None:
        """Move to frame ``position`` (sample-exact in every format)."""
        if type(position) is not int and (isinstance(position, bool) or not isinstance(position, numbers.Integral)):
            if isinstance(position, numbers.Real) and float(position).is_integer():
                position = int(position)
            else:
                raise TypeError(f"seek() expects a whole number of frames (got {position!r}).")
        position = int(position)
        with self._lock:
            if self._closed:
                raise ClosedFileError()
            decoder = self._decoder
            if position < 0:
                raise ValueError(f"Cannot seek before start of file (position {position}).")
            if position > decoder.frames and decoder.exact:
                raise ValueError(
                    f"Cannot seek to position {position} frames, which is beyond end of file ({self.frames} frames)."
                )
            if not self._seekable and position < decoder.position:
                raise ValueError("This stream is not seekable: it can only be read front to back.")
            decoder.seek(position)

    def tell(self) -> int:
        """The current position in frames."""
        with self._lock:
            return self._decoder.position

    def seekable(self) -> bool:
        """True if ``seek()`` works (always for paths; for file-like objects, if they can seek)."""
        return self._seekable and not self._closed

    if TYPE_CHECKING:  # AudioFile(...)'s call forms reach this __init__ in a type checker's reading
        # (pyright checks the call against the __init__ of the class AudioFile.__new__ returns; mypy does not)
        def __init__(self, *args: Any, **kwargs: Any) -> None: ...  # type: ignore[misc]  # noqa: F811

    def close(self) -> None:
        """Release the file; reading afterwards raises ``ClosedFileError``."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._decoder.close()

    def __enter__(self) -> ReadableAudioFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a destructor
            pass

    def __repr__(self) -> str:
        where = f'filename="{self._name}"' if self._path is not None else f"file_like={self._shown!r}"
        state = " closed" if self._closed else ""
        return (
            f"<stompbox.io.ReadableAudioFile {where} samplerate={self.samplerate} num_channels={self.num_channels} "
            f"frames={self.frames} file_dtype={self.file_dtype}{state} at {id(self):#x}>"
        )


INT_SCALE = {np.dtype(np.int8): 128.0, np.dtype(np.int16): 32768.0, np.dtype(np.int32): 2147483648.0}


_TAGS_NEED_A_SEEKABLE_FILE = "Tags are written into the finished file: the file-like must be readable and seekable."


def _rewritable(file: Any) -> bool:
    """Whether a file-like target can be read back and rewritten (as tags are written into a finished file)."""
    try:
        return bool(file.seekable()) and bool(getattr(file, "readable", lambda: True)()) and hasattr(file, "read")
    except (AttributeError, OSError, ValueError):
        return False


class WriteableAudioFile(AudioFile):
    """An audio file opened for writing. Writing to a path is atomic: the data goes to a temporary file in the
    same folder, renamed into place by a clean ``close()``; if an exception leaves a ``with`` block, or a write
    failed, the temporary file is removed and any earlier file at the path is untouched. A writer dropped
    without ``close()`` (collected, or open at interpreter exit) finishes its file, as pedalboard's does,
    unless the program is ending on an uncaught exception. A FIFO or a device at the path is written in place.
    """

    def __init__(
        self,
        path_or_file: Any,
        samplerate: float | None = None,
        num_channels: int = 1,
        bit_depth: int | str = 16,
        quality: Any = None,
        format: str | None = None,
        codec_options: dict[Any, Any] | None = None,
        tags: dict[str, Any] | None = None,
    ) -> None:
        self._closed = True
        self._atomic: AtomicWrite | None = None
        if samplerate is None:
            raise TypeError("Opening an audio file for writing requires samplerate and num_channels arguments.")
        if isinstance(samplerate, bool) or not isinstance(samplerate, numbers.Real):
            raise TypeError(f"samplerate must be a number of Hz (got {samplerate!r}).")
        if not float(samplerate).is_integer():
            raise TypeError(f"Writing audio requires an integer sample rate (got {samplerate}).")
        rate = int(samplerate)
        if isinstance(num_channels, bool) or not isinstance(num_channels, numbers.Integral):
            raise TypeError(f"num_channels must be an integer (got {num_channels!r}).")
        channels = int(num_channels)
        if 0 < rate < 1000 and channels > 1000:
            raise ValueError(
                f"samplerate={rate} and num_channels={channels} look swapped: try reversing the order of these "
                "arguments."
            )
        limits.check_sample_rate(rate, "samplerate")  # (AIFF misread 2**31 - 1 Hz; WAV past 2**31 was unreadable)
        if channels < 1:
            raise ValueError(f"num_channels must be at least 1 (got {channels}).")
        path, file = _path_or_file(path_or_file)
        if format is not None:
            key = formats.format_from_name(format)
        elif path is not None:
            key = formats.format_for_extension(os.path.splitext(path)[1])
        else:
            name = getattr(file, "name", None)
            if not isinstance(name, str) or not os.path.splitext(name)[1]:
                raise TypeError(
                    "Unable to infer audio file format for a file-like object: pass format='wav' (or 'flac', "
                    "'mp3', ...)."
                )
            key = formats.format_for_extension(os.path.splitext(name)[1])
        formats.check_codec_options(key, codec_options)
        from .tags import check_tags, taggable

        self._tags: dict[str, Any] = check_tags(tags)
        if self._tags and not taggable(key):
            raise ValueError(f"{key.upper()} files cannot carry tags in stompbox (MP3, FLAC, Ogg, Opus, M4A, WAV can).")
        self._format_key: str = key
        self._origin: int = 0  # where a file-like target's file starts (tags are written into it from there)
        if path is None:
            if self._tags and not _rewritable(file):
                raise ValueError(_TAGS_NEED_A_SEEKABLE_FILE)
            try:
                self._origin = int(file.tell())
            except (AttributeError, OSError, ValueError, TypeError):
                self._origin = 0
        depth = 32 if bit_depth == "int32" else bit_depth
        if isinstance(depth, bool) or not isinstance(depth, numbers.Integral):
            raise TypeError(f"bit_depth must be an integer (got {bit_depth!r}).")
        settings = formats.settings(key, int(depth), quality, rate, channels)
        if bit_depth == "int32" and key in ("wav", "aiff"):
            settings = formats.EncoderSettings(key, "PCM_32", None, "int32")
        self._settings: formats.EncoderSettings = settings
        self._samplerate: int = rate
        self._num_channels: int = channels
        self._frames: int = 0
        self._layout: str | None = None
        self._lock: threading.RLock = threading.RLock()
        self._path: str | None = path
        self._file: Any = file
        self._failed: bool = False  # a write failed: the file is unfinished and must never be published
        self._pid = os.getpid()  # a forked child never finishes or discards its parent's writers
        target: Any = file
        if path is not None:
            try:
                self._atomic = AtomicWrite(path, create=False)
            except IsADirectoryError:
                raise NotAnAudioFileError(f"Cannot write {path}: it is a directory.") from None
            except FileNotFoundError as exc:
                raise AudioFileNotFoundError(f"{exc.strerror}.") from None
            except OSError as exc:
                raise self._write_error(exc) from None
        try:
            if self._atomic is not None:
                self._atomic.create()
                target = self._atomic.target
            self._encoder: Encoder = open_encoder(target, settings, rate, channels)
        except OSError as exc:
            self._discard()
            raise self._write_error(exc) from exc
        except BaseException:
            self._discard()
            raise
        self._closed = False
        _OPEN_WRITERS.add(self)

    # ------------------------------------------------------------------ properties
    @property
    def samplerate(self) -> int:
        """The sample rate being written, in Hz."""
        return self._samplerate

    @property
    def num_channels(self) -> int:
        """The number of channels being written."""
        return self._num_channels

    @property
    def frames(self) -> int:
        """Frames written so far."""
        return self._frames

    @property
    def file_dtype(self) -> str:
        """The sample type written: ``"int16"``, ``"int24"``, ``"float32"``... (for MP3 and Vorbis, what pedalboard
        reports: ``"int16"``, and the requested bit depth, though the codecs store neither)."""
        return self._settings.reported_dtype or self._settings.file_dtype

    @property
    def tags(self) -> dict[str, Any]:
        """The tags written into the file when it is closed (see :attr:`ReadableAudioFile.tags`); assign a
        mapping to replace them before ``close()``."""
        return dict(self._tags)

    @tags.setter
    def tags(self, tags: dict[str, Any] | None) -> None:
        from .tags import check_tags, taggable

        clean = check_tags(tags)
        if clean and not taggable(self._format_key):
            raise ValueError(f"{self._format_key.upper()} files cannot carry tags in stompbox.")
        if clean and self._path is None and not _rewritable(self._file):
            raise ValueError("Tags are written into the finished file: a file-like target must be readable, seekable.")
        with self._lock:
            if self._closed:
                raise ClosedFileError()
            self._tags = clean

    @property
    def quality(self) -> str | None:
        """The encoder quality, normalised (e.g. ``"V2"``, ``"320 kbps"``, ``"8 (Highest quality)"``)."""
        return self._settings.quality

    @property
    def closed(self) -> bool:
        """True after ``close()``."""
        return self._closed

    def tell(self) -> int:
        """How many samples per channel have been written so far."""
        return self._frames

    # ------------------------------------------------------------------ writing
    def _frames_last(self, samples: np.ndarray) -> tuple[np.ndarray, str | None]:
        """``samples`` as ``(frames, channels)`` for the encoder, after dtype and layout checks, and the integer
        type they are still to be quantised to (float samples for an integer file; :meth:`_write_quantized`),
        else None."""
        if not isinstance(samples, np.ndarray):
            samples = np.asarray(samples)
        dtype = samples.dtype
        if dtype not in (np.float32, np.float64, np.int8, np.int16, np.int32):
            raise TypeError(
                "Writing audio requires an array with a datatype of int8, int16, int32, float32, or float64. "
                f"(Got: {dtype})"
            )
        channels = self._num_channels
        if samples.ndim == 1:
            if channels != 1:
                raise LayoutError(
                    f"WriteableAudioFile was opened with num_channels={channels}, but was passed an array "
                    "containing 1-channel audio!"
                )
            samples = samples[np.newaxis, :]
            layout = "channels-first"
        elif samples.ndim == 2:
            rows, cols = samples.shape
            if rows == cols == channels and channels > 1:
                layout = detect_layout(samples.shape, self._layout)  # raises for a square array, no layout yet
            elif rows == channels:
                layout = "channels-first"
            elif cols == channels:
                layout = "channels-last"
            else:
                raise LayoutError(
                    f"WriteableAudioFile was opened with num_channels={channels}, but was passed an array "
                    f"containing {min(rows, cols)}-channel audio!"
                )
            if rows != cols:
                self._layout = layout
        else:
            check_ndim(samples)
        frames_last = samples.T if layout == "channels-first" else samples
        file_dtype = self._settings.file_dtype
        integer_file = self._settings.pcm and file_dtype.startswith("int")
        if dtype.kind == "i":
            if integer_file and dtype in (np.int16, np.int32):
                return np.ascontiguousarray(frames_last), None  # exact: libsndfile converts int to int by shifting
            if integer_file:  # int8: into the top byte of an int16, then the same shift
                return np.left_shift(frames_last, 8, dtype=np.int16, casting="unsafe", order="C"), None
            return np.ascontiguousarray(frames_last, dtype=np.float32) * np.float32(1.0 / INT_SCALE[dtype]), None
        if integer_file:
            return frames_last, file_dtype
        if getattr(self._encoder, "takes_raw_floats", False):
            return frames_last, None  # the encoder clips and lays out any layout step by step itself (MP3, Ogg)
        if frames_last.shape[1] == 2 and frames_last.strides[0] == 4 and dtype == np.float32:
            data = np.empty(frames_last.shape, np.float32)  # stereo rows: interleaved as whole 64-bit words
            _interleave(frames_last.T.view(np.uint32), data.view(np.uint32))
        else:
            data = np.ascontiguousarray(frames_last, dtype=np.float32)
        if self._settings.format not in ("wav", "aiff"):  # lossy encoders clip
            # in place when ``data`` is a copy made here (a new array would be page-faulted in: ~1 ms per 10 s)
            data = np.clip(data, -1.0, 1.0, out=None if np.may_share_memory(data, samples) else data)
        return data, None

    def _write_quantized(self, frames_last: np.ndarray, file_dtype: str) -> None:
        """Quantise float ``(frames, channels)`` samples to ``file_dtype`` and write them.

        A long 24-bit write goes in steps of :data:`PIPELINE_FRAMES`: the helper thread quantises the next step
        while the encoder writes this one (NumPy and libsndfile release the GIL). A 60 s stereo 24-bit WAV went
        from 55 to 43 ms. For 16 and 32 bits, whose quantising is a few memory-bound passes, the two threads only
        compete for memory: 18 ms serial, 20 ms in steps; they stay serial."""
        convert = quantize_interleave if jit.loaded() else _quantize_in_steps  # Numba's one pass once loaded
        frames = frames_last.shape[0]
        if frames < 2 * PIPELINE_FRAMES or file_dtype != "int24":
            if frames:
                self._encoder.write(convert(frames_last, file_dtype))
                self._frames += frames
            return
        from .helper_thread import helper

        pool = helper()
        pending: Any = pool.submit(convert, frames_last[:PIPELINE_FRAMES], file_dtype)
        try:
            for start in range(PIPELINE_FRAMES, frames + PIPELINE_FRAMES, PIPELINE_FRAMES):
                block = pending.result()
                pending = None
                if start < frames:
                    pending = pool.submit(convert, frames_last[start : start + PIPELINE_FRAMES], file_dtype)
                self._encoder.write(block)
                self._frames += block.shape[0]
        finally:
            if pending is not None:  # the encoder failed: the helper may still be reading the caller's array
                pending.cancel() or pending.exception()

    def write(self, samples: np.ndarray) -> None:
        """Append ``samples``: ``(channels, n)``, ``(n, channels)`` or 1-D; float32/64 or int8/16/32 (ints are
        scaled by their full-scale value)."""
        with self._lock:
            if self._closed:
                raise ClosedFileError()
            data, quantize_as = self._frames_last(samples)
            try:
                if quantize_as is not None:
                    self._write_quantized(data, quantize_as)
                elif data.shape[0]:
                    self._encoder.write(data)
                    self._frames += data.shape[0]
            except BaseException as exc:
                self._failed = True
                if isinstance(exc, OSError) and self._path is not None:
                    raise self._write_error(exc) from exc
                raise

    def flush(self) -> None:
        """Push buffered data to the file (the final file appears at its path only on ``close()``)."""
        with self._lock:
            if self._closed:
                raise ClosedFileError()
            try:
                self._encoder.flush()
            except BaseException as exc:
                self._failed = True
                if isinstance(exc, OSError) and self._path is not None:
                    raise self._write_error(exc) from exc
                raise

    if TYPE_CHECKING:  # AudioFile(...)'s call forms reach this __init__ in a type checker's reading
        # (pyright checks the call against the __init__ of the class AudioFile.__new__ returns; mypy does not)
        def __init__(self, *args: Any, **kwargs: Any) -> None: ...  # type: ignore[misc]  # noqa: F811

    def close(self) -> None:
        """Finish the file; for a path, move it into place atomically (synced to the disk, as the streaming
        guide describes). Any failure to write the file's last bytes raises, and leaves the earlier file."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._encoder.close()
                if self._tags:
                    from .tags import write_tags

                    target = self._atomic.target if self._atomic is not None else self._file
                    write_tags(target, self._format_key, self._tags, self._origin)
                if self._atomic is not None:
                    self._atomic.commit(_release)
            except OSError as exc:
                if self._path is not None:
                    raise self._write_error(exc) from exc
                raise
            finally:
                self._discard()

    def _write_error(self, exc: OSError) -> OSError:
        """``exc`` (raised while writing to a path) as an :class:`AudioWriteError` that names the user's path,
        never the temporary file."""
        temporary = self._atomic.temporary if self._atomic is not None else None
        path = self._path
        if exc.errno is not None:
            reason = exc.strerror or os.strerror(exc.errno)
            return AudioWriteError(exc.errno, f"Unable to write audio file: {reason}", path)
        message = str(exc) if temporary is None else str(exc).replace(temporary, str(path))
        return AudioWriteError(message if str(path) in message else f"{message} ({path})")

    def _discard(self) -> None:
        if self._atomic is not None:
            self._atomic.discard()

    def _abort(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._encoder.abort()
            self._discard()

    def _dropped(self, discard: bool = False) -> None:
        """The writer was collected or the interpreter is exiting without ``close()``: finish the file, as
        pedalboard does (``AudioFile("out.wav", "w", 44100, 1).write(x)`` writes a file), unless a write failed
        or ``discard`` (then the earlier file stays and the temporary file goes)."""
        if getattr(self, "_closed", True) or getattr(self, "_pid", None) != os.getpid():
            return
        if discard or self._failed or not atomic.finish_dropped_writers:
            self._abort()
        else:
            self.close()

    def __enter__(self) -> WriteableAudioFile:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self._abort()  # nothing appears under the final name; an earlier file there is untouched

    def __del__(self) -> None:
        self._dropped()  # a failure to finish is printed by Python ("Exception ignored in ...")

    def __repr__(self) -> str:
        quality = f'"{self.quality}"' if self.quality else "None"
        state = " closed" if self._closed else ""
        return (
            f"<stompbox.io.WriteableAudioFile samplerate={self._samplerate} num_channels={self._num_channels} "
            f"quality={quality} file_dtype={self.file_dtype}{state} at {id(self):#x}>"
        )


def get_supported_read_formats() -> list[str]:
    """File extensions stompbox reads (content decides the decoder; the extension is only a hint)."""
    return list(formats.READ_EXTENSIONS)


def get_supported_write_formats() -> list[str]:
    """File extensions stompbox writes."""
    return sorted(formats.WRITE_EXTENSIONS)


__all__ = [
    "AudioFile",
    "CorruptAudioError",
    "ReadableAudioFile",
    "UnsupportedFormatError",
    "WriteableAudioFile",
    "get_supported_read_formats",
    "get_supported_write_formats",
]
