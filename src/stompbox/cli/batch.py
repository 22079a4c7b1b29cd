"""``stompbox batch IN_DIR OUT_DIR --chain FILE --jobs N``: render the audio files of a folder in parallel."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .common import CLIError, add_common_options, add_output_options, output_defaults, positive_int
from .render import add_intermixed_parser, add_tail_options, build_chain, check_tail_options


def register(sub: Any) -> None:
    p = add_intermixed_parser(
        sub,
        "batch",
        help="render every audio file under a folder through a chain, in parallel",
        usage="stompbox batch [options] IN_DIR OUT_DIR [--chain FILE] [EFFECT [PARAM=VALUE ...]] ...",
        description=(
            "Render every audio file under IN_DIR (recursively) through the chain (--chain FILE, then any "
            "effects given as for render) into the same relative path under OUT_DIR. Files are processed in "
            "parallel (--jobs processes); outputs are written atomically; a failing file is reported and the "
            "others go on (exit status 1 if any failed)."
        ),
    )
    p.add_argument("tokens", nargs="+", metavar="IN_DIR OUT_DIR [EFFECT ...]", help=argparse.SUPPRESS)
    p.add_argument("--chain", metavar="FILE", help="a saved chain (JSON/YAML)")
    p.add_argument(
        "--jobs", "-j", type=positive_int, default=None, metavar="N", help="worker processes (default: CPUs)"
    )
    p.add_argument(
        "--threads",
        action="store_true",
        help="use threads instead of processes (the DSP kernels release the GIL)",
    )
    p.add_argument("--skip-existing", "--resume", action="store_true", help="leave files whose output already exists")
    add_tail_options(p, "let effects ring out (seconds, or 'auto')")
    add_output_options(p, type_help="write outputs in this format (e.g. flac); default: as input")
    add_common_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import concurrent.futures

    from ..batch import find_audio_files, process_files

    if len(args.tokens) < 2:
        raise CLIError("batch needs IN_DIR and OUT_DIR", status=2)
    in_dir, out_dir, tokens = args.tokens[0], args.tokens[1], args.tokens[2:]
    if not os.path.isdir(in_dir):
        raise CLIError(f"{in_dir}: no such folder")
    if os.path.abspath(in_dir) == os.path.abspath(out_dir):
        raise CLIError("IN_DIR and OUT_DIR are the same folder", status=2)
    check_tail_options(args)
    board = build_chain(args.chain, list(tokens), args.quiet)
    if not len(board):
        raise CLIError("no effects: give --chain FILE or effects (see stompbox effects)", status=2)
    inputs = find_audio_files(in_dir)
    out_abs = os.path.abspath(out_dir)
    inputs = [p for p in inputs if not os.path.abspath(p).startswith(out_abs + os.sep)]
    if not inputs:
        raise CLIError(f"{in_dir}: no audio files found")
    tail = args.tail if args.tail == "auto" else float(args.tail)
    jobs = args.jobs or os.cpu_count() or 1
    executor = concurrent.futures.ThreadPoolExecutor(jobs) if args.threads and jobs > 1 else None
    try:
        report = process_files(
            inputs,
            out_dir,
            board,
            executor,
            jobs=jobs,
            root=in_dir,
            extension=args.type,
            skip_existing=args.skip_existing,
            progress=not args.quiet and sys.stderr.isatty(),
            tail=tail,
            max_tail_seconds=float(args.max_tail),
            samplerate=args.rate,
            num_channels=args.channels,
            bit_depth=args.bits,
            quality=args.quality,
            keep_tags=not args.no_tags,
            output_defaults=output_defaults,  # FFmpeg's bit depths and bitrates, as convert and render write
        )
    finally:
        if executor is not None:
            executor.shutdown()
    for result in report.failed:
        print(f"stompbox: error: {result.input}: {result.error}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    return 1 if report.failed else 0
