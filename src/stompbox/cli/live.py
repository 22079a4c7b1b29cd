"""``stompbox play FILE [--chain FILE] [EFFECT ...]`` and ``stompbox record OUT --seconds S``: live audio,
streamed to and from files in bounded memory (see :mod:`stompbox.io.stream`)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import CLIError


def register(sub: Any) -> None:
    play = sub.add_parser("play", help="play an audio file on an output device, optionally through effects")
    play.add_argument("file", help="audio file to play")
    play.add_argument("effects", nargs="*", help="effects as in `stompbox render` (EFFECT PARAM=VALUE ...)")
    play.add_argument("--chain", help="a saved chain file (JSON/YAML) to play through")
    play.add_argument("--device", help="output device name (default: the system's default output)")
    play.set_defaults(func=run_play)

    record = sub.add_parser("record", help="record from an input device into an audio file")
    record.add_argument("out", help="output audio file (its extension picks the format)")
    record.add_argument("--seconds", type=float, required=True, help="how long to record")
    record.add_argument("--device", help="input device name (default: the system's default input)")
    record.add_argument("--rate", type=float, help="sample rate in Hz (default: the device's)")
    record.add_argument("--channels", type=int, default=1, help="input channels (default 1)")
    record.add_argument("--chain", help="a saved chain file to run on the recording as it arrives")
    record.set_defaults(func=run_record)


def _board(chain: str | None, effects: list[str]) -> Any:
    if not chain and not effects:
        return None
    from .grammar import GrammarError, parse_effects

    board = None
    if chain:
        from ..chains import load_chain

        board = load_chain(chain)
    try:
        return parse_effects(effects, board) if effects else board
    except GrammarError as error:
        raise CLIError(str(error), status=2) from error


def run_play(args: argparse.Namespace) -> int:
    from ..io.stream import play_file

    play_file(args.file, _board(args.chain, args.effects), args.device)
    return 0


def run_record(args: argparse.Namespace) -> int:
    if args.seconds <= 0:
        raise CLIError("--seconds must be positive", status=2)
    from ..io.stream import record_to_file

    frames = record_to_file(
        args.out,
        args.seconds,
        args.device,
        sample_rate=args.rate,
        num_channels=args.channels,
        plugins=_board(args.chain, []),
    )
    print(f"recorded {frames} frames to {args.out}")
    return 0
