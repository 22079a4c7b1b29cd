"""``stompbox convert IN OUT``: stream a file into another format, rate, channel count or bit depth."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .common import CHANNELS_HELP, ArraySource, CLIError, conform, open_reader, show_progress

_CHUNK = 1 << 15  # frames per block (libvorbis is only safe with writes of <= 64k frames)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "convert",
        help="convert an audio file (format from OUT's extension), streaming",
        usage="stompbox convert [options] IN OUT\n       stompbox convert [options] --example OUT",
        description=(
            "Convert IN to OUT as a stream, in constant memory: the format comes from OUT's extension; "
            "--samplerate resamples, --channels mixes down or up (surround downmixed as FFmpeg does). "
            "With --example, IN is omitted and stompbox's own synthesised example clip is converted."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="input file and output file (OUT alone with --example)")
    p.add_argument("--example", action="store_true", help="convert the built-in synthesised example clip")
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
    p.add_argument(
        "--quality",
        "-q",
        metavar="Q",
        help='encoder quality, e.g. "V2" or "192 kbps" (MP3), 0-8 (FLAC), "128" (OGG)',
    )
    p.add_argument(
        "--resample-quality",
        default="WindowedSinc32",
        metavar="NAME",
        help="resampling quality: ZeroOrderHold ... WindowedSinc8 (default WindowedSinc32)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _positive_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"sample rate must be > 0 Hz (got {text})")
    return int(value) if value.is_integer() else value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {text})")
    return value


def run(args: argparse.Namespace) -> int:
    from ..batch import default_bit_depth
    from ..io.quality import coerce_quality

    if args.example:
        if len(args.paths) != 1:
            raise CLIError("with --example, give only OUT (the example clip is the input)", status=2)
        in_path, out_path = None, args.paths[0]
    else:
        if len(args.paths) != 2:
            raise CLIError("convert needs IN and OUT (or --example OUT)", status=2)
        in_path, out_path = args.paths
        if os.path.abspath(in_path) == os.path.abspath(out_path):
            raise CLIError("IN and OUT are the same file", status=2)
    try:
        quality = coerce_quality(args.resample_quality)
    except (ValueError, TypeError) as error:
        raise CLIError(str(error), status=2) from error

    if in_path is None:
        from ..examples import example_clip

        source: Any = ArraySource(example_clip(44100, 8.0), 44100, name="example")
    else:
        source = open_reader(in_path)
    with source:
        reader, rate = conform(source, out_path, args.samplerate, args.channels, quality, args.quiet)
        bit_depth = args.bit_depth or default_bit_depth(source.file_dtype, out_path)
        _write(reader, out_path, rate, bit_depth, args.quality, args.quiet)
    return 0


def _write(reader: Any, out_path: str, rate: int, bit_depth: int, quality: str | None, quiet: bool) -> None:
    from ..io import AudioFile
    from ..io.write_behind import behind

    parent = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(parent):
        raise CLIError(f"{out_path}: folder {parent} does not exist")
    try:
        out = AudioFile(out_path, "w", rate, reader.num_channels, bit_depth=bit_depth, quality=quality)
    except (ValueError, TypeError, RuntimeError, OSError) as error:
        raise CLIError(f"{out_path}: {' '.join(str(error).split())}") from error
    bar = None
    if show_progress(quiet, reader.duration):
        from tqdm import tqdm

        bar = tqdm(total=reader.frames, unit="frames", unit_scale=True, desc=os.path.basename(out_path), leave=False)
    try:
        with out, behind(out) as write:  # a compressed output is encoded while the next block is decoded
            while True:
                block = reader.read(_CHUNK)
                if block.shape[1] == 0:
                    break
                write(block)
                if bar is not None:
                    bar.update(block.shape[1])
    finally:
        if bar is not None:
            bar.close()
