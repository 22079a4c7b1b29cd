"""Regression tests for issue 17's "What was seen" (lengths, damage, bounded memory), on files foreign encoders
write. Each file is made at test time (the ffmpeg CLI, or PyAV's muxers where a lying header is needed) and
compared with FFmpeg's decode of it.
"""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

import _foreign
from stompbox.io import AudioFile

pytestmark = pytest.mark.skipif(
    bool(_foreign.missing_tools()), reason=f"foreign encoders missing: {_foreign.missing_tools()}"
)
LIMIT_MB = 200.0


def make(folder: Path, name: str, rate: int, channels: int, *args: str, seconds: float = 1.2) -> Path:
    """A file made by the ffmpeg CLI from the test signal (``args``: codec options; ``-`` writes to a pipe)."""
    source = folder / f"src-{rate}-{channels}-{seconds}.f32"
    if not source.exists():
        _foreign.signal(rate, channels, seconds).tofile(source)
    out = folder / name
    command = ["ffmpeg", "-v", "error", "-y", "-f", "f32le", "-ar", str(rate), "-ac", str(channels)]
    command += ["-channel_layout", _foreign.LAYOUTS[channels], "-i", str(source), *args]
    if args[-1] == "-":
        out.write_bytes(_foreign.run(command, capture=True))
    else:
        _foreign.run([*command, str(out)])
    return out


def read_all(path: Path | str, size: int = 4096) -> np.ndarray:
    with AudioFile(str(path)) as f:
        blocks = []
        while True:
            block = f.read(size)
            if block.shape[1] == 0:
                return np.concatenate(blocks, axis=1) if blocks else block
            blocks.append(block)


# ----------------------------------------------------------------------------------------------- Matroska
def test_matroska_chunked_reads_and_seeks_are_sample_exact(tmp_path: Path) -> None:
    # seen: 4096-frame chunks gave 66,155 frames where a whole read gave 66,150, and seek(100000) read frame 99,952
    path = make(tmp_path, "long.mka", 44100, 2, "-c:a", "pcm_s16le", seconds=3.0)
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    assert ffmpeg.shape[1] == int(44100 * 3.0) + 37
    for size in (4096, 1024, 1000):
        np.testing.assert_array_equal(read_all(path, size), ffmpeg)
    with AudioFile(str(path)) as f:
        f.seek(100000)
        assert f.tell() == 100000
        np.testing.assert_array_equal(f.read(500), ffmpeg[:, 100000:100500])


def test_matroska_timestamp_gap_reads_the_audio_without_a_giant_block(tmp_path: Path) -> None:
    # seen: a 1 h gap between two blocks' timestamps made one chunked read return 158 M frames of zeros
    av = pytest.importorskip("av")
    rate = 48000
    x = _foreign.signal(rate, 2, 1.0)
    path = tmp_path / "gap.mka"
    with av.open(str(path), "w", format="matroska") as out:
        stream = out.add_stream("pcm_s16le", rate=rate)
        stream.layout = "stereo"
        for start in range(0, x.shape[0], 4096):
            block = np.ascontiguousarray((x[start : start + 4096] * 32767).astype(np.int16)).reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(block, format="s16", layout="stereo")
            frame.sample_rate = rate
            frame.pts = start + (3600 * rate if start >= x.shape[0] // 2 else 0)  # an hour's gap half-way
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    assert ffmpeg.shape[1] == x.shape[0]  # the CLI's decode: the blocks, one after the other
    got: list[np.ndarray] = []
    growth = _foreign.peak_growth_mb(lambda: got.append(read_all(path, 4096)))
    np.testing.assert_array_equal(got[0], ffmpeg)
    if _foreign.can_measure_peak():
        assert growth < LIMIT_MB


# ----------------------------------------------------------------------------------------------- M4A, CAF
def test_m4a_whose_mdhd_duration_is_all_ones_reads_to_the_end(tmp_path: Path) -> None:
    # seen: 0 frames "exact" (FFmpeg decodes the whole file)
    path = make(tmp_path, "a.m4a", 44100, 2, "-c:a", "aac")
    data = bytearray(path.read_bytes())
    at = data.find(b"mdhd")
    assert data[at + 4] == 0  # version 0: 32-bit duration at +20
    data[at + 20 : at + 24] = b"\xff\xff\xff\xff"
    path.write_bytes(bytes(data))
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    with AudioFile(str(path)) as f:
        assert not f.exact_duration_known
        data_read = f.read(10**6)
        assert (f.frames, f.exact_duration_known) == (ffmpeg.shape[1], True)
    np.testing.assert_allclose(data_read, ffmpeg, atol=1e-5)


def test_alac_in_caf_from_ffmpeg_reads(tmp_path: Path) -> None:
    # seen: CorruptAudioError on every read (the CAF counts whole packets; the last holds fewer frames)
    path = make(tmp_path, "a.caf", 96000, 2, "-c:a", "alac", "-sample_fmt", "s32p")
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(read_all(path), ffmpeg)


def _caf_chunks(data: bytes) -> dict[bytes, int]:
    chunks, at = {}, 8
    while at + 12 <= len(data):
        kind, size = data[at : at + 4], struct.unpack(">q", data[at + 4 : at + 12])[0]
        chunks[kind] = at + 12
        if size < 0:
            break
        at += 12 + size
    return chunks


def test_caf_alac_whose_frames_per_packet_lie_stays_bounded(tmp_path: Path) -> None:
    # seen: frames-per-packet 0x7FFFFFFF tried to allocate 64 GiB on read(4096)
    path = make(tmp_path, "a.caf", 44100, 2, "-c:a", "alac", "-sample_fmt", "s16p")
    data = bytearray(path.read_bytes())
    desc = _caf_chunks(bytes(data))[b"desc"]
    data[desc + 20 : desc + 24] = struct.pack(">I", 0x7FFFFFFF)  # mFramesPerPacket
    path.write_bytes(bytes(data))
    with AudioFile(str(path)) as f:
        assert not f.exact_duration_known
        assert 0 <= f.frames < 100 * 44100  # an estimate, never an absurd length
        got: list[np.ndarray] = []
        growth = _foreign.peak_growth_mb(lambda: got.append(f.read(4096)))
        assert got[0].shape == (2, 4096)
    if _foreign.can_measure_peak():
        assert growth < LIMIT_MB
