"""Live audio: :class:`AudioStream` (speakers, microphones, live effects), as ``pedalboard.io.AudioStream``.

A stream opens one input device, one output device or both, and moves audio on the device's own thread in
blocks of ``buffer_size`` frames:

- input and output: every block from the input runs through ``plugins`` and goes to the output (live effects);
  audio passed to :meth:`AudioStream.write` is mixed into the input before the plugins, and the dry input can
  also be recorded with :meth:`AudioStream.read`;
- input only: the input runs through ``plugins`` and is buffered for :meth:`AudioStream.read`;
- output only: audio passed to :meth:`AudioStream.write` runs through ``plugins`` and is played.

The audio thread runs ``plugins.process(block, sample_rate, reset=False)`` once per device callback: numpy and
Numba kernels, no per-sample Python. ``stream.plugins = ...`` and parameter changes take effect on the next
block: the callback reads the ``plugins`` reference once per block, and no lock is shared between the caller
and the audio thread (the ring buffers are single-producer/single-consumer with monotonic counters).

Robustness: a device that stops calling back (unplugged, or its audio server killed) is detected by a
watchdog: :meth:`~AudioStream.read`, :meth:`~AudioStream.write`, :meth:`~AudioStream.run` and
:attr:`~AudioStream.running` raise :class:`AudioDeviceError` (a ``RuntimeError``) or turn False within about
one second, instead of blocking forever. Input frames that the reader did not collect in time are counted in
``dropped_input_frame_count``; output blocks that ran dry while :meth:`write` was feeding are counted in
``output_underrun_frame_count``.

The device layer is miniaudio (see :mod:`stompbox.live.device`).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._base.channels import convert_channels
from .._base.errors import AudioDeviceError
from .._base.layout import detect_layout
from . import device as _ma

__all__ = ["AudioStream", "AudioDeviceError", "record_to_file", "play_file"]

DEFAULT_BUFFER_SIZE = 512
#: periods of ``buffer_size`` frames in the device's playback buffer (miniaudio's own default is 3)
DEFAULT_PERIODS = 3
#: seconds of input kept for :meth:`AudioStream.read` before frames are dropped
INPUT_BUFFER_SECONDS = 2.0
#: a running device that has not called back for this long (and for 8 periods) is considered dead
STALL_SECONDS = 1.0
#: the same, before the device has settled (some servers hold the first blocks for over a second)
STARTUP_STALL_SECONDS = 5.0

BOTH_NONE_ERROR = "At least one of `input_device_name` or `output_device_name` must be provided."
FEEDBACK_ERROR = (
    "The audio input device passed to AudioStream looks like a microphone, and the output device looks like "
    "a speaker. This setup may cause feedback. To create an AudioStream anyways, pass `allow_feedback=True` "
    "to the AudioStream constructor."
)


class _Ring:
    """A single-producer, single-consumer ring of ``(channels, capacity)`` float32 frames.

    The producer only advances ``written`` and the consumer only advances ``consumed`` (each after copying),
    so the two sides need no lock: under the GIL an int attribute assignment is atomic.
    """

    def __init__(self, channels: int, capacity: int) -> None:
        self.data = np.zeros((channels, capacity), np.float32)
        self.capacity = capacity
        self.written = 0
        self.consumed = 0

    def available(self) -> int:
        return self.written - self.consumed

    def space(self) -> int:
        return self.capacity - (self.written - self.consumed)

    def push(self, block: np.ndarray) -> int:
        """Append as much of ``block`` (channels, n) as fits; return how many frames were taken."""
        n = min(block.shape[1], self.space())
        if n <= 0:
            return 0
        start = self.written % self.capacity
        first = min(n, self.capacity - start)
        self.data[:, start : start + first] = block[:, :first]
        if n > first:
            self.data[:, : n - first] = block[:, first:n]
        self.written += n
        result: int = n
        return result

    def pop_into(self, out: np.ndarray) -> int:
        """Move up to ``out.shape[1]`` frames into ``out`` (channels, n); return how many."""
        n = min(out.shape[1], self.available())
        if n <= 0:
            return 0
        start = self.consumed % self.capacity
        first = min(n, self.capacity - start)
        out[:, :first] = self.data[:, start : start + first]
        if n > first:
            out[:, first:n] = self.data[:, : n - first]
        self.consumed += n
        result: int = n
        return result


def _map_channels(block: np.ndarray, channels: int) -> np.ndarray:
    """``block`` (c, n) with ``channels`` rows, by stompbox's one channel rule (:mod:`stompbox._base.channels`):
    mono is copied to every channel, more channels are downmixed as FFmpeg does, missing speakers are silent."""
    if block.shape[0] == channels:
        return block
    return convert_channels(np.asarray(block, np.float32), channels)


def _as_channels_first(audio: np.ndarray, channels: int) -> np.ndarray:
    """Audio given to ``write``: 1-D, (channels, n) or (n, channels) -> float32 (channels, n)."""
    array = np.asarray(audio)
    if array.dtype not in (np.float32, np.float64):
        raise TypeError("AudioStream.write expects float32 or float64 audio.")
    if array.ndim == 1:
        array = array[None, :]
    elif array.ndim == 2:
        # stompbox's layout rule (stompbox._base.layout): the device's channel count wins, else the smaller
        # dimension is the channels; a square array that is not the device's channels is ambiguous (an error)
        if detect_layout(array.shape, ("channels-first", channels)) == "channels-last":
            array = array.T
    else:
        raise ValueError(f"Number of input dimensions must be 1 or 2 (got {array.ndim}).")
    if array.shape[0] not in (1, channels):
        raise ValueError(
            f"Expected audio with 1 or {channels} channel{'s' if channels != 1 else ''} for this output "
            f"device, got shape {tuple(np.shape(audio))}."
        )
    return np.ascontiguousarray(_map_channels(array.astype(np.float32, copy=False), channels))


class _StreamMeta(type):
    """Class-level device properties (``AudioStream.input_device_names`` is computed when read)."""

    @property
    def input_device_names(cls) -> list[str]:
        return [d.name for d in _ma.list_devices()[0]]

    @property
    def output_device_names(cls) -> list[str]:
        return [d.name for d in _ma.list_devices()[1]]

    @property
    def default_input_device_name(cls) -> str | None:
        return _default_name(_ma.list_devices()[0])

    @property
    def default_output_device_name(cls) -> str | None:
        return _default_name(_ma.list_devices()[1])


def _default_name(devices: list[_ma.DeviceInfo]) -> str | None:
    for device in devices:
        if device.is_default:
            return device.name
    return devices[0].name if devices else None


def _find(devices: list[_ma.DeviceInfo], name: str) -> _ma.DeviceInfo:
    for device in devices:
        if device.name == name:
            return device
    for device in devices:  # the backend's own id (a PulseAudio sink or source name, an ALSA PCM name)
        if device.ident and device.ident == name:
            return device
    raise ValueError(f"No such device: {name}")


class AudioStream(metaclass=_StreamMeta):
    """A live audio stream between an input device, an output device, or both, with effects in between.

    Parameters
    ----------
    input_device_name : str, optional
        Full name of the input (capture) device, as in :attr:`input_device_names` (the backend's own id, e.g.
        a PulseAudio source name, is accepted too). None for an output-only stream.
    output_device_name : str, optional
        Full name of the output (playback) device, as in :attr:`output_device_names`. None for an input-only
        stream. At least one of the two names must be given.
    plugins : stompbox.Chain or stompbox.Plugin, optional
        The effects applied live (default: an empty :class:`stompbox.Pedalboard`). Replaceable while running.
    sample_rate : float, optional
        Sample rate in Hz; default: the device's own rate. Other rates are converted by the audio layer.
    buffer_size : int, optional
        Frames per callback block (default 512; 16 to 65536). Smaller means lower latency and more CPU.
    allow_feedback : bool
        Allow an input that looks like a microphone together with an output that looks like a speaker.
    num_input_channels : int
        Channels recorded from the input device (>= 1, default 1).
    num_output_channels : int
        Channels sent to the output device (>= 1, default 2).

    Raises
    ------
    RuntimeError
        If both device names are None, or on a microphone-to-speaker pair without ``allow_feedback``.
    ValueError
        If a device name does not exist ("No such device: X") or a device has no channels.
    """

    def __init__(
        self,
        input_device_name: str | None = None,
        output_device_name: str | None = None,
        plugins: Any = None,
        sample_rate: float | None = None,
        buffer_size: int | None = None,
        allow_feedback: bool = False,
        num_input_channels: int = 1,
        num_output_channels: int = 2,
    ) -> None:
        self._device: _ma.Device | None = None
        self._closed = False
        if input_device_name is None and output_device_name is None:
            raise RuntimeError(BOTH_NONE_ERROR)
        if (
            not allow_feedback
            and input_device_name is not None
            and output_device_name is not None
            and "microphone" in input_device_name.lower()
            and "speaker" in output_device_name.lower()
        ):
            raise RuntimeError(FEEDBACK_ERROR)
        if int(num_input_channels) < 1 or int(num_output_channels) < 1:
            raise ValueError("num_input_channels and num_output_channels must be at least 1.")
        if buffer_size is not None and not (16 <= int(buffer_size) <= 65536):
            raise ValueError(f"buffer_size must be between 16 and 65536 frames (got {buffer_size}).")
        if sample_rate is not None and not (math.isfinite(float(sample_rate)) and 1000 <= sample_rate <= 384000):
            raise ValueError(f"sample_rate must be between 1000 and 384000 Hz (got {sample_rate}).")
        inputs, outputs = _ma.list_devices()
        self._input_info = _find(inputs, input_device_name) if input_device_name is not None else None
        self._output_info = _find(outputs, output_device_name) if output_device_name is not None else None
        for info in (self._input_info, self._output_info):
            if info is not None and info.channels == 0 and info.sample_rate != 0:
                raise ValueError(f"The audio device {info.name!r} has no channels.")
        self._input_name = self._input_info.name if self._input_info else None
        self._output_name = self._output_info.name if self._output_info else None
        self._num_in = int(num_input_channels)
        self._num_out = int(num_output_channels)
        self._buffer_size = int(buffer_size) if buffer_size is not None else DEFAULT_BUFFER_SIZE
        self._requested_rate = 0 if sample_rate is None else int(round(float(sample_rate)))
        self._plugins: Any = None
        #: the board the audio thread last ran, and the perf_counter() time of the callback that first ran it
        self._board_in_use: Any = None
        self._board_first_used: float | None = None
        self.plugins = plugins  # validated by the setter
        self.ignore_dropped_input = False
        self._dropped = 0
        self._dropped_unreported = 0
        self._underrun = 0
        self._callbacks = 0
        self._last_callback = 0.0
        self._started_at = 0.0
        self._error: BaseException | None = None
        self._writing = False
        self._wake = threading.Event()
        self._open_device()

    # ------------------------------------------------------------------ device lifetime
    def _open_device(self) -> None:
        self._device = _ma.Device(
            input_device=self._input_info,
            output_device=self._output_info,
            num_input_channels=self._num_in,
            num_output_channels=self._num_out,
            sample_rate=self._requested_rate,
            buffer_size=self._buffer_size,
            periods=DEFAULT_PERIODS,
            handler=self._callback,
            on_stop=self._on_device_stop,
        )
        self._sample_rate = float(self._device.sample_rate)
        self.backend = self._device.backend
        capacity = max(4 * self._buffer_size, int(self._sample_rate * INPUT_BUFFER_SECONDS))
        self._in_ring = _Ring(self._num_in, capacity) if self._input_info is not None else None
        out_capacity = max(4 * self._buffer_size, int(self._sample_rate * 0.25))
        self._out_ring = _Ring(self._num_out, out_capacity) if self._output_info is not None else None
        self._scratch_channels = self._num_out if self._output_info is not None else self._num_in
        self._prepare_board(self._plugins)

    def _start(self) -> None:
        if self._closed:
            raise AudioDeviceError("This AudioStream has been closed.")
        if self._device is None:
            self._open_device()
        if self.running:
            return
        self._error = None
        self._callbacks = 0
        self._started_at = self._last_callback = time.perf_counter()
        assert self._device is not None
        self._device.start()

    def _stop(self, timeout: float = 2.0) -> None:
        device, self._device = self._device, None
        if device is not None:
            device.close(timeout)
            self._close_timed_out = device.close_timed_out
        ring = getattr(self, "_in_ring", None)
        if ring is not None:  # as in pedalboard, a stopped stream holds no recorded input (the count of
            ring.consumed = ring.written  # dropped frames is kept)
        self._wake.set()

    def close(self) -> None:
        """Stop the stream and release the devices. A closed stream cannot be started again."""
        self._stop()
        self._closed = True

    def __enter__(self) -> AudioStream:
        self._start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self._stop()
        except Exception:
            pass

    def run(self) -> None:
        """Start the stream (if needed) and block until Ctrl-C; then stop it.

        Raises :class:`AudioDeviceError` if the device fails while running.
        """
        self._start()
        try:
            while True:
                self._wake.wait(0.1)
                self._wake.clear()
                self._check_alive()
        except KeyboardInterrupt:
            pass
        finally:
            self._stop()

    # ------------------------------------------------------------------ the audio thread
    def _on_device_stop(self) -> None:
        if self._error is None:
            self._error = AudioDeviceError("The audio device stopped (it was disconnected or its server exited).")
        self._wake.set()

    def _callback(self, out_ptr: Any, in_ptr: Any, frames: int) -> None:
        """One device block: called by the audio thread with interleaved float32 buffers."""
        self._last_callback = time.perf_counter()
        self._callbacks += 1
        ffi = _ma.load()[1]
        output = None
        if out_ptr != ffi.NULL:
            output = np.frombuffer(ffi.buffer(out_ptr, frames * self._num_out * 4), np.float32)
            output = output.reshape(frames, self._num_out)
        try:
            if self._error is not None:
                if output is not None:
                    output.fill(0.0)
                return
            inp = None
            if in_ptr != ffi.NULL:
                inp = np.frombuffer(ffi.buffer(in_ptr, frames * self._num_in * 4), np.float32)
                inp = inp.reshape(frames, self._num_in).T
            board = self._plugins  # one atomic read per block: replacing `plugins` takes effect here
            if board is not self._board_in_use:  # note when a new board first ran (a swap's real latency)
                self._board_in_use = board
                self._board_first_used = self._last_callback
            if inp is not None and output is not None:
                self._record(inp)
                block = np.ascontiguousarray(_map_channels(inp, self._num_out))
                if self._out_ring is not None and self._out_ring.available():
                    extra = np.zeros_like(block)
                    self._out_ring.pop_into(extra)
                    block += extra
                output[...] = self._process(board, block).T
            elif inp is not None:
                self._record(self._process(board, np.ascontiguousarray(inp)))
            elif output is not None:
                block = np.zeros((self._num_out, frames), np.float32)
                got = self._out_ring.pop_into(block) if self._out_ring is not None else 0
                if got < frames and self._writing:
                    self._underrun += frames - got
                output[...] = self._process(board, block).T
        except BaseException as error:  # a failing plugin ends the stream; the caller sees the exception
            self._error = error
            if output is not None:
                output.fill(0.0)
        finally:
            self._wake.set()

    def _process(self, board: Any, block: np.ndarray) -> np.ndarray:
        if board is None or (hasattr(board, "__len__") and len(board) == 0):
            return block
        result = board.process(block, self._sample_rate, buffer_size=block.shape[1], reset=False)
        missing = block.shape[1] - result.shape[1]
        if missing > 0:  # latency not yet filled: silence first, so the device gets a whole block
            padded = np.zeros_like(block)
            padded[:, missing:] = result
            return padded
        result: np.ndarray = result
        return result

    def _record(self, block: np.ndarray) -> None:
        ring = self._in_ring
        if ring is None:
            return
        taken = ring.push(block)
        if taken < block.shape[1]:
            lost = block.shape[1] - taken
            self._dropped += lost
            self._dropped_unreported += lost

    # ------------------------------------------------------------------ health
    def _stall_limit(self) -> float:
        period = self._buffer_size / max(self._sample_rate, 1.0)
        base = STARTUP_STALL_SECONDS if self._callbacks < 8 else STALL_SECONDS
        return max(base, 8 * period)

    def _check_alive(self) -> None:
        """Raise if the stream failed; detect a device that stopped calling back."""
        if self._error is None and self._device is not None:
            silent = time.perf_counter() - self._last_callback
            if silent > self._stall_limit():
                self._error = AudioDeviceError(
                    f"The audio device stopped responding (no audio callback for {silent:.1f} s): it was "
                    "disconnected, or its audio server exited."
                )
        if self._error is not None:
            error = self._error
            self._stop(timeout=0.25)  # a dead server can keep the backend's uninit waiting: do not wait for it
            if isinstance(error, AudioDeviceError):
                raise AudioDeviceError(str(error)) from None
            raise AudioDeviceError(f"The audio stream stopped: {error!r}") from error
        if self._device is None:
            raise AudioDeviceError("This AudioStream is not running.")

    @property
    def running(self) -> bool:
        """True while the stream is started and its device is alive."""
        if self._device is None or not self._device._started:
            return False
        try:
            self._check_alive()
        except AudioDeviceError:
            return False
        return True

    # ------------------------------------------------------------------ reading and writing
    def _ensure_started(self) -> bool:
        """Start the device unless it runs; True when this call started it: a ``read()`` or ``write()`` on a
        stream that is not running runs it for that call only, as pedalboard does."""
        if self._closed:
            raise AudioDeviceError("This AudioStream has been closed.")
        if self._device is None or not self._device._started:
            self._start()
            return True
        return False

    def read(self, num_samples: int = 0) -> np.ndarray:
        """Record from the input device.

        Parameters
        ----------
        num_samples : int
            Frames to return; blocks until that many have been recorded. 0 (the default) returns at once with
            whatever is buffered.

        Returns
        -------
        numpy.ndarray
            float32 ``(num_input_channels, num_samples)``.

        Raises
        ------
        RuntimeError
            If input frames were dropped since the last read (the ``INPUT_BUFFER_SECONDS`` buffer overflowed)
            and ``ignore_dropped_input`` is False, or (:class:`AudioDeviceError`) if the device failed.
        """
        if self._input_info is None:
            raise RuntimeError("This AudioStream has no input device to read from.")
        num = int(num_samples)
        if num < 0:
            raise ValueError("num_samples must be >= 0.")
        temporary = self._ensure_started()
        try:
            return self._read(num)
        finally:
            if temporary:
                self._stop()

    def _read(self, num: int) -> np.ndarray:
        if self._dropped_unreported and not self.ignore_dropped_input:
            lost, self._dropped_unreported = self._dropped_unreported, 0
            raise RuntimeError(
                f"{lost} input frames were dropped because they were not read in time (the input buffer "
                f"holds "
                f"{INPUT_BUFFER_SECONDS:g} s). Call read() more often, or set ignore_dropped_input=True. "
                f"dropped_input_frame_count is {self._dropped}."
            )
        ring = self._in_ring
        assert ring is not None
        if num == 0:
            self._check_alive()
            out = np.empty((self._num_in, ring.available()), np.float32)
            ring.pop_into(out)
            return out
        out = np.empty((self._num_in, num), np.float32)
        done = 0
        while done < num:
            done += ring.pop_into(out[:, done:])
            if done < num:
                self._check_alive()
                self._wake.wait(0.05)
                self._wake.clear()
        return out

    def write(self, audio: np.ndarray, sample_rate: float) -> None:
        """Play ``audio`` on the output device; blocks until all of it has been handed to the device.

        Parameters
        ----------
        audio : numpy.ndarray
            float32/float64, 1-D (mono) or 2-D in either layout, with 1 or ``num_output_channels`` channels.
        sample_rate : float
            Must equal the stream's :attr:`sample_rate` (Hz).

        Raises
        ------
        ValueError
            If the sample rate differs from the stream's, or the channel count does not fit.
        AudioDeviceError
            If the device fails (within about a second; never blocks forever).
        """
        if self._output_info is None:
            raise RuntimeError("This AudioStream has no output device to write to.")
        if not math.isclose(float(sample_rate), self._sample_rate, rel_tol=0, abs_tol=1e-6):
            raise ValueError(
                f"The sample rate provided ({float(sample_rate):g} Hz) does not match the output device's "
                "sample "
                f"rate ({self._sample_rate:g} Hz)."
            )
        block = _as_channels_first(audio, self._num_out)
        temporary = self._ensure_started()
        ring = self._out_ring
        assert ring is not None
        self._writing = True
        try:
            done = 0
            while done < block.shape[1]:
                done += ring.push(block[:, done:])
                if done < block.shape[1]:
                    self._check_alive()
                    self._wake.wait(0.05)
                    self._wake.clear()
            self._writing = False  # all queued: the ring running dry from now on is the end, not a dropout
            while ring.available():
                self._check_alive()
                self._wake.wait(0.05)
                self._wake.clear()
            self._check_alive()
        finally:
            self._writing = False
            if temporary:
                self._stop()

    @staticmethod
    def play(audio: np.ndarray, sample_rate: float, output_device_name: str | None = None) -> None:
        """Play ``audio`` (1-D, or 2-D in either layout) on an output device and return when it has played."""
        name = output_device_name if output_device_name is not None else AudioStream.default_output_device_name
        if name is None:
            raise RuntimeError("No audio output device is available.")
        array = np.asarray(audio)
        if array.ndim == 1:
            channels = 1
        elif array.ndim == 2:
            channels = min(array.shape)
        else:
            raise ValueError(f"Number of input dimensions must be 1 or 2 (got {array.ndim}).")
        with AudioStream(
            output_device_name=name, sample_rate=sample_rate, num_output_channels=max(1, channels)
        ) as stream:
            stream.write(array, stream.sample_rate)
            # let the device's own buffer (a few periods) play out before closing
            time.sleep(DEFAULT_PERIODS * stream.buffer_size / stream.sample_rate + 0.05)

    # ------------------------------------------------------------------ properties
    @property
    def plugins(self) -> Any:
        """The effects applied live (a :class:`stompbox.Chain`); assign a new one at any time."""
        return self._plugins

    @plugins.setter
    def plugins(self, value: Any) -> None:
        from ..board import Pedalboard
        from ..core.plugin import Plugin

        if value is None:
            value = Pedalboard()
        elif isinstance(value, list | tuple):
            value = Pedalboard(list(value))
        elif not isinstance(value, Plugin):
            raise TypeError(f"plugins must be a stompbox Pedalboard/Chain or Plugin, not {type(value).__name__}.")
        value._locked_tree()  # raises on a plugin used twice
        if value is not self._plugins and getattr(self, "_device", None) is not None:
            self._prepare_board(value)
        self._plugins = value  # the audio thread picks it up on its next block

    def _prepare_board(self, board: Any) -> None:
        """Learn the stream format on the caller's thread, so the audio thread does not allocate state."""
        if board is None or (hasattr(board, "__len__") and len(board) == 0):
            return
        channels = self._scratch_channels
        board.process(np.zeros((channels, 0), np.float32), self._sample_rate, reset=False, layout="channels-first")

    @property
    def sample_rate(self) -> float:
        """The stream's sample rate in Hz."""
        return self._sample_rate

    @property
    def buffer_size(self) -> int:
        """Frames per device callback."""
        return self._buffer_size

    @property
    def num_input_channels(self) -> int:
        """How many channels are captured from the input device (0 without one)."""
        return self._num_in if self._input_info is not None else 0

    @property
    def num_output_channels(self) -> int:
        """How many channels are played on the output device (0 without one)."""
        return self._num_out if self._output_info is not None else 0

    @property
    def input_device_name(self) -> str | None:
        """The name of the capture device in use, or None for an output-only stream."""
        return self._input_name

    @property
    def output_device_name(self) -> str | None:
        """The name of the playback device in use, or None for an input-only stream."""
        return self._output_name

    @property
    def buffered_input_sample_count(self) -> int | None:
        """Recorded frames waiting to be read (None without an input device)."""
        return None if self._in_ring is None else self._in_ring.available()

    @property
    def dropped_input_frame_count(self) -> int:
        """Input frames lost because the input buffer was full (since the stream was created)."""
        return self._dropped

    @property
    def output_underrun_frame_count(self) -> int:
        """Frames of silence the output had to insert while :meth:`write` was feeding it (dropouts)."""
        return self._underrun

    @property
    def nominal_latency_seconds(self) -> float:
        """The round-trip latency the buffers imply: one input period, the output's periods and the plugins'
        latency, in seconds (the measured figure on a device adds the audio server's own buffering)."""
        frames = 0
        if self._input_info is not None:
            frames += self._buffer_size
        if self._output_info is not None:
            frames += DEFAULT_PERIODS * self._buffer_size
        board = self._plugins
        frames += int(getattr(board, "latency_samples", 0) or 0)
        return frames / self._sample_rate

    # class-level device lists, readable from instances too (the metaclass serves AudioStream.xxx)
    @property
    def input_device_names(self) -> list[str]:
        """The names of the capture devices found on this system."""
        return type(self).input_device_names  # type: ignore[no-any-return]

    @property
    def output_device_names(self) -> list[str]:
        """The names of the playback devices found on this system."""
        return type(self).output_device_names  # type: ignore[no-any-return]

    @property
    def default_input_device_name(self) -> str | None:
        """The system's default capture device, or None if there is none."""
        return type(self).default_input_device_name  # type: ignore[no-any-return]

    @property
    def default_output_device_name(self) -> str | None:
        """The system's default playback device, or None if there is none."""
        return type(self).default_output_device_name  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        parts = []
        if self._input_name is not None:
            parts.append(f"input_device_name={self._input_name!r}")
        if self._output_name is not None:
            parts.append(f"output_device_name={self._output_name!r}")
        parts.append(f"sample_rate={self._sample_rate:g}")
        parts.append(f"buffer_size={self._buffer_size}")
        parts.append(f"plugins={self._plugins!r}")
        parts.append(f"running={self.running}")
        return f"<stompbox.io.AudioStream {' '.join(parts)} at {id(self):#x}>"


# ------------------------------------------------------------------ file helpers (the CLI's record / play)
@contextlib.contextmanager
def _reader(path: str | os.PathLike[str]) -> Iterator[Any]:
    try:
        from ..io import AudioFile
    except ImportError:
        AudioFile = None  # noqa: N806
    if hasattr(path, "read") and hasattr(path, "samplerate"):  # an open reader (the caller closes it)
        yield path
        return
    if AudioFile is not None:
        with AudioFile(path if hasattr(path, "read") else str(path)) as f:
            yield f
        return
    import soundfile

    class _Reader:  # the small part of ReadableAudioFile used here, until stompbox.io.AudioFile exists
        def __init__(self, handle: Any) -> None:
            self._h = handle
            self.samplerate = handle.samplerate
            self.num_channels = handle.channels
            self.frames = handle.frames

        def read(self, n: int) -> np.ndarray:
            return np.ascontiguousarray(self._h.read(n, dtype="float32", always_2d=True).T)

        def tell(self) -> int:
            result: int = self._h.tell()
            return result

    with soundfile.SoundFile(str(path)) as handle:
        yield _Reader(handle)


@contextlib.contextmanager
def _writer(
    path: str | os.PathLike[str], sample_rate: float, channels: int, bit_depth: int = 16, format: str | None = None
) -> Iterator[Any]:
    try:
        from ..io import AudioFile
    except ImportError:
        AudioFile = None  # noqa: N806
    if AudioFile is not None:
        target = path if hasattr(path, "write") else str(path)
        with AudioFile(target, "w", sample_rate, channels, bit_depth=bit_depth, format=format) as f:
            yield f
        return
    import soundfile

    class _Writer:
        def __init__(self, handle: Any) -> None:
            self._h = handle

        def write(self, audio: np.ndarray) -> None:
            self._h.write(np.ascontiguousarray(audio.T))

    with soundfile.SoundFile(str(path), "w", int(sample_rate), channels) as handle:
        yield _Writer(handle)


def record_to_file(
    path: str | os.PathLike[str],
    seconds: float,
    input_device_name: str | None = None,
    *,
    sample_rate: float | None = None,
    num_channels: int = 1,
    plugins: Any = None,
    buffer_size: int | None = None,
    block_seconds: float = 0.1,
    bit_depth: int = 16,
    format: str | None = None,
) -> int:
    """Record ``seconds`` of audio from an input device into an audio file, in bounded memory.

    Parameters
    ----------
    path : str, path-like or binary file-like
        Output file; the format follows the extension (as ``AudioFile(path, "w", ...)``), or ``format``.
    seconds : float
        Length of the recording in seconds (> 0).
    input_device_name : str, optional
        Input device; default: :attr:`AudioStream.default_input_device_name`.
    sample_rate : float, optional
        Recording rate in Hz; default: the device's rate.
    num_channels : int
        Channels to record (default 1).
    plugins : stompbox.Chain, optional
        Effects applied while recording.
    buffer_size : int, optional
        Device block size in frames.
    block_seconds : float
        How much audio is read and written at a time (memory is bounded by this, not by ``seconds``).
    bit_depth : int
        Bits per sample of the file (as ``AudioFile``'s ``bit_depth``; default 16).
    format : str, optional
        The file's format when ``path`` is a file-like object (``"wav"``, ``"flac"``...), as ``AudioFile``'s.

    Returns
    -------
    int
        The number of frames written.
    """
    if not seconds > 0:
        raise ValueError("seconds must be positive.")
    name = input_device_name if input_device_name is not None else AudioStream.default_input_device_name
    if name is None:
        raise RuntimeError("No audio input device is available.")
    with AudioStream(
        input_device_name=name,
        plugins=plugins,
        sample_rate=sample_rate,
        buffer_size=buffer_size,
        num_input_channels=num_channels,
    ) as stream:
        rate = stream.sample_rate
        total = int(round(seconds * rate))
        step = max(1, int(block_seconds * rate))
        written = 0
        with _writer(path, rate, num_channels, bit_depth, format) as out:
            while written < total:
                block = stream.read(min(step, total - written))
                out.write(block)
                written += block.shape[1]
    return written


def play_file(
    path: str | os.PathLike[str],
    chain: Any = None,
    output_device_name: str | None = None,
    *,
    buffer_size: int | None = None,
    block_seconds: float = 0.1,
) -> int:
    """Play an audio file on an output device through an optional effects chain, in bounded memory.

    Parameters
    ----------
    path : str, path-like, binary file-like or an open reader
        The file to play (a reader is read from where it is, and left open).
    chain : stompbox.Chain, a list of plugins, or a chain file path, optional
        Effects to apply while playing (a ``str``/path is loaded with :func:`stompbox.load_chain`).
    output_device_name : str, optional
        Output device; default: :attr:`AudioStream.default_output_device_name`.
    buffer_size : int, optional
        Device block size in frames.
    block_seconds : float
        How much audio is decoded and queued at a time.

    Returns
    -------
    int
        The number of frames played.
    """
    if isinstance(chain, str | os.PathLike):
        from ..chains import load_chain

        chain = load_chain(chain)
    name = output_device_name if output_device_name is not None else AudioStream.default_output_device_name
    if name is None:
        raise RuntimeError("No audio output device is available.")
    played = 0
    with _reader(path) as f:
        rate = float(f.samplerate)
        with AudioStream(
            output_device_name=name,
            plugins=chain,
            sample_rate=rate,
            buffer_size=buffer_size,
            num_output_channels=int(f.num_channels),
        ) as stream:
            step = max(1, int(block_seconds * rate))
            while True:
                block = f.read(step)
                if block.shape[-1] == 0:
                    break
                stream.write(block, stream.sample_rate)
                played += block.shape[-1]
            # let the plugins' tails and the device's buffer play out
            tail = float(getattr(stream.plugins, "tail_seconds", 0.0) or 0.0)
            if tail > 0:
                stream.write(np.zeros((int(f.num_channels), int(min(tail, 10.0) * rate)), np.float32), rate)
            time.sleep(DEFAULT_PERIODS * stream.buffer_size / stream.sample_rate + 0.05)
    return played
