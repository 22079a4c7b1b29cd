"""Make the corrupt-input corpus in ``tests/data/corrupt/`` from small valid files of every format we read.

Usage::

    python tests/data/make_corrupt.py            # write the cases (deterministic, seed 10) to a temp folder
    python tests/data/make_corrupt.py --bases    # also re-encode the valid base files (encoders may drift)
    python tests/data/make_corrupt.py --record   # and record each case's observed outcome in the manifest

Only the valid bases (``corrupt/base/``), the fuzzers' findings (``corrupt/found/``) and the manifest are
committed; the damaged files are made from them at test time (the same bytes every time). The base files
are short (0.2 s) tones written by stompbox's own writer (and PyAV for a tagless MP3, soundfile for CAF).
The cases are byte-level damage of those bases (truncations at many offsets, flipped bytes in the header and
in the frames, wrong extensions) and hand-made headers (zero and 1000+ channels, absurd sample rates, huge
declared sizes, an MP3 inside a WAV, an ID3 tag without audio, zero-length files).

``manifest.json`` maps every case to its expected outcome: ``{"frames": N, "channels": C, "samplerate": R}`` when
the file must decode to data, or ``{"raises": "CorruptAudioError"}`` (one of the allowed exception classes).
Outcomes that follow from the file's construction (``derived``) are written by this script; the outcomes of
random damage are recorded from a run (``--record``, in worker subprocesses) and reviewed, then kept fixed so
that any change in behaviour shows up as a test failure.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import struct
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corrupt"
BASES = CORPUS / "base"
FOUND = CORPUS / "found"  # inputs that crashed or hung something once (from fuzzing), kept forever
MANIFEST = CORPUS / "manifest.json"
SEED = 10
RATE = 16000
FRAMES = 3200  # 0.2 s
ALLOWED = ("UnsupportedFormatError", "CorruptAudioError", "FileNotFoundError", "TypeError")

# base name -> (file name, channels, exact frames when read, or None when the codec pads / estimates)
BASE_FILES: dict[str, tuple[str, int, int | None]] = {
    "wav8": ("wav8.wav", 2, FRAMES),
    "wav16": ("wav16.wav", 2, FRAMES),
    "wav24": ("wav24.wav", 2, FRAMES),
    "wav32f": ("wav32f.wav", 2, FRAMES),
    "aiff": ("aiff16.aiff", 2, FRAMES),
    "flac": ("flac16.flac", 2, FRAMES),
    "ogg": ("vorbis.ogg", 2, FRAMES),
    "opus": ("opus.opus", 2, FRAMES),
    "mp3": ("tagged.mp3", 1, FRAMES),
    "mp3_tagless": ("tagless.mp3", 1, None),
    "m4a": ("aac.m4a", 2, FRAMES),
    "caf": ("pcm16.caf", 2, FRAMES),
}


def tone(channels: int) -> np.ndarray:
    t = np.arange(FRAMES) / RATE
    rows = [0.5 * np.sin(2 * np.pi * (440 + 110 * c) * t) for c in range(channels)]
    return np.asarray(rows, np.float32)


def make_bases() -> None:
    """Encode the valid base files (only with --bases: encoder versions may change the bytes)."""
    import av
    import soundfile as sf

    from stompbox.io import AudioFile

    BASES.mkdir(parents=True, exist_ok=True)
    depth = {"wav8": 8, "wav16": 16, "wav24": 24, "wav32f": 32, "aiff": 16, "flac": 16}
    for key, (name, channels, _) in BASE_FILES.items():
        path = BASES / name
        audio = tone(channels)
        if key == "mp3_tagless":  # PyAV's MP3 muxer without the Xing/LAME frame: the length is an estimate
            buffer = io.BytesIO()
            container = av.open(buffer, "w", format="mp3", options={"write_xing": "0"})
            stream = container.add_stream("libmp3lame", rate=RATE)
            stream.layout = "mono"
            frame = av.AudioFrame.from_ndarray(audio, format="fltp", layout="mono")
            frame.sample_rate, frame.pts = RATE, 0
            for packet in [*stream.encode(frame), *stream.encode(None)]:
                container.mux(packet)
            container.close()
            path.write_bytes(buffer.getvalue())
        elif key == "caf":
            sf.write(path, audio.T, RATE, format="CAF", subtype="PCM_16")
        else:
            quality = {"mp3": "64 kbps", "ogg": "64 kbps", "opus": "32 kbps", "m4a": "32 kbps"}.get(key)
            with AudioFile(str(path), "w", RATE, channels, bit_depth=depth.get(key, 16), quality=quality) as out:
                out.write(audio)


# --------------------------------------------------------------------------------------------- hand-made headers
def wav_bytes(
    channels: int,
    rate: int,
    bits: int = 16,
    data: bytes = b"",
    fmt_tag: int = 1,
    data_size: int | None = None,
    riff_size: int | None = None,
    byte_rate: int | None = None,
    block_align: int | None = None,
    extra_fmt: bytes = b"",
) -> bytes:
    """A RIFF/WAVE file with every header field under control (sizes may lie)."""
    align = block_align if block_align is not None else max(1, channels * bits // 8) & 0xFFFF
    rate_bytes = byte_rate if byte_rate is not None else (rate * align) & 0xFFFFFFFF
    fmt = struct.pack("<HHIIHH", fmt_tag, channels & 0xFFFF, rate & 0xFFFFFFFF, rate_bytes, align, bits) + extra_fmt
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", (len(data) if data_size is None else data_size) & 0xFFFFFFFF) + data
    size = len(body) if riff_size is None else riff_size
    return b"RIFF" + struct.pack("<I", size & 0xFFFFFFFF) + body


def _extended80(value: float) -> bytes:
    """An IEEE 754 80-bit extended float (AIFF's sample rate field)."""
    if value == 0:
        return bytes(10)
    import math

    mantissa, exponent = math.frexp(value)
    return struct.pack(">HQ", (exponent + 16382) & 0x7FFF, int(mantissa * (1 << 64)) & 0xFFFFFFFFFFFFFFFF)


def aiff_bytes(channels: int, rate: float, frames_declared: int, data: bytes) -> bytes:
    comm = struct.pack(">hIh", channels, frames_declared & 0xFFFFFFFF, 16) + _extended80(rate)
    ssnd = struct.pack(">II", 0, 0) + data
    body = b"AIFF" + b"COMM" + struct.pack(">I", len(comm)) + comm + b"SSND" + struct.pack(">I", len(ssnd)) + ssnd
    return b"FORM" + struct.pack(">I", len(body)) + body


def pcm16(frames: int, channels: int) -> bytes:
    return (tone(channels)[:, :frames].T * 16384).astype("<i2").tobytes()


def handmade(bases: dict[str, bytes]) -> Iterator[tuple[str, bytes, dict | None]]:
    """(file name, bytes, derived outcome or None)."""
    unsupported = {"raises": "UnsupportedFormatError"}

    def data(frames: int, channels: int) -> dict:
        return {"frames": frames, "channels": channels, "samplerate": RATE}

    yield "zero_length.wav", b"", unsupported
    yield "zero_length.mp3", b"", unsupported
    yield "text.wav", b"This is not audio, just text that claims to be a WAV file.\n" * 4, unsupported
    yield "random_bytes.mp3", random.Random(SEED).randbytes(4096), None
    yield "riff_only.wav", b"RIFF", unsupported
    yield "riff_header_only.wav", wav_bytes(2, RATE)[:12], unsupported
    yield "wav_no_data_chunk.wav", wav_bytes(2, RATE)[:36], None
    yield "wav_empty_data.wav", wav_bytes(2, RATE), data(0, 2)
    yield "wav_valid_100.wav", wav_bytes(2, RATE, data=pcm16(100, 2)), data(100, 2)
    yield "wav_channels_0.wav", wav_bytes(0, RATE, data=pcm16(100, 2)), None
    yield "wav_channels_1024.wav", wav_bytes(1024, RATE, data=bytes(1024 * 2 * 4)), None
    yield "wav_channels_65535.wav", wav_bytes(65535, RATE, data=bytes(4096)), None
    yield "wav_rate_0.wav", wav_bytes(2, 0, data=pcm16(100, 2)), None
    yield "wav_rate_1.wav", wav_bytes(2, 1, data=pcm16(100, 2)), None
    yield "wav_rate_4294967295.wav", wav_bytes(2, 0xFFFFFFFF, data=pcm16(100, 2)), None
    yield "wav_rate_2147483648.wav", wav_bytes(2, 1 << 31, data=pcm16(100, 2)), None
    yield "wav_bits_0.wav", wav_bytes(2, RATE, bits=0, data=pcm16(100, 2), block_align=4), None
    yield "wav_bits_65535.wav", wav_bytes(2, RATE, bits=65535, data=pcm16(100, 2), block_align=4), None
    yield "wav_block_align_0.wav", wav_bytes(2, RATE, data=pcm16(100, 2), block_align=0), None
    yield "wav_data_size_huge.wav", wav_bytes(2, RATE, data=pcm16(100, 2), data_size=0xFFFFFFF0), None
    yield "wav_riff_size_huge.wav", wav_bytes(2, RATE, data=pcm16(100, 2), riff_size=0xFFFFFFFF), None
    yield "wav_riff_size_0.wav", wav_bytes(2, RATE, data=pcm16(100, 2), riff_size=0), None
    yield "wav_data_size_odd.wav", wav_bytes(2, RATE, data=pcm16(100, 2) + b"\x01", data_size=401), None
    yield "wav_fmt_tag_unknown.wav", wav_bytes(2, RATE, data=pcm16(100, 2), fmt_tag=0x1234), None
    yield "wav_fmt_huge_size.wav", wav_bytes(2, RATE, data=pcm16(100, 2), extra_fmt=b"\xff" * 2), None
    yield "aiff_frames_huge.aiff", aiff_bytes(2, RATE, 0xFFFFFFFF, pcm16(100, 2)[::-1]), None
    yield "aiff_channels_0.aiff", aiff_bytes(0, RATE, 100, pcm16(100, 2)), None
    yield "aiff_channels_2000.aiff", aiff_bytes(2000, RATE, 1, bytes(4000)), None
    yield "aiff_rate_0.aiff", aiff_bytes(2, 0, 100, pcm16(100, 2)), None
    yield "aiff_rate_1e30.aiff", aiff_bytes(2, 1e30, 100, pcm16(100, 2)), None
    yield "aiff_rate_negative.aiff", aiff_bytes(2, -44100, 100, pcm16(100, 2)), None
    # an MP3 stream inside a WAV (format tag 0x55, MPEG Layer III), as some old tools wrote them
    mp3 = bases["mp3"]
    yield "mp3_in_wav.wav", wav_bytes(1, RATE, bits=0, data=mp3, fmt_tag=0x55, block_align=1), None
    yield "mp3_in_wav_pcm_tag.wav", wav_bytes(1, RATE, bits=16, data=mp3), None
    # ID3 tags without audio
    id3 = b"ID3\x04\x00\x00" + bytes([0, 0, 0, 20]) + b"TIT2" + struct.pack(">I", 6) + b"\x00\x00\x03title" + bytes(4)
    yield "id3_only.mp3", id3, unsupported
    yield "id3_only_padded.mp3", b"ID3\x04\x00\x00\x00\x00\x08\x00" + bytes(1024), unsupported
    yield "id3_huge_size.mp3", b"ID3\x04\x00\x00\x7f\x7f\x7f\x7f" + bytes(64), unsupported
    # FLAC STREAMINFO with a sample rate of 0 and a huge total
    flac = bytearray(bases["flac"])
    info = 8 + 10  # "fLaC", block header (4), min/max block (4), min/max frame (6) -> rate starts at byte 18
    zero_rate = bytearray(flac)
    zero_rate[info] = 0
    zero_rate[info + 1] = 0
    zero_rate[info + 2] &= 0x0F
    yield "flac_rate_0.flac", bytes(zero_rate), None
    huge_total = bytearray(flac)
    huge_total[info + 3] |= 0x0F
    huge_total[info + 4 : info + 8] = b"\xff\xff\xff\xff"
    yield "flac_total_samples_huge.flac", bytes(huge_total), None
    # wrong extensions: content decides
    for base, ext in (("flac", "wav"), ("mp3", "flac"), ("wav16", "mp3"), ("ogg", "m4a"), ("m4a", "mp3"),
                      ("opus", "ogg"), ("caf", "wav"), ("aiff", "wav")):  # fmt: skip
        _, channels, frames = BASE_FILES[base]
        yield f"{base}_as.{ext}", bases[base], data(frames, channels) if frames is not None else None
    yield "wav16_no_extension", bases["wav16"], data(FRAMES, 2)


def damaged(bases: dict[str, bytes]) -> Iterator[tuple[str, bytes, dict | None]]:
    """Truncations at many offsets and flipped bytes in the header and the frames of every base file."""
    rng = random.Random(SEED)
    for key, (name, _channels, _frames) in BASE_FILES.items():
        blob = bases[key]
        ext = name.rsplit(".", 1)[1]
        size = len(blob)
        cuts = sorted({1, 4, 12, 44, 64, 128, 512, size // 4, size // 2, size - size // 8, size - 1} - {0})
        for cut in (c for c in cuts if c < size):
            yield f"{key}_trunc_{cut}.{ext}", blob[:cut], None
        for i in range(4):  # header: first 64 bytes
            spot = rng.randrange(min(64, size))
            mutated = bytearray(blob)
            mutated[spot] ^= 1 << rng.randrange(8)
            yield f"{key}_hdrflip_{i}_{spot}.{ext}", bytes(mutated), None
        for i in range(3):  # frames: several random bytes past the header
            mutated = bytearray(blob)
            spots = [rng.randrange(64, size) for _ in range(8)]
            for spot in spots:
                mutated[spot] = rng.randrange(256)
            yield f"{key}_dataflip_{i}.{ext}", bytes(mutated), None
        zeroed = bytearray(blob)
        zeroed[: min(16, size)] = bytes(min(16, size))
        yield f"{key}_zero_head.{ext}", bytes(zeroed), None


def load_bases() -> dict[str, bytes]:
    return {key: (BASES / name).read_bytes() for key, (name, _, _) in BASE_FILES.items()}


def cases() -> list[tuple[str, bytes, dict | None]]:
    bases = load_bases()
    return [*handmade(bases), *damaged(bases)]


def write_cases(folder: Path) -> list[tuple[str, dict | None]]:
    """Write every case into ``folder`` (the bases are read from the committed ``base/``); returns
    ``(relative path, derived outcome or None)`` for the cases and the valid bases."""
    folder.mkdir(parents=True, exist_ok=True)
    made: list[tuple[str, dict | None]] = []
    for name, blob, derived in cases():
        (folder / name).write_bytes(blob)
        made.append((name, derived))
    for path in sorted(FOUND.glob("*")):  # inputs found by the fuzzers, kept as they were found
        (folder / path.name).write_bytes(path.read_bytes())
        made.append((path.name, None))
    (folder / "base").mkdir(exist_ok=True)
    for name, channels, frames in BASE_FILES.values():
        (folder / "base" / name).write_bytes((BASES / name).read_bytes())
        made.append((f"base/{name}", {"frames": frames, "channels": channels, "samplerate": RATE} if frames else None))
    return made


def record(folder: Path, names: list[str]) -> dict[str, dict]:
    """Observed outcomes, read by worker subprocesses (a crash or a hang is recorded as such)."""
    sys.path.insert(0, str(HERE.parent / "robustness"))
    from read_worker import run_batch

    found = run_batch([str(folder / name) for name in names])
    outcomes = {}
    for name in names:  # messages name the case, never this machine's folders
        outcome = found[str(folder / name)]
        if "message" in outcome:
            outcome["message"] = outcome["message"].replace(str(folder / name), name).replace(str(folder), "")
        outcomes[name] = outcome
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bases", action="store_true", help="re-encode the valid base files first")
    parser.add_argument("--record", action="store_true", help="record observed outcomes of non-derived cases")
    parser.add_argument("--out", type=Path, help="write the cases here (default: a temporary folder)")
    args = parser.parse_args()
    if args.bases or not BASES.is_dir():
        make_bases()
    folder = args.out or Path(tempfile.mkdtemp(prefix="stompbox-corrupt-"))
    made = write_cases(folder)
    previous = json.loads(MANIFEST.read_text())["cases"] if MANIFEST.exists() else {}
    manifest: dict[str, dict] = {}
    pending = []
    for name, derived in made:
        if derived is not None:
            manifest[name] = {**derived, "source": "derived"}
        elif name in previous and previous[name].get("source") == "recorded" and not args.record:
            manifest[name] = previous[name]
        else:
            pending.append(name)
    if args.record:
        for name, outcome in record(folder, pending).items():
            manifest[name] = {**outcome, "source": "recorded"}
    elif pending:
        print(f"{len(pending)} cases have no recorded outcome yet: run with --record", file=sys.stderr)
    document = {"seed": SEED, "allowed_exceptions": list(ALLOWED), "cases": dict(sorted(manifest.items()))}
    MANIFEST.write_text(json.dumps(document, indent=1) + "\n")
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    committed = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    print(f"{len(manifest)} cases ({total / 1024:.0f} kB) in {folder}; committed corpus {committed / 1024:.0f} kB")


if __name__ == "__main__":
    main()
