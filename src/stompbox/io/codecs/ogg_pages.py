"""Ogg pages (RFC 3533): deterministic serial numbers for what libsndfile writes, and the span of a file's last page.

An Ogg page (RFC 3533) carries its logical stream's serial number, and a CRC over the whole page. libsndfile picks
the serial of a new Vorbis or Opus stream from a time-seeded random number, so encoding the same audio twice gave
two different files (a batch could not be checked by hashing its outputs). :class:`OggSerialRewriter` sits
between libsndfile and the file: it gathers the bytes of each page, gives the first stream serial
:data:`FIRST_SERIAL` (the next ones count up from it, in order of appearance), recomputes the page's CRC and passes
the page on. Anything that does not parse as an Ogg page is passed on unchanged.

:func:`last_page_span` reads the final pages of a file, for the Vorbis seeks of
:class:`~stompbox.io.codecs.backends.SoundfileDecoder` (libsndfile misplaces a seek that lands in the last page).
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

FIRST_SERIAL = 0x53544D50  # "STMP", little-endian on disk as "PMTS"
_HEADER = 27  # bytes before the segment table
_SERIAL = slice(14, 18)
_GRANULE = slice(6, 14)
MAX_PAGE = 65307  # 27 header bytes, 255 lacing values, 255 segments of 255 bytes
_CRC = slice(22, 26)
_REVERSE_BITS = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))  # a bytes.translate table: bits reversed


def ogg_crc(page: bytes | bytearray) -> int:
    """The Ogg CRC-32 of ``page`` (its CRC field zeroed): polynomial 0x04C11DB7, most significant bit first,
    initial value 0, no final xor. Computed with zlib's CRC-32 (the same polynomial, bit-reflected) on the
    bit-reversed bytes: the reflected CRC of reflected data is the reflected CRC. zlib starts its register at
    ``value ^ 0xFFFFFFFF`` and inverts the result, so a start value of 0xFFFFFFFF and one more inversion give the
    plain register started at 0. (Bytes are reversed by ``bytes.translate``: a few microseconds a 4 kB page.)"""
    reflected = zlib.crc32(page.translate(_REVERSE_BITS), 0xFFFFFFFF) ^ 0xFFFFFFFF
    return int.from_bytes(reflected.to_bytes(4, "little").translate(_REVERSE_BITS), "big")


def _page_length(data: bytearray) -> int | None:
    """The length of the Ogg page at the start of ``data``; None while it is incomplete."""
    if len(data) < _HEADER:
        return None
    segments = data[26]
    if len(data) < _HEADER + segments:
        return None
    length = _HEADER + segments + sum(data[_HEADER : _HEADER + segments])
    return length if len(data) >= length else None


def last_page_span(tail: bytes) -> int | None:
    """How many granule positions the last page of an Ogg file spans, from the file's last bytes.

    That is the last page's granule position minus the one of the page of the same stream before it (pages on
    which no packet ends, granule -1, are passed over). ``tail`` must end where the file ends and should hold
    the last two pages (``2 * MAX_PAGE`` bytes always do). Pages are found backwards from the end, each ending
    where the next one starts, and each checked by its CRC. None if ``tail`` does not hold two such pages.
    """
    pages: list[tuple[bytes, int]] = []  # (serial, granule), last page first
    end = len(tail)
    search = end
    while len(pages) < 64:
        start = tail.rfind(b"OggS", 0, search)
        if start < 0:
            return None
        search = start
        if end - start < _HEADER or tail[start + 4] != 0:
            continue
        page = bytearray(tail[start:end])
        if _page_length(page) != end - start:
            continue  # not a page, or not the one that ends where the next starts
        crc = bytes(page[_CRC])
        page[_CRC] = b"\0\0\0\0"
        if struct.pack("<I", ogg_crc(page)) != crc:
            continue
        serial, granule = bytes(page[_SERIAL]), struct.unpack("<q", bytes(page[_GRANULE]))[0]
        end = search = start
        if not pages:
            if granule < 0:
                return None
            pages.append((serial, granule))
        elif serial == pages[0][0] and granule >= 0:
            result: int | None = pages[0][1] - granule
            return result
    return None


class OggSerialRewriter:
    """A write-only file-like that replaces the serial numbers of the Ogg pages written through it.

    Parameters
    ----------
    file : file-like
        Where the pages go (``write``, ``seek``, ``tell``; ``read`` is passed through).
    """

    def __init__(self, file: Any) -> None:
        self._file = file
        self._pending = bytearray()
        self._serials: dict[bytes, bytes] = {}

    def write(self, data: Any) -> int:
        count = len(memoryview(data).cast("B"))
        pending = self._pending
        pending += data
        while pending:
            if not pending.startswith(b"OggS"[: len(pending)]):
                self._emit(pending)  # not an Ogg page: passed on as it is
                pending.clear()
                break
            length = _page_length(pending)
            if length is None:
                break
            if length == len(pending):  # the usual case (libsndfile writes a page's header, then its body)
                page, self._pending = pending, bytearray()
                pending = self._pending
            else:
                page = pending[:length]
                del pending[:length]
            original = bytes(page[_SERIAL])
            serial = self._serials.setdefault(original, struct.pack("<I", FIRST_SERIAL + len(self._serials)))
            page[_SERIAL] = serial
            page[_CRC] = b"\0\0\0\0"
            page[_CRC] = struct.pack("<I", ogg_crc(page))
            self._emit(page)
        return count

    def _emit(self, data: bytes | bytearray) -> None:
        chunk = bytes(data)  # bytes, as libsndfile's other writers hand them over: a text stream's TypeError
        while chunk:  # then names bytes, as pedalboard's does, and a file-like may keep what it is given
            written = self._file.write(chunk)
            if written is None:  # as soundfile reads it: a write() that returns nothing took everything
                return
            chunk = chunk[written:]

    def tell(self) -> int:
        return int(self._file.tell()) + len(self._pending)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if self._pending:  # within a page: only asking where the end is (libsndfile's file length) is possible
            here = self.tell()
            if (whence == io.SEEK_END and offset == 0) or (whence == io.SEEK_SET and offset == here):
                return here
            raise OSError("Cannot seek while an Ogg page is half written.")
        return int(self._file.seek(offset, whence))

    def read(self, *args: Any) -> bytes:
        return bytes(self._file.read(*args))

    def finish(self) -> None:
        """Pass on what is left (an unfinished page at the end, as it is: libsndfile writes whole pages)."""
        if self._pending:
            self._emit(bytes(self._pending))
            self._pending.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def _checked(page: bytes) -> bool:
    copy = bytearray(page)
    crc = bytes(copy[_CRC])
    copy[_CRC] = b"\0\0\0\0"
    return struct.pack("<I", ogg_crc(copy)) == crc


def cut_short(head: bytes, tail: bytes, size: int) -> tuple[int, int, bytes] | None:
    """Where a single-stream Ogg file that was cut short ends, and how to end it properly, or None when it ends
    with its stream's last page (or when nothing can be said).

    ``head`` is the file's first bytes, ``tail`` its last ``len(tail)`` bytes and ``size`` its length. The
    answer is ``(end, offset, header)``: the byte where the last whole page with a granule position ends, and
    that page's first 27 bytes (at ``offset``) with the end-of-stream flag set and its CRC recomputed. A file
    read up to ``end`` with that header in place is a whole Ogg stream of the audio that is present."""
    if head[:4] != b"OggS" or len(head) < _HEADER:
        return None
    serial = head[_SERIAL]
    base = size - len(tail)
    search = len(tail)
    while True:
        start = tail.rfind(b"OggS", 0, search)
        if start < 0:
            return None
        search = start
        length = _page_length(bytearray(tail[start : start + MAX_PAGE]))
        if length is None or not _checked(tail[start : start + length]):
            continue
        page = tail[start : start + length]
        if page[_SERIAL] != serial:
            return None  # another logical stream: not a single-stream file
        if start + length == len(tail) and page[5] & 0x04:
            return None  # the stream's last page ends the file: whole
        if struct.unpack("<q", page[_GRANULE])[0] < 0:
            continue  # no packet ends on this page: the one before
        fixed = bytearray(page)
        fixed[5] |= 0x04
        fixed[_CRC] = b"\0\0\0\0"
        fixed[_CRC] = struct.pack("<I", ogg_crc(fixed))
        return base + start + length, base + start, bytes(fixed[:_HEADER])


class EndedView:
    """A seekable binary view of ``file`` up to byte ``end``, with ``patch`` in place of the bytes at
    ``offset``: a cut Ogg file as a whole stream (see :func:`cut_short`), without copying it."""

    def __init__(self, file: Any, end: int, offset: int, patch: bytes) -> None:
        self._file = file
        self._end = end
        self._offset = offset
        self._patch = patch
        self._position = 0

    def read(self, size: int = -1) -> bytes:
        left = self._end - self._position
        size = left if size is None or size < 0 else min(size, left)
        if size <= 0:
            return b""
        self._file.seek(self._position)
        data = bytearray(self._file.read(size))
        low, high = max(self._offset, self._position), min(self._offset + len(self._patch), self._position + len(data))
        if low < high:
            data[low - self._position : high - self._position] = self._patch[low - self._offset : high - self._offset]
        self._position += len(data)
        return bytes(data)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._end}[whence]
        self._position = max(0, base + offset)
        return self._position

    def tell(self) -> int:
        return self._position

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self._file.close()
