"""The audio device layer behind :class:`stompbox.io.AudioStream`: miniaudio through its cffi binding.

miniaudio (the PyPI ``miniaudio`` package) is one self-contained compiled module with every platform's native
backends built in (PulseAudio, ALSA and JACK on Linux; CoreAudio on macOS; WASAPI on Windows; a real-time
paced Null backend), so no system audio library is needed. This module enumerates devices with their full
names and opens one device (playback, capture or duplex) whose data callback is either compiled code given by
address (what :class:`stompbox.io.AudioStream` uses: the audio thread never takes the GIL) or a Python method.

For a Python method, the binding's own C callback trampolines (``_internal_data_callback`` /
``_internal_stop_callback``, which call ``_data_callback`` / ``_stop_callback`` on the object whose cffi handle is
the device's user data) are reused.

Backend choice: miniaudio's default order (the platform's native server first, then the Null backend when
nothing else works). ``STOMPBOX_AUDIO_BACKEND`` (``pulseaudio``, ``alsa``, ``jack``, ``null``, ``wasapi``,
``coreaudio``, ...; a comma-separated list is tried in order) forces one.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["DeviceInfo", "Device", "list_devices", "load", "backend_names"]

_loaded: tuple[Any, Any, Any] | None = None
_load_lock = threading.Lock()


def load() -> tuple[Any, Any, Any]:
    """Import miniaudio; return ``(miniaudio, ffi, lib)``. Raises ImportError with a hint when missing."""
    global _loaded
    if _loaded is None:
        with _load_lock:
            if _loaded is None:
                try:
                    import miniaudio  # registers the C callback trampolines (ffi.def_extern)
                    from _miniaudio import ffi, lib
                except ImportError as error:  # pragma: no cover - depends on the environment
                    raise ImportError(
                        "stompbox.io.AudioStream needs the 'miniaudio' package (pip install miniaudio)."
                    ) from error
                _loaded = (miniaudio, ffi, lib)
    return _loaded


def backend_names() -> list[str] | None:
    """The backends requested through ``STOMPBOX_AUDIO_BACKEND`` (lower case), or None for the default."""
    value = os.environ.get("STOMPBOX_AUDIO_BACKEND", "").strip()
    if not value:
        return None
    return [part.strip().lower() for part in value.split(",") if part.strip()]


def _backend_array(ffi: Any, lib: Any) -> tuple[Any, int]:
    names = backend_names()
    if not names:
        return ffi.NULL, 0
    values = []
    for name in names:
        value = getattr(lib, f"ma_backend_{name}", None)
        if value is None:
            raise ValueError(f"Unknown audio backend in STOMPBOX_AUDIO_BACKEND: {name!r}")
        values.append(value)
    return ffi.new("ma_backend[]", values), len(values)


class Context:
    """A miniaudio context (one connection to the platform's audio system).

    ``realtime=True`` asks for a real-time (``SCHED_FIFO``) audio thread for the devices opened through it, as
    audio applications do (miniaudio falls back to a normal thread where that is not permitted): a thread that
    only runs compiled code and never blocks is safe at that priority, and it keeps time on a loaded machine.
    """

    def __init__(self, realtime: bool = False) -> None:
        _, ffi, lib = load()
        self._lib = lib
        self._ffi = ffi
        backends, count = _backend_array(ffi, lib)
        self._backends = backends  # keep alive
        config = lib.ma_context_config_init()
        if realtime:
            config.threadPriority = lib.ma_thread_priority_realtime
        self._app_name = b"stompbox"
        config.pulse.pApplicationName = ffi.from_buffer(self._app_name)
        config.jack.pClientName = ffi.from_buffer(self._app_name)
        self.ptr = ffi.new("ma_context*")
        result = lib.ma_context_init(backends, count, ffi.addressof(config), self.ptr)
        if result != lib.MA_SUCCESS:
            raise RuntimeError(f"Could not initialise the audio system (miniaudio error {result}).")
        self.backend = ffi.string(lib.ma_get_backend_name(self.ptr[0].backend)).decode()
        self.backend_id = int(self.ptr[0].backend)

    def close(self) -> None:
        if self.ptr is not None:
            self._lib.ma_context_uninit(self.ptr)
            self.ptr = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass


@dataclass
class DeviceInfo:
    """One input or output device as the audio system names it."""

    name: str  # the full, human-readable name (never truncated)
    ident: str  # the backend's own id string when it has one (PulseAudio sink/source, ALSA PCM), else ""
    is_default: bool
    channels: int  # the largest native channel count reported (0 if unknown)
    sample_rate: int  # the first native sample rate reported (0 if unknown)
    raw_id: bytes  # the opaque ma_device_id, for opening the device


def list_devices(context: Context | None = None) -> tuple[list[DeviceInfo], list[DeviceInfo]]:
    """``(inputs, outputs)``: the capture and playback devices, in the audio system's order.

    Names that occur twice in one list get `` (2)``, `` (3)``... appended, so that each name selects
    one device.
    """
    _, ffi, lib = load()
    own = context is None
    ctx = context or Context()
    try:
        playback = ffi.new("ma_device_info**")
        playback_count = ffi.new("ma_uint32*")
        capture = ffi.new("ma_device_info**")
        capture_count = ffi.new("ma_uint32*")
        result = lib.ma_context_get_devices(ctx.ptr, playback, playback_count, capture, capture_count)
        if result != lib.MA_SUCCESS:
            raise RuntimeError(f"Could not list audio devices (miniaudio error {result}).")
        text_ids = ctx.backend.lower() in ("pulseaudio", "alsa")
        outputs = [_info(ffi, lib, ctx, playback[0][i], text_ids) for i in range(playback_count[0])]
        inputs = [_info(ffi, lib, ctx, capture[0][i], text_ids) for i in range(capture_count[0])]
    finally:
        if own:
            ctx.close()
    return _unique(inputs), _unique(outputs)


def _info(ffi: Any, lib: Any, ctx: Context, info: Any, text_ids: bool) -> DeviceInfo:
    raw = bytes(ffi.buffer(ffi.addressof(info.id), ffi.sizeof("ma_device_id")))
    ident = raw.split(b"\0", 1)[0].decode("utf-8", "replace") if text_ids else ""
    channels = sample_rate = 0
    for k in range(min(info.nativeDataFormatCount, 64)):
        fmt = info.nativeDataFormats[k]
        channels = max(channels, int(fmt.channels))
        if not sample_rate:
            sample_rate = int(fmt.sampleRate)
    return DeviceInfo(
        name=ffi.string(info.name).decode("utf-8", "replace"),
        ident=ident,
        is_default=bool(info.isDefault),
        channels=channels,
        sample_rate=sample_rate,
        raw_id=raw,
    )


def _unique(devices: list[DeviceInfo]) -> list[DeviceInfo]:
    seen: dict[str, int] = {}
    for device in devices:
        count = seen.get(device.name, 0) + 1
        seen[device.name] = count
        if count > 1:
            device.name = f"{device.name} ({count})"
    return devices


class Device:
    """One open miniaudio device calling ``handler(output_ptr, input_ptr, frames)`` from its audio thread.

    ``handler`` receives cffi pointers (``NULL`` for a direction the device does not have) to interleaved
    float32 buffers; ``on_stop()`` is called if the backend reports that the device stopped by itself.

    With ``native=(data_callback, stop_callback, user_data, owner)`` the device instead calls compiled C
    functions at those addresses (miniaudio's ``ma_device_data_proc`` / ``ma_stop_proc``) with ``pUserData`` set
    to ``user_data`` (kept alive through ``owner``): the audio thread then never enters Python.
    """

    def __init__(
        self,
        *,
        input_device: DeviceInfo | None,
        output_device: DeviceInfo | None,
        num_input_channels: int,
        num_output_channels: int,
        sample_rate: int,
        buffer_size: int,
        periods: int,
        handler: Any,
        on_stop: Any,
        native: tuple[int, int, int, Any] | None = None,
    ) -> None:
        _, ffi, lib = load()
        self._ffi, self._lib = ffi, lib
        self._handler = handler
        self._on_stop = on_stop
        self._native = native  # (data callback, stop callback, user data) addresses, and the user data's owner
        self._context = Context(realtime=native is not None)
        self.backend = self._context.backend
        if input_device is not None and output_device is not None:
            kind = lib.ma_device_type_duplex
        elif input_device is not None:
            kind = lib.ma_device_type_capture
        else:
            kind = lib.ma_device_type_playback
        config = lib.ma_device_config_init(kind)
        config.sampleRate = int(sample_rate)
        config.periodSizeInFrames = int(buffer_size)
        config.periods = int(periods)
        self._ids: list[Any] = []  # device ids kept alive while the device runs
        if output_device is not None:
            config.playback.format = lib.ma_format_f32
            config.playback.channels = int(num_output_channels)
            config.playback.pDeviceID = self._device_id(output_device)
        if input_device is not None:
            config.capture.format = lib.ma_format_f32
            config.capture.channels = int(num_input_channels)
            config.capture.pDeviceID = self._device_id(input_device)
        if native is not None:  # compiled callbacks: miniaudio calls them directly, no Python, no GIL
            data_callback, stop_callback, user_data, _ = native
            config.pUserData = ffi.cast("void *", user_data)
            config.dataCallback = ffi.cast(ffi.typeof(config.dataCallback), data_callback)
            config.stopCallback = ffi.cast(ffi.typeof(config.stopCallback), stop_callback)
        else:
            self._handle = ffi.new_handle(self)
            config.pUserData = self._handle
            config.dataCallback = lib._internal_data_callback
            config.stopCallback = lib._internal_stop_callback
        self.ptr = ffi.new("ma_device*")
        result = lib.ma_device_init(self._context.ptr, ffi.addressof(config), self.ptr)
        if result != lib.MA_SUCCESS:
            self._context.close()
            self.ptr = None
            hint = ""
            if result == -2:  # MA_INVALID_ARGS: what backends such as JACK say to a channel count of their own
                hint = (
                    f" The device refused the settings (invalid arguments): try the device's own channel count"
                    f" (num_input_channels/num_output_channels, asked {num_input_channels}/{num_output_channels})"
                    " or another sample rate."
                )
            raise RuntimeError(f"Could not open the audio device (miniaudio error {result}).{hint}")
        self.sample_rate = int(self.ptr.sampleRate)
        self._started = False
        self.close_timed_out = False

    def _device_id(self, device: DeviceInfo) -> Any:
        ident = self._ffi.new("ma_device_id*")
        self._ffi.memmove(ident, device.raw_id, len(device.raw_id))
        self._ids.append(ident)
        return ident

    # called by miniaudio's trampolines, on the audio thread
    def _data_callback(self, device: Any, output: Any, input: Any, frames: int) -> None:
        self._handler(output, input, frames)

    def _stop_callback(self, device: Any) -> None:
        if self._started:
            self._on_stop()

    def start(self) -> None:
        result = self._lib.ma_device_start(self.ptr)
        if result != self._lib.MA_SUCCESS:
            raise RuntimeError(f"Could not start the audio device (miniaudio error {result}).")
        self._started = True

    def close(self, timeout: float = 2.0) -> None:
        """Stop and release the device (safe to call twice, and after the device died)."""
        if self.ptr is None:
            return
        self._started = False
        ptr, self.ptr = self.ptr, None
        context = self._context

        def release() -> None:
            self._lib.ma_device_uninit(ptr)  # stops the device if needed and joins its thread
            context.close()

        if sys.is_finalizing():  # no new thread can start at interpreter exit: Thread.start() would wait forever
            release()
            return
        # A backend whose server vanished could block in uninit: never let that hang the caller. If it does
        # not finish in time, the memory stays referenced by the (daemon) thread and is leaked, not freed.
        worker = threading.Thread(target=release, name="stompbox-audio-close", daemon=True)
        worker.start()
        worker.join(timeout)
        self.close_timed_out = worker.is_alive()
