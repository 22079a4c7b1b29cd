"""Audio as a stream: read and write audio files, resample and convert channels on the fly, and live audio.

Compatible with ``pedalboard.io``. Heavy pieces (PyAV, the live-audio backend) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base.lazy import lazy_names
from .audiofile import (
    AudioFile,
    ReadableAudioFile,
    WriteableAudioFile,
    get_supported_read_formats,
    get_supported_write_formats,
)
from .errors import AudioFileError, ClosedFileError, CorruptAudioError, TruncatedAudioWarning, UnsupportedFormatError
from .formats import WriteableAudioFileFlag
from .reader import AudioReader, provide_wrappers

_LAZY: dict[str, str] = {
    "ResampledReadableAudioFile": ".resample",
    "ChannelConvertedReadableAudioFile": ".channels",
    "StreamResampler": ".stream_resampler",
    "Quality": ".quality",
    # live audio (stompbox.live, above the effects: a stream runs a Pedalboard); this is its public path
    "AudioStream": "..live.stream",
    "AudioDeviceError": "..live.stream",
    "LiveAudioWarning": "..live.stream",
    "play_file": "..live.stream",
    "record_to_file": "..live.stream",
}

__all__ = [
    "AudioFile",
    "AudioReader",
    "AudioFileError",
    "ClosedFileError",
    "CorruptAudioError",
    "ReadableAudioFile",
    "TruncatedAudioWarning",
    "UnsupportedFormatError",
    "WriteableAudioFile",
    "WriteableAudioFileFlag",
    "get_supported_read_formats",
    "get_supported_write_formats",
    *_LAZY,
]


if TYPE_CHECKING:  # the lazily loaded names, for type checkers and IDEs
    from .channels import ChannelConvertedReadableAudioFile as ChannelConvertedReadableAudioFile
    from .quality import Quality as Quality
    from .resample import ResampledReadableAudioFile as ResampledReadableAudioFile
    from .stream_resampler import StreamResampler as StreamResampler
    # (the live-audio names are not imported here: io sits below live, for type checkers too; they read as Any
    # through __getattr__ on this path, and fully typed from stompbox.live)


def _resampled(reader: AudioReader, target_sample_rate: float, quality: Any) -> AudioReader:
    from .quality import Quality
    from .resample import ResampledReadableAudioFile

    return ResampledReadableAudioFile(
        reader, target_sample_rate, Quality.WindowedSinc32 if quality is None else quality
    )


def _converted(reader: AudioReader, num_channels: int) -> AudioReader:
    from .channels import ChannelConvertedReadableAudioFile

    return ChannelConvertedReadableAudioFile(reader, num_channels)


# every reader's resampled_to(), with_channels(), mono() and stereo() build these wrappers (loaded on first use)
provide_wrappers(_resampled, _converted)


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
