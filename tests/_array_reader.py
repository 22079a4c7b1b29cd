"""An in-memory reader with the ReadableAudioFile interface, to test the wrappers without codecs."""

from __future__ import annotations

import numpy as np

from stompbox.io.reader import AudioReader


class ArrayReader(AudioReader):
    """Reads a float32 ``(channels, n)`` array like a ReadableAudioFile (counts reads, can be unseekable)."""

    def __init__(self, samples: np.ndarray, samplerate: float, seekable: bool = True) -> None:
        self._data = np.ascontiguousarray(samples, dtype=np.float32)
        self._rate = samplerate
        self._pos = 0
        self._seekable = seekable
        self.closed = False
        self.name = "memory.wav"
        self.file_dtype = "float32"
        self.exact_duration_known = True
        self.frames_read = 0
        self.seeks = 0

    @property
    def samplerate(self):
        return int(self._rate) if float(self._rate).is_integer() else self._rate

    @property
    def num_channels(self) -> int:
        return self._data.shape[0]

    @property
    def frames(self) -> int:
        return self._data.shape[1]

    @property
    def duration(self) -> float:
        return self.frames / self._rate

    def read(self, n: int) -> np.ndarray:
        if self.closed:
            raise RuntimeError("I/O operation on a closed file.")
        out = self._data[:, self._pos : self._pos + n].copy()
        self._pos += out.shape[1]
        self.frames_read += out.shape[1]
        return out

    def seek(self, frame: int) -> None:
        if not self._seekable:
            raise OSError("not seekable")
        if not 0 <= frame <= self.frames:
            raise ValueError("bad seek")
        self.seeks += 1
        self._pos = int(frame)

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return self._seekable

    def close(self) -> None:
        self.closed = True
