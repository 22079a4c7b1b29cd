"""Fixtures of the hosting tests: our own VST3 instrument (tests/hosting/synth/synth.c) built with the system C
compiler into a bundle, and a private X server (Xvfb) for editor windows. Each skips cleanly when its tool is
missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from _vst3_synth import build_synth


@pytest.fixture(scope="session")
def vst3_synth(tmp_path_factory) -> str:
    """The path of the ``StompboxTestSynth.vst3`` bundle (no editor)."""
    return build_synth(tmp_path_factory.mktemp("synth"), editor=False)


@pytest.fixture(scope="session")
def vst3_synth_with_editor(tmp_path_factory) -> str:
    """The same instrument built with its trivial X11 editor."""
    return build_synth(tmp_path_factory.mktemp("synth_editor"), editor=True)


@pytest.fixture(scope="session")
def xvfb_display() -> Iterator[str]:
    """A private virtual X server (``Xvfb``, which picks a free display number itself) for the session;
    yields its display name (``":N"``)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(write_fd), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    number = b""
    deadline = time.monotonic() + 15.0
    try:
        os.set_blocking(read_fd, False)
        while time.monotonic() < deadline and not number.endswith(b"\n") and proc.poll() is None:
            try:
                number += os.read(read_fd, 16)
            except BlockingIOError:
                time.sleep(0.02)
    finally:
        os.close(read_fd)
    if not number.strip().isdigit():
        proc.kill()
        proc.wait()
        pytest.skip("could not start Xvfb")
    try:
        yield f":{int(number)}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
