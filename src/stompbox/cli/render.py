"""``stompbox render IN OUT [EFFECT [PARAM=VALUE ...]] ...``: stream a file through a chain of effects.

Effects come after the output, in order, written as in Python (see :mod:`stompbox.cli.grammar`)::

    stompbox render in.wav out.flac distortion drive_db=25 delay delay_seconds=0.4 reverb room_size=0.75
    stompbox render in.wav out.wav --chain chain.yaml gain gain_db=-3 --tail 4
    cat in.flac | stompbox render - - highpassfilter cutoff_frequency_hz=80 --format flac > out.flac

The file is processed as a stream in constant memory; the output has exactly the input's length (latency is
compensated) plus ``--tail`` seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import textwrap
from typing import Any

from .common import CHANNELS_HELP, CLIError, conform, open_reader
from .convert import _positive_int, _positive_rate
from .grammar import GrammarError, parse_effects

_EPILOG = """\
effects: any built-in (see `stompbox effects`), case-insensitive, each followed by its PARAM=VALUE settings;
  enum values by name (ladderfilter mode=HPF24), booleans as true/false.
examples:
  stompbox render in.wav out.flac distortion drive_db=25 delay delay_seconds=0.4 reverb room_size=0.75
  stompbox render in.wav out.wav --chain chain.json gain gain_db=-3 --tail auto --save-chain all.json
  stompbox render - - lowpassfilter cutoff_frequency_hz=2000 --format flac < in.wav > out.flac
exit status: 0 ok; 1 error (bad file, failed write); 2 usage (bad option, unknown effect/parameter, bad value)
"""

#: magic bytes at the start of a file -> extension, to name a spooled stdin so the reader can pick a decoder
_MAGIC = [
    (0, b"RIFF", ".wav"),
    (0, b"RF64", ".wav"),
    (0, b"fLaC", ".flac"),
    (0, b"OggS", ".ogg"),
    (0, b"FORM", ".aiff"),
    (0, b"caff", ".caf"),
    (0, b"ID3", ".mp3"),
    (4, b"ftyp", ".m4a"),
]


class _IntermixedParser(argparse.ArgumentParser):
    """A parser taking options anywhere among the positionals (``render a b distortion --tail 2 delay``)."""

    _inside = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._inside:
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


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


def register(sub: Any) -> None:
    p = add_intermixed_parser(
        sub,
        "render",
        help="stream a file through effects: render IN OUT [EFFECT [PARAM=VALUE ...]] ...",
        usage="stompbox render [options] IN OUT [EFFECT [PARAM=VALUE ...]] ...",
        description=textwrap.fill(
            "Render IN through a chain of effects into OUT (format from OUT's extension), as a stream in "
            "constant memory. IN or OUT may be '-' for standard input/output. The chain is --chain FILE's "
            "effects, then those on the command line. The output has the input's exact length (latency is "
            "compensated), plus --tail seconds; --samplerate/--channels convert the input before the "
            "effects.",
            width=100,
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("tokens", nargs="+", metavar="IN OUT [EFFECT [PARAM=VALUE ...]]", help=argparse.SUPPRESS)
    add_chain_options(p)
    p.add_argument(
        "--tail",
        type=tail_value,
        default=0.0,
        metavar="SECONDS",
        help="seconds rendered after the input so effects ring out ('auto': until silent, <= 60 s)",
    )
    p.add_argument("--samplerate", "-r", type=_positive_rate, metavar="R", help="output sample rate in Hz")
    p.add_argument("--channels", "-c", type=_positive_int, metavar="N", help=CHANNELS_HELP)
    p.add_argument(
        "--bit-depth",
        "-b",
        type=int,
        choices=(8, 16, 24, 32),
        metavar="B",
        help="output bit depth (8/16/24/32)",
    )
    p.add_argument("--quality", "-q", metavar="Q", help='encoder quality, e.g. "V2" (MP3), 0-8 (FLAC)')
    p.add_argument(
        "--format",
        "-t",
        metavar="EXT",
        help="output format when OUT is '-' (wav, flac, ogg, mp3, ...; default wav)",
    )
    p.add_argument("--input-format", metavar="EXT", help="format of standard input when IN is '-' (default: sniffed)")
    p.add_argument("--save-chain", metavar="FILE", help="also write the assembled chain to FILE (.json/.yaml)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def add_chain_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chain", metavar="FILE", help="a saved chain (JSON/YAML); command-line effects come after it")


def build_chain(chain_file: str | None, tokens: list[str]) -> Any:
    """The Pedalboard of ``--chain FILE`` (if any) followed by the effects in ``tokens``."""
    from ..board import Pedalboard
    from ..chains import ChainFormatError, load_chain

    board = Pedalboard()
    if chain_file:
        if not os.path.isfile(chain_file):
            raise CLIError(f"{chain_file}: no such chain file")
        try:
            loaded = load_chain(chain_file)
        except (ChainFormatError, ValueError, TypeError, OSError) as error:
            raise CLIError(f"{chain_file}: {' '.join(str(error).split())}") from error
        if type(loaded) is Pedalboard:
            board = loaded
        else:
            board.append(loaded)
    try:
        return parse_effects(tokens, board)
    except GrammarError as error:
        raise CLIError(str(error), status=2) from error


def _sniff(head: bytes) -> str:
    for offset, magic, ext in _MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return ext
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        return ".mp3"
    return ".wav"


def spool_stdin(folder: str, input_format: str | None) -> str:
    """Copy standard input into a file in ``folder`` (in chunks) and return its path."""
    stream = sys.stdin.buffer
    head = stream.read(64)
    if not head:
        raise CLIError("standard input is empty")
    ext = "." + input_format.lstrip(".").lower() if input_format else _sniff(head)
    path = os.path.join(folder, "stdin" + ext)
    with open(path, "wb") as spool:
        spool.write(head)
        shutil.copyfileobj(stream, spool, 1 << 20)
    return path


def run(args: argparse.Namespace) -> int:
    from ..batch import default_bit_depth, stream_through
    from ..io import AudioFile
    from ..io.write_behind import behind

    if len(args.tokens) < 2:
        raise CLIError("render needs IN and OUT (then optional effects)", status=2)
    in_path, out_path, effect_tokens = args.tokens[0], args.tokens[1], list(args.tokens[2:])
    if in_path != "-" and out_path != "-" and os.path.abspath(in_path) == os.path.abspath(out_path):
        raise CLIError("IN and OUT are the same file", status=2)
    board = build_chain(args.chain, effect_tokens)
    if args.save_chain:
        try:
            board.save(args.save_chain)
        except OSError as error:
            raise CLIError(f"{args.save_chain}: {error.strerror or error}") from error

    with tempfile.TemporaryDirectory(prefix="stompbox-render-") as scratch:
        source_path = spool_stdin(scratch, args.input_format) if in_path == "-" else in_path
        if out_path == "-":
            fmt = (args.format or "wav").lstrip(".").lower()
            target = os.path.join(scratch, "stdout." + fmt)
        else:
            target = out_path
            parent = os.path.dirname(os.path.abspath(out_path))
            if not os.path.isdir(parent):
                raise CLIError(f"{out_path}: folder {parent} does not exist")
        with open_reader(source_path) as source:
            reader, rate = conform(source, target, args.samplerate, args.channels, None, args.quiet)
            tail_frames = 0 if args.tail == "auto" else int(round(float(args.tail) * rate))
            bits = args.bit_depth or default_bit_depth(source.file_dtype, target)
            bar = None
            if not args.quiet and sys.stderr.isatty():
                from tqdm import tqdm

                bar = tqdm(
                    total=reader.frames,
                    unit="frames",
                    unit_scale=True,
                    desc=os.path.basename(out_path),
                    leave=False,
                )
            try:
                try:
                    out = AudioFile(target, "w", int(rate), reader.num_channels, bit_depth=bits, quality=args.quality)
                except (ValueError, TypeError, RuntimeError, OSError) as error:
                    raise CLIError(f"{out_path}: {' '.join(str(error).split())}") from error
                with out, behind(out) as write:
                    stream_through(
                        board,
                        reader,
                        write,
                        tail_frames=tail_frames,
                        tail="auto" if args.tail == "auto" else None,
                        progress=bar.update if bar else None,
                    )
            finally:
                if bar is not None:
                    bar.close()
        if out_path == "-":
            sys.stdout.flush()
            with open(target, "rb") as done:
                shutil.copyfileobj(done, sys.stdout.buffer, 1 << 20)
            sys.stdout.buffer.flush()
    return 0
