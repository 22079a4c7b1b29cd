"""``stompbox play FILE [--chain FILE] [EFFECT ...]`` and ``stompbox record OUT --seconds S``: live audio,
streamed to and from files in bounded memory (see :mod:`stompbox.live.stream`). ``-`` is standard input (play)
or standard output (record)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import (
    STDIO,
    CLIError,
    add_common_options,
    add_output_options,
    add_reader_options,
    open_input,
    output_type,
)


def register(sub: Any) -> None:
    play = sub.add_parser(
        "play",
        help="play an audio file on an output device, optionally through effects",
        description="Play FILE ('-': standard input) on an output device, through effects given as for render.",
    )
    play.add_argument("file", help="audio file to play ('-': standard input)")
    play.add_argument("effects", nargs="*", help="effects as in `stompbox render` (EFFECT PARAM=VALUE ...)")
    play.add_argument("--chain", help="a saved chain file (JSON/YAML) to play through")
    play.add_argument("--device", help="output device name (default: the system's default output)")
    add_reader_options(play)
    add_common_options(play)
    play.set_defaults(func=run_play)

    record = sub.add_parser(
        "record",
        help="record from an input device into an audio file",
        description="Record from an input device into OUT ('-': standard output, WAV unless -t says otherwise).",
    )
    record.add_argument("out", help="output audio file (its extension, or -t, picks the format)")
    record.add_argument("--seconds", type=float, required=True, help="how long to record")
    record.add_argument("--device", help="input device name (default: the system's default input)")
    record.add_argument("--chain", help="a saved chain file to run on the recording as it arrives")
    add_output_options(record, quality=False)
    record.set_defaults(channels=1)
    add_common_options(record)
    record.set_defaults(func=run_record)


def _board(chain: str | None, effects: list[str], quiet: bool = False) -> Any:
    if not chain and not effects:
        return None
    from .render import build_chain

    return build_chain(chain, effects, quiet)


def run_play(args: argparse.Namespace) -> int:
    from ..live import play_file

    board = _board(args.chain, args.effects, args.quiet)
    with open_input(args.file, args) as source:
        play_file(source, board, args.device)
    return 0


def run_record(args: argparse.Namespace) -> int:
    if args.seconds <= 0:
        raise CLIError("--seconds must be positive", status=2)
    from ..live import record_to_file

    target: Any = sys.stdout.buffer if args.out == STDIO else args.out
    kind = output_type(args.out, args)
    frames = record_to_file(
        target,
        args.seconds,
        args.device,
        sample_rate=args.rate,
        num_channels=args.channels,
        plugins=_board(args.chain, []),
        bit_depth=args.bits or 16,
        format=kind if (args.out == STDIO or args.type) else None,
    )
    if not args.quiet and args.out != STDIO:
        print(f"recorded {frames} frames to {args.out}")
    return 0
