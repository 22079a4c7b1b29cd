"""Which codec reads or writes a file: the one place that knows every decoder and encoder.

:func:`open_decoder` lets the content decide (libsndfile first, with the faster PCM WAV reader in its place where
it applies, FFmpeg for the rest); :func:`open_encoder` goes by the output format. The codecs themselves
(imported when first needed: :mod:`.backends`, :mod:`.wav`, :mod:`.wav_writer`, :mod:`.mp3_writer`) know
nothing of each other.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import UnsupportedFormatError
from .backends import (
    AvDecoder,
    AvEncoder,
    Decoder,
    Encoder,
    SoundfileDecoder,
    SoundfileEncoder,
    _FinalError,
    _has_lame_tag,
    _peek,
    seekable_target,
    warn_truncated,
)

__all__ = ["open_decoder", "open_encoder"]


def _w64_extensible_float(head: bytes) -> bool:
    """Whether a Sony Wave64 header's ``fmt`` chunk is WAVE_FORMAT_EXTENSIBLE with the IEEE float sub-format."""
    at = head.find(b"fmt \xf3\xac\xd3\x11")
    if at < 0 or len(head) < at + 24 + 26:
        return False
    body = at + 24  # GUID (16 bytes) and size (8)
    tag = int.from_bytes(head[body : body + 2], "little")
    return tag == 0xFFFE and int.from_bytes(head[body + 24 : body + 26], "little") == 3


def _walk_mp3(source: Any) -> tuple[int, bool, bool]:
    """:func:`stompbox.io.codecs.mp3_frames.walk` of a path or a seekable file-like (left where it was)."""
    from .mp3_frames import walk

    if isinstance(source, str):
        with open(source, "rb") as handle:
            return walk(handle.read)
    here = source.tell()
    try:
        source.seek(0)
        return walk(source.read)
    finally:
        source.seek(here)


def _mp3_of_unknown_length(decoder: SoundfileDecoder, source: Any, name: str) -> Decoder:
    """An MP3 whose length libsndfile cannot know is decoded by FFmpeg, to its real end.

    libsndfile ends every read at the length it declared at open, which for an MP3 without a LAME tag (FFmpeg's
    to a pipe or with ``-write_xing 0``, ``lame -t``) is mpg123's estimate from the first frames' bitrate: a VBR
    file was cut at 70% of its audio without a word. Such a file's frames are walked (bounded memory, a few
    microseconds a frame: 0.8 s for an hour of VBR audio on a loaded machine): its length is then exact, the
    samples of all its whole frames, which is what FFmpeg decodes of it. A LAME tag whose delay and padding
    exceed its frames (a negative length) is a tag that lies: FFmpeg decodes the file, its length an estimate
    until the end. A file damaged in the middle stays with libsndfile's reader, which raises CorruptAudioError at
    the damage."""
    try:
        tagged = _has_lame_tag(_peek(source, 1 << 16))
    except (OSError, AttributeError, ValueError):
        return decoder
    lying = tagged and decoder.frames <= 0
    if tagged and not lying:
        return decoder
    try:
        samples, damaged, cut = _walk_mp3(source)
    except (OSError, ValueError, AttributeError):
        return decoder
    if damaged or (samples == 0 and not lying):
        return decoder
    decoder.close()
    if hasattr(source, "seek"):
        source.seek(0)
    replacement = AvDecoder(source, name)
    if lying:
        replacement.frames, replacement.exact = max(0, samples), False
    else:
        replacement.frames, replacement.exact = samples, True
    if cut:
        warn_truncated(replacement, samples, "its last frame is cut short")
    return replacement


def _faster(decoder: SoundfileDecoder, source: Any, name: str = "") -> Decoder:
    """A faster or a more complete reader of the same file in place of ``decoder`` where there is one (see
    io/codecs/wav.py; MP3s of unknown length)."""
    if decoder.format_name == "MP3":
        return _mp3_of_unknown_length(decoder, source, name)
    if decoder.format_name == "W64" and decoder.subtype in ("PCM_32", "PCM_64"):
        try:
            floats = _w64_extensible_float(_peek(source, 4096))
        except (OSError, AttributeError, ValueError):
            floats = False
        if floats:  # libsndfile reads a W64's WAVE_FORMAT_EXTENSIBLE float samples as integers (FFmpeg's W64)
            decoder.close()
            if hasattr(source, "seek"):
                source.seek(0)
            return AvDecoder(source, name)
    if decoder.format_name in ("WAV", "WAVEX", "RF64"):
        from .wav import PcmWavDecoder

        return PcmWavDecoder.replace(decoder, source)
    return decoder


def _cut_ogg(source: Any, head: bytes) -> tuple[int, int, bytes] | None:
    """:func:`stompbox.io.codecs.ogg_pages.cut_short` of a path or a seekable file-like whose first 64 bytes are
    ``head``."""
    from .ogg_pages import MAX_PAGE, cut_short

    if head[:4] != b"OggS":
        return None
    try:
        tail = _peek(source, 2 * MAX_PAGE, from_end=True)
        size = os.path.getsize(source) if isinstance(source, str) else _size(source)
    except (OSError, AttributeError, ValueError):
        return None
    return cut_short(head, tail, size)


def _size(file: Any) -> int:
    here = file.tell()
    try:
        return int(file.seek(0, os.SEEK_END))
    finally:
        file.seek(here)


def _open_cut_ogg(source: Any, name: str, end: int, offset: int, header: bytes) -> Decoder:
    """An Ogg file cut short, read up to its last whole page (marked as the stream's end) with one warning: the
    decoders refuse such a file (libsndfile's Opus), or read nothing of it (libsndfile's Vorbis and FFmpeg, when
    the cut falls in a file's only audio page but one)."""
    from .ogg_pages import EndedView

    owned = isinstance(source, str)
    view = EndedView(open(source, "rb") if owned else source, end, offset, header)  # noqa: SIM115 - closed below
    try:
        decoder = SoundfileDecoder(view, name)
    except BaseException:
        if owned:
            view.close()
        raise
    if owned:
        decoder._owned_source = view
    warn_truncated(decoder, decoder.frames, "in its last Ogg page, which is cut short")
    return decoder


def _warn_if_caf_cut(decoder: Decoder, source: Any) -> None:
    """Warn when a CAF's ``data`` chunk declares more bytes than the file holds (libsndfile refuses such a file;
    FFmpeg reads what is present without a word)."""
    import struct

    try:
        head = _peek(source, 1 << 16)
        size = os.path.getsize(source) if isinstance(source, str) else _size(source)
    except (OSError, AttributeError, ValueError):
        return
    at = 8
    while head[:4] == b"caff" and at + 12 <= len(head):
        kind, length = head[at : at + 4], struct.unpack(">q", head[at + 4 : at + 12])[0]
        if kind == b"data":
            if length > 0 and at + 12 + length > size:
                warn_truncated(
                    decoder, decoder.frames, f"where its data chunk declares {length} bytes and {size - at - 12} remain"
                )
            return
        if length < 0:
            return
        at += 12 + length


def _never_mp3(head: bytes) -> bool:
    """Whether a file starting with ``head`` is surely not decoded by mpg123 (a FLAC, an Ogg, an AIFF, a PCM or
    float WAV): libsndfile opens it without the stderr redirection that MP3s need (:func:`quiet_stderr`)."""
    if head[:4] in (b"fLaC", b"OggS", b"FORM"):
        return True
    # a RIFF WAVE whose first chunk is ``fmt `` with format tag PCM (1) or IEEE float (3), also as the sub-format
    # of WAVE_FORMAT_EXTENSIBLE (0xFFFE), whose GUID starts with the tag
    if head[:4] != b"RIFF" or head[8:16] != b"WAVEfmt ":
        return False
    tag = head[20:22] if head[20:22] != b"\xfe\xff" else head[44:46]
    return tag in (b"\x01\x00", b"\x03\x00")


def open_decoder(source: Any, name: str, seekable: bool = True) -> Decoder:
    """The decoder for ``source``: content decides (libsndfile first, FFmpeg for the rest)."""
    errors = []
    if seekable:
        try:
            head = _peek(source, 64)
        except (OSError, AttributeError, ValueError):
            head = b""
        cut = _cut_ogg(source, head)
        if cut is not None:
            return _open_cut_ogg(source, name, *cut)
        try:
            return _faster(SoundfileDecoder(source, name, quiet=not _never_mp3(head)), source, name)
        except UnsupportedFormatError as exc:
            errors.append(str(exc))
            if hasattr(source, "seek"):
                source.seek(0)
    try:
        decoder = AvDecoder(source, name, seekable)
        if seekable and decoder.format_name == "CAF":
            _warn_if_caf_cut(decoder, source)
        return decoder
    except _FinalError as exc:
        raise UnsupportedFormatError(str(exc)) from None
    except UnsupportedFormatError as exc:
        errors.append(str(exc))
    raise UnsupportedFormatError(
        f'Failed to open audio file: file "{name}" does not seem to contain audio data in a known or supported format.'
    )


def open_encoder(target: Any, settings: Any, samplerate: int, num_channels: int) -> Encoder:
    """The encoder for ``settings.format`` writing to ``target``: PyAV for M4A, LAME for MP3, our own WAV writer
    where it applies, libsndfile for the rest."""
    if settings.format == "aac":  # ADTS: no index, so any stream takes it
        return AvEncoder(target, settings, samplerate, num_channels, container="adts")
    if settings.format == "m4a":
        if not isinstance(target, str) and not seekable_target(target):
            raise UnsupportedFormatError(
                "An M4A/MP4 file cannot be written to a non-seekable stream (a pipe): its index is written last. "
                "Write a seekable file, or another format (FLAC, Ogg, MP3, WAV)."
            )
        return AvEncoder(target, settings, samplerate, num_channels)
    if settings.format == "mp3":
        from .mp3_writer import LameEncoder

        return LameEncoder(target, settings, samplerate, num_channels)
    from .wav_writer import WavEncoder

    if WavEncoder.applies(target, settings):
        return WavEncoder(target, settings.subtype, samplerate, num_channels)
    return SoundfileEncoder(target, settings, samplerate, num_channels)
