"""What each written format accepts: extensions, bit depths, sample rates, channel counts and ``quality`` values.

``quality`` is normalised the way pedalboard does it (e.g. ``"V2"``, ``"192 kbps"``, ``"5 (Default)"``) and then
turned into the settings of the encoder behind the format.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from dataclasses import dataclass, replace
from typing import Any

from .._base import limits
from .._base.enums import PedalboardEnum
from .errors import UnsupportedFormatError

# extension -> format key
WRITE_EXTENSIONS: dict[str, str] = {
    ".wav": "wav",
    ".bwf": "wav",
    ".aiff": "aiff",
    ".aif": "aiff",
    ".aifc": "aiff",
    ".flac": "flac",
    ".ogg": "ogg",
    ".oga": "ogg",
    ".opus": "opus",
    ".mp3": "mp3",
    ".m4a": "m4a",
    ".mp4": "m4a",
    ".aac": "aac",  # raw AAC in ADTS frames, as FFmpeg writes a .aac (streamable: pipes take it)
}

READ_EXTENSIONS = sorted(
    set(WRITE_EXTENSIONS)
    | {".caf", ".w64", ".rf64", ".au", ".snd", ".ac3", ".adts", ".m4b", ".mka", ".webm", ".wma", ".mp2", ".mpa"}
)

#: the extensions :func:`stompbox.batch.find_audio_files` picks up: those written, without the rare aliases
#: (.bwf, .aifc), and two containers only read (.caf, .w64)
AUDIO_EXTENSIONS = frozenset((set(WRITE_EXTENSIONS) - {".bwf", ".aifc"}) | {".caf", ".w64"})
#: formats written lossily: no bit depth of their own
LOSSY_FORMATS = frozenset({"mp3", "ogg", "opus", "m4a", "aac"})
_BITS = {"int8": 8, "int16": 16, "int24": 24, "int32": 32, "float32": 32, "float64": 32}

MP3_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
AAC_RATES = (7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000)
VORBIS_KBPS = (64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 500)
MP3_CBR_KBPS = (32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
MP3_VBR_NAMES = {0: "V0 (best)", 4: "V4 (normal)", 9: "V9 (smallest)"}
FLAC_NAMES = {0: "0 (Fastest)", 5: "5 (Default)", 8: "8 (Highest quality)"}


#: the only sample rates some formats can store (the others take any rate)
RATES_OF_FORMAT = {"opus": OPUS_RATES, "mp3": MP3_RATES, "m4a": AAC_RATES, "aac": AAC_RATES}


def default_bit_depth(file_dtype: str, out_path: str | os.PathLike[str]) -> int:
    """The bit depth to write ``out_path`` with when none is given: the input's (``file_dtype``), where the
    output's format allows (16 for lossy formats, at most 24 for FLAC and AIFF)."""
    ext = os.path.splitext(os.fspath(out_path))[1].lower()
    if WRITE_EXTENSIONS.get(ext) in LOSSY_FORMATS:
        return 16
    bits = _BITS.get(str(file_dtype), 16)
    if ext == ".flac":
        return 24 if bits > 16 else 16
    if ext in (".aif", ".aiff") and bits > 24:
        return 24
    return bits


def storable_rate(extension: str, rate: float) -> float:
    """``rate``, or, when the format of ``extension`` cannot store it (Opus, MP3 and AAC take only a few rates),
    the nearest rate it can: the lowest above ``rate`` (nothing is lost), else the highest. An unknown
    extension gives ``rate``."""
    rates = RATES_OF_FORMAT.get(WRITE_EXTENSIONS.get(extension.lower(), ""))
    if rates is None or rate in rates:
        return rate
    above = [r for r in rates if r >= rate]
    return min(above) if above else max(rates)


def format_for_extension(extension: str) -> str:
    key = WRITE_EXTENSIONS.get(extension.lower())
    if key is None:
        valid = ", ".join(sorted(WRITE_EXTENSIONS))
        raise UnsupportedFormatError(
            f"Unable to detect audio format for file extension: {extension or '(none)'}. Writable formats: {valid}."
        )
    return key


def format_from_name(format: str) -> str:
    """``"mp3"``, ``".mp3"`` or ``"MP3"`` -> ``"mp3"`` (an error lists the valid names)."""
    if not isinstance(format, str) or not format.strip():
        raise TypeError(f"format must be a file extension such as 'wav' or '.mp3' (got {format!r})")
    text = format.strip().lower()
    return format_for_extension(text if text.startswith(".") else "." + text)


class WriteableAudioFileFlag(PedalboardEnum):
    """Codec options of :class:`~stompbox.io.WriteableAudioFile` (``codec_options={flag: value}``), as pedalboard's.

    ``Mp3EnableBitReservoir`` (bool, default True): LAME's bit reservoir, which lends bits between MP3 frames.
    stompbox's MP3 encoder (LAME through lameenc, which has no switch for it) always uses it: ``True`` is
    accepted, ``False`` raises.
    """

    Mp3EnableBitReservoir = 0


def check_codec_options(format: str, options: Any) -> None:
    """Validate ``codec_options`` for ``format`` (``ValueError``/``TypeError`` with pedalboard's texts)."""
    if not options:
        return
    if not isinstance(options, dict):
        raise TypeError(f"codec_options must be a dict of WriteableAudioFileFlag to values (got {options!r:.60}).")
    for key, value in options.items():
        name = getattr(key, "name", key)  # pedalboard's own WriteableAudioFileFlag members work too
        if name not in WriteableAudioFileFlag.__members__:
            valid = ", ".join(WriteableAudioFileFlag.__members__)
            raise TypeError(f"Unknown codec option {key!r}; expected a WriteableAudioFileFlag ({valid}).")
        if format != "mp3":
            encoder = format.upper()
            raise UnsupportedFormatError(
                f"The codec option {name} is not supported by the {encoder} file encoder. The {encoder} file "
                "encoder does not support any codec options."
            )
        if not isinstance(value, bool):
            raise UnsupportedFormatError(f"{name} expects a bool value.")
        if not value:
            raise UnsupportedFormatError(
                "stompbox's MP3 encoder (LAME through lameenc) cannot turn the bit reservoir off: "
                "Mp3EnableBitReservoir=False is not supported."
            )


@dataclass(frozen=True)
class EncoderSettings:
    """How to write one file: the format key, its libsndfile subtype (or codec) and the encoder knobs."""

    format: str
    subtype: str | None
    quality: str | None  # normalised, as reported by WriteableAudioFile.quality
    file_dtype: str
    compression_level: float | None = None
    bitrate_mode: str | None = None
    bit_rate: int | None = None  # bits per second, for PyAV encoders
    reported_dtype: str | None = None  # what WriteableAudioFile.file_dtype says, if not file_dtype (as pedalboard)

    @property
    def pcm(self) -> bool:
        """Whether the file stores integer/float PCM samples (WAV, AIFF, FLAC) rather than a lossy codec's."""
        return self.format in ("wav", "aiff", "flac")


def _blank(quality: Any) -> bool:
    return quality is None or (isinstance(quality, str) and not quality.strip())


def _kbps(quality: Any) -> float | None:
    """A bitrate in kbps from 128, 128.0, "128" or "128 kbps"; None if it is not one."""
    if isinstance(quality, bool):
        return None
    if isinstance(quality, numbers.Real):  # NaN, infinities and ints too large for a float are not bitrates
        try:
            value = float(quality)
        except OverflowError:
            return None
        return value if math.isfinite(value) else None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:kbps|kbit/s|k)?\s*", str(quality), re.IGNORECASE)
    value = float(match.group(1)) if match else math.nan
    return value if math.isfinite(value) else None


def _word(quality: Any) -> str:
    return str(quality).strip().lower()


def settings(format: str, bit_depth: int, quality: Any, samplerate: int, num_channels: int) -> EncoderSettings:
    """Validate a write request and return the encoder settings (``ValueError`` says what is valid)."""
    if format in limits.MAX_CHANNELS_OF_FORMAT:
        limits.check_channels(num_channels, format)
    if isinstance(quality, numbers.Integral) and not isinstance(quality, bool) and abs(int(quality)) > 1 << 32:
        # no format has such a setting, and Python will not even print one of over 4300 digits
        raise UnsupportedFormatError(
            f"{format} quality must be a known setting (got an integer of {int(quality).bit_length()} bits)."
        )
    if format in ("wav", "aiff"):
        return _pcm_settings(format, bit_depth, quality, samplerate)
    if format == "flac":
        return _flac_settings(bit_depth, quality, samplerate, num_channels)
    if format == "ogg":  # pedalboard reports the bit depth asked for (32 as int32), though Vorbis stores floats
        reported = {8: "int8", 16: "int16", 24: "int24", 32: "int32"}.get(bit_depth, "float32")
        return replace(_vorbis_settings(quality, samplerate), reported_dtype=reported)
    if format == "opus":
        return _opus_settings(quality, samplerate)
    if format == "mp3":  # pedalboard reports int16 whatever the bit depth
        return replace(_mp3_settings(quality, samplerate, num_channels), reported_dtype="int16")
    if format == "aac":
        return replace(_aac_settings(quality, samplerate, num_channels), format="aac")
    if format == "m4a":
        return _aac_settings(quality, samplerate, num_channels)
    raise UnsupportedFormatError(f"Unknown format {format!r}.")


def _pcm_settings(format: str, bit_depth: int, quality: Any, samplerate: int) -> EncoderSettings:
    name = format.upper()
    if not _blank(quality) and _word(quality) not in ("fastest", "slowest", "best", "worst"):
        raise UnsupportedFormatError(f"{name} files do not accept quality settings.")
    subtypes = {8: ("PCM_S8" if format == "aiff" else "PCM_U8", "int8"), 16: ("PCM_16", "int16"),
                24: ("PCM_24", "int24"), 32: ("FLOAT", "float32"), 64: ("DOUBLE", "float64")}  # fmt: skip
    if bit_depth not in subtypes:
        raise UnsupportedFormatError(
            f"{name} files support bit_depth 8, 16, 24, 32 (32-bit float) or 64 (64-bit float); got {bit_depth}. "
            "For 32-bit integer samples pass bit_depth='int32'."
        )
    subtype, dtype = subtypes[bit_depth]
    return EncoderSettings(format, subtype, None, dtype)


def _flac_settings(bit_depth: int, quality: Any, samplerate: int, num_channels: int) -> EncoderSettings:
    if bit_depth not in (16, 24):
        raise UnsupportedFormatError(f"FLAC files support bit depths of 16, 24 (got {bit_depth}).")
    if samplerate > 655350 or (samplerate >= 65536 and samplerate % 10):
        raise UnsupportedFormatError(
            f"FLAC does not support a sample rate of {samplerate} Hz: use a rate below 65536 Hz or a multiple of 10 "
            "up to 655350 Hz (common rates: 8000, 16000, 22050, 44100, 48000, 88200, 96000, 176400, 192000)."
        )
    if _blank(quality):
        level = 8
    else:
        word = _word(quality)
        aliases = {"default": 5, "high": 8, "best": 8, "slowest": 8, "fastest": 0, "worst": 0}
        level_text = re.match(r"^(\d{1,4})(?!\d)", word)
        if word in aliases:
            level = aliases[word]
        elif isinstance(quality, numbers.Integral) and not isinstance(quality, bool):
            level = int(quality)
        elif isinstance(quality, numbers.Real) and not isinstance(quality, bool) and float(quality).is_integer():
            level = int(float(quality))
        elif level_text:
            level = int(level_text.group(1))
        else:
            level = -1
        if not 0 <= level <= 8:
            raise UnsupportedFormatError(
                f"FLAC quality must be a compression level from 0 (fastest) to 8 (best); got {quality!r}."
            )
    name = FLAC_NAMES.get(level, str(level))
    return EncoderSettings("flac", f"PCM_{bit_depth}", name, f"int{bit_depth}", compression_level=level / 8)


def _vorbis_settings(quality: Any, samplerate: int) -> EncoderSettings:
    if samplerate > 200000:
        raise UnsupportedFormatError(f"Ogg Vorbis supports sample rates up to 200000 Hz (got {samplerate}).")
    word = "" if _blank(quality) else _word(quality)
    if word in ("", "best", "slowest"):
        kbps = 500.0
    elif word in ("worst", "fastest"):
        kbps = 64.0
    else:
        value = _kbps(quality)
        if value is None or value not in VORBIS_KBPS:
            valid = ", ".join(f"{k} kbps" for k in VORBIS_KBPS)
            raise UnsupportedFormatError(f"Ogg Vorbis quality must be one of {valid} (got {quality!r}).")
        kbps = value
    index = VORBIS_KBPS.index(int(kbps))  # Vorbis quality q0..q10 has these nominal bitrates
    return EncoderSettings("ogg", "VORBIS", f"{int(kbps)} kbps", "float32", compression_level=1.0 - index / 10)


def _opus_settings(quality: Any, samplerate: int) -> EncoderSettings:
    if samplerate not in OPUS_RATES:
        raise UnsupportedFormatError(
            f"Opus supports only {', '.join(map(str, OPUS_RATES))} Hz (got {samplerate} Hz). Resample first, e.g. "
            "AudioFile(path).resampled_to(48000), or `stompbox convert IN OUT.opus --samplerate 48000`."
        )
    kbps = 128.0 if _blank(quality) else _kbps(quality)
    if kbps is None or not 6 <= kbps <= 510:
        raise UnsupportedFormatError(f"Opus quality must be a bitrate from 6 to 510 kbps (got {quality!r}).")
    return EncoderSettings(
        "opus", "OPUS", f"{kbps:g} kbps", "float32", compression_level=min(0.999, max(0.0, (510 - kbps) / 504))
    )


def _mp3_limits(samplerate: int) -> tuple[int, int]:
    if samplerate >= 32000:
        return 32, 320
    if samplerate >= 16000:
        return 8, 160
    return 8, 64


def _mp3_settings(quality: Any, samplerate: int, num_channels: int) -> EncoderSettings:
    if samplerate not in MP3_RATES:
        raise UnsupportedFormatError(
            f"MP3 supports sample rates of {', '.join(map(str, MP3_RATES))} Hz (got {samplerate} Hz). Resample first."
        )
    word = "" if _blank(quality) else _word(quality)
    aliases = {"best": 0, "slowest": 0, "normal": 4, "smallest": 9, "worst": 9, "fastest": 9}
    vbr = re.fullmatch(r"v(\d+)(?:\s*\(.*\))?", word)
    if word in aliases or vbr:
        level = aliases[word] if word in aliases else int(vbr.group(1))  # type: ignore[union-attr]
        if not 0 <= level <= 9:
            raise UnsupportedFormatError(_mp3_quality_error(quality))
        return EncoderSettings(
            "mp3", "MPEG_LAYER_III", MP3_VBR_NAMES.get(level, f"V{level}"), "float32",
            compression_level=level / 10, bitrate_mode="VARIABLE",  # libsndfile: LAME's VBR quality = 10 x this
        )  # fmt: skip
    kbps = 320.0 if word == "" else _kbps(quality)
    if kbps is None or int(kbps) not in MP3_CBR_KBPS or kbps != int(kbps):
        raise UnsupportedFormatError(_mp3_quality_error(quality))
    # Each MPEG version has its own bitrates: below 32 kHz (MPEG-2 and 2.5), a higher rate is clamped to the
    # highest one, as pedalboard's LAME does (its quality still names the rate asked for: "320 kbps").
    low, high = _mp3_limits(samplerate)
    cbr_level = (high - min(max(kbps, low), high)) / (high - low)
    return EncoderSettings(
        "mp3", "MPEG_LAYER_III", f"{int(kbps)} kbps", "float32",
        compression_level=min(cbr_level, 0.999), bitrate_mode="CONSTANT",
    )  # fmt: skip


def _mp3_quality_error(quality: Any) -> str:
    vbr = ", ".join(f"V{i}" for i in range(10))
    cbr = ", ".join(f"{k} kbps" for k in MP3_CBR_KBPS)
    return f"MP3 quality must be a VBR level ({vbr}) or a constant bitrate ({cbr}); got {quality!r}."


def _aac_settings(quality: Any, samplerate: int, num_channels: int) -> EncoderSettings:
    kbps = 256.0 if _blank(quality) or _word(quality) in ("best", "slowest") else _kbps(quality)
    if _word(quality) in ("worst", "fastest"):
        kbps = 64.0
    if kbps is None or not 16 <= kbps <= 512:
        raise UnsupportedFormatError(f"AAC (M4A) quality must be a bitrate from 16 to 512 kbps (got {quality!r}).")
    if samplerate not in AAC_RATES:  # FFmpeg's encoder failed only at the first write, with its own error
        rates = ", ".join(str(rate) for rate in AAC_RATES)
        raise UnsupportedFormatError(
            f"AAC (M4A) files can only be written at {rates} Hz (got {samplerate} Hz): resample first, e.g. with "
            "resampled_to()."
        )
    return EncoderSettings("m4a", "aac", f"{kbps:g} kbps", "float32", bit_rate=int(kbps * 1000))
