"""ChannelConvertedReadableAudioFile: the conversion rule, streaming, seeking."""

from __future__ import annotations

import numpy as np
import pytest

from _array_reader import ArrayReader
from stompbox.io.channels import ChannelConvertedReadableAudioFile, convert_channels


def _noise(channels: int, n: int) -> np.ndarray:
    return (np.random.default_rng(channels).standard_normal((channels, n)) * 0.3).astype(np.float32)


def test_mono_is_the_mean():
    x = _noise(2, 1000)
    out = ChannelConvertedReadableAudioFile(ArrayReader(x, 44100), 1).read(1000)
    assert out.shape == (1, 1000) and out.dtype == np.float32 and out.flags.c_contiguous
    assert np.allclose(out[0], (x[0] + x[1]) / 2, atol=1e-7)


def test_mono_to_many_copies():
    x = _noise(1, 500)
    out = ChannelConvertedReadableAudioFile(ArrayReader(x, 44100), 3).read(500)
    assert out.shape == (3, 500) and all(np.array_equal(out[c], x[0]) for c in range(3))


def test_surround_is_downmixed_as_ffmpeg_does_and_upmixing_fills_the_speakers_both_layouts_have():
    """Issue 17: 5.1 -> stereo kept only FL/FR and stereo -> 5 channels repeated L, R, L, R, L. The rule is
    FFmpeg's (centre and surrounds at -3 dB, LFE dropped), scaled so that the largest row adds up to 1."""
    a = np.sqrt(0.5)
    x = _noise(6, 300)  # 5.1: FL FR FC LFE BL BR
    left = (x[0] + a * x[2] + a * x[4]) / (1 + 2 * a)
    right = (x[1] + a * x[2] + a * x[5]) / (1 + 2 * a)
    assert np.allclose(convert_channels(x, 2), [left, right], atol=1e-6)
    mono = (a * (x[0] + x[1]) + x[2] + 0.5 * (x[4] + x[5])) / (2 * a + 1 + 1)
    assert np.allclose(convert_channels(x, 1)[0], mono, atol=1e-6)
    y = _noise(2, 300)
    assert np.array_equal(convert_channels(y, 5), np.concatenate([y, np.zeros((3, 300), np.float32)]))
    assert np.array_equal(convert_channels(y, 2), y)
    assert np.array_equal(convert_channels(y, 1)[0], (y[0] + y[1]) * np.float32(0.5))
    z = _noise(10, 300)  # no standard layout: channel i stays channel i; mono is the mean
    assert np.array_equal(convert_channels(z, 3), z[:3])
    assert np.allclose(convert_channels(z, 1)[0], z.mean(axis=0), atol=1e-6)
    assert convert_channels(np.zeros((0, 7), np.float32), 2).shape == (2, 7)


def test_streaming_seek_and_properties():
    x = _noise(2, 10000)
    src = ArrayReader(x, 22050)
    f = ChannelConvertedReadableAudioFile(src, 1)
    assert (f.samplerate, f.num_channels, f.frames) == (22050, 1, 10000)
    assert f.duration == pytest.approx(10000 / 22050)
    whole = f.read(10000)
    f.seek(0)
    parts = [f.read(n) for n in (1, 4, 5, 990, 9000, 100)]
    assert np.array_equal(np.concatenate(parts, axis=1), whole)
    assert f.read(5).shape == (1, 0)
    f.seek(1234)
    assert f.tell() == 1234 and np.array_equal(f.read(10), whole[:, 1234:1244])
    assert "ChannelConvertedReadableAudioFile" in repr(f) and "num_channels=1" in repr(f)
    f.close()
    assert f.closed and not src.closed
    with pytest.raises(RuntimeError):
        f.read(1)


def test_chaining_and_errors():
    x = _noise(2, 44100)
    f = ChannelConvertedReadableAudioFile(ArrayReader(x, 44100), 1)
    assert f.mono() is f
    s = f.stereo()
    assert s.num_channels == 2
    r = f.resampled_to(22050)
    assert r.samplerate == 22050 and r.num_channels == 1 and r.frames == 22050
    with pytest.raises(ValueError):
        ChannelConvertedReadableAudioFile(ArrayReader(x, 44100), 0)
    with pytest.raises(TypeError):
        ChannelConvertedReadableAudioFile(ArrayReader(x, 44100), 1.5)
    with pytest.raises(TypeError):
        ChannelConvertedReadableAudioFile(np.zeros(3), 1)


def test_every_reader_is_an_audio_reader_and_a_closed_one_raises_closed_file_error(tmp_path) -> None:
    import numpy as np
    import pytest

    from stompbox.io import AudioFile, AudioReader, ClosedFileError
    from stompbox.io.channels import ChannelConvertedReadableAudioFile
    from stompbox.io.resample import ResampledReadableAudioFile

    path = str(tmp_path / "two.wav")
    with AudioFile(path, "w", 8000, 2) as out:
        out.write(np.zeros((2, 800), np.float32))
    with AudioFile(path) as f:
        mono = f.mono()
        resampled = f.resampled_to(16000)
        assert isinstance(mono, ChannelConvertedReadableAudioFile) and isinstance(resampled, ResampledReadableAudioFile)
        for reader in (f, mono, resampled, resampled.mono()):
            assert isinstance(reader, AudioReader) and isinstance(reader, AudioFile)
        assert type(resampled.mono().resampled_to(8000)) is ResampledReadableAudioFile
        mono.close()
        with pytest.raises(ClosedFileError):
            mono.read(10)
    with pytest.raises(ClosedFileError):  # the wrapped file is closed
        f.mono()
