"""Loudness of files and file normalisation through stompbox.io.AudioFile (skipped until it is available)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

import stompbox
from _audio import music
from stompbox.analysis import loudness, loudness_of_file, normalize_file

if not hasattr(pytest.importorskip("stompbox.io"), "AudioFile"):
    pytest.skip("stompbox.io.AudioFile is not available", allow_module_level=True)

SR = 44100


@pytest.fixture
def wav(tmp_path):
    path = tmp_path / "in.wav"
    x = music(5.0, sr=SR) * 0.3
    sf.write(path, x.T, SR, subtype="FLOAT")
    return path, x


def test_loudness_of_file_equals_the_array(wav):
    path, x = wav
    r = loudness_of_file(path, block_frames=3000)
    assert r.integrated == loudness(x, SR).integrated
    assert r.frames == x.shape[1] and r.num_channels == 2


def test_normalize_file_two_passes(wav, tmp_path):
    path, x = wav
    out = tmp_path / "out.wav"
    report = normalize_file(path, out, target_lufs=-20.0, true_peak_db=-1.0)
    y, rate = sf.read(out, dtype="float32", always_2d=True)
    assert rate == SR and y.shape == x.T.shape
    after = loudness(y.T, SR)
    assert after.integrated == pytest.approx(report.integrated, abs=0.01)
    assert after.true_peak <= -1.0 + 0.01
    np.testing.assert_allclose(y.T, x * 10 ** (report.gain_db / 20), rtol=1e-5, atol=1e-7)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.wav", "out.wav"]  # no partial file left


def test_normalize_file_refuses_to_overwrite_its_input(wav):
    path, _ = wav
    with pytest.raises(ValueError, match="input"):
        normalize_file(path, path)


def test_render_file_with_auto_tail(wav, tmp_path):
    from stompbox.render import render, render_file

    path, x = wav
    out = tmp_path / "rendered.wav"
    counts = render_file(path, out, [stompbox.Delay(delay_seconds=0.2, feedback=0.5)], "auto", buffer_size=1024)
    y, _ = sf.read(out, dtype="float32", always_2d=True)
    expected = render(x, SR, stompbox.Delay(delay_seconds=0.2, feedback=0.5), "auto")
    assert counts == (x.shape[1], expected.shape[1])
    np.testing.assert_allclose(y.T, expected, atol=1e-7)
