"""Each file format's own channel order and layout, against stompbox's order (WAV's and FFmpeg's).

stompbox holds channels in WAV order (:mod:`stompbox._base.channels`). Formats that order channels otherwise
are reordered on the way in and out:

- Ogg Vorbis and Opus (Vorbis channel mapping family 1) put the centre second and the LFE last: 3 channels
  are L C R, 5.1 is L C R Ls Rs LFE, 7.1 is L C R Ls Rs Lb Rb LFE. Reading maps them to L R C / L R C LFE Ls
  Rs / L R C LFE Lb Rb Ls Rs, writing back, for 3 to 8 channels (FFmpeg does the same).
- WAV (a WAVE_FORMAT_EXTENSIBLE mask), FLAC, CAF, M4A and MP3 already store channels in WAV order.

The layout a file states: a WAV/W64/RF64 channel map, AIFF's and CAF's channel layout as FFmpeg reads it, or a
format's fixed layout for the count (FLAC, Vorbis, Opus), named as FFmpeg names it (see
:func:`stompbox._base.channels.layout_name`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._base.channels import SPEAKERS, layout_name

#: For 3 to 8 channels of an Ogg Vorbis/Opus file: stompbox's channel ``i`` is the file's channel
#: ``VORBIS_TO_WAV[n][i]`` (Vorbis I specification, section 4.3.9; Opus's mapping family 1 is the same).
VORBIS_TO_WAV = {
    3: (0, 2, 1),
    4: (0, 1, 2, 3),
    5: (0, 2, 1, 3, 4),
    6: (0, 2, 1, 5, 3, 4),
    7: (0, 2, 1, 6, 5, 3, 4),
    8: (0, 2, 1, 7, 5, 6, 3, 4),
}
#: The layouts that FLAC and Vorbis/Opus fix for each channel count, in FFmpeg's names (FFmpeg reads FLAC's
#: five- and six-channel surrounds as side speakers, Vorbis's as back speakers).
VORBIS_LAYOUTS = {1: "mono", 2: "stereo", 3: "3.0", 4: "quad", 5: "5.0", 6: "5.1", 7: "6.1", 8: "7.1"}
FLAC_LAYOUTS = {**VORBIS_LAYOUTS, 5: "5.0(side)", 6: "5.1(side)"}
#: The WAVE_FORMAT_EXTENSIBLE channel mask stompbox writes for each count: the layouts above (7.1 with side
#: speakers, as FFmpeg writes it; 0, no speakers, beyond 8).
WAV_MASKS = {3: 0x7, 4: 0x33, 5: 0x37, 6: 0x3F, 7: 0x70F, 8: 0x63F}

# libsndfile's SF_CHANNEL_MAP_* values -> speakers (MONO and the unlabelled LEFT/RIGHT/CENTER included)
_SNDFILE_SPEAKERS = {
    1: "FC", 2: "FL", 3: "FR", 4: "FC", 5: "FL", 6: "FR", 7: "FC", 8: "BC", 9: "BL", 10: "BR", 11: "LFE",
    12: "FLC", 13: "FRC", 14: "SL", 15: "SR", 16: "TC", 17: "TFL", 18: "TFR", 19: "TFC", 20: "TBL", 21: "TBR",
    22: "TBC",
}  # fmt: skip
_SFC_GET_CHANNEL_MAP_INFO = 0x1100


def is_vorbis_order(subtype: str, num_channels: int) -> bool:
    """Whether a libsndfile file of this subtype stores ``num_channels`` channels in Vorbis order."""
    return subtype in ("VORBIS", "OPUS") and num_channels in VORBIS_TO_WAV and num_channels != 4


def from_vorbis(frames_first: np.ndarray) -> np.ndarray:
    """``(n, channels)`` samples in Vorbis order -> stompbox's order (a new array)."""
    return frames_first[:, VORBIS_TO_WAV[frames_first.shape[1]]]


def to_vorbis(frames_first: np.ndarray) -> np.ndarray:
    """``(n, channels)`` samples in stompbox's order -> Vorbis order (a new array)."""
    return frames_first[:, np.argsort(VORBIS_TO_WAV[frames_first.shape[1]])]


def flac_channel_mask(head: bytes) -> int | None:
    """The ``WAVEFORMATEXTENSIBLE_CHANNEL_MASK`` Vorbis comment of a FLAC file (the ``flac`` tool and FFmpeg
    write it for a layout other than FLAC's own for the count), from the file's first bytes; None if absent."""
    if head[:4] != b"fLaC":
        return None
    pos = 4
    while pos + 4 <= len(head):
        kind, size = head[pos] & 0x7F, int.from_bytes(head[pos + 1 : pos + 4], "big")
        last = head[pos] & 0x80
        body = head[pos + 4 : pos + 4 + size]
        if kind == 4 and len(body) == size:  # VORBIS_COMMENT: little-endian lengths
            vendor = int.from_bytes(body[:4], "little")
            at = 4 + vendor
            count = int.from_bytes(body[at : at + 4], "little")
            at += 4
            for _ in range(count):
                length = int.from_bytes(body[at : at + 4], "little")
                comment = body[at + 4 : at + 4 + length]
                at += 4 + length
                key, _, value = comment.partition(b"=")
                if key.upper() == b"WAVEFORMATEXTENSIBLE_CHANNEL_MASK":
                    try:
                        return int(value.decode("ascii").strip(), 0)
                    except ValueError:
                        return None
            return None
        if last:
            return None
        pos += 4 + size
    return None


def ffmpeg_layout(source: Any) -> str | None:
    """FFmpeg's name of the layout of a file (a path or a seekable file-like, left where it was), or None: for
    containers whose layout tags libsndfile does not read as FFmpeg does (AIFF's and CAF's ``chan`` chunks)."""
    here = None
    try:
        import av

        if not isinstance(source, str):
            here = source.tell()
            source.seek(0)
        with av.open(source, "r") as container:
            layout = container.streams.audio[0].layout
            return str(layout.name) if layout is not None else None
    except Exception:  # noqa: BLE001 - no answer from FFmpeg: the caller keeps libsndfile's
        return None
    finally:
        if here is not None:
            source.seek(here)


def sndfile_layout(sound_file: Any, format_name: str, subtype: str, head: bytes = b"") -> str | None:
    """The layout of a file libsndfile opened: its channel map (WAV, W64, RF64, CAF, AIFF with one), or the
    layout its format fixes for the count (FLAC, unless its channel-mask comment in ``head`` says otherwise;
    Vorbis, Opus, MP3); None when the file states none."""
    channels = int(sound_file.channels)
    if subtype in ("VORBIS", "OPUS") or format_name == "MP3":
        return VORBIS_LAYOUTS.get(channels)
    if format_name == "FLAC":
        mask = flac_channel_mask(head) if channels > 2 else None
        return layout_name(mask, channels) if mask else FLAC_LAYOUTS.get(channels)
    try:
        import soundfile as sf

        native, ffi = sf._snd, sf._ffi  # the channel map has no public soundfile call
        speakers = ffi.new("int[]", channels)
        if not native.sf_command(sound_file._file, _SFC_GET_CHANNEL_MAP_INFO, speakers, ffi.sizeof(speakers)):
            return None
        names = [_SNDFILE_SPEAKERS.get(int(code)) for code in speakers]
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return None
    mask = 0
    for name in names:
        if name is None:
            return None
        mask |= 1 << SPEAKERS.index(name)
    # stompbox reads channels in the file's order: a map whose speakers are out of WAV order has no name
    order = [SPEAKERS.index(name) for name in names if name is not None]
    if order != sorted(order) or mask.bit_count() != channels:
        return None
    return layout_name(mask, channels)
