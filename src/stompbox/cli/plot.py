"""``stompbox plot IN [OUT.png] [--chain FILE | EFFECT [PARAM=VALUE ...] ...]``: waveform and spectrogram.

With effects (a chain file and/or effects on the command line, as in ``render``) the picture shows the audio
before and after them, side by side on the same scales.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

from .common import CLIError, open_reader
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
    p.add_argument("--start", type=float, default=0.0, metavar="S", help="start at this time in seconds")
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="S",
        help="plot at most this many seconds (default: all)",
    )
    p.add_argument("--title", help="title above the picture (default: the file name)")
    p.set_defaults(func=run)


def _read(path: str, start: float, duration: float | None) -> tuple[np.ndarray, float]:
    with open_reader(path) as f:
        rate = float(f.samplerate)
        first = int(round(start * rate))
        if first:
            f.seek(min(first, f.frames))
        limit = None if duration is None else int(round(duration * rate))
        blocks, total = [], 0
        while limit is None or total < limit:
            want = _BLOCK if limit is None else min(_BLOCK, limit - total)
            block = f.read(want)
            if block.shape[1] == 0:
                break
            blocks.append(block)
            total += block.shape[1]
        audio = np.concatenate(blocks, axis=1) if blocks else np.zeros((f.num_channels, 0), np.float32)
    return audio, rate


def run(args: argparse.Namespace) -> int:
    tokens = list(args.tokens)
    in_path = tokens.pop(0)
    if tokens and tokens[0].lower().endswith(_IMAGE_EXTENSIONS):
        out_path = tokens.pop(0)
    else:
        out_path = os.path.splitext(os.path.basename(in_path))[0] + ".png"
    if args.start < 0 or (args.duration is not None and args.duration <= 0):
        raise CLIError("--start must be >= 0 and --duration > 0", status=2)
    board = build_chain(args.chain, tokens) if (args.chain or tokens) else None
    parent = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(parent):
        raise CLIError(f"{out_path}: folder {parent} does not exist")
    try:
        from ..analysis.plot import plot_audio
    except ImportError as error:
        raise CLIError(str(error)) from error
    audio, rate = _read(in_path, args.start, args.duration)
    processed = None
    if board is not None:
        from ..batch import MAX_AUTO_TAIL_SECONDS
        from ..render import render

        tail = args.tail if args.tail == "auto" else float(args.tail)
        processed = render(audio, rate, board, tail, max_tail_seconds=MAX_AUTO_TAIL_SECONDS, layout="channels-first")
    try:
        plot_audio(audio, rate, processed, path=out_path, title=args.title or os.path.basename(in_path))
    except ImportError as error:
        raise CLIError(str(error)) from error
    print(f"wrote {out_path}")
    return 0
