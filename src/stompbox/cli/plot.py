"""``stompbox plot IN [OUT.png] [--chain FILE | EFFECT [PARAM=VALUE ...] ...]``: waveform and spectrogram.

With effects (a chain file and/or effects on the command line, as in ``render``) the picture shows the audio
before and after them, side by side on the same scales.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

from .common import CLIError, add_common_options, add_reader_options, open_input, show_progress
from .render import add_chain_options, add_intermixed_parser, build_chain, tail_value

_IMAGE_EXTENSIONS = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".webp")
_BLOCK = 1 << 16


def register(sub: Any) -> None:
    p = add_intermixed_parser(
        sub,
        "plot",
        help="draw waveform and spectrogram of a file (before/after when given effects)",
        usage="stompbox plot [options] IN [OUT.png] [EFFECT [PARAM=VALUE ...]] ...",
        description=(
            "Draw the waveform and spectrogram of IN into OUT (.png, .svg, .pdf; default: IN's name with "
            ".png in the current folder). Given effects (--chain FILE and/or EFFECT PARAM=VALUE ... as for "
            "render), draw before and after side by side. Needs matplotlib (pip install stompbox[plot])."
        ),
    )
    p.add_argument("tokens", nargs="+", metavar="IN [OUT.png] [EFFECT ...]", help=argparse.SUPPRESS)
    add_chain_options(p)
    p.add_argument("--tail", type=tail_value, default=0.0, metavar="SECONDS", help="show effects ringing out")
    p.add_argument(
        "--start", type=float, default=0.0, metavar="S", help="start at this time in seconds (axes: file time)"
    )
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="S",
        help="plot at most this many seconds (default: all)",
    )
    p.add_argument("--title", help="title above the picture (default: the file name)")
    add_reader_options(p)
    add_common_options(p)
    p.set_defaults(func=run)


class _Tee:
    """A reader passing its blocks to ``summary`` as they are read, up to ``limit`` frames (None: all)."""

    def __init__(self, reader: Any, summary: Any, limit: int | None, progress: Any = None) -> None:
        self._reader = reader
        self._summary = summary
        self._left = limit
        self._progress = progress
        self.samplerate = reader.samplerate
        self.num_channels = reader.num_channels

    @property
    def frames(self) -> int:
        return int(self._reader.frames)

    def read(self, num_frames: int) -> np.ndarray:
        want = num_frames if self._left is None else min(num_frames, self._left)
        block = self._reader.read(want) if want > 0 else np.zeros((self.num_channels, 0), np.float32)
        if self._left is not None:
            self._left -= block.shape[1]
        self._summary.add(block)
        if self._progress is not None:
            self._progress(block.shape[1])
        return block


def run(args: argparse.Namespace) -> int:
    tokens = list(args.tokens)
    in_path = tokens.pop(0)
    if tokens and tokens[0].lower().endswith(_IMAGE_EXTENSIONS):
        out_path = tokens.pop(0)
    else:
        stem = "stdin" if in_path == "-" else os.path.splitext(os.path.basename(in_path))[0]
        out_path = stem + ".png"
    if args.start < 0 or (args.duration is not None and args.duration <= 0):
        raise CLIError("--start must be >= 0 and --duration > 0", status=2)
    board = build_chain(args.chain, tokens, args.quiet) if (args.chain or tokens) else None
    parent = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(parent):
        raise CLIError(f"{out_path}: folder {parent} does not exist")
    try:
        from ..analysis.plot import StreamSummary, plot_audio
    except ImportError as error:
        raise CLIError(str(error)) from error
    with open_input(in_path, args) as f:
        rate = float(f.samplerate)
        first = int(round(args.start * rate))
        if first:
            if f.exact_duration_known and first >= f.frames:
                raise CLIError(f"--start {args.start:g} s is after the end ({f.duration:.3f} s)", status=2)
            f.seek(first)
        limit = None if args.duration is None else int(round(args.duration * rate))
        known = max(0, int(f.frames) - first) if f.frames else None
        expected = min(known, limit) if known is not None and limit is not None else (known or limit)
        dry = StreamSummary(rate, f.num_channels, expected)
        bar = None
        if expected and show_progress(args.quiet, expected / rate):
            from tqdm import tqdm

            bar = tqdm(total=expected, unit="frames", unit_scale=True, desc=os.path.basename(out_path), leave=False)
        source = _Tee(f, dry, limit, bar.update if bar is not None else None)
        wet = None
        if board is None:
            while source.read(_BLOCK).shape[1]:
                pass
        else:
            from ..batch import stream_through

            tail_seconds = 0.0 if args.tail == "auto" else float(args.tail)
            wet = StreamSummary(rate, f.num_channels, expected + int(tail_seconds * rate) if expected else None)
            stream_through(
                board, source, wet.add, tail=args.tail if args.tail == "auto" else (float(args.tail) or None)
            )
            wet.finish()
        dry.finish()
        if bar is not None:
            bar.close()
    try:
        names = getattr(f, "channel_names", None)  # named channels, where the reader knows its layout
        title = args.title or (os.path.basename(in_path) if in_path != "-" else "standard input")
        plot_audio(dry, rate, wet, path=out_path, title=title, start=first / rate, names=names)
    except ImportError as error:
        raise CLIError(str(error)) from error
    if not args.quiet:
        print(f"wrote {out_path}")
    return 0
