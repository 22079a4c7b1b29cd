"""Bad input to AudioFile: clear exceptions of the right classes (all ValueErrors, as pedalboard's), never a crash,
a hang, or a file left behind."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest

from stompbox.core.errors import LayoutError, StompboxError
from stompbox.io import AudioFile, ClosedFileError, CorruptAudioError, TruncatedAudioWarning, UnsupportedFormatError
from stompbox.io.errors import AudioFileError, AudioFileNotFoundError, NotAnAudioFileError

SR = 44100


def stereo(seconds: float = 0.5) -> np.ndarray:
    return (np.random.default_rng(0).standard_normal((2, int(SR * seconds))) * 0.2).astype(np.float32)


def test_a_missing_path_is_file_not_found_and_value_error(tmp_path):
    missing = tmp_path / "nope.wav"
    with pytest.raises(AudioFileNotFoundError, match="does not exist") as caught:
        AudioFile(missing)
    assert isinstance(caught.value, FileNotFoundError) and isinstance(caught.value, ValueError)
    assert str(caught.value) == f"Failed to open audio file: file does not exist: {missing}"


def test_a_directory(tmp_path):
    with pytest.raises(NotAnAudioFileError, match="directory") as caught:
        AudioFile(tmp_path)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, IsADirectoryError)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\0",
        np.random.default_rng(1).bytes(5000),
        b"ID3\x04\x00\x00\x00\x00\x00\x0a" + bytes(10),  # an ID3 tag and no MP3 frames at all
        b"\xff\xfb\x90\x00" * 3,  # MP3 frame headers without data
        b"OggS" + bytes(100),
        b"RIFF\x24\x00\x00\x00WAVEfmt ",
        b"fLaC" + bytes(30),
    ],
    ids=["empty", "one-byte", "random", "id3-only", "mp3-headers", "ogg-zeros", "riff-cut", "flac-zeros"],
)
def test_data_that_is_not_audio(tmp_path, data):
    path = tmp_path / "bad.mp3"
    path.write_bytes(data)
    for source in (path, io.BytesIO(data)):
        with pytest.raises(AudioFileError) as caught:
            with AudioFile(source) as f:
                f.read(100000)
        assert isinstance(caught.value, ValueError) and isinstance(caught.value, StompboxError)


@pytest.mark.parametrize("ext", ["wav", "flac", "ogg", "mp3", "m4a"])
def test_truncated_files_raise_a_clear_error_or_read_what_is_there(ext):
    data = AudioFile.encode(stereo(1.0), SR, ext, 2)
    for cut in (len(data) // 2, 200):
        try:
            with AudioFile(io.BytesIO(data[:cut])) as f:
                total = 0
                while (block := f.read(8192)).shape[1]:
                    assert np.all(np.isfinite(block))
                    total += block.shape[1]
                assert total <= SR + 2048
        except AudioFileError:
            pass


def test_a_truncated_tagged_mp3_reads_what_is_present_with_a_warning():
    """An MP3 with a Xing/LAME tag knows its exact length (44100 frames here). Cut in half, it used to report
    44100 exact frames and then read 20783 without a word; now every sample present is delivered, and one
    TruncatedAudioWarning says the file is cut short (issue 17: as FFmpeg and SoX do). A damaged last frame (one
    byte missing: 277 samples lost, less than one 1152-sample frame) is not called truncation: the read ends
    there and the length is corrected."""
    data = AudioFile.encode(stereo(1.0), SR, "mp3", 2)
    with AudioFile(io.BytesIO(data)) as f:
        assert f.exact_duration_known and f.frames == SR
        assert f.read(2 * SR).shape == (2, SR)
    with AudioFile(io.BytesIO(data[: len(data) // 2])) as f:
        assert f.exact_duration_known and f.frames == SR
        delivered = f.read(16384).shape[1]
        assert delivered == 16384
        with pytest.warns(TruncatedAudioWarning, match="before the 44100 frames its header declares"):
            while block := f.read(4096).shape[1]:
                delivered += block
        assert SR // 2 - 2 * 1152 < delivered < SR // 2 + 1152
        assert f.frames == delivered and f.exact_duration_known
    with AudioFile(io.BytesIO(data[:-1])) as f:
        got = f.read(2 * SR).shape[1]
        assert SR - 1152 < got < SR
        assert f.frames == got and f.exact_duration_known


def _ffmpeg_mp3(rate: int, channels: int, frames: int, vbr: bool) -> bytes:
    """An MP3 written by FFmpeg's LAME encoder (through PyAV), with its Xing/Info + LAME tag."""
    av = pytest.importorskip("av")
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp3") as container:
        stream = container.add_stream("libmp3lame", rate=rate, layout="mono" if channels == 1 else "stereo")
        if vbr:
            stream.codec_context.qscale = 4
        else:
            stream.bit_rate = 128000
        t = np.arange(frames) / rate
        tone = (0.3 * np.sin(2 * np.pi * 440 * t) * 2**31).astype(np.int32)
        planar = stream.codec_context.format.name.endswith("p")
        step = stream.codec_context.frame_size or 1152
        for start in range(0, frames, step):
            block = np.repeat(tone[None, start : start + step], channels, 0)
            frame = av.AudioFrame.from_ndarray(
                block if planar else block.T.reshape(1, -1).copy(), format=stream.codec_context.format.name,
                layout=stream.layout.name,
            )  # fmt: skip
            frame.sample_rate = rate
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "rate, channels, vbr", [(8000, 1, False), (22050, 2, True), (44100, 2, False), (48000, 1, True)]
)
def test_tagged_mp3s_from_another_encoder_are_not_called_truncated(rate, channels, vbr):
    """The truncation check trusts the tag's length; files FFmpeg's LAME wrote (CBR and VBR, MPEG-1 and 2/2.5)
    read to their end without a false alarm, and give the frames they announce."""
    data = _ffmpeg_mp3(rate, channels, int(rate * 1.7), vbr)
    with AudioFile(io.BytesIO(data)) as f:
        assert f.exact_duration_known
        announced = f.frames
        assert abs(announced - int(rate * 1.7)) <= 2
        assert f.read(announced + 5000).shape[1] == announced


def test_bytes_are_not_a_path():
    with pytest.raises(TypeError, match="BytesIO"):
        AudioFile(b"/tmp/x.wav")
    with pytest.raises(TypeError):
        AudioFile(12345)


def test_modes():
    for mode in ("rb", "a", "x", "", None, 44100):
        with pytest.raises(TypeError, match=r'read mode \("r"\) or write mode \("w"\)'):
            AudioFile("x.wav", mode)
    with pytest.raises(TypeError, match="samplerate"):
        AudioFile(io.BytesIO(), "w")


def test_encode_with_an_unknown_format_is_a_value_error():
    with pytest.raises(ValueError, match="xyz"):
        AudioFile.encode(stereo(), SR, "xyz", 2)


def test_constructor_errors_create_no_file(tmp_path):
    bad = [
        ({"samplerate": 44100.5}, TypeError, "integer sample rate"),
        ({"samplerate": 1, "num_channels": 44100}, ValueError, "reversing"),
        ({"samplerate": SR, "bit_depth": 12}, ValueError, "bit_depth"),
        ({"samplerate": SR, "quality": "V2"}, ValueError, "quality"),
    ]
    for kwargs, error, text in bad:
        with pytest.raises(error, match=text):
            AudioFile(tmp_path / "a.wav", "w", **kwargs)
    with pytest.raises(ValueError, match="44100"):
        AudioFile(tmp_path / "a.opus", "w", SR, 2)  # Opus: 8/12/16/24/48 kHz only, and the error says so
    with pytest.raises(ValueError, match="44100"):
        AudioFile(tmp_path / "a.flac", "w", 123457, 2)
    with pytest.raises(ValueError, match="Unable to detect audio format"):
        AudioFile(tmp_path / "a.xyz", "w", SR)
    with pytest.raises(TypeError, match="infer"):
        AudioFile(io.BytesIO(), "w", SR)
    with pytest.raises(FileNotFoundError):
        AudioFile(tmp_path / "no-such-folder" / "a.wav", "w", SR)
    assert os.listdir(tmp_path) == []  # nothing created, no temporary file left


def test_write_dtype_and_channel_errors(tmp_path):
    with AudioFile(tmp_path / "a.wav", "w", SR, 2) as out:
        for dtype in (np.uint8, np.uint16, np.bool_, np.complex64):
            with pytest.raises(TypeError, match=f"int8, int16, int32, float32, or float64. \\(Got: {np.dtype(dtype)}"):
                out.write(np.zeros((2, 10), dtype))
        with pytest.raises(LayoutError, match="num_channels=2.*1-channel"):
            out.write(np.zeros(100, np.float32))
        with pytest.raises(LayoutError, match="num_channels=2.*3-channel"):
            out.write(np.zeros((3, 100), np.float32))
        with pytest.raises(RuntimeError, match="num_channels=2.*5-channel"):  # pedalboard's type still works
            out.write(np.zeros((100, 5), np.float32))
        with pytest.raises(LayoutError, match="Unable to determine channel layout"):
            out.write(np.zeros((2, 2), np.float32))  # square, and no layout seen yet
        with pytest.raises(LayoutError, match="dimensions"):
            out.write(np.zeros((2, 2, 2), np.float32))
        assert out.frames == 0


def test_closed_files(tmp_path):
    path = tmp_path / "a.wav"
    with AudioFile(path, "w", SR, 2) as out:
        out.write(stereo())
    assert out.closed
    for call in (lambda: out.write(stereo()), out.flush):
        with pytest.raises(ClosedFileError, match="I/O operation on a closed file."):
            call()
    out.close()  # closing twice is fine
    f = AudioFile(path)
    f.close()
    assert f.closed and f.frames == SR // 2 and f.num_channels == 2  # properties stay readable
    for call in (lambda: f.read(10), lambda: f.read_raw(10), lambda: f.seek(0)):
        with pytest.raises(RuntimeError, match="I/O operation on a closed file."):  # also a ValueError
            call()
    assert "closed" in repr(f)


def test_seek_errors(tmp_path):
    data = AudioFile.encode(stereo(), SR, "flac", 2)
    with AudioFile(io.BytesIO(data)) as f:
        with pytest.raises(ValueError, match="before start"):
            f.seek(-1)
        with pytest.raises(ValueError, match="beyond end"):
            f.seek(f.frames + 1)
        with pytest.raises(TypeError):
            f.seek(1.5)
        with pytest.raises(ValueError, match="entire file"):
            f.read()
        with pytest.raises(ValueError, match="fractional"):
            f.read(2.5)


def test_a_zero_channel_or_rate_header_is_corrupt():
    """A WAV header that declares 0 channels must not give a (0, n) reader (pedalboard gives num_channels=0)."""
    good = bytearray(AudioFile.encode(stereo(0.01), SR, "wav", 2))
    assert good[22:24] == b"\x02\x00"
    good[22:24] = b"\x00\x00"
    with pytest.raises(AudioFileError):
        with AudioFile(io.BytesIO(bytes(good))) as f:
            f.read(10)


def test_errors_are_documented_classes():
    assert issubclass(UnsupportedFormatError, ValueError) and issubclass(CorruptAudioError, ValueError)
    assert issubclass(ClosedFileError, RuntimeError) and issubclass(ClosedFileError, ValueError)


def test_codec_options():
    from stompbox.io import WriteableAudioFileFlag

    flag = WriteableAudioFileFlag.Mp3EnableBitReservoir
    with AudioFile(io.BytesIO(), "w", SR, 1, format="mp3", codec_options={flag: True}) as out:
        out.write(np.zeros(1000, np.float32))
    with pytest.raises(ValueError, match="not supported by the WAV file encoder"):
        AudioFile(io.BytesIO(), "w", SR, 1, format="wav", codec_options={flag: True})
    with pytest.raises(ValueError, match="expects a bool"):
        AudioFile(io.BytesIO(), "w", SR, 1, format="mp3", codec_options={flag: 3})
    with pytest.raises(ValueError, match="bit reservoir"):  # lameenc cannot turn it off
        AudioFile(io.BytesIO(), "w", SR, 1, format="mp3", codec_options={flag: False})
    with pytest.raises(TypeError, match="Unknown codec option"):
        AudioFile(io.BytesIO(), "w", SR, 1, format="mp3", codec_options={"Mp3Fancy": True})


def test_encode_num_threads_is_validated_and_changes_nothing():
    """pedalboard 0.9.26's ``num_threads``: a positive integer (ValueError for 0 or less, TypeError for
    anything else); stompbox's encode is its serial encode for every value."""
    serial = AudioFile.encode(stereo(), SR, "mp3", 2)
    assert AudioFile.encode(stereo(), SR, "mp3", 2, num_threads=4) == serial
    for value, error in ((0, ValueError), (-3, ValueError), (2.0, TypeError), ("2", TypeError), (None, TypeError)):
        with pytest.raises(error, match="num_threads"):
            AudioFile.encode(stereo(), SR, "mp3", 2, num_threads=value)
