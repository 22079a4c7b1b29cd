"""ResampledReadableAudioFile: exact length, chunk-size invariance, sample-exact seeks, constant memory."""

from __future__ import annotations

import math

import numpy as np
import pytest
import soxr

from _array_reader import ArrayReader
from stompbox.io.quality import SOXR_RECIPE, Quality
from stompbox.io.resample import ResampledReadableAudioFile, resampled_length


def _noise(channels: int, n: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((channels, n)) * 0.3).astype(np.float32)


def _read_in_chunks(f, sizes: list[int]) -> np.ndarray:
    parts, i = [], 0
    while True:
        block = f.read(sizes[i % len(sizes)])
        i += 1
        if block.shape[1] == 0:
            break
        parts.append(block)
    return np.concatenate(parts, axis=1)


def _audiofile_or_skip():
    try:
        from stompbox.io import AudioFile
    except ImportError:
        pytest.skip("stompbox.io.AudioFile is not available yet")
    return AudioFile


@pytest.mark.parametrize("frames", [1, 147, 44100, 300001])
def test_length_is_exact_round(frames):
    f = ResampledReadableAudioFile(ArrayReader(_noise(2, frames), 44100), 48000)
    expected = round(frames * 48000 / 44100)
    assert f.frames == expected == resampled_length(frames, 44100, 48000)
    out = f.read(10**9)
    assert out.shape == (2, expected) and out.dtype == np.float32 and out.flags.c_contiguous
    assert f.read(10).shape == (2, 0)
    assert f.tell() == expected


def test_whole_equals_chunks_of_any_size():
    x = _noise(2, 3 * 131072 + 1234)  # several segments
    whole = ResampledReadableAudioFile(ArrayReader(x, 44100), 48000).read(10**9)
    for sizes in ([1000], [4, 5, 1], [7777, 1, 65536], [131072 * 2 + 5]):
        f = ResampledReadableAudioFile(ArrayReader(x, 44100), 48000)
        if sizes == [4, 5, 1]:  # tiny chunks: check the first 20000 frames, then read the rest at once
            head = np.concatenate([f.read(sizes[i % 3]) for i in range(6000)], axis=1)
            got = np.concatenate([head, f.read(10**9)], axis=1)
        else:
            got = _read_in_chunks(f, sizes)
        assert np.array_equal(got, whole), sizes


@pytest.mark.parametrize(
    "source,target,quality",
    [
        (44100, 48000, Quality.WindowedSinc32),
        (48000, 44100, Quality.WindowedSinc8),
        (44100, 8000, Quality.WindowedSinc256),
        (8000, 44100, Quality.WindowedSinc16),
        (44100, 22050, Quality.Linear),
        (44100, 12345.67, Quality.WindowedSinc32),
    ],
)
def test_matches_one_pass_soxr_without_seams(source, target, quality):
    x = _noise(2, int(source * 7))  # > 2 segments
    f = ResampledReadableAudioFile(ArrayReader(x, source), target, quality)
    got = f.read(10**9)
    ref = soxr.resample(x.T, source, target, SOXR_RECIPE[quality]).T
    assert got.shape == ref.shape == (2, f.frames)
    # segment boundaries leave no artefact: only rounding noise (-100 dB) against one uninterrupted pass
    assert np.abs(got - ref).max() < 1e-5


@pytest.mark.parametrize("target", [48000, 22050, 12345.67])
def test_seeks_are_sample_exact(target):
    x = _noise(2, 44100 * 9)
    f = ResampledReadableAudioFile(ArrayReader(x, 44100), target)
    linear = f.read(10**9)
    rng = np.random.default_rng(3)
    positions = list(rng.integers(0, f.frames, 150)) + [0, f.frames - 1, f.frames, min(f._segment_out, f.frames), 1]
    for pos in positions:
        f.seek(int(pos))
        assert f.tell() == pos
        got = f.read(int(rng.integers(1, 3000)))
        assert np.array_equal(got, linear[:, pos : pos + got.shape[1]]), pos
        assert got.shape[1] == min(got.shape[1], f.frames - pos)
    # forward seeks inside a segment, interleaved with reads
    f.seek(100)
    for pos in range(100, 20000, 997):
        f.seek(pos)
        assert np.array_equal(f.read(50), linear[:, pos : pos + 50])


def test_seek_cost_is_bounded():
    src = ArrayReader(_noise(2, 44100 * 60), 44100)
    f = ResampledReadableAudioFile(src, 48000)
    bound = f._segment + f._preroll + 2 * (1 << 14)
    for pos in (f.frames - 10, 5, f.frames // 2, 1000000):
        before = src.frames_read
        f.seek(pos)
        f.read(10)
        assert src.frames_read - before <= bound


def test_unseekable_source_reads_linearly():
    x = _noise(1, 300000)
    ref = ResampledReadableAudioFile(ArrayReader(x, 44100), 48000).read(10**9)
    f = ResampledReadableAudioFile(ArrayReader(x, 44100, seekable=False), 48000)
    assert not f.seekable()
    assert np.array_equal(_read_in_chunks(f, [4410]), ref)


def test_api_details():
    src = ArrayReader(_noise(2, 44100), 44100)
    f = ResampledReadableAudioFile(src, 22050, Quality.WindowedSinc16)
    assert f.samplerate == 22050 and isinstance(f.samplerate, int)
    assert f.num_channels == 2 and f.frames == 22050 and f.duration == pytest.approx(1.0)
    assert f.resampling_quality is Quality.WindowedSinc16
    assert f.name == src.name and f.file_dtype == src.file_dtype and f.exact_duration_known
    assert "ResampledReadableAudioFile" in repr(f) and "samplerate=22050" in repr(f)
    assert isinstance(ResampledReadableAudioFile(src, 22050.5).samplerate, float)
    with pytest.raises(AttributeError):
        f.read_raw(10)
    with pytest.raises(ValueError):
        f.read()
    with pytest.raises(ValueError, match="fractional"):
        f.read(1.5)
    with pytest.raises(ValueError):
        f.seek(-1)
    with pytest.raises(ValueError, match="beyond end"):
        f.seek(f.frames + 1)
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            ResampledReadableAudioFile(src, bad)
    with f:
        pass
    assert f.closed and not src.closed  # closing the wrapper leaves the file open
    with pytest.raises(RuntimeError, match="closed"):
        f.read(10)
    g = ResampledReadableAudioFile(src, 48000)
    src.close()
    assert g.closed


def test_chaining():
    x = _noise(2, 50000)
    src = ArrayReader(x, 44100)
    f = ResampledReadableAudioFile(src, 48000)
    assert f.resampled_to(48000) is f
    mono = f.mono()
    assert mono.num_channels == 1 and mono.samplerate == 48000
    both = mono.read(10**9)
    ref = ResampledReadableAudioFile(ArrayReader(x, 44100), 48000).read(10**9).mean(axis=0, dtype=np.float32)
    assert np.allclose(both[0], ref, atol=1e-6)
    back = f.resampled_to(44100, Quality.WindowedSinc64)
    assert back.frames == 50000 and back.resampling_quality is Quality.WindowedSinc64
    assert f.stereo() is f and f.with_channels(3).num_channels == 3


def test_with_real_files(tmp_path):
    AudioFile = _audiofile_or_skip()
    import soundfile as sf

    x = _noise(2, 44100 * 4)
    path = tmp_path / "a.flac"
    sf.write(path, x.T, 44100, subtype="PCM_16")
    with AudioFile(str(path)) as f:
        r = f.resampled_to(48000)
        assert isinstance(r, ResampledReadableAudioFile)
        assert r.frames == round(f.frames * 48000 / 44100)
        whole = r.read(r.frames)
        r.seek(0)
        assert np.array_equal(_read_in_chunks(r, [1000, 4, 5]), whole)
        for pos in (100000, 17, 150000, 3):
            r.seek(pos)
            assert np.array_equal(r.read(500), whole[:, pos : pos + 500])
        assert not f.closed
        r.close()
        assert not f.closed
    assert math.isfinite(float(np.abs(whole).max()))


# ------------------------------------------------------------------------------------------ limits
def test_rates_and_ratios_outside_the_limits_are_refused_with_the_range():
    from stompbox.limits import LimitError

    x = _noise(1, 100)
    with pytest.raises(LimitError, match="from 1 Hz to 10,000,000 Hz"):
        ResampledReadableAudioFile(ArrayReader(x, 44100), 1e9)  # soxr crashed here (after 8.4 GB)
    with pytest.raises(LimitError, match="ratio of 22,050:1; at most 4096:1"):
        ResampledReadableAudioFile(ArrayReader(x, 1), 22050)  # a header declaring 1 Hz: crashed too
    with pytest.raises(LimitError, match="ratio of 8,192:1"):
        ResampledReadableAudioFile(ArrayReader(x, 8192), 1)  # either way
    with pytest.raises(ValueError, match="at most 4096:1"):  # a ValueError, as pedalboard's callers expect
        ResampledReadableAudioFile(ArrayReader(x, 44100), 10)


def test_a_4096_to_1_upsampling_is_exact_and_stays_in_bounded_memory():
    """The largest ratio allowed: 1 Hz to 4096 Hz. Its filter-delay probe alone used to allocate 1 GiB (64 k
    probe samples x 4096) and each 16 k-frame read of the source 256 MiB per channel."""
    import tracemalloc

    x = _noise(2, 300, seed=5)
    tracemalloc.start()
    try:
        f = ResampledReadableAudioFile(ArrayReader(x, 3), 12288)  # a rate pair no other test has cached
        linear = f.read(10**9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert linear.shape == (2, 300 * 4096) == (2, f.frames)
    assert peak < 64 << 20  # the output itself is 9.4 MiB
    ref = soxr.resample(x.T, 3, 12288, SOXR_RECIPE[Quality.WindowedSinc32]).T
    assert np.abs(linear - ref).max() < 1e-5
    for pos in (0, 5, 600_000, f.frames - 7):
        f.seek(pos)
        assert np.array_equal(f.read(4000), linear[:, pos : pos + 4000]), pos
