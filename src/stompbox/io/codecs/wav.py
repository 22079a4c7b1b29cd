"""A fast reader for uncompressed PCM in RIFF/WAVE and RF64 files.

libsndfile reads PCM through several buffers (file -> int buffer -> float buffer -> the caller's interleaved
array), and ``ReadableAudioFile`` then has to transpose. This reader takes the file's bytes straight into a
bounded scratch buffer and converts and de-interleaves them into the float32 ``(channels, n)`` result in one
NumPy pass, with the same scaling as :class:`~stompbox.io.codecs.backends.SoundfileDecoder` (pedalboard's
``1 / (2**(bits-1) - 1)``, :data:`~stompbox.io.codecs.backends.PCM_READ_SCALE`; 8-bit is unsigned), so its samples are
bit-identical to it.

libsndfile stays the oracle for everything about the file: it is opened first, and this reader is used only
when our own parse of the header agrees with it (format, channels, bit depth, frame count). Anything else
(ADPCM, mu-law, a-law, MP3-in-WAV, W64, AIFF, odd block alignments, a header we cannot vouch for) keeps using
libsndfile.
"""

from __future__ import annotations

import io
import os
import struct
import sys
import threading
import time
from typing import Any

import numpy as np

from ..._base import jit
from ..helper_thread import helper
from . import backends
from .backends import PCM_READ_SCALE, Decoder, SoundfileDecoder, plain_io, read_ahead

# libsndfile subtype -> (WAVE format tag, bits per sample, NumPy dtype of a stored sample; None for 24-bit)
_SUBTYPES: dict[str, tuple[int, int, np.dtype[Any] | None]] = {
    "PCM_U8": (1, 8, np.dtype(np.uint8)),
    "PCM_16": (1, 16, np.dtype("<i2")),
    "PCM_24": (1, 24, None),
    "PCM_32": (1, 32, np.dtype("<i4")),
    "FLOAT": (3, 32, np.dtype("<f4")),
    "DOUBLE": (3, 64, np.dtype("<f8")),
}
_FORMATS = ("WAV", "WAVEX", "RF64")
_STEREO16 = np.dtype("<i2")
_LITTLE_ENDIAN = sys.byteorder == "little"
_TAG_EXTENSIBLE = 0xFFFE
SCRATCH_BYTES = 1 << 18  # file bytes converted per step of a large read: stays in the CPU cache
CACHE_BYTES = 1 << 19  # float32 bytes decoded ahead for sequential small reads (under a quarter of it: a
# larger read is converted straight into its result, one pass, where a block that does not hold it whole would
# be decoded again from the read's start; 1 s reads of a stereo file went 1.2x faster)
USE_NUMBA: bool | None = None  # None: the Numba kernels once stompbox's effects have loaded Numba, else NumPy;
# True/False force one conversion (for tests). Both give the same bits.
PARALLEL_FRAMES = 1 << 17  # a NumPy-converted read of at least twice this decodes its halves on two threads
_LOCAL = threading.local()  # per-thread work buffers of the NumPy conversions


def _words(count: int) -> np.ndarray:
    """An int32 work buffer of ``count`` items, kept per thread."""
    buffer = getattr(_LOCAL, "words", None)
    if buffer is None or buffer.size < count:
        buffer = _LOCAL.words = np.empty(count, np.int32)
    return buffer[:count]


def _scratch_bytes(count: int) -> np.ndarray:
    """A uint8 buffer of ``count`` bytes for the file's bytes of one step, kept per thread (a reader allocating
    its own 256 kB on open paid for it in page faults: opening a file and reading a crop took a third longer)."""
    buffer = getattr(_LOCAL, "scratch", None)
    if buffer is None or buffer.size < count:
        buffer = _LOCAL.scratch = np.empty(count, np.uint8)
    return buffer[:count]


def _int24(raw: np.ndarray) -> np.ndarray:
    """The sign-extended values of packed little-endian 24-bit samples, as int32.

    The bytes go one place up in a buffer, so that the little-endian int32 read at byte ``3 * i`` holds sample
    ``i`` in its top three bytes (and the byte before it at the bottom); an arithmetic shift right by 8 drops that
    byte and extends the sign. One strided read instead of three byte columns: ~2.4x faster.
    """
    count = raw.size // 3
    if not _LITTLE_ENDIAN:  # pragma: no cover - the byte columns, on a big-endian machine
        b = raw.reshape(count, 3).astype(np.int32)
        return ((b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8) >> 8
    buffer = getattr(_LOCAL, "bytes24", None)
    if buffer is None or buffer.size < raw.size + 1:
        buffer = _LOCAL.bytes24 = np.empty(raw.size + 1, np.uint8)
    buffer[1 : raw.size + 1] = raw
    words = np.ndarray((count,), np.int32, buffer, 0, (3,))
    result: np.ndarray = np.right_shift(words, 8)
    return result


def _use_kernels() -> bool:
    return USE_NUMBA if USE_NUMBA is not None else jit.loaded()


def parse_riff(head: bytes, file_size: int) -> tuple[int, int, int, int, int] | None:
    """``(format_tag, channels, bits, data_offset, data_bytes)`` of a RIFF/WAVE or RF64 header, or None.

    ``head`` is the start of the file (enough to reach the ``data`` chunk's header). ``data_bytes`` is clipped
    to what the file holds.
    """
    if len(head) < 12 or head[8:12] != b"WAVE" or head[:4] not in (b"RIFF", b"RF64"):
        return None
    rf64 = head[:4] == b"RF64"
    fmt: tuple[int, int, int, int] | None = None
    ds64_data: int | None = None
    pos = 12
    while pos + 8 <= len(head):
        chunk_id = head[pos : pos + 4]
        (size,) = struct.unpack_from("<I", head, pos + 4)
        body = pos + 8
        if chunk_id == b"fmt ":
            if size < 16 or body + size > len(head):
                return None
            tag, channels, _, _, block_align, bits = struct.unpack_from("<HHIIHH", head, body)
            if tag == _TAG_EXTENSIBLE:
                if size < 40:
                    return None
                (tag,) = struct.unpack_from("<H", head, body + 24)  # the sub-format GUID starts with the tag
            fmt = (tag, channels, bits, block_align)
        elif chunk_id == b"ds64" and rf64:
            if size < 24 or body + 24 > len(head):
                return None
            (ds64_data,) = struct.unpack_from("<Q", head, body + 8)
        elif chunk_id == b"data":
            if fmt is None:
                return None
            if rf64 and size == 0xFFFFFFFF:
                if ds64_data is None:
                    return None
                size = ds64_data
            tag, channels, bits, block_align = fmt
            if channels < 1 or bits % 8 or block_align != channels * bits // 8:
                return None
            return tag, channels, bits, body, max(0, min(size, file_size - body))
        pos = body + size + (size & 1)  # chunks are padded to an even size
    return None


class PcmWavDecoder(Decoder):
    """Uncompressed PCM/float WAV or RF64, read with NumPy; same samples, lengths and errors as libsndfile's.

    Build it with :meth:`replace`, which returns the libsndfile decoder unchanged when this reader does not
    apply.
    """

    @classmethod
    def replace(cls, decoder: SoundfileDecoder, source: Any) -> Decoder:
        """This reader in place of ``decoder`` (then closed) when the file qualifies, else ``decoder``."""
        if decoder.format_name not in _FORMATS or decoder.subtype not in _SUBTYPES:
            return decoder
        try:
            fast = cls(decoder, source)
        except (OSError, ValueError, TypeError, AttributeError, BufferError, struct.error):
            return decoder
        if not fast._ok:
            fast._release()
            return decoder
        decoder.close()
        return fast

    def __init__(self, decoder: SoundfileDecoder, source: Any) -> None:
        self._ok = False
        self._fd: int | None = None
        self._bytes_io: io.BytesIO | None = None
        self._file: Any = None
        self.samplerate = decoder.samplerate
        self.num_channels = decoder.num_channels
        self.frames = decoder.frames
        self.exact = True
        self.file_dtype = decoder.file_dtype
        self.format_name = decoder.format_name
        self.subtype = decoder.subtype
        self.channel_layout = decoder.channel_layout
        self.position = 0
        tag, bits, dtype = _SUBTYPES[self.subtype]
        if isinstance(source, str):
            self._fd = os.open(source, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            size = os.fstat(self._fd).st_size
            head = os.pread(self._fd, 4096, 0)  # the header of a usual file; 64 kB below, if not
        elif isinstance(source, io.BytesIO):
            self._bytes_io = source
            view = source.getbuffer()
            size = len(view)
            head = bytes(view[: 1 << 16])
            del view
        elif plain_io(source):  # another file-like is read through its read(), by libsndfile
            self._file = source
            here = source.tell()
            source.seek(0, os.SEEK_END)
            size = source.tell()
            source.seek(0)
            head = source.read(1 << 16)
            source.seek(here)
            if not isinstance(head, bytes | bytearray):
                return
        else:
            return
        parsed = parse_riff(bytes(head), size)
        if parsed is None and self._fd is not None and len(head) == 4096:
            parsed = parse_riff(os.pread(self._fd, 1 << 16, 0), size)
        if parsed is None:
            return
        file_tag, channels, file_bits, offset, data_bytes = parsed
        if (file_tag, channels, file_bits) != (tag, self.num_channels, bits):
            return
        self._block = channels * bits // 8
        if self.frames != data_bytes // self._block:  # libsndfile saw the file differently: let it read it
            return
        self._offset = offset
        self._bits = bits
        self._dtype = dtype
        self._scale = float(PCM_READ_SCALE[self.file_dtype]) if tag == 1 else 1.0
        self._bias = 128.0 if bits == 8 else 0.0
        self._kernels: Any = None
        # a read at a seek converts with one NumPy call, the last branch of _convert_numpy (same samples), while
        # Numba is not loaded: float32 scale for integer PCM, None for 8-bit (biased) and 24-bit (unpacked)
        self._small_scale = None if dtype is None or bits == 8 else np.float32(self._scale)
        self._step = max(1, SCRATCH_BYTES // self._block)
        self._cache_frames = max(1, CACHE_BYTES // (4 * channels))
        self._cache = np.empty((channels, 0), np.float32)
        self._cache_start = 0
        self._last_end = -1  # where the previous read ended (sequential reads fill the cache)
        self._ahead = 0  # the last block decoded ahead (0 after a seek: see read_ahead)
        self._ok = True

    # ------------------------------------------------------------------ bytes
    @property
    def _scratch(self) -> np.ndarray:
        """This thread's buffer for the file's bytes of one step."""
        return _scratch_bytes(self._step * self._block)

    def _load(self, frame: int, count: int, scratch: np.ndarray | None = None) -> tuple[np.ndarray, Any]:
        """The file's bytes of ``count`` frames from ``frame`` (fewer if the file is shorter than it claimed),
        as a uint8 array, plus the object to keep alive while using it. ``scratch``: the buffer to read into
        (the reader's own by default; another thread brings its own)."""
        scratch = self._scratch if scratch is None else scratch
        start = self._offset + frame * self._block
        want = count * self._block
        if self._bytes_io is not None:
            view = self._bytes_io.getbuffer()
            have = max(0, min(want, len(view) - start))
            have -= have % self._block
            return np.frombuffer(view, np.uint8, have, start) if have else scratch[:0], view
        buffer = scratch if want <= scratch.size else np.empty(want, np.uint8)
        target = buffer.data[:want]
        if self._fd is not None:
            got = os.preadv(self._fd, [target], start)
            while 0 < got < want:  # a short read before the end of the file: keep going
                more = os.preadv(self._fd, [target[got:]], start + got)
                if more <= 0:
                    break
                got += more
        else:
            self._file.seek(start)
            got = self._file.readinto(target) or 0
            while 0 < got < want:
                more = self._file.readinto(target[got:]) or 0
                if more <= 0:
                    break
                got += more
        got -= got % self._block
        return buffer[:got], None

    def _convert(self, raw: np.ndarray, out: np.ndarray, col: int, alone: bool = True) -> None:
        """De-interleave and scale the bytes ``raw`` of whole frames into float32 ``out[:, col:]``."""
        if self._kernels is None:
            if not _use_kernels():
                self._convert_numpy(raw, out[:, col : col + raw.size // self._block], alone)
                return
            from . import _pcm_kernels

            self._kernels = _pcm_kernels
        if self._dtype is None:
            self._kernels.deinterleave24(raw, out, col, self._scale)
        else:
            self._kernels.deinterleave(raw.view(self._dtype), out, col, self._bias, self._scale)

    def _convert_numpy(self, raw: np.ndarray, out: np.ndarray, alone: bool = True) -> None:
        """The same conversion in NumPy (about 2.5 times slower, as fast as pedalboard's), used while Numba is not
        loaded."""
        count = out.shape[1]
        channels = self.num_channels
        if self._dtype is None:
            values = _int24(raw)
            np.multiply(values.reshape(count, channels).T, np.float32(self._scale), out=out, casting="unsafe")
            return
        if alone and count >= 4096 and channels == 2 and self._dtype == _STEREO16 and _LITTLE_ENDIAN:
            # each frame is one little-endian int32: left in its low half, right in its high half; shifting
            # whole words and converting contiguous rows is ~1.6x faster than a strided mixed-type multiply on
            # one thread (not ``alone``, two threads converting at once, its extra passes over memory lose; nor
            # for a few frames, where its six NumPy calls cost more than they save)
            words = raw.view(np.int32)
            half = _words(count)
            scale = np.float32(self._scale)
            np.left_shift(words, 16, out=half)
            np.right_shift(half, 16, out=half)
            np.copyto(out[0], half, casting="unsafe")
            np.right_shift(words, 16, out=half)
            np.copyto(out[1], half, casting="unsafe")
            np.multiply(out, scale, out=out)
            return
        samples = raw.view(self._dtype).reshape(count, channels).T
        if self._bias:
            np.subtract(samples, np.float32(self._bias), out=out, dtype=np.float32)
            out *= np.float32(self._scale)
        elif self._scale != 1.0:
            np.multiply(samples, np.float32(self._scale), out=out, casting="unsafe")
        else:
            np.copyto(out, samples, casting="unsafe")

    def _decode_into(self, out: np.ndarray, frame: int) -> int:
        """Decode frames from ``frame`` into ``out`` (float32, (channels, n)); the number decoded.

        A long read with the NumPy conversion (which is memory-bound, about 2.5 times slower than the compiled
        one) from a path or a BytesIO (read at explicit offsets, so two threads can) decodes its second half on
        a helper thread: NumPy and ``preadv`` release the GIL, while that pays (:class:`backends.TwoThreadPayoff`:
        not when the second core is busy with other work, or the process may use one CPU only)."""
        n = out.shape[1]
        if n < 2 * PARALLEL_FRAMES or self._file is not None or self._kernels is not None or _use_kernels():
            return self._decode_range(out, frame, self._scratch)
        kind = ("WAV", self.subtype, self.num_channels)
        two = backends.TWO_THREADS.choose(kind)
        began = time.perf_counter()
        done = self._decode_halves(out, frame) if two else self._decode_range(out, frame, self._scratch)
        backends.TWO_THREADS.record(kind, two, time.perf_counter() - began, done)
        return done

    def _decode_halves(self, out: np.ndarray, frame: int) -> int:
        """:meth:`_decode_into` with the second half decoded on the helper thread."""
        n = out.shape[1]
        half = n // 2
        second = helper().submit(
            self._decode_range, out[:, half:], frame + half, np.empty_like(self._scratch), alone=False
        )
        try:
            done = self._decode_range(out[:, :half], frame, self._scratch, alone=False)
        except BaseException:
            from concurrent.futures import wait

            wait([second])  # the buffers stay in use until the helper is done with them
            raise
        later = second.result()
        return done + later if done == half else done  # a file shorter than it claimed ends in the first half

    def _decode_range(self, out: np.ndarray, frame: int, scratch: np.ndarray, alone: bool = True) -> int:
        n = out.shape[1]
        done = 0
        while done < n:
            count = min(self._step, n - done)
            raw, keep = self._load(frame + done, count, scratch)
            got = raw.size // self._block
            if got:
                self._convert(raw, out, done, alone)
            del raw, keep
            done += got
            if got < count:
                break
        return done

    # ------------------------------------------------------------------ Decoder
    def read(self, n: int) -> np.ndarray:
        position = self.position
        n = max(0, min(n, self.frames - position))
        cache = self._cache
        offset = position - self._cache_start
        if 0 <= offset and offset + n <= cache.shape[1]:
            out = cache[:, offset : offset + n].copy()
        elif n < self._cache_frames // 4 and position == self._last_end:  # sequential small reads: decode ahead
            self._ahead = read_ahead(self._ahead, n, self._cache_frames)
            fill = min(self._ahead, self.frames - position)
            if cache.shape[1] != fill:
                cache = self._cache = np.empty((self.num_channels, fill), np.float32)
            got = self._decode_into(cache, position)
            if got < fill:
                cache = self._cache = cache[:, :got]
            self._cache_start = position
            out = cache[:, :n].copy()
        elif n <= self._step and self._fd is not None:  # one read of the file and one conversion (a crop, a seek)
            want = n * self._block
            raw = _scratch_bytes(want)
            got = os.preadv(self._fd, [raw.data], self._offset + position * self._block)
            out = np.empty((self.num_channels, n), np.float32)
            if got == want and self._small_scale is not None and self._kernels is None and not _use_kernels():
                assert self._dtype is not None  # (a scale for small reads is set for the dtypes NumPy reads)
                samples = raw.view(self._dtype).reshape(n, self.num_channels).T
                if self._scale != 1.0:
                    np.multiply(samples, self._small_scale, out=out, casting="unsafe")
                else:
                    np.copyto(out, samples, casting="unsafe")
            elif got == want:
                self._convert(raw, out, 0)
            else:  # a short read: the general path, which retries and stops at the file's real end
                got = self._decode_into(out, position)
                if got < n:
                    out = out[:, :got].copy()
        else:
            out = np.empty((self.num_channels, n), np.float32)
            got = self._decode_into(out, position)
            if got < n:
                out = out[:, :got].copy()
        self.position = position + out.shape[1]
        self._last_end = self.position
        return out

    def read_raw(self, n: int) -> np.ndarray:
        position = self.position
        n = max(0, min(n, self.frames - position))
        raw, keep = self._load(position, n)
        got = raw.size // self._block
        channels = self.num_channels
        if self._dtype is None:  # 24-bit values in int32, not shifted (as SoundfileDecoder.read_raw)
            out = np.ascontiguousarray(_int24(raw).reshape(got, channels).T)
        elif self._bits == 8:  # libsndfile's int8 view of unsigned bytes
            out = np.ascontiguousarray((raw.reshape(got, channels).T.astype(np.int16) - 128).astype(np.int8))
        else:
            out = np.ascontiguousarray(
                raw.view(self._dtype).reshape(got, channels).T, dtype=self._dtype.newbyteorder("=")
            )
        del raw, keep
        self.position = position + got
        return out

    def seek(self, frame: int) -> None:
        self.position = frame
        self._ahead = 0

    def _release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._bytes_io = self._file = None

    def close(self) -> None:
        self._release()
        self._cache = np.empty((self.num_channels, 0), np.float32)


__all__ = ["PcmWavDecoder", "parse_riff"]
