"""Channel layout and dtype rules (defined in ``stompbox._base.layout``; this path is kept for imports)."""

from __future__ import annotations

from .._base.layout import (
    FLOAT_DTYPE_ERROR,
    LAYOUTS,
    SQUARE_ERROR,
    Layout,
    as_float32_channels_first,
    channels_first_view,
    check_buffer_size,
    check_ndim,
    check_sample_rate,
    detect_layout,
    restore_layout,
)

__all__ = [
    "FLOAT_DTYPE_ERROR",
    "LAYOUTS",
    "SQUARE_ERROR",
    "Layout",
    "as_float32_channels_first",
    "channels_first_view",
    "check_buffer_size",
    "check_ndim",
    "check_sample_rate",
    "detect_layout",
    "restore_layout",
]
