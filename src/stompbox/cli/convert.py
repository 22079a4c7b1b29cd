"""``stompbox convert IN OUT``: stream a file into another format, rate, channel count or bit depth."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .common import (
    STDIO,
    CLIError,
    add_common_options,
    add_input_options,
    add_output_options,
    conform,
    describe,
    open_input,
    open_output,
    output_type,
    positive_int,
    positive_rate,
    show_progress,
)

_CHUNK = 1 << 15  # frames per block (libvorbis is only safe with writes of <= 64k frames)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "convert",
        help="convert an audio file (format from OUT's extension), streaming",
        usage="stompbox convert [options] IN OUT\n       stompbox convert [options] --example OUT",
        description=(
            "Convert IN to OUT as a stream, in constant memory: the format comes from OUT's extension (or -t); "
            "-r resamples, -c mixes down or up (surround downmixed as FFmpeg does). IN or OUT may be '-' for standard "
            "input/output, streamed. "
            "With --example, IN is omitted and stompbox's own synthesised example clip is converted."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="input file and output file (OUT alone with --example)")
    p.add_argument("--example", action="store_true", help="convert the built-in synthesised example clip")
    add_output_options(p)
    p.add_argument(
        "--resample-quality",
        default="WindowedSinc32",
        metavar="NAME",
        help="resampling quality: ZeroOrderHold ... WindowedSinc8 (default WindowedSinc32)",
    )
    add_input_options(p)
    add_common_options(p)
    p.set_defaults(func=run)


_positive_rate = positive_rate  # older names, imported by other modules
_positive_int = positive_int


def run(args: argparse.Namespace) -> int:
    from ..io.quality import coerce_quality

    if args.example:
        if len(args.paths) != 1:
            raise CLIError("with --example, give only OUT (the example clip is the input)", status=2)
        in_path, out_path = None, args.paths[0]
    else:
        if len(args.paths) != 2:
            raise CLIError("convert needs IN and OUT (or --example OUT)", status=2)
        in_path, out_path = args.paths
        if STDIO not in (in_path, out_path) and os.path.abspath(in_path) == os.path.abspath(out_path):
            raise CLIError("IN and OUT are the same file", status=2)
    try:
        quality = coerce_quality(args.resample_quality)
    except (ValueError, TypeError) as error:
        raise CLIError(str(error), status=2) from error

    if in_path is None:
        from ..examples import example_clip
        from .array_source import ArraySource

        source: Any = ArraySource(example_clip(44100, 8.0), 44100, name="example")
    else:
        source = open_input(in_path, args)
    shape = f"{out_path}.{output_type(out_path, args)}"  # the output's format, as conform() and the policy read it
    with source:
        reader, rate = conform(source, shape, args.rate, args.channels, quality, args.quiet)
        out = open_output(out_path, args, rate, reader.num_channels, args.bits, args.quality, source)
        describe(args, in_path or "example", source, out_path, out)
        _write(reader, out, out_path, args.quiet)
    return 0


def _write(reader: Any, out: Any, out_path: str, quiet: bool) -> None:
    from ..io.write_behind import behind

    bar = None
    if reader.frames and show_progress(quiet, reader.duration):
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
