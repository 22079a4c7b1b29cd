"""Every file of the corrupt-input corpus gets its recorded outcome, and none crashes or hangs the interpreter.

The corpus is made at test time by ``tests/data/make_corrupt.py`` from the committed valid bases (the same bytes
every time); ``tests/data/corrupt/manifest.json`` holds each case's expected outcome. Files are read in worker
subprocesses (``read_worker.py``) with a timeout, so a segfault or a hang in a codec library fails the case
instead of killing pytest.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pytest

from stompbox.io import AudioFile, TruncatedAudioWarning, UnsupportedFormatError

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
MANIFEST = json.loads((DATA / "corrupt" / "manifest.json").read_text())
CASES = MANIFEST["cases"]
ALLOWED = set(MANIFEST["allowed_exceptions"])
CHUNK = 60  # files per worker process
TIMEOUT = 90.0  # seconds per worker process (a hang fails the file being read)


def _load(name: str, path: Path):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


make_corrupt = _load("make_corrupt", DATA / "make_corrupt.py")
read_worker = _load("read_worker", HERE / "read_worker.py")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("corrupt")
    made = make_corrupt.write_cases(folder)
    return folder, [name for name, _ in made]


@pytest.fixture(scope="module")
def outcomes(corpus: tuple[Path, list[str]]) -> dict[str, dict]:
    folder, names = corpus
    paths = [str(folder / name) for name in names]
    found: dict[str, dict] = {}
    for start in range(0, len(paths), CHUNK):
        found.update(read_worker.run_batch(paths[start : start + CHUNK], timeout=TIMEOUT))
    return {name: found[str(folder / name)] for name in names}


def test_manifest_covers_the_corpus(corpus: tuple[Path, list[str]]) -> None:
    _, names = corpus
    assert sorted(names) == sorted(CASES)
    assert len(names) >= 250
    assert ALLOWED == {"UnsupportedFormatError", "CorruptAudioError", "FileNotFoundError", "TypeError"}
    for name, expected in CASES.items():
        assert ("raises" in expected) != ("frames" in expected), name
        assert expected.get("raises", "UnsupportedFormatError") in ALLOWED, name


def test_committed_corpus_is_small() -> None:
    total = sum(p.stat().st_size for p in (DATA / "corrupt").rglob("*") if p.is_file())
    assert total < 2_000_000


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_outcome(name: str, outcomes: dict[str, dict]) -> None:
    got = outcomes[name]
    assert "crash" not in got, f"{name} crashed the interpreter: {got}"
    assert "hang" not in got, f"{name} did not finish within {TIMEOUT} s"
    assert got.get("raises", "UnsupportedFormatError") in ALLOWED, f"{name}: unexpected {got}"
    assert "bytesio_raises" not in got and "bytesio_differs" not in got, f"{name}: BytesIO read differs: {got}"
    expected = {k: v for k, v in CASES[name].items() if k in ("frames", "channels", "samplerate", "raises")}
    assert {k: v for k, v in got.items() if k in expected} == expected


def test_worker_survives_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness itself: a file that kills the worker (here by a test hook calling abort()) is charged a
    crash, and the files after it are still read by a fresh worker."""
    base = (DATA / "corrupt" / "base" / "wav16.wav").read_bytes()
    paths = [tmp_path / f"{name}.wav" for name in ("first", "dies", "last")]
    for path in paths:
        path.write_bytes(base)
    monkeypatch.setenv("READ_WORKER_ABORT_ON", "dies.wav")
    found = read_worker.run_batch([str(p) for p in paths], timeout=60)
    assert found[str(paths[0])]["frames"] == found[str(paths[2])]["frames"] == 3200
    assert "crash" in found[str(paths[1])]


# ---------------------------------------------------------------- the bugs the corpus found, one test each
def test_unknown_codec_in_wav_is_unsupported() -> None:
    """A WAV whose format tag no decoder knows: PyAV's stream has no codec context; was AttributeError."""
    blob = make_corrupt.wav_bytes(2, 16000, data=make_corrupt.pcm16(100, 2), fmt_tag=0x1234)
    with pytest.raises(UnsupportedFormatError):
        AudioFile(io.BytesIO(blob))


def test_wav_with_zero_bits_is_unsupported() -> None:
    blob = make_corrupt.wav_bytes(2, 16000, bits=0, data=make_corrupt.pcm16(100, 2), block_align=4)
    with pytest.raises(UnsupportedFormatError):
        AudioFile(io.BytesIO(blob))


def test_resampler_failure_on_damaged_caf_is_corrupt_audio() -> None:
    """A CAF with one flipped header bit that FFmpeg opens but cannot convert; was av.error.ArgumentError. Its
    header now declares 130 channels, which the data holds 46 frames of: read as a truncated file (issue 17)."""
    case = next(c for c in make_corrupt.cases() if c[0] == "caf_hdrflip_2_47.caf")
    blob = bytearray(case[1])
    with pytest.warns(TruncatedAudioWarning):
        with AudioFile(io.BytesIO(bytes(blob))) as f:
            while f.read(4096).shape[1]:
                pass
