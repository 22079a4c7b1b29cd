"""Our own VST3 instrument for the tests (tests/hosting/synth/synth.c), built with the system C compiler into
a bundle; ``build_synth`` skips the calling test when there is no compiler."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SYNTH_DIR = Path(__file__).parent / "hosting" / "synth"


def build_synth(folder: Path, editor: bool = False) -> str:
    """Build ``StompboxTestSynth.vst3`` (with its X11 editor if ``editor``) in ``folder``; returns its path."""
    from stompbox.hosting.vst3.module import _arch_folder

    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the test VST3 instrument")
    bundle = folder / "StompboxTestSynth.vst3"
    binary = bundle / "Contents" / _arch_folder() / "StompboxTestSynth.so"
    binary.parent.mkdir(parents=True)
    flags = ["-DSYNTH_EDITOR", "-ldl"] if editor else []
    cmd = [cc, "-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-o", str(binary), str(SYNTH_DIR / "synth.c")]
    result = subprocess.run([*cmd, *flags, "-lm"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"building the test synth failed:\n{result.stderr}")
    return str(bundle)
