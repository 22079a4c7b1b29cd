"""Regression tests for issue 17's "What was seen" (lengths, damage, bounded memory), on files foreign encoders
write. Each file is made at test time (the ffmpeg CLI, or PyAV's muxers where a lying header is needed) and
compared with FFmpeg's decode of it.
"""

from __future__ import annotations

import io
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

import _foreign
from stompbox.io import AudioFile, CorruptAudioError, TruncatedAudioWarning

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


# ----------------------------------------------------------------------------------------------- MP3
@pytest.mark.parametrize("how", ["pipe", "write_xing 0"])
def test_vbr_mp3_without_a_xing_header_reads_to_its_real_end(tmp_path: Path, how: str) -> None:
    # seen: 1,905,151 frames "(exact)" for a file FFmpeg decodes to 2,692,224, and reads stopping at the estimate
    args = ("-c:a", "libmp3lame", "-q:a", "2", "-f", "mp3", "-") if how == "pipe" else ("-c:a", "libmp3lame")
    if how != "pipe":
        args = (*args, "-q:a", "2", "-write_xing", "0")
    path = make(tmp_path, "a.mp3", 44100, 2, *args, seconds=8.0)
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    with AudioFile(str(path)) as f:
        assert f.frames == ffmpeg.shape[1]  # walked: every whole frame, as FFmpeg decodes it
        np.testing.assert_array_equal(f.read(f.frames + 1000), ffmpeg)  # FFmpeg decodes it: the same samples
    np.testing.assert_array_equal(read_all(path, 4096), ffmpeg)


def test_mp3_whose_lame_delay_and_padding_exceed_its_frames_is_never_negative(tmp_path: Path) -> None:
    # seen: frames == -7038
    path = make(tmp_path, "a.mp3", 44100, 2, "-c:a", "libmp3lame", "-b:a", "192k")
    data = bytearray(path.read_bytes())
    info = max(data.find(b"Info"), data.find(b"Xing"))
    data[info + 8 : info + 12] = (1).to_bytes(4, "big")  # the Xing frame count: 1
    lame = data.find(b"LAME", info)
    data[lame + 22] |= 0x0F  # padding 0xFFF
    data[lame + 23] = 0xFF
    path.write_bytes(bytes(data))
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    with AudioFile(str(path)) as f:
        assert f.frames >= 0 and not f.exact_duration_known
        audio = f.read(10**6)
        assert (f.frames, f.exact_duration_known) == (audio.shape[1], True)
    assert audio.shape[1] == ffmpeg.shape[1]


def test_no_library_writes_to_stderr_reading_damaged_mp3s(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    # seen: libmpg123's raw warnings on stderr from info, convert and batch
    path = make(tmp_path, "a.mp3", 22050, 1, "-c:a", "libmp3lame", "-q:a", "4")
    cut = tmp_path / "cut.mp3"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size * 6 // 10])  # mpg123: "Xing stream size off"
    capfd.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncatedAudioWarning)
        with AudioFile(str(path)) as f:
            for target in range(0, f.frames - 2000, 997):  # seeks into the bit reservoir
                f.seek(target)
                f.read(100)
        read_all(cut)
    assert capfd.readouterr().err == ""


# ----------------------------------------------------------------------------------------------- truncation
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("a.wav", ("-c:a", "pcm_s16le")),
        ("a.aiff", ("-c:a", "pcm_s24be")),
        ("a.w64", ("-c:a", "pcm_s16le", "-f", "w64")),
        ("a.caf", ("-c:a", "pcm_s24le")),
        ("a.flac", ("-c:a", "flac")),
        ("a.mp3", ("-c:a", "libmp3lame", "-b:a", "128k")),
        ("b.mp3", ("-c:a", "libmp3lame", "-q:a", "2", "-write_xing", "0")),
        ("a.mka", ("-c:a", "pcm_s16le")),
    ],
)
def test_a_truncated_file_reads_what_is_present_with_one_warning(tmp_path: Path, name: str, args: tuple) -> None:
    # seen: a truncated Xing MP3 refused whole, a truncated WAV read silently as "exact", a truncated FLAC "not a
    # known or supported format"
    path = make(tmp_path, name, 44100, 2, *args, seconds=3.0)
    cut = tmp_path / f"cut-{name}"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size * 6 // 10])
    present = _foreign.ffmpeg_decode(cut, 2).shape[1]
    with pytest.warns(TruncatedAudioWarning, match=str(cut)) as caught:
        audio = read_all(cut)
    assert len([w for w in caught if issubclass(w.category, TruncatedAudioWarning)]) == 1
    whole = 44100 * 3
    assert 0.5 * whole < audio.shape[1] < 0.7 * whole
    assert abs(audio.shape[1] - present) <= 1152  # FFmpeg may decode the last, cut MP3 frame in part


def test_damage_in_the_middle_of_a_flac_stays_an_error(tmp_path: Path) -> None:
    path = make(tmp_path, "a.flac", 44100, 2, "-c:a", "flac", seconds=3.0)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 3000] = bytes(3000)
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptAudioError):
        read_all(path)


@pytest.mark.parametrize(("name", "codec"), [("a.ogg", "libvorbis"), ("a.opus", "libopus")])
def test_a_truncated_ogg_file_reads_its_whole_pages(tmp_path: Path, name: str, codec: str) -> None:
    # libsndfile refused a cut Opus file, and read a cut Vorbis file as empty when its last page was cut
    path = make(tmp_path, name, 48000, 2, "-c:a", codec, seconds=5.0)
    with AudioFile(str(path)) as f:
        whole = f.read(f.frames)
    cut = tmp_path / f"cut-{name}"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size * 6 // 10])
    with pytest.warns(TruncatedAudioWarning, match="last Ogg page"):
        present = read_all(cut)
    assert 48000 * 2 <= present.shape[1] < 0.7 * whole.shape[1]  # FFmpeg writes pages of a second
    np.testing.assert_allclose(present, whole[:, : present.shape[1]], atol=1e-6)


def test_a_flac_declaring_1_hz_through_a_non_seekable_file_like_stays_bounded(tmp_path: Path) -> None:
    # seen: 12 GiB tried on a read of such a file through a pipe-like object
    sf = pytest.importorskip("soundfile")
    path = tmp_path / "one-hz.flac"
    sf.write(str(path), _foreign.signal(44100, 2, 1.0), 1, format="FLAC")

    class Pipe:
        def __init__(self, data: bytes) -> None:
            self._data = io.BytesIO(data)

        def read(self, size: int = -1) -> bytes:
            return self._data.read(size)

        def seekable(self) -> bool:
            return False

    got: list[np.ndarray] = []

    def read() -> None:
        with AudioFile(Pipe(path.read_bytes())) as f:
            assert f.samplerate == 1
            got.append(f.read(f.frames))
            while block := f.read(4096).shape[1]:
                got.append(np.zeros((2, block)))

    growth = _foreign.peak_growth_mb(read)
    assert sum(block.shape[1] for block in got) == 44100 + 37
    if _foreign.can_measure_peak():
        assert growth < LIMIT_MB


def test_flac_whose_streaminfo_total_is_0_reads_whole(tmp_path: Path) -> None:
    # seen: frames 9223372036854775807 "exact", reads failing after the last frame, read(f.frames) too big
    path = make(tmp_path, "a.flac", 44100, 2, "-c:a", "flac", "-f", "flac", "-", seconds=3.0)
    streaminfo = path.read_bytes()[8:42]
    assert streaminfo[13] & 0x0F == 0 and streaminfo[14:18] == bytes(4)  # total samples 0: FFmpeg's pipe
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    with AudioFile(str(path)) as f:
        assert not f.exact_duration_known
        assert ffmpeg.shape[1] <= f.frames < ffmpeg.shape[1] + 4608  # from the last frames' headers
        np.testing.assert_array_equal(f.read(f.frames), ffmpeg)
        assert (f.frames, f.exact_duration_known) == (ffmpeg.shape[1], True)
        f.seek(100000)
        np.testing.assert_array_equal(f.read(1000), ffmpeg[:, 100000:101000])


@pytest.mark.parametrize("junk", ["zeros", "random"])
def test_damaged_adts_total_does_not_depend_on_the_read_size(tmp_path: Path, junk: str) -> None:
    # seen: a damaged ADTS AAC gave a total that depended on the read size
    path = make(tmp_path, "a.aac", 44100, 2, "-c:a", "aac", seconds=3.0)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    noise = np.random.default_rng(3).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    data[middle : middle + 3000] = bytes(3000) if junk == "zeros" else noise
    path.write_bytes(bytes(data))
    ffmpeg = _foreign.ffmpeg_decode(path, 2)
    totals = {size: read_all(path, size).shape[1] for size in (1000, 1024, 4096, 65536)}
    assert set(totals.values()) == {ffmpeg.shape[1]}, totals
