"""``stompbox effects [NAME ...]``: every built-in effect with its parameters, defaults, ranges, units and
automation, read from the public spec (:meth:`Plugin.parameter_specs`) and the registry."""

from __future__ import annotations

import argparse
import enum
import inspect
import json
import math
from typing import Any

from .common import CLIError, add_common_options
from .grammar import GrammarError, _constructor_extras, builtin_effects, find_effect

_EXTRA_DOCS = {
    "impulse_response_filename": "impulse response: an audio file (WAV, FLAC, ...)",
    "ir_resampling": "how an impulse response at another rate is resampled: pedalboard (as pedalboard) or soxr",
    "sample_rate": "sample rate of an impulse response given as an array, in Hz (Python only)",
}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "effects",
        help="list the built-in effects with their parameters, defaults, ranges and units",
        description=(
            "List the built-in effects and their parameters as `stompbox render` and Python take them "
            "(EFFECT PARAM=VALUE ...). Give effect names to show only those."
        ),
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="effects to show (default: all)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_common_options(p)
    p.set_defaults(func=run)


def _json_value(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plain(text: str) -> str:
    """reST inline markup as plain text: ``code`` and :role:`target` lose their marks."""
    import re

    text = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    return text.replace("``", "")


def _summary(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    return _plain(doc.strip().split("\n\n")[0].replace("\n", " "))


def describe_effects(names: list[str] | None = None) -> list[dict[str, Any]]:
    """What ``stompbox effects --json`` prints: one dict per effect with its parameters."""
    classes = [find_effect(n) for n in names] if names else list(builtin_effects().values())
    entries = []
    for cls in classes:
        params = []
        for spec in cls.parameter_specs().values():
            kind = spec.kind
            entry: dict[str, Any] = {
                "name": spec.name,
                "type": kind.__name__ if not issubclass(kind, enum.Enum) else "enum",
                "default": _json_value(spec.default),
                "minimum": spec.minimum,
                "maximum": spec.maximum,
                "range": spec.range,
                "unit": spec.unit,
                "automation": spec.automation,
                "doc": _plain(spec.doc or ""),
            }
            if issubclass(kind, enum.Enum):
                entry["choices"] = list(kind.__members__)
            params.append(entry)
        for name, arg in _constructor_extras(cls).items():
            required = arg.default is inspect.Parameter.empty
            annotation = arg.annotation if isinstance(arg.annotation, str) else getattr(arg.annotation, "__name__", "")
            params.append(
                {
                    "name": name,
                    "type": "path" if "str" in str(annotation) else "float",
                    "default": None if required else _json_value(arg.default),
                    "required": required,
                    "minimum": None,
                    "maximum": None,
                    "range": None,
                    "unit": "",
                    "automation": "",
                    "doc": _EXTRA_DOCS.get(name, "constructor argument"),
                }
            )
        entries.append({"name": cls.__name__, "summary": _summary(cls), "parameters": params})
    return entries


def _format_default(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def _text(entries: list[dict[str, Any]]) -> str:
    blocks = []
    for effect in entries:
        lines = [f"{effect['name']}: {effect['summary']}" if effect["summary"] else effect["name"]]
        if not effect["parameters"]:
            lines.append("    (no parameters)")
        rows = []
        for p in effect["parameters"]:
            setting = f"{p['name']}=" + ("..." if p.get("required") else _format_default(p["default"]))
            if p.get("required"):
                valid = "required"
            elif p.get("choices"):
                valid = "|".join(p["choices"])
            elif p["range"]:
                valid = p["range"]
            elif p["type"] == "bool":
                valid = "true|false"
            else:
                valid = p["unit"]
            doc = f"{p['doc']} (automatable {p['automation']})" if p.get("automation") else p["doc"]
            rows.append((setting, valid, doc))
        width = max((len(r[0]) for r in rows), default=0)
        span = max((len(r[1]) for r in rows if len(r[1]) <= 24), default=0)
        for setting, valid, doc in rows:
            lines.append(f"    {setting:<{width}}  {valid:<{span}}  {doc}".rstrip())
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    try:
        entries = describe_effects(args.names)
    except GrammarError as error:
        raise CLIError(str(error), status=2) from error
    print(json.dumps(entries, indent=2) if args.json else _text(entries))
    return 0
