"""Chains as data: plugins and boards to and from plain dicts, JSON and YAML files (``stompbox.chains``).

The dict form of a plugin is ``{"type": "Gain", "params": {"gain_db": 1.0}}``; a container is
``{"type": "Pedalboard", "plugins": [...]}`` (``None`` entries stay ``None``). Enum parameters are stored by
member name (``"mode": "LPF24"``). A saved file wraps the dict as ``{"stompbox_chain": 1, "chain": {...}}`` so
files can be recognised and versioned. The same file drives Python (:func:`load_chain`) and the command line.

Plugins with more than parameters (an impulse response, a hosted plugin's state) override ``to_dict`` /
``_from_dict``; everything else is handled here once.

Files a chain refers to (an impulse response, a plugin's file or bundle) are written by :func:`file_reference`:
relative to the chain file's folder when :func:`save` writes into a folder that contains them (so a folder with
its chain and its files can be moved as a whole), as absolute paths otherwise. :func:`resolve_reference` reads
them back: a relative path is relative to the folder of the chain file being loaded (to the current folder for a
dict or a text).
"""

from __future__ import annotations

import contextlib
import json
import os
import reprlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._base import limits
from .._base.atomic import atomic_path
from .._base.errors import ChainFormatError
from . import registry

if TYPE_CHECKING:
    from .plugin import Plugin

__all__ = [
    "ChainFormatError",
    "dumps",
    "file_reference",
    "from_dict",
    "load_chain",
    "loads",
    "plugin_class",
    "resolve_reference",
    "save",
    "to_dict",
]

FORMAT_VERSION = 1
MAX_DEPTH = limits.MAX_NESTING  # nesting of containers in a chain description


_SAVE_DIR: ContextVar[Path | None] = ContextVar("stompbox_chain_save_dir", default=None)
_LOAD_DIR: ContextVar[Path | None] = ContextVar("stompbox_chain_load_dir", default=None)
_DEPTH: ContextVar[int] = ContextVar("stompbox_chain_depth", default=0)  # of the from_dict call running


@contextlib.contextmanager
def _relative_to(var: ContextVar[Path | None], folder: Path) -> Iterator[None]:
    token = var.set(Path(os.path.abspath(folder)))
    try:
        yield
    finally:
        var.reset(token)


def file_reference(path: str | os.PathLike[str]) -> str:
    """How a chain description names the file ``path`` (already absolute, or relative to the current folder):
    relative to the folder of the chain file being saved when that folder contains it, else absolute."""
    absolute = Path(os.path.abspath(os.fspath(path)))
    base = _SAVE_DIR.get()
    if base is not None:
        with contextlib.suppress(ValueError):
            return absolute.relative_to(base).as_posix()
    return str(absolute)


def resolve_reference(path: str) -> str:
    """The file a chain description names: ``~`` expanded, and a relative path taken relative to the folder of
    the chain file being loaded (the current folder when loading a dict or a text)."""
    if not isinstance(path, str):
        raise TypeError(f"A file name in a chain must be a string (got {type(path).__name__}).")
    expanded = os.path.expanduser(path)
    if os.path.isabs(expanded):
        return expanded
    base = _LOAD_DIR.get()
    return str(base / expanded) if base is not None else os.path.abspath(expanded)


def plugin_class(type_name: str) -> type[Plugin]:
    """The plugin class called ``type_name`` among stompbox's public and test-support plugins (the registry's
    catalogue: containers, effects, routing, hosted plugins, pedalboard's test-support plugins)."""
    cls = registry.find(type_name) if type_name in registry.names() else None
    if cls is None:
        raise ChainFormatError(
            f"Unknown plugin type {type_name!r}: expected a stompbox effect such as 'Gain' or 'Reverb'."
        )
    return cls


def _short(data: Any) -> str:
    """A repr of at most ~80 characters that never formats all of a big (alias-expanded) object."""
    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxother = 2, 4, 4, 40, 40
    return short.repr(data)[:80]


def _expanded_size(root: Any) -> int:
    """How many values a composed YAML node becomes once its aliases are expanded (each alias is a shared
    node: counted once per place it is used, without expanding it); a node containing itself counts as more
    than any limit. Stops counting past :data:`~stompbox.limits.MAX_CHAIN_NODES`."""
    import yaml

    sizes: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[Any] = [root]
    while stack:
        node = stack[-1]
        if id(node) in sizes:
            stack.pop()
            continue
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            sizes[id(node)] = 1
            stack.pop()
            continue
        pending = [child for child in children if id(child) not in sizes]
        if pending and id(node) not in busy:
            busy.add(id(node))
            stack.extend(pending)
            continue
        if pending:  # reached again while its children are still being counted: it contains itself
            return limits.MAX_CHAIN_NODES + 1
        busy.discard(id(node))
        sizes[id(node)] = min(1 + sum(sizes[id(child)] for child in children), limits.MAX_CHAIN_NODES + 1)
        stack.pop()
    return sizes[id(root)]


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing a document whose aliases expand past the limit before building it
    (a 324-byte file of nested aliases took 40 s and 2.5 GB)."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        limits.check_chain_nodes(_expanded_size(node))
        return loader.construct_document(node)
    finally:
        loader.dispose()


def to_dict(plugin: Plugin | None) -> dict[str, Any] | None:
    """A JSON-ready description of ``plugin`` (``None`` stays ``None``); see ``Plugin.to_dict``."""
    return None if plugin is None else plugin.to_dict()


def from_dict(data: Any, _depth: int | None = None) -> Plugin | None:
    """Build plugins from :func:`to_dict`'s output (or a list of such dicts, read as a Pedalboard).

    A class with more than parameters builds itself with a ``_from_dict(data)`` classmethod (a container builds
    its children by calling this function again, which counts the nesting).
    """
    depth = _DEPTH.get() if _depth is None else _depth
    if depth > MAX_DEPTH:
        raise ChainFormatError(f"The chain is nested more than {MAX_DEPTH} containers deep.")
    if data is None:
        return None
    if isinstance(data, list):
        data = {"type": "Pedalboard", "plugins": data}
    if not isinstance(data, dict) or "type" not in data:
        raise ChainFormatError(f"A plugin description must be a dict with a 'type' key (got {_short(data)}).")
    cls = plugin_class(str(data["type"]))
    token = _DEPTH.set(depth + 1)
    try:
        return _build(cls, data)
    finally:
        _DEPTH.reset(token)


def _build(cls: type[Plugin], data: dict[str, Any]) -> Plugin:
    builder = getattr(cls, "_from_dict", None)
    if builder is not None:
        try:
            return builder(data)  # type: ignore[no-any-return]
        except ChainFormatError:
            raise
        except (TypeError, ValueError, KeyError) as exc:
            raise ChainFormatError(f"{cls.__name__}: {exc}") from exc
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ChainFormatError(f"'params' of {cls.__name__} must be a dict of parameter values.")
    specs = cls.parameter_specs()
    unknown = sorted(set(params) - set(specs))
    if unknown:
        valid = ", ".join(specs) or "none"
        raise ChainFormatError(f"{cls.__name__} has no parameter {unknown[0]!r} (valid: {valid}).")
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise ChainFormatError(f"{cls.__name__}: {exc}") from exc


def dumps(plugin: Plugin, format: str = "json") -> str:
    """The saved-file text of ``plugin`` as JSON or YAML."""
    document = {"stompbox_chain": FORMAT_VERSION, "chain": to_dict(plugin)}
    if format == "json":
        return json.dumps(document, indent=2) + "\n"
    if format in ("yaml", "yml"):
        import yaml

        return str(yaml.safe_dump(document, sort_keys=False))
    raise ValueError(f"Unknown chain file format {format!r}: use 'json' or 'yaml'.")


def loads(text: str) -> Plugin:
    """Plugins from the text of a chain file (JSON or YAML; a bare dict or list of plugins also works)."""
    limits.check_chain_bytes(len(text))  # (characters: never more than the bytes)
    try:
        document = json.loads(text)
    except RecursionError as exc:
        raise ChainFormatError("The chain file is nested too deeply.") from exc
    except json.JSONDecodeError:
        import yaml

        try:
            document = _load_yaml(text)
        except RecursionError as exc:
            raise ChainFormatError("The chain file is nested too deeply.") from exc
        except yaml.YAMLError as exc:
            raise ChainFormatError(f"Not a JSON or YAML chain file: {exc}") from exc
    if isinstance(document, dict) and "stompbox_chain" in document:
        version = document["stompbox_chain"]
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ChainFormatError(
                f"This chain file has format version {version!r}; this stompbox reads up to {FORMAT_VERSION}."
            )
        document = document.get("chain")
    plugin = from_dict(document)
    if plugin is None:
        raise ChainFormatError("The chain file describes no plugin.")
    return plugin


def _format_for(path: Path) -> str:
    return "yaml" if path.suffix.lower() in (".yaml", ".yml") else "json"


def save(plugin: Plugin, path: str | os.PathLike[str]) -> None:
    """Write ``plugin`` to ``path`` as JSON (or YAML for ``.yaml``/``.yml``), atomically. Files the chain
    refers to are named relative to the file's folder when they are inside it, by absolute path otherwise."""
    target = Path(os.fspath(path))
    with _relative_to(_SAVE_DIR, target.parent):
        text = dumps(plugin, _format_for(target))
    with atomic_path(target) as temporary, open(temporary, "w", encoding="utf-8") as out:
        out.write(text)


def load_chain(path: str | os.PathLike[str]) -> Plugin:
    """Read a chain file written by ``board.save(path)`` (or by hand) and return its plugins.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.json``, ``.yaml`` or ``.yml`` file. Relative file names in it (an impulse response, a plugin) are
        relative to the folder the file is in.

    Returns
    -------
    Plugin
        Usually a :class:`Pedalboard`.
    """
    if isinstance(path, bytes):
        raise TypeError("Chain file paths must be str or os.PathLike, not bytes.")
    source = Path(os.fspath(path))
    limits.check_chain_bytes(source.stat().st_size)
    text = source.read_text(encoding="utf-8")
    with _relative_to(_LOAD_DIR, source.parent):
        return loads(text)


def _param_schema(spec: Any) -> dict[str, Any]:
    """The JSON Schema of one declared parameter's value in a chain file."""
    kind = spec.kind
    entry: dict[str, Any] = {"description": spec.doc}
    if spec.choices is not None:
        entry.update({"enum": list(spec.choices), "default": spec.default.name})
        return entry
    if kind is bool:
        entry.update({"type": "boolean", "default": spec.default})
        return entry
    number: dict[str, Any] = {"type": "integer" if kind is int else "number", "default": spec.default}
    for bound, strict, key in (
        (spec.minimum, spec.min_exclusive, "minimum"),
        (spec.maximum, spec.max_exclusive, "maximum"),
    ):
        if bound is not None:
            number[f"exclusive{key.title()}" if strict else key] = bound
    if not spec.automatable:
        entry.update(number)
        return entry
    automation = {
        "type": "object",
        "required": ["automation"],
        "properties": {"automation": {"enum": ["envelope", "lfo"]}},
    }
    entry.update({"anyOf": [number, automation], "default": spec.default})
    return entry


def schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of chain files, made from the registry and each effect's declared parameters
    (:meth:`Plugin.parameter_specs`): one branch per built-in effect with its parameters' types, ranges, defaults
    and automation, plus the containers. Plugins with more than parameters (an impulse response, a hosted plugin)
    allow further keys."""
    nodes: list[dict[str, Any]] = []
    for name, cls in registry.builtin_effects().items():
        specs = cls.parameter_specs()
        extra = bool(_constructor_arguments(cls) - set(specs))
        params = {
            "type": "object",
            "properties": {pname: _param_schema(spec) for pname, spec in specs.items()},
            "additionalProperties": extra,
        }
        nodes.append(
            {"type": "object", "required": ["type"], "properties": {"type": {"const": name}, "params": params}}
        )
    containers = sorted(registry.names("container"))
    nodes.append(
        {
            "type": "object",
            "required": ["type"],
            "properties": {
                "type": {"enum": containers},
                "plugins": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/plugin"}, {"type": "null"}]}},
            },
        }
    )
    others = sorted(set(registry.names()) - set(registry.names("effect")) - set(containers))
    nodes.append({"type": "object", "required": ["type"], "properties": {"type": {"enum": others}}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "stompbox chain file",
        "type": "object",
        "required": ["stompbox_chain", "chain"],
        "properties": {
            "stompbox_chain": {"type": "integer", "maximum": FORMAT_VERSION},
            "chain": {"anyOf": [{"$ref": "#/$defs/plugin"}, {"type": "array", "items": {"$ref": "#/$defs/plugin"}}]},
        },
        "$defs": {"plugin": {"oneOf": nodes}},
    }


def _constructor_arguments(cls: type[Plugin]) -> set[str]:
    import inspect

    try:
        return {n for n in inspect.signature(cls).parameters if n != "self"}
    except (TypeError, ValueError):
        return set()
