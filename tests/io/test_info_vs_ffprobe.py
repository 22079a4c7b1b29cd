"""``stompbox info`` and ffprobe agree over the differential suite's foreign files (``tests/_foreign.py``): the
codec by FFmpeg's name, a format FFmpeg's name lists, the sample rate, the channel count and layout, and the
frames (after info's reading pass, what FFmpeg decodes, with the suite's priming rule). Files whose length is
still pending in the differential suite are held to the rest."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

import _foreign
from stompbox.cli.info import describe

pytestmark = pytest.mark.skipif(
    bool(_foreign.missing_tools()), reason=f"foreign encoders missing: {_foreign.missing_tools()}"
)


def _differential_pending() -> dict[str, str]:
    """The differential suite's open cases (``PENDING`` of tests/io/test_differential.py). Loaded from its file:
    tests/io is not on the import path (``from test_differential import PENDING`` failed at collection)."""
    path = Path(__file__).with_name("test_differential.py")
    spec = importlib.util.spec_from_file_location("_differential_for_info", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.PENDING)


PENDING = _differential_pending()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> _foreign.Corpus:
    return _foreign.Corpus(tmp_path_factory.mktemp("foreign-info"))


def ffprobe(path: str) -> dict:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
         "format=format_name:stream=codec_name,sample_rate,channels,channel_layout", "-of", "json", path],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    found = json.loads(out)
    return {**found["streams"][0], "format_name": found["format"]["format_name"]}


@pytest.mark.parametrize("spec", _foreign.SPECS, ids=[spec.id for spec in _foreign.SPECS])
def test_info_agrees_with_ffprobe(corpus: _foreign.Corpus, spec: _foreign.Spec) -> None:
    path = str(corpus.path(spec))
    theirs = ffprobe(path)
    ours = describe(path, argparse.Namespace(quiet=True), peak=True)
    assert ours["codec"] == theirs["codec_name"]
    assert ours["format"] in theirs["format_name"].split(",")
    assert ours["samplerate"] == int(theirs["sample_rate"])
    assert ours["num_channels"] == theirs["channels"]
    layout = theirs.get("channel_layout")
    if layout and layout != "unknown":  # ffprobe's "unknown" is stompbox's "N channels"
        assert ours["channel_layout"] == layout
    if _foreign.PENDING.get(f"{spec.id}:frames") or _foreign.PENDING.get(spec.id):
        return  # the length is the differential suite's open case
    decoded = corpus.decoded(spec)
    assert ours["frames"] == _foreign.expected_frames(spec, corpus.path(spec), decoded.shape[1])
    assert ours["exact_duration"] is True
    if not spec.lossless:
        assert ours["bit_depth"] is None  # a lossy codec has no bit depth (MP3 showed "32-bit float32")
