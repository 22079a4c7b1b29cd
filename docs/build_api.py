"""Build ``docs/api.md``, the API reference, from the docstrings of stompbox's public modules.

Run ``python docs/build_api.py`` after changing a public docstring or signature; tests/test_docs.py rebuilds the
reference and fails when the committed file differs, so it cannot fall behind the code.

For each public module (its ``__all__``): classes with their constructor signature, docstring, parameter table
(plugins: default, range and unit of each parameter) and the public methods and properties they define
themselves; functions with their signature and docstring. Object addresses in default values are removed so the
output is the same on every run.
"""

from __future__ import annotations

import enum
import inspect
import re
import sys
from pathlib import Path
from typing import Any

#: the modules documented, in order: (module, one-line description)
MODULES = [
    ("stompbox", "effects, boards, rendering, hosted plugins, chains"),
    ("stompbox.io", "audio files as streams, resampling, live audio"),
    ("stompbox.batch", "many files through one chain"),
    ("stompbox.analysis", "loudness (ITU-R BS.1770-4 / EBU R128)"),
    ("stompbox.compat", "pedalboard's module names and version, for pedalboard code run unchanged"),
    ("stompbox.limits", "the limits on sample rates, ratios, channels, tails, nesting and chain files"),
]

OUTPUT = Path(__file__).resolve().parent / "api.md"


def public_names() -> dict[str, list[str]]:
    """Each documented module's public names (its ``__all__``, without submodules)."""
    import importlib

    names = {}
    for module_name, _ in MODULES:
        module = importlib.import_module(module_name)
        names[module_name] = [
            n for n in module.__all__ if not inspect.ismodule(_resolve(module, n)) and n not in ("version",)
        ]
    return names


def _resolve(module: Any, name: str) -> Any:
    """``module.name``; a callable submodule standing for its function of the same name (``stompbox.render``,
    once ``stompbox.render`` the module has been imported) is that function."""
    value = getattr(module, name)
    if inspect.ismodule(value) and callable(value) and hasattr(value, name):
        return getattr(value, name)
    return value


def _clean(text: str) -> str:
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


def _signature(obj: Any) -> str:
    try:
        return _clean(str(inspect.signature(obj)))
    except (TypeError, ValueError):
        return "(...)"


def _doc(obj: Any) -> str:
    doc = inspect.getdoc(obj)
    return _markdown(_clean(doc.strip())) if doc else "(undocumented)"


def _markdown(doc: str) -> str:
    """A NumPy-style docstring as Markdown: section titles in bold, ``name : type`` entries as list items with
    their indented descriptions, example sessions (``>>>``) as code."""
    lines = doc.split("\n")
    out: list[str] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        underline = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and set(underline.strip()) == {"-"} and len(underline.strip()) == len(line.strip()):
            section = line.strip()
            if out and out[-1] != "":
                out.append("")
            out += [f"**{section}**", ""]
            i += 2
            continue
        if section in ("Parameters", "Returns", "Yields", "Raises", "Attributes", "Other Parameters"):
            if line and not line.startswith(" ") and not re.fullmatch(r"[\w*, ]+( : .*)?", line):
                section = ""  # prose after the entries
                out += ["", line]
            elif line and not line.startswith(" "):
                name, _, kind = line.partition(" : ")
                out.append(f"- `{name.strip()}`" + (f" : {kind.strip()}" if kind else ""))
            elif line.strip():
                out.append("  " + line.strip())
            else:
                out.append("")
        elif line.lstrip().startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["```python", *block, "```"]
            continue
        else:
            out.append(line)
        i += 1
    return "\n".join(out).strip()


def _first_paragraph(obj: Any) -> str:
    return _doc(obj).split("\n\n")[0].replace("\n", " ")


def _own_members(cls: type) -> list[tuple[str, Any]]:
    """Public methods and properties defined by ``cls`` itself (not inherited)."""
    members = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, property) or inspect.isfunction(value):
            members.append((name, value))
        elif isinstance(value, classmethod | staticmethod):
            members.append((name, value.__func__))
    return members


def _parameter_table(cls: type) -> list[str]:
    specs = getattr(cls, "parameter_specs", None)
    if specs is None or not callable(specs):
        return []
    try:
        table = specs()
    except Exception:  # noqa: BLE001 - a class whose parameters are only known per instance (hosted plugins)
        return []
    if not table:
        return []
    lines = ["", "| parameter | default | range | unit | description |", "|---|---|---|---|---|"]
    for name, spec in table.items():
        default = spec.default.name if isinstance(spec.default, enum.Enum) else spec.default
        low = "" if spec.minimum is None else f"{spec.minimum:g}"
        high = "" if spec.maximum is None else f"{spec.maximum:g}"
        span = f"{low} to {high}" if (low and high) else f">= {low}" if low else f"<= {high}" if high else ""
        if isinstance(spec.kind, type) and issubclass(spec.kind, enum.Enum):
            span = ", ".join(member.name for member in spec.kind)
        description = (spec.doc or "").replace("|", "\\|")
        lines.append(f"| `{name}` | `{default}` | {span} | {spec.unit or ''} | {description} |")
    return lines


def _class_section(module_name: str, name: str, cls: type) -> list[str]:
    kind = "enum" if issubclass(cls, enum.Enum) else "exception" if issubclass(cls, BaseException) else "class"
    lines = [f"### `{module_name}.{name}`", "", f"*{kind}* `{name}{_signature(cls)}`", "", _doc(cls)]
    if issubclass(cls, enum.Enum):
        lines += ["", "Members: " + ", ".join(f"`{m.name}`" for m in cls)]
        return lines + [""]
    lines += _parameter_table(cls)
    members = _own_members(cls)
    if members:
        lines += ["", "Members:", ""]
        for member_name, member in members:
            if isinstance(member, property):
                lines.append(f"- `{member_name}` (property): {_first_paragraph(member)}")
            else:
                lines.append(f"- `{member_name}{_signature(member)}`: {_first_paragraph(member)}")
    return lines + [""]


def _function_section(module_name: str, name: str, fn: Any) -> list[str]:
    return [f"### `{module_name}.{name}`", "", f"*function* `{name}{_signature(fn)}`", "", _doc(fn), ""]


def build() -> str:
    """The whole reference as Markdown."""
    import importlib

    lines = [
        "# API reference",
        "",
        "Generated from the docstrings by `python docs/build_api.py` (tests/test_docs.py checks it is current).",
        "The user guide is in [guide/](index.md).",
        "",
    ]
    for module_name, description in MODULES:
        lines += [f"- [`{module_name}`](#{module_name.replace('.', '')}): {description}"]
    lines.append("")
    for (module_name, description), names in zip(MODULES, public_names().values(), strict=True):
        module = importlib.import_module(module_name)
        lines += [f"## {module_name}", "", description[0].upper() + description[1:] + ".", ""]
        for name in sorted(names, key=str.lower):
            obj = _resolve(module, name)
            if inspect.isclass(obj):
                lines += _class_section(module_name, name, obj)
            elif callable(obj):
                lines += _function_section(module_name, name, obj)
            else:
                value = sorted(obj) if isinstance(obj, set | frozenset) else obj  # sets: a stable order
                lines += [f"### `{module_name}.{name}`", "", f"*constant* `{name} = {_clean(repr(value))}`", ""]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).rstrip() + "\n"


def main() -> int:
    OUTPUT.write_text(build())
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
