"""The registry of plugin classes: every :class:`~stompbox.core.plugin.Plugin` subclass is recorded here when its
class statement runs, and the packages above ``core`` declare here which of them are public under which name.

Two things are kept apart:

- *defined* classes: every concrete plugin class that has been defined so far, in definition order, built-in or
  not (a test's toy effect too). :func:`defined` lists them; the contract tests iterate them.
- the *catalogue*: the public names stompbox resolves (in chain files, on the command line), each with its kind
  (``"effect"`` for the built-in effects that ``stompbox effects`` lists, ``"container"``, ``"routing"``,
  ``"hosted"``, ``"internal"`` for pedalboard's test-support plugins). A package declares its names with
  :func:`provide` and a loader, so that looking a name up imports only the module that defines it (``import
  stompbox`` stays light) and ``core`` never imports the layers above it.

Look-ups (:func:`lookup`, :func:`find`) take the exact class name first, then the name with case, ``-`` and ``_``
ignored (``ladder-filter`` is ``LadderFilter``), as the command line does.
"""

from __future__ import annotations

import difflib
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .errors import StompboxError

if TYPE_CHECKING:
    from .plugin import Plugin

__all__ = [
    "KINDS",
    "UnknownPluginError",
    "builtin_effects",
    "defined",
    "find",
    "kind_of",
    "lookup",
    "names",
    "provide",
]

#: the kinds of public names, in the order look-ups try them
KINDS = ("container", "effect", "routing", "hosted", "internal")


class UnknownPluginError(StompboxError, LookupError):
    """A plugin name that the registry does not know (the message names the valid ones and the closest)."""


_lock = threading.RLock()
_defined: list[weakref.ref[type[Plugin]]] = []  # weak: a class a test defines in a function may go
_subclasses: weakref.WeakSet[type[Plugin]] = weakref.WeakSet()  # every Plugin subclass, abstract ones too
# public name -> (kind, loader)
_catalogue: dict[str, tuple[str, Callable[[str], Any]]] = {}


def _key(name: str) -> str:
    return name.strip().replace("-", "").replace("_", "").lower()


def record(cls: type[Plugin]) -> None:
    """Record a plugin class as it is defined (called by ``Plugin.__init_subclass__``; not for users)."""
    _subclasses.add(cls)
    if cls.__dict__.get("_abstract", False):
        return
    with _lock:
        _defined.append(weakref.ref(cls))


def provide(kind: str, public_names: Iterable[str], load: Callable[[str], Any]) -> None:
    """Declare public plugin names of ``kind``; ``load(name)`` returns the class (importing its module).

    Called by the packages that define plugins (``stompbox.effects``, ``stompbox`` itself), never by users.
    """
    if kind not in KINDS:
        raise ValueError(f"Unknown plugin kind {kind!r}; expected one of {', '.join(KINDS)}.")
    with _lock:
        for name in public_names:
            _catalogue[name] = (kind, load)


def names(kind: str | None = None) -> tuple[str, ...]:
    """The public plugin names of ``kind`` (all kinds when ``None``), sorted, without importing anything."""
    with _lock:
        return tuple(sorted(n for n, (k, _) in _catalogue.items() if kind is None or k == kind))


def kind_of(name: str) -> str | None:
    """The kind of the public name ``name`` (exact spelling), or ``None``."""
    entry = _catalogue.get(name)
    return None if entry is None else entry[0]


def _load(name: str) -> type[Plugin] | None:
    entry = _catalogue.get(name)
    if entry is None:
        return None
    kind, load = entry
    try:
        value = load(name)
    except (AttributeError, ImportError):
        return None
    if not (isinstance(value, type) and value in _subclasses):  # a Plugin subclass (all are recorded)
        return None
    if kind == "effect" and value.__dict__.get("_abstract", False):  # a family's base (IIRFilter)
        return None
    return value


def find(name: str, kind: str | None = None) -> type[Plugin] | None:
    """The public plugin class called ``name`` (of ``kind``, or any kind), or ``None``.

    The exact class name wins; otherwise case, ``-`` and ``_`` are ignored. Only the module defining the class
    is imported.
    """
    if not isinstance(name, str):
        return None
    candidates = names(kind)
    if name in candidates:
        return _load(name)
    wanted = _key(name)
    for candidate in candidates:
        if _key(candidate) == wanted:
            return _load(candidate)
    return None


def lookup(name: str, kind: str | None = None) -> type[Plugin]:
    """Like :func:`find`, but raises :class:`UnknownPluginError` (naming the valid names) for an unknown name."""
    cls = find(name, kind)
    if cls is not None:
        return cls
    valid = list(builtin_effects()) if kind == "effect" else list(names(kind))
    by_key = {_key(n): n for n in valid}
    close = difflib.get_close_matches(_key(str(name)), list(by_key), n=1, cutoff=0.6)
    hint = f" (did you mean {by_key[close[0]]}?)" if close else ""
    what = f"{kind} " if kind else "plugin "
    raise UnknownPluginError(f"Unknown {what}{name!r}{hint}; valid: {', '.join(valid)}.")


def builtin_effects() -> Mapping[str, type[Plugin]]:
    """Every built-in effect class by its public name, alphabetical, as a read-only mapping (imports them all)."""
    found: dict[str, type[Plugin]] = {}
    for name in names("effect"):
        cls = _load(name)
        if cls is not None:
            found[name] = cls
    return MappingProxyType(found)


def defined() -> tuple[type[Plugin], ...]:
    """Every concrete plugin class defined so far (built-in, hosted, test-made), in definition order.

    Classes defined in modules that have not been imported yet are not in it; call :func:`builtin_effects`
    first to have every built-in effect defined.
    """
    with _lock:
        alive = [cls for cls in (ref() for ref in _defined) if cls is not None]
        _defined[:] = [weakref.ref(cls) for cls in alive]
        return tuple(alive)
