"""The talk's chain, streamed from a file through AudioFile in chunks, equals the whole-array result."""

from __future__ import annotations

import numpy as np
import pytest

from _audio import SR, music
from stompbox import Delay, Distortion, Pedalboard, Reverb
from stompbox.io import AudioFile


def talk_chain() -> Pedalboard:
    return Pedalboard([Distortion(gain_db=25), Delay(delay_seconds=0.6, feedback=0.5, mix=0.5), Reverb(room_size=0.75)])


@pytest.mark.parametrize("chunk", [512, 4410, 44100])
def test_streamed_file_equals_whole_array(tmp_path, chunk):
    source = music(3.0)
    path = tmp_path / "in.wav"
    with AudioFile(path, "w", SR, 2, bit_depth=32) as out:
        out.write(source)
    whole = talk_chain()(source, SR)

    board = talk_chain()
    out_path = tmp_path / "out.wav"
    with AudioFile(path) as reader, AudioFile(out_path, "w", reader.samplerate, reader.num_channels, bit_depth=32) as w:
        while reader.tell() < reader.frames:
            w.write(board(reader.read(chunk), reader.samplerate, reset=False))
    with AudioFile(out_path) as result:
        streamed = result.read(result.frames)
    assert streamed.shape == whole.shape
    np.testing.assert_allclose(streamed, whole, atol=1e-6)
