"""A file no decoder can read raises UnsupportedFormatError naming the user's file, never an object of ours."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest

from stompbox.io import AudioFile
from stompbox.io.errors import UnsupportedFormatError

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg CLI")


@pytest.fixture(scope="module")
def headers_only_opus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # FFmpeg with -t 0 writes an Ogg Opus of its two header pages and no audio page; FFmpeg itself then refuses
    # to read it ("End of file"), so an error is the right answer, and it must name the file
    path = tmp_path_factory.mktemp("unreadable") / "headers-only.opus"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=stereo", "-t", "0", "-c:a", "libopus",
         str(path)],
        check=True,
    )  # fmt: skip
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_streams", str(path)], capture_output=True, text=True)
    assert probe.returncode != 0  # the oracle cannot read it either
    return path


def test_a_path_is_named(headers_only_opus: Path) -> None:
    with pytest.raises(UnsupportedFormatError) as caught:
        AudioFile(str(headers_only_opus))
    assert str(headers_only_opus) in str(caught.value)
    assert "stompbox" not in str(caught.value) and "Trap" not in str(caught.value)


def test_a_file_like_is_named_as_itself(headers_only_opus: Path) -> None:
    buffer = io.BytesIO(headers_only_opus.read_bytes())
    with pytest.raises(UnsupportedFormatError) as caught:
        AudioFile(buffer)
    assert "BytesIO" in str(caught.value) and "Trap" not in str(caught.value)
