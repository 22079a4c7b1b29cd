"""Headerless PCM ("raw") audio read from and written to byte streams, in SoX's vocabulary.

A raw stream is described from outside: sample rate, channels, encoding (``signed-integer``,
``unsigned-integer``, ``floating-point``; SoX's ``-e``) and bits per sample (8, 16, 24, 32, 64 for floats;
SoX's ``-b``), little-endian, channels interleaved. Integers are scaled as stompbox reads and writes PCM files
(:data:`~stompbox.io.codecs.backends.PCM_READ_SCALE` and :func:`~stompbox.io.codecs.backends.quantize`): a 16-bit
raw stream and a 16-bit WAV file of the same samples decode to the same floats.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .reader import AudioReader

__all__ = ["ENCODINGS", "RawFormat", "RawReader", "RawWriter", "parse_encoding"]

#: SoX's encoding names, with the short forms SoX also takes
ENCODINGS = {
    "signed-integer": "signed-integer",
    "signed": "signed-integer",
    "unsigned-integer": "unsigned-integer",
    "unsigned": "unsigned-integer",
    "floating-point": "floating-point",
    "float": "floating-point",
}
_VALID_BITS = {"signed-integer": (8, 16, 24, 32), "unsigned-integer": (8, 16, 24, 32), "floating-point": (32, 64)}


def parse_encoding(text: str) -> str:
    """``"signed"``, ``"signed-integer"``... -> SoX's full encoding name (``ValueError`` lists the valid ones)."""
    key = str(text).strip().lower()
    if key not in ENCODINGS:
        raise ValueError(f"unknown encoding {text!r}; valid: signed-integer, unsigned-integer, floating-point")
    return ENCODINGS[key]


class RawFormat:
    """The layout of a raw PCM stream.

    Parameters
    ----------
    samplerate : float
        Frames per second (Hz), > 0.
    num_channels : int
        Interleaved channels, >= 1.
    encoding : str
        ``"signed-integer"`` (default), ``"unsigned-integer"`` or ``"floating-point"`` (short forms accepted).
    bits : int
        Bits per sample: 8, 16, 24 or 32 for integers, 32 or 64 for floats (default 16, or 32 for floats).
    """

    def __init__(self, samplerate: float, num_channels: int, encoding: str = "signed-integer", bits: int | None = None):
        self.encoding = parse_encoding(encoding)
        if bits is None:
            bits = 32 if self.encoding == "floating-point" else 16
        if bits not in _VALID_BITS[self.encoding]:
            valid = ", ".join(map(str, _VALID_BITS[self.encoding]))
            raise ValueError(f"{self.encoding} raw audio takes {valid} bits per sample (got {bits})")
        if not samplerate or samplerate <= 0:
            raise ValueError(f"raw audio needs a sample rate > 0 Hz (got {samplerate})")
        if int(num_channels) < 1:
            raise ValueError(f"raw audio needs at least 1 channel (got {num_channels})")
        self.samplerate = int(samplerate) if float(samplerate).is_integer() else float(samplerate)
        self.num_channels = int(num_channels)
        self.bits = int(bits)

    @property
    def frame_bytes(self) -> int:
        """Bytes per frame (all channels)."""
        return self.bits // 8 * self.num_channels

    @property
    def file_dtype(self) -> str:
        """The sample type as :class:`~stompbox.io.ReadableAudioFile` names it (``"int16"``, ``"float32"``...)."""
        if self.encoding == "floating-point":
            return f"float{self.bits}"
        return f"int{self.bits}"

    def decode(self, data: bytes | bytearray | memoryview) -> np.ndarray:
        """Whole frames of raw bytes -> float32 ``(channels, frames)``."""
        from .codecs.backends import PCM_READ_SCALE

        channels, bits = self.num_channels, self.bits
        if self.encoding == "floating-point":
            samples = np.frombuffer(data, "<f4" if bits == 32 else "<f8").astype(np.float32)
        elif bits == 24:
            octets = np.frombuffer(data, np.uint8).reshape(-1, 3)
            wide = np.zeros((octets.shape[0], 4), np.uint8)
            wide[:, 1:] = octets
            ints = wide.view("<i4").reshape(-1) >> 8
            if self.encoding == "unsigned-integer":
                ints = ints ^ np.int32(-(1 << 23))  # flip the top bit: offset binary -> two's complement
            samples = ints.astype(np.float32) * PCM_READ_SCALE["int24"]
        else:
            kind = "u" if self.encoding == "unsigned-integer" else "i"
            ints = np.frombuffer(data, f"<{kind}{bits // 8}")
            if kind == "u":
                ints = ints.astype(np.int64) - (1 << (bits - 1))
            samples = ints.astype(np.float32) * PCM_READ_SCALE[f"int{bits}"]
        return np.ascontiguousarray(samples.reshape(-1, channels).T)

    def encode(self, block: np.ndarray) -> bytes:
        """float ``(channels, frames)`` -> raw bytes (integers as stompbox quantises PCM files)."""
        from .codecs.backends import quantize

        frames_last = np.asarray(block, dtype=np.float32).T
        if self.encoding == "floating-point":
            return np.ascontiguousarray(frames_last, "<f4" if self.bits == 32 else "<f8").tobytes()
        ints = quantize(np.ascontiguousarray(frames_last), f"int{self.bits}")
        shift = {8: 8, 24: 8}.get(self.bits, 0)
        if shift:
            ints = ints >> shift  # quantize() leaves 8- and 24-bit values in the top bits of a wider integer
        if self.bits == 24:
            wide = np.ascontiguousarray(ints, "<i4")
            if self.encoding == "unsigned-integer":
                wide ^= np.int32(1 << 23)
            return np.ascontiguousarray(wide.view(np.uint8).reshape(-1, 4)[:, :3]).tobytes()
        if self.encoding == "unsigned-integer":
            return (ints.astype(np.int64) + (1 << (self.bits - 1))).astype(f"<u{self.bits // 8}").tobytes()
        return np.ascontiguousarray(ints, f"<i{self.bits // 8}").tobytes()


class RawReader(AudioReader):
    """A raw PCM byte stream (a pipe or a file opened in binary mode) with the reader API, front to back.

    ``frames`` counts what has been read until the end is reached (then ``exact_duration_known`` is True).
    """

    samplerate: float
    num_channels: int
    frames: int
    closed: bool

    def __init__(self, stream: Any, layout: RawFormat, name: str = "-") -> None:
        self._stream = stream
        self._layout = layout
        self.name = name
        self.samplerate = layout.samplerate
        self.num_channels = layout.num_channels
        self.file_dtype = layout.file_dtype
        self.frames = 0
        self.exact_duration_known = False
        self.closed = False
        self._carry = b""

    def read(self, num_frames: int) -> np.ndarray:
        size = self._layout.frame_bytes
        want = int(num_frames) * size - len(self._carry)
        chunks = [self._carry]
        while want > 0:
            got = self._stream.read(want)
            if not got:
                break
            chunks.append(got)
            want -= len(got)
        data = b"".join(chunks)
        whole = len(data) - len(data) % size
        self._carry = data[whole:]
        if whole < int(num_frames) * size:  # the end: a partial frame at the end is dropped, as SoX drops it
            self.exact_duration_known = True
            self._carry = b""
        block = self._layout.decode(memoryview(data)[:whole]) if whole else np.zeros((self.num_channels, 0), "f4")
        self.frames += block.shape[1]
        return block

    def tell(self) -> int:
        return self.frames

    def seek(self, frame: int) -> None:
        if frame < self.frames:
            raise ValueError("This stream is not seekable: it can only be read front to back.")
        while self.frames < frame and self.read(min(65536, frame - self.frames)).shape[1]:
            pass

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


class RawWriter:
    """Writes float ``(channels, frames)`` blocks to a byte stream as raw PCM (the writer API of the CLI).

    Given a path instead of a stream, it writes atomically, as every writer of a path does
    (:mod:`stompbox._base.atomic`): the file appears on a clean ``close()``; an exception in ``with`` leaves the
    earlier file.
    """

    def __init__(self, stream: Any, layout: RawFormat) -> None:
        self._atomic: Any = None
        if isinstance(stream, str | os.PathLike):
            from .._base.atomic import AtomicWrite

            self._atomic = AtomicWrite(stream, create=False)
            try:
                self._atomic.create()
                stream = open(self._atomic.target, "wb")  # noqa: SIM115 - closed by close()
            except BaseException:
                self._atomic.discard()
                raise
        self._stream = stream
        self._layout = layout
        self.samplerate = layout.samplerate
        self.num_channels = layout.num_channels
        self.frames = 0
        self.closed = False

    def write(self, block: np.ndarray) -> None:
        block = np.asarray(block)
        if block.ndim == 1:
            block = block[np.newaxis]
        if block.shape[0] != self.num_channels:
            raise ValueError(f"expected {self.num_channels}-channel blocks (got {block.shape[0]})")
        if block.shape[1]:
            self._stream.write(self._layout.encode(block))
            self.frames += block.shape[1]

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._atomic is None:
                self._stream.flush()
                return
            try:
                self._stream.close()
                self._atomic.commit()
            finally:
                self._atomic.discard()

    def __enter__(self) -> RawWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None or self._atomic is None:
            self.close()
            return
        self.closed = True
        try:
            self._stream.close()
        except OSError:
            pass
        self._atomic.discard()
