"""MP3 written to a file-like object is a valid stream at every moment, not only after ``close()``.

pedalboard's streaming-encode example (a web service sending the bytes as they are written) reads the buffer
while the writer is still open. The frame reserved for the gapless tag used to be zeros until ``close()``:
pedalboard could not open such a stream and libsndfile decoded 55,817 of 132,300 frames. Here the bytes as they
were after each write are decoded by FFmpeg (PyAV), libsndfile and pedalboard.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from stompbox.io import AudioFile

SR = 44100
BLOCK = 22050
SLACK = 1152 * 3  # a frame of silence in front, LAME's delay and the frames still in its buffer


def _moments(channels: int) -> tuple[list[bytes], int]:
    """The buffer's bytes after each write (the writer still open), and the frames written by then."""
    rng = np.random.default_rng(3)
    buffer = io.BytesIO()
    snapshots = []
    with AudioFile(buffer, "w", SR, channels, format="mp3") as out:
        for _ in range(6):
            out.write((rng.standard_normal((channels, BLOCK)) * 0.1).astype(np.float32))
            snapshots.append(buffer.getvalue())
    return snapshots, BLOCK


def _check(decoded_frames: int, written: int) -> None:
    assert written - SLACK <= decoded_frames <= written + SLACK, (decoded_frames, written)


@pytest.mark.parametrize("channels", [1, 2])
def test_every_moment_starts_with_a_valid_frame_header(channels: int) -> None:
    snapshots, _ = _moments(channels)
    for data in snapshots:
        assert data[0] == 0xFF and data[1] & 0xE0 == 0xE0  # an MPEG frame sync from the first byte


@pytest.mark.parametrize("channels", [1, 2])
def test_ffmpeg_decodes_every_moment(channels: int) -> None:
    av = pytest.importorskip("av")
    snapshots, block = _moments(channels)
    for i, data in enumerate(snapshots[1:], start=2):
        with av.open(io.BytesIO(data)) as container:
            frames = sum(frame.samples for frame in container.decode(audio=0))
        _check(frames, i * block)


@pytest.mark.parametrize("channels", [1, 2])
def test_libsndfile_decodes_every_moment(channels: int) -> None:
    sf = pytest.importorskip("soundfile")
    snapshots, block = _moments(channels)
    for i, data in enumerate(snapshots[1:], start=2):
        samples, rate = sf.read(io.BytesIO(data), dtype="float32")
        assert rate == SR
        _check(samples.shape[0], i * block)


@pytest.mark.parametrize("channels", [1, 2])
def test_pedalboard_decodes_every_moment(channels: int) -> None:
    pedalboard = pytest.importorskip("pedalboard")
    snapshots, block = _moments(channels)
    for i, data in enumerate(snapshots[1:], start=2):
        with pedalboard.io.AudioFile(io.BytesIO(data)) as f:
            frames = f.read(f.frames).shape[1]
        _check(frames, i * block)


def test_the_finished_file_still_has_its_gapless_tag() -> None:
    buffer = io.BytesIO()
    rng = np.random.default_rng(3)
    with AudioFile(buffer, "w", SR, 2, format="mp3") as out:
        for _ in range(6):
            out.write((rng.standard_normal((2, BLOCK)) * 0.1).astype(np.float32))
    data = buffer.getvalue()
    assert b"Info" in data[:64] and b"LAME3.100" in data[:256]
    with AudioFile(io.BytesIO(data)) as f:
        assert f.frames == 6 * BLOCK  # exact: the tag gives the encoder delay and padding
