"""``stompbox info FILE...``: what a file holds (format, codec, rate, channels, length, bit depth, peak).

Formats and codecs are named as ffprobe names them (``wav``/``pcm_s16le``, ``mp4``/``aac``, ``mp3``/``mp2``), with
one short format name where FFmpeg lists a family (``mov,mp4,m4a,3gp,3g2,mj2`` is ``mp4``, or ``mov`` for a
``.mov``). The bit depth is given only where the codec stores one (PCM, FLAC, ALAC...), not for lossy codecs.

``--json`` prints a list with one object per FILE, in the order given (a file named twice appears twice), each
with its ``"path"``, as ``stompbox loudness --json`` does; a file that could not be read has ``"error"``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys
from typing import Any

import numpy as np

from .common import CLIError, add_common_options, add_reader_options, dbfs, open_input, show_progress

_BITS = {"int8": 8, "int16": 16, "int24": 24, "int32": 32, "float32": 32, "float64": 64}
_CHUNK = 1 << 16

#: libsndfile's container names -> FFmpeg's
_FORMATS = {"WAV": "wav", "WAVEX": "wav", "RF64": "wav", "W64": "w64", "AIFF": "aiff", "CAF": "caf", "FLAC": "flac",
            "OGG": "ogg", "MP3": "mp3", "AU": "au", "MPEG": "mp3", "MATROSKA": "matroska", "MOV": "mp4",
            "ASF": "asf"}  # fmt: skip
#: FFmpeg's demuxers that name a family, by the extensions of its members
_FAMILIES = {"mp4": {".mov": "mov", ".3gp": "3gp", ".3g2": "3g2"}, "matroska": {".webm": "webm"}}
#: libsndfile's subtypes -> FFmpeg's codec names ({e}: the byte order, le or be)
_CODECS = {"PCM_S8": "pcm_s8", "PCM_U8": "pcm_u8", "PCM_16": "pcm_s16{e}", "PCM_24": "pcm_s24{e}",
           "PCM_32": "pcm_s32{e}", "FLOAT": "pcm_f32{e}", "DOUBLE": "pcm_f64{e}", "ULAW": "pcm_mulaw",
           "ALAW": "pcm_alaw", "IMA_ADPCM": "adpcm_ima_wav", "MS_ADPCM": "adpcm_ms", "GSM610": "gsm_ms",
           "VORBIS": "vorbis", "OPUS": "opus", "MPEG_LAYER_I": "mp1", "MPEG_LAYER_II": "mp2",
           "MPEG_LAYER_III": "mp3", "ALAC_16": "alac", "ALAC_20": "alac", "ALAC_24": "alac",
           "ALAC_32": "alac"}  # fmt: skip
#: FFmpeg's decoders whose name is not their codec's (ffprobe names the codec)
_DECODERS = {"mp3float": "mp3", "mp2float": "mp2", "mp1float": "mp1", "aac_fixed": "aac", "ac3_fixed": "ac3",
             "libopus": "opus", "libvorbis": "vorbis", "libfdk_aac": "aac", "libspeex": "speex"}  # fmt: skip
#: codecs that store samples of a fixed width (the others are lossy: no bit depth)
_LOSSLESS = ("pcm_", "flac", "alac", "wavpack", "tta", "ape", "truehd", "mlp")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "info",
        help="show format, codec, rate, channels, length, bit depth and peak of audio files",
        description=(
            "Show what audio files hold, in ffprobe's names. The peak is measured by reading each file once, as "
            "a stream ('-' reads standard input)."
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="audio files to inspect ('-': standard input)")
    p.add_argument("--json", action="store_true", help="print a JSON list of objects (one per FILE) instead of text")
    p.add_argument("--no-peak", action="store_true", help="skip the streaming pass that measures the peak")
    add_reader_options(p)
    add_common_options(p)
    p.set_defaults(func=run)


def _byte_order(path: str, fmt: str) -> str:
    """``"le"`` or ``"be"``: the byte order of PCM samples in a file of container ``fmt`` (AIFF and CAF can be
    either; WAV, W64 and RF64 are little-endian)."""
    if fmt not in ("AIFF", "CAF", "AU") or not os.path.isfile(path):
        return "le"
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return "be"
    if fmt == "CAF":  # the 'desc' chunk: format flags bit 1 is little-endian
        at = head.find(b"desc")
        if at >= 0 and len(head) >= at + 28:
            return "le" if struct.unpack(">I", head[at + 24 : at + 28])[0] & 2 else "be"
        return "be"
    if fmt == "AIFF" and head[8:12] == b"AIFC":
        at = head.find(b"COMM")
        if at >= 0 and head[at + 26 : at + 30] == b"sowt":
            return "le"
    return "be"


def names(reader: Any, path: str) -> tuple[str | None, str | None]:
    """(format, codec) of an open reader, as ffprobe names them."""
    fmt = str(getattr(reader, "format", "") or "").upper()
    subtype = str(getattr(reader, "codec", "") or "")
    if not fmt and reader.__class__.__name__ == "RawReader":
        return "raw", f"pcm_{'f' if reader.file_dtype.startswith('float') else 's'}{_BITS[reader.file_dtype]}le"
    short = _FORMATS.get(fmt, fmt.lower() or None)
    if short in _FAMILIES:
        short = _FAMILIES[short].get(os.path.splitext(path)[1].lower(), short)
    codec = _CODECS.get(subtype.upper())
    if fmt == "FLAC":
        codec = "flac"
    elif codec is None:
        codec = _DECODERS.get(subtype.lower(), subtype.lower()) or None  # FFmpeg's decoders: FFmpeg's names
    elif "{e}" in codec:
        codec = codec.format(e=_byte_order(path, fmt))
    return short, codec


def describe(path: str, args: argparse.Namespace | None = None, peak: bool = True) -> dict[str, Any]:
    """The facts ``stompbox info`` prints about one file, as a dict (JSON-ready)."""
    options = args if args is not None else argparse.Namespace()
    with open_input(path, options) if args is not None else _open(path) as f:
        fmt, codec = names(f, path)
        lossless = codec is not None and codec.startswith(_LOSSLESS)
        entry: dict[str, Any] = {
            "path": path,
            "format": fmt,
            "codec": codec,
            "samplerate": f.samplerate,
            "num_channels": f.num_channels,
            "channel_layout": getattr(f, "channel_layout", None),  # named layouts: filled by the reader if known
            "frames": f.frames,
            "duration": f.duration,
            "exact_duration": bool(f.exact_duration_known),
            "file_dtype": f.file_dtype,
            "bit_depth": _BITS.get(str(f.file_dtype)) if lossless else None,
            "peak": None,
            "peak_dbfs": None,
            "tags": _tags(f),
        }
        if peak:
            quiet = bool(getattr(options, "quiet", False))
            bar = None
            if f.frames and show_progress(quiet, f.duration):
                from tqdm import tqdm

                bar = tqdm(total=f.frames, unit="frames", unit_scale=True, desc=path, leave=False)
            top = 0.0
            try:
                while True:
                    block = f.read(_CHUNK)
                    if block.shape[1] == 0:
                        break
                    if block.size:
                        top = max(top, float(np.abs(block).max()))
                    if bar is not None:
                        bar.update(block.shape[1])
            finally:
                if bar is not None:
                    bar.close()
            # a full pass makes an estimated length exact
            entry.update(frames=f.frames, duration=f.duration, exact_duration=bool(f.exact_duration_known))
            entry["peak"] = top
            entry["peak_dbfs"] = round(dbfs(top), 2) if top > 0 else None
    return entry


def _tags(f: Any) -> dict[str, Any]:
    """The file's tags for printing: the text tags, and the cover as its type and size."""
    tags = dict(getattr(f, "tags", {}) or {})
    cover = tags.pop("cover", None)
    if cover is not None:
        from ..io.tags import image_type

        tags["cover"] = f"{image_type(cover)}, {len(cover)} bytes"
    return tags


def _open(path: str) -> Any:
    from .common import open_reader

    return open_reader(path)


def _text(entry: dict[str, Any]) -> str:
    exact = "exact" if entry["exact_duration"] else "estimated"
    codec = entry["codec"] or "unknown"
    if entry["bit_depth"]:
        kind = "float" if codec.startswith("pcm_f") else "unsigned" if codec == "pcm_u8" else "integer"
        codec += f", {entry['bit_depth']}-bit {kind}"
    channels = str(entry["num_channels"])
    if entry.get("channel_layout"):
        channels += f" ({entry['channel_layout']})"
    lines = [
        f"{entry['path']}:",
        f"  format:      {entry['format'] or 'unknown'}",
        f"  codec:       {codec}",
        f"  sample rate: {entry['samplerate']} Hz",
        f"  channels:    {channels}",
        f"  frames:      {entry['frames']} ({exact})",
        f"  duration:    {_clock(entry['duration'])} ({entry['duration']:.3f} s)",
    ]
    if entry["peak"] is not None:
        level = "-inf" if entry["peak_dbfs"] is None else f"{entry['peak_dbfs']:.2f}"
        lines.append(f"  peak:        {level} dBFS ({entry['peak']:.6f})")
    for key, value in (entry.get("tags") or {}).items():
        lines.append(f"  {key + ':':<12} {' '.join(str(value).split())}")
    return "\n".join(lines)


def _clock(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    minutes, rest = divmod(seconds, 60.0)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{rest:06.3f}" if hours else f"{minutes}:{rest:06.3f}"


def run(args: argparse.Namespace) -> int:
    entries: list[dict[str, Any]] = []
    failed = 0
    for path in args.files:
        try:
            entries.append(describe(path, args, peak=not args.no_peak))
        except Exception as error:  # one file's failure does not stop the others
            if getattr(args, "debug", False):
                raise
            message = str(error) if isinstance(error, CLIError) else f"{path}: {' '.join(str(error).split())}"
            print(f"stompbox: error: {message}", file=sys.stderr)
            entries.append({"path": path, "error": message})
            failed += 1
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        text = [_text(e) for e in entries if "error" not in e]
        if text:
            print("\n".join(text))
    return 1 if failed else 0
