"""Channel layout and dtype rules shared by ``Plugin.process`` and the file writers.

Audio arrays come as 1-D (mono), ``(channels, samples)`` ("channels-first") or ``(samples, channels)``
("channels-last"). As in pedalboard, the smaller dimension of a 2-D array is taken to be the channels; a square
array is ambiguous unless a layout was seen before or is given explicitly.
"""

from __future__ import annotations

import numbers
from typing import Any, Literal

import numpy as np

from . import limits
from .errors import LayoutError

Layout = Literal["channels-first", "channels-last"]
LAYOUTS: tuple[str, ...] = ("channels-first", "channels-last")

FLOAT_DTYPE_ERROR = "Pedalboard only supports 32-bit and 64-bit floating point audio for processing."
SQUARE_ERROR = (
    "Unable to determine channel layout from shape: {shape}. Provide a non-square array first to allow "
    "stompbox to determine which dimension corresponds with the number of channels and which dimension "
    "corresponds with the number of samples, or pass layout='channels-first' / 'channels-last'."
)


def detect_layout(shape: tuple[int, ...], hint: str | tuple[str, int] | None = None) -> str:
    """The layout of a 2-D array of ``shape``.

    ``hint`` is what an earlier call established: a layout name (used only for square arrays), or a
    ``(layout, num_channels)`` pair, which wins whenever the array has ``num_channels`` along that layout's
    channel axis (so a ``(2, 1)`` block of a stereo stream stays stereo). Otherwise the smaller dimension is
    the channels, and a square array without a hint is ambiguous (except ``(1, 1)``, the same either way).
    """
    rows, cols = shape
    if cols == 0 and rows > 0:  # an empty block: the zero-length axis is time
        return "channels-first"
    if rows == 0 and cols > 0:
        return "channels-last"
    if isinstance(hint, tuple):
        layout, channels = hint
        if (rows if layout == "channels-first" else cols) == channels:
            return layout
        hint = None
    if rows < cols:
        return "channels-first"
    if rows > cols:
        return "channels-last"
    if hint in LAYOUTS:
        return hint
    if rows == 1:  # (1, 1): one channel of one sample either way
        return "channels-first"
    raise LayoutError(SQUARE_ERROR.format(shape=tuple(shape)))


def check_ndim(array: np.ndarray) -> None:
    if array.ndim not in (1, 2):
        raise LayoutError(
            f"Number of input dimensions must be 1 or 2 (got {array.ndim}). Audio arrays are 1-D (mono), "
            "(channels, samples) or (samples, channels)."
        )


def channels_first_view(
    input_array: Any, hint: str | tuple[str, int] | None = None, layout: str | None = None
) -> tuple[np.ndarray, str | None]:
    """A ``(channels, samples)`` view of ``input_array`` (no copy; dtype float32 or float64).

    Returns the view and the layout of the input (``None`` for 1-D input). Raises ``TypeError`` for anything
    but a float32/float64 ndarray and :class:`LayoutError` for 3-D or ambiguous arrays.
    """
    if not isinstance(input_array, np.ndarray):
        raise TypeError(
            f"Audio must be a numpy.ndarray of float32 or float64 samples (got {type(input_array).__name__})."
        )
    if input_array.dtype not in (np.float32, np.float64):
        raise TypeError(f"{FLOAT_DTYPE_ERROR} (Got: {input_array.dtype})")
    check_ndim(input_array)
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"layout must be 'channels-first' or 'channels-last' (got {layout!r})")
    if input_array.ndim == 1:
        return input_array[np.newaxis, :], None
    found = layout or detect_layout(input_array.shape, hint)
    return (input_array if found == "channels-first" else input_array.T), found


def as_float32_channels_first(
    input_array: Any, hint: str | tuple[str, int] | None = None, layout: str | None = None
) -> tuple[np.ndarray, str | None]:
    """Like :func:`channels_first_view`, but a new C-contiguous float32 copy."""
    view, found = channels_first_view(input_array, hint, layout)
    return np.array(view, dtype=np.float32, order="C"), found


def restore_layout(channels_first: np.ndarray, layout: str | None) -> np.ndarray:
    """Undo :func:`as_float32_channels_first`: back to 1-D or ``(samples, channels)`` as the input was."""
    if layout is None:
        return np.asarray(channels_first[0])
    if layout == "channels-last":
        return np.ascontiguousarray(channels_first.T)
    return channels_first


def check_sample_rate(sample_rate: Any) -> float:
    """A sample rate in Hz within :mod:`stompbox.limits`' range, as a float."""
    return limits.check_sample_rate(sample_rate, "sample_rate")


def check_buffer_size(buffer_size: Any) -> int:
    """A block size of at least one sample."""
    if type(buffer_size) is int and buffer_size >= 1:  # the common case, fast
        return buffer_size
    if isinstance(buffer_size, bool) or not isinstance(buffer_size, numbers.Integral):
        raise TypeError(f"buffer_size must be an integer number of samples (got {buffer_size!r})")
    if buffer_size < 1:
        raise ValueError(f"buffer_size must be at least 1 sample (got {buffer_size})")
    return int(buffer_size)
