"""Channel layouts and the one channel-conversion rule (standard library and NumPy only).

stompbox holds multichannel audio in the order WAV and FFmpeg use: the speakers of a layout in the order of
their bits in a WAVE_FORMAT_EXTENSIBLE channel mask (FL, FR, FC, LFE, BL, BR, FLC, FRC, BC, SL, SR, ...).
Layouts are named as FFmpeg names them ("mono", "stereo", "5.1", "7.1", "5.1(side)", ...): a mask that has no
standard name is ``"N channels (A+B+C)"`` ("3 channels (FL+FR+SL)"), and audio whose speakers are not stated
is ``"N channels"``, FFmpeg's names for them.

Audio of a given channel count whose layout nobody stated has :func:`default_layout`: mono, stereo, 3.0, quad,
5.0, 5.1, 6.1 and 7.1 for 1 to 8 channels, the layouts that FLAC, Ogg Vorbis and Opus fix for those counts.

The conversion rule (:func:`conversion_matrix`, :func:`convert_channels`)
--------------------------------------------------------------------------
- Same count: unchanged.
- From mono: the one channel copied, at full level, to every output channel (as pedalboard's ``stereo()``).
- Between layouts of known speakers: FFmpeg's downmix (libswresample's default matrix, ITU-R BS.775 levels).
  A speaker present on both sides is kept; a missing centre goes to front left and right at -3 dB (0.7071);
  missing surrounds go to the nearest present pair (side <-> back at full level, or at -3 dB when the output
  has both) or to the front pair at -3 dB; a back centre to the back or side pair at -3 dB, or to the front at
  -6 dB; front left and right to a centre at -3 dB each (and a centre already there at 0 dB); the
  low-frequency channel is dropped (FFmpeg's default LFE level is 0). The matrix is then scaled so that no
  output channel's coefficients add up to more than 1 (FFmpeg does so for integer output; stompbox always
  does, so a downmix never clips). Stereo to mono is therefore the mean of left and right (pedalboard's rule),
  and 5.1 to stereo is ``L' = (L + 0.7071 C + 0.7071 Ls) / 2.4142`` (``R'`` likewise).
- Missing speakers of a larger layout are silent (stereo to 5.1 fills FL and FR only).
- Audio beyond 8 channels whose speakers are not stated: to mono, the mean of all channels; otherwise
  output channel ``i`` is input channel ``i``, and missing channels are silent.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = [
    "SPEAKERS",
    "LAYOUTS",
    "default_layout",
    "layout_mask",
    "layout_name",
    "layout_speakers",
    "conversion_matrix",
    "convert_channels",
]

#: Speaker names in the order of their bits in a WAVE_FORMAT_EXTENSIBLE channel mask (and FFmpeg's).
SPEAKERS = (
    "FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR",
    "TC", "TFL", "TFC", "TFR", "TBL", "TBC", "TBR",
)  # fmt: skip
_BIT = {name: 1 << index for index, name in enumerate(SPEAKERS)}


def _mask(*speakers: str) -> int:
    mask = 0
    for speaker in speakers:
        mask |= _BIT[speaker]
    return mask


#: FFmpeg's standard layouts (name -> channel mask), in FFmpeg's order.
LAYOUTS: dict[str, int] = {
    "mono": _mask("FC"),
    "stereo": _mask("FL", "FR"),
    "2.1": _mask("FL", "FR", "LFE"),
    "3.0": _mask("FL", "FR", "FC"),
    "3.0(back)": _mask("FL", "FR", "BC"),
    "4.0": _mask("FL", "FR", "FC", "BC"),
    "quad": _mask("FL", "FR", "BL", "BR"),
    "quad(side)": _mask("FL", "FR", "SL", "SR"),
    "3.1": _mask("FL", "FR", "FC", "LFE"),
    "5.0": _mask("FL", "FR", "FC", "BL", "BR"),
    "5.0(side)": _mask("FL", "FR", "FC", "SL", "SR"),
    "4.1": _mask("FL", "FR", "FC", "LFE", "BC"),
    "5.1": _mask("FL", "FR", "FC", "LFE", "BL", "BR"),
    "5.1(side)": _mask("FL", "FR", "FC", "LFE", "SL", "SR"),
    "6.0": _mask("FL", "FR", "FC", "BC", "SL", "SR"),
    "6.0(front)": _mask("FL", "FR", "FLC", "FRC", "SL", "SR"),
    "hexagonal": _mask("FL", "FR", "FC", "BL", "BR", "BC"),
    "6.1": _mask("FL", "FR", "FC", "LFE", "BC", "SL", "SR"),
    "6.1(back)": _mask("FL", "FR", "FC", "LFE", "BL", "BR", "BC"),
    "6.1(front)": _mask("FL", "FR", "LFE", "FLC", "FRC", "SL", "SR"),
    "7.0": _mask("FL", "FR", "FC", "BL", "BR", "SL", "SR"),
    "7.0(front)": _mask("FL", "FR", "FC", "FLC", "FRC", "SL", "SR"),
    "7.1": _mask("FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"),
    "7.1(wide)": _mask("FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC"),
    "7.1(wide-side)": _mask("FL", "FR", "FC", "LFE", "FLC", "FRC", "SL", "SR"),
    "octagonal": _mask("FL", "FR", "FC", "BL", "BR", "BC", "SL", "SR"),
}
_NAMES = {mask: name for name, mask in reversed(LAYOUTS.items())}  # the first name of a mask wins
_DEFAULTS = {1: "mono", 2: "stereo", 3: "3.0", 4: "quad", 5: "5.0", 6: "5.1", 7: "6.1", 8: "7.1"}


def default_layout(num_channels: int) -> str:
    """The layout of ``num_channels`` channels when nothing states one: mono, stereo, 3.0, quad, 5.0, 5.1, 6.1,
    7.1 for 1 to 8 (FLAC's, Vorbis's and Opus's layouts for those counts), else ``"N channels"``."""
    return _DEFAULTS.get(num_channels, f"{num_channels} channels")


def layout_name(mask: int, num_channels: int) -> str:
    """FFmpeg's name of a channel mask: a standard name, else ``"N channels (A+B+...)"``. A mask that does not
    name exactly ``num_channels`` known speakers (0: unstated) gives ``"N channels"``, or "mono"/"stereo" for
    one or two channels (WAV's reading of a file without a mask)."""
    if mask and mask < (1 << len(SPEAKERS)) and mask.bit_count() == num_channels:
        speakers = "+".join(name for name in SPEAKERS if mask & _BIT[name])
        return _NAMES.get(mask) or f"{num_channels} channels ({speakers})"
    return default_layout(num_channels) if num_channels <= 2 else f"{num_channels} channels"


def layout_mask(layout: str | None, num_channels: int) -> int:
    """The channel mask of ``layout`` (a name from :data:`LAYOUTS`, ``"N channels (A+B+...)"`` or speakers
    joined by "+") for audio of ``num_channels`` channels; 0 when its speakers are unknown. ``None`` or
    ``"N channels"`` is the :func:`default_layout` of the count."""
    if layout is not None and layout.endswith(")") and " channels (" in layout:
        layout = layout[layout.index("(") + 1 : -1]
    if layout is None or layout.endswith(" channels"):
        layout = default_layout(num_channels)
    mask = LAYOUTS.get(layout)
    if mask is None:
        names = layout.split("+")
        mask = _mask(*names) if all(name in _BIT for name in names) else 0
    return mask if mask.bit_count() == num_channels else 0


def layout_speakers(layout: str | None, num_channels: int) -> tuple[str, ...] | None:
    """The speaker of each channel of ``layout`` in stompbox's order, or None when they are unknown."""
    mask = layout_mask(layout, num_channels)
    return tuple(name for name in SPEAKERS if mask & _BIT[name]) if mask else None


_M3DB = math.sqrt(0.5)  # -3 dB: FFmpeg's default centre and surround mix levels (ITU-R BS.775)


def _downmix(source: int, target: int) -> dict[tuple[int, int], float]:
    """FFmpeg's default matrix between two channel masks, before scaling: {(output bit, input bit): gain}."""
    gains: dict[tuple[int, int], float] = {}

    def add(out: str, inp: str, gain: float) -> None:
        key = (_BIT[out], _BIT[inp])
        gains[key] = gains.get(key, 0.0) + gain

    for bit in (1 << i for i in range(len(SPEAKERS))):
        if source & target & bit:
            gains[(bit, bit)] = 1.0
    missing = source & ~target

    def has(mask: int, speaker: str) -> bool:
        return bool(mask & _BIT[speaker])

    if has(missing, "FC") and has(target, "FL"):
        add("FL", "FC", _M3DB)
        add("FR", "FC", _M3DB)
    if missing & _mask("FL", "FR") and has(target, "FC"):
        add("FC", "FL", _M3DB)
        add("FC", "FR", _M3DB)
        if has(source, "FC"):
            gains[(_BIT["FC"], _BIT["FC"])] = 1.0  # FFmpeg: centre level x sqrt(2)
    if has(missing, "BC"):
        if has(target, "BL"):
            add("BL", "BC", _M3DB)
            add("BR", "BC", _M3DB)
        elif has(target, "SL"):
            add("SL", "BC", _M3DB)
            add("SR", "BC", _M3DB)
        elif has(target, "FL"):
            add("FL", "BC", _M3DB * _M3DB)
            add("FR", "BC", _M3DB * _M3DB)
        elif has(target, "FC"):
            add("FC", "BC", _M3DB * _M3DB)
    for pair, other in ((("BL", "BR"), ("SL", "SR")), (("SL", "SR"), ("BL", "BR"))):
        if not missing & _mask(*pair):
            continue
        if has(target, other[0]):  # back <-> side
            level = _M3DB if source & _mask(*other) else 1.0
            add(other[0], pair[0], level)
            add(other[1], pair[1], level)
        elif has(target, "BC"):
            add("BC", pair[0], _M3DB)
            add("BC", pair[1], _M3DB)
        elif has(target, "FL"):
            add("FL", pair[0], _M3DB)
            add("FR", pair[1], _M3DB)
        elif has(target, "FC"):
            add("FC", pair[0], _M3DB * _M3DB)
            add("FC", pair[1], _M3DB * _M3DB)
    if missing & _mask("FLC", "FRC"):
        if has(target, "FL"):
            add("FL", "FLC", 1.0)
            add("FR", "FRC", 1.0)
        elif has(target, "FC"):
            add("FC", "FLC", _M3DB)
            add("FC", "FRC", _M3DB)
    return gains  # LFE: FFmpeg's default level is 0 (dropped)


@lru_cache(maxsize=256)
def _matrix(
    source_layout: str | None, source_channels: int, target_layout: str | None, target_channels: int
) -> np.ndarray | None:
    if source_channels == target_channels:
        return None  # unchanged
    if source_channels == 1:
        return np.ones((target_channels, 1), np.float32)
    source = layout_mask(source_layout, source_channels)
    target = layout_mask(target_layout, target_channels)
    matrix = np.zeros((target_channels, source_channels), np.float64)
    if source and target:
        rows = {bit: row for row, bit in enumerate(b for b in (1 << i for i in range(len(SPEAKERS))) if target & b)}
        cols = {bit: col for col, bit in enumerate(b for b in (1 << i for i in range(len(SPEAKERS))) if source & b)}
        for (out, inp), gain in _downmix(source, target).items():
            if out in rows and inp in cols:
                matrix[rows[out], cols[inp]] += gain
    elif target_channels == 1:
        matrix[0, :] = 1.0  # speakers unknown: the mean (after scaling)
    else:
        for channel in range(min(source_channels, target_channels)):
            matrix[channel, channel] = 1.0
    largest = np.abs(matrix).sum(axis=1).max()
    if largest > 1.0:
        matrix /= largest
    matrix = matrix.astype(np.float32)
    matrix.setflags(write=False)
    return matrix


def conversion_matrix(
    source_channels: int,
    target_channels: int,
    source_layout: str | None = None,
    target_layout: str | None = None,
) -> np.ndarray:
    """The ``(target_channels, source_channels)`` float32 gains of the conversion rule (see the module's text).

    ``source_layout``/``target_layout`` are layout names (None: :func:`default_layout` of the count).
    """
    matrix = _matrix(source_layout, source_channels, target_layout, target_channels)
    if matrix is None:
        return np.eye(target_channels, dtype=np.float32)
    return matrix.copy()


def convert_channels(
    block: np.ndarray, num_channels: int, source_layout: str | None = None, target_layout: str | None = None
) -> np.ndarray:
    """Convert a float32 ``(channels, n)`` block to ``num_channels`` channels (C-contiguous float32) by the
    conversion rule (see the module's text). A block without channels gives silence."""
    source = block.shape[0]
    if source == 0:  # a file without channels (e.g. a broken MP3): silence
        return np.zeros((num_channels, block.shape[1]), np.float32)
    matrix = _matrix(source_layout, source, target_layout, num_channels)
    if matrix is None:
        return np.ascontiguousarray(block, dtype=np.float32)
    if source == 1:
        return np.ascontiguousarray(np.broadcast_to(block, (num_channels, block.shape[1])), dtype=np.float32)
    if num_channels == 1 and source == 2 and matrix[0, 0] == matrix[0, 1] == 0.5:
        out: np.ndarray = np.add(block[0], block[1], dtype=np.float32)  # the mean, as pedalboard computes it
        out *= np.float32(0.5)
        return out[None, :]
    mixed: np.ndarray = np.ascontiguousarray(matrix @ np.asarray(block, dtype=np.float32))
    return mixed
