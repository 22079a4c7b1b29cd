"""Audio files made by foreign encoders at test time, and FFmpeg's decode of each: the differential suite's corpus.

Every file is made from the same kind of signal: a distinct tone in each channel (so that a channel found in the
wrong place shows), with a little noise (so that lossless codecs carry all their bits), about a second long. The
encoders are the ``ffmpeg`` CLI (to files and to pipes), SoX, and Debian's ``lame``, ``flac``, ``oggenc`` and
``opusenc``. The reference for what a file holds is FFmpeg's decode of it (the ``ffmpeg`` CLI to raw samples).

The priming/padding rule, once for every format (the streaming guide explains it): stompbox reads exactly the
frames FFmpeg decodes. Encoders' priming and padding are trimmed where the file says how much there is (an MP3's
LAME tag, Opus's pre-skip and final granule position, Vorbis's granule positions, an M4A's edit list, Matroska's
CodecDelay), by FFmpeg and stompbox alike; where the file does not say (an MP3 without a LAME tag, raw ADTS AAC),
neither trims anything and the decoder's output is the audio. :func:`expected_frames` is that rule.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

TOOLS = ("ffmpeg", "sox", "lame", "flac", "oggenc", "opusenc")
SECONDS = 1.2
LFE_HZ = 50.0
#: FFmpeg's channel layouts by channel count (its native order: FL FR FC LFE BL BR SL SR)
LAYOUTS = {1: "mono", 2: "stereo", 3: "3.0", 4: "quad", 5: "5.0", 6: "5.1", 8: "7.1"}


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def tones(channels: int) -> list[float]:
    """The tone of each channel in FFmpeg's order: 300, 500, 700... Hz, and a low tone in a 5.1/7.1 LFE."""
    out = []
    step = 0
    for index in range(channels):
        if channels in (6, 8) and index == 3:
            out.append(LFE_HZ)
        else:
            out.append(300.0 + 200.0 * step)
            step += 1
    return out


def signal(rate: int, channels: int, seconds: float = SECONDS) -> np.ndarray:
    """float32 ``(frames, channels)``: a tone per channel at 0.4 plus noise at 0.01, the frame count made odd."""
    frames = int(rate * seconds) + 37
    t = np.arange(frames) / rate
    rng = np.random.default_rng(rate * 10 + channels)
    columns = [0.4 * np.sin(2 * np.pi * hz * t) + 0.01 * rng.standard_normal(frames) for hz in tones(channels)]
    return np.stack(columns, axis=1).astype(np.float32)


@dataclasses.dataclass(frozen=True)
class Spec:
    """One foreign file: how it is made, and what kind of comparison applies."""

    id: str
    ext: str
    rate: int
    channels: int
    lossless: bool
    #: the command, with ``{src}`` (a WAV of the signal, ``{src16}``/``{src24}``/``{srcf}`` by sample type) and
    #: ``{out}``; ``pipe``: the encoder writes to its stdout (a pipe), which becomes the file
    command: tuple[str, ...]
    pipe: bool = False
    #: the largest difference from FFmpeg's decode allowed for a lossy codec (decoders differ in rounding)
    tolerance: float = 0.0
    #: where this case's channels are known not to be in FFmpeg's order yet (a reason), else None
    channel_order_pending: str | None = None
    seconds: float = SECONDS
    notes: str = ""


def _ff(*args: str) -> tuple[str, ...]:
    return ("ffmpeg", "-v", "error", "-y", "-i", "{srcf}", *args)


#: known failures still to fix: "id" or "id:test" (frames, samples, channels, chunks, seeks) -> reason; the
#: differential suite's tests and tests/io/test_info_vs_ffprobe.py look their case up here
PENDING: dict[str, str] = {}

# tolerances: libsndfile's decoders (libvorbis, libopus, mpg123) against FFmpeg's own, measured on these files
TOL_MP3 = 2e-3
TOL_VORBIS = 2e-3
TOL_OPUS = 2e-2
TOL_AAC = 1e-5  # both decoded by FFmpeg


def _specs() -> list[Spec]:
    s: list[Spec] = []

    def add(id: str, ext: str, rate: int, channels: int, lossless: bool, command: tuple[str, ...], **kw) -> None:  # noqa: A002
        s.append(Spec(id, ext, rate, channels, lossless, command, **kw))

    # ---- WAV, RF64, W64 (ffmpeg)
    for codec, rate, ch in [
        ("pcm_u8", 8000, 1),
        ("pcm_s16le", 44100, 2),
        ("pcm_s24le", 48000, 2),
        ("pcm_s32le", 96000, 2),
        ("pcm_f32le", 192000, 2),
        ("pcm_f64le", 22050, 1),
        ("pcm_s16le", 48000, 6),
        ("pcm_s24le", 48000, 8),
        ("pcm_s16le", 32000, 3),
        ("pcm_s16le", 16000, 4),
        ("pcm_s16le", 11025, 5),
    ]:
        add(f"wav-{codec}-{rate}-{ch}ch", "wav", rate, ch, True, _ff("-ar", str(rate), "-c:a", codec, "{out}"))
    add("wav-s16-pipe", "wav", 44100, 2, True, _ff("-c:a", "pcm_s16le", "-f", "wav", "-"), pipe=True)
    add("wav-f32-pipe-6ch", "wav", 48000, 6, True, _ff("-c:a", "pcm_f32le", "-f", "wav", "-"), pipe=True)
    add("rf64-s24", "wav", 48000, 2, True, _ff("-c:a", "pcm_s24le", "-rf64", "always", "{out}"))
    add("rf64-f32-6ch", "wav", 48000, 6, True, _ff("-c:a", "pcm_f32le", "-rf64", "always", "{out}"))
    add("w64-s16", "w64", 44100, 2, True, _ff("-c:a", "pcm_s16le", "-f", "w64", "{out}"))
    add("w64-f32", "w64", 48000, 2, True, _ff("-c:a", "pcm_f32le", "-f", "w64", "{out}"))
    # ---- AIFF / AIFC
    add("aiff-s16", "aiff", 44100, 2, True, _ff("-c:a", "pcm_s16be", "{out}"))
    add("aiff-s24-6ch", "aiff", 48000, 6, True, _ff("-c:a", "pcm_s24be", "{out}"))
    add("aiff-s32-96k", "aiff", 96000, 1, True, _ff("-ar", "96000", "-c:a", "pcm_s32be", "{out}"))
    add("aiff-s8-8k", "aiff", 8000, 1, True, _ff("-ar", "8000", "-c:a", "pcm_s8", "{out}"))
    add("aifc-f32", "aifc", 48000, 2, True, _ff("-c:a", "pcm_f32be", "-f", "aiff", "{out}"))
    # ---- CAF, ALAC
    add("caf-s16", "caf", 44100, 2, True, _ff("-c:a", "pcm_s16le", "{out}"))
    add("caf-s24-6ch", "caf", 48000, 6, True, _ff("-c:a", "pcm_s24le", "{out}"))
    add("caf-alac-16", "caf", 44100, 2, True, _ff("-c:a", "alac", "-sample_fmt", "s16p", "{out}"))
    add("caf-alac-24", "caf", 96000, 2, True, _ff("-ar", "96000", "-c:a", "alac", "-sample_fmt", "s32p", "{out}"))
    add("m4a-alac-16", "m4a", 44100, 2, True, _ff("-c:a", "alac", "-sample_fmt", "s16p", "{out}"))
    add("m4a-alac-24-6ch", "m4a", 48000, 6, True, _ff("-c:a", "alac", "-sample_fmt", "s32p", "{out}"))
    # ---- FLAC (ffmpeg to files and pipes, flac, sox)
    for rate, ch, fmt in [
        (44100, 2, "s16"),
        (48000, 2, "s32"),
        (8000, 1, "s16"),
        (96000, 2, "s32"),
        (192000, 2, "s16"),
        (48000, 6, "s16"),
        (48000, 8, "s32"),
        (22050, 3, "s16"),
    ]:
        depth = "16" if fmt == "s16" else "24"
        add(
            f"flac-{depth}-{rate}-{ch}ch",
            "flac",
            rate,
            ch,
            True,
            _ff("-ar", str(rate), "-c:a", "flac", "-sample_fmt", fmt, "{out}"),
        )
    add("flac-pipe-16", "flac", 44100, 2, True, _ff("-c:a", "flac", "-f", "flac", "-"), pipe=True)
    add(
        "flac-pipe-24-6ch",
        "flac",
        48000,
        6,
        True,
        _ff("-c:a", "flac", "-sample_fmt", "s32", "-f", "flac", "-"),
        pipe=True,
    )
    add("flac-pipe-8k", "flac", 8000, 1, True, _ff("-ar", "8000", "-c:a", "flac", "-f", "flac", "-"), pipe=True)
    add("flac-cli-16", "flac", 44100, 2, True, ("flac", "-s", "-f", "-o", "{out}", "{src16}"))
    add("flac-cli-24", "flac", 96000, 2, True, ("flac", "-s", "-f", "-8", "-o", "{out}", "{src24}"))
    add("flac-cli-6ch", "flac", 48000, 6, True, ("flac", "-s", "-f", "-o", "{out}", "{src16}"))
    add("flac-sox-24", "flac", 48000, 2, True, ("sox", "{src24}", "{out}"))
    # ---- SoX: WAV, AIFF, CAF? (sox writes WAV/AIFF/W64)
    add("sox-wav-24", "wav", 48000, 2, True, ("sox", "{srcf}", "-b", "24", "{out}"))
    add("sox-wav-8", "wav", 22050, 1, True, ("sox", "{srcf}", "-b", "8", "{out}"))
    add("sox-aiff-16", "aiff", 44100, 2, True, ("sox", "{srcf}", "-b", "16", "{out}"))
    add("sox-w64-f32", "w64", 48000, 2, True, ("sox", "{srcf}", "-e", "floating-point", "-b", "32", "{out}"))
    # ---- Ogg Vorbis
    add("vorbis-ff-44k", "ogg", 44100, 2, False, _ff("-c:a", "libvorbis", "-q:a", "5", "{out}"), tolerance=TOL_VORBIS)
    add("vorbis-ff-mono-16k", "ogg", 16000, 1, False, _ff("-c:a", "libvorbis", "{out}"), tolerance=TOL_VORBIS)
    add(
        "vorbis-ff-6ch",
        "ogg",
        48000,
        6,
        False,
        _ff("-c:a", "libvorbis", "{out}"),
        tolerance=TOL_VORBIS,
    )
    add(
        "vorbis-ff-pipe",
        "ogg",
        44100,
        2,
        False,
        _ff("-c:a", "libvorbis", "-f", "ogg", "-"),
        pipe=True,
        tolerance=TOL_VORBIS,
    )
    add("vorbis-oggenc", "ogg", 44100, 2, False, ("oggenc", "-Q", "-o", "{out}", "{src16}"), tolerance=TOL_VORBIS)
    add("vorbis-oggenc-96k", "ogg", 96000, 1, False, ("oggenc", "-Q", "-o", "{out}", "{src16}"), tolerance=TOL_VORBIS)
    add("vorbis-sox", "ogg", 22050, 2, False, ("sox", "{src16}", "{out}"), tolerance=TOL_VORBIS)
    # ---- Opus (Ogg)
    add("opus-ff-48k", "opus", 48000, 2, False, _ff("-c:a", "libopus", "-b:a", "128k", "{out}"), tolerance=TOL_OPUS)
    add("opus-ff-mono", "opus", 48000, 1, False, _ff("-c:a", "libopus", "-b:a", "64k", "{out}"), tolerance=TOL_OPUS)
    add(
        "opus-ff-6ch",
        "opus",
        48000,
        6,
        False,
        _ff("-c:a", "libopus", "-b:a", "256k", "{out}"),
        # FFmpeg's native Opus decoder differs from libopus (libsndfile's, and ffmpeg -c:a libopus) on this file's
        # centre and LFE streams by up to 0.086; stompbox equals libopus's decode to its 16-bit output's rounding
        tolerance=0.1,
    )
    add(
        "opus-ff-pipe",
        "opus",
        48000,
        2,
        False,
        _ff("-c:a", "libopus", "-f", "opus", "-"),
        pipe=True,
        tolerance=TOL_OPUS,
    )
    add("opus-opusenc", "opus", 48000, 2, False, ("opusenc", "--quiet", "{src16}", "{out}"), tolerance=TOL_OPUS)
    add("opus-opusenc-44k", "opus", 44100, 2, False, ("opusenc", "--quiet", "{src16}", "{out}"), tolerance=TOL_OPUS)
    add(
        "opus-opusenc-6ch",
        "opus",
        48000,
        6,
        False,
        ("opusenc", "--quiet", "{src16}", "{out}"),
        tolerance=TOL_OPUS,
    )
    # ---- MP3
    add("mp3-lame-cbr", "mp3", 44100, 2, False, ("lame", "--quiet", "-b", "192", "{src16}", "{out}"), tolerance=TOL_MP3)
    add("mp3-lame-vbr", "mp3", 44100, 2, False, ("lame", "--quiet", "-V", "2", "{src16}", "{out}"), tolerance=TOL_MP3)
    add(
        "mp3-lame-mono-22k",
        "mp3",
        22050,
        1,
        False,
        ("lame", "--quiet", "-V", "4", "{src16}", "{out}"),
        tolerance=TOL_MP3,
    )
    add("mp3-lame-8k", "mp3", 8000, 1, False, ("lame", "--quiet", "-b", "32", "{src16}", "{out}"), tolerance=TOL_MP3)
    add(
        "mp3-lame-notag",
        "mp3",
        44100,
        2,
        False,
        ("lame", "--quiet", "-t", "-V", "2", "{src16}", "{out}"),
        tolerance=TOL_MP3,
    )
    add("mp3-ff-cbr", "mp3", 44100, 2, False, _ff("-c:a", "libmp3lame", "-b:a", "192k", "{out}"), tolerance=TOL_MP3)
    add("mp3-ff-vbr", "mp3", 48000, 2, False, _ff("-c:a", "libmp3lame", "-q:a", "2", "{out}"), tolerance=TOL_MP3)
    add(
        "mp3-ff-vbr-noxing",
        "mp3",
        44100,
        2,
        False,
        _ff("-c:a", "libmp3lame", "-q:a", "2", "-write_xing", "0", "{out}"),
        tolerance=TOL_MP3,
    )
    add(
        "mp3-ff-vbr-pipe",
        "mp3",
        44100,
        2,
        False,
        _ff("-c:a", "libmp3lame", "-q:a", "2", "-f", "mp3", "-"),
        pipe=True,
        tolerance=TOL_MP3,
    )
    add(
        "mp3-ff-cbr-pipe",
        "mp3",
        32000,
        1,
        False,
        _ff("-ar", "32000", "-c:a", "libmp3lame", "-b:a", "96k", "-f", "mp3", "-"),
        pipe=True,
        tolerance=TOL_MP3,
    )
    add(
        "mp3-ff-vbr-pipe-long",
        "mp3",
        44100,
        2,
        False,
        _ff("-c:a", "libmp3lame", "-q:a", "6", "-f", "mp3", "-"),
        pipe=True,
        tolerance=TOL_MP3,
        seconds=6.0,
    )
    add("mp3-sox", "mp3", 44100, 2, False, ("sox", "{src16}", "{out}"), tolerance=TOL_MP3)
    # ---- AAC: ADTS and M4A (decoded by FFmpeg on both sides)
    add("adts-aac", "aac", 44100, 2, False, _ff("-c:a", "aac", "-b:a", "128k", "{out}"), tolerance=TOL_AAC)
    add("adts-aac-pipe", "aac", 48000, 1, False, _ff("-c:a", "aac", "-f", "adts", "-"), pipe=True, tolerance=TOL_AAC)
    add("m4a-aac", "m4a", 44100, 2, False, _ff("-c:a", "aac", "-b:a", "128k", "{out}"), tolerance=TOL_AAC)
    add("m4a-aac-mono-22k", "m4a", 22050, 1, False, _ff("-ar", "22050", "-c:a", "aac", "{out}"), tolerance=TOL_AAC)
    add("m4a-aac-6ch", "m4a", 48000, 6, False, _ff("-c:a", "aac", "-b:a", "384k", "{out}"), tolerance=TOL_AAC)
    add("mp4-aac-8ch", "mp4", 48000, 8, False, _ff("-c:a", "aac", "-b:a", "512k", "{out}"), tolerance=TOL_AAC)
    # ---- Matroska / WebM, to files and pipes
    add("mka-pcm-s16", "mka", 44100, 2, True, _ff("-c:a", "pcm_s16le", "{out}"))
    add("mka-pcm-f32-6ch", "mka", 48000, 6, True, _ff("-c:a", "pcm_f32le", "{out}"))
    add("mka-pcm-s24-pipe", "mka", 44100, 2, True, _ff("-c:a", "pcm_s24le", "-f", "matroska", "-"), pipe=True)
    add("mka-flac", "mka", 44100, 2, True, _ff("-c:a", "flac", "{out}"))
    add("mka-flac-pipe", "mka", 96000, 2, True, _ff("-ar", "96000", "-c:a", "flac", "-f", "matroska", "-"), pipe=True)
    add("mka-opus", "mka", 48000, 2, False, _ff("-c:a", "libopus", "{out}"), tolerance=TOL_AAC)
    add("mka-vorbis", "mka", 44100, 2, False, _ff("-c:a", "libvorbis", "{out}"), tolerance=TOL_AAC)
    add("mka-mp3", "mka", 44100, 2, False, _ff("-c:a", "libmp3lame", "{out}"), tolerance=TOL_AAC)
    add("webm-opus", "webm", 48000, 2, False, _ff("-c:a", "libopus", "{out}"), tolerance=TOL_AAC)
    add("webm-opus-6ch", "webm", 48000, 6, False, _ff("-c:a", "libopus", "{out}"), tolerance=TOL_AAC)
    add("webm-vorbis", "webm", 44100, 2, False, _ff("-c:a", "libvorbis", "{out}"), tolerance=TOL_AAC)
    add(
        "webm-opus-pipe",
        "webm",
        48000,
        1,
        False,
        _ff("-c:a", "libopus", "-f", "webm", "-"),
        pipe=True,
        tolerance=TOL_AAC,
    )
    add(
        "webm-vorbis-pipe",
        "webm",
        44100,
        2,
        False,
        _ff("-c:a", "libvorbis", "-f", "webm", "-"),
        pipe=True,
        tolerance=TOL_AAC,
    )
    add("mka-pcm-long", "mka", 44100, 2, True, _ff("-c:a", "pcm_s16le", "{out}"), seconds=4.0)
    return s


SPECS = _specs()
BY_ID = {spec.id: spec for spec in SPECS}


class Corpus:
    """Makes each file on first use in ``folder`` (thread-safe), and keeps FFmpeg's decode of it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.RLock()
        self._made: dict[str, Path] = {}
        self._decoded: dict[str, np.ndarray] = {}
        self._expected: dict[str, int] = {}

    def _source(self, rate: int, channels: int, seconds: float, kind: str) -> Path:
        path = self.folder / f"src-{rate}-{channels}-{seconds}-{kind}.wav"
        if not path.exists():
            raw = self.folder / f"src-{rate}-{channels}-{seconds}.f32"
            if not raw.exists():
                signal(rate, channels, seconds).tofile(raw)
            codec = {"16": "pcm_s16le", "24": "pcm_s24le", "f": "pcm_f32le"}[kind]
            run(
                ["ffmpeg", "-v", "error", "-y", "-f", "f32le", "-ar", str(rate), "-ac", str(channels)]
                + ["-channel_layout", LAYOUTS[channels], "-i", str(raw), "-c:a", codec, str(path)]
            )
        return path

    def path(self, spec: Spec) -> Path:
        with self._lock:
            if spec.id not in self._made:
                self._made[spec.id] = self._make(spec)
            return self._made[spec.id]

    def _make(self, spec: Spec) -> Path:
        out = self.folder / f"{spec.id}.{spec.ext}"
        names = {
            "srcf": self._source(spec.rate, spec.channels, spec.seconds, "f"),
            "out": out,
        }
        command = list(spec.command)
        if any("{src16}" in part for part in command):
            names["src16"] = self._source(spec.rate, spec.channels, spec.seconds, "16")
        if any("{src24}" in part for part in command):
            names["src24"] = self._source(spec.rate, spec.channels, spec.seconds, "24")
        command = [part.format(**{k: str(v) for k, v in names.items()}) for part in command]
        if spec.command[0] == "ffmpeg" and "-ar" not in command:
            command[-1:-1] = ["-ar", str(spec.rate)]  # the rate of the signal (ffmpeg would keep it anyway)
        if spec.pipe:
            data = run(command, capture=True)
            out.write_bytes(data)
        else:
            run(command)
        return out

    def reference(self, spec: Spec) -> np.ndarray:
        """FFmpeg's decode cut to the frames stompbox must read (:func:`expected_frames`), made once."""
        decoded = self.decoded(spec)
        with self._lock:
            if spec.id not in self._expected:
                self._expected[spec.id] = expected_frames(spec, self.path(spec), decoded.shape[1])
            return decoded[:, : self._expected[spec.id]]

    def decoded(self, spec: Spec) -> np.ndarray:
        """FFmpeg's decode of the file: float32 ``(channels, frames)``, integer samples scaled as stompbox scales
        them (``k / (2**(bits-1) - 1)``), so that lossless files compare bit for bit."""
        path = self.path(spec)
        with self._lock:
            if spec.id not in self._decoded:
                self._decoded[spec.id] = ffmpeg_decode(path, spec.channels)
            return self._decoded[spec.id]


def run(command: list[str], capture: bool = False) -> bytes:
    done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return done.stdout if capture else b""


def _probe_sample_format(path: Path) -> tuple[str, int]:
    out = run(
        ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=sample_fmt,bits_per_raw_sample,"
         "bits_per_sample,codec_name", "-of", "default=nw=1", str(path)],
        capture=True,
    ).decode()  # fmt: skip
    fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    bits = 0
    for key in ("bits_per_raw_sample", "bits_per_sample"):
        value = fields.get(key, "N/A")
        if value.isdigit() and int(value):
            bits = int(value)
            break
    return fields.get("sample_fmt", ""), bits


def ffmpeg_decode(path: Path, channels: int) -> np.ndarray:
    """FFmpeg's decode of ``path`` (the CLI, in FFmpeg's channel order), float32 ``(channels, frames)``."""
    sample_fmt, bits = _probe_sample_format(path)
    if sample_fmt.rstrip("p") in ("u8", "s16", "s32"):
        raw = run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "s32le", "-c:a", "pcm_s32le", "-"], capture=True)
        ints = np.frombuffer(raw, "<i4").reshape(-1, channels)
        if sample_fmt.rstrip("p") == "u8":
            bits = 8
        elif sample_fmt.rstrip("p") == "s16":
            bits = 16
        elif not bits or bits > 32:
            bits = 32
        if bits == 32:
            values = ints.astype(np.float32) * np.float32(1.0 / 2147483647.0)
        else:
            full = 2 ** (bits - 1) - 1
            values = (ints >> (32 - bits)).astype(np.float32) * np.float32(1.0 / full)
        return np.ascontiguousarray(values.T)
    raw = run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "f32le", "-c:a", "pcm_f32le", "-"], capture=True)
    return np.ascontiguousarray(np.frombuffer(raw, "<f4").reshape(-1, channels).T)


def expected_frames(spec: Spec, path: Path, ffmpeg_frames: int) -> int:
    """The frames stompbox must read from ``spec``'s file: FFmpeg's count (see the module's priming rule).

    One refinement: an M4A/MP4's edit list states where its AAC audio ends (``ffprobe``'s ``duration_ts``);
    FFmpeg 5.1's CLI still decodes the last AAC frame whole (the encoder's padding; later FFmpeg trims it), and
    stompbox ends where the edit list says.
    """
    if spec.ext in ("m4a", "mp4") and not spec.lossless:
        out = run(
            ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts",
             "-of", "default=nw=1:nk=1", str(path)],
            capture=True,
        ).decode().strip()  # fmt: skip
        if out.isdigit():
            return min(ffmpeg_frames, int(out))
    return ffmpeg_frames


def dominant_hz(channel: np.ndarray, rate: float) -> float:
    """The frequency of the strongest FFT bin of one channel (Hann window)."""
    window = np.hanning(channel.size)
    spectrum = np.abs(np.fft.rfft(channel * window))
    return float(np.argmax(spectrum) * rate / channel.size)


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


def peak_growth_mb(action: Callable[[], object]) -> float:
    """How far ``action()`` raises this process's peak RSS above its RSS before it, in MB (Linux: the peak is
    reset through /proc/self/clear_refs first)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # reset VmHWM to the current RSS
    before = _status_kib("VmRSS")
    action()
    return (_status_kib("VmHWM") - before) / 1024.0


def can_measure_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


_WORKER = textwrap.dedent(
    """
    import json, sys, warnings
    from stompbox.io import AudioFile

    def kib(field):
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))

    warnings.simplefilter("ignore")
    for path in sys.argv[1:]:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        before = kib("VmRSS")
        outcome = "read"
        try:
            with AudioFile(path) as f:
                f.read(f.frames)
                while f.read(4096).shape[1]:
                    pass
        except Exception as exc:  # the outcome does not matter here, only the memory
            outcome = type(exc).__name__
        print(json.dumps({"path": path, "growth_mb": (kib("VmHWM") - before) / 1024.0, "outcome": outcome}))
    """
)


def read_peaks_mb(paths: list[str]) -> dict[str, float]:
    """Each file's peak RSS growth in MB while a worker process reads it as a user would: ``read(f.frames)``
    (a header that lies must not make this allocate without bound), then to the end in 4096-frame reads. Before
    each file the worker resets its peak RSS (Linux /proc/self/clear_refs)."""
    found: dict[str, float] = {}
    for start in range(0, len(paths), 100):
        done = subprocess.run(
            [sys.executable, "-c", _WORKER, *paths[start : start + 100]], capture_output=True, text=True, timeout=600
        )
        for line in done.stdout.splitlines():
            record = json.loads(line)
            found[record["path"]] = record["growth_mb"]
        assert done.returncode == 0, done.stderr[-2000:]
    return found
