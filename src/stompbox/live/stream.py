"""Live audio: :class:`AudioStream` (speakers, microphones, live effects), as ``pedalboard.io.AudioStream``.

A stream opens one input device, one output device or both, and moves audio on the device's own thread in
blocks of ``buffer_size`` frames:

- input and output: every block from the input runs through ``plugins`` and goes to the output (live effects);
  audio passed to :meth:`AudioStream.write` is mixed into the input before the plugins, and the dry input can
  also be recorded with :meth:`AudioStream.read`;
- input only: the input runs through ``plugins`` and is buffered for :meth:`AudioStream.read`;
- output only: audio passed to :meth:`AudioStream.write` runs through ``plugins`` and is played.

The device's audio thread never takes the GIL for a board that compiles: its data callback is compiled code
(:mod:`stompbox.live._native`, a Numba ``cfunc`` handed to miniaudio) that moves audio through lock-free
single-producer/single-consumer rings (monotonic counters, release/acquire ordering) and runs the board's compiled
plan (:func:`stompbox.core.plan.compile_plan`) through its address. ``stream.plugins = board`` compiles the
board on the caller's thread and swaps it in atomically (two plan slots and an active index): the next period
runs it. Parameter changes reach the audio thread within a period or two: a plugin's ``_update`` writes its
coefficients in place, either at once from the setter's thread or from a small housekeeping thread that polls
every couple of milliseconds. A board with a plugin that cannot run in a compiled plan (a Python-level plugin, an
isolated one) runs through ``board.process`` from the audio thread, which then takes the GIL every period; a
:class:`LiveAudioWarning` names the plugin.

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
import ctypes
import math
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._base.channels import convert_channels
from .._base.errors import AudioDeviceError
from .._base.layout import detect_layout
from . import device as _ma

if TYPE_CHECKING:
    from ..io.audiofile import AudioFile

__all__ = ["AudioStream", "AudioDeviceError", "LiveAudioWarning", "record_to_file", "play_file"]

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


class LiveAudioWarning(UserWarning):
    """A live stream whose board cannot run in a compiled plan: it runs through Python on the audio thread and
    depends on the GIL (a busy main thread, garbage collection or a long computation can cause dropouts)."""


# ------------------------------------------------------------------ the compiled side (imported on first use)
def _native_module() -> Any:
    from . import _native

    return _native


_native_words = _native_module  # the control block's word numbers live beside the code that reads them
_clock: list[int] = []


def _clock_address() -> int:
    if not _clock:
        _clock.append(_native_module().clock_address() if hasattr(time, "clock_gettime_ns") else 0)
    return _clock[0]


def _monotonic_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def _compile_plan(board: Any, max_frames: int) -> Any:
    """The board's compiled plan (:func:`stompbox.core.plan.compile_plan`), or None when it has none."""
    try:
        from ..core.plan import compile_plan
    except ImportError:
        return None
    return compile_plan(board, max_frames)


def _uncompiled(board: Any, max_frames: int) -> list[str]:
    """Names of the plugins of ``board`` that cannot run in a compiled plan now."""
    names = []
    for plugin in board._iter_tree():
        if plugin._children():
            continue
        steps = getattr(plugin, "_plan_steps", None)
        try:
            ok = steps is not None and steps(max_frames) is not None
        except Exception:
            ok = False
        if not ok:
            names.append(type(plugin).__name__)
    return names


def _generations(plugins: list[Any]) -> tuple[int, list[int]]:
    """The plan epoch (which moves whenever any plugin's arrays are replaced) and the plugins' generations."""
    from ..core import plan

    return plan.epoch(), [int(getattr(p, "_plan_generation", 0)) for p in plugins]


_PLAN_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


def _python_plan(stream: AudioStream, board: Any) -> Any:
    """A C function pointer of the plan signature that runs ``board`` through Python (takes the GIL)."""
    ref = weakref.ref(stream)

    def run(block: int, channels: int, frames: int, table: int) -> int:
        owner = ref()
        if owner is None:
            return 0
        return owner._run_python(board, block, channels, frames)

    return _PLAN_FUNCTION(run)


def _callback_address(callback: Any) -> int:
    return int(ctypes.cast(callback, ctypes.c_void_p).value or 0)


_NO_AUDIO = np.zeros((0, 0), np.float32)


class _ApplyNow:
    """A plugin's update listener while a live stream runs it in a compiled plan: a parameter change recomputes
    the coefficients at once, on the thread that made it, so the audio thread uses them from its next period."""

    def __init__(self, stream: AudioStream) -> None:
        self._stream = weakref.ref(stream)

    def __call__(self, plugin: Any) -> None:
        if self._stream() is None or plugin._format is None:
            return
        with plugin._lock:
            plugin._begin_step()


def _watch(plugins: list[Any], listener: Any) -> None:
    for plugin in plugins:
        if listener is None:
            plugin.__dict__.pop("_update_listener", None)
        else:
            plugin._update_listener = listener


def _housekeeping(ref: Any, stop: threading.Event) -> None:
    """The housekeeping thread: a few milliseconds apart, apply parameter changes and non-finite resets."""
    while not stop.wait(0.002):
        stream = ref()
        if stream is None:
            return
        try:
            stream._housekeeping_pass()
        except Exception as error:  # noqa: BLE001 - a failing update ends the stream, as a failing block does
            stream._error = error
            _native_module().atomic_write(stream._ctl, _native_words().W_ERROR, 1)
            return
        finally:
            del stream


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

    #: run every board through Python on the audio thread, as before compiled plans (for comparisons)
    _force_python_path = False

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
        self.ignore_dropped_input = False
        self._dropped_reported = 0
        self._callbacks_at_start = 0
        self._seen_callbacks = 0
        self._seen_at = 0.0
        self._started_at = 0.0
        self._error: BaseException | None = None
        self._writing = False
        self._ctl = _native_module().new_control_block()  # what the audio thread reads and counts in
        self._keep: list[Any] = []  # arrays the control block points to (rings, scratch, matrix)
        #: per plan slot: (generation, board, plan or Python callback, plugins whose coefficients it reads)
        self._slots: list[tuple[int, Any, Any, list[Any]]] = [(0, None, None, []), (0, None, None, [])]
        self._generation = 0
        self._install_lock = threading.RLock()
        self._housekeeper: threading.Thread | None = None
        self._plan_generations: tuple[int, list[int]] = (0, [])
        self._swap_period = 0
        self._plan_frames_seen = 0
        self._housekeeping_stop = threading.Event()
        self.plugins = plugins  # validated by the setter
        self._open_device()

    # ------------------------------------------------------------------ device lifetime
    def _open_device(self) -> None:
        native = _native_module()
        if not native.userdata_offset_matches(_ma.load()[1]):  # pragma: no cover - another miniaudio build
            raise AudioDeviceError("This version of the miniaudio package is not supported by stompbox's live audio.")
        ctl = self._ctl
        self._device = _ma.Device(
            input_device=self._input_info,
            output_device=self._output_info,
            num_input_channels=self._num_in,
            num_output_channels=self._num_out,
            sample_rate=self._requested_rate,
            buffer_size=self._buffer_size,
            periods=DEFAULT_PERIODS,
            handler=None,
            on_stop=None,
            native=(native.data_callback.address, native.stop_callback.address, int(ctl.ctypes.data), ctl),
        )
        self._sample_rate = float(self._device.sample_rate)
        self.backend = self._device.backend
        has_in, has_out = self._input_info is not None, self._output_info is not None
        self._scratch_channels = self._num_out if has_out else self._num_in
        matrix = None
        if has_in and has_out:  # stompbox's channel rule is linear: its matrix is the rule applied to identity
            matrix = _map_channels(np.eye(self._num_in, dtype=np.float32), self._num_out)
        capacity = max(4 * self._buffer_size, int(self._sample_rate * INPUT_BUFFER_SECONDS))
        out_capacity = max(4 * self._buffer_size, int(self._sample_rate * 0.25))
        self._keep = native.attach(
            ctl,
            self._num_in if has_in else 0,
            self._num_out if has_out else 0,
            max(self._buffer_size, 4096),  # frames per plan call (a longer device period is run in pieces)
            capacity,
            out_capacity,
            matrix,
        )
        w = native
        ctl[w.W_CLOCK_FN] = _clock_address()
        ctl[w.W_CLOCK_ID] = getattr(time, "CLOCK_MONOTONIC", 1)
        self._in_capacity = capacity if has_in else 0
        self._install(self._plugins)

    def _start(self) -> None:
        if self._closed:
            raise AudioDeviceError("This AudioStream has been closed.")
        if self._device is None:
            self._open_device()
        if self.running:
            return
        w = _native_words()
        self._error = None
        self._ctl[w.W_ERROR] = 0
        self._ctl[w.W_STOPPED] = 0
        self._callbacks_at_start = self._seen_callbacks = int(self._ctl[w.W_CALLBACKS])
        self._started_at = self._seen_at = time.perf_counter()
        assert self._device is not None
        self._device.start()
        self._start_housekeeping()

    def _stop(self, timeout: float = 2.0) -> None:
        self._stop_housekeeping()
        device, self._device = self._device, None
        if device is not None:
            device.close(timeout)
            self._close_timed_out = device.close_timed_out
        ctl = getattr(self, "_ctl", None)
        capacity = getattr(self, "_in_capacity", 0)
        if ctl is not None and capacity:
            w = _native_words()  # as in pedalboard, a stopped stream holds no recorded input (the count of
            ctl[w.W_IN_CONSUMED] = ctl[w.W_IN_WRITTEN]  # dropped frames is kept)

    def close(self) -> None:
        """Stop the stream and release the devices. A closed stream cannot be started again."""
        self._stop()
        self._closed = True
        for slot in self._slots:
            _watch(slot[3], None)

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
                time.sleep(0.1)
                self._check_alive()
        except KeyboardInterrupt:
            pass
        finally:
            self._stop()

    # ------------------------------------------------------------------ the plan the audio thread runs
    def _install(self, board: Any) -> None:
        """Make ``board`` the one the audio thread runs from its next period on.

        A board whose every plugin runs in a compiled plan is compiled here and the audio thread calls the plan
        without the GIL; any other board runs through Python (``board.process``) from the audio thread, which
        then needs the GIL every period (a :class:`LiveAudioWarning` names the plugins that cause it).
        The new plan goes into the slot the audio thread is not using, then the active index flips: a period
        runs the old board or the new one, never a mix.
        """
        with self._install_lock:
            self._prepare_board(board)
            runner, address, table, plugins = self._runner_for(board)
            ctl, w = self._ctl, _native_words()
            native = _native_module()
            active = int(native.atomic_read(ctl, w.W_ACTIVE))
            self._wait_for_ack(self._slots[active][0])
            target = 1 - active
            self._generation += 1
            base = w.W_SLOTS + w.SLOT_WORDS * target
            ctl[base], ctl[base + 1], ctl[base + 2] = address, table, self._generation
            _watch(self._slots[target][3], None)
            self._slots[target] = (self._generation, board, runner, plugins)
            native.atomic_write(ctl, w.W_ACTIVE, target)  # release: the slot's words are visible first
            self._swap_period = int(native.atomic_read(ctl, w.W_CALLBACKS))  # the audio thread runs it next
            _watch(self._slots[active][3], None)
            _watch(plugins, _ApplyNow(self))
            self._swapped_at = time.perf_counter()

    def _wait_for_ack(self, generation: int) -> None:
        """Before a slot is rewritten, the audio thread must have moved to the active one (it reads its slot at
        the start of a period, so this takes at most one period)."""
        device = self._device
        if device is None or not device._started or generation == 0:
            return
        native, w = _native_module(), _native_words()
        deadline = time.perf_counter() + max(0.5, 4 * self._buffer_size / max(self._sample_rate, 1.0))
        while native.atomic_read(self._ctl, w.W_ACK_GEN) != generation and time.perf_counter() < deadline:
            time.sleep(0.0005)

    def _runner_for(self, board: Any) -> tuple[Any, int, int, list[Any]]:
        """``(keep-alive object, plan address, table address, plugins)`` for ``board`` (address 0: no plan)."""
        if board is None or (hasattr(board, "__len__") and len(board) == 0):
            return None, 0, 0, []
        max_frames = int(self._ctl[_native_words().W_MAX_FRAMES])
        plan = None
        if not self._force_python_path:
            for plugin in board._iter_tree():
                with plugin._lock:
                    plugin._begin_step()
            try:
                plan = _compile_plan(board, max_frames)
            except Exception as error:  # a plan that fails to build is a board that runs through Python
                plan = None
                warnings.warn(
                    f"AudioStream: the board could not be compiled ({error!r}); it runs through Python.",
                    LiveAudioWarning,
                    stacklevel=4,
                )
        if plan is not None:
            plugins = list(getattr(plan, "plugins", []) or [])
            self._plan_generations = _generations(plugins)
            return plan, int(_native_module().plan_address(plan)), int(plan.table.ctypes.data), plugins
        if not self._force_python_path:
            names = ", ".join(_uncompiled(board, max_frames)) or type(board).__name__
            warnings.warn(
                f"AudioStream: {names} cannot run in a compiled plan, so the board runs through Python on the "
                "audio thread and the stream depends on the GIL (busy Python code can cause dropouts).",
                LiveAudioWarning,
                stacklevel=4,
            )
        callback = _python_plan(self, board)
        return callback, _callback_address(callback), 0, []

    def _run_python(self, board: Any, address: int, channels: int, frames: int) -> int:
        """The Python plan: called by the audio thread (through ctypes, which takes the GIL) for a board that
        cannot be compiled; processes the C-contiguous float32 block at ``address`` in place."""
        block = np.ctypeslib.as_array(ctypes.cast(address, ctypes.POINTER(ctypes.c_float)), shape=(channels, frames))
        try:
            if self._error is None:
                block[...] = self._process(board, block.copy())
                return 0
        except BaseException as error:  # a failing plugin ends the stream; the caller sees the exception
            self._error = error
            _native_module().atomic_write(self._ctl, _native_words().W_ERROR, 1)
        block[...] = 0.0
        return 0

    def _process(self, board: Any, block: np.ndarray) -> np.ndarray:
        if board is None or (hasattr(board, "__len__") and len(board) == 0):
            return block
        result: np.ndarray = board.process(block, self._sample_rate, buffer_size=block.shape[1], reset=False)
        missing = block.shape[1] - result.shape[1]
        if missing > 0:  # latency not yet filled: silence first, so the device gets a whole block
            padded = np.zeros_like(block)
            padded[:, missing:] = result
            return padded
        return result

    @property
    def _board_in_use(self) -> Any:
        """The board of the plan slot the audio thread last started a period with."""
        generation = int(self._ctl[_native_words().W_ACK_GEN])
        for slot_generation, board, _, _ in self._slots:
            if slot_generation == generation and generation:
                return board
        return None

    @property
    def _board_first_used(self) -> float | None:
        """When (``time.perf_counter()``) the audio thread first ran the board in use."""
        stamp = int(self._ctl[_native_words().W_ACK_NS])
        if not stamp:
            return None
        return time.perf_counter() - (_monotonic_ns() - stamp) / 1e9

    # ------------------------------------------------------------------ housekeeping (parameters, resets)
    def _start_housekeeping(self) -> None:
        self._housekeeping_stop = threading.Event()
        self._housekeeper = threading.Thread(
            target=_housekeeping, args=(weakref.ref(self), self._housekeeping_stop), name="stompbox-live", daemon=True
        )
        self._housekeeper.start()

    def _stop_housekeeping(self) -> None:
        thread, self._housekeeper = getattr(self, "_housekeeper", None), None
        if thread is None:
            return
        self._housekeeping_stop.set()
        if thread is not threading.current_thread() and not sys.is_finalizing():
            thread.join(1.0)

    def _housekeeping_pass(self) -> None:
        """Bring the compiled plan's coefficients up to date (plugins whose parameters changed), and reset the
        state of plugins whose output was not finite (the plan reports them as a bit mask)."""
        native, w = _native_module(), _native_words()
        active = int(native.atomic_read(self._ctl, w.W_ACTIVE))
        generation, board, plan, plugins = self._slots[active]
        for plugin in plugins:
            if plugin._automation:  # automated now: it has no plan steps any more, the board runs through Python
                self._install(board)
                return
            if plugin._dirty:
                with plugin._lock:
                    plugin._begin_step()
        frames = int(native.atomic_read(self._ctl, w.W_PLAN_FRAMES))
        ran, self._plan_frames_seen = frames - self._plan_frames_seen, frames
        if ran > 0 and plugins and generation == int(self._ctl[w.W_ACK_GEN]):
            for plugin in plugins:  # the plugins' clocks follow the stream (automation set later starts there)
                plugin._end_step(_NO_AUDIO, ran)
        mask = int(native.atomic_exchange(self._ctl, w.W_MASK, 0)) if plugins else 0
        if mask:  # bit k: the k-th checked plugin's output was not finite (the non-finite rule)
            for bit, plugin in enumerate(getattr(plan, "checked", plugins)):
                if mask >> bit & 1:
                    with plugin._lock:
                        plugin._reset_state()
        if plugins and plan is not None:
            epoch, generations = self._plan_generations
            if _generations([])[0] != epoch and _generations(plugins)[1] != generations:
                self._install(board)  # a plugin replaced an array its steps use: build the table again
            elif _generations([])[0] != epoch:
                self._plan_generations = (_generations([])[0], generations)

    # ------------------------------------------------------------------ health
    def _callbacks_now(self) -> int:
        return int(self._ctl[_native_words().W_CALLBACKS])

    @property
    def _callbacks(self) -> int:
        return self._callbacks_now() - self._callbacks_at_start

    def _silent_seconds(self) -> float:
        """How long ago the device's last period started: from the audio thread's own clock stamp (one clock,
        so a Python thread that waited long for the GIL does not mistake its own wait for the device's), else
        from when Python last saw the period count move."""
        stamp = int(self._ctl[_native_words().W_LAST_NS])
        if stamp and self._callbacks > 0:
            return max(0.0, (_monotonic_ns() - stamp) / 1e9)
        now = time.perf_counter()
        count = self._callbacks_now()
        if count != self._seen_callbacks:
            self._seen_callbacks, self._seen_at = count, now
        return now - self._seen_at

    @property
    def _last_callback(self) -> float:
        """``time.perf_counter()`` time of the last device period."""
        return time.perf_counter() - self._silent_seconds()

    def _stall_limit(self) -> float:
        period = self._buffer_size / max(self._sample_rate, 1.0)
        base = STARTUP_STALL_SECONDS if self._callbacks < 8 else STALL_SECONDS
        return max(base, 8 * period)

    def _check_alive(self) -> None:
        """Raise if the stream failed; detect a device that stopped calling back."""
        w = _native_words()
        if self._error is None and self._device is not None:
            if self._ctl[w.W_STOPPED] and self._device._started:
                self._error = AudioDeviceError("The audio device stopped (it was disconnected or its server exited).")
            else:
                silent = self._silent_seconds()
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

    def _poll_seconds(self) -> float:
        """How long read() and write() sleep between looks at the rings (half a period, 1 to 20 ms)."""
        return min(0.02, max(0.001, 0.5 * self._buffer_size / max(self._sample_rate, 1.0)))

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
        dropped = self.dropped_input_frame_count
        if dropped > self._dropped_reported and not self.ignore_dropped_input:
            lost, self._dropped_reported = dropped - self._dropped_reported, dropped
            raise RuntimeError(
                f"{lost} input frames were dropped because they were not read in time (the input buffer "
                f"holds "
                f"{INPUT_BUFFER_SECONDS:g} s). Call read() more often, or set ignore_dropped_input=True. "
                f"dropped_input_frame_count is {dropped}."
            )
        native = _native_module()
        if num == 0:
            self._check_alive()
            available = self.buffered_input_sample_count or 0
            out = np.empty((self._num_in, available), np.float32)
            got = native.ring_pop(self._ctl, out, 0)
            return out[:, :got]
        out = np.empty((self._num_in, num), np.float32)
        done = 0
        while done < num:
            done += native.ring_pop(self._ctl, out, done)
            if done < num:
                self._check_alive()
                time.sleep(self._poll_seconds())
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
        native, w = _native_module(), _native_words()
        ctl = self._ctl
        self._writing = True
        try:
            done = native.ring_push(ctl, block, 0)
            native.atomic_write(ctl, w.W_WRITING, 1)  # after the first push: an empty queue before is no dropout
            while done < block.shape[1]:
                done += native.ring_push(ctl, block, done)
                if done < block.shape[1]:
                    self._check_alive()
                    time.sleep(self._poll_seconds())
            # all queued: the ring running dry from now on is the end, not a dropout
            native.atomic_write(ctl, w.W_WRITING, 0)
            self._writing = False
            while native.atomic_read(ctl, w.W_OUT_WRITTEN) != native.atomic_read(ctl, w.W_OUT_CONSUMED):
                self._check_alive()
                time.sleep(self._poll_seconds())
            self._check_alive()
        finally:
            native.atomic_write(ctl, w.W_WRITING, 0)
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
            self._install(value)  # compiled (or wrapped) and swapped in: the audio thread runs it next period
        self._plugins = value

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
        if self._input_info is None:
            return None
        w = _native_words()
        return int(self._ctl[w.W_IN_WRITTEN] - self._ctl[w.W_IN_CONSUMED])

    @property
    def dropped_input_frame_count(self) -> int:
        """Input frames lost because the input buffer was full (since the stream was created)."""
        return int(self._ctl[_native_words().W_DROPPED])

    @property
    def output_underrun_frame_count(self) -> int:
        """Frames of silence the output had to insert while :meth:`write` was feeding it (dropouts)."""
        return int(self._ctl[_native_words().W_UNDERRUN])

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
    if TYPE_CHECKING:  # to a type checker, the same values on the class and on an instance
        input_device_names: ClassVar[list[str]]
        output_device_names: ClassVar[list[str]]
        default_input_device_name: ClassVar[str | None]
        default_output_device_name: ClassVar[str | None]
    else:

        @property
        def input_device_names(self) -> list[str]:
            """The names of the capture devices found on this system."""
            return type(self).input_device_names

        @property
        def output_device_names(self) -> list[str]:
            """The names of the playback devices found on this system."""
            return type(self).output_device_names

        @property
        def default_input_device_name(self) -> str | None:
            """The system's default capture device, or None if there is none."""
            return type(self).default_input_device_name

        @property
        def default_output_device_name(self) -> str | None:
            """The system's default playback device, or None if there is none."""
            return type(self).default_output_device_name

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
def _audio_file() -> type[AudioFile] | None:
    """stompbox.io.AudioFile, or None where it cannot be imported (then soundfile reads and writes)."""
    try:
        from ..io import AudioFile
    except ImportError:
        return None
    return AudioFile


@contextlib.contextmanager
def _reader(path: str | os.PathLike[str]) -> Iterator[Any]:
    audio_file = _audio_file()
    if hasattr(path, "read") and hasattr(path, "samplerate"):  # an open reader (the caller closes it)
        yield path
        return
    if audio_file is not None:
        with audio_file(path if hasattr(path, "read") else str(path)) as f:
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
    audio_file = _audio_file()
    if audio_file is not None:
        target = path if hasattr(path, "write") else str(path)
        with audio_file(target, "w", sample_rate, channels, bit_depth=bit_depth, format=format) as f:
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
