"""``stompbox loudness FILE... [--json]``: EBU R128 / ITU-R BS.1770-4 loudness of files of any length.

``--json`` prints what ``stompbox info --json`` prints: a list with one object per FILE, in the order given (a
file named twice appears twice), each with its ``"path"``; a file that could not be measured has ``"error"``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import CLIError, add_common_options, add_reader_options, open_input, show_progress


def register(sub: Any) -> None:
    p = sub.add_parser(
        "loudness",
        help="integrated/short-term/momentary loudness, loudness range and true peak (EBU R128)",
        description="Measure files as a stream (any length, bounded memory); '-' reads standard input.",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print a JSON list of objects (one per FILE) instead of text")
    add_reader_options(p)
    add_common_options(p)
    p.set_defaults(func=run)


def measure(path: str, args: argparse.Namespace) -> dict[str, Any]:
    """The JSON record of one file: ``path``, the stream's shape and the loudness figures."""
    from ..analysis.loudness import measure_reader

    with open_input(path, args) as reader:
        bar = None
        if reader.frames and show_progress(args.quiet, reader.duration):
            from tqdm import tqdm

            bar = tqdm(total=reader.frames, unit="frames", unit_scale=True, desc=path, leave=False)
        try:
            result = measure_reader(reader, progress=bar.update if bar else None)
        finally:
            if bar is not None:
                bar.close()
    figures = result.to_dict()
    record: dict[str, Any] = {
        "path": path,
        "samplerate": figures.pop("sample_rate"),
        "num_channels": figures.pop("num_channels"),
        "frames": figures.pop("frames"),
        "duration": figures.pop("duration_seconds"),
    }
    record.update(figures)
    record["summary"] = result.summary()
    return record


def run(args: argparse.Namespace) -> int:
    failed = 0
    records: list[dict[str, Any]] = []
    for path in args.files:
        try:
            record = measure(path, args)
        except (CLIError, OSError, ValueError, RuntimeError) as error:
            if getattr(args, "debug", False):
                raise
            failed += 1
            message = str(error) if isinstance(error, CLIError) else f"{path}: {' '.join(str(error).split())}"
            print(f"stompbox: error: {message}", file=sys.stderr)
            records.append({"path": path, "error": message})
            continue
        summary = record.pop("summary")
        records.append(record)
        if not args.json:
            print(f"{path}\n{summary}")
    if args.json:
        print(json.dumps(records, indent=2, allow_nan=False, default=lambda v: None))
    return 1 if failed else 0
