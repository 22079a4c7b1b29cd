"""Plots: the numbers behind them (envelope, spectrogram levels) and the PNGs of ``plot`` and ``demo``."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import soundfile as sf

import stompbox
from stompbox.analysis.plot import plot_audio, spectrogram_db, waveform_envelope
from stompbox.cli.main import main

pytest.importorskip("matplotlib")
PNG = b"\x89PNG\r\n\x1a\n"
SR = 44100


@pytest.fixture
def io_ready():
    try:
        from stompbox.io import AudioFile  # noqa: F401
    except ImportError:
        pytest.skip("stompbox.io.AudioFile is not available yet")


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_waveform_envelope_keeps_the_extremes():
    x = np.zeros((2, 10_000), np.float32)
    x[0, 1234] = 0.9
    x[1, 8765] = -0.7
    positions, lows, highs = waveform_envelope(x, columns=100)
    assert lows.shape == highs.shape == (2, 100) and positions[1] == 100
    assert highs[0].max() == pytest.approx(0.9) and np.argmax(highs[0]) == 12
    assert lows[1].min() == pytest.approx(-0.7) and np.argmin(lows[1]) == 87


def test_spectrogram_level_of_a_sine():
    t = np.arange(SR) / SR
    x = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)  # -6.02 dBFS at 1 kHz
    times, freqs, levels = spectrogram_db(x, SR, columns=50)
    assert len(times) <= 60 and times[-1] <= 1.0
    middle = levels[:, len(times) // 2]
    peak = int(np.argmax(middle))
    assert abs(freqs[peak] - 1000) <= freqs[1]
    assert middle[peak] == pytest.approx(20 * np.log10(0.5), abs=1.5)  # Hann scalloping is < 1.5 dB
    assert np.median(middle) < -60  # far from the tone: window leakage only
    assert levels.min() >= -100.0


def test_plot_audio_png_alone_and_before_after(tmp_path):
    from stompbox.examples import example_clip

    x = example_clip(SR, 1.0)
    one = tmp_path / "one.png"
    fig = plot_audio(x, SR, path=one)
    assert len(fig.axes) == 3 and _png_size(one)[0] > 800  # waveform, spectrogram, colour bar
    y = stompbox.Pedalboard([stompbox.Distortion(drive_db=20), stompbox.Gain(-6)])(x, SR)
    both = tmp_path / "both.png"
    fig = plot_audio(x, SR, y, path=both, title="t")
    assert len(fig.axes) == 5  # two waveforms, two spectrograms, one colour bar
    width, height = _png_size(both)
    assert width > height > 400
    before, after = fig.axes[0], fig.axes[1]  # the two waveforms share amplitude and time scales
    assert before.get_ylim() == after.get_ylim() and before.get_xlim() == after.get_xlim()


def test_plot_command(tmp_path, io_ready, capsys, monkeypatch):
    from stompbox.examples import example_clip

    song = tmp_path / "song.wav"
    sf.write(song, example_clip(SR, 1.0).T, SR)
    out = tmp_path / "pic.png"
    assert main(["plot", str(song), str(out), "distortion", "reverb", "room_size=0.75", "--tail", "0.5"]) == 0
    assert _png_size(out)[0] > 800
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    monkeypatch.chdir(tmp_path)
    assert main(["plot", str(song), "--duration", "0.5"]) == 0  # default name: song.png, here
    assert _png_size(tmp_path / "song.png")[0] > 800
    assert main(["plot", str(song), "nosuch"]) == 2
    assert main(["plot", str(tmp_path / "missing.wav")]) == 1
    capsys.readouterr()


def test_demo_writes_its_files(tmp_path, io_ready, capsys):
    out = tmp_path / "demo"
    assert main(["demo", str(out), "--seconds", "2"]) == 0
    printed = capsys.readouterr().out
    names = sorted(os.listdir(out))
    assert names == ["demo.png", "demo_chain.json", "demo_dry.wav", "demo_wet.wav"]
    for name in names:
        assert f"wrote {out / name}" in printed
    dry, rate = sf.read(out / "demo_dry.wav", dtype="float32", always_2d=True)
    wet, _ = sf.read(out / "demo_wet.wav", dtype="float32", always_2d=True)
    assert rate == SR and dry.shape == (2 * SR, 2)
    assert wet.shape == (2 * SR + 3 * SR, 2)  # three seconds of tail
    assert 0.1 < np.abs(wet).max() < 1.0  # loud, not clipped
    chain = stompbox.load_chain(out / "demo_chain.json")
    assert [type(p).__name__ for p in chain][:3] == ["Distortion", "Delay", "Reverb"]
    assert json.loads((out / "demo_chain.json").read_text())["stompbox_chain"] == 1
    # the wet file is the saved chain applied to the dry file (16-bit both: compare within a quantum)
    expected = chain(np.concatenate([dry.T, np.zeros((2, 3 * SR), np.float32)], axis=1), SR)
    assert np.abs(wet.T - expected).max() < 3e-3
    assert _png_size(out / "demo.png")[0] > 1000


def test_a_plot_is_written_atomically(tmp_path, monkeypatch):
    """A plot that fails half-way leaves the earlier image at its path, and no temporary file."""
    from matplotlib.figure import Figure

    path = tmp_path / "p.svg"
    path.write_bytes(b"earlier")
    real = Figure.savefig

    def half_then_fail(self, fname, **kwargs):
        real(self, fname, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half_then_fail)
    x = np.zeros(SR // 10, np.float32)
    with pytest.raises(OSError):
        plot_audio(x, SR, path=path)
    assert path.read_bytes() == b"earlier" and os.listdir(tmp_path) == ["p.svg"]
    monkeypatch.setattr(Figure, "savefig", real)
    plot_audio(x, SR, path=path)
    assert path.read_bytes().lstrip().startswith(b"<?xml") and os.listdir(tmp_path) == ["p.svg"]


def test_a_stream_summary_is_the_whole_arrays_and_stays_small():
    """Gathered block by block (any block size, length unknown), the envelope holds the extremes and has
    between 2000 and 4000 slices, the spectrogram between 1200 and 2400 frames, whatever the length."""
    from stompbox.analysis.plot import StreamSummary

    rng = np.random.default_rng(3)
    x = (0.1 * rng.standard_normal((2, SR * 30))).astype(np.float32)
    x[0, 123_456] = 0.95
    x[1, 654_321] = -0.9
    known = StreamSummary.of(x, SR)
    unknown = StreamSummary(SR, 2)  # a pipe: the length is not known in advance
    for start in range(0, x.shape[1], 7919):
        unknown.add(x[:, start : start + 7919])
    unknown.finish()
    for summary in (known, unknown):
        positions, lows, highs = summary.envelope()
        assert 1990 <= lows.shape[1] <= 4000 and highs[0].max() == pytest.approx(0.95)
        assert lows[1].min() == pytest.approx(-0.9)
        assert positions[np.argmax(highs[0])] <= 123_456 < positions[np.argmax(highs[0])] + summary.step
        times, freqs, levels = summary.spectrogram()
        assert 1200 <= times.size <= 2400 and levels.shape == (freqs.size, times.size)
        assert summary.frames == x.shape[1] and summary.peak == pytest.approx(0.95)


def test_low_frequencies_are_resolved_and_rows_are_log_spaced():
    """50 and 100 Hz tones land on their own rows (a 2048-point FFT on a linear axis drew them in 21.5-Hz
    block, spread over a third of the picture's height)."""
    from stompbox.analysis.plot import StreamSummary

    t = np.arange(SR * 2) / SR
    summary = StreamSummary.of((0.5 * np.sin(2 * np.pi * 50 * t) + 0.5 * np.sin(2 * np.pi * 100 * t)), SR)
    times, freqs, levels = summary.spectrogram()
    assert freqs[0] == pytest.approx(20.0) and np.allclose(np.diff(np.log(freqs)), np.log(freqs[1] / freqs[0]))
    column = levels[:, times.size // 2].astype(np.float32)
    near = lambda hz: int(np.argmin(np.abs(freqs - hz)))  # noqa: E731
    assert column[near(50)] > column[near(71)] + 6 and column[near(100)] > column[near(71)] + 6


def test_axes_in_file_time_and_layout_names(tmp_path):
    from stompbox.analysis.plot import StreamSummary

    x = np.zeros((6, SR), np.float32)
    fig = plot_audio(StreamSummary.of(x, SR), SR, path=tmp_path / "six.png", start=12.5)
    wave = fig.axes[0]
    assert wave.get_xlim() == pytest.approx((12.5, 13.5))
    assert [t.get_text() for t in wave.get_legend().get_texts()] == ["FL", "FR", "FC", "LFE", "BL", "BR"]
    assert _png_size(tmp_path / "six.png")[0] > 800


def test_plot_of_a_long_file_in_bounded_memory(tmp_path):
    """``stompbox plot`` of 10 minutes of stereo peaks under 100 MB (an hour measured 89.6 MB; the whole read
    was 727 MB for 10 minutes), within a few MB of what a minute takes: memory does not follow the length."""
    import shutil
    import subprocess
    import sys

    if shutil.which("sox") is None:
        pytest.skip("needs SoX")
    peaks = []
    for seconds in (60, 600):
        path = tmp_path / f"{seconds}.wav"
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(path), "synth", str(seconds),
                        "sine", "440"], check=True)  # fmt: skip
        # VmHWM, not ru_maxrss: that one keeps the peak of the forked test process across exec
        code = "import sys; from stompbox.cli.main import main; main(sys.argv[1:]); " \
               "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"  # fmt: skip
        done = subprocess.run([sys.executable, "-c", code, "plot", str(path), str(tmp_path / "p.png"), "-q"],
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        peaks.append(int(done.stdout.split()[-1]) / 1024)
        path.unlink()
    assert peaks[1] < 100, peaks
    assert peaks[1] - peaks[0] < 8, peaks
