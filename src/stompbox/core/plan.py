"""The compiled per-block plan of a plugin or a board: one compiled call per block instead of one Python round
trip per plugin, for streams in small blocks and for the live audio thread.

The step protocol
-----------------
A plugin that can run in a plan implements ``Plugin._plan_steps(max_frames) -> list[PlanStep] | None``: the
compiled kernels that make up its ``_process``, each with the arrays it works on. It is called on a prepared
plugin (format set, ``_update`` done) and returns ``None`` when the plugin cannot run in a plan right now
(automated, sidechained, hosted through Python, ...).

- ``kernel(block, *args)`` processes ``block`` (a C-contiguous float32 ``(channels, n)`` array, ``0 <= n <=
  max_frames``) in place and returns nothing. ``args`` are C-contiguous NumPy arrays only (no Python scalars):
  state, coefficients, scratch of at least ``max_frames``. All mutable state lives in them.
- The plugin's own ``_process`` runs the same steps on the same arrays (one code path), so a stream may switch
  between the plan and the Python path between blocks without a change in its output.
- ``_update`` writes coefficient arrays in place; a plugin that must allocate a new array that a step refers to
  (a delay line that grows) calls ``self._plan_changed()`` afterwards, and owners of plans rebuild their table.
  Preparing for a new format does that on its own.
- ``rows=(a, b)`` has a step process rows ``a:b`` of the block only (the channel pairs of a paired plugin).
- ``plugin`` names the plugin whose state the step changes when it is not the plugin that returned it (a pair
  clone): the plan advances its ``_clock`` after a block and calls its ``_reset_state()`` when its output (the
  step's rows after the owner's last step) was not finite. Containers fill it in for their children's steps.
  Owners of plans call ``_begin_step()`` on the plugins of the board's tree (``_iter_tree``) when a parameter
  changed (the plan epoch moved, see :func:`move_epoch`), before taking their steps again; a plugin whose steps
  belong to other plugins (pair clones) brings those up to date in its own ``_begin_step`` (PairedChannels syncs
  its clones and updates them there).
- Anything that changes whether or how a plugin runs in a plan must move the plan epoch (:func:`move_epoch`):
  parameter changes do (``_request_update``), so do ``_plan_changed()``, a new format, a changed board and a new
  sidechain.

The plan
--------
:func:`compile_plan` turns a plugin's steps into a :class:`Plan`: an int64 table (``Plan.table``) naming, for each
step, a compiled C entry point and the addresses and shapes of its arrays, run by one generic compiled loop
(``Plan.run(block)`` from Python, ``Plan.address`` from C: see there). Each kernel gets its entry point once per
argument types, generated as a small module written to a cache folder (named by the hash of its source), so
Numba's on-disk cache serves it to later processes: a new board costs no compilation once its kernels have been
seen. Containers (``board.py``) keep a :class:`ChainRunner` that builds and refreshes their plans. Importing this
module does not import Numba; building a plan does.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._base.errors import StompboxError

if TYPE_CHECKING:
    from .plugin import Plugin

#: The plan clock: it moves whenever anything changes whether or how a plugin runs in a plan (parameter changes,
#: replaced arrays, formats, board edits, sidechains: see :func:`move_epoch`); a runner built at one epoch is
#: current until it moves.
_epoch = 0


def epoch() -> int:
    """The current plan epoch (see :func:`move_epoch`)."""
    return _epoch


def move_epoch() -> None:
    """Mark every compiled plan as possibly stale: runners rebuild (cheaply, without compiling) before their next
    block."""
    global _epoch
    _epoch += 1


class PlanStep(NamedTuple):
    """One compiled step of a plugin's block processing: ``kernel(block, *args)``, in place.

    Attributes
    ----------
    kernel : numba dispatcher
        A module-level kernel compiled with ``stompbox._base.jit.kernel``; called as ``kernel(block, *args)``, it
        processes the float32 ``(channels, n)`` block in place and returns nothing.
    args : tuple of numpy.ndarray
        C-contiguous arrays only (state, coefficients, scratch); updated in place, never rebound while a plan
        refers to them (call ``Plugin._plan_changed()`` when they must be).
    rows : tuple of int, optional
        The rows ``(start, stop)`` of the block the step processes; ``None`` for all of them.
    plugin : Plugin, optional
        The plugin whose state the step changes, when it is not the plugin that returned the step.
    """

    kernel: Any
    args: tuple[np.ndarray, ...]
    rows: tuple[int, int] | None = None
    plugin: Plugin | None = None


def owned(steps: list[PlanStep], plugin: Plugin) -> list[PlanStep]:
    """``steps`` with ``plugin`` as the owner of every step that names none (what containers use)."""
    return [step if step.plugin is not None else step._replace(plugin=plugin) for step in steps]


def run_steps(block: np.ndarray, steps: list[PlanStep]) -> None:
    """Run ``steps`` on ``block`` from Python (what a plugin's ``_process`` does with its own steps)."""
    for step in steps:
        if step.rows is None:
            step.kernel(block, *step.args)
        else:
            step.kernel(block[step.rows[0] : step.rows[1]], *step.args)


# ---------------------------------------------------------------------------------------------- the compiler
#: dtype codes of the table (informative: the generated code knows each array's dtype)
_DTYPES = {
    np.dtype(np.float32): (0, "float32"),
    np.dtype(np.float64): (1, "float64"),
    np.dtype(np.int64): (2, "int64"),
    np.dtype(np.int32): (3, "int32"),
    np.dtype(np.uint32): (4, "uint32"),
    np.dtype(np.uint8): (5, "uint8"),
    np.dtype(np.bool_): (6, "bool_"),
    np.dtype(np.complex128): (7, "complex128"),
    np.dtype(np.complex64): (8, "complex64"),
    np.dtype(np.int16): (9, "int16"),
}

#: a plan reports the owners whose output was not finite as bits of an int64
MAX_CHECKED_OWNERS = 63


class PlanError(StompboxError, TypeError):
    """A step does not follow the protocol (an argument that is not a C-contiguous array of a known dtype)."""


def _kernel_ref(kernel: Any) -> tuple[str, str]:
    fn = getattr(kernel, "py_func", None)
    if fn is None or not hasattr(kernel, "compile"):
        raise PlanError(f"A plan step's kernel must be a Numba kernel, not {kernel!r}.")
    module, name = fn.__module__, fn.__qualname__
    if "." in name or "<" in name or getattr(sys.modules.get(module), name, None) is not kernel:
        raise PlanError(f"A plan step's kernel must be a module-level kernel ({module}.{name}).")
    return module, name


def _entry_source(kernel: Any, args: tuple[np.ndarray, ...]) -> str:
    """The source of a step's C entry point ``void step(int64 block, int64 rows, int64 n, int64 args)``: it makes
    the block and the argument arrays from addresses and shapes and calls ``kernel``."""
    module, name = _kernel_ref(kernel)
    lines = [
        '"""A stompbox plan step entry point (generated by stompbox.core.plan; do not edit)."""',
        f"# {_stamp(module)}",
        "import numpy as np",
        "from numba import carray",
        "from stompbox.core._plan_kernels import address_as_pointer as ptr, make_entry",
        f"from {module} import {name} as kernel",
        "",
        "",
        "def step(block, rows, n, args):",
        "    table = carray(ptr(args, np.int64), ({},))",
        "    data = carray(ptr(block, np.float32), (rows, n))",
    ]
    slot, names = 0, []
    for j, arg in enumerate(args):
        dtype = _DTYPES[arg.dtype][1]
        shape = "".join(f"table[{slot + 1 + d}], " for d in range(arg.ndim))
        if arg.ndim == 0:
            lines.append(f"    a{j} = carray(ptr(table[{slot}], np.{dtype}), (1,)).reshape(())")
        else:
            lines.append(f"    a{j} = carray(ptr(table[{slot}], np.{dtype}), ({shape}))")
        names.append(f"a{j}")
        slot += 1 + arg.ndim
    lines[9] = lines[9].format(max(slot, 1))
    lines.append(f"    kernel({', '.join(['data', *names])})")
    lines += ["", "", "entry = make_entry(step)", ""]
    return "\n".join(lines)


def _stamp(module: str) -> str:
    """What the compiled entry point of a kernel of ``module`` depends on besides its own source: the kernel's
    file (Numba's cache of the entry point does not notice a changed callee, so a changed kernel must change the
    entry's source, hence its file name) and the Numba version."""
    import numba

    path = getattr(sys.modules[module], "__file__", None) or module
    try:
        stat = os.stat(path)
        stamp = f"{stat.st_mtime_ns} {stat.st_size}"
    except OSError:
        stamp = "?"
    return f"{module} {stamp} numba {numba.__version__}"


_entries: dict[tuple[Any, ...], Any] = {}


def _entry_address(kernel: Any, args: tuple[np.ndarray, ...]) -> int:
    """The address of the compiled entry point of ``kernel`` for arguments like ``args`` (compiled once per
    kernel and argument types, and kept in Numba's on-disk cache)."""
    key = (id(kernel), tuple((a.dtype.str, a.ndim) if isinstance(a, np.ndarray) else type(a) for a in args))
    entry = _entries.get(key)
    if entry is None:
        entry = _entries[key] = _load(_entry_source(kernel, args)).entry
    return int(entry.address)


def _check_step(step: PlanStep) -> None:
    _, name = _kernel_ref(step.kernel)
    for j, arg in enumerate(step.args):
        if not isinstance(arg, np.ndarray) or not arg.flags.c_contiguous or arg.dtype not in _DTYPES:
            what = f"{arg.dtype} array" if isinstance(arg, np.ndarray) else type(arg).__name__
            raise PlanError(
                f"Argument {j} of plan step {name} must be a C-contiguous numpy array of a plain dtype, "
                f"not a {what}{'' if not isinstance(arg, np.ndarray) or arg.flags.c_contiguous else ' (strided)'}."
            )


def _table(steps: list[PlanStep], checks: list[int]) -> np.ndarray:
    """The int64 table of a plan (the layout is ``HEADER``'s in ``core/_plan_kernels.py``)."""
    words = [len(steps), 0]
    for step, check in zip(steps, checks, strict=True):
        _check_step(step)
        args = [value for arg in step.args for value in (arg.ctypes.data, *arg.shape)]
        rows = step.rows if step.rows is not None else (0, -1)
        words += [_entry_address(step.kernel, step.args), int(rows[0]), int(rows[1]), check, len(args), *args]
    words[1] = len(words)
    return np.array(words, np.int64)


def _plan_dir() -> Path:
    """Where generated plan sources are written: beside Numba's cache when ``NUMBA_CACHE_DIR`` is set, else a
    per-user cache folder (a temporary folder when that is not writable)."""
    from .._base.jit import _guard, _writable

    _guard()
    candidates = []
    if os.environ.get("NUMBA_CACHE_DIR"):
        candidates.append(Path(os.environ["NUMBA_CACHE_DIR"]) / "stompbox-plans")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    candidates.append(Path(xdg) / "stompbox" / "plans")
    user = os.getuid() if hasattr(os, "getuid") else "user"
    candidates.append(Path(tempfile.gettempdir()) / f"stompbox-plans-{user}")
    for path in candidates:
        if _writable(path):
            return path
    raise OSError("No writable folder for stompbox's compiled plans.")


_modules: dict[str, Any] = {}
_modules_lock = threading.Lock()


def _load(source: str) -> Any:
    """Import the generated ``source`` (written once to a file named by its hash, so Numba's on-disk cache of the
    body works across processes) and return its module."""
    key = hashlib.sha1(source.encode()).hexdigest()[:20]
    with _modules_lock:
        module = _modules.get(key)
        if module is not None:
            return module
        module = load_generated(f"stompbox_plan_{key}", source, _plan_dir())
        _modules[key] = module
        return module


def load_generated(name: str, source: str, folder: Path) -> Any:
    """Write ``source`` as ``folder/name.py`` (atomically, only when it differs) and import it as module ``name``.

    Generated code lives in real files so that Numba's on-disk cache of the kernels in it works across
    processes. Raises what writing or importing raises (the module is not left half-imported)."""
    import importlib.util

    path = folder / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}-", suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


class Plan:
    """A compiled plan: the steps of a plugin (or board) run by one compiled call per block.

    Attributes
    ----------
    table : numpy.ndarray
        int64 words: a header ``[number of steps, length]``, then per step its compiled entry point, its rows, its
        non-finite check and the address and shape of each of its argument arrays. Valid while this Plan object
        lives (it keeps the arrays alive); never changed after construction (:meth:`rebuilt` makes a new one).
    owners : list of Plugin
        The plugins whose state the steps change, in order.
    checked : list of Plugin
        The stateful owners: bit ``k`` of :meth:`run`'s result is ``checked[k]``, whose output was not finite
        (reset it: ``checked[k]._reset_state()``).
    plugins : list of Plugin
        Every plugin the plan covers (owners and the containers around them): call their ``_begin_step()``
        before a block and advance their ``_clock`` after it.
    """

    def __init__(
        self,
        steps: list[PlanStep],
        owners: list[Plugin],
        checked: list[Plugin],
        plugins: list[Plugin],
        checks: list[int],
    ) -> None:
        self.steps = steps
        self.owners = owners
        self.checked = checked
        self.plugins = plugins
        self.checks = checks
        self.max_frames = 0
        self.table = _table(steps, checks)
        self._arrays = [arg for step in steps for arg in step.args]  # keeps every address in the table valid
        from ._plan_kernels import run_arrays

        self._run = run_arrays

    def run(self, block: np.ndarray) -> int:
        """Process the C-contiguous float32 ``(channels, n)`` ``block`` in place; return the bit mask of the
        checked owners whose output was not finite (bit ``k``: ``checked[k]``)."""
        return int(self._run(block, self.table))

    @property
    def address(self) -> int:
        """Address of the C function ``int64 plan(float32 *block, int64 channels, int64 n, int64 *table)`` that
        runs a plan: call it with a planar block (channel after channel, ``n`` samples each, processed in place)
        and ``table.ctypes.data``; it returns :meth:`run`'s mask. It takes no GIL and touches no Python object,
        so it can be called from any thread (the live audio callback), one call at a time per plan's state.
        The same function serves every plan (the table says what to run); compiled on first use."""
        from ._plan_kernels import plan_entry

        return int(plan_entry().address)

    def rebuilt(self, steps: list[PlanStep]) -> Plan:
        """A plan of the same steps and owners over the arrays of ``steps`` (after arrays were replaced)."""
        plan = Plan(steps, self.owners, self.checked, self.plugins, self.checks)
        plan.max_frames = self.max_frames
        return plan


def collect(plugin: Plugin, max_frames: int) -> tuple[list[PlanStep], list[Plugin]] | None:
    """``plugin``'s steps with owners filled in, and every plugin they cover; ``None`` if it has no plan now."""
    steps = plugin._plan_steps(max_frames)
    if steps is None:
        return None
    plugins = list(plugin._iter_tree())
    return owned(steps, plugin), plugins


def compile_steps(steps: list[PlanStep], plugins: list[Plugin], max_frames: int) -> Plan | None:
    """Compile ``steps`` (owners filled in) covering ``plugins``; ``None`` when more than
    :data:`MAX_CHECKED_OWNERS` stateful plugins would have to be checked."""
    owners: list[Plugin] = []
    for step in steps:
        assert step.plugin is not None
        if not any(step.plugin is o for o in owners):
            owners.append(step.plugin)
    checked = [o for o in owners if o._stateful]
    if len(checked) > MAX_CHECKED_OWNERS:
        return None
    bits = {id(o): k for k, o in enumerate(checked)}
    checks = []
    for i, step in enumerate(steps):
        last = all(later.plugin is not step.plugin for later in steps[i + 1 :])
        checks.append(bits[id(step.plugin)] if last and id(step.plugin) in bits else -1)
    extra = [o for o in owners if not any(o is p for p in plugins)]
    plan = Plan(steps, owners, checked, plugins + extra, checks)
    plan.max_frames = max_frames
    return plan


def compile_plan(plugin: Plugin, max_frames: int) -> Plan | None:
    """The compiled plan of a prepared ``plugin`` (a single effect or a whole board) for blocks of at most
    ``max_frames`` frames, or ``None`` when some plugin in it cannot run in a plan now."""
    found = collect(plugin, max_frames)
    if found is None:
        return None
    steps, plugins = found
    return compile_steps(steps, plugins, max_frames)


# ---------------------------------------------------------------------------------------------- running plans
#: Compiled plans are used by containers for blocks of at most this many frames (above it one Python round trip
#: per plugin is negligible next to the work of the block, and a whole-array call needs no compilation).
MAX_PLAN_FRAMES = 16384
#: False: containers run their children one by one in Python (set by tests that compare the two paths, and by
#: ``STOMPBOX_PLANS=0`` in the environment)
ENABLED = os.environ.get("STOMPBOX_PLANS", "1") != "0"


class Segment:
    """A compiled run of a container's children: the plan and the per-block bookkeeping around it.

    Before a block the plugins' coefficients are brought up to date (a dirty plugin, or a replaced array anywhere,
    makes the owner collect the steps again), after it their clocks advance, and the owners whose output was not
    finite are reset (the non-finite rule of ``Plugin._step``).
    """

    __slots__ = ("plan", "plugins", "checked")

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.plugins = plan.plugins
        self.checked = plan.checked

    def run(self, block: np.ndarray) -> None:
        """Process the C-contiguous float32 ``block`` in place (coefficients must be up to date)."""
        mask = self.plan._run(block, self.plan.table)
        n = block.shape[1]
        for plugin in self.plugins:
            plugin._clock += n
        if mask:
            for k, plugin in enumerate(self.checked):
                if mask >> k & 1:
                    plugin._reset_state()


def refresh_segment(old: Segment | None, steps: list[PlanStep], plugins: list[Plugin], max_frames: int) -> Segment:
    """A segment for ``steps``: ``old`` itself when nothing changed, else a new plan (compiled code is shared)."""
    if old is not None and len(old.plan.steps) == len(steps) and old.plan.max_frames >= max_frames:
        same = all(
            s.kernel is t.kernel and s.rows == t.rows and s.plugin is t.plugin and len(s.args) == len(t.args)
            for s, t in zip(old.plan.steps, steps, strict=True)
        )
        if same and len(old.plan.plugins) >= len(plugins):
            same = all(a is b for a, b in zip(old.plan.plugins, plugins, strict=False))
        if same and all(
            x is y for s, t in zip(old.plan.steps, steps, strict=True) for x, y in zip(s.args, t.args, strict=True)
        ):
            return old
    plan = compile_steps(steps, plugins, max_frames)
    if plan is None:
        raise _TooManyOwners
    return Segment(plan)


class _TooManyOwners(Exception):
    pass


def frames_bucket(n: int) -> int:
    """The ``max_frames`` a plan is built for when blocks of ``n`` frames arrive (a power of two, at least 128)."""
    return max(128, 1 << max(0, n - 1).bit_length())


class ChainRunner:
    """Runs a chain's children in compiled segments (consecutive children that all have plan steps) and the
    others through their own ``_step`` in Python. Built and kept by a container; call :meth:`process` per block.

    It is current while the plan epoch (:func:`move_epoch`) has not moved (a parameter change, a replaced array, a
    new format or a changed board anywhere moves it) and blocks fit ``max_frames``; then the per-block cost is one
    compiled call per segment and the clocks.
    """

    def __init__(self) -> None:
        self.epoch = -1
        self.max_frames = 0
        self.children: list[Plugin] = []
        self.program: list[Segment | Plugin] = []
        self.python = False
        #: every child runs in the plan (built-in effects only): the container may remember its latency
        self.compiled = False
        self.latency: int | None = None

    def build(self, children: list[Plugin], n: int, combine: Any = None, container: Plugin | None = None) -> None:
        """Collect the children's steps and (re)compile. ``combine(steps_per_child, max_frames)`` may turn all
        the children's steps into one list (a Mix; ``None``: run in Python); by default runs of consecutive
        children with steps are compiled."""
        max_frames = max(frames_bucket(n), self.max_frames if n <= self.max_frames else 0)
        per_child: list[list[PlanStep] | None] = []
        for child in children:
            if child._plan_steps(max_frames) is None:  # a Python child: its own _step brings it up to date
                per_child.append(None)
                continue
            for plugin in child._iter_tree():
                plugin._begin_step()  # coefficients (and the arrays they may reallocate) before taking the steps
            steps = child._plan_steps(max_frames)
            per_child.append(None if steps is None else owned(steps, child))
        old = [item for item in self.program if isinstance(item, Segment)]
        program: list[Segment | Plugin] = []
        self.python = False
        try:
            if combine is not None:
                steps = combine(per_child, max_frames)
                if steps is None:
                    self.python = True
                else:
                    covered = [p for child in children for p in child._iter_tree()]
                    if container is not None:  # its own steps' owner: its clock is advanced by its own _step
                        steps = owned(steps, container)
                        covered.append(container)
                    segment = refresh_segment(old[0] if old else None, steps, covered, max_frames)
                    segment.plugins = [p for p in segment.plugins if p is not container]
                    program.append(segment)
            else:
                run: list[tuple[Plugin, list[PlanStep]]] = []
                for member, steps in [*zip(children, per_child, strict=True), (None, None)]:
                    if steps is not None and member is not None:
                        run.append((member, steps))
                        continue
                    if run:
                        flat = [step for _, child_steps in run for step in child_steps]
                        covered = [p for c, _ in run for p in c._iter_tree()]
                        previous = old.pop(0) if old else None
                        program.append(refresh_segment(previous, flat, covered, max_frames))
                        run = []
                    if member is not None:
                        program.append(member)
        except _TooManyOwners:
            program = list(children)
            self.python = combine is not None
        self.program = program
        self.children = list(children)
        self.compiled = not self.python and all(type(item) is Segment for item in program)
        self.latency = None
        self.max_frames = max_frames
        self.epoch = _epoch

    def current(self, n: int = 0) -> bool:
        """Whether the built program still holds (the plan epoch has not moved since it was built) for blocks of
        ``n`` frames."""
        return self.epoch == _epoch and n <= self.max_frames

    def process(self, block: np.ndarray, children: list[Plugin]) -> np.ndarray:
        """Run ``block`` through the children in series (rebuilding the plan first if anything changed)."""
        n = block.shape[1]
        if not self.current(n):
            self.build(children, n)
        return self.run(block)

    def run(self, block: np.ndarray) -> np.ndarray:
        """Run ``block`` through the built program (the caller checked that it is current)."""
        for item in self.program:
            if type(item) is Segment:
                if not block.flags.c_contiguous:
                    block = np.ascontiguousarray(block)
                item.run(block)
            else:
                block = item._step(block)  # type: ignore[union-attr]
        return block
