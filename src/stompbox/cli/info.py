"""``stompbox info FILE...``: what a file holds (format, codec, rate, channels, length, bit depth, peak)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import numpy as np

from .common import CLIError, dbfs, open_reader

_BITS = {"int8": 8, "int16": 16, "int24": 24, "int32": 32, "float32": 32, "float64": 64}
_CHUNK = 1 << 16


def register(sub: Any) -> None:
    p = sub.add_parser(
        "info",
        help="show format, codec, rate, channels and layout, length, bit depth and peak of audio files",
        description=("Show what audio files hold. The peak is measured by reading each file once, as a stream."),
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="audio files to inspect")
    p.add_argument("--json", action="store_true", help="print a JSON list of objects instead of text")
    p.add_argument("--no-peak", action="store_true", help="skip the streaming pass that measures the peak")
    p.set_defaults(func=run)


def probe_format(path: str) -> tuple[str | None, str | None]:
    """(container format, codec or subtype) of ``path``, from libsndfile or else FFmpeg; None if unknown."""
    try:
        import soundfile

        found = soundfile.info(path)
        return found.format, found.subtype
    except Exception:  # noqa: BLE001 - not a libsndfile format: ask FFmpeg
        pass
    try:
        import av

        with av.open(path) as container:
            streams = container.streams.audio
            codec = streams[0].codec_context.name if streams else None
            return container.format.name, codec
    except Exception:  # noqa: BLE001
        return None, None


def describe(path: str, peak: bool = True) -> dict[str, Any]:
    """The facts ``stompbox info`` prints about one file, as a dict (JSON-ready)."""
    with open_reader(path) as f:
        fmt, codec = probe_format(path)
        entry: dict[str, Any] = {
            "path": path,
            "format": fmt,
            "codec": codec,
            "samplerate": f.samplerate,
            "num_channels": f.num_channels,
            "channel_layout": getattr(f, "channel_layout", None),
            "frames": f.frames,
            "duration": f.duration,
            "exact_duration": bool(f.exact_duration_known),
            "file_dtype": f.file_dtype,
            "bit_depth": _BITS.get(str(f.file_dtype)),
            "peak": None,
            "peak_dbfs": None,
        }
        if peak:
            top = 0.0
            while True:
                block = f.read(_CHUNK)
                if block.shape[1] == 0:
                    break
                if block.size:
                    top = max(top, float(np.abs(block).max()))
            # a full pass makes an estimated length exact
            entry.update(frames=f.frames, duration=f.duration, exact_duration=bool(f.exact_duration_known))
            entry["peak"] = top
            entry["peak_dbfs"] = round(dbfs(top), 2) if top > 0 else None
    return entry


def _text(entry: dict[str, Any]) -> str:
    exact = "exact" if entry["exact_duration"] else "estimated"
    bits = f"{entry['bit_depth']}-bit " if entry["bit_depth"] else ""
    lines = [
        f"{entry['path']}:",
        f"  format:      {entry['format'] or 'unknown'}" + (f" ({entry['codec']})" if entry["codec"] else ""),
        f"  sample rate: {entry['samplerate']} Hz",
        f"  channels:    {entry['num_channels']}"
        + (f" ({entry['channel_layout']})" if entry["channel_layout"] else ""),
        f"  frames:      {entry['frames']} ({exact})",
        f"  duration:    {_clock(entry['duration'])} ({entry['duration']:.3f} s)",
        f"  sample type: {bits}{entry['file_dtype']}",
    ]
    if entry["peak"] is not None:
        level = "-inf" if entry["peak_dbfs"] is None else f"{entry['peak_dbfs']:.2f}"
        lines.append(f"  peak:        {level} dBFS ({entry['peak']:.6f})")
    return "\n".join(lines)


def _clock(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    minutes, rest = divmod(seconds, 60.0)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{rest:06.3f}" if hours else f"{minutes}:{rest:06.3f}"


def run(args: argparse.Namespace) -> int:
    entries, failed = [], 0
    for path in args.files:
        try:
            entries.append(describe(path, peak=not args.no_peak))
        except CLIError as error:
            if args.debug:
                raise
            print(f"stompbox: error: {error}", file=sys.stderr)
            failed += 1
        except Exception as error:  # one file's failure does not stop the others
            if args.debug:
                raise
            print(f"stompbox: error: {path}: {' '.join(str(error).split())}", file=sys.stderr)
            failed += 1
    if args.json:
        print(json.dumps(entries, indent=2))
    elif entries:
        print("\n".join(_text(e) for e in entries))
    return 1 if failed else 0
