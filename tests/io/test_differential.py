"""The differential suite: files written by foreign encoders (the ffmpeg CLI to files and to pipes, SoX, lame,
flac, oggenc, opusenc; see ``tests/_foreign.py``), read by stompbox and compared with FFmpeg's decode of the same
file.

For every file: ``frames`` is what FFmpeg decodes (after the priming/padding rule of ``_foreign.expected_frames``)
and is never reported exact while it is an estimate; the samples are FFmpeg's, bit for bit for lossless codecs and
within the codec's stated tolerance for lossy ones (libsndfile's decoders against FFmpeg's own); each channel's
tone lands in its channel; chunked reads of sizes from 1 to 65,536 frames equal the whole read; 50 random seeks
read what FFmpeg decodes at that position.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import _foreign
from stompbox.io import AudioFile

pytestmark = pytest.mark.skipif(
    bool(_foreign.missing_tools()), reason=f"foreign encoders missing: {_foreign.missing_tools()}"
)

SPECS = _foreign.SPECS
IDS = [spec.id for spec in SPECS]
SEEKS = 50
SEEK_READ = 64  # frames compared after each seek
#: known failures still to fix: "id" or "id:test" -> reason
PENDING = _foreign.PENDING


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> _foreign.Corpus:
    return _foreign.Corpus(tmp_path_factory.mktemp("foreign"))


_WHOLE: dict[str, np.ndarray] = {}


def read_whole(path: Path) -> np.ndarray:
    """The whole file in one read (its length asked for, then anything after it) as stompbox reads it."""
    key = str(path)
    if key not in _WHOLE:
        with AudioFile(key) as f:
            blocks = [f.read(min(f.frames, 1 << 24) + 1)]
            while blocks[-1].shape[1]:
                blocks.append(f.read(1 << 20))
        _WHOLE[key] = np.concatenate(blocks, axis=1)
    return _WHOLE[key]


def reference(corpus: _foreign.Corpus, spec: _foreign.Spec) -> np.ndarray:
    """FFmpeg's decode of the file, cut to the frames stompbox must read."""
    return corpus.reference(spec)


def pending(spec: _foreign.Spec, what: str) -> None:
    if spec.channel_order_pending and what in ("samples", "seeks", "channels"):
        pytest.xfail(spec.channel_order_pending)
    reason = PENDING.get(f"{spec.id}:{what}") or PENDING.get(spec.id)
    if reason:
        pytest.xfail(reason)


def assert_close(ours: np.ndarray, ffmpeg: np.ndarray, spec: _foreign.Spec, where: str = "") -> None:
    assert ours.shape == ffmpeg.shape, where
    if spec.lossless:
        np.testing.assert_array_equal(ours, ffmpeg, err_msg=where)
    elif ours.size:
        worst = float(np.abs(ours - ffmpeg).max())
        assert worst <= spec.tolerance, f"{where} differs from FFmpeg by {worst:.3g} > {spec.tolerance:g}"


def test_the_corpus_is_large_enough() -> None:
    assert len(SPECS) >= 80
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_frames_are_what_ffmpeg_decodes(corpus: _foreign.Corpus, spec: _foreign.Spec) -> None:
    pending(spec, "frames")
    expected = reference(corpus, spec).shape[1]
    path = str(corpus.path(spec))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a whole, valid file gives no warning
        with AudioFile(path) as f:
            declared, exact = f.frames, f.exact_duration_known
            if exact:
                assert declared == expected, f"{declared} frames reported exact, FFmpeg decodes {expected}"
            else:  # an estimate: never absurd
                assert 0 <= declared <= 4 * expected + spec.rate, declared
            total = 0
            while True:
                block = f.read(1 << 16)
                total += block.shape[1]
                if block.shape[1] == 0:
                    break
            assert total == expected
            assert (f.frames, f.exact_duration_known) == (expected, True)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_samples_are_ffmpegs(corpus: _foreign.Corpus, spec: _foreign.Spec) -> None:
    pending(spec, "samples")
    ffmpeg = reference(corpus, spec)
    ours = read_whole(corpus.path(spec))
    assert_close(ours, ffmpeg, spec, spec.id)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_each_channel_in_its_place(corpus: _foreign.Corpus, spec: _foreign.Spec) -> None:
    pending(spec, "channels")
    ours = read_whole(corpus.path(spec))
    with AudioFile(str(corpus.path(spec))) as f:
        rate = int(f.samplerate)  # opusenc resamples to 48 kHz
    assert ours.shape[0] == spec.channels
    hop = rate // 4  # skip the first quarter second (priming, fades)
    for index, hz in enumerate(_foreign.tones(spec.channels)):
        found = _foreign.dominant_hz(ours[index, hop : hop + rate // 2], rate)
        assert abs(found - hz) <= 4.0, f"channel {index}: {found:.0f} Hz where FFmpeg's order puts {hz:.0f} Hz"


def chunk_sizes(seed: int, total: int) -> list[int]:
    """Read sizes from 1 to 65,536 frames, log-uniform, until ``total`` frames (and one more read) are covered."""
    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    while sum(sizes) <= total:
        sizes.append(int(np.exp(rng.uniform(0, np.log(65536)))))
    return sizes


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_chunked_reads_equal_the_whole_read(corpus: _foreign.Corpus, spec: _foreign.Spec) -> None:
    pending(spec, "chunks")
    path = str(corpus.path(spec))
    whole = read_whole(corpus.path(spec))
    plans = [[1] * 300 + chunk_sizes(len(spec.id), whole.shape[1]), [4096], [1024], [65536]]
    for plan in plans:
        blocks = []
        with AudioFile(path) as f:
            step = 0
            while True:
                block = f.read(plan[min(step, len(plan) - 1)])
                step += 1
                if block.shape[1] == 0:
                    break
                blocks.append(block)
        chunked = np.concatenate(blocks, axis=1)
        assert chunked.shape == whole.shape, f"reads of {plan[-1]}: {chunked.shape[1]} frames, whole {whole.shape[1]}"
        np.testing.assert_array_equal(chunked, whole, err_msg=f"reads of {plan[:3]}...")


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_random_seeks_read_what_ffmpeg_decodes_there(corpus: _foreign.Corpus, spec: _foreign.Spec) -> None:
    pending(spec, "seeks")
    ffmpeg = reference(corpus, spec)
    frames = ffmpeg.shape[1]
    rng = np.random.default_rng(len(spec.id) + frames)
    with AudioFile(str(corpus.path(spec))) as f:
        for target in rng.integers(0, frames, SEEKS):
            target = int(target)
            f.seek(target)
            assert f.tell() == target
            block = f.read(SEEK_READ)
            assert f.tell() == target + block.shape[1]
            assert_close(block, ffmpeg[:, target : target + SEEK_READ], spec, f"seek({target})")


@pytest.mark.skipif(not _foreign.can_measure_peak(), reason="needs Linux /proc/self/clear_refs")
def test_no_read_raises_rss_by_more_than_200_mb(corpus: _foreign.Corpus) -> None:
    paths = [str(corpus.path(spec)) for spec in SPECS]
    growth = _foreign.read_peaks_mb(paths)
    assert sorted(growth) == sorted(paths)
    worst = max(growth, key=growth.__getitem__)
    assert growth[worst] < 200.0, f"{worst}: {growth[worst]:.0f} MB"
