"""Type checks (mypy, when it is installed: the ``dev`` extra has it): the modules listed in STRICT check clean
under ``mypy --strict``, and every Python example of the README and the guides checks clean as user code.

The list only grows: a module joins it once it checks clean, and stays clean from then on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

STRICT = [
    "stompbox/_base/__init__.py",
    "stompbox/_base/atomic.py",
    "stompbox/_base/channels.py",
    "stompbox/_base/errors.py",
    "stompbox/_base/layout.py",
    "stompbox/_base/limits.py",
    "stompbox/_base/version.py",
    "stompbox/_internal.py",
    "stompbox/analysis/__init__.py",
    "stompbox/chains.py",
    "stompbox/core/errors.py",
    "stompbox/core/jit.py",
    "stompbox/core/layout.py",
    "stompbox/core/registry.py",
    "stompbox/core/serial.py",
    "stompbox/examples.py",
    "stompbox/hosting/__init__.py",
    "stompbox/hosting/loading.py",
    "stompbox/io/errors.py",
    "stompbox/io/quality.py",
    "stompbox/io/raw.py",
    "stompbox/io/reader.py",
    "stompbox/limits.py",
    "stompbox/live/__init__.py",
    "stompbox/live/device.py",
    "stompbox/utils.py",
]


# guide pages whose examples do not check clean yet (the library's types, not the examples, are what is missing:
# Pedalboard[i] is a Plugin without its effect's attributes, the callable stompbox.analysis.loudness module,
# Tremolo's constructor); they join the check once they do
PENDING_PAGES = {"quickstart.md", "live.md", "effects.md"}


def mypy(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    # the modules a checked file imports are read for their types, but their own errors are not reported
    command = [sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports"]
    command += ["--no-error-summary", "--cache-dir", str(cache), *args]
    env = {**os.environ, "MYPYPATH": str(SRC)}
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


def test_the_listed_modules_check_clean_under_strict_mypy(cache: Path) -> None:
    result = mypy("--strict", *(str(SRC / path) for path in STRICT), cache=cache)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_readme_and_guide_examples_check_clean(tmp_path: Path, cache: Path) -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files = []
    for page in pages:
        if page.name == "api.md" or page.name in PENDING_PAGES:
            continue  # api.md is generated from the docstrings
        blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
        if blocks:  # a page's examples run in order, one building on the ones before (as tests/test_docs.py runs them)
            example = tmp_path / f"{page.parent.name}_{page.stem}.py"
            example.write_text("\n".join(blocks))
            files.append(str(example))
    assert files, "no Python examples found"
    result = mypy(*files, cache=cache)
    assert result.returncode == 0, result.stdout + result.stderr
