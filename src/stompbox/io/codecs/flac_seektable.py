"""A SEEKTABLE for the FLAC files stompbox writes, so that any decoder seeks in them without searching.

libsndfile writes FLAC without a seek table. A decoder seeking in such a file (libFLAC, FFmpeg, a browser) has to
search for the target frame by bisecting the file and syncing on frame headers: about 120 us per seek for a
minute of CD-quality audio here, and many small reads over a network. With a seek point at least every
:data:`SPACING` bytes of audio data (every frame at CD quality: 0.2-0.4 % of the file), libFLAC seeks in about
70 us, mostly decoding the one frame it lands in.
pedalboard writes a table too, but with a single placeholder point, which does not help.

After the encoder has finished, :func:`seektable` walks the frames (each frame header is found by its sync
code and checked by its CRC-8, its frame number and its fixed fields against the first frame's) and builds the
table; :func:`insert_seektable` puts it after STREAMINFO, shifting the audio data in place, in bounded memory.
Any doubt (a variable-blocksize stream, a frame count that does not match STREAMINFO, a stream that cannot be
read back) leaves the file as libsndfile wrote it: valid, without a table. The file format (FLAC, RFC 9639) is public.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

#: at least one seek point per this many bytes of audio data (one per frame at CD quality, fewer for quiet audio)
SPACING = 4096
#: a metadata block's length is a 24-bit field: at most this many 18-byte seek points
MAX_POINTS = (1 << 24) // 18
SEEKTABLE = 3
CHUNK = 1 << 20


def _crc8_entry(byte: int) -> int:
    for _ in range(8):
        byte = ((byte << 1) ^ 0x07) & 0xFF if byte & 0x80 else (byte << 1) & 0xFF
    return byte


_CRC8_TABLE = [_crc8_entry(i) for i in range(256)]  # CRC-8, polynomial 0x07, as FLAC frame headers use it

ReadAt = Callable[[int, int], bytes]
WriteAt = Callable[[int, bytes], None]


def _crc8(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = _CRC8_TABLE[crc ^ byte]
    return crc


def _metadata(read_at: ReadAt) -> tuple[list[tuple[int, bytes]], int] | None:
    """The metadata blocks ``(type, body)`` and the offset where the audio frames start, or None."""
    if read_at(0, 4) != b"fLaC":
        return None
    blocks = []
    offset = 4
    while True:
        head = read_at(offset, 4)
        if len(head) < 4:
            return None
        kind, length = head[0] & 0x7F, int.from_bytes(head[1:4], "big")
        body = read_at(offset + 4, length)
        if len(body) < length:
            return None
        blocks.append((kind, body))
        offset += 4 + length
        if head[0] & 0x80:
            return blocks, offset


def _frame_header(data: bytes, at: int) -> tuple[int, int] | None:
    """``(frame number, header length)`` of a fixed-blocksize frame header at ``data[at:]``, if it is one."""
    if len(data) < at + 6 or data[at] != 0xFF or data[at + 1] != 0xF8:
        return None
    size_code, rate_code = data[at + 2] >> 4, data[at + 2] & 0x0F
    if size_code == 0 or rate_code == 0x0F or (data[at + 3] >> 4) >= 11 or data[at + 3] & 1:
        return None
    first = data[at + 4]
    if first < 0x80:
        number, used = first, 1
    elif 0xC0 <= first < 0xFE:
        used = 2 if first < 0xE0 else 3 if first < 0xF0 else 4 if first < 0xF8 else 5 if first < 0xFC else 6
        if len(data) < at + 4 + used:
            return None
        number = first & (0xFF >> (used + 1))
        for k in range(1, used):
            byte = data[at + 4 + k]
            if byte & 0xC0 != 0x80:
                return None
            number = (number << 6) | (byte & 0x3F)
    else:
        return None
    length = 4 + used + (1 if size_code == 6 else 2 if size_code == 7 else 0)
    length += 1 if rate_code == 12 else 2 if rate_code in (13, 14) else 0
    if len(data) <= at + length or _crc8(data[at : at + length]) != data[at + length]:
        return None
    return number, length


def frame_numbers(data: bytes) -> list[int]:
    """The frame numbers of the fixed-blocksize frame headers found in ``data`` (each checked by its CRC-8)."""
    view = np.frombuffer(data, np.uint8)
    if view.size < 2:
        return []
    candidates = np.flatnonzero((view[:-1] == 0xFF) & (view[1:] == 0xF8))
    found = (_frame_header(data, at) for at in candidates.tolist())
    return [header[0] for header in found if header is not None]


def _frame_offsets(read_at: ReadAt, start: int, size: int, frames: int) -> list[int] | None:
    """The offsets of the ``frames`` frames of a fixed-blocksize stream whose audio is ``[start, size)``."""
    offsets: list[int] = []
    fixed = None
    position = start
    while position < size and len(offsets) < frames:
        data = read_at(position, min(CHUNK, size - position) + 16)
        if not data:
            break
        view = np.frombuffer(data, np.uint8)
        usable = min(len(data) - 1, CHUNK)
        candidates = np.flatnonzero((view[:usable] == 0xFF) & (view[1 : usable + 1] == 0xF8))
        floor = -1
        for at in candidates.tolist():
            if at < floor:
                continue
            header = _frame_header(data, at)
            if header is None or header[0] != len(offsets):
                continue
            fields = data[at + 2], data[at + 3] & 0x0E
            last = len(offsets) == frames - 1
            if fixed is None:
                fixed = fields
            elif (fields[0] != fixed[0] and not last) or fields[0] & 0x0F != fixed[0] & 0x0F or fields[1] != fixed[1]:
                continue
            offsets.append(position + at)
            floor = at + header[1]
            if len(offsets) == frames:
                break
        position += CHUNK
    return offsets if len(offsets) == frames else None


def seektable(read_at: ReadAt, size: int) -> tuple[list[tuple[int, bytes]], int, bytes] | None:
    """The FLAC file read by ``read_at`` (``size`` bytes): its metadata blocks, where its audio starts, and the
    body of the SEEKTABLE block it should get; None when it already has one or cannot be given one safely."""
    parsed = _metadata(read_at)
    if parsed is None:
        return None
    blocks, start = parsed
    if blocks[0][0] != 0 or len(blocks[0][1]) < 18 or any(kind == SEEKTABLE for kind, _ in blocks):
        return None
    info = blocks[0][1]
    min_block, max_block = struct.unpack(">HH", info[0:4])
    total = int.from_bytes(info[13:18], "big") & ((1 << 36) - 1)
    if total == 0 or min_block != max_block or min_block < 16:
        return None
    frames = -(-total // max_block)
    offsets = _frame_offsets(read_at, start, size, frames)
    if offsets is None:
        return None
    spacing = max(SPACING, -(-(size - start) // MAX_POINTS))
    points = []
    last = -spacing
    for k, offset in enumerate(offsets):
        if offset - last >= spacing:
            samples = min(max_block, total - k * max_block)
            points.append(struct.pack(">QQH", k * max_block, offset - start, samples))
            last = offset
        if len(points) == MAX_POINTS:
            break
    return blocks, start, b"".join(points)


def insert_seektable(
    found: tuple[list[tuple[int, bytes]], int, bytes], read_at: ReadAt, write_at: WriteAt, size: int
) -> int:
    """Insert the table :func:`seektable` found into the file ``[0, size)``; its new size.

    The audio data moves up by the table's size, copied from the end backwards in :data:`CHUNK` steps (bounded
    memory, no second file), then the new metadata is written in front of it. An error of ``read_at`` or
    ``write_at`` propagates: the file is then incomplete, as after any failed write.
    """
    blocks, start, table = found
    blocks = [blocks[0], (SEEKTABLE, table), *blocks[1:]]
    header = bytearray(b"fLaC")
    for index, (kind, body) in enumerate(blocks):
        header.append(kind | (0x80 if index == len(blocks) - 1 else 0))
        header += len(body).to_bytes(3, "big") + body
    shift = len(header) - start
    end = size
    while end > start:
        begin = max(start, end - CHUNK)
        data = read_at(begin, end - begin)
        if len(data) != end - begin:
            raise OSError(f"could read back only {len(data)} of {end - begin} bytes at {begin}")
        write_at(begin + shift, data)
        end = begin
    write_at(0, bytes(header))
    return size + shift


def _pwrite_all(handle: int) -> WriteAt:
    def write_at(offset: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.pwrite(handle, view, offset)
            if written <= 0:
                raise OSError(f"could not write {len(view)} bytes at {offset}")
            view, offset = view[written:], offset + written

    return write_at


def add_to_path(path: str) -> None:
    """Give the finished FLAC file at ``path`` a seek table, if it can have one (OSError if writing fails)."""
    handle = os.open(path, os.O_RDWR)
    try:
        size = os.fstat(handle).st_size

        read_at = _pread_from(handle)
        found = seektable(read_at, size)
        if found is not None:
            insert_seektable(found, read_at, _pwrite_all(handle), size)
    finally:
        os.close(handle)


def _pread_from(handle: int) -> ReadAt:
    return lambda offset, n: os.pread(handle, n, offset)


def _reader_of(stream: Any) -> tuple[ReadAt, int | None] | None:
    """A way to read back what was written to ``stream`` (absolute offsets), and a descriptor to close after;
    None when there is none. A stream opened write-only on a regular file (``open(path, "wb")``) is read
    through a second, read-only descriptor of the same file."""
    try:
        readable = bool(stream.readable())
    except Exception:  # noqa: BLE001 - a minimal file-like: try reading when needed
        readable = callable(getattr(stream, "read", None))
    if readable:

        def read_at(offset: int, n: int) -> bytes:
            stream.seek(offset)
            data = stream.read(n)
            return b"" if data is None else bytes(data)

        return read_at, None
    try:
        descriptor = stream.fileno()
        info = os.fstat(descriptor)
    except Exception:  # noqa: BLE001 - not a real file
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    candidates = [f"/proc/self/fd/{descriptor}", f"/dev/fd/{descriptor}"]
    name = getattr(stream, "name", None)
    if isinstance(name, str):
        candidates.append(name)
    for candidate in candidates:
        try:
            handle = os.open(candidate, os.O_RDONLY)
        except OSError:
            continue
        again = os.fstat(handle)
        if (again.st_dev, again.st_ino) == (info.st_dev, info.st_ino):
            return _pread_from(handle), handle
        os.close(handle)
    return None


def add_to_stream(stream: Any, origin: int, size: int) -> int:
    """Give the finished FLAC file written to ``stream`` at ``[origin, origin + size)`` a seek table; its new
    size. A stream that cannot be read back keeps its file as it is; an error of the stream while the data moves
    propagates. The stream is left after the file, where another can follow it."""
    reader = _reader_of(stream)
    if reader is None:
        return size
    read_absolute, handle = reader
    try:
        flush = getattr(stream, "flush", None)

        def read_at(offset: int, n: int) -> bytes:
            return read_absolute(origin + offset, n)

        def write_at(offset: int, data: bytes) -> None:
            stream.seek(origin + offset)
            while data:
                count = stream.write(data)  # bytes, as a file-like expects (not a memoryview)
                count = len(data) if count is None else int(count)
                if count <= 0:
                    raise OSError(f"the file-like's write() took none of {len(data)} bytes")
                data = data[count:]
            if handle is not None and callable(flush):
                flush()  # the second descriptor reads the file, not the stream's buffer

        try:
            if handle is not None and callable(flush):
                flush()
            found = seektable(read_at, size)
        except Exception:  # noqa: BLE001 - cannot be read back after all: no table, and nothing lost
            found = None
        if found is None:
            return size
        size = insert_seektable(found, read_at, write_at, size)
        stream.seek(origin + size)
        return size
    finally:
        if handle is not None:
            os.close(handle)
