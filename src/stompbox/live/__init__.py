"""Live audio: :class:`AudioStream` (devices through miniaudio), :func:`play_file` and :func:`record_to_file`.

The public path is ``stompbox.io.AudioStream`` (as pedalboard's); this package sits above the effects and
containers, since a stream runs a :class:`~stompbox.Pedalboard` on its audio thread. The device layer
(:mod:`stompbox.live.device`) is imported with the stream.
"""

from __future__ import annotations

from .._base.errors import AudioDeviceError
from .stream import AudioStream, LiveAudioWarning, play_file, record_to_file

__all__ = ["AudioDeviceError", "AudioStream", "LiveAudioWarning", "play_file", "record_to_file"]
