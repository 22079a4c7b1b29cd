"""Every module path pedalboard 0.9.26 code imports from resolves under stompbox.compat's names, and holds every
name pedalboard exports there."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

MODULES = [
    "pedalboard",
    "pedalboard.io",
    "pedalboard._pedalboard",
    "pedalboard.version",
    "pedalboard.midi_utils",
    "pedalboard_native",
    "pedalboard_native.io",
    "pedalboard_native.utils",
    "pedalboard_native._internal",
]
TYPING = {"List", "Dict", "Optional", "Set", "Tuple", "Type", "Union", "Iterable", "Counter"}
# pybind11's copies of enum members at module level, loop variables left in module scope, a private trie
NOT_API = {"Unknown", "ClearsAudioOnReset", "PersistsAudioOnReset", "_klass", "char", "node", "suffix"}
NOT_API |= {"_SuffixTrie", "FLOAT_SUFFIX_TRIE"}
SRC = str(Path(__file__).resolve().parents[2] / "src")


def exported(module: types.ModuleType) -> list[str]:
    names = []
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("__") or name in TYPING or name in NOT_API:
            continue
        if isinstance(value, types.ModuleType) and not value.__name__.startswith("pedalboard"):
            continue  # numpy, re, platform, ...
        if getattr(value, "__module__", None) in {"typing", "contextlib", "collections", "re", "weakref"}:
            continue
        names.append(name)
    return names


def test_every_module_and_name_resolves_under_the_alias(pb):
    expected = {m: exported(importlib.import_module(m)) for m in MODULES}
    assert len(expected["pedalboard._pedalboard"]) > 20  # the helpers, not only the classes
    script = (
        "import importlib, json, sys\n"
        "import stompbox.compat\n"
        "stompbox.compat.install()\n"
        "missing = {}\n"
        "for module, names in json.loads(sys.argv[1]).items():\n"
        "    mod = importlib.import_module(module)\n"
        "    missing[module] = [n for n in names if not hasattr(mod, n)]\n"
        "    exec(f'from {module} import ' + ', '.join(names), {})\n"  # the import statement users write
        "print(json.dumps(missing))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(expected)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {m: [] for m in MODULES}


def test_version_module_matches_pedalboards(pb):
    import pedalboard.version

    import stompbox.compat

    assert stompbox.compat.version.__version__ == pedalboard.version.__version__ == pb.__version__
    assert (stompbox.compat.version.MAJOR, stompbox.compat.version.MINOR, stompbox.compat.version.PATCH) == (
        pedalboard.version.MAJOR,
        pedalboard.version.MINOR,
        pedalboard.version.PATCH,
    )


def test_midi_utils_normalise_as_pedalboard(pb):
    import mido
    import pedalboard.midi_utils as theirs

    from stompbox import midi_utils as ours

    cases = [
        [mido.Message("note_on", note=100, velocity=3, time=0), mido.Message("note_off", note=100, time=5.0)],
        [(b"\x90\x40\x7f", 0.5), ([144, 64, 0], 2)],
    ]
    for case in cases:
        assert ours.normalize_midi_messages(case) == theirs.normalize_midi_messages(case)
    for part in (144, "90", b"\x90"):
        assert ours.parse_midi_message_part(part) == theirs.parse_midi_message_part(part)
