"""Sidechain: Compressor and NoiseGate driven by a key signal (ducking), in process() and while streaming."""

from __future__ import annotations

import math

import numpy as np
import pytest

import stompbox as sb
from _audio import music, speech

SR = 44100


def _peak_envelope(key: np.ndarray, attack_ms: float, release_ms: float) -> np.ndarray:
    """The compressor's detector written out: a one-pole peak follower of |key| with the coefficients
    exp(-2 pi 1000 / (ms * sr))."""
    a = math.exp(-2 * math.pi * 1000 / (attack_ms * SR))
    r = math.exp(-2 * math.pi * 1000 / (release_ms * SR))
    env = np.empty(key.size)
    e = 0.0
    for i, v in enumerate(np.abs(key.astype(np.float64))):
        e = v + (a if v > e else r) * (e - v)
        env[i] = e
    return env


def test_sidechained_compressor_ducks_music_under_speech_by_the_expected_gain_reduction():
    music_ = music(1.5, SR, channels=2)
    voice = speech(1.5, SR, channels=1)
    threshold_db, ratio = -30.0, 4.0
    y = sb.Compressor(threshold_db, ratio, attack_ms=1.0, release_ms=100.0).process(music_, SR, sidechain=voice)
    env = _peak_envelope(voice[0], 1.0, 100.0)
    over_db = 20 * np.log10(np.maximum(env, 1e-12)) - threshold_db
    expected_db = np.where(over_db > 0, -over_db * (1 - 1 / ratio), 0.0)  # gain reduction of a hard knee
    gain = 10 ** (expected_db / 20)
    np.testing.assert_allclose(y, music_ * gain, atol=2e-4)  # float32 coefficients vs this float64 model
    # and in plain numbers: while the voice speaks, the music is ducked by what the key's level predicts
    talking = over_db > 6
    assert talking.mean() > 0.2 and (~talking).mean() > 0.1
    measured = 20 * np.log10(np.sqrt(np.mean(y[:, talking] ** 2) / np.mean(music_[:, talking] ** 2)))
    predicted = 20 * np.log10(np.sqrt(np.mean((music_ * gain)[:, talking] ** 2) / np.mean(music_[:, talking] ** 2)))
    assert measured == pytest.approx(predicted, abs=0.1)
    assert measured < -6.0
    silent = over_db < -10
    np.testing.assert_array_equal(y[:, silent], music_[:, silent])  # no reduction while the key is quiet


def test_key_equal_to_the_input_is_the_plain_compressor():
    x = music(0.5, SR)
    for make in (lambda: sb.Compressor(-25, 6), lambda: sb.NoiseGate(-30, 8)):
        np.testing.assert_array_equal(make().process(x, SR, sidechain=x), make().process(x, SR))


def test_sidechain_attribute_and_per_call_keys_stream_in_step():
    x = music(1.0, SR)
    key = speech(1.0, SR)
    whole = sb.Compressor(-30, 4).process(x, SR, sidechain=key)
    # the attribute lines the key up with the stream from its start (also inside a board, in any block size)
    comp = sb.Compressor(-30, 4)
    comp.sidechain = key
    board = sb.Pedalboard([sb.Gain(0.0), comp])
    np.testing.assert_allclose(board.process(x, SR, buffer_size=333), whole, atol=1e-7)
    comp.reset()
    streamed = np.concatenate([comp.process(x[:, i : i + 700], SR, reset=False) for i in range(0, x.shape[1], 700)], 1)
    np.testing.assert_allclose(streamed, whole, atol=1e-7)
    # per call: each block brings its own key
    plain = sb.Compressor(-30, 4)
    plain.reset()
    pieces = [
        plain.process(x[:, i : i + 700], SR, reset=False, sidechain=key[:, i : i + 700])
        for i in range(0, x.shape[1], 700)
    ]
    np.testing.assert_allclose(np.concatenate(pieces, 1), whole, atol=1e-7)
    assert plain.sidechain is None  # a per-call key is not kept


def test_gate_opens_with_the_key():
    x = music(1.0, SR, channels=1)
    key = np.zeros_like(x)
    key[:, : SR // 2] = 0.5  # loud key for the first half: the gate is open, then closes
    y = sb.NoiseGate(-30, ratio=20, release_ms=20).process(x, SR, sidechain=key)
    np.testing.assert_allclose(y[:, : SR // 2], x[:, : SR // 2], atol=1e-6)
    tail = slice(SR // 2 + SR // 10, SR)
    assert np.sqrt(np.mean(y[:, tail] ** 2)) < 0.01 * np.sqrt(np.mean(x[:, tail] ** 2))


def test_key_past_its_end_is_silence_and_stereo_key_drives_matching_channels():
    x = music(0.5, SR)
    short = speech(0.25, SR)
    y = sb.Compressor(-40, 10).process(x, SR, sidechain=short)
    np.testing.assert_array_equal(y[:, -SR // 10 :], x[:, -SR // 10 :])  # released after the key ended
    key = np.stack([np.full(x.shape[1], 0.5, np.float32), np.zeros(x.shape[1], np.float32)])
    z = sb.Compressor(-20, 4).process(x, SR, sidechain=key)
    assert np.max(np.abs(z[0])) < 0.7 * np.max(np.abs(x[0]))
    np.testing.assert_array_equal(z[1], x[1])


def test_sidechain_with_automation_and_errors():
    x = music(0.5, SR)
    key = speech(0.5, SR)
    auto = sb.Compressor(threshold_db=np.full(x.shape[1], -30.0), ratio=4).process(x, SR, sidechain=key)
    np.testing.assert_allclose(auto, sb.Compressor(-30, 4).process(x, SR, sidechain=key), atol=1e-6)
    comp = sb.Compressor()
    comp.sidechain = key
    with pytest.raises(ValueError, match="sidechain signal, which cannot be saved"):
        comp.to_dict()
    with pytest.raises(TypeError):
        comp.sidechain = "loud"
