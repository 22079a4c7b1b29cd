"""MPEG audio (Layer III) frame headers: where an MP3's chain of frames breaks, and whether frames resume after.

An MP3 is a chain of frames, each header giving the frame's length. A decoder that fails part-way through tells
nothing of why. Junk after the last frame (a Lyrics3 tag, bytes appended by a copy) ends the audio; damage in
the middle, with valid frames after it, does not, and stopping there would lose the rest of the audio without a
word. :func:`audio_resumes_after_damage` tells the two apart from the bytes alone.
"""

from __future__ import annotations

#: kbit/s by bitrate index: MPEG-1 Layer III, and MPEG-2/2.5 Layer III
_KBPS_V1 = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_KBPS_V2 = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
#: Hz by sample-rate index, for version bits 3 (MPEG-1), 2 (MPEG-2) and 0 (MPEG-2.5)
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}
#: consecutive frames that make a chain (a random byte pattern passes one header check in about 4,000)
CHAIN = 4


def frame_length(data: bytes, at: int) -> int:
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
    of the audio, not junk at its end. Walks frame by frame from the first chain (about a microsecond a
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
