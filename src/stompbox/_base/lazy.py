"""Names a package loads on first use (a module ``__getattr__``, PEP 562), so that importing it stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    namespace: dict[str, Any], table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a package that loads the names of ``table`` on first use.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``: a name is imported on its first use and kept there, so that later uses
        are plain attribute reads.
    table : Mapping[str, str]
        Each name -> the module that defines it, relative to the package (``".plugin"``, ``"..live.stream"``;
        a bare ``"basic"`` is ``".basic"``). tests/test_layers.py reads these tables as the package's arrows.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module if module.startswith(".") else f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
