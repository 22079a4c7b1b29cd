"""Running the user guide's examples (docs/guide/*.md): shared by tests/test_docs.py and the live-audio page's
test in tests/live/test_docs_live.py. See tests/test_docs.py for the rules a page follows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"
SR = 44100
LIVE_MARK = "<!-- docs-test: live -->"
#: pages in the order a reader meets them (the index links them in this order)
PAGES = [
    "quickstart.md",
    "streaming.md",
    "effects.md",
    "plugins.md",
    "live.md",
    "cli.md",
    "batch.md",
    "migrating.md",
]


def blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", page.read_text(), flags=re.S)


def is_live(page: Path) -> bool:
    return page.exists() and page.read_text().startswith(LIVE_MARK)


def command_lines(page: Path) -> list[str]:
    lines = []
    for block in blocks(page, "sh"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("stompbox "):
                lines.append(line)
    return lines


def make_inputs(folder: Path) -> None:
    """The files the examples name."""
    import soundfile as sf

    import stompbox
    from stompbox.examples import example_clip
    from stompbox.io import AudioFile

    music = example_clip(SR, 2.0).astype(np.float32)
    for name in ("in.wav", "in.flac", "in.mp3", "in.m4a"):
        with AudioFile(str(folder / name), "w", SR, 2) as f:
            f.write(music)
    t = np.arange(SR // 2) / SR
    ir = (np.random.default_rng(1).standard_normal(t.size) * np.exp(-t / 0.08)).astype(np.float32)
    sf.write(folder / "ir.wav", ir, SR)
    (folder / "in_dir").mkdir()
    for i in range(3):
        sf.write(folder / "in_dir" / f"take{i}.wav", music[:, i * SR // 4 : (i + 2) * SR // 4].T, SR)
    stompbox.Pedalboard([stompbox.Gain(-3), stompbox.Reverb(room_size=0.5)]).save(str(folder / "chain.yaml"))


def needed_plugins(page: Path) -> list[str]:
    return sorted(set(re.findall(r"[\"'](/usr/lib/(?:vst3|lv2|ladspa)/[^\"']+)[\"']", page.read_text())))


def run_page(page: Path, folder: Path) -> None:
    """Run every example of ``page`` in ``folder`` (the current directory)."""
    missing = [p for p in needed_plugins(page) if not os.path.exists(p)]
    if missing:
        pytest.skip(f"{page.name} uses plugins not installed here: {missing}")
    namespace: dict = {"__name__": f"__docs_{page.stem}__"}
    for number, code in enumerate(blocks(page, "python")):
        exec(compile(code, f"{page.name} (example {number + 1})", "exec"), namespace)  # noqa: S102
    env = {**os.environ, "MPLBACKEND": "Agg"}
    for line in command_lines(page):
        command, _, redirect = line.split("|")[0].partition(" > ")  # a pipe runs up to the pipe
        args = shlex.split(command)
        result = subprocess.run(
            [sys.executable, "-m", "stompbox", *args[1:]], capture_output=True, env=env, timeout=300, cwd=folder
        )
        assert result.returncode == 0, f"{page.name}: {line}\n{result.stderr.decode(errors='replace')}"
        if redirect.strip():
            (folder / redirect.strip()).write_bytes(result.stdout)
            assert result.stdout, f"{page.name}: {line} wrote nothing to standard output"
