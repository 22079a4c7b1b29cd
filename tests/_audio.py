"""Shared test signals and measurements (imported by tests as ``_audio``)."""

from __future__ import annotations

import numpy as np

SR = 44100


def music(seconds: float = 2.0, sr: int = SR, channels: int = 2, seed: int = 1) -> np.ndarray:
    """A music-like test signal, float32 ``(channels, n)``: plucked harmonic notes with decays, a bass line,
    noise-burst drums and a quiet passage, peaking around -3 dBFS."""
    rng = np.random.default_rng(seed)
    n = int(seconds * sr)
    t = np.arange(n) / sr
    out = np.zeros((channels, n))
    notes = [110.0, 146.83, 164.81, 220.0, 196.0, 261.63, 329.63, 293.66]
    step = 0.25
    for k, start in enumerate(np.arange(0, seconds, step)):
        f = notes[k % len(notes)] * (2 if k % 3 == 0 else 1)
        i0 = int(start * sr)
        tt = t[i0:] - start
        env = np.exp(-tt * 6.0)
        tone = sum(np.sin(2 * np.pi * f * h * tt + rng.uniform(0, 6.28)) / h**1.3 for h in range(1, 9))
        for c in range(channels):
            out[c, i0:] += 0.18 * env * tone * (1.0 if c == 0 else 0.8 + 0.1 * k % 3)
        if k % 2 == 0:  # drum hit: decaying noise
            m = min(n - i0, int(0.08 * sr))
            burst = rng.standard_normal((channels, m)) * np.exp(-np.arange(m) / (0.015 * sr))
            out[:, i0 : i0 + m] += 0.25 * burst
    quiet = slice(int(0.6 * n), int(0.75 * n))
    out[:, quiet] *= 0.03  # a quiet passage, so gates and expanders have something to do
    out *= 0.7 / np.max(np.abs(out))
    return out.astype(np.float32)


def speech(seconds: float = 2.0, sr: int = SR, channels: int = 1, seed: int = 2) -> np.ndarray:
    """A speech-like test signal: a glottal pulse train through moving formant resonances, in syllables
    separated by pauses (silence with a faint noise floor)."""
    rng = np.random.default_rng(seed)
    n = int(seconds * sr)
    t = np.arange(n) / sr
    f0 = 120 + 25 * np.sin(2 * np.pi * 1.3 * t)
    phase = np.cumsum(f0 / sr)
    pulses = (np.diff(np.floor(phase), prepend=0) > 0).astype(float)
    source = pulses + 0.02 * rng.standard_normal(n)
    y = np.zeros(n)
    for fc, bw in ((700, 110), (1220, 120), (2600, 160)):
        fc_t = fc * (1 + 0.15 * np.sin(2 * np.pi * 2.1 * t + fc))
        r = np.exp(-np.pi * bw / sr)
        a1 = -2 * r * np.cos(2 * np.pi * fc_t / sr)
        a2 = r * r
        z1 = z2 = 0.0
        res = np.empty(n)
        for i in range(n):  # slow but only used for short test signals
            v = source[i] - a1[i] * z1 - a2 * z2
            z2, z1 = z1, v
            res[i] = v
        y += res / np.max(np.abs(res))
    syllables = (np.sin(2 * np.pi * 2.5 * t) > -0.2).astype(float)
    envelope = np.convolve(syllables, np.ones(441) / 441, mode="same")
    y = y * envelope + 1e-4 * rng.standard_normal(n)
    y *= 0.5 / np.max(np.abs(y))
    return np.tile(y, (channels, 1)).astype(np.float32)


def sine(freq: float, seconds: float = 1.0, sr: int = SR, amplitude: float = 0.5, channels: int = 1) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return np.tile(amplitude * np.sin(2 * np.pi * freq * t), (channels, 1)).astype(np.float32)


def noise(seconds: float = 1.0, sr: int = SR, channels: int = 2, amplitude: float = 0.3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (amplitude * rng.standard_normal((channels, int(seconds * sr)))).astype(np.float32)


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(np.asarray(x, dtype=np.float64)))))


def diff_db(ours: np.ndarray, reference: np.ndarray) -> float:
    """RMS of the difference relative to the RMS of the reference, in dB (-inf when identical)."""
    ours = np.asarray(ours, np.float64)
    reference = np.asarray(reference, np.float64)
    assert ours.shape == reference.shape, (ours.shape, reference.shape)
    err = rms(ours - reference)
    ref = max(rms(reference), 1e-12)
    return float("-inf") if err == 0 else 20 * np.log10(err / ref)


def process_in_blocks(plugin, audio: np.ndarray, sr: int, block: int) -> np.ndarray:
    """Feed ``audio`` to ``plugin`` in ``block``-sample pieces with ``reset=False`` after a reset."""
    plugin.reset()
    pieces = [plugin.process(audio[:, :0], sr, reset=False)]  # an empty block fixes the channel layout
    pieces += [plugin.process(audio[:, i : i + block], sr, reset=False) for i in range(0, audio.shape[1], block)]
    return np.concatenate(pieces, axis=1)
