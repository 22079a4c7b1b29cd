"""tools/pedalboard_suite.py on a small fake checkout: the checkout's own pedalboard/ folder does not shadow the
shims, a file that fails to collect is an error (not "passed 0 failed 0"), and the exit status says so."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_shims_win_and_collection_errors_count(tmp_path):
    checkout = tmp_path / "pedalboard-checkout"
    (checkout / "pedalboard").mkdir(parents=True)
    (checkout / "pedalboard" / "__init__.py").write_text("raise ImportError('the checkout source was imported')\n")
    tests = checkout / "tests"
    tests.mkdir()
    (tests / "__init__.py").write_text("")
    (tests / "test_ok.py").write_text(
        "import pedalboard\nfrom pedalboard._pedalboard import load_plugin\nfrom pedalboard_native import _internal\n"
        "import stompbox\n\n\ndef test_alias():\n    assert pedalboard.Reverb is stompbox.Reverb\n"
        "    assert pedalboard.__version__ == stompbox.__pedalboard_version__\n"
        "\n\ndef test_fails():\n    assert False\n"
    )
    (tests / "test_broken.py").write_text("import a_module_nobody_has  # noqa\n\n\ndef test_x():\n    pass\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pedalboard_suite.py"), str(checkout), "test_ok.py", "test_broken.py"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert re.search(r"test_ok\.py\s+passed\s+1\s+failed\s+1\s+errors\s+0", out), out
    assert re.search(r"test_broken\.py\s+passed\s+0\s+failed\s+0\s+errors\s+1\s+interrupted", out), out
    assert re.search(r"total\s+passed\s+1\s+failed\s+1\s+errors\s+1", out), out
    assert "test_ok.py::test_fails  x1" in out and "test_broken.py::(collection)  x1" in out
