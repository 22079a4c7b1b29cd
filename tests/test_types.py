"""Type checks (mypy, when it is installed: the ``dev`` extra has it): the whole package checks clean under the
configuration of ``pyproject.toml`` (``[tool.mypy]``: strict), and every Python example of the README and the guides
checks clean as user code.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
# mypy's incremental cache, kept between runs in the temporary folder (its results equal a run from scratch: mypy
# rechecks what changed): both checks take a minute or two from cold on a loaded machine, seconds when warm
CACHE = Path(tempfile.gettempdir()) / f"stompbox-mypy-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def mypy(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(cache), *args]
    env = {**os.environ, "MYPYPATH": str(SRC)}
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


def test_the_package_checks_clean_under_strict_mypy() -> None:
    # the files, strictness and third-party settings are pyproject.toml's
    result = mypy("--config-file", str(ROOT / "pyproject.toml"), cache=CACHE / "package")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_readme_and_guide_examples_check_clean(tmp_path: Path) -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files = []
    for page in pages:
        if page.name == "api.md":
            continue  # api.md is generated from the docstrings
        blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
        if blocks:  # a page's examples run in order, one building on the ones before (as tests/test_docs.py runs them)
            example = tmp_path / f"{page.parent.name}_{page.stem}.py"
            example.write_text("\n".join(blocks))
            files.append(str(example))
    assert files, "no Python examples found"
    # user code, checked with mypy's defaults (not the package's strict settings); stompbox is read for its types,
    # its own errors are the other test's
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n")
    result = mypy("--config-file", str(config), "--follow-imports=silent", *files, cache=CACHE / "examples")
    assert result.returncode == 0, result.stdout + result.stderr
