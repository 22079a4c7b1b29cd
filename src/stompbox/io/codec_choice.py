"""Which codec reads or writes a file: the one place that knows every decoder and encoder.

:func:`open_decoder` lets the content decide (libsndfile first, with the faster PCM WAV reader in its place where
it applies, FFmpeg for the rest); :func:`open_encoder` goes by the output format. The codecs themselves
(imported when first needed: :mod:`~stompbox.io.backends`, :mod:`~stompbox.io.wav`, :mod:`~stompbox.io.wav_writer`,
:mod:`~stompbox.io.mp3_writer`) know nothing of each other.
"""

from __future__ import annotations

from typing import Any

from .backends import (
    AvDecoder,
    AvEncoder,
    Decoder,
    Encoder,
    SoundfileDecoder,
    SoundfileEncoder,
    _FinalError,
    seekable_target,
)
from .errors import UnsupportedFormatError

__all__ = ["open_decoder", "open_encoder"]


def _faster(decoder: SoundfileDecoder, source: Any) -> Decoder:
    """A faster reader of the same samples in place of ``decoder`` where there is one (see io/wav.py)."""
    if decoder.format_name in ("WAV", "WAVEX", "RF64"):
        from .wav import PcmWavDecoder  # imported when first needed, as every codec here

        return PcmWavDecoder.replace(decoder, source)
    return decoder


def open_decoder(source: Any, name: str, seekable: bool = True) -> Decoder:
    """The decoder for ``source``: content decides (libsndfile first, FFmpeg for the rest)."""
    errors = []
    if seekable:
        try:
            return _faster(SoundfileDecoder(source, name), source)
        except UnsupportedFormatError as exc:
            errors.append(str(exc))
            if hasattr(source, "seek"):
                source.seek(0)
    try:
        return AvDecoder(source, name, seekable)
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
