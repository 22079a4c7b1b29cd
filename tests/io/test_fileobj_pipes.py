"""File-like objects: non-seekable streams (pipes) read front to back with the same samples as the same bytes in a
file, BytesIO and open binary files for writing, and a custom file-like whose read raises."""

from __future__ import annotations

import io
import subprocess
import threading

import numpy as np
import pytest

from stompbox.io import AudioFile, UnsupportedFormatError

SR = 44100


def tone(seconds: float = 1.5, rate: int = SR) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    noise = np.random.default_rng(3).standard_normal((2, t.size)) * 0.05
    return (0.4 * np.sin(2 * np.pi * np.array([[220.0], [330.0]]) * t) + noise).astype(np.float32)


def through_a_pipe(data: bytes) -> tuple[subprocess.Popen, threading.Thread]:
    """``cat`` fed by a thread (a pipe holds only 64 kB: writing everything first would block)."""
    process = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def feed() -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(data)
        except BrokenPipeError:
            pass
        finally:
            process.stdin.close()

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return process, thread


# (format, writer kwargs, sample rate, how the pipe's samples compare with the file's: None = identical)
PIPES = [
    ("wav", {"bit_depth": 8}, SR, None),
    ("wav", {"bit_depth": 16}, SR, None),
    ("wav", {"bit_depth": 24}, SR, None),
    ("wav", {"bit_depth": 32}, SR, None),
    ("flac", {"bit_depth": 16}, SR, None),
    ("flac", {"bit_depth": 24}, SR, None),
    ("aiff", {"bit_depth": 24}, SR, None),
    ("mp3", {}, SR, 1e-4),  # FFmpeg's and mpg123's decoders differ by float rounding
    ("ogg", {}, SR, 1e-5),
    ("opus", {}, 48000, 1e-5),
]


@pytest.mark.parametrize(("ext", "kwargs", "rate", "tolerance"), PIPES, ids=[f"{p[0]}{p[1]}" for p in PIPES])
def test_a_pipe_reads_what_the_file_holds(ext, kwargs, rate, tolerance):
    data = AudioFile.encode(tone(rate=rate), rate, ext, 2, **kwargs)
    with AudioFile(io.BytesIO(data)) as f:
        expected = f.read(f.frames)
        dtype = f.file_dtype
    process, thread = through_a_pipe(data)
    with AudioFile(process.stdout) as f:
        assert not f.seekable() and f.samplerate == rate and f.num_channels == 2
        assert f.file_dtype == dtype
        blocks = list(f.chunks(7000))
        got = np.concatenate(blocks, axis=1)
        assert f.exact_duration_known and f.frames == got.shape[1]
        with pytest.raises(ValueError, match="not seekable"):
            f.seek(0)
    process.wait()
    thread.join()
    assert got.shape == expected.shape  # MP3 included: gapless through a pipe too (from its LAME tag)
    if tolerance is None:
        np.testing.assert_array_equal(got, expected)
    else:
        assert np.max(np.abs(got - expected)) < tolerance


def test_a_pipe_can_skip_forward():
    data = AudioFile.encode(tone(), SR, "flac", 2)
    with AudioFile(io.BytesIO(data)) as f:
        expected = f.read(f.frames)
    process, thread = through_a_pipe(data)
    with AudioFile(process.stdout) as f:
        f.seek(1000)
        np.testing.assert_array_equal(f.read(500), expected[:, 1000:1500])
        f.seek(30000)
        assert f.tell() == 30000
        np.testing.assert_array_equal(f.read(500), expected[:, 30000:30500])
    process.wait()
    thread.join()


def test_an_m4a_in_a_pipe_says_why_it_cannot_be_read():
    data = AudioFile.encode(tone(), SR, "m4a", 2)
    process, thread = through_a_pipe(data)
    with pytest.raises(UnsupportedFormatError, match="non-seekable"):
        AudioFile(process.stdout)
    process.stdout.close()
    process.wait()
    thread.join()


def test_write_to_bytesio_and_open_files_equals_encode(tmp_path):
    x = tone(0.5)
    for ext in ("wav", "flac", "aiff", "mp3"):  # deterministic encoders: byte-identical
        encoded = AudioFile.encode(x, SR, ext, 2)
        buffer = io.BytesIO()
        with AudioFile(buffer, "w", SR, 2, format=ext) as out:
            out.write(x)
        assert buffer.getvalue() == encoded, ext
        path = tmp_path / f"f.{ext}"
        with open(path, "wb") as handle:
            with AudioFile(handle, "w", SR, 2, format=ext) as out:
                out.write(x[:, :1000])
                out.write(x[:, 1000:])  # two writes: same bytes as one
        assert path.read_bytes() == encoded, ext
        with open(path, "rb") as handle, AudioFile(handle) as f:
            assert f.frames == x.shape[1]


def test_format_argument_beats_the_file_name():
    class Named(io.BytesIO):
        name = "sound.wav"

    target = Named()
    with AudioFile(target, "w", SR, 2, format="flac") as out:
        out.write(tone(0.1))
    assert target.getvalue()[:4] == b"fLaC"
    target = Named()
    with AudioFile(target, "w", SR, 2) as out:
        out.write(tone(0.1))
    assert target.getvalue()[:4] == b"RIFF"


def test_an_exception_in_the_file_like_reaches_the_caller():
    data = AudioFile.encode(tone(), SR, "flac", 2)

    class Failing(io.BytesIO):
        armed = False

        def read(self, size=-1):  # noqa: ANN001, ANN202
            if self.armed:
                raise ConnectionResetError("the network went away")
            return super().read(size)

    source = Failing(data)
    with AudioFile(source) as f:
        f.read(100)
        source.armed = True
        with pytest.raises((ConnectionResetError, ValueError)):
            while f.read(50000).shape[1]:
                pass
