"""Writing to file-like objects: where the file goes in the stream, and which exceptions reach the caller."""

from __future__ import annotations

import io

import numpy as np
import pytest

from stompbox.io import AudioFile
from stompbox.io.errors import AudioWriteError

LIBSNDFILE_FORMATS = ["aiff", "flac", "ogg", "mp3"]  # written by libsndfile from a file-like
PREFIX = b"P" * 54


def _tone(frames: int = 4410, channels: int = 1) -> np.ndarray:
    t = np.arange(frames, dtype=np.float64) / 44100.0
    return np.stack([0.5 * np.sin(2 * np.pi * (220.0 * (c + 1)) * t) for c in range(channels)]).astype(np.float32)


def _encode(fmt: str, audio: np.ndarray) -> bytes:
    out = io.BytesIO()
    with AudioFile(out, "w", 44100, audio.shape[0], format=fmt) as f:
        f.write(audio)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["wav", *LIBSNDFILE_FORMATS])
def test_a_file_is_written_from_the_streams_position_and_the_bytes_before_it_are_kept(fmt: str) -> None:
    audio = _tone()
    alone = _encode(fmt, audio)
    stream = io.BytesIO(PREFIX)
    stream.seek(len(PREFIX))
    with AudioFile(stream, "w", 44100, 1, format=fmt) as f:
        f.write(audio)
    data = stream.getvalue()
    assert data[: len(PREFIX)] == PREFIX  # FLAC and MP3 headers went to byte 0, over these
    assert data[len(PREFIX) :] == alone


def test_aiff_files_follow_each_other_in_one_stream() -> None:
    stream = io.BytesIO()
    first = AudioFile(stream, "w", 44100, 2, format="aif")
    second = AudioFile(stream, "w", 44100, 2, format="aiff")  # libsndfile refused: bytes before the position
    first.close()
    second.close()
    header = len(_encode("aiff", np.zeros((2, 0), np.float32)))
    assert len(stream.getvalue()) == 2 * header


@pytest.mark.parametrize("fmt", LIBSNDFILE_FORMATS)
def test_bytes_after_the_position_are_not_read_as_part_of_the_new_file(fmt: str) -> None:
    audio = _tone()
    alone = _encode(fmt, audio)
    stream = io.BytesIO(b"\xff" * (len(alone) + 5000))  # stale bytes, longer than the new file
    with AudioFile(stream, "w", 44100, 1, format=fmt) as f:
        f.write(audio)
    assert stream.getvalue()[: len(alone)] == alone


@pytest.mark.parametrize("fmt", ["wav", *LIBSNDFILE_FORMATS])
def test_a_text_stream_raises_the_streams_own_type_error(fmt: str) -> None:
    expected = None
    try:
        io.StringIO().write(b"")  # type: ignore[arg-type]
    except TypeError as exc:
        expected = str(exc)
    assert expected is not None and "bytes" in expected
    with pytest.raises(TypeError) as caught:
        with AudioFile(io.StringIO(), "w", 44100, 2, format=fmt) as f:  # type: ignore[arg-type]
            f.write(_tone(100, 2))
    assert expected in str(caught.value)  # Ogg pages went out as memoryviews: "got 'memoryview'"


class _SeekRefused(io.BytesIO):
    def seek(self, position: int, whence: int = 0) -> int:  # noqa: ARG002
        raise ValueError("this stream does not seek")


@pytest.mark.parametrize("fmt", ["flac", "aiff"])
def test_a_file_likes_seek_error_reaches_the_caller_unchanged(fmt: str) -> None:
    with pytest.raises(ValueError, match="this stream does not seek") as caught:
        with AudioFile(_SeekRefused(), "w", 44100, 2, format=fmt) as f:
            f.write(_tone(100, 2))
    assert type(caught.value) is ValueError  # not soundfile's LibsndfileError


class _OneArgumentSeek(io.BytesIO):
    def seek(self, position: int) -> int:  # type: ignore[override]
        return super().seek(position)


@pytest.mark.parametrize("fmt", LIBSNDFILE_FORMATS)
def test_a_seek_without_whence_is_enough(fmt: str) -> None:
    stream = _OneArgumentSeek()
    with AudioFile(stream, "w", 44100, 1, format=fmt) as f:
        f.write(_tone())
    assert stream.getvalue() == _encode(fmt, _tone())


class _Full(io.BytesIO):
    def write(self, data: object) -> int:  # noqa: ARG002
        return 0  # accepts nothing, raises nothing


@pytest.mark.parametrize("fmt", ["flac", "aiff", "mp3"])
def test_a_failed_libsndfile_write_is_a_runtime_error_of_stompbox(fmt: str) -> None:
    with pytest.raises(RuntimeError, match="Unable to write data to audio file") as caught:
        with AudioFile(_Full(), "w", 44100, 1, format=fmt) as f:
            f.write(_tone(44100))
    assert isinstance(caught.value, AudioWriteError)
    assert isinstance(caught.value, OSError)
    assert not type(caught.value).__module__.startswith("soundfile")
