"""Pictures of audio: waveform and spectrogram, alone or before/after a chain of effects.

Needs matplotlib (the optional extra ``stompbox[plot]``), imported when a plot is made. Only the Agg canvas is
used (no pyplot, no global backend switch), so plotting works headless and does not disturb an interactive
session.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["plot_audio", "spectrogram_db", "waveform_envelope"]

_CHANNEL_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
_FLOOR_DB = -100.0


def _channels_first(audio: np.ndarray) -> np.ndarray:
    x = np.asarray(audio, dtype=np.float32)
    if x.ndim == 1:
        return x[None, :]
    if x.ndim != 2:
        raise ValueError(f"Expected 1-D or 2-D audio, got an array of shape {x.shape}.")
    return x if x.shape[0] <= x.shape[1] else x.T


def waveform_envelope(audio: np.ndarray, columns: int = 2000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-channel minimum and maximum over ``columns`` equal slices (what a waveform display draws).

    Returns
    -------
    (positions, minima, maxima)
        ``positions``: the first sample of each slice; ``minima``/``maxima``: shape ``(channels, k)`` with
        ``k <= columns`` slices.
    """
    x = _channels_first(audio)
    n = x.shape[1]
    if n == 0:
        return np.zeros(0), np.zeros((x.shape[0], 0)), np.zeros((x.shape[0], 0))
    step = max(1, math.ceil(n / columns))
    k = math.ceil(n / step)
    padded = np.zeros((x.shape[0], k * step), np.float32)
    padded[:, :n] = x
    # pad with the last value so the final slice's extremes are those of real samples
    padded[:, n:] = x[:, -1:]
    shaped = padded.reshape(x.shape[0], k, step)
    return np.arange(k) * step, shaped.min(axis=2), shaped.max(axis=2)


def spectrogram_db(
    audio: np.ndarray, sample_rate: float, columns: int = 1200, fft_size: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Magnitude spectrogram of the channel mean, in dB relative to a full-scale sine (0 dBFS).

    A Hann-windowed FFT of ``fft_size`` samples (by default ~46 ms, a power of two) every ``hop`` samples,
    with the hop chosen so that there are at most about ``columns`` frames.

    Returns
    -------
    (times, frequencies, levels)
        Frame centres in seconds, bin frequencies in Hz, and ``levels`` of shape ``(bins, frames)`` in dB,
        floored at -100 dB.
    """
    mono = _channels_first(audio).mean(axis=0, dtype=np.float64)
    rate = float(sample_rate)
    size = fft_size or 1 << max(8, round(math.log2(rate * 0.046)))
    hop = max(size // 4, math.ceil(max(0, mono.size - size) / max(1, columns - 1)))
    padded = np.concatenate([np.zeros(size // 2), mono, np.zeros(size // 2 + size)])
    frames = 1 + mono.size // hop
    window = np.hanning(size)
    reference = window.sum() / 2.0  # a full-scale sine's peak bin magnitude
    levels = np.empty((size // 2 + 1, frames), np.float32)
    chunk = 256
    for start in range(0, frames, chunk):
        count = min(chunk, frames - start)
        index = (start + np.arange(count))[:, None] * hop + np.arange(size)[None, :]
        spectrum = np.abs(np.fft.rfft(padded[index] * window, axis=1)) / reference
        levels[:, start : start + count] = (20.0 * np.log10(np.maximum(spectrum, 1e-10))).T
    np.maximum(levels, _FLOOR_DB, out=levels)
    times = np.arange(frames) * hop / rate
    freqs = np.fft.rfftfreq(size, 1.0 / rate)
    return times, freqs, levels


def _level_text(x: np.ndarray) -> str:
    if x.size == 0:
        return "empty"
    peak = float(np.abs(x).max())
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))

    def db(v: float) -> str:
        return f"{20 * math.log10(v):.1f}" if v > 0 else "-inf"

    return f"peak {db(peak)} dBFS, RMS {db(rms)} dBFS"


def plot_audio(
    audio: np.ndarray,
    sample_rate: float,
    processed: np.ndarray | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    labels: Sequence[str] = ("before", "after"),
    dpi: int = 110,
) -> Any:
    """Draw the waveform and spectrogram of ``audio`` (and of ``processed`` beside it, for before/after).

    Parameters
    ----------
    audio : numpy.ndarray
        float audio, 1-D or 2-D in either layout (the smaller dimension is the channels).
    sample_rate : float
        Sample rate in Hz.
    processed : numpy.ndarray, optional
        The same audio after effects: drawn in a second column with the same scales (time, amplitude and
        colour), so the two can be compared.
    path : str or os.PathLike, optional
        Save the figure there (format from the extension: .png, .svg, .pdf, ...).
    title : str, optional
        Title above the figure.
    labels : (str, str)
        Column titles for before/after.
    dpi : int
        Resolution of a saved raster image.

    Returns
    -------
    matplotlib.figure.Figure
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Plotting needs matplotlib: install the optional extra with `pip install stompbox[plot]`."
        ) from error

    columns = [_channels_first(audio)] + ([_channels_first(processed)] if processed is not None else [])
    rate = float(sample_rate)
    longest = max(c.shape[1] for c in columns) / rate
    fig = Figure(figsize=(7.5 * len(columns) if len(columns) > 1 else 10, 6.4), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, len(columns), squeeze=False, sharex=True, height_ratios=[1, 1.6])
    top = max(1.0, max(float(np.abs(c).max()) if c.size else 0.0 for c in columns))
    mesh = None
    for col, x in enumerate(columns):
        wave, spec = axes[0][col], axes[1][col]
        positions, lows, highs = waveform_envelope(x)
        t = positions / rate
        names = ["L", "R"] if x.shape[0] == 2 else [f"ch {i + 1}" for i in range(x.shape[0])]
        for ch in range(x.shape[0]):
            colour = _CHANNEL_COLOURS[ch % len(_CHANNEL_COLOURS)]
            wave.fill_between(t, lows[ch], highs[ch], color=colour, alpha=0.55, linewidth=0, label=names[ch])
        wave.set_ylim(-top * 1.05, top * 1.05)
        wave.axhline(0.0, color="0.6", linewidth=0.6)
        for limit in (-1.0, 1.0):
            wave.axhline(limit, color="#d62728", linewidth=0.6, linestyle=":")
        wave.set_xlim(0, longest)
        heading = labels[col] if len(columns) > 1 else "waveform"
        wave.set_title(f"{heading}: {_level_text(x)}", fontsize=10)
        if col == 0:
            wave.set_ylabel("amplitude")
        if x.shape[0] > 1:
            wave.legend(loc="upper right", fontsize=8, ncols=x.shape[0], framealpha=0.7)
        wave.grid(alpha=0.25)

        times, freqs, levels = spectrogram_db(x, rate)
        keep = freqs >= 20.0
        mesh = spec.pcolormesh(
            times,
            freqs[keep],
            levels[keep],
            shading="nearest",
            cmap="magma",
            vmin=_FLOOR_DB,
            vmax=0.0,
            rasterized=True,
        )
        spec.set_facecolor(mesh.cmap(0.0))  # beyond the end of a shorter signal: the colour of silence
        spec.set_yscale("log")
        spec.set_ylim(20.0, rate / 2)
        spec.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v >= 1000 else f"{v:g}"))
        spec.set_xlabel("time (s)")
        if col == 0:
            spec.set_ylabel("frequency (Hz)")
    if mesh is not None:
        bar = fig.colorbar(mesh, ax=[row[-1] for row in axes][1:], pad=0.01, aspect=25)
        bar.set_label("level (dBFS)")
    if title:
        fig.suptitle(title, fontsize=12)
    if path is not None:
        fig.savefig(os.fspath(path), dpi=dpi)
    return fig
