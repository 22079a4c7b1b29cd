"""Uncompressed WAV files written with NumPy: the bytes libsndfile writes, about twice as fast.

libsndfile converts every sample it writes through a small buffer (a byte-order pass even when nothing changes):
writing a minute of stereo 16-bit audio took it 8 ms, against 4 ms for the bytes alone. :class:`WavEncoder`
writes the integers stompbox has already quantised as they are (16-bit), or packs them in one NumPy pass
(8, 24 and 32 bits, floats), to a path or an :class:`io.BytesIO` (from its position). The header is
libsndfile's, byte for byte (tested against it for every layout), except for the channel masks, so a file does
not depend on which writer made it:

- ``RIFF``/``WAVE`` and a 16-byte ``fmt`` chunk (format 1, or 3 for floats) for one or two channels; for more, a
  40-byte ``WAVE_FORMAT_EXTENSIBLE`` ``fmt`` chunk (the PCM or float sub-format GUID; the channel mask of
  stompbox's layout for 3 to 8 channels, :data:`~stompbox.io.codecs.channel_order.WAV_MASKS`: 3.0, quad, 5.0, 5.1,
  6.1 and 7.1 with side speakers as FFmpeg writes them, where libsndfile writes 0 for 3, 5 and 7 channels and
  7.1 with front-centre speakers for 8; else 0);
- a ``fact`` chunk (the number of frames) for floats and extensible files;
- for floats, a ``PAD`` chunk where libsndfile keeps room for its ``PEAK`` chunk (which stompbox turns off: it
  holds the time of writing);
- the ``data`` chunk, and a pad byte after odd-sized data.

A file past 4 GiB becomes RF64 when it is closed (EBU Tech 3306: a ``ds64`` chunk after ``WAVE`` holds the
64-bit sizes, the 32-bit ones read 0xFFFFFFFF), as FFmpeg and libsndfile read it; the data moves up by the
chunk's 36 bytes then (the header cannot know the size before the end).

Samples arrive as libsndfile's ``sf_writef_short``/``_int``/``_float`` take them: int16 or int32 with the
value in the top bits (converted to the file's width by truncating shifts, as libsndfile does), or float32.
"""

from __future__ import annotations

import io
import struct
import sys
from typing import Any

import numpy as np

from ..._base import limits
from ..errors import AudioWriteError
from .backends import Encoder
from .channel_order import WAV_MASKS

_SUBTYPES = {"PCM_U8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32, "FLOAT": 32, "DOUBLE": 64}
_GUID_TAIL = bytes.fromhex("000000001000800000aa00389b71")  # KSDATAFORMAT_SUBTYPE_* after the 2-byte tag
_LIMIT = 0xFFFFFFFF
#: A file whose RIFF size would pass this becomes RF64 on close (EBU Tech 3306: the sizes go to a ``ds64``
#: chunk). Tests lower it to check the conversion without writing 4 GiB.
_RF64_OVER = _LIMIT
_MOVE_STEP = 1 << 20  # bytes moved at a time to make room for the ds64 chunk
MAX_CHANNELS = limits.MAX_CHANNELS_OF_FORMAT["wav"]  # libsndfile neither writes nor reads WAV files with more
_CHANNEL_MASKS = WAV_MASKS  # 3.0, quad, 5.0, 5.1, 6.1, 7.1 (as FFmpeg writes them); 0 (unassigned) beyond 8


class WavEncoder(Encoder):
    """A WAV writer for a path or an ``io.BytesIO`` (from its position on); see the module docstring.

    Parameters
    ----------
    target : str or io.BytesIO
        The file to write (a path is opened for update: the header is written last). A BytesIO gets the file
        from its position on (libsndfile could not write after bytes already there).
    subtype : str
        libsndfile's name of the sample format: ``"PCM_U8"``, ``"PCM_16"``, ``"PCM_24"``, ``"PCM_32"``,
        ``"FLOAT"`` or ``"DOUBLE"``.
    samplerate : int
        Frames per second (Hz).
    num_channels : int
        Channels per frame (1 or more).
    """

    @staticmethod
    def applies(target: Any, settings: Any) -> bool:
        """Whether this writer makes the file of ``settings`` at ``target`` (else libsndfile does)."""
        if settings.format != "wav" or settings.subtype not in _SUBTYPES or sys.byteorder != "little":
            return False
        if isinstance(target, str):
            return True
        from .backends import seekable_target

        plain = (io.BytesIO, io.BufferedWriter, io.BufferedRandom, io.FileIO)  # Python's own files (standard output)
        return type(target) in plain or not seekable_target(target)

    def __init__(self, target: Any, subtype: str, samplerate: int, num_channels: int) -> None:
        limits.check_channels(num_channels, "wav")  # also checked by formats.settings; this writer is public too
        if not 0 < int(samplerate) <= _LIMIT:
            raise ValueError(f"Unable to create WAV writer: a WAV header holds sample rates up to {_LIMIT} Hz.")
        from .backends import seekable_target

        self._owns_file = isinstance(target, str)
        self._file: Any = open(target, "r+b", buffering=0) if self._owns_file else target  # noqa: SIM115 - close()
        # a pipe: the length is not known when the header goes out, and it cannot be rewritten (see _header)
        self._stream = not self._owns_file and not seekable_target(self._file)
        self._origin = 0 if self._stream else self._file.tell()  # a BytesIO may hold other bytes before the file
        self._subtype = subtype
        self._bits = _SUBTYPES[subtype]
        self._float = subtype in ("FLOAT", "DOUBLE")
        self._channels = num_channels
        self._rate = int(samplerate)
        self._frames = 0
        self._data_bytes = 0
        self._closed = False
        self._padded = False
        try:
            self._write_all(self._header())
        except BaseException:
            self._close_file()
            raise

    # ---------------------------------------------------------------- header
    def _header(self) -> bytes:
        channels, bits = self._channels, self._bits
        block = channels * bits // 8
        extensible = channels > 2
        tag = 0xFFFE if extensible else (3 if self._float else 1)
        # the byte rate wraps at 32 bits, as libsndfile's does (768 kHz x 1024 channels x 8 bytes overflows it)
        fmt = struct.pack("<HHIIHH", tag, channels, self._rate, (self._rate * block) & _LIMIT, block, bits)
        if extensible:
            sub_format = struct.pack("<H", 3 if self._float else 1) + _GUID_TAIL
            fmt += struct.pack("<HHI", 22, bits, _CHANNEL_MASKS.get(channels, 0)) + sub_format
        elif self._float:  # WAVEFORMATEX: a format other than PCM has cbSize, here 0 (libsndfile leaves it out)
            fmt += struct.pack("<H", 0)
        chunks = [b"fmt " + struct.pack("<I", len(fmt)) + fmt]
        if self._float or extensible:
            chunks.append(b"fact" + struct.pack("<II", 4, min(self._frames, _LIMIT)))
        if self._float:
            chunks.append(b"PAD " + struct.pack("<I", 8 + 8 * channels) + bytes(8 + 8 * channels))
        body = b"WAVE" + b"".join(chunks) + b"data" + struct.pack("<I", min(self._data_bytes, _LIMIT))
        riff = len(body) + self._data_bytes + self._padded
        if self._stream:  # unknown sizes, as FFmpeg writes them to a pipe: readers take the data to the end
            body = body[:-4] + struct.pack("<I", _LIMIT)
            riff = _LIMIT
        return b"RIFF" + struct.pack("<I", min(riff, _LIMIT)) + body

    def _rf64_header(self) -> bytes:
        """The header of the finished file as RF64: ``RF64``, ``WAVE``, a ``ds64`` chunk with the 64-bit RIFF
        and data sizes and the frame count, then the chunks of :meth:`_header` with their 32-bit sizes -1."""
        riff_header = self._header()
        chunks = riff_header[12:-8]  # fmt, fact, PAD: between "WAVE" and the data chunk's header
        size = len(riff_header) + 36 + self._data_bytes + self._padded  # the whole file
        ds64 = b"ds64" + struct.pack("<IQQQI", 28, size - 8, self._data_bytes, self._frames, 0)
        return b"RF64" + struct.pack("<I", _LIMIT) + b"WAVE" + ds64 + chunks + b"data" + struct.pack("<I", _LIMIT)

    def _to_rf64(self) -> None:
        """Turn the finished file into RF64: move everything after the header up by the ds64 chunk's 36 bytes
        (from the end, a step at a time, so it takes no memory and 36 more bytes of disk), then write the new
        header. Only for files past 4 GiB, whose sizes a RIFF header cannot hold."""
        old = len(self._header())
        new = self._rf64_header()
        shift = len(new) - old
        end = self._origin + old + self._data_bytes + self._padded
        position = end
        while position > self._origin + old:
            start = max(self._origin + old, position - _MOVE_STEP)
            self._file.seek(start)
            data = self._file.read(position - start)
            if len(data) != position - start:
                raise AudioWriteError("Unable to write data to audio file: its data could not be read back.")
            self._file.seek(start + shift)
            self._write_all(data)
            position = start
        self._file.seek(self._origin)
        self._write_all(new)
        self._file.seek(end + shift)

    # ---------------------------------------------------------------- samples
    def _encode(self, block: np.ndarray) -> np.ndarray:
        """``block`` ``(frames, channels)`` as the file's little-endian samples, interleaved."""
        if self._float:
            return np.ascontiguousarray(block, "<f4" if self._bits == 32 else "<f8")
        if block.dtype == np.int16 and self._bits == 16:
            return np.ascontiguousarray(block)
        top = block.astype(np.int32) << 16 if block.dtype == np.int16 else np.ascontiguousarray(block, np.int32)
        if self._bits == 32:
            return top
        if self._bits == 16:
            return (top >> 16).astype(np.int16)
        octets = top.view(np.uint8).reshape(-1, 4)
        if self._bits == 24:
            return np.ascontiguousarray(octets[:, 1:])  # the top three bytes: the value shifted down by 8
        return octets[:, 3] ^ np.uint8(0x80)  # unsigned 8-bit: the top byte, offset by 128

    def write(self, block: np.ndarray) -> None:
        if block.shape[0] == 0:
            return
        data = self._encode(block)
        self._write_all(data.data.cast("B"))
        self._frames += block.shape[0]
        self._data_bytes += data.nbytes

    def _write_all(self, data: Any) -> None:
        view = memoryview(data)
        while view.nbytes:
            written = self._file.write(view)
            if not written:
                raise AudioWriteError("Unable to write data to audio file: the file accepted no more bytes.")
            view = view[written:]

    def _rewrite_header(self) -> None:
        end = self._file.tell()
        self._file.seek(self._origin)
        self._write_all(self._header())
        self._file.seek(end)

    def flush(self) -> None:
        """Bring the header's sizes up to date (the bytes so far are a complete file, bar the pad byte); a
        stream's header cannot change: its bytes so far are pushed on."""
        if self._stream:
            flush = getattr(self._file, "flush", None)
            if callable(flush):
                flush()
            return
        self._rewrite_header()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._stream:  # no pad byte: the data's length is unknown to readers of the header
                self.flush()
                return
            if self._data_bytes & 1:
                self._write_all(b"\0")
                self._padded = True
            if len(self._header()) - 8 + self._data_bytes + self._padded > _RF64_OVER:
                self._to_rf64()
            else:
                self._rewrite_header()
        finally:
            self._close_file()

    def _close_file(self) -> None:
        if self._owns_file:
            self._file.close()
