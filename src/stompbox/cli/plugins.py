"""``stompbox plugins [--json]``: third-party plugins found in the standard folders."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import add_common_options


def register(sub: Any) -> None:
    p = sub.add_parser("plugins", help="list hosted plugins (VST3, LV2, LADSPA) found on this system")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_common_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..hosting import find_plugins

    found = [str(p) for p in find_plugins()]
    if args.json:
        print(json.dumps(found, indent=2))
    else:
        for path in found:
            print(path)
        if not found:
            print("no plugins found (searched ~/.vst3, /usr/lib/vst3, /usr/local/lib/vst3)")
    return 0
