"""Channel order and layout of multichannel files, against foreign encoders and FFmpeg's decoder (issue 17).

Every file holds one tone per channel (channel ``i`` in WAV order at ``TONES[i]`` Hz, all under 120 Hz so that
no codec's LFE band limit touches them); a channel is found by its frequency. Files are made at test time by
ffmpeg, oggenc, opusenc and flac, and the files stompbox writes are decoded by the ffmpeg CLI.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess

import numpy as np
import pytest

from stompbox.io import AudioFile

SR = 48000
TONES = 40.0 + 10.0 * np.arange(8)  # Hz: 1-s FFT bins
LAYOUTS = {1: "mono", 2: "stereo", 3: "3.0", 4: "quad", 5: "5.0", 6: "5.1", 7: "6.1", 8: "7.1"}
FFMPEG = shutil.which("ffmpeg")
needs_ffmpeg = pytest.mark.skipif(FFMPEG is None, reason="the ffmpeg CLI is not installed")


def _tones(channels: int, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(SR * seconds)) / SR
    return (0.25 * np.sin(2 * np.pi * TONES[:channels, None] * t)).astype(np.float32)


def _channel_of_each_tone(audio: np.ndarray) -> list[int]:
    """For each tone (in order), the channel that carries it: the strongest 1-s FFT bin of that channel, with
    every other channel at least 14 dB below it at that frequency (lossy surround coding leaks up to -20 dB)."""
    seconds_long = audio[:, -SR:] if audio.shape[1] >= SR else audio
    spectrum = np.abs(np.fft.rfft(seconds_long * np.hanning(seconds_long.shape[1]), axis=1))
    freqs = np.fft.rfftfreq(seconds_long.shape[1], 1 / SR)
    found = []
    for tone in TONES[: audio.shape[0]]:
        column = spectrum[:, np.argmin(np.abs(freqs - tone))]
        channel = int(np.argmax(column))
        others = np.delete(column, channel)
        assert others.size == 0 or others.max() < 0.2 * column[channel], (tone, column.round(1))
        found.append(channel)
    return found


def _ffmpeg(*args: str, data: bytes | None = None) -> bytes:
    result = subprocess.run([FFMPEG, "-v", "error", "-y", *args], input=data, capture_output=True, check=False)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def _ffprobe_layout(path) -> str:
    """ffprobe's name of a file's layout; for a layout it calls unknown, FFmpeg's "N channels" (or, for a mono or
    stereo WAV without a channel mask, "mono" and "stereo", as stompbox names them)."""
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_streams", "-of", "json", str(path)], capture_output=True, text=True
    ).stdout
    stream = json.loads(out)["streams"][0]
    layout = stream.get("channel_layout", "unknown")
    if layout == "unknown":
        channels = int(stream["channels"])
        return LAYOUTS[channels] if channels <= 2 else f"{channels} channels"
    return layout


def _foreign_wav(tmp_path, channels: int):
    """A 16-bit WAV written by FFmpeg in its standard layout for the count (WAVE_FORMAT_EXTENSIBLE mask)."""
    path = tmp_path / f"tones{channels}.wav"
    raw = np.ascontiguousarray(_tones(channels).T).tobytes()
    layout = LAYOUTS[channels]
    _ffmpeg("-f", "f32le", "-ar", str(SR), "-ch_layout", layout, "-i", "-", "-c:a", "pcm_s16le", str(path), data=raw)
    return path


def _decode_with_ffmpeg(path, channels: int) -> np.ndarray:
    """FFmpeg's decode of a file, in FFmpeg's (WAV's) channel order."""
    raw = _ffmpeg("-i", str(path), "-f", "f32le", "-c:a", "pcm_f32le", "-")
    return np.frombuffer(raw, np.float32).reshape(-1, channels).T


FOREIGN = {
    "ffmpeg-vorbis.ogg": lambda wav, out: _ffmpeg("-i", str(wav), "-c:a", "libvorbis", str(out)),
    "ffmpeg-opus.opus": lambda wav, out: _ffmpeg("-i", str(wav), "-c:a", "libopus", "-b:a", "512k", str(out)),
    "ffmpeg-flac.flac": lambda wav, out: _ffmpeg("-i", str(wav), "-c:a", "flac", str(out)),
    "ffmpeg-aac.m4a": lambda wav, out: _ffmpeg("-i", str(wav), "-c:a", "aac", "-b:a", "256k", str(out)),
    "ffmpeg-wav.wav": lambda wav, out: shutil.copy(wav, out),
    "oggenc.ogg": lambda wav, out: subprocess.run(["oggenc", "-Q", "-o", str(out), str(wav)], check=True),
    "opusenc.opus": lambda wav, out: subprocess.run(["opusenc", "--quiet", str(wav), str(out)], check=True),
    "flac.flac": lambda wav, out: subprocess.run(["flac", "-s", "-f", "-o", str(out), str(wav)], check=True),
}


@needs_ffmpeg
@pytest.mark.parametrize("channels", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("maker", sorted(FOREIGN))
def test_foreign_files_read_every_channel_in_its_place(tmp_path, maker, channels):
    """Issue 17: a 5.1 Ogg Vorbis or Opus from FFmpeg read as [L, C, R, Ls, Rs, LFE] under a 5.1 label.
    stompbox reads every channel where FFmpeg's decoder puts it (WAV order) and names the layout as ffprobe."""
    tool = maker.split("-")[0].split(".")[0]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    if maker == "ffmpeg-aac.m4a" and channels in (3, 5, 7):
        pytest.skip("FFmpeg's AAC encoder takes 1, 2, 4, 6 and 8 channels")
    wav = _foreign_wav(tmp_path, channels)
    path = tmp_path / maker
    FOREIGN[maker](wav, path)
    places = _channel_of_each_tone(_decode_with_ffmpeg(path, channels))
    if maker == "ffmpeg-opus.opus" and channels in (5, 7):
        # FFmpeg 5.1's libopus wrapper does not reorder 5.0 and 6.1 input: its own decode finds the tones
        # moved, and so must stompbox (it decodes what FFmpeg decodes)
        assert places != list(range(channels))
    else:
        assert places == list(range(channels))
    with AudioFile(str(path)) as f:
        audio = f.read(f.frames)
        assert f.num_channels == channels
        assert f.channel_layout == _ffprobe_layout(path)
    assert _channel_of_each_tone(audio) == places
    if path.suffix in (".ogg", ".opus"):  # through a pipe (FFmpeg's decoder, not libsndfile's)
        with AudioFile(io.BufferedReader(_Unseekable(path.read_bytes()))) as f:
            assert _channel_of_each_tone(f.read(2 * SR)) == places


class _Unseekable(io.RawIOBase):
    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), len(self._data))
        buffer[:n] = self._data[:n]
        self._data = self._data[n:]
        return n


@needs_ffmpeg
@pytest.mark.parametrize("channels", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("extension", ["ogg", "opus", "flac", "wav", "m4a"])
def test_files_stompbox_writes_have_every_channel_in_its_place_for_ffmpeg(tmp_path, extension, channels):
    """Issue 17: a 5.1 Ogg Vorbis or Opus written by stompbox had its centre in FR and its LFE where the left
    surround belongs, for FFmpeg. Now FFmpeg finds every tone where stompbox held it, under the layout stompbox
    reports for the count, and stompbox reads it back in place."""
    path = tmp_path / f"out.{extension}"
    with AudioFile(str(path), "w", SR, channels) as f:
        f.write(_tones(channels, 2.0))
    assert _channel_of_each_tone(_decode_with_ffmpeg(path, channels)) == list(range(channels))
    expected = {"flac": {5: "5.0(side)", 6: "5.1(side)"}, "m4a": {7: "7 channels"}}.get(extension, {})
    assert _ffprobe_layout(path) == expected.get(channels, LAYOUTS[channels])
    with AudioFile(str(path)) as f:
        assert f.channel_layout == _ffprobe_layout(path)
        assert _channel_of_each_tone(f.read(f.frames)) == list(range(channels))


@needs_ffmpeg
@pytest.mark.parametrize("channels", [1, 2])
def test_mono_and_stereo_layouts(tmp_path, channels):
    for extension in ("wav", "flac", "ogg", "mp3", "m4a"):
        path = tmp_path / f"x.{extension}"
        with AudioFile(str(path), "w", SR, channels) as f:
            f.write(_tones(channels, 0.5))
        with AudioFile(str(path)) as f:
            assert f.channel_layout == LAYOUTS[channels] == _ffprobe_layout(path), extension
            assert f.mono().channel_layout == "mono" and f.stereo().channel_layout == "stereo"
            assert f.resampled_to(44100).channel_layout == LAYOUTS[channels]


@needs_ffmpeg
@pytest.mark.parametrize(
    "layout,channels", [("5.1", 6), ("7.1", 8), ("quad", 4), ("5.0", 5), ("6.1", 7), ("3.0", 3), ("stereo", 2)]
)
def test_stereo_and_mono_downmix_equal_ffmpegs(tmp_path, layout, channels):
    """Issue 17: .stereo() on 5.1 kept only FL and FR. Now .stereo() and .mono() give what ``ffmpeg -ac 2`` and
    ``-ac 1`` give for 16-bit output (FFmpeg's matrix, scaled so that no output clips), to 16-bit rounding."""
    rng = np.random.default_rng(channels)
    x = (rng.uniform(-1, 1, (channels, 4800)) * 0.9).astype(np.float32)
    path = tmp_path / "in.wav"
    raw = np.ascontiguousarray(x.T).tobytes()
    _ffmpeg("-f", "f32le", "-ar", str(SR), "-ch_layout", layout, "-i", "-", "-c:a", "pcm_f32le", str(path), data=raw)
    for count in (2, 1):
        if count >= channels:
            continue
        expected = np.frombuffer(_ffmpeg("-i", str(path), "-ac", str(count), "-f", "s16le", "-"), np.int16)
        expected = expected.reshape(-1, count).T / 32768.0
        with AudioFile(str(path)) as f:
            assert f.channel_layout == layout
            converted = f.stereo() if count == 2 else f.mono()
            ours = converted.read(f.frames)
        assert ours.shape == expected.shape
        assert np.abs(ours - expected).max() < 3 / 32768  # FFmpeg's 16-bit matrix and rounding


@needs_ffmpeg
def test_the_command_line_downmixes_and_shows_the_layout(tmp_path, capsys):
    """Issue 17: ``convert -c 2`` and ``render -c 2`` of 5.1 kept FL and FR only, and ``info`` showed no layout.
    Both now give ``ffmpeg -ac 2``'s 16-bit result (to its rounding), and ``info`` names the layout."""
    from stompbox.cli.main import main

    x = (np.random.default_rng(6).uniform(-1, 1, (6, 4800)) * 0.9).astype(np.float32)
    path = tmp_path / "in.wav"
    raw = np.ascontiguousarray(x.T).tobytes()
    _ffmpeg("-f", "f32le", "-ar", str(SR), "-ch_layout", "5.1", "-i", "-", "-c:a", "pcm_s16le", str(path), data=raw)
    expected = np.frombuffer(_ffmpeg("-i", str(path), "-ac", "2", "-f", "s16le", "-"), np.int16).reshape(-1, 2).T
    assert main(["info", "--no-peak", str(path)]) == 0
    assert "channels:    6 (5.1)" in capsys.readouterr().out
    assert main(["info", "--no-peak", "--json", str(path)]) == 0
    assert '"channel_layout": "5.1"' in capsys.readouterr().out
    for command in (["convert", str(path), str(tmp_path / "c.wav")], ["render", str(path), str(tmp_path / "r.wav")]):
        assert main([*command, "-c", "2", "--quiet"]) == 0
        with AudioFile(command[2]) as f:
            assert f.channel_layout == "stereo"
            ours = f.read_raw(f.frames)
        assert ours.shape == expected.shape and np.abs(ours.astype(int) - expected).max() <= 2


@needs_ffmpeg
def test_a_mask_without_a_standard_name_is_named_as_ffprobe_names_it(tmp_path):
    import struct

    from stompbox._base.channels import conversion_matrix

    buffer = io.BytesIO()
    with AudioFile(buffer, "w", SR, 3, format="wav") as f:
        f.write(_tones(3, 0.1))
    data = bytearray(buffer.getvalue())
    data[40:44] = struct.pack("<I", 0x203)  # FL, FR, SL: no standard layout
    path = tmp_path / "custom.wav"
    path.write_bytes(bytes(data))
    with AudioFile(str(path)) as f:
        assert f.channel_layout == _ffprobe_layout(path) == "3 channels (FL+FR+SL)"
    # FFmpeg refuses to downmix it; stompbox folds SL into FL at -3 dB (then scales the matrix not to clip)
    a = np.sqrt(0.5)
    expected = np.array([[1, 0, a], [0, 1, 0]]) / (1 + a)
    assert np.allclose(conversion_matrix(3, 2, "3 channels (FL+FR+SL)"), expected, atol=1e-7)
