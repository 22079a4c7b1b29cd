"""The stompbox command: exit codes, info output, streaming convert, the README's first command."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from stompbox.cli.main import main
from stompbox.examples import example_clip


@pytest.fixture(autouse=True)
def _needs_audiofile():
    try:
        from stompbox.io import AudioFile  # noqa: F401
    except ImportError:
        pytest.skip("stompbox.io.AudioFile is not available yet")


@pytest.fixture
def tone_wav(tmp_path):
    t = np.arange(44100) / 44100
    x = 0.5 * np.stack([np.sin(2 * np.pi * 440 * t), np.sin(2 * np.pi * 660 * t)])
    path = tmp_path / "tone.wav"
    sf.write(path, x.T, 44100, subtype="PCM_16")
    return str(path)


def test_example_clip_is_deterministic_stereo_music():
    x = example_clip(44100, 2.0)
    assert x.shape == (2, 88200) and x.dtype == np.float32
    assert np.array_equal(x, example_clip(44100, 2.0))
    assert np.abs(x).max() == pytest.approx(10 ** (-1 / 20), abs=1e-6)
    assert not np.array_equal(x[0], x[1])  # really stereo
    assert example_clip(48000, 0.5).shape == (2, 24000)
    with pytest.raises(ValueError):
        example_clip(0)


def test_info_text_and_json(tone_wav, capsys):
    assert main(["info", tone_wav]) == 0
    out = capsys.readouterr().out
    assert "44100 Hz" in out and "frames:      44100 (exact)" in out and "16-bit" in out and "dBFS" in out
    assert main(["info", "--json", tone_wav]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["samplerate"] == 44100 and entry["num_channels"] == 2 and entry["frames"] == 44100
    assert entry["exact_duration"] is True and entry["bit_depth"] == 16 and entry["format"] == "wav"
    assert entry["codec"] == "pcm_s16le" and entry["path"] == tone_wav  # ffprobe's names
    assert entry["duration"] == pytest.approx(1.0)
    assert entry["peak_dbfs"] == pytest.approx(20 * math.log10(0.5), abs=0.01)  # a -6.02 dBFS sine


def test_errors_are_one_line_with_exit_1(tmp_path, capsys, tone_wav):
    missing = str(tmp_path / "missing.wav")
    junk = tmp_path / "junk.wav"
    junk.write_bytes(os.urandom(5000))
    for argv in (
        ["info", missing],
        ["info", str(junk)],
        ["info", str(tmp_path)],
        ["convert", missing, str(tmp_path / "o.wav")],
        ["convert", tone_wav, str(tmp_path / "o.xyz")],
        ["convert", tone_wav, str(tmp_path / "no" / "such" / "dir.wav")],
    ):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith("stompbox: error:") and err.count("\n") == 1 and "Traceback" not in err, err
    # one bad file among good ones: the good ones are still reported
    assert main(["info", tone_wav, missing]) == 1
    captured = capsys.readouterr()
    assert "44100 Hz" in captured.out and "missing.wav" in captured.err


def test_usage_errors_exit_2(capsys, tone_wav):
    assert main([]) == 2
    assert main(["frobnicate"]) == 2
    assert main(["convert", tone_wav]) == 2
    assert main(["convert", "--example", "a.wav", "b.wav"]) == 2
    assert main(["convert", tone_wav, "x.wav", "--samplerate", "-5"]) == 2
    assert main(["convert", tone_wav, "x.wav", "--resample-quality", "great"]) == 2
    assert main(["--help"]) == 0
    capsys.readouterr()


def test_convert_resample_channels_bit_depth(tmp_path, tone_wav):
    out = str(tmp_path / "out.flac")
    assert main(["convert", tone_wav, out, "--samplerate", "48000", "--channels", "1", "--bit-depth", "24"]) == 0
    info = sf.info(out)
    assert (info.samplerate, info.channels, info.frames, info.subtype) == (48000, 1, 48000, "PCM_24")
    y, _ = sf.read(out, dtype="float32")
    # mono = mean of 440 Hz and 660 Hz at 0.5: peak close to 0.5 * (1 + 1) / 2 somewhere in the second
    assert 0.3 < np.abs(y).max() <= 0.51
    same = str(tmp_path / "same.wav")
    assert main(["convert", tone_wav, same]) == 0
    a, _ = sf.read(tone_wav, dtype="int16")
    b, _ = sf.read(same, dtype="int16")
    assert np.array_equal(a, b)  # a plain conversion is lossless


def test_convert_example_then_info(tmp_path, capsys):
    out = str(tmp_path / "example.flac")
    assert main(["convert", "--example", out, "--quiet"]) == 0
    x, rate = sf.read(out, dtype="float32", always_2d=True)
    assert rate == 44100 and x.shape == (8 * 44100, 2)
    assert np.abs(x.T - example_clip()).max() < 1e-4  # 24-bit FLAC of the synthesised clip
    assert main(["info", out]) == 0
    assert "-1.00 dBFS" in capsys.readouterr().out


def test_entry_point_in_a_subprocess(tmp_path):
    """The installed ``stompbox`` script and ``python -m stompbox`` run :func:`entry`, which exits the process with
    main()'s status once its output is complete (it freezes the collector before the interpreter shuts down)."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="stompbox")
    assert script.value == "stompbox.cli.main:entry"
    out = tmp_path / "example.flac"
    cmd = [sys.executable, "-m", "stompbox"]
    done = subprocess.run([*cmd, "convert", "--example", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # not a terminal: no progress bar
    done = subprocess.run([*cmd, "info", "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout)[0]["frames"] == 8 * 44100
    done = subprocess.run([*cmd, "info", str(tmp_path / "nope.mp3")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    done = subprocess.run([*cmd, "info", "--no-such-option"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "stompbox info: error:" in done.stderr
    done = subprocess.run([*cmd, "effects"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Reverb" in done.stdout and "room_size" in done.stdout


@pytest.mark.parametrize(
    ("extension", "rate", "stored"),
    [
        (".opus", 44100, 48000),
        (".opus", 96000, 48000),
        (".opus", 11025, 12000),
        (".opus", 16000, 16000),
        (".mp3", 96000, 48000),
        (".mp3", 44100, 44100),
        (".m4a", 7000, 7350),
        (".aac", 192000, 96000),
        (".wav", 12345, 12345),
        (".flac", 192000, 192000),
        (".xyz", 44100, 44100),
    ],
)
def test_storable_rate_is_the_lowest_rate_above_or_else_the_highest(extension, rate, stored):
    from stompbox.io.formats import storable_rate

    assert storable_rate(extension, rate) == stored


def test_a_format_that_cannot_store_the_input_rate_gets_the_nearest_one_with_a_note(tmp_path, tone_wav, capsys):
    """Opus stores only 8-48 kHz in five steps: a 44.1 kHz input is resampled to 48 kHz, as FFmpeg does, with a
    note (not an error); an explicit --samplerate is obeyed without one; the library's process_file does the
    same."""
    from stompbox.io import AudioFile

    out = str(tmp_path / "tone.opus")
    assert main(["convert", tone_wav, out]) == 0
    assert "cannot store 44100 Hz: resampled to 48000 Hz" in capsys.readouterr().err
    with AudioFile(out) as f:
        assert f.samplerate == 48000 and abs(f.frames - 48000) <= 1
        audio = f.read(f.frames)
    spectrum = np.abs(np.fft.rfft(audio[0, 4800:43200]))
    assert abs(np.argmax(spectrum) * 48000 / 38400 - 440) <= 2  # the tone is still 440 Hz
    assert main(["convert", tone_wav, out, "--samplerate", "16000"]) == 0
    assert "note" not in capsys.readouterr().err
    with AudioFile(out) as f:
        assert f.samplerate == 16000
    assert main(["render", tone_wav, out, "gain", "gain_db=-6", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    from stompbox.batch import process_file

    _, frames_out = process_file(tone_wav, str(tmp_path / "lib.opus"), [])
    assert frames_out == 48000
    with AudioFile(str(tmp_path / "lib.opus")) as f:
        assert f.samplerate == 48000
