"""stompbox.compat: pedalboard's module names registered for unchanged pedalboard code, and the version policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import stompbox
import stompbox.compat

SRC = str(Path(__file__).resolve().parents[1] / "src")


def run(script: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)


def test_versions_own_and_pedalboards():
    assert stompbox.__version__ == "0.1.0"
    assert stompbox.__pedalboard_version__ == "0.9.26"
    assert stompbox.compat.pedalboard.__version__ == "0.9.26"
    assert stompbox.compat.version.MAJOR == 0 and stompbox.compat.version.MINOR == 9
    assert stompbox.compat.version.PATCH == 26


def test_the_view_is_stompbox_under_another_name():
    view = stompbox.compat.pedalboard
    assert view.Reverb is stompbox.Reverb and view.io is stompbox.io
    assert view.load_plugin is stompbox.load_plugin
    assert "Reverb" in dir(view)
    with pytest.raises(AttributeError):
        view.NoSuchThing  # noqa: B018


def test_unchanged_pedalboard_imports_after_install():
    done = run(
        "import sys\n"
        "sys.modules.pop('pedalboard', None)\n"
        "import stompbox, stompbox.compat\n"
        "stompbox.compat.install()\n"
        "stompbox.compat.install()\n"  # idempotent
        "import pedalboard\n"
        "from pedalboard import Reverb, Pedalboard\n"
        "from pedalboard.io import AudioFile\n"
        "from pedalboard._pedalboard import load_plugin\n"
        "from pedalboard_native import _internal\n"
        "from pedalboard_native.utils import time_stretch\n"
        "import pedalboard_native.io\n"
        "from pedalboard.midi_utils import normalize_midi_messages\n"
        "assert Reverb is stompbox.Reverb and AudioFile is stompbox.io.AudioFile\n"
        "assert load_plugin is stompbox.load_plugin and time_stretch is stompbox.time_stretch\n"
        "assert pedalboard.__version__ == '0.9.26' and stompbox.__version__ == '0.1.0'\n"
        "parts = tuple(int(p) for p in pedalboard.__version__.split('.'))\n"
        "assert parts >= (0, 7, 4)\n"  # a version gate takes pedalboard's branch
        "try:\n"
        "    import pedalboard.pedalboard\n"
        "except ModuleNotFoundError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('pedalboard.pedalboard is not a module of pedalboard either')\n"
        "stompbox.compat.uninstall()\n"
        "assert 'pedalboard' not in sys.modules and 'pedalboard_native.io' not in sys.modules\n"
        "print('ok')\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_star_import_gives_the_public_names():
    done = run(
        "import stompbox.compat\nstompbox.compat.install()\nfrom pedalboard import *\n"
        "assert Reverb and LadderFilter and load_plugin and Pedalboard and __version__ == '0.9.26'\nprint('ok')\n"
    )
    assert done.returncode == 0, done.stderr


def test_install_refuses_when_the_real_pedalboard_is_loaded():
    done = run(
        "import sys, types\n"
        "sys.modules['pedalboard'] = types.ModuleType('pedalboard')\n"
        "import stompbox.compat\n"
        "try:\n"
        "    stompbox.compat.install()\n"
        "except RuntimeError as e:\n"
        "    assert 'already imported' in str(e)\n"
        "    print('refused')\n"
    )
    assert done.stdout.strip() == "refused", done.stderr


def test_midi_utils():
    from stompbox.midi_utils import normalize_midi_messages, parse_midi_message_part

    assert normalize_midi_messages([(b"\x90\x40\x7f", 0.5), ([128, 64, 0], 1.0)]) == [
        (b"\x90\x40\x7f", 0.5),
        (b"\x80\x40\x00", 1.0),
    ]
    assert parse_midi_message_part(b"\x90") == 144 and parse_midi_message_part("12") == 12
    with pytest.raises(TypeError, match="index 1"):
        normalize_midi_messages([(b"\x90\x40\x7f", 0.5), "x"])
    with pytest.raises(NotImplementedError):
        normalize_midi_messages([("90 40 7f", 0.5)])
