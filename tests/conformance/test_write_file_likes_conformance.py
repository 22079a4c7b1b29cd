"""Writing to file-like objects, stompbox against pedalboard 0.9.26: where the file goes, and what is raised."""

from __future__ import annotations

import io

import numpy as np
import pytest

import stompbox

pytest.importorskip("pedalboard")

PREFIX = b"P" * 54
# pedalboard's MP3 writer goes back to byte 0 of the stream for its header (it overwrote the prefix): not compared
FORMATS = ["wav", "aiff", "flac", "ogg"]


def _tone(frames: int = 4410) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * 330.0 * np.arange(frames) / 44100.0)).astype(np.float32)


def _after_prefix(module, fmt: str) -> bytes:
    stream = io.BytesIO(PREFIX)
    stream.seek(len(PREFIX))
    with module.io.AudioFile(stream, "w", 44100, 1, format=fmt) as f:
        f.write(_tone())
    data = stream.getvalue()
    assert data[: len(PREFIX)] == PREFIX
    return data[len(PREFIX) :]


@pytest.mark.parametrize("fmt", FORMATS)
def test_both_write_from_the_streams_position_and_read_back_the_same(pb, fmt: str) -> None:
    ours, theirs = _after_prefix(stompbox, fmt), _after_prefix(pb, fmt)
    for data in (ours, theirs):
        with pb.io.AudioFile(io.BytesIO(data)) as f:
            assert f.samplerate == 44100
            back = f.read(f.frames)[0]
        if fmt != "ogg":
            # 16-bit: within half a step in stompbox; pedalboard's own writer rounds differently (1.5 steps seen)
            np.testing.assert_allclose(back[:4410], _tone(), atol=2.0 / 32767)


def test_two_aiff_files_in_one_stream_as_pedalboard(pb) -> None:
    sizes = []
    for module in (stompbox, pb):
        stream = io.BytesIO()
        files = [module.io.AudioFile(stream, "w", 44100, 2, format="aif") for _ in range(2)]
        for f in files:
            f.close()
        sizes.append(len(stream.getvalue()))
    assert sizes[0] == sizes[1] == 2 * 54  # two empty 16-bit AIFF headers (FORM, COMM, SSND)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_text_stream_raises_the_same_type_error(pb, fmt: str) -> None:
    messages = []
    for module in (stompbox, pb):
        with pytest.raises(TypeError) as caught:
            with module.io.AudioFile(io.StringIO(), "w", 44100, 2, format=fmt) as f:
                f.write(np.zeros((2, 10), np.float32))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_a_seek_error_reaches_the_caller_as_in_pedalboard(pb) -> None:
    class Refusing(io.BytesIO):
        def seek(self, position: int) -> int:  # type: ignore[override]
            raise ValueError(f"refused a seek to {position}")

    for module in (stompbox, pb):
        with pytest.raises(ValueError, match="refused a seek to") as caught:
            with module.io.AudioFile(Refusing(), "w", 44100, 2, format="flac"):
                pass
        assert type(caught.value) is ValueError
