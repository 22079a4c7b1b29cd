"""Fuzz ``AudioFile`` reading from bytes: every input must open and read to the end, or raise one of the
documented exceptions (``UnsupportedFormatError`` / ``CorruptAudioError``, both ``ValueError``). Anything else
(another exception, a crash, a hang, unbounded memory) is a finding.

Run: ``python fuzz/fuzz_audiofile.py -runs=100000 -max_len=65536 -timeout=20 CORPUS_DIR`` (see ``fuzz/run.py``).
"""

from __future__ import annotations

import io
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import instrumented_stompbox, run  # noqa: E402

instrumented_stompbox()

from stompbox.io import AudioFile, CorruptAudioError, UnsupportedFormatError  # noqa: E402

MAX_SAMPLES = 20_000_000  # a header may declare hours of audio in a few bytes: read at most this much


def test_one_input(data: bytes) -> None:
    try:
        with AudioFile(io.BytesIO(data)) as f:
            channels = f.num_channels
            assert channels >= 1 and f.samplerate > 0, (channels, f.samplerate)
            total = 0
            while total * channels < MAX_SAMPLES:
                block = f.read(8192)
                assert block.ndim == 2 and block.shape[0] == channels, block.shape
                if block.shape[1] == 0:
                    break
                total += block.shape[1]
            if total > 1 and f.seekable():
                f.seek(total // 2)
                f.read(1024)
    except (UnsupportedFormatError, CorruptAudioError):
        pass


if __name__ == "__main__":
    run(test_one_input)
