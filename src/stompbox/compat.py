"""pedalboard's module names, resolved to stompbox: for pedalboard code that must run without a single edit.

``import stompbox as pedalboard`` covers code that uses attributes of ``pedalboard``. Code that names a module
in an import statement (``from pedalboard.io import AudioFile``, ``from pedalboard._pedalboard import
load_plugin``, ``import pedalboard_native``) needs those names to exist; :func:`install` registers them::

    import stompbox.compat

    stompbox.compat.install()
    import pedalboard  # stompbox, under pedalboard's names
    from pedalboard._pedalboard import load_plugin

Registered: ``pedalboard``, ``pedalboard.io``, ``pedalboard.utils``, ``pedalboard._pedalboard``,
``pedalboard.version``, ``pedalboard.midi_utils``, ``pedalboard_native``, ``pedalboard_native.io``,
``pedalboard_native.utils`` and ``pedalboard_native._internal``. The names of pedalboard's internals that are
not API (its C++ headers, ``pedalboard.pedalboard``) stay unknown.

Versions
--------
stompbox implements pedalboard's API as of version :data:`PEDALBOARD_VERSION` (also
``stompbox.__pedalboard_version__``). ``stompbox.__version__`` is stompbox's own version; the ``pedalboard``
module registered here (and :data:`pedalboard`) reports the pedalboard version stompbox matches as its
``__version__``, so version-gated pedalboard code (``Version(pedalboard.__version__) >= Version("0.7.4")``) takes
the branch it takes on that pedalboard.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from . import __pedalboard_version__

__all__ = ["PEDALBOARD_VERSION", "install", "uninstall", "pedalboard", "pedalboard_native"]

#: the pedalboard release whose API stompbox implements
PEDALBOARD_VERSION: str = __pedalboard_version__


class _ModuleView(types.ModuleType):
    """A module under another name: its own few attributes, everything else read from a stompbox module."""

    __all__: list[str]

    def __init__(self, name: str, target: str, doc: str, **own: Any) -> None:
        super().__init__(name, doc)
        self.__dict__["__stompbox_target__"] = target
        self.__dict__.update(own)

    def __getattr__(self, name: str) -> Any:
        lazy = self.__dict__.get("__stompbox_lazy__", {})
        if name in lazy:  # "module" or "module:attribute", relative to stompbox
            module, _, attribute = lazy[name].partition(":")
            value = importlib.import_module(module, __package__)
            value = getattr(value, attribute) if attribute else value
            self.__dict__[name] = value
            return value
        return getattr(importlib.import_module(self.__dict__["__stompbox_target__"]), name)

    def __dir__(self) -> list[str]:
        target = importlib.import_module(self.__dict__["__stompbox_target__"])
        return sorted(set(dir(target)) | {n for n in self.__dict__ if not n.startswith("__stompbox")})


_MAJOR, _MINOR, _PATCH = (int(part) for part in PEDALBOARD_VERSION.split("."))

#: ``pedalboard.version``: the version stompbox matches, as pedalboard's version module gives it
version = types.ModuleType("pedalboard.version", "The pedalboard version whose API stompbox implements.")
version.__dict__.update(__version__=PEDALBOARD_VERSION, MAJOR=_MAJOR, MINOR=_MINOR, PATCH=_PATCH)

#: stompbox as the ``pedalboard`` module (``__version__`` is :data:`PEDALBOARD_VERSION`)
pedalboard = _ModuleView(
    "pedalboard",
    "stompbox",
    "stompbox under pedalboard's name (see stompbox.compat).",
    __version__=PEDALBOARD_VERSION,
    version=version,
    __stompbox_lazy__={
        "_pedalboard": "._pedalboard",
        "midi_utils": ".midi_utils",
        "_internal": "._internal",
        "_AVAILABLE_PLUGIN_CLASSES": "._pedalboard:_AVAILABLE_PLUGIN_CLASSES",
    },
)
pedalboard.__all__ = ["__version__"]  # completed from stompbox.__all__ on first install (stompbox is loading now)

#: stompbox as the ``pedalboard_native`` module (pedalboard's compiled extension)
pedalboard_native = _ModuleView(
    "pedalboard_native",
    "stompbox",
    "stompbox under the name of pedalboard's compiled module (see stompbox.compat).",
    __version__=PEDALBOARD_VERSION,
    __stompbox_lazy__={"_internal": "._internal", "_AudioProcessorParameter": "._pedalboard:_AudioProcessorParameter"},
)

# registered name -> stompbox module (relative) or view
_NAMES: dict[str, Any] = {
    "pedalboard": pedalboard,
    "pedalboard.io": ".io",
    "pedalboard.utils": ".utils",
    "pedalboard._pedalboard": "._pedalboard",
    "pedalboard.version": version,
    "pedalboard.midi_utils": ".midi_utils",
    "pedalboard_native": pedalboard_native,
    "pedalboard_native.io": ".io",
    "pedalboard_native.utils": ".utils",
    "pedalboard_native._internal": "._internal",
}
_saved: dict[str, Any] = {}


def install() -> None:
    """Register pedalboard's module names (see the module's docstring) so that unchanged pedalboard imports give
    stompbox. Idempotent; :func:`uninstall` undoes it.

    Raises
    ------
    RuntimeError
        The real pedalboard is already imported in this process (its modules are in use; replacing them under
        live references would mix the two libraries).
    """
    real = [n for n in _NAMES if n in sys.modules and not _is_ours(n, sys.modules[n])]
    if real:
        raise RuntimeError(
            f"pedalboard is already imported in this process ({', '.join(real)}): call stompbox.compat.install() "
            "before anything imports pedalboard, or use stompbox's own module names."
        )
    import stompbox

    pedalboard.__all__ = sorted({"__version__", *stompbox.__all__})
    pedalboard_native.__all__ = list(stompbox.__all__)
    for name, module in _NAMES.items():
        if name not in _saved:
            _saved[name] = sys.modules.get(name)
        sys.modules[name] = _resolve(module)


def uninstall() -> None:
    """Remove the names :func:`install` registered (restoring what was there before)."""
    for name, previous in _saved.items():
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
    _saved.clear()


def _resolve(module: Any) -> types.ModuleType:
    return importlib.import_module(module, __package__) if isinstance(module, str) else module


def _is_ours(name: str, module: types.ModuleType) -> bool:
    return module is _resolve(_NAMES[name])
