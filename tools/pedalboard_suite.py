"""Run pedalboard's own test suite against stompbox: the drop-in promise, checked with the other side's tests.

Usage:
    python tools/pedalboard_suite.py PEDALBOARD_CHECKOUT [TEST_FILE ...] [-- PYTEST_ARGS ...]

PEDALBOARD_CHECKOUT is a clone of pedalboard's source (its ``tests/`` folder is what runs; nothing of it is
copied into this project, whose licence differs). A temporary folder of shim modules makes ``import
pedalboard``, ``pedalboard.io``, ``pedalboard.utils`` and ``pedalboard_native._internal`` resolve to stompbox,
and each test file runs in its own pytest process (one crash cannot hide the other files' results). At the
end, a table: passed and failed per file, and the failing tests grouped by name.

Files left out by default, because they test pedalboard's internals rather than its API: the external-plugin
tests (pedalboard's own plugin binaries and ``pedalboard._pedalboard`` helpers), ``test_memory_leaks`` (built
on those), ``test_midi_utils`` (``pedalboard.midi_utils``), ``test_type_hints`` (mypy on pedalboard's stubs),
``test_tensorflow`` and ``test_benchmark``; and ``test_io_threading``, whose unlocked cases expect a
``RuntimeError`` from the second thread where stompbox serialises the calls (a documented difference): its
writer case then appends a 200 MB array 100,000 times and runs the machine out of memory. Failures to expect:
tests parametrised over ``get_supported_write_formats()`` also run on the formats stompbox writes and
pedalboard cannot on Linux (Opus at rates Opus does not support raises ValueError; lossy tolerances written for
other codecs), the audio-device tests need a sound server, and pybind11's own error texts ("incompatible
function arguments").
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SHIMS = {
    "pedalboard.py": (
        "import sys\n"
        "import stompbox, stompbox.io, stompbox.utils, stompbox._internal\n"
        "sys.modules['pedalboard'] = stompbox\n"
        "sys.modules['pedalboard.io'] = stompbox.io\n"
        "sys.modules['pedalboard.utils'] = stompbox.utils\n"
    ),
    "pedalboard_native.py": (
        "import sys\n"
        "import stompbox, stompbox.io, stompbox.utils, stompbox._internal\n"
        "sys.modules['pedalboard_native'] = stompbox\n"
        "sys.modules['pedalboard_native.io'] = stompbox.io\n"
        "sys.modules['pedalboard_native.utils'] = stompbox.utils\n"
        "sys.modules['pedalboard_native._internal'] = stompbox._internal\n"
    ),
}

LEFT_OUT = {
    "test_external_plugins.py",
    "test_memory_leaks.py",
    "test_midi_utils.py",
    "test_type_hints.py",
    "test_tensorflow.py",
    "test_benchmark.py",
    "test_io_threading.py",
}


def main() -> int:
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a clone of pedalboard's source")
    parser.add_argument("files", nargs="*", help="test files to run (default: all but the internal ones)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per test file")
    args = parser.parse_args(argv)
    tests = args.checkout / "tests"
    if not tests.is_dir():
        parser.error(f"{tests} is not a folder: give the root of a pedalboard checkout")
    files = [tests / f for f in args.files] or sorted(p for p in tests.glob("test_*.py") if p.name not in LEFT_OUT)
    failures: dict[str, collections.Counter[str]] = {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="stompbox-pedalboard-shim-") as shim:
        for name, text in SHIMS.items():
            Path(shim, name).write_text(text)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([shim, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        for path in files:
            command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no", "-rf", str(path)]
            try:
                done = subprocess.run(
                    [*command, *extra], cwd=args.checkout, env=env, capture_output=True, text=True,
                    timeout=args.timeout,
                )  # fmt: skip
                output, code = done.stdout + done.stderr, done.returncode
            except subprocess.TimeoutExpired:
                output, code = "", "timeout"
            counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|errors?|skipped)", output)}
            note = f"crashed ({code})" if code not in (0, 1) and not counts else ""
            rows.append((path.name, counts.get("passed", 0), counts.get("failed", 0), note))
            names = re.findall(r"^FAILED [^:]+::([A-Za-z0-9_]+)", output, re.MULTILINE)
            failures[path.name] = collections.Counter(names)
            print(f"{path.name:<32} passed {rows[-1][1]:>6}  failed {rows[-1][2]:>5}  {rows[-1][3]}", flush=True)
    print()
    for file, counter in failures.items():
        for test, count in counter.most_common():
            print(f"{file}::{test}  x{count}")
    return 1 if any(r[2] or r[3] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
