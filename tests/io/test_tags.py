"""Tags and cover art (issue 17): read from files FFmpeg tagged, written so that ffprobe reads them, and kept by
``convert``, ``render`` and ``batch`` (``--no-tags`` drops them)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess

import numpy as np
import pytest

from stompbox.io import AudioFile

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="the ffmpeg CLI is not installed")

TEXT = {"title": "Tïtle ünicode", "artist": "An Artist", "album": "The Album", "track": "3", "date": "2024",
        "comment": "A comment"}  # fmt: skip
SR = 48000
AUDIO = {  # extension -> ffmpeg's audio codec arguments
    "wav": ("-c:a", "pcm_s16le"),
    "flac": ("-c:a", "flac"),
    "mp3": ("-c:a", "libmp3lame"),
    "ogg": ("-c:a", "libvorbis"),
    "opus": ("-c:a", "libopus"),
    "m4a": ("-c:a", "aac"),
}
WITH_COVER = ("flac", "mp3", "m4a")  # formats FFmpeg 5.1 muxes a cover into


def _ffmpeg(*args: str) -> bytes:
    result = subprocess.run(["ffmpeg", "-v", "error", "-y", *args], capture_output=True, check=False)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


@pytest.fixture(scope="module")
def cover(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("cover") / "cover.png"
    _ffmpeg("-f", "lavfi", "-i", "testsrc=size=32x32", "-frames:v", "1", str(path))
    return path.read_bytes()


def _probe(path) -> tuple[dict[str, str], list[bytes]]:
    """ffprobe's tags of a file (container and audio stream, lower-case keys) and its attached pictures."""
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    info = json.loads(out)
    tags = {k.lower(): v for k, v in info["format"].get("tags", {}).items()}
    for stream in info["streams"]:
        if stream["codec_type"] == "audio":
            tags.update({k.lower(): v for k, v in stream.get("tags", {}).items()})
    pictures = []
    for stream in info["streams"]:
        if stream.get("disposition", {}).get("attached_pic"):
            pictures.append(_ffmpeg("-i", str(path), "-map", f"0:{stream['index']}", "-c", "copy", "-f", "data", "-"))
    return tags, pictures


def _tones(channels: int = 2, seconds: float = 0.5) -> np.ndarray:
    t = np.arange(int(SR * seconds)) / SR
    return (0.3 * np.sin(2 * np.pi * 440 * t) * np.ones((channels, 1))).astype(np.float32)


@pytest.mark.parametrize("extension", sorted(AUDIO))
def test_tags_written_by_ffmpeg_are_read(tmp_path, extension, cover):
    """Issue 17: neither ``AudioFile`` nor ``info`` showed tags."""
    cover_path = tmp_path / "cover.png"
    cover_path.write_bytes(cover)
    path = tmp_path / f"tagged.{extension}"
    metadata = [arg for key, value in TEXT.items() for arg in ("-metadata", f"{key}={value}")]
    source = ("-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=48000")
    if extension in WITH_COVER:
        pictures = ("-i", str(cover_path), "-map", "0", "-map", "1", "-c:v", "copy", "-disposition:v", "attached_pic")
        _ffmpeg(*source, *pictures, *AUDIO[extension], *metadata, str(path))
    else:
        _ffmpeg(*source, *AUDIO[extension], *metadata, str(path))
    probed, pictures = _probe(path)
    assert {key: probed.get(key) for key in TEXT} == TEXT  # what FFmpeg wrote, as FFmpeg reads it
    with AudioFile(str(path)) as f:
        tags = f.tags
        assert f.mono().tags == tags  # wrappers pass them through
    expected = dict(TEXT)
    if extension in WITH_COVER:
        assert pictures == [cover]
        expected["cover"] = cover
    assert tags == expected
    with open(path, "rb") as handle:  # a file-like, left where it was
        handle.seek(0)
        f = AudioFile(handle)
        assert f.tags == expected and handle.tell() in (0, handle.tell())
        f.read(100)


@pytest.mark.parametrize("extension", sorted(AUDIO))
def test_tags_stompbox_writes_are_read_by_ffprobe_and_leave_the_audio_alone(tmp_path, extension, cover):
    tags = {**TEXT, "cover": cover}
    x = _tones()
    plain, tagged = tmp_path / f"plain.{extension}", tmp_path / f"tagged.{extension}"
    with AudioFile(str(plain), "w", SR, 2) as f:
        f.write(x)
    with AudioFile(str(tagged), "w", SR, 2, tags=tags) as f:
        assert f.tags == tags
        f.write(x)
    probed, pictures = _probe(tagged)
    assert {key: probed.get(key) for key in TEXT} == TEXT
    assert pictures == [cover]
    with AudioFile(str(tagged)) as f, AudioFile(str(plain)) as g:
        assert f.tags == tags and g.tags == {}
        assert (f.frames, f.exact_duration_known) == (g.frames, g.exact_duration_known)
        assert np.array_equal(f.read(f.frames), g.read(g.frames))
    # a file-like: the file starts where it was positioned (an M4A is written at the start: PyAV's muxer takes
    # positions from the start of the file-like)
    prefix = b"" if extension == "m4a" else b"prefix"
    buffer = io.BytesIO(prefix)
    buffer.seek(len(prefix))
    with AudioFile(buffer, "w", SR, 2, format=extension, tags=tags) as f:
        f.write(x)
    assert buffer.getvalue()[: len(prefix)] == prefix
    assert AudioFile(io.BytesIO(buffer.getvalue()[len(prefix) :])).tags == tags


def test_bad_tags_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="Unknown tag 'titel'"):
        AudioFile(str(tmp_path / "a.wav"), "w", SR, 1, tags={"titel": "x"})
    with pytest.raises(TypeError, match="cover"):
        AudioFile(str(tmp_path / "a.wav"), "w", SR, 1, tags={"cover": "cover.png"})
    with pytest.raises(ValueError, match="AIFF"):
        AudioFile(str(tmp_path / "a.aiff"), "w", SR, 1, tags={"title": "x"})

    class Pipe(io.RawIOBase):
        def writable(self) -> bool:
            return True

        def write(self, data) -> int:
            return len(data)

    with pytest.raises(ValueError, match="seekable"):
        AudioFile(Pipe(), "w", SR, 1, format="wav", tags={"title": "x"})
    assert not list(tmp_path.iterdir())  # nothing left behind
    with AudioFile(str(tmp_path / "b.flac"), "w", SR, 1) as f:
        f.tags = {"title": "set later", "track": 7}
        f.write(_tones(1))
    assert AudioFile(str(tmp_path / "b.flac")).tags == {"title": "set later", "track": "7"}


def test_convert_render_and_batch_keep_tags_and_no_tags_drops_them(tmp_path, cover, capsys):
    """Issue 17: ``convert`` and ``render`` dropped tags and cover art (FFmpeg keeps both, SoX keeps tags)."""
    from stompbox.cli.main import main

    source = tmp_path / "in" / "song.flac"
    source.parent.mkdir()
    with AudioFile(str(source), "w", SR, 2, tags={**TEXT, "cover": cover}) as f:
        f.write(_tones())
    runs = {
        "convert.mp3": ["convert", str(source), str(tmp_path / "convert.mp3")],
        "render.ogg": ["render", str(source), str(tmp_path / "render.ogg"), "gain", "gain_db=-1"],
        "convert.m4a": ["convert", str(source), str(tmp_path / "convert.m4a"), "-c", "1"],
    }
    for name, command in runs.items():
        assert main([*command, "--quiet"]) == 0
        probed, pictures = _probe(tmp_path / name)
        assert {key: probed.get(key) for key in TEXT} == TEXT, name
        assert pictures == [cover], name
        assert main([*command, "--quiet", "--no-tags"]) == 0
        assert AudioFile(str(tmp_path / name)).tags == {}, name
    batch = ["batch", str(source.parent), str(tmp_path / "out"), "gain", "gain_db=-1", "-t", "opus", "--quiet"]
    assert main(batch) == 0
    assert AudioFile(str(tmp_path / "out" / "song.opus")).tags == {**TEXT, "cover": cover}
    capsys.readouterr()
    assert main(["info", "--no-peak", str(source)]) == 0
    out = capsys.readouterr().out
    assert "  title:       Tïtle ünicode" in out and f"  cover:       image/png, {len(cover)} bytes" in out
    assert main(["info", "--no-peak", "--json", str(source)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["tags"]["artist"] == "An Artist"
