"""The layer diagram of shared/DESIGN.md and the README holds: no import points up a layer or forms a circle.

Every module under ``src/stompbox`` is parsed (not imported). An import is any ``import``/``from ... import``
statement, at module level or inside a function, any ``importlib.import_module(...)`` or ``__import__(...)``
call, and any name taken from the package ``stompbox`` itself (``import stompbox`` followed by ``stompbox.Gain``
or ``getattr(stompbox, name)``). A name imported from a package is followed to the module that defines it,
through the package's ``__init__`` (its own imports and its table of names loaded on first use), so
``from ..io import AudioFile`` is an arrow to ``stompbox.io.audiofile``.

Layers, top to bottom (a module may import its own layer and the ones below)::

    facade     stompbox (the package), and pedalboard's module names: compat, _pedalboard, midi_utils
    cli        stompbox.cli, stompbox.__main__
    batch      stompbox.batch
    render     stompbox.render, stompbox.analysis
    live       stompbox.live
    hosting    stompbox.hosting
    effects    stompbox.effects, stompbox.routing, stompbox._internal, stompbox.utils, stompbox.examples
    board      stompbox.board, stompbox.chains
    core | io  stompbox.core and stompbox.io: side by side, neither imports the other
    _base      stompbox._base (and stompbox.limits, its public face): the standard library and NumPy only

A package's ``__init__`` is its public face: the names it loads on first use (its ``__getattr__`` table) give
the public import path (``stompbox.io.AudioStream`` is defined in ``stompbox.live``) and are not arrows of the
``__init__`` itself; whoever imports such a name gets the arrow to the module that defines it. A module that is
in no layer fails the test: add it to LAYERS and to the README's Layout section.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
ROOT = "stompbox"

# bottom to top; a layer may import itself and any layer of lower rank, except the pairs in SIBLINGS
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("_base", ("stompbox._base", "stompbox.limits")),  # stompbox.limits: the public face of _base.limits
    ("io", ("stompbox.io",)),
    ("core", ("stompbox.core",)),
    ("board", ("stompbox.board", "stompbox.chains")),
    (
        "effects",
        ("stompbox.effects", "stompbox.routing", "stompbox._internal", "stompbox.utils", "stompbox.examples"),
    ),
    ("hosting", ("stompbox.hosting",)),
    ("live", ("stompbox.live",)),
    ("render", ("stompbox.render", "stompbox.analysis")),
    ("batch", ("stompbox.batch",)),
    ("cli", ("stompbox.cli", "stompbox.__main__")),
    # the package itself and the modules under pedalboard's names: faces over everything, used by nothing inside
    ("facade", ("stompbox", "stompbox.compat", "stompbox._pedalboard", "stompbox.midi_utils")),
]
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}
SIBLINGS = {frozenset({"io", "core"})}
# what _base may import besides itself: the standard library and NumPy; the Numba guard imports Numba (when the
# first kernel is defined: it is the one place that does)
BASE_ALLOWED = set(sys.stdlib_module_names) | {"numpy"}
BASE_EXTRA = {"stompbox._base.jit": {"numba"}}
# the one module that imports names for packages (their module __getattr__): what it imports is what each
# package's table names, read by _lazy_table as that package's own public names
LAZY_LOADER = "stompbox._base.lazy"


def layer_of(module: str) -> str:
    best = ""
    found = ""
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            inside = module == prefix or (module.startswith(prefix + ".") and prefix != ROOT)
            if inside and len(prefix) > len(best):
                best, found = prefix, name
    if not found:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS (and to the README's Layout section)")
    return found


def allowed(source: str, target: str) -> bool:
    a, b = layer_of(source), layer_of(target)
    if a == b:
        return True
    if frozenset({a, b}) in SIBLINGS:
        return False
    return RANK[b] < RANK[a]


@dataclass(frozen=True)
class Arrow:
    source: str
    target: str
    line: int
    toplevel: bool  # made when the module is imported (not inside a function, not lazily)
    typing_only: bool = False  # under ``if TYPE_CHECKING:``: must not point up, but closes no circle

    def __str__(self) -> str:
        where = "module level" if self.toplevel else "in a function"
        return f"{self.source} -> {self.target} (line {self.line}, {where})"


def _discover() -> dict[str, Path]:
    modules = {}
    for path in sorted((SRC / ROOT).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _discover()
PACKAGES = {name for name, path in MODULES.items() if path.name == "__init__.py"}
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in MODULES.items()}


def _package_of(module: str) -> str:
    return module if module in PACKAGES else module.rpartition(".")[0]


def _absolute(module: str, target: str | None, level: int) -> str:
    if level == 0:
        return target or ""
    base = _package_of(module).split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _lazy_table(package: str) -> dict[str, str]:
    """Names a package ``__init__`` loads on first use -> the module they come from (dict literals and dict
    comprehensions of ``{"Name": ".module"}`` or ``{"Name": "module"}`` at module level)."""
    table: dict[str, str] = {}

    def module_for(value: object) -> str | None:
        if not isinstance(value, str):
            return None
        dots = len(value) - len(value.lstrip("."))
        for candidate in (_absolute(package, value.lstrip(".") or None, dots) if dots else None,
                          f"{package}.{value}", value):  # fmt: skip
            if candidate in MODULES:
                return candidate
        return None

    for node in TREES[package].body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(item, ast.Constant):
                    target = module_for(item.value)
                    if target and isinstance(key.value, str):
                        table[key.value] = target
        elif isinstance(value, ast.Set):  # names of submodules loaded on first use
            for element in value.elts:
                target = module_for(element.value) if isinstance(element, ast.Constant) else None
                if target and isinstance(element.value, str):
                    table[element.value] = target
        elif isinstance(value, ast.DictComp) and isinstance(value.value, ast.Constant):
            target = module_for(value.value.value)
            iterable = value.generators[0].iter
            if target and isinstance(iterable, ast.Tuple | ast.List | ast.Set):
                for element in iterable.elts:
                    if isinstance(element, ast.Constant) and isinstance(element.value, str):
                        table[element.value] = target
    return table


def _eager_names(package: str) -> tuple[dict[str, str], list[str]]:
    """Names a package ``__init__`` imports at module level -> their module; and the subpackages it imports
    whole (whose names it re-exports)."""
    names: dict[str, str] = {}
    subpackages: list[str] = []
    for node in TREES[package].body:
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(package, node.module, node.level)
            for alias in node.names:
                if f"{origin}.{alias.name}" in MODULES:
                    names[alias.asname or alias.name] = f"{origin}.{alias.name}"
                    if f"{origin}.{alias.name}" in PACKAGES:
                        subpackages.append(f"{origin}.{alias.name}")
                else:
                    names[alias.asname or alias.name] = origin
    return names, subpackages


def resolve(package: str, name: str, seen: frozenset[str] = frozenset()) -> str:
    """The module that defines ``name`` as seen from ``package`` (a submodule, a re-exported or lazily loaded
    name followed to its origin, else the package itself)."""
    if f"{package}.{name}" in MODULES:
        return f"{package}.{name}"
    if package not in PACKAGES or package in seen:
        return package
    seen = seen | {package}
    lazy = _lazy_table(package)
    eager, subpackages = _eager_names(package)
    origin = lazy.get(name) or eager.get(name)
    if origin is not None:
        return resolve(origin, name, seen) if origin in PACKAGES and origin != package else origin
    for sub in subpackages:  # e.g. the root re-exports every name of stompbox.effects
        found = resolve(sub, name, seen)
        if found != sub:
            return found
    return package


def _exported(package: str) -> set[str]:
    """Every module a package's public names come from (for ``getattr(package, name)`` with any name)."""
    lazy = _lazy_table(package)
    eager, subpackages = _eager_names(package)
    targets = set(lazy.values()) | set(eager.values())
    for sub in subpackages:
        targets |= _exported(sub)
    return {t for t in targets if t != package and t.startswith(ROOT + ".")}


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.arrows: list[Arrow] = []
        self.unresolved: list[str] = []
        self.depth = 0  # > 0 inside a function or class body executed later
        self.typing = 0  # > 0 inside ``if TYPE_CHECKING:``
        self.root_names: set[str] = set()  # local names bound to the root package
        self.strings = {
            n.value for n in ast.walk(TREES[module]) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
        self.is_package_init = module in PACKAGES

    def add(self, target: str, node: ast.AST, *, lazy: bool = False) -> None:
        if not target.startswith(ROOT):
            top = target.split(".")[0]
            if layer_of(self.module) == "_base" and top not in BASE_ALLOWED | BASE_EXTRA.get(self.module, set()):
                self.arrows.append(Arrow(self.module, target, node.lineno, self.depth == 0))
            return
        if target == self.module or (lazy and self.is_package_init):
            return
        line = getattr(node, "lineno", 0)
        self.arrows.append(Arrow(self.module, target, line, self.depth == 0 and not lazy, self.typing > 0))

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
        if name != "TYPE_CHECKING":
            self.generic_visit(node)
            return
        self.typing += 1
        for child in node.body:
            self.visit(child)
        self.typing -= 1
        for child in node.orelse:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == ROOT:
                self.root_names.add(alias.asname or ROOT)  # arrows come from the names used on it
            elif alias.name.startswith(ROOT + "."):
                self.add(alias.name, node)
                if alias.asname is None:
                    self.root_names.add(ROOT)
            else:
                self.add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        origin = _absolute(self.module, node.module, node.level)
        if not origin.startswith(ROOT):
            self.add(origin, node)
            return
        for alias in node.names:
            if alias.name == "*":
                self.add(origin, node)
            else:
                self.add(resolve(origin, alias.name), node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.root_names:
            self.add(resolve(ROOT, node.attr), node)
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        # the root package itself used as a value (getattr(stompbox, name), a loop over modules): any of its names
        if node.id in self.root_names and isinstance(node.ctx, ast.Load):
            for target in sorted(_exported(ROOT)):
                self.add(target, node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        dynamic = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
            isinstance(func, ast.Name) and func.id in ("import_module", "__import__")
        )
        if dynamic and node.args:
            self._dynamic(node)
        self.generic_visit(node)

    def _dynamic(self, node: ast.Call) -> None:
        first = node.args[0]
        relative_to = self.module if len(node.args) > 1 or node.keywords else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            name = first.value
            if name.startswith(".") and relative_to:
                level = len(name) - len(name.lstrip("."))
                self.add(_absolute(relative_to, name.lstrip(".") or None, level), node)
            else:
                self.add(name, node)
            return
        if self.module == LAZY_LOADER:
            return
        # a computed name: any string of this module that names a module it could load
        lazy = self.is_package_init and self.depth > 0
        package = _package_of(self.module)
        found = False
        for text in self.strings:
            for candidate in (_absolute(self.module, text.lstrip("."), len(text) - len(text.lstrip(".")))
                              if text.startswith(".") else None, f"{package}.{text}", text):  # fmt: skip
                if candidate and candidate in MODULES and candidate.startswith(ROOT + "."):
                    self.add(candidate, node, lazy=lazy)
                    found = True
                    break
        if not found:
            self.unresolved.append(f"{self.module}: line {node.lineno}: import of a computed name")


def collect() -> tuple[list[Arrow], list[str]]:
    arrows: list[Arrow] = []
    unresolved: list[str] = []
    for module in MODULES:
        collector = _Collector(module)
        collector.visit(TREES[module])
        arrows += collector.arrows
        unresolved += collector.unresolved
    return arrows, unresolved


def upward(arrows: list[Arrow]) -> list[Arrow]:
    return [a for a in arrows if a.target.startswith(ROOT) and not allowed(a.source, a.target)] + [
        a for a in arrows if not a.target.startswith(ROOT)
    ]


def circles(arrows: list[Arrow]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for a in arrows:
        if a.target in graph and not a.typing_only:
            graph[a.source].add(a.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for v in graph:
        if v not in index:
            visit(v)
    return sorted(found)


ARROWS, UNRESOLVED = collect()


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_every_import_is_resolved() -> None:
    assert UNRESOLVED == []


def test_the_parser_sees_imports_inside_functions_and_importlib() -> None:
    # the package's own lazy loaders are found: the root loads stompbox.render on first use of render()
    assert resolve(ROOT, "render") == "stompbox.render"
    assert resolve(ROOT, "Gain") == "stompbox.effects.basic"
    assert resolve("stompbox.io", "AudioFile") == "stompbox.io.audiofile"
    sample = "def f():\n    import stompbox\n    return getattr(stompbox, 'x'), stompbox.Reverb\n"
    TREES["stompbox.board._probe"] = ast.parse(sample)
    try:
        collector = _Collector("stompbox.board._probe")
        collector.visit(TREES["stompbox.board._probe"])
    finally:
        del TREES["stompbox.board._probe"]
    targets = {a.target for a in collector.arrows}
    assert "stompbox.effects.reverb" in targets and "stompbox.batch" in targets
    assert not any(a.toplevel for a in collector.arrows)


def test_no_import_points_up_a_layer() -> None:
    bad = sorted({str(a) for a in upward(ARROWS)})
    assert bad == [], "imports pointing up a layer:\n" + "\n".join(bad)


def test_no_circles() -> None:
    found = circles(ARROWS)
    assert found == [], "modules importing each other in a circle:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_readme_layout_shows_these_layers_top_to_bottom() -> None:
    readme = (SRC.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Layout") :]
    lines = section[: section.index("\n## ", 1)].splitlines()

    def line_of(module: str) -> int:
        path = "src/" + module.replace(".", "/") + ("/" if module in PACKAGES else ".py")
        found = [i for i, line in enumerate(lines) if path in line]
        assert found, f"README's Layout section does not show {path}"
        return found[0]

    shown = [(line_of(prefixes[0]), name) for name, prefixes in LAYERS if name != "facade"]  # bottom to top
    for (line, name), (above, above_name) in zip(shown, shown[1:], strict=False):
        assert above < line, f"README shows {above_name} below {name}; the layers are listed top to bottom"


if __name__ == "__main__":  # list what is left: python3 tests/test_layers.py
    for arrow in sorted({str(a) for a in upward(ARROWS)}):
        print("UP  ", arrow)
    for component in circles(ARROWS):
        print("LOOP", " <-> ".join(component))
    for text in UNRESOLVED:
        print("??  ", text)
