"""``stompbox render IN OUT [EFFECT [PARAM=VALUE ...]] ...``: stream a file through a chain of effects.

Effects come after the output, in order, written as in Python (see :mod:`stompbox.cli.grammar`)::

    stompbox render in.wav out.flac distortion drive_db=25 delay delay_seconds=0.4 reverb room_size=0.75
    stompbox render in.wav out.wav --chain chain.yaml gain gain_db=-3 --tail 4
    cat in.flac | stompbox render - - highpassfilter cutoff_frequency_hz=80 -t flac > out.flac
    sox -n -t wav - synth 10 sine 440 | stompbox render - - gain gain_db=-3 | aplay

The file is processed as a stream in constant memory; the output has exactly the input's length (latency is
compensated) plus ``--tail`` seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import Any

from .common import (
    STDIO,
    CLIError,
    IntermixedParser,
    add_common_options,
    add_input_options,
    add_output_options,
    conform,
    describe,
    open_input,
    open_output,
    output_type,
)
from .grammar import GrammarError, check_names, parse_effects

_EPILOG = """\
effects: any built-in (see `stompbox effects`), case-insensitive, each followed by its PARAM=VALUE settings;
  enum values by name (ladderfilter mode=HPF24), booleans as true/false.
examples:
  stompbox render in.wav out.flac distortion drive_db=25 delay delay_seconds=0.4 reverb room_size=0.75
  stompbox render in.wav out.wav --chain chain.json gain gain_db=-3 --tail auto --save-chain all.json
  stompbox render - - lowpassfilter cutoff_frequency_hz=2000 -t flac < in.wav > out.flac
  stompbox render - - --input-type raw -r 48000 -c 2 -b 16 gain gain_db=-6 -t raw < in.raw > out.raw
exit status: 0 ok; 1 error (bad file, failed write); 2 usage (bad option, unknown effect/parameter, bad value)
"""


_IntermixedParser = IntermixedParser


def add_intermixed_parser(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """``sub.add_parser(name, ...)`` whose options may come between positionals."""
    original = sub._parser_class
    sub._parser_class = _IntermixedParser
    try:
        return sub.add_parser(name, **kwargs)  # type: ignore[no-any-return]
    finally:
        sub._parser_class = original


def tail_value(text: str) -> float | str:
    """``--tail``: seconds >= 0, or ``auto`` (until the output falls below -80 dBFS, at most 60 s)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds or 'auto' (got {text!r})") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0 (got {text})")
    return value


def add_tail_options(p: argparse.ArgumentParser, help: str) -> None:
    """``--tail`` and ``--max-tail``, checked together by :func:`check_tail_options`."""
    from ..limits import BATCH_MAX_TAIL_SECONDS

    p.add_argument("--tail", type=tail_value, default=0.0, metavar="SECONDS", help=help)
    p.add_argument(
        "--max-tail",
        type=tail_value,
        default=BATCH_MAX_TAIL_SECONDS,
        metavar="SECONDS",
        help=f"the longest tail, given or 'auto' (default {BATCH_MAX_TAIL_SECONDS:g}); raise it for a longer --tail",
    )


def check_tail_options(args: argparse.Namespace) -> None:
    """A ``--tail`` longer than ``--max-tail`` is an error before any file is opened (``--tail 1e6`` once wrote
    38 GB)."""
    from ..limits import LimitError, check_tail

    if args.max_tail == "auto":
        raise CLIError("--max-tail must be a number of seconds", status=2)
    try:
        check_tail(0.0 if args.tail == "auto" else float(args.tail), float(args.max_tail), "--tail")
    except LimitError as error:
        raise CLIError(str(error).replace("max_tail_seconds", "--max-tail"), status=2) from None


def register(sub: Any) -> None:
    p = add_intermixed_parser(
        sub,
        "render",
        help="stream a file through effects: render IN OUT [EFFECT [PARAM=VALUE ...]] ...",
        usage="stompbox render [options] IN OUT [EFFECT [PARAM=VALUE ...]] ...",
        description=textwrap.fill(
            "Render IN through a chain of effects into OUT (format from OUT's extension), as a stream in "
            "constant memory. IN or OUT may be '-' for standard input/output, streamed (output starts at "
            "once). The chain is --chain FILE's effects, then those on the command line. The output has the "
            "input's exact length (latency is compensated), plus --tail seconds; -r/--rate and -c/--channels "
            "convert the input before the effects.",
            width=100,
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("tokens", nargs="+", metavar="IN OUT [EFFECT [PARAM=VALUE ...]]", help=argparse.SUPPRESS)
    add_chain_options(p)
    add_tail_options(p, "seconds rendered after the input so effects ring out ('auto': until silent)")
    add_output_options(p)
    add_input_options(p)
    p.add_argument("--save-chain", metavar="FILE", help="also write the assembled chain to FILE (.json/.yaml)")
    add_common_options(p)
    p.set_defaults(func=run)


def add_chain_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chain", metavar="FILE", help="a saved chain (JSON/YAML); command-line effects come after it")


def build_chain(chain_file: str | None, tokens: list[str], quiet: bool = False) -> Any:
    """The Pedalboard of ``--chain FILE`` (if any) followed by the effects in ``tokens`` (a value given by
    position, SoX's way, is taken with a note on stderr that spells it PARAM=VALUE, unless ``quiet``)."""
    from ..board import Pedalboard
    from ..chains import ChainFormatError, load_chain

    board = Pedalboard()
    if chain_file:
        if not os.path.isfile(chain_file):
            raise CLIError(f"{chain_file}: no such chain file")
        try:
            loaded = load_chain(chain_file)
        except UnicodeDecodeError:
            raise CLIError(f"{chain_file}: not a chain file (a chain is JSON or YAML text)", status=2) from None
        except (ChainFormatError, ValueError, TypeError, OSError) as error:
            raise CLIError(f"{chain_file}: {' '.join(str(error).split())}") from error
        if type(loaded) is Pedalboard:
            board = loaded
        else:
            board.append(loaded)
    notes: list[str] = []
    try:
        board = parse_effects(tokens, board, notes)
    except GrammarError as error:
        raise CLIError(str(error), status=2) from error
    if not quiet:
        for note in notes:
            print(f"stompbox: note: {note}", file=sys.stderr)
    return board


def run(args: argparse.Namespace) -> int:
    if len(args.tokens) < 2:
        raise CLIError("render needs IN and OUT (then optional effects)", status=2)
    in_path, out_path, effect_tokens = args.tokens[0], args.tokens[1], list(args.tokens[2:])
    if in_path != STDIO and out_path != STDIO and os.path.abspath(in_path) == os.path.abspath(out_path):
        raise CLIError("IN and OUT are the same file", status=2)
    check_tail_options(args)
    # Compiled effects load Numba (a few hundred ms): a pipe's reader gets the output's header first, as SoX's
    # first byte comes at once. A file is only created once the chain is known to be valid.
    try:
        check_names(effect_tokens)  # a misspelt effect is a usage error before anything is read or written
    except GrammarError as error:
        raise CLIError(str(error), status=2) from error
    kind = output_type(out_path, args)
    shape = f"{out_path}.{kind}"  # the output's format, as conform() and the bit-depth policy read it
    with open_input(in_path, args) as source:
        reader, rate = conform(source, shape, args.rate, args.channels, None, args.quiet)
        tail_frames = 0 if args.tail == "auto" else int(round(float(args.tail) * rate))
        if out_path != STDIO:
            board = build_chain(args.chain, effect_tokens, args.quiet)  # a usage error leaves no file behind
        out = open_output(out_path, args, rate, reader.num_channels, args.bits, args.quality, source)
        with out:
            if out_path == STDIO:
                _push(out)
                board = build_chain(args.chain, effect_tokens, args.quiet)
            if args.save_chain:
                try:
                    board.save(args.save_chain)
                except OSError as error:
                    raise CLIError(f"{args.save_chain}: {error.strerror or error}") from error
            describe(args, in_path, source, out_path, out)
            _stream(args, board, reader, out, out_path, tail_frames)
    return 0


def _push(out: Any) -> None:
    """Send what the writer has made so far (a header) down the pipe now."""
    try:
        out.flush()
    except Exception:  # noqa: BLE001 - a writer that cannot flush yet: its bytes go with the first block
        pass
    try:
        sys.stdout.buffer.flush()
    except ValueError:
        pass


def _stream(args: argparse.Namespace, board: Any, reader: Any, out: Any, out_path: str, tail_frames: int) -> None:
    from ..batch import stream_through
    from ..io.write_behind import behind

    bar = None
    if not args.quiet and sys.stderr.isatty() and reader.frames:
        from tqdm import tqdm

        name = "-" if out_path == STDIO else os.path.basename(out_path)
        bar = tqdm(total=reader.frames, unit="frames", unit_scale=True, desc=name, leave=False)
    try:
        with behind(out) as write:
            stream_through(
                board,
                reader,
                write,
                tail_frames=tail_frames,
                tail="auto" if args.tail == "auto" else None,
                max_tail_seconds=float(args.max_tail),
                progress=bar.update if bar else None,
            )
    finally:
        if bar is not None:
            bar.close()
