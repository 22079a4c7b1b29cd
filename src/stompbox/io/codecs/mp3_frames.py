"""MPEG audio (Layer III) frame headers: where an MP3's chain of frames breaks, and whether frames resume after.

An MP3 is a chain of frames, each header giving the frame's length. A decoder that fails part-way through tells
nothing of why. Junk after the last frame (a Lyrics3 tag, bytes appended by a copy) ends the audio; damage in
the middle, with valid frames after it, does not, and stopping there would lose the rest of the audio without a
word. :func:`audio_resumes_after_damage` tells the two apart from the bytes alone.
"""

from __future__ import annotations

from collections.abc import Callable

#: kbit/s by bitrate index: MPEG-1 Layer III, and MPEG-2/2.5 Layer III
_KBPS_V1 = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_KBPS_V2 = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
#: Hz by sample-rate index, for version bits 3 (MPEG-1), 2 (MPEG-2) and 0 (MPEG-2.5)
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}
#: consecutive frames that make a chain (a random byte pattern passes one header check in about 4,000)
CHAIN = 4


def frame_length(data: bytes | bytearray, at: int) -> int:
    """The length in bytes of the Layer III frame whose header starts at byte ``at``, or 0 if none does."""
    if at + 4 > len(data) or data[at] != 0xFF or data[at + 1] & 0xE0 != 0xE0:
        return 0
    version = (data[at + 1] >> 3) & 3
    layer = (data[at + 1] >> 1) & 3
    bitrate = data[at + 2] >> 4
    rate = (data[at + 2] >> 2) & 3
    if version == 1 or layer != 1 or bitrate in (0, 15) or rate == 3:
        return 0
    padding = (data[at + 2] >> 1) & 1
    if version == 3:
        return 144_000 * _KBPS_V1[bitrate] // _RATES[3][rate] + padding
    return 72_000 * _KBPS_V2[bitrate] // _RATES[version][rate] + padding


def _chain_at(data: bytes, at: int) -> bool:
    """Whether ``CHAIN`` frames follow each other from ``at`` (the last may end exactly at the end of data)."""
    for _ in range(CHAIN):
        length = frame_length(data, at)
        if not length:
            return False
        at += length
        if at >= len(data):
            return True
    return True


def _next_chain(data: bytes, start: int) -> int:
    """The first byte at or after ``start`` where a chain of frames begins, or -1."""
    at = start
    while True:
        at = _find_sync(data, at)
        if at < 0:
            return -1
        if _chain_at(data, at):
            return at
        at += 1


def _find_sync(data: bytes, start: int) -> int:
    """The next frame-sync pattern (eleven set bits) at or after ``start``, or -1."""
    while True:
        at = data.find(b"\xff", start)
        if at < 0 or at + 1 >= len(data):
            return -1
        if data[at + 1] & 0xE0 == 0xE0:
            return at
        start = at + 1


def _audio_start(data: bytes) -> int:
    """The byte after an ID3v2 tag at the start (0 without one)."""
    if data[:3] == b"ID3" and len(data) >= 10:
        size = (data[6] & 0x7F) << 21 | (data[7] & 0x7F) << 14 | (data[8] & 0x7F) << 7 | (data[9] & 0x7F)
        return 10 + size + (10 if data[5] & 0x10 else 0)  # a footer, if flagged
    return 0


def audio_resumes_after_damage(data: bytes) -> bool:
    """Whether the MP3 ``data`` has a chain of frames after a place where its chain breaks: damage in the middle
    of the audio, not junk at its end. Walks frame by frame from the first chain (a few microseconds a
    frame)."""
    at = _next_chain(data, _audio_start(data))
    if at < 0:
        return False
    while True:
        length = frame_length(data, at)
        if not length:
            break
        at += length
        if at >= len(data):
            return False  # the chain runs to the end: nothing is damaged
    return _next_chain(data, at) >= 0


def samples_per_frame(data: bytes, at: int) -> int:
    """Samples per channel in the Layer III frame at ``at``: 1152 for MPEG-1, 576 for MPEG-2 and 2.5."""
    return 1152 if (data[at + 1] >> 3) & 3 == 3 else 576


class _Bytes:
    """A window on a stream read front to back: ``ensure(at, need)`` drops what is before ``at`` (the returned
    index replaces it) and reads until ``need`` bytes follow it, or the stream ends."""

    def __init__(self, read: Callable[[int], bytes], block: int) -> None:
        self._read = read
        self._block = block
        self.data = b""
        self.eof = False

    def ensure(self, at: int, need: int) -> int:
        if len(self.data) - at >= need or self.eof:
            return at
        self.data = self.data[at:]
        while len(self.data) < need and not self.eof:
            chunk = self._read(self._block)
            if not chunk:
                self.eof = True
            else:
                self.data += bytes(chunk)
        return 0


LOOK = 16384  # bytes a chain is checked over before it counts (4 frames are at most 11.5 kB)


def walk(read: Callable[[int], bytes], block: int = 1 << 20) -> tuple[int, bool, bool]:
    """(samples, damaged, cut) of the MP3 whose bytes ``read(size)`` gives from its start, walked frame by frame in
    bounded memory: the samples per channel of the chain of whole frames from the first chain to where it
    breaks (what a decoder outputs when no LAME tag trims it), and whether a chain of frames resumes after the
    break (damage in the middle, not junk after the last frame), and whether the last frame is cut short (a
    truncated file)."""
    window = _Bytes(read, block)
    at = window.ensure(0, 10)
    skip = _audio_start(window.data)
    while skip > len(window.data) - at and not window.eof:  # a large ID3v2 tag
        skip -= len(window.data) - at
        at = window.ensure(len(window.data), block)
    at += skip

    def chain_from(at: int) -> tuple[int, int]:
        """(window index of the next chain at or after ``at``, or -1; the index to use for ``at`` now)."""
        while True:
            at = window.ensure(at, LOOK)
            found = _next_chain(window.data, at)
            if found >= 0 and (found + LOOK <= len(window.data) or window.eof):
                return found, at
            if window.eof:
                return -1, at
            at = max(at, len(window.data) - LOOK)  # read on; keep enough to find a chain across the seam
            at = window.ensure(at, len(window.data) - at + block)

    at, _ = chain_from(at)
    if at < 0:
        return 0, False, False
    samples = 0
    while True:
        at = window.ensure(at, 4096)
        if at >= len(window.data):  # the end of the stream
            return samples, False, False
        length = frame_length(window.data, at)
        if not length:
            break
        if at + length > len(window.data):  # the last frame, cut short: not decoded
            return samples, False, True
        samples += samples_per_frame(window.data, at)
        at += length
    found, _ = chain_from(at)
    return samples, found >= 0, False
