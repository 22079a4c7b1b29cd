"""MP3s that end in junk, and MP3s damaged in the middle: the first end where the junk starts (as in
pedalboard), the second raise CorruptAudioError instead of ending the audio at the damage without a word."""

from __future__ import annotations

import io

import numpy as np
import pytest

from stompbox.io import AudioFile, CorruptAudioError
from stompbox.io.codecs.mp3_frames import audio_resumes_after_damage, frame_length

SR = 44100
SECONDS = 4


@pytest.fixture(scope="module")
def mp3s() -> dict[str, bytes]:
    t = np.arange(SR * SECONDS) / SR
    buffer = io.BytesIO()
    with AudioFile(buffer, "w", SR, 1, format="mp3", quality="128 kbps") as f:
        f.write((0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32))
    tagged = buffer.getvalue()
    tag = tagged.find(b"Info")
    first, second = tagged.rfind(b"\xff\xfb", 0, tag), tagged.find(b"\xff\xfb", tag)
    tagless = tagged[:first] + tagged[second:]  # without the LAME tag frame: a length known only at the end
    junk = np.random.default_rng(1).integers(0, 256, 50_000, dtype=np.uint8).tobytes()

    def damaged(data: bytes) -> bytes:
        half = len(data) // 2
        return data[:half] + junk[:3000] + data[half + 3000 :]

    return {
        "tagged": tagged,
        "tagless": tagless,
        "tagged+junk": tagged + junk,
        "tagless+junk": tagless + junk,
        "tagged damaged": damaged(tagged),
        "tagless damaged": damaged(tagless),
        "tagless cut": tagless[: len(tagless) // 2],
        "tagged+id3v1": tagged + b"TAG" + bytes(125),
    }


def test_frame_length_of_known_headers():
    assert frame_length(b"\xff\xfb\x90\x64", 0) == 417  # MPEG-1 Layer III, 128 kbit/s, 44.1 kHz
    assert frame_length(b"\xff\xfb\x92\x64", 0) == 418  # the same, padded
    assert frame_length(b"\xff\xf3\x94\x64", 0) == 240  # MPEG-2, 80 kbit/s, 24 kHz: 72 * 80000 / 24000
    assert frame_length(b"\xff\xfd\x90\x64", 0) == 0  # Layer II
    assert frame_length(b"\xff\xfb\xf0\x64", 0) == 0  # bitrate index 15
    assert frame_length(b"\xff\xfb\x9c\x64", 0) == 0  # reserved sample rate
    assert frame_length(b"\xff\xfb", 0) == 0  # cut short


@pytest.mark.parametrize(
    ("name", "resumes"),
    [
        ("tagged", False),
        ("tagged+junk", False),
        ("tagless+junk", False),
        ("tagged+id3v1", False),
        ("tagless cut", False),
        ("tagged damaged", True),
        ("tagless damaged", True),
    ],
)
def test_damage_is_told_from_junk_after_the_last_frame(mp3s, name, resumes):
    assert audio_resumes_after_damage(mp3s[name]) is resumes


@pytest.mark.parametrize("name", ["tagged+junk", "tagless+junk", "tagged+id3v1"])
def test_junk_after_the_last_frame_ends_the_audio(mp3s, name):
    with AudioFile(io.BytesIO(mp3s[name])) as f:
        audio = f.read(2 * SR * SECONDS)
    expected = SR * SECONDS if name.startswith("tagged") else audio.shape[1]
    assert audio.shape[1] == expected and audio.shape[1] >= SR * SECONDS
    assert np.sqrt(np.mean(audio[0, SR : 3 * SR] ** 2)) == pytest.approx(0.3 / np.sqrt(2), rel=0.1)


@pytest.mark.parametrize("kind", ["path", "file-like"])
@pytest.mark.parametrize("name", ["tagged damaged", "tagless damaged"])
def test_damage_in_the_middle_is_a_corrupt_audio_error_not_a_short_file(mp3s, name, kind, tmp_path, capfd):
    path = tmp_path / "damaged.mp3"
    path.write_bytes(mp3s[name])
    with AudioFile(str(path) if kind == "path" else io.BytesIO(mp3s[name])) as f:
        # the tagged file's length check may notice first ("truncated"); either way, never a short file
        with pytest.raises(CorruptAudioError, match="damaged after frame .* valid audio follows|truncated"):
            while f.read(SR).shape[1]:
                pass
    capfd.readouterr()  # mpg123's own notes on stderr


def test_a_cut_tagless_file_ends_where_its_data_ends(mp3s):
    with AudioFile(io.BytesIO(mp3s["tagless cut"])) as f:
        audio = f.read(2 * SR * SECONDS)
        assert f.exact_duration_known and f.frames == audio.shape[1]
    assert SR * SECONDS // 2 - 2 * 1152 <= audio.shape[1] <= SR * SECONDS // 2 + 1152
