"""An in-memory array with the reader API, for commands that make their audio (``convert --example``, ``demo``)."""

from __future__ import annotations

import numpy as np

from ..io.reader import AudioReader

__all__ = ["ArraySource"]


class ArraySource(AudioReader):
    """An in-memory float32 ``(channels, n)`` array with the reader API (for generated audio)."""

    samplerate: float
    closed: bool

    def __init__(self, samples: np.ndarray, samplerate: int, name: str = "") -> None:
        self._data = np.ascontiguousarray(samples, dtype=np.float32)
        self.samplerate = samplerate
        self.name = name
        self.file_dtype = "float32"
        self.exact_duration_known = True
        self.closed = False
        self._pos = 0

    @property
    def num_channels(self) -> int:
        channels: int = self._data.shape[0]
        return channels

    @property
    def frames(self) -> int:
        frames: int = self._data.shape[1]
        return frames

    def read(self, num_frames: int) -> np.ndarray:
        out = np.ascontiguousarray(self._data[:, self._pos : self._pos + num_frames])
        self._pos += out.shape[1]
        return out

    def seek(self, frame: int) -> None:
        self._pos = int(frame)

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        self.closed = True
