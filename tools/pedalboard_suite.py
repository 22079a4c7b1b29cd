"""Run pedalboard's own test suite against stompbox: the drop-in promise, checked with the other side's tests.

Usage:
    python tools/pedalboard_suite.py PEDALBOARD_CHECKOUT [TEST_FILE ...] [--install] [-- PYTEST_ARGS ...]

PEDALBOARD_CHECKOUT is a clone of pedalboard's source; its ``tests/`` folder is what runs (nothing of it is
copied into this project, whose licence differs). The tests are copied into a temporary folder beside shim
packages named ``pedalboard`` and ``pedalboard_native``, so the checkout's own ``pedalboard/`` source folder
never shadows them: at run time the shims call :func:`stompbox.compat.install` (pedalboard's module names
resolve to stompbox, also loaded as a pytest plugin before anything is collected), and for type checkers they
hold stubs naming stompbox's classes (``test_type_hints.py`` runs mypy and pyright on pedalboard's fixtures).

Each test file runs in its own pytest process, so one crash cannot hide the other files' results. A file that
fails to collect, crashes, times out or outgrows the memory guard is a failure of that file, never "0 passed 0
failed". ``test_audio_stream.py`` runs against a private PulseAudio server with null sinks (the one stompbox's
live tests start; skipped without ``pulseaudio``). At the end: passed, failed and errors per file, and the
failing tests grouped by name.

Left out: ``test_external_plugins.py`` and ``test_memory_leaks.py`` (pedalboard's own plugin binaries, which a
checkout holds as large files) and ``test_benchmark.py``. The unlocked-writer cases of ``test_io_threading.py``
are not run and count as failures (see ``NOT_RUN``); a memory guard stops any file that outgrows ``--memory``.
The modules pedalboard's tests import are checked first; missing ones are named (``--install`` installs them
with pip).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LEFT_OUT = {
    "test_external_plugins.py": "pedalboard's own plugin binaries",
    "test_memory_leaks.py": "built on test_external_plugins' binaries",
    "test_benchmark.py": "a benchmark",
}
# module pedalboard's tests import -> the package that provides it
TEST_REQUIREMENTS = {
    "mutagen": "mutagen",
    "mido": "mido",
    "psutil": "psutil",
    "mypy": "mypy",
    "pyright": "pyright",
}
# cases not run, each counted as a failure: file -> (pytest -k expression that leaves them out, why)
NOT_RUN = {
    "test_io_threading.py": (
        "not (test_simultaneous_writes_to_the_same_file and no)",
        "unlocked writers: stompbox serialises the calls instead of raising RuntimeError, so the test's 100,000 "
        "appends of a large buffer go on until memory runs out",
    ),
}
PLUGIN = "stompbox_pedalboard_shim"
PLUGIN_TEXT = '''"""Loaded by pytest (-p) before collection: pedalboard's module names resolve to stompbox."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

import stompbox.compat  # noqa: E402

stompbox.compat.install()


def _shims_first():
    # subprocesses given this process's sys.path (type checkers) must find the shims first
    if sys.path[:1] != [HERE]:
        while HERE in sys.path:
            sys.path.remove(HERE)
        sys.path.insert(0, HERE)


def pytest_collection_finish(session):
    _shims_first()


def pytest_runtest_setup(item):
    _shims_first()
'''
RUNTIME_SHIM = "import stompbox.compat\n\nstompbox.compat.install()\n"
# stub file -> the stompbox module whose public names it re-exports (for type checkers)
STUBS = {
    "pedalboard/__init__.pyi": "stompbox",
    "pedalboard/io/__init__.pyi": "stompbox.io",
    "pedalboard/_pedalboard.pyi": "stompbox._pedalboard",
    "pedalboard/midi_utils.pyi": "stompbox.midi_utils",
    "pedalboard_native/__init__.pyi": "stompbox",
    "pedalboard_native/io/__init__.pyi": "stompbox.io",
    "pedalboard_native/utils/__init__.pyi": "stompbox.utils",
    "pedalboard_native/_internal/__init__.pyi": "stompbox._internal",
}


def write_shims(root: Path) -> None:
    """The runtime shims, the pytest plugin and the type-checker stubs in ``root``."""
    import importlib

    (root / f"{PLUGIN}.py").write_text(PLUGIN_TEXT)
    for package in ("pedalboard", "pedalboard_native"):
        (root / package).mkdir()
        (root / package / "__init__.py").write_text(RUNTIME_SHIM)
    for stub, module_name in STUBS.items():
        module = importlib.import_module(module_name)
        names = sorted(n for n in getattr(module, "__all__", []) if n.isidentifier())
        lines = [f"from {module_name} import {n} as {n}\n" for n in names]
        if stub == "pedalboard/__init__.pyi":
            lines += ["from . import version as version\n", "__version__: str\n"]
        path = root / stub
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines))
    (root / "pedalboard" / "version.pyi").write_text("__version__: str\nMAJOR: int\nMINOR: int\nPATCH: int\n")


def missing_requirements() -> list[str]:
    return sorted({pkg for mod, pkg in TEST_REQUIREMENTS.items() if importlib.util.find_spec(mod) is None})


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and its descendants (Linux /proc)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run_file(command: list[str], cwd: Path, env: dict[str, str], timeout: float, memory: int) -> tuple[str, str]:
    """Output and outcome ("" when pytest ran to its end) of one pytest process, guarded in time and memory."""
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    verdict: list[str] = []

    def guard() -> None:
        start = time.monotonic()
        while process.poll() is None:
            if time.monotonic() - start > timeout:
                verdict.append(f"timed out after {timeout:.0f} s")
            elif tree_rss(process.pid) > memory:
                verdict.append(f"killed above {memory / 2**30:.1f} GiB")
            if verdict:
                os.killpg(process.pid, 9)
                return
            time.sleep(0.5)

    watcher = threading.Thread(target=guard, daemon=True)
    watcher.start()
    output, _ = process.communicate()
    watcher.join()
    code = process.returncode
    if verdict:
        return output, verdict[0]
    if code in (0, 1):
        return output, ""
    return output, {2: "interrupted (collection error)", 3: "pytest internal error", 4: "usage error",
                    5: "no tests collected"}.get(code, f"crashed (exit {code})")  # fmt: skip


def main() -> int:
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a clone of pedalboard's source")
    parser.add_argument("files", nargs="*", help="test files to run (default: all but the left-out ones)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per test file")
    parser.add_argument("--memory", type=float, default=6.0, help="GiB a test file's processes may hold")
    parser.add_argument("--install", action="store_true", help="pip-install the modules pedalboard's tests use")
    parser.add_argument("--verbose", action="store_true", help="list each file's failing tests as it ends")
    args = parser.parse_args(argv)
    tests = args.checkout / "tests"
    if not tests.is_dir():
        parser.error(f"{tests} is not a folder: give the root of a pedalboard checkout")
    missing = missing_requirements()
    if missing and args.install:
        subprocess.run([sys.executable, "-m", "pip", "install", *missing], check=True)
        missing = missing_requirements()
    if missing:
        print(f"missing modules pedalboard's tests import (pip install {' '.join(missing)}): their tests fail\n")
    names = args.files or sorted(p.name for p in tests.glob("test_*.py") if p.name not in LEFT_OUT)

    failures: dict[str, collections.Counter[str]] = {}
    rows = []
    pulse = None
    with tempfile.TemporaryDirectory(prefix="stompbox-pedalboard-suite-") as tmp:
        root = Path(tmp)
        ignore = shutil.ignore_patterns(
            "__pycache__", *(["plugins"] if "test_external_plugins.py" not in names else [])
        )
        shutil.copytree(tests, root / "tests", ignore=ignore)
        write_shims(root)
        path = os.pathsep.join(p for p in [str(root), os.environ.get("PYTHONPATH", "")] if p)
        env = dict(os.environ, PYTHONPATH=path)
        env.pop("CI", None)  # pedalboard skips its type-checker tests on CI
        try:
            for name in names:
                file_env = dict(env)
                if name == "test_audio_stream.py":
                    pulse = pulse or start_pulse()
                    if pulse is not None:
                        file_env.update(PULSE_SERVER=pulse.server, STOMPBOX_AUDIO_BACKEND="pulseaudio")
                command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN,
                           "--tb=no", "-rfE", f"tests/{name}", *extra]  # fmt: skip
                if name in NOT_RUN and "-k" not in extra:
                    command += ["-k", NOT_RUN[name][0]]
                output, outcome = run_file(command, root, file_env, args.timeout, int(args.memory * 2**30))
                summaries = re.findall(
                    r"^.*\d+ (?:passed|failed|errors?|skipped).* in [\d.]+s.*$", output, re.MULTILINE
                )
                counts: collections.Counter[str] = collections.Counter()
                for number, kind in re.findall(
                    r"(\d+) (passed|failed|errors?|skipped)", summaries[-1] if summaries else ""
                ):
                    counts["errors" if kind.startswith("error") else kind] += int(number)
                deselected = re.search(r"(\d+) deselected", summaries[-1] if summaries else "")
                if name in NOT_RUN and deselected:
                    counts["failed"] += int(deselected.group(1))
                if outcome and not counts["failed"] + counts["errors"]:
                    counts["errors"] += 1  # the file itself failed: a failure, never "passed 0 failed 0"
                rows.append((name, counts["passed"], counts["failed"], counts["errors"], outcome))
                found = re.findall(r"^(?:FAILED|ERROR) [^:\s]+(?:::([A-Za-z0-9_]+))?", output, re.MULTILINE)
                failures[name] = collections.Counter(t or "(collection)" for t in found)
                if outcome and not found:
                    failures[name][f"({outcome})"] += 1
                if name in NOT_RUN and deselected:
                    failures[name][f"(not run: {NOT_RUN[name][1]})"] += int(deselected.group(1))
                print(f"{name:<32} passed {rows[-1][1]:>6}  failed {rows[-1][2]:>5}  errors {rows[-1][3]:>3}  "
                      f"{outcome}", flush=True)  # fmt: skip
                if args.verbose:  # each file's failing tests as soon as it ends (a long run may be cut short)
                    for test, count in failures[name].most_common():
                        print(f"    {test}  x{count}", flush=True)
        finally:
            if pulse is not None:
                pulse.stop()
    total = [sum(r[i] for r in rows) for i in (1, 2, 3)]
    print(f"{'total':<32} passed {total[0]:>6}  failed {total[1]:>5}  errors {total[2]:>3}")
    print()
    for file, counter in failures.items():
        for test, count in counter.most_common():
            print(f"{file}::{test}  x{count}")
    return 1 if total[1] or total[2] else 0


def start_pulse():
    """The private PulseAudio server of stompbox's live tests, or None (with a note) when it cannot start."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "live"))
    try:
        from conftest import _available, start_pulse_server  # stompbox's tests/live/conftest.py
    except ImportError as error:
        print(f"(no private PulseAudio server: {error})")
        return None
    finally:
        sys.path.pop(0)
    reason = _available()
    if reason:
        print(f"(no private PulseAudio server: {reason})")
        return None
    return start_pulse_server()


if __name__ == "__main__":
    sys.exit(main())
