"""stompbox.io against pedalboard.io 0.9.26: the same samples from the same files, both ways.

- Files pedalboard writes (WAV 8/16/24/32, FLAC 16/24, AIFF, OGG Vorbis, MP3) read with the same samples:
  integer PCM bit-identical (both scale by ``1 / (2**(bits-1) - 1)``), Vorbis within float rounding.
  pedalboard's MP3 decoder is not gapless: it starts 1105 frames early (encoder delay + decoder delay) and pads
  to whole 1152-frame MP3 frames, so its output is compared after that shift.
- Files stompbox writes read in pedalboard with the same samples as in stompbox, and integer PCM within half a
  quantisation step of the source.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from _audio import diff_db, music
from stompbox.io import AudioFile

SR = 44100
PB_MP3_LAG = 1105  # frames pedalboard's MP3 decode runs ahead of a gapless one (measured, tagged LAME files)

# (extension, writer kwargs, pedalboard file_dtype, max |ours - pedalboard| reading the same file)
PCM = [
    ("wav", {"bit_depth": 8}, "int8"),
    ("wav", {"bit_depth": 16}, "int16"),
    ("wav", {"bit_depth": 24}, "int24"),
    ("wav", {"bit_depth": 32}, "float32"),
    ("flac", {"bit_depth": 16}, "int16"),
    ("flac", {"bit_depth": 24}, "int24"),
    ("aiff", {"bit_depth": 16}, "int16"),
    ("aiff", {"bit_depth": 24}, "int24"),
]
PCM_IDS = [f"{ext}{kw['bit_depth']}" for ext, kw, _ in PCM]
STEP = {"int8": 1 / 127, "int16": 1 / 32767, "int24": 1 / 8388607, "float32": 0.0}


@pytest.fixture(scope="module")
def source() -> np.ndarray:
    return music(2.0)


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


def pb_write(pb, path, x, ext, **kwargs) -> None:
    with pb.io.AudioFile(str(path), "w", SR, x.shape[0], **kwargs) as out:
        out.write(x)


def pb_read(pb, path) -> tuple[np.ndarray, str]:
    with pb.io.AudioFile(str(path)) as f:
        return f.read(f.frames), f.file_dtype


def ours_read(path) -> tuple[np.ndarray, str]:
    with AudioFile(path) as f:
        return f.read(f.frames), f.file_dtype


@pytest.mark.parametrize(("ext", "kwargs", "dtype"), PCM, ids=PCM_IDS)
def test_pcm_written_by_pedalboard_reads_bit_identical(pb, tmp_path, source, ext, kwargs, dtype):
    path = tmp_path / f"pb.{ext}"
    pb_write(pb, path, source, ext, **kwargs)
    theirs, their_dtype = pb_read(pb, path)
    ours, our_dtype = ours_read(path)
    assert our_dtype == their_dtype == dtype
    assert ours.shape == theirs.shape == source.shape
    np.testing.assert_array_equal(ours, theirs)
    with open(path, "rb") as handle:  # the same through a file-like object
        with AudioFile(io.BytesIO(handle.read())) as f:
            np.testing.assert_array_equal(f.read(f.frames), theirs)


@pytest.mark.parametrize(("ext", "kwargs", "dtype"), PCM, ids=PCM_IDS)
def test_pcm_we_write_reads_the_same_in_pedalboard(pb, tmp_path, source, ext, kwargs, dtype):
    path = tmp_path / f"ours.{ext}"
    with AudioFile(path, "w", SR, 2, **kwargs) as out:
        out.write(source)
    theirs, their_dtype = pb_read(pb, path)
    ours, _ = ours_read(path)
    assert their_dtype == dtype
    np.testing.assert_array_equal(theirs, ours)
    # Our writer rounds to the nearest step of pedalboard's read scale: within half a step of the source.
    assert np.max(np.abs(theirs - source)) <= STEP[dtype] / 2 * 1.001 + 1e-7


def test_integer_pcm_read_scaling_is_pedalboards(pb, tmp_path):
    """Every int16 value reads as exactly pedalboard's float (k / 32767 in float32; -32768 -> -1.0000305)."""
    values = np.arange(-32768, 32768, dtype=np.int16)
    path = tmp_path / "all.wav"
    with AudioFile(path, "w", SR, 1) as out:
        out.write(values)  # int16 into a 16-bit file is stored as it is
    theirs, _ = pb_read(pb, path)
    ours, _ = ours_read(path)
    np.testing.assert_array_equal(ours, theirs)
    assert ours[0, 0] == np.float32(-32768 / 32767) and ours[0, -1] == 1.0


def test_vorbis_written_by_pedalboard(pb, tmp_path, source):
    path = tmp_path / "pb.ogg"
    pb_write(pb, path, source, "ogg")
    theirs, _ = pb_read(pb, path)
    ours, dtype = ours_read(path)
    assert dtype == "float32" and ours.shape == theirs.shape == source.shape
    assert np.max(np.abs(ours - theirs)) < 1e-6  # same libvorbis decoder; measured 1.2e-7


def test_vorbis_we_write_reads_the_same_in_pedalboard(pb, tmp_path, source):
    path = tmp_path / "ours.ogg"
    with AudioFile(path, "w", SR, 2, quality="192 kbps") as out:
        out.write(source)
    theirs, _ = pb_read(pb, path)
    ours, _ = ours_read(path)
    assert theirs.shape == ours.shape == source.shape
    assert np.max(np.abs(ours - theirs)) < 1e-6
    assert correlation(ours, source) > 0.99


# (who writes, quality, limit in dB on the aligned difference between the two decoders)
# The decoders (mpg123 in libsndfile, pedalboard's own) agree except in a few MP3 frames; measured -75, -72, -54,
# -54 dB.
MP3 = [("pedalboard", "320 kbps", -65.0), ("stompbox", "320 kbps", -62.0), ("pedalboard", "V2", -45.0),
       ("stompbox", "V2", -45.0)]  # fmt: skip


@pytest.mark.parametrize(("writer", "quality", "limit"), MP3, ids=[f"{w}-{q}" for w, q, _ in MP3])
def test_mp3_aligned_samples_match(pb, tmp_path, source, writer, quality, limit):
    path = tmp_path / "x.mp3"
    if writer == "pedalboard":
        pb_write(pb, path, source, "mp3", quality=quality)
    else:
        with AudioFile(path, "w", SR, 2, quality=quality) as out:
            out.write(source)
    theirs, _ = pb_read(pb, path)
    with AudioFile(path) as f:
        assert f.exact_duration_known
        ours = f.read(f.frames)
    assert ours.shape == source.shape  # gapless: exactly the source length
    # pedalboard: padded to whole MP3 frames and 1105 frames early
    assert theirs.shape[1] == -(-(source.shape[1] + PB_MP3_LAG) // 1152) * 1152
    aligned = theirs[:, PB_MP3_LAG : PB_MP3_LAG + ours.shape[1]]
    assert diff_db(ours, aligned) < limit
    assert correlation(ours, source) > 0.98
    middle = source[0, 2000:-2000]
    lags = range(-5, 6)
    best = max(lags, key=lambda lag: float(np.dot(ours[0, 2000 + lag : ours.shape[1] - 2000 + lag], middle)))
    assert best == 0  # ours is in time with the source (gapless, no lag)


QUALITIES = [None, "", " ", 0, 1, 5, 8, 9, -1, "default", "high", "best", "slowest", "fastest", "worst", "normal",
             "smallest", "V0", "V2", "V9", "V10", "v3", "V0 (best)", "V4 (normal)", "5 (Default)", 64, 63, 63.5,
             128, 128.0, "128", "128 kbps", " 128 kbps ", "128kbps", 320, "320 kbps", 500, 1000, 32, "abc"]  # fmt: skip


@pytest.mark.parametrize("ext", ["wav", "aiff", "flac", "ogg", "mp3"])
def test_quality_values_are_accepted_and_normalised_as_pedalboard_does(pb, ext):
    for quality in QUALITIES:
        outcomes = []
        for opener in (pb.io.AudioFile, AudioFile):
            try:
                with opener(io.BytesIO(), "w", SR, 2, quality=quality, format=ext) as out:
                    outcomes.append((out.quality, out.file_dtype))
            except ValueError:
                outcomes.append("ValueError")
        assert outcomes[0] == outcomes[1], (ext, quality)


@pytest.mark.parametrize("ext", ["wav", "aiff", "flac", "ogg", "mp3"])
def test_bit_depths_and_reported_dtypes_are_pedalboards(pb, ext):
    for depth in (8, 16, 24, 32, 12):
        outcomes = []
        for opener in (pb.io.AudioFile, AudioFile):
            try:
                with opener(io.BytesIO(), "w", SR, 2, bit_depth=depth, format=ext) as out:
                    outcomes.append(out.file_dtype)
            except ValueError:
                outcomes.append("ValueError")
        theirs, ours = outcomes
        if theirs == "unknown":  # pedalboard's Vorbis writer at an odd depth; ours stores floats anyway
            assert ours == "float32"
        elif (ext, depth) == ("aiff", 32):  # beyond pedalboard: 32-bit float AIFF (AIFF-C), as WAV's bit_depth=32
            assert theirs == "ValueError" and ours == "float32"
        else:
            assert theirs == ours, (ext, depth)


def test_encode_takes_num_threads_as_pedalboard_does():
    """``AudioFile.encode(..., num_threads=N)`` (pedalboard 0.9.26): the same values accepted and refused, with
    the same exception types. stompbox encodes on one thread whatever N is (its docstring says why), so its
    bytes are its serial encode's; both decode to the same audio within MP3's error."""
    import pedalboard

    x = music(1.0)
    for value in (1, 2, 8, True):
        ours = AudioFile.encode(x, SR, "mp3", 2, num_threads=value)
        assert ours == AudioFile.encode(x, SR, "mp3", 2)
        pedalboard.io.AudioFile.encode(x, SR, "mp3", 2, num_threads=value)
    for value, error in ((0, ValueError), (-1, ValueError), (1.5, TypeError), ("a", TypeError), (None, TypeError)):
        with pytest.raises(error):
            pedalboard.io.AudioFile.encode(x, SR, "mp3", 2, num_threads=value)
        with pytest.raises(error):
            AudioFile.encode(x, SR, "mp3", 2, num_threads=value)
    for fmt in ("wav", "flac"):
        assert AudioFile.encode(x, SR, fmt, 2, num_threads=4) == AudioFile.encode(x, SR, fmt, 2)


def test_the_file_by_pedalboards_keyword_names(tmp_path):
    """pedalboard's bindings name the file ``filename`` (a path) or ``file_like``; code that passes them by
    keyword opens the same files in stompbox, for AudioFile, ReadableAudioFile and WriteableAudioFile."""
    import pedalboard

    from stompbox import io as sio

    x = music(0.5)
    for lib, name in ((pedalboard.io, "pb"), (sio, "sb")):
        with lib.AudioFile(filename=str(tmp_path / f"{name}.wav"), mode="w", samplerate=SR, num_channels=2) as out:
            out.write(x)
        with lib.WriteableAudioFile(filename=str(tmp_path / f"{name}2.wav"), samplerate=SR, num_channels=2) as out:
            out.write(x)
        buffer = io.BytesIO()
        with lib.WriteableAudioFile(file_like=buffer, samplerate=SR, num_channels=2, format="wav") as out:
            out.write(x)
        for opened in (
            lib.AudioFile(filename=str(tmp_path / f"{name}.wav")),
            lib.ReadableAudioFile(filename=str(tmp_path / f"{name}2.wav")),
            lib.AudioFile(file_like=io.BytesIO(buffer.getvalue())),
            lib.ReadableAudioFile(file_like=io.BytesIO(buffer.getvalue())),
        ):
            with opened as f:
                assert f.read(f.frames).shape == x.shape
    with pytest.raises(TypeError, match="one file"):
        sio.AudioFile(str(tmp_path / "sb.wav"), filename=str(tmp_path / "sb.wav"))


def test_wrapping_readers_are_audio_files_as_in_pedalboard():
    """pedalboard's ResampledReadableAudioFile subclasses AudioFile (not ReadableAudioFile), so code checks
    isinstance(f, AudioFile) for any open file, and its encode() is AudioFile.encode."""
    import pedalboard

    from stompbox import io as sio

    data = AudioFile.encode(music(0.2), SR, "wav", 2)
    for lib in (pedalboard.io, sio):
        f = lib.AudioFile(io.BytesIO(data))
        resampled = f.resampled_to(22050)
        assert isinstance(resampled, lib.AudioFile) and not isinstance(resampled, lib.ReadableAudioFile)
        assert issubclass(lib.ResampledReadableAudioFile, lib.AudioFile)
        assert not isinstance(resampled, lib.WriteableAudioFile) and not isinstance(3, lib.AudioFile)
        assert resampled.encode(music(0.1), SR, "wav", 2) == lib.AudioFile.encode(music(0.1), SR, "wav", 2)
    mono = sio.AudioFile(io.BytesIO(data)).mono()
    assert isinstance(mono, sio.AudioFile)
