"""A short musical example clip, synthesised by stompbox itself (no bundled audio files).

:func:`example_clip` plays a two-bar riff in A minor at 112 BPM, repeated to the requested length: a
Karplus-Strong plucked guitar (doubled left/right with a few milliseconds of offset), a plucked bass line, a
sine-sweep kick and noise hi-hats. The same arguments always give the same samples.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["example_clip"]

_BPM = 112.0
# (start in eighth notes, MIDI note, length in eighth notes) over two bars of 4/4 = 16 eighths
_GUITAR = [
    (0, 57, 1), (1, 64, 1), (2, 69, 1), (3, 72, 1), (4, 71, 1), (5, 69, 1), (6, 64, 1), (7, 67, 1),
    (8, 65, 1), (9, 69, 1), (10, 72, 1), (11, 76, 2), (13, 74, 1), (14, 72, 1), (15, 71, 1),
]  # fmt: skip
_BASS = [(0, 33, 3), (3, 33, 1), (4, 40, 2), (6, 43, 2), (8, 41, 3), (11, 41, 1), (12, 38, 2), (14, 40, 2)]
_KICKS = [0, 3, 4, 8, 11, 12]
_HATS = list(range(16))


def _midi_hz(note: int) -> float:
    return float(440.0 * 2.0 ** ((note - 69) / 12.0))


def _pluck(
    freq: float, length: int, rate: float, rng: np.random.Generator, brightness: float, t60: float
) -> np.ndarray:
    """Karplus-Strong string: a noise burst circulating in a delay line with a two-point averaging filter.

    Computed one period at a time with NumPy (each period depends only on the previous one), so there is no
    per-sample Python loop.
    """
    period = max(2, int(round(rate / freq)))
    burst = rng.uniform(-1.0, 1.0, period)
    # brightness in (0, 1]: blending in a moving average of the burst darkens the tone
    smoothed = brightness * burst + (1.0 - brightness) * np.convolve(burst, np.full(5, 0.2), mode="same")
    smoothed -= smoothed.mean()
    decay = 10.0 ** (-3.0 / (t60 * freq))  # per period: -60 dB after t60 seconds
    y = np.zeros(length + period)
    y[:period] = smoothed
    for start in range(period, length + period, period):
        prev = y[start - period : start]
        before = y[start - period - 1] if start - period - 1 >= 0 else 0.0
        shifted = np.concatenate(([before], prev[:-1]))
        stop = min(start + period, y.size)
        y[start:stop] = (decay * 0.5 * (prev + shifted))[: stop - start]
    return y[:length]


def _place(track: np.ndarray, sound: np.ndarray, at: int) -> None:
    if at >= track.size:
        return
    n = min(sound.size, track.size - at)
    track[at : at + n] += sound[:n]


def _release(sound: np.ndarray, hold: int, fade: int) -> np.ndarray:
    out = sound.copy()
    if hold < out.size:
        n = min(fade, out.size - hold)
        out[hold : hold + n] *= np.linspace(1.0, 0.0, n)
        out[hold + n :] = 0.0
    return out


def example_clip(sample_rate: float = 44100, seconds: float = 8.0) -> np.ndarray:
    """Synthesise the example clip.

    Parameters
    ----------
    sample_rate : float
        Sample rate in Hz (>= 8000).
    seconds : float
        Length in seconds (>= 0); the two-bar riff repeats to fill it.

    Returns
    -------
    numpy.ndarray
        float32, shape ``(2, round(seconds * sample_rate))``, peak at -1 dBFS, deterministic.
    """
    rate = float(sample_rate)
    if not math.isfinite(rate) or rate < 8000:
        raise ValueError(f"sample_rate must be a finite number of Hz >= 8000 (got {sample_rate!r}).")
    if not math.isfinite(float(seconds)) or seconds < 0:
        raise ValueError(f"seconds must be a finite number >= 0 (got {seconds!r}).")
    total = int(round(float(seconds) * rate))
    if total == 0:
        return np.zeros((2, 0), np.float32)
    rng = np.random.default_rng(20260512)
    eighth = 60.0 / _BPM / 2.0
    bar2 = 16 * eighth
    repeats = int(math.ceil(float(seconds) / bar2))
    guitar_l = np.zeros(total)
    guitar_r = np.zeros(total)
    bass = np.zeros(total)
    drums = np.zeros(total)
    hats = np.zeros(total)
    haas = int(0.011 * rate)
    kick_len = int(0.35 * rate)
    t = np.arange(kick_len) / rate
    sweep = 45.0 + 75.0 * np.exp(-t * 30.0)
    kick = np.sin(2 * np.pi * np.cumsum(sweep) / rate) * np.exp(-t * 9.0)
    hat_len = int(0.05 * rate)
    for r in range(repeats):
        offset = r * bar2
        for step, note, dur in _GUITAR:
            at = int(round((offset + step * eighth) * rate))
            length = int((dur * eighth + 0.6) * rate)
            tone = _pluck(_midi_hz(note), length, rate, rng, brightness=0.75, t60=1.2)
            tone = _release(tone, int(dur * eighth * rate * 1.5), int(0.05 * rate))
            _place(guitar_l, tone, at)
            _place(guitar_r, _pluck(_midi_hz(note), length, rate, rng, 0.7, 1.2) * 0.8, at + haas)
        for step, note, dur in _BASS:
            at = int(round((offset + step * eighth) * rate))
            length = int((dur * eighth + 0.2) * rate)
            tone = _pluck(_midi_hz(note), length, rate, rng, brightness=0.3, t60=2.5)
            _place(bass, _release(tone, int(dur * eighth * rate), int(0.04 * rate)), at)
        for step in _KICKS:
            _place(drums, kick, int(round((offset + step * eighth) * rate)))
        for step in _HATS:
            noise = rng.standard_normal(hat_len)
            noise = np.diff(noise, prepend=0.0)  # crude highpass: a bright tick
            env = np.exp(-np.arange(hat_len) / rate * (60.0 if step % 2 else 35.0))
            _place(hats, noise * env * (0.12 if step % 2 else 0.2), int(round((offset + step * eighth) * rate)))
    left = 0.55 * guitar_l + 0.25 * guitar_r + 0.7 * bass + 0.8 * drums + 0.6 * hats
    right = 0.25 * guitar_l + 0.55 * guitar_r + 0.7 * bass + 0.8 * drums + 0.4 * hats
    out = np.stack([left, right])
    fade = min(total, int(0.02 * rate))
    out[:, total - fade :] *= np.linspace(1.0, 0.0, fade)  # no click at the end
    peak = float(np.abs(out).max())
    if peak > 0:
        out *= 10.0 ** (-1.0 / 20.0) / peak
    return np.ascontiguousarray(out, dtype=np.float32)
