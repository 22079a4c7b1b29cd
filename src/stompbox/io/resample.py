"""``ResampledReadableAudioFile``: a reader at another sample rate, streaming, seekable, sample-exact.

How it stays exact
------------------
soxr's streaming output is bit-identical whatever the chunk sizes, but a resampler restarted in the middle
of a file (after a seek) differs from a linear pass in the last bits (about 1e-7), because soxr's FFT stages
work on blocks aligned to the start of its stream. So the output is *defined* in segments: the source is cut
into segments of ``G`` input frames (a multiple of the ratio's period, so each segment starts on an output
sample), and the output of segment ``k`` is what a fresh soxr stream produces when it starts ``P`` input
frames before the segment (the preroll, longer than the filter's reach) and is fed until the segment's last
output is ready (or to the end of the file, then flushed). Reading linearly and seeking compute each segment
the same way, so a read after any seek equals a linear read bit for bit, and the result does not depend on
the read sizes. Between segments the preroll comes from a small carry buffer, not from re-reading the file,
and the result differs from one uninterrupted soxr pass by rounding noise only (about 1e-7).

Memory is bounded by one read chunk plus the carry (``P`` plus the filter's look-ahead); a seek costs at most
one segment of decoding and resampling (about 3 s of audio at 44.1 kHz).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import soxr

from .._base import limits
from .channels import WrappedReader
from .quality import SOXR_RECIPE, Quality, coerce_quality
from .reader import check_num_frames
from .stream_resampler import _filter_delay, check_sample_rate, nice_rate

__all__ = ["ResampledReadableAudioFile", "resampled_length"]

_SEGMENT = 1 << 17  # input frames per segment (rounded to the ratio's period)
_CHUNK = 1 << 14  # input frames per read from the wrapped file (fewer when upsampling by more than 64:1)
_CHUNK_OUTPUT = 1 << 20  # most output frames one read of the wrapped file is resampled into


def _exact(rate: float) -> Fraction:
    # the shortest decimal that gives the float (12345.67 -> 1234567/100), so decimal rates have short periods
    return Fraction(repr(float(rate)))


def resampled_length(frames: int, source_rate: float, target_rate: float) -> int:
    """Frames soxr (and this reader) produce from ``frames`` input frames: ``floor(frames * ratio + 1/2)``."""
    ratio = _exact(target_rate) / _exact(source_rate)
    return math.floor(frames * ratio + Fraction(1, 2))


class ResampledReadableAudioFile(WrappedReader):
    """A reader of another reader's audio at a different sample rate, in constant memory.

    Parameters
    ----------
    audio_file : ReadableAudioFile
        The reader to resample (any stompbox reader). It is not closed by :meth:`close`.
    target_sample_rate : float
        Output rate in Hz (finite, > 0; fractional rates are allowed).
    resampling_quality : Quality
        Resampling quality (default ``Quality.WindowedSinc32``, soxr's HQ recipe).

    Notes
    -----
    ``frames``, ``tell()`` and ``seek()`` count at the target rate. ``frames`` is exactly
    ``floor(source_frames * target / source + 1/2)`` (``round`` with halves up), the length soxr gives.
    Output is identical whether it is read whole or in chunks of any size, and ``seek()`` is sample-exact:
    the samples read after a seek equal those of a linear read bit for bit (see the module docstring for how).
    There is no ``read_raw`` (resampled samples have no raw form), as in pedalboard.
    """

    _CLASS_NAME = "ResampledReadableAudioFile"

    def __init__(
        self,
        audio_file: Any,
        target_sample_rate: float,
        resampling_quality: Quality = Quality.WindowedSinc32,
    ) -> None:
        super().__init__(audio_file)
        self._target = check_sample_rate(target_sample_rate, "target sample rate")
        self._quality = coerce_quality(resampling_quality)
        self._recipe = SOXR_RECIPE[self._quality]
        self._source_rate = check_sample_rate(audio_file.samplerate, "source sample rate")
        self._channels = int(audio_file.num_channels)
        limits.check_resampling_ratio(self._source_rate, self._target, self._channels, self._recipe == "QQ")
        ratio = _exact(self._target) / _exact(self._source_rate)  # output frames per input frame
        self._num, self._den = ratio.numerator, ratio.denominator  # den input frames -> num output frames
        reach = 2.0 * _filter_delay(self._source_rate, self._target, self._recipe) + 64.0
        self._preroll = self._den * math.ceil(reach / self._den)
        self._segment = self._den * max(1, round(_SEGMENT / self._den))
        self._segment_out = self._segment * self._num // self._den
        # a 4096:1 upsampler turns 16384 frames into 67 M: read less at a time, so memory stays bounded
        self._chunk = max(1, min(_CHUNK, _CHUNK_OUTPUT * self._den // self._num))
        self._pos = 0  # output position (tell)
        self._pending: np.ndarray | None = None  # (C, m) outputs starting at self._pos
        self._seg: int | None = None  # segment whose stream is running
        self._stream: Any = None
        self._flushed = False
        self._in_next = 0  # next input frame the stream will get
        self._out_next = 0  # global index of the stream's next output frame
        self._queue: list[np.ndarray] = []  # carried input to feed before reading the file again
        self._carry: list[np.ndarray] = []  # input kept for the next segment's preroll
        self._carry_start = 0
        self._src_pos = 0  # where we left the wrapped file
        self._src_end: int | None = None  # the wrapped file's true length, once its end was seen
        try:
            self._src_pos = int(audio_file.tell())
        except Exception:  # noqa: BLE001 - a reader without tell: assume the start
            self._src_pos = 0

    # -- properties ---------------------------------------------------------------------------------------
    @property
    def samplerate(self) -> int | float:
        """Output sample rate in Hz (an int when integral)."""
        return nice_rate(self._target)

    @property
    def num_channels(self) -> int:
        """Channels (the wrapped reader's)."""
        return self._channels

    @property
    def resampling_quality(self) -> Quality:
        """The resampling quality."""
        return self._quality

    @property
    def frames(self) -> int:
        """Length in frames at the target rate (an estimate while ``exact_duration_known`` is False)."""
        source_frames = self._src_end if self._src_end is not None else int(self._file.frames)
        return (2 * source_frames * self._num + self._den) // (2 * self._den)

    @property
    def exact_duration_known(self) -> bool:
        """False while the wrapped file's length is an estimate."""
        return self._src_end is not None or super().exact_duration_known

    def tell(self) -> int:
        """Current position in frames at the target rate."""
        return self._pos

    def close(self) -> None:
        """Close this reader and free its buffers (the wrapped file stays open)."""
        with self._lock:
            self._closed = True
            self._stream = None
            self._pending = None
            self._queue = []
            self._carry = []

    # -- seeking ------------------------------------------------------------------------------------------
    def seek(self, position: int) -> None:
        """Move to output frame ``position`` (0 <= position <= frames); sample-exact and bounded in cost."""
        with self._lock:
            self._seek(position)

    def _seek(self, position: int | float) -> None:
        self._check_open()
        if isinstance(position, bool) or not isinstance(position, int | np.integer):
            if isinstance(position, float) and position.is_integer():
                position = int(position)
            else:
                raise TypeError(f"seek() expects an integer frame position, not {position!r}.")
        position = int(position)
        if position < 0:
            raise ValueError(f"Cannot seek before start of file (to position {position}).")
        if self.exact_duration_known and position > self.frames:
            raise ValueError(
                f"Cannot seek to position {position} frames, which is beyond end of file ({self.frames} frames)."
            )
        if position == self._pos:
            return
        pending = self._pending
        if (
            position > self._pos
            and self._seg is not None
            and position // self._segment_out == self._seg
            and (pending is None or position < self._pos + pending.shape[1] or pending.shape[1] == 0)
        ):
            # forward inside the running segment: keep the stream, drop what lies before the target
            if pending is not None:
                pending = pending[:, position - self._pos :]
            self._pending = pending if pending is not None and pending.shape[1] else None
        else:
            self._pending = None
            self._seg = None  # restart the segment that holds the target
        self._pos = position

    # -- reading ------------------------------------------------------------------------------------------
    def read(self, num_frames: int = 0) -> np.ndarray:
        """Read up to ``num_frames`` frames as C-contiguous float32 ``(channels, n)``.

        Fewer frames come back only at the end of the stream, and ``(channels, 0)`` after it.
        """
        with self._lock:
            return self._read(num_frames)

    def _read(self, num_frames: int) -> np.ndarray:
        self._check_open()
        count = check_num_frames(num_frames)
        channels = self._channels
        if channels == 0:
            return np.zeros((0, 0), np.float32)
        parts: list[np.ndarray] = []
        got = 0
        while got < count:
            pending = self._pending
            if pending is not None and pending.shape[1]:
                take = min(count - got, pending.shape[1])
                parts.append(pending[:, :take])
                self._pending = pending[:, take:] if take < pending.shape[1] else None
                self._pos += take
                got += take
                continue
            if self._src_end is not None and self._pos >= self.frames:
                break
            k = self._pos // self._segment_out
            if self._seg != k:
                self._start_segment(k)
            if not self._produce():
                break
        if not parts:
            return np.zeros((channels, 0), np.float32)
        if len(parts) == 1:
            return np.ascontiguousarray(parts[0])
        return np.concatenate(parts, axis=1)

    def _start_segment(self, k: int) -> None:
        first = max(0, k * self._segment - self._preroll)
        carry_end = self._carry_start + sum(c.shape[1] for c in self._carry)
        if self._carry and self._carry_start <= first < carry_end and self._src_pos == carry_end:
            joined = self._carry[0] if len(self._carry) == 1 else np.concatenate(self._carry, axis=1)
            self._queue = [joined[:, first - self._carry_start :]]
        else:
            self._queue = []
            self._seek_source(first)
        self._carry = []
        self._carry_start = (k + 1) * self._segment - self._preroll
        self._stream = soxr.ResampleStream(self._source_rate, self._target, self._channels, "float32", self._recipe)
        self._flushed = False
        self._seg = k
        self._in_next = first
        self._out_next = first * self._num // self._den  # exact: first is a multiple of den

    def _seek_source(self, frame: int) -> None:
        if self._src_end is not None and frame >= self._src_end:
            frame = self._src_end
        if frame == self._src_pos and self._file.tell() == frame:
            return  # already there (and non-seekable sources can still be read linearly)
        self._file.seek(frame)
        self._src_pos = frame

    def _produce(self) -> bool:
        """Feed one chunk to the running stream and move its useful output to ``_pending``.

        Returns False when the stream is exhausted (the end of the file).
        """
        if self._flushed:
            return False
        if self._queue:
            chunk = self._queue.pop(0)
            last = not self._queue and self._src_end is not None and self._in_next + chunk.shape[1] >= self._src_end
        elif self._src_end is not None and self._in_next >= self._src_end:
            chunk = np.zeros((self._channels, 0), np.float32)
            last = True
        else:
            if self._file.tell() != self._src_pos:  # someone moved the wrapped file: put it back
                self._file.seek(self._src_pos)
            chunk = self._file.read(self._chunk)
            self._src_pos += chunk.shape[1]
            last = chunk.shape[1] < self._chunk
            if last:
                self._src_end = self._src_pos
        n = chunk.shape[1]
        start = self._in_next
        if n and start + n > self._carry_start:  # keep what the next segment's preroll needs
            self._carry.append(chunk[:, max(0, self._carry_start - start) :])
        self._in_next += n
        out = self._stream.resample_chunk(np.ascontiguousarray(chunk.T), last=last)
        if last:
            self._flushed = True
        out_start = self._out_next
        self._out_next += out.shape[0]
        assert self._seg is not None  # (a stream runs for a segment: _seek started one)
        seg_end = (self._seg + 1) * self._segment_out
        lo = self._pos - out_start
        hi = min(seg_end, self._out_next) - out_start
        if hi > lo:  # lo >= 0 always: a stream starts at or before the position it serves
            self._pending = np.ascontiguousarray(out[lo:hi].T)
        return True
