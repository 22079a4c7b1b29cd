"""``StreamResampler``: resample audio that arrives in chunks, in constant memory (soxr underneath)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import soxr

from .._base import limits
from .quality import SOXR_RECIPE, Quality, coerce_quality

__all__ = ["StreamResampler", "check_sample_rate", "nice_rate"]


def check_sample_rate(value: Any, what: str = "sample rate") -> float:
    """``value`` as a float if it is a rate within :mod:`stompbox.limits`' range, else ``LimitError`` (a
    ``ValueError``; ``TypeError`` for a non-number)."""
    return limits.check_sample_rate(value, f"The {what}")


def nice_rate(rate: float) -> int | float:
    """``rate`` as an int when it is integral (pedalboard reports rates that way), else as a float."""
    return int(rate) if float(rate).is_integer() else float(rate)


@functools.lru_cache(maxsize=256)
def _filter_delay(source: float, target: float, recipe: str) -> float:
    """soxr's delay in input samples, as its ``delay()`` reports it once the stream runs (measured once,
    cached): about the filter's half-length, which bounds how far a seek's pre-roll must reach back."""
    probe = soxr.ResampleStream(source, target, 1, "float32", recipe)
    # 64 k input samples, or fewer when upsampling by more than 64:1, so the probe's output stays at 4 M
    probe.resample_chunk(np.zeros(max(1 << 10, min(1 << 16, int((1 << 22) * source / target))), np.float32))
    return float(probe.delay()) * source / target


def _outputs_after(source: float, target: float, recipe: str, count: int) -> int:
    probe = soxr.ResampleStream(source, target, 1, "float32", recipe)
    return int(probe.resample_chunk(np.zeros(count, np.float32)).shape[0])


@functools.lru_cache(maxsize=256)
def _input_latency(source: float, target: float, recipe: str) -> float:
    """The most input samples a fresh soxr stream takes without giving any output (found by bisection once,
    cached). soxr works in blocks, so this is often more than its filter delay (two to four times for
    down-sampling)."""
    low, high = 0, 1  # outputs_after(low) == 0, outputs_after(high) is to be tested
    while _outputs_after(source, target, recipe, high) == 0:
        low, high = high, high * 2
        if high > 1 << 26:  # no output from 64 M samples: cannot happen for rates soxr accepts
            return float(low)
    while high - low > 1:
        middle = (low + high) // 2
        if _outputs_after(source, target, recipe, middle) == 0:
            low = middle
        else:
            high = middle
    return float(low)


class StreamResampler:
    """Resample a stream of audio that arrives in chunks, keeping only a bounded amount of history.

    Feed chunks to :meth:`process` and concatenate what it returns; call ``process()`` (or
    ``process(None)``) once at the end to flush the last samples. The concatenated output is identical,
    bit for bit, whatever the chunk sizes were, and its length is exactly
    ``floor(total_input * target_sample_rate / source_sample_rate + 1/2)``.

    Parameters
    ----------
    source_sample_rate : float
        Rate of the input, in Hz (1 Hz to 10 MHz; fractional rates are allowed).
    target_sample_rate : float
        Rate of the output, in Hz (1 Hz to 10 MHz, at most 4096 times above or below the input's; see
        :mod:`stompbox.limits`).
    num_channels : int
        Number of channels of every chunk (>= 1).
    quality : Quality
        Resampling quality (default ``Quality.WindowedSinc32``); see :class:`stompbox.io.quality.Quality` for
        how each value maps to soxr's recipes.

    Notes
    -----
    Only float32 input is accepted (as in pedalboard); other dtypes raise ``TypeError``. A 1-D chunk is one
    channel and gives a ``(1, n)`` result. A 2-D chunk may be ``(channels, n)`` or ``(n, channels)``; the
    result keeps the layout of the input (a square chunk is read as ``(channels, n)``). After a flush the
    resampler starts a new stream, as if :meth:`reset` had been called.
    """

    def __init__(
        self,
        source_sample_rate: float,
        target_sample_rate: float,
        num_channels: int,
        quality: Quality = Quality.WindowedSinc32,
    ) -> None:
        self._source = check_sample_rate(source_sample_rate, "source sample rate")
        self._target = check_sample_rate(target_sample_rate, "target sample rate")
        limits.check_resampling_ratio(self._source, self._target)
        if isinstance(num_channels, bool) or not isinstance(num_channels, int | np.integer):
            raise TypeError(f"num_channels must be an int, not {type(num_channels).__name__}.")
        if num_channels < 1:
            raise ValueError(f"num_channels must be at least 1 (got {num_channels}).")
        if num_channels > 256:
            raise ValueError(f"num_channels must be at most 256 (got {num_channels}).")
        self._channels = int(num_channels)
        self._quality = coerce_quality(quality)
        self._recipe = SOXR_RECIPE[self._quality]
        self._stream = soxr.ResampleStream(self._source, self._target, self._channels, "float32", self._recipe)
        self._fed = False  # anything fed since the last reset/flush?
        self._channels_last = False  # layout of the most recent input, used for the flush

    # -- properties ---------------------------------------------------------------------------------------
    @property
    def source_sample_rate(self) -> float:
        """Input rate in Hz."""
        return self._source

    @property
    def target_sample_rate(self) -> float:
        """Output rate in Hz."""
        return self._target

    @property
    def num_channels(self) -> int:
        """Number of channels."""
        return self._channels

    @property
    def quality(self) -> Quality:
        """The resampling quality."""
        return self._quality

    @property
    def input_latency(self) -> float:
        """Input samples held back inside the resampler before their output appears (a float).

        Feeding this many samples from a fresh state gives no output yet (one more gives some); the flush
        releases them. The value depends on the quality and on the ratio (soxr's filters and blocks scale with
        it).
        """
        return _input_latency(self._source, self._target, self._recipe)

    # -- processing ---------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget all buffered input and start a new stream."""
        self._stream.clear()
        self._fed = False

    def process(self, input: np.ndarray | None = None) -> np.ndarray:
        """Resample one chunk, or flush the buffered samples when ``input`` is None.

        Parameters
        ----------
        input : numpy.ndarray of float32, optional
            ``(channels, n)``, ``(n, channels)`` or, for one channel, ``(n,)``.

        Returns
        -------
        numpy.ndarray of float32
            The output that is ready, in the input's layout (``(1, m)`` for 1-D input); the flush uses the
            layout of the last chunk.
        """
        if input is None:
            return self._flush()
        if not isinstance(input, np.ndarray):
            raise TypeError(f"StreamResampler.process expects a numpy array, not {type(input).__name__}.")
        if input.dtype != np.float32:
            raise TypeError(
                f"StreamResampler.process requires float32 input (got {input.dtype}); convert it with "
                ".astype(numpy.float32)."
            )
        if input.ndim == 1:
            if self._channels != 1:
                raise ValueError(
                    f"Expected {self._channels}-channel input, but was provided a buffer with 1 channels and "
                    f"{input.shape[0]} samples."
                )
            frames_first = input[:, None]
            channels_last = False
        elif input.ndim == 2:
            if input.shape[0] == self._channels:
                frames_first, channels_last = input.T, False
            elif input.shape[1] == self._channels:
                frames_first, channels_last = input, True
            else:
                raise ValueError(
                    f"Expected {self._channels}-channel input, but was provided a buffer with "
                    f"{input.shape[0]} channels and {input.shape[1]} samples."
                )
        else:
            raise ValueError(f"StreamResampler.process expects a 1-D or 2-D array, not {input.ndim}-D.")
        self._channels_last = channels_last
        if frames_first.shape[0] == 0:
            return self._shape(np.zeros((0, self._channels), np.float32))
        self._fed = True
        out = self._stream.resample_chunk(np.ascontiguousarray(frames_first))
        return self._shape(out)

    def _flush(self) -> np.ndarray:
        if not self._fed:
            return self._shape(np.zeros((0, self._channels), np.float32))
        out = self._stream.resample_chunk(np.zeros((0, self._channels), np.float32), last=True)
        self.reset()
        return self._shape(out)

    def _shape(self, frames_first: np.ndarray) -> np.ndarray:
        out = frames_first.reshape(-1, self._channels)
        if self._channels_last:
            return np.ascontiguousarray(out, dtype=np.float32)
        return np.ascontiguousarray(out.T, dtype=np.float32)

    def __repr__(self) -> str:
        return (
            f"<stompbox.io.StreamResampler source_sample_rate={nice_rate(self._source)} "
            f"target_sample_rate={nice_rate(self._target)} num_channels={self._channels} "
            f"quality={self._quality.name} at {hex(id(self))}>"
        )
