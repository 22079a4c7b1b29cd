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

__all__ = ["StreamSummary", "channel_names", "plot_audio", "spectrogram_db", "waveform_envelope"]

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


def _paint(
    fig: Any, ax: Any, colours: Any, summary: StreamSummary, times: np.ndarray, levels: np.ndarray, start: float
) -> tuple[np.ndarray, int, int]:
    """Paint a spectrogram into ``ax`` at the figure's pixels: each pixel takes the level of the frame and the
    frequency row nearest to it (silence's colour beyond the signal's end). Returns the RGBA bytes (rows from the
    bottom) and the axis's lower-left pixel: matplotlib's resampled images and meshes took 50-70 MB more to draw
    a long file's spectrogram, and even a figure image of the axis's size 14 MB."""
    box = ax.get_window_extent()
    width, height = max(1, int(round(box.width))), max(1, int(round(box.height)))
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    seconds = x0 + (np.arange(width) + 0.5) / width * (x1 - x0) - start
    lut = colours.cmap(np.linspace(0.0, 1.0, 256), bytes=True)  # uint8 colours: no float RGBA of every pixel
    rgba = np.empty((height, width, 4), np.uint8)
    rgba[...] = lut[0]
    if times.size:
        step = times[1] - times[0] if times.size > 1 else summary.hop / summary.sample_rate
        frame = np.rint((seconds - times[0]) / step).astype(np.int64)
        inside = (frame >= 0) & (frame < times.size) & (seconds <= summary.frames / summary.sample_rate + step / 2)
        logs = np.log10(summary.freqs)
        heights = y0 + (np.arange(height) + 0.5) / height * (y1 - y0)
        row = np.clip(np.rint((heights - logs[0]) / (logs[-1] - logs[0]) * (logs.size - 1)), 0, logs.size - 1)
        picked = levels[np.ix_(row.astype(np.int64), frame[inside])]
        scaled = (picked.astype(np.float32) - _FLOOR_DB) * (255.0 / -_FLOOR_DB)
        shade = np.clip(scaled, 0, 255).astype(np.uint8)
        rgba[:, inside] = lut[shade]
    ax.patch.set_alpha(0.0)  # the axis's ticks and frame are drawn over the image
    return rgba, int(round(box.x0)), int(round(box.y0))


def _hz(value: float) -> str:
    value = round(value)
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def _level_text(x: np.ndarray) -> str:
    if x.size == 0:
        return "empty"
    peak = float(np.abs(x).max())
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))

    def db(v: float) -> str:
        return f"{20 * math.log10(v):.1f}" if v > 0 else "-inf"

    return f"peak {db(peak)} dBFS, RMS {db(rms)} dBFS"


class StreamSummary:
    """What a plot draws of a stream, gathered block by block in memory that does not grow with its length.

    The waveform is kept as per-channel minima and maxima over slices of ``step`` samples, between ``columns``
    and ``2 * columns`` of them (when there would be more, neighbours are merged and ``step`` doubles). The
    spectrogram is a Hann-windowed FFT of the channel mean every ``hop`` samples (between ``spec_columns`` and
    twice as many frames, the same way), each frame's levels (float16: 0.06 dB steps near -100 dB) interpolated
    onto ``rows`` log-spaced frequencies from 20 Hz to Nyquist, so low frequencies are drawn smoothly rather than
    as a few tall blocks. Given the length in advance (``expected_frames``), the first step and hop are already right.

    Parameters
    ----------
    sample_rate : float
        Hz.
    num_channels : int
        Channels of the blocks given to :meth:`add`.
    expected_frames : int, optional
        The stream's length, if known.
    columns, spec_columns, rows : int
        Resolution of the waveform and the spectrogram.
    fft_size : int, optional
        FFT length (default: a power of two near 93 ms: 5.4 Hz bins at 44.1 kHz... 10.8 Hz).
    """

    def __init__(
        self,
        sample_rate: float,
        num_channels: int,
        expected_frames: int | None = None,
        columns: int = 2000,
        spec_columns: int = 1200,
        rows: int = 320,
        fft_size: int | None = None,
    ) -> None:
        self.sample_rate = float(sample_rate)
        self.num_channels = int(num_channels)
        self.frames = 0
        self.peak = 0.0
        self._squares = 0.0
        self._columns = columns
        self._spec_columns = spec_columns
        n = expected_frames or 0
        self.step = max(1, math.ceil(n / columns)) if n else 1
        self._lows: list[np.ndarray] = []
        self._highs: list[np.ndarray] = []
        self._slices = 0
        self._part_low = np.full(self.num_channels, np.inf, np.float32)
        self._part_high = np.full(self.num_channels, -np.inf, np.float32)
        self._part_count = 0
        rate = self.sample_rate
        self.fft_size = fft_size or 1 << max(8, round(math.log2(rate * 0.093)))
        size = self.fft_size
        self.hop = max(size // 4, math.ceil(max(0, n - size) / max(1, spec_columns - 1))) if n else size // 4
        self._window = np.hanning(size)
        self._reference = self._window.sum() / 2.0  # a full-scale sine's peak bin magnitude
        top = max(rate / 2.0, 40.0)
        self.freqs = np.geomspace(20.0, top, rows)
        self._bins = np.fft.rfftfreq(size, 1.0 / rate)
        self._levels: list[np.ndarray] = []  # one (rows,) column per frame
        self._next = 0  # the next frame's index
        self._mono = np.zeros(size // 2)  # channel mean from sample _origin on (zeros before the start)
        self._origin = -(size // 2)
        self._done = False

    # ---------------------------------------------------------------- feeding
    def add(self, block: np.ndarray) -> None:
        """Take the next float ``(channels, n)`` block."""
        x = np.asarray(block, dtype=np.float32)
        if x.ndim == 1:
            x = x[None, :]
        n = x.shape[1]
        if n == 0:
            return
        self.frames += n
        self.peak = max(self.peak, float(np.abs(x).max()))
        self._squares += float(np.square(x, dtype=np.float64).sum())
        self._add_envelope(x)
        self._mono = np.concatenate([self._mono, x.mean(axis=0, dtype=np.float64)])
        self._spectra(final=False)

    def finish(self) -> StreamSummary:
        """Close the stream: the last partial slice and frames (padded with silence) are taken. Returns self."""
        if not self._done:
            self._done = True
            if self._part_count:
                self._push(self._part_low[:, None], self._part_high[:, None])
                self._part_count = 0
            self._mono = np.concatenate([self._mono, np.zeros(self.fft_size)])
            self._spectra(final=True)
            self._mono = np.zeros(0)
        return self

    def _add_envelope(self, x: np.ndarray) -> None:
        at = 0
        n = x.shape[1]
        if self._part_count:
            take = min(self.step - self._part_count, n)
            np.minimum(self._part_low, x[:, :take].min(axis=1), out=self._part_low)
            np.maximum(self._part_high, x[:, :take].max(axis=1), out=self._part_high)
            self._part_count += take
            at = take
            if self._part_count == self.step:
                self._push(self._part_low[:, None].copy(), self._part_high[:, None].copy())
                self._reset_part()
        whole = (n - at) // self.step
        if whole:
            shaped = x[:, at : at + whole * self.step].reshape(self.num_channels, whole, self.step)
            self._push(shaped.min(axis=2), shaped.max(axis=2))
            at += whole * self.step
        if at < n:
            self._part_low = np.minimum(self._part_low, x[:, at:].min(axis=1))
            self._part_high = np.maximum(self._part_high, x[:, at:].max(axis=1))
            self._part_count += n - at

    def _reset_part(self) -> None:
        self._part_low = np.full(self.num_channels, np.inf, np.float32)
        self._part_high = np.full(self.num_channels, -np.inf, np.float32)
        self._part_count = 0

    def _push(self, lows: np.ndarray, highs: np.ndarray) -> None:
        self._lows.append(lows)
        self._highs.append(highs)
        self._slices += lows.shape[1]
        if self._slices > 2 * self._columns and not self._done:
            low, high = np.concatenate(self._lows, axis=1), np.concatenate(self._highs, axis=1)
            if low.shape[1] % 2:  # the odd one out joins the partial slice (step samples, less than the new step)
                np.minimum(self._part_low, low[:, -1], out=self._part_low)
                np.maximum(self._part_high, high[:, -1], out=self._part_high)
                self._part_count += self.step
                low, high = low[:, :-1], high[:, :-1]
            k = low.shape[1] // 2
            self._lows = [low.reshape(self.num_channels, k, 2).min(axis=2)]
            self._highs = [high.reshape(self.num_channels, k, 2).max(axis=2)]
            self._slices = k
            self.step *= 2

    def _spectra(self, final: bool) -> None:
        size, half = self.fft_size, self.fft_size // 2
        end = self._origin + self._mono.size  # samples known (absolute index, zeros before 0)
        while True:
            last = self._next + 256
            centres = np.arange(self._next, last) * self.hop
            ready = centres[centres + half <= end]
            if final:
                ready = ready[ready < max(1, self.frames)]  # frames whose centre lies in the stream
            if ready.size == 0:
                break
            index = (ready - half - self._origin)[:, None] + np.arange(size)[None, :]
            spectrum = np.abs(np.fft.rfft(self._mono[index] * self._window, axis=1)) / self._reference
            levels = 20.0 * np.log10(np.maximum(spectrum, 1e-10))
            for row in levels:
                self._levels.append(np.interp(self.freqs, self._bins, row).astype(np.float16))  # 0.06 dB steps
            self._next += ready.size
            if len(self._levels) > 2 * self._spec_columns and not final:
                self._levels = self._levels[::2]
                self._next = (self._next + 1) // 2
                self.hop *= 2
            if ready.size < centres.size:
                break
        keep_from = self._next * self.hop - half  # the next frame's first sample
        drop = keep_from - self._origin
        if drop > 0:
            self._mono = self._mono[drop:]
            self._origin = keep_from

    # ---------------------------------------------------------------- results
    def envelope(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first sample of each slice, minima, maxima) as :func:`waveform_envelope` gives them."""
        if not self._lows:
            empty = np.zeros((self.num_channels, 0), np.float32)
            return np.zeros(0), empty, empty
        low, high = np.concatenate(self._lows, axis=1), np.concatenate(self._highs, axis=1)
        return np.arange(low.shape[1]) * self.step, low, high

    def spectrogram(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(frame centres in seconds, frequencies in Hz, levels ``(rows, frames)`` in dB floored at -100)."""
        if not self._levels:
            return np.zeros(0), self.freqs, np.zeros((self.freqs.size, 0), np.float32)
        levels = np.stack(self._levels, axis=1)
        np.maximum(levels, _FLOOR_DB, out=levels)
        return np.arange(levels.shape[1]) * self.hop / self.sample_rate, self.freqs, levels

    def level_text(self) -> str:
        """``peak -6.0 dBFS, RMS -9.0 dBFS``."""
        if not self.frames:
            return "empty"
        rms = math.sqrt(self._squares / (self.frames * self.num_channels))

        def db(v: float) -> str:
            return f"{20 * math.log10(v):.1f}" if v > 0 else "-inf"

        return f"peak {db(self.peak)} dBFS, RMS {db(rms)} dBFS"

    @classmethod
    def of(cls, audio: np.ndarray, sample_rate: float) -> StreamSummary:
        """The summary of a whole array (1-D or 2-D in either layout)."""
        x = _channels_first(audio)
        summary = cls(sample_rate, x.shape[0], expected_frames=x.shape[1])
        for start in range(0, x.shape[1], 1 << 16):
            summary.add(x[:, start : start + (1 << 16)])
        return summary.finish()


#: channel names of the layouts a channel count has by default (WAV's and FFmpeg's)
DEFAULT_CHANNEL_NAMES = {
    1: ["mono"],
    2: ["L", "R"],
    4: ["FL", "FR", "BL", "BR"],
    6: ["FL", "FR", "FC", "LFE", "BL", "BR"],
    8: ["FL", "FR", "FC", "LFE", "BL", "BR", "SL", "SR"],
}


def channel_names(num_channels: int) -> list[str]:
    """Names for the channels of a plot's legend: the default layout's (``L``/``R``, 5.1's ``FL FR FC LFE BL
    BR``, ...), else ``ch 1``, ``ch 2``..."""
    return DEFAULT_CHANNEL_NAMES.get(num_channels, [f"ch {i + 1}" for i in range(num_channels)])


def plot_audio(
    audio: np.ndarray | StreamSummary,
    sample_rate: float,
    processed: np.ndarray | StreamSummary | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    labels: Sequence[str] = ("before", "after"),
    dpi: int = 110,
    start: float = 0.0,
    names: Sequence[str] | None = None,
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
    start : float
        The time of the first sample in seconds: the axes show the file's time (a plot from ``--start``).
    names : sequence of str, optional
        Channel names for the legend (default: :func:`channel_names`).

    ``audio`` and ``processed`` may also be :class:`StreamSummary` objects (a stream of any length, gathered in
    bounded memory).

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

    summaries = [a if isinstance(a, StreamSummary) else StreamSummary.of(a, sample_rate) for a in (audio, processed)
                 if a is not None]  # fmt: skip
    rate = float(sample_rate)
    longest = max(s.frames for s in summaries) / rate
    fig = Figure(figsize=(7.5 * len(summaries) if len(summaries) > 1 else 10, 6.4), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, len(summaries), squeeze=False, sharex=True, height_ratios=[1, 1.6])
    top = max(1.0, max(s.peak for s in summaries))
    spectrograms: list[tuple[Any, StreamSummary, np.ndarray, np.ndarray]] = []
    for col, summary in enumerate(summaries):
        wave, spec = axes[0][col], axes[1][col]
        positions, lows, highs = summary.envelope()
        t = start + positions / rate
        legend = list(names) if names is not None and len(names) == summary.num_channels else None
        legend = legend or channel_names(summary.num_channels)
        for ch in range(summary.num_channels):
            colour = _CHANNEL_COLOURS[ch % len(_CHANNEL_COLOURS)]
            wave.fill_between(t, lows[ch], highs[ch], color=colour, alpha=0.55, linewidth=0, label=legend[ch])
        wave.set_ylim(-top * 1.05, top * 1.05)
        wave.axhline(0.0, color="0.6", linewidth=0.6)
        for limit in (-1.0, 1.0):
            wave.axhline(limit, color="#d62728", linewidth=0.6, linestyle=":")
        wave.set_xlim(start, start + longest)
        heading = labels[col] if len(summaries) > 1 else "waveform"
        wave.set_title(f"{heading}: {summary.level_text()}", fontsize=10)
        if col == 0:
            wave.set_ylabel("amplitude")
        if summary.num_channels > 1:
            wave.legend(loc="upper right", fontsize=8, ncols=summary.num_channels, framealpha=0.7)
        wave.grid(alpha=0.25)

        # the spectrogram is painted last, pixel by pixel, once the layout has placed this axis (_paint)
        times, freqs, levels = summary.spectrogram()
        low, high = math.log10(freqs[0]), math.log10(freqs[-1])
        spectrograms.append((spec, summary, times, levels))
        ticks = [f for f in (20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000) if f <= freqs[-1]]
        spec.set_yticks([math.log10(f) for f in ticks])
        spec.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _hz(10**v)))
        spec.set_ylim(low, high)
        spec.set_xlabel("time (s)")
        if col == 0:
            spec.set_ylabel("frequency (Hz)")
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    colours = ScalarMappable(Normalize(_FLOOR_DB, 0.0), colormaps["magma"])
    bar = fig.colorbar(colours, ax=[row[-1] for row in axes][1:], pad=0.01, aspect=25)
    bar.set_label("level (dBFS)")
    if title:
        fig.suptitle(title, fontsize=12)
    engine = fig.get_layout_engine()
    assert engine is not None  # (the figure was made with one)
    engine.execute(fig)  # the layout (no drawing): where each spectrogram's pixels go
    fig.set_layout_engine("none")  # kept from here on, so the images stay on their axes
    images = [
        _paint(fig, spec, colours, summary, times, levels, start) for spec, summary, times, levels in spectrograms
    ]
    if path is not None:
        from .._base.atomic import atomic_path

        name = os.fspath(path)
        kind = os.path.splitext(name)[1].lstrip(".").lower() or None  # the temporary's name has no extension
        with atomic_path(name) as temporary:
            if kind in _RASTER:
                _save_raster(fig, images, temporary, _RASTER[kind], dpi)
            else:
                _place(fig, images)
                fig.savefig(temporary, dpi=dpi, format=kind)
    _place(fig, images)  # the figure returned draws them too
    return fig


_RASTER = {"png": "PNG", "jpg": "JPEG", "jpeg": "JPEG", "webp": "WEBP", "tif": "TIFF", "tiff": "TIFF"}


def _place(fig: Any, images: list[tuple[np.ndarray, int, int]]) -> None:
    """The painted spectrograms as figure images (once), under the axes' frames."""
    if getattr(fig, "_stompbox_painted", False):
        return
    for rgba, x0, y0 in images:
        fig.figimage(rgba, xo=x0, yo=y0, origin="lower", zorder=-1)
    fig._stompbox_painted = True


def _save_raster(fig: Any, images: list[tuple[np.ndarray, int, int]], target: str, kind: str, dpi: int) -> None:
    """Draw the figure with Agg, copy the painted spectrograms into its pixels (where the axes left the
    background: their frames stay on top), and write the pixels with PIL, as ``savefig`` would."""
    from PIL import Image

    canvas = fig.canvas
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())
    rows = pixels.shape[0]
    for rgba, x0, y0 in images:
        height, width = rgba.shape[:2]
        top = rows - y0 - height
        region = pixels[max(0, top) : rows - y0, x0 : x0 + width]
        source = rgba[::-1][max(0, -top) :][:, : region.shape[1]]
        background = region[..., :3].min(axis=2) >= 128  # white, and the light edge of the frame's antialiasing
        region[background] = source[background]
    image = Image.fromarray(pixels if kind in ("PNG", "WEBP", "TIFF") else pixels[..., :3])
    image.save(target, format=kind, dpi=(dpi, dpi))
