"""The command's defaults are FFmpeg's, with headers SoX and FFmpeg read without a word: lossy input to WAV is
16-bit, float WAV headers are ones ``soxi`` does not warn about, MP3/AAC/Vorbis/Opus bitrates are FFmpeg's
defaults (the Python API keeps pedalboard's), and a ``.aac`` is ADTS, as FFmpeg writes it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from stompbox.cli.main import main
from stompbox.io import AudioFile

pytestmark = pytest.mark.skipif(
    not (shutil.which("ffmpeg") and shutil.which("soxi") and shutil.which("sox")), reason="needs ffmpeg and sox"
)
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def _ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True, timeout=120)


def _probe(path):
    done = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=format_name,bit_rate:stream=codec_name", "-of", "json",
         str(path)], capture_output=True, text=True, check=True)  # fmt: skip
    found = json.loads(done.stdout)
    return found["format"], found["streams"][0]


@pytest.fixture(scope="module")
def noise(tmp_path_factory):
    path = tmp_path_factory.mktemp("defaults") / "noise.wav"
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(path), "synth", "10", "pinknoise",
                    "vol", "0.3"], check=True)  # fmt: skip
    return path


@pytest.mark.parametrize("ext", ["mp3", "m4a", "ogg", "opus"])
def test_lossy_input_to_wav_is_16_bit_as_ffmpeg_writes_it(noise, tmp_path, ext, capsys):
    lossy = tmp_path / f"in.{ext}"
    _ffmpeg("-i", str(noise), str(lossy))
    ffmpegs = tmp_path / "ffmpeg.wav"
    _ffmpeg("-i", str(lossy), str(ffmpegs))
    ours = tmp_path / "ours.wav"
    assert main(["convert", str(lossy), str(ours), "-q"]) == 0
    assert _probe(ours)[1]["codec_name"] == _probe(ffmpegs)[1]["codec_name"] == "pcm_s16le"
    assert main(["render", str(lossy), str(ours), "gain", "gain_db=-1", "-q"]) == 0
    assert _probe(ours)[1]["codec_name"] == "pcm_s16le"
    with AudioFile(str(noise)) as f:
        assert f.file_dtype == "int16"  # a PCM input keeps its own depth (tested elsewhere); float stays float:
    floats = tmp_path / "f.wav"
    _ffmpeg("-i", str(noise), "-c:a", "pcm_f32le", str(floats))
    assert main(["convert", str(floats), str(ours), "-q"]) == 0
    assert _probe(ours)[1]["codec_name"] == "pcm_f32le"


def _soxi_warnings(path) -> str:
    done = subprocess.run(["soxi", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr.strip()


@pytest.mark.parametrize("channels", [1, 2])
def test_soxi_reads_every_wav_stompbox_writes_without_a_warning(tmp_path, channels):
    """Every depth, written to a path, to a BytesIO and through the command to standard output (a file and a
    pipe). Beyond two channels the float header is WAVE_FORMAT_EXTENSIBLE, which keeps the channel mask and on
    which SoX 14.4 warns whatever the writer (FFmpeg's too)."""
    x = np.random.default_rng(channels).uniform(-0.5, 0.5, (channels, 4410)).astype(np.float32)
    for depth in (8, 16, 24, 32, 64, "int32"):
        path = tmp_path / f"w{depth}.wav"
        with AudioFile(str(path), "w", 44100, channels, bit_depth=depth) as f:
            f.write(x)
        assert _soxi_warnings(path) == "", depth
        import io

        buffer = io.BytesIO()
        with AudioFile(buffer, "w", 44100, channels, bit_depth=depth, format="wav") as f:
            f.write(x)
        path.write_bytes(buffer.getvalue())
        assert _soxi_warnings(path) == "", depth
    src = tmp_path / "w32.wav"
    for bits in ("16", "24", "32"):
        with open(tmp_path / "stdout.wav", "wb") as out:  # standard output redirected to a file: seekable
            done = subprocess.run([sys.executable, "-m", "stompbox", "convert", str(src), "-", "-b", bits],
                                  stdout=out, stderr=subprocess.PIPE, env=ENV)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert _soxi_warnings(tmp_path / "stdout.wav") == "", bits
        assert subprocess.run(["soxi", "-s", str(tmp_path / "stdout.wav")], capture_output=True,
                              text=True).stdout.strip() == "4410"  # fmt: skip


def test_default_bitrates_are_ffmpegs(noise, tmp_path, capsys):
    """MP3 and AAC at FFmpeg's 128 kbps (not 320/256), Vorbis and Opus within 20 % of what FFmpeg's defaults
    make of the same input (VBR); the Python API keeps pedalboard's defaults."""
    for ext in ("mp3", "m4a", "aac", "ogg", "opus"):
        ours = tmp_path / f"ours.{ext}"
        assert main(["convert", str(noise), str(ours), "-q"]) == 0
        rate = int(_probe(ours)[0]["bit_rate"]) / 1000
        if ext in ("mp3", "m4a", "aac"):
            assert 115 < rate < 140, (ext, rate)
        else:
            theirs = tmp_path / f"ffmpeg.{ext}"
            _ffmpeg("-i", str(noise), str(theirs))
            expected = int(_probe(theirs)[0]["bit_rate"]) / 1000
            assert abs(rate - expected) < 0.2 * expected, (ext, rate, expected)
    with AudioFile(str(tmp_path / "api.mp3"), "w", 44100, 2) as f:
        assert f.quality == "320 kbps"


def test_aac_is_adts_and_streams(noise, tmp_path):
    out = tmp_path / "x.aac"
    assert main(["convert", str(noise), str(out), "-q"]) == 0
    data = out.read_bytes()
    assert data[0] == 0xFF and data[1] & 0xF6 == 0xF0  # an ADTS sync word (MPEG-4, layer 0)
    fmt, stream = _probe(out)
    assert fmt["format_name"] == "aac" and stream["codec_name"] == "aac"
    piped = subprocess.run(f"{sys.executable} -m stompbox convert {noise} - -t aac | cat", shell=True,
                           capture_output=True, env=ENV)  # fmt: skip
    assert piped.returncode == 0 and piped.stdout[:2] == data[:2]
    with AudioFile(str(out)) as f:
        assert f.samplerate == 44100 and f.num_channels == 2


def test_batch_writes_the_same_defaults_as_convert(noise, tmp_path, capsys):
    """``batch`` follows the command's rule, not the Python API's: lossy input to WAV is 16-bit, MP3 is 128 kbps,
    ``.aac`` is ADTS, in its worker processes too (two files, two jobs: the second runs in the pool)."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("a", "b"):
        _ffmpeg("-i", str(noise), "-t", "3", str(folder / f"{name}.mp3"))
    gain = ["gain", "gain_db=-1", "-q", "-j", "2"]
    assert main(["batch", str(folder), str(tmp_path / "wav"), *gain, "-t", "wav"]) == 0
    for name in ("a", "b"):
        assert _probe(tmp_path / "wav" / f"{name}.wav")[1]["codec_name"] == "pcm_s16le"  # the API writes float
    assert main(["batch", str(folder), str(tmp_path / "mp3"), *gain]) == 0
    for name in ("a", "b"):
        assert 115 < int(_probe(tmp_path / "mp3" / f"{name}.mp3")[0]["bit_rate"]) / 1000 < 140  # the API: 320
    assert main(["batch", str(folder), str(tmp_path / "aac"), *gain, "-t", "aac"]) == 0
    for name in ("a", "b"):
        out = tmp_path / "aac" / f"{name}.aac"
        fmt, stream = _probe(out)
        assert fmt["format_name"] == "aac" and stream["codec_name"] == "aac"
        assert 115 < int(fmt["bit_rate"]) / 1000 < 140  # the API: 256
    with AudioFile(str(folder / "a.mp3")) as f:  # the API's rule is unchanged
        assert f.file_dtype == "float32"
    from stompbox import Gain
    from stompbox.batch import process_file

    process_file(str(folder / "a.mp3"), str(tmp_path / "api.wav"), Gain())
    with AudioFile(str(tmp_path / "api.wav")) as f:
        assert f.file_dtype == "float32"
