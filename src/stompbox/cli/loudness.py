"""``stompbox loudness FILE... [--json]``: EBU R128 / ITU-R BS.1770-4 loudness of files of any length."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "loudness",
        help="integrated/short-term/momentary loudness, loudness range and true peak (EBU R128)",
        description="Measure files as a stream (any length, bounded memory).",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.loudness import loudness_of_file

    failed = 0
    results: dict[str, Any] = {}
    for path in args.files:
        try:
            result = loudness_of_file(path)
        except (OSError, ValueError) as error:
            failed += 1
            print(f"stompbox: error: {path}: {' '.join(str(error).split())}", file=sys.stderr)
            continue
        if args.json:
            results[path] = result.to_dict()
        else:
            print(f"{path}\n{result.summary()}")
    if args.json:
        print(json.dumps(results, indent=2, allow_nan=False, default=lambda v: None))
    return 1 if failed else 0
