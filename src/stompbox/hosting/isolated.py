"""Crash-isolated plugins: a hosted plugin running in a child process, with audio moved through shared memory.

A plugin that segfaults, aborts or hangs only takes its child process down: the caller gets a
:class:`PluginCrashedError` (or :class:`PluginTimeoutError` after ``timeout`` seconds, when the child is
killed) and keeps running. The :class:`IsolatedPlugin` in the parent has the hosted plugin's API: parameters
(the child's parameter objects, moved over without re-scanning), ``process`` for audio and MIDI, latency,
``raw_state``, presets; everything the engine does (layout, blocks, latency compensation, reset) runs in the
parent, and each block crosses to the child through one shared-memory buffer (in place) with a small message
on a socket.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from multiprocessing import resource_tracker, shared_memory
from multiprocessing.connection import Connection
from typing import Any, Literal, TypedDict

import numpy as np

from ..core.errors import StompboxError
from .external import AudioProcessorParameter, ExternalPlugin, ParameterDescriptor

#: What the child reports about the plugin it loaded (its identity, parameters and latency).
_PluginInfo = TypedDict(
    "_PluginInfo",
    {
        "class": str,
        "name": str,
        "category": str,
        "manufacturer_name": str,
        "identifier": str,
        "version": str,
        "is_instrument": bool,
        "is_effect": bool,
        "descriptors": list[ParameterDescriptor],
        "parameters": dict[int, Any],
        "latency": int,
    },
)


class PluginCrashedError(StompboxError, RuntimeError):
    """The child process hosting an isolated plugin died (segfault, abort, ...) or was killed after a hang.

    The isolated plugin is unusable afterwards: load it again (or call :meth:`IsolatedPlugin.restart`).
    ``returncode`` is the child's exit status (negative: the signal number).
    """

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode


class PluginTimeoutError(PluginCrashedError, TimeoutError):
    """An isolated plugin did not answer within its timeout (the child process was killed)."""


def _signal_name(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


class IsolatedPlugin(ExternalPlugin):
    """A VST3, LV2 or LADSPA plugin hosted in a child process (use ``load_plugin(..., isolated=True)``).

    Parameters
    ----------
    path_to_plugin_file : str or os.PathLike
        Whatever :func:`~stompbox.hosting.load_plugin` accepts (``.vst3`` bundle, LV2 URI or bundle, LADSPA
        library).
    parameter_values : dict, optional
        Parameter values to set after loading.
    plugin_name : str, optional
        Which plugin of a file that holds several.
    initialization_timeout : float
        Seconds the child may take to start and load the plugin.
    timeout : float or None
        Seconds any later call (one block, one MIDI render, a state read) may take before the child is
        killed and :class:`PluginTimeoutError` raised; None waits forever.

    Notes
    -----
    Errors the plugin host raises normally (``ValueError`` for a bad parameter value, ...) are raised in the
    parent unchanged. A crash raises :class:`PluginCrashedError` from the call that was running and from
    every later call; :meth:`restart` starts a fresh child with the last parameter values.
    """

    def __init__(self, *args: Any, timeout: float | None = 10.0, **kwargs: Any) -> None:
        # the arguments of every hosted plugin (ExternalPlugin's), and the timeout of each call
        self._timeout = timeout
        super().__init__(*args, **kwargs)

    def _load(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._shm: shared_memory.SharedMemory | None = None
        self._dead: PluginCrashedError | None = None
        self._call_lock = threading.RLock()
        self._spawn()

    # ------------------------------------------------------------------ the child
    def _spawn(self) -> None:
        parent_sock, child_sock = socket.socketpair()
        code = f"from stompbox.hosting.isolated import _child_main; _child_main({child_sock.fileno()})"
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", code], pass_fds=(child_sock.fileno(),), stdin=subprocess.DEVNULL
            )
        finally:
            child_sock.close()
        self._conn = Connection(parent_sock.detach())
        self._dead = None
        self._shm = None
        info = self._call("load", self._target, self._plugin_name, timeout=self._initialization_timeout)
        self._info: _PluginInfo = info
        self._latency = int(info["latency"])
        self._exported = info["parameters"]
        self.__dict__.pop("_param_objects", None)
        self.__dict__.pop("_param_names", None)

    def _call(self, op: str, *args: Any, timeout: float | None | Literal["default"] = "default") -> Any:
        if self._dead is not None:
            raise PluginCrashedError(f"{self._dead} (load the plugin again, or call restart())", self._dead.returncode)
        wait = self._timeout if timeout == "default" else timeout
        conn, proc = self._conn, self._proc
        assert conn is not None and proc is not None
        with self._call_lock:
            hung = False
            try:
                conn.send((op, args))
                hung = not conn.poll(wait)
                if not hung:
                    status, value = conn.recv()
            except (EOFError, OSError):
                hung = None  # type: ignore[assignment]
            if hung:
                proc.kill()
                proc.wait()
                self._fail(
                    PluginTimeoutError(
                        f"The isolated plugin {self._label()} did not answer {op!r} within {wait} s; its "
                        "process was killed.",
                        proc.returncode,
                    )
                )
            if hung is None:
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                self._fail(
                    PluginCrashedError(
                        f"The isolated plugin {self._label()} crashed ({_signal_name(proc.returncode)}) during {op!r}.",
                        proc.returncode,
                    )
                )
        if status == "err":
            raise value
        return value

    def _fail(self, error: PluginCrashedError) -> None:
        self._dead = error
        self._disconnect()
        raise error

    def _label(self) -> str:
        info = self.__dict__.get("_info")
        return repr(info["name"]) if info else repr(self._target)

    def _disconnect(self) -> None:
        """Close the socket to the child and free the shared memory."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        shm = self._shm
        if shm is not None:
            self._shm = None
            shm.close()
            try:
                shm.unlink()
            except FileNotFoundError:
                pass

    def restart(self) -> None:
        """Start a fresh child process (after a crash, or to clear everything), keeping the parameter
        values last known to the parent."""
        with self._lock:
            values = self._last_raw_values()
            self.close()
            self._spawn()
            for index, raw in values.items():
                self._call("set_raw", index, raw)
            self._forget_format()

    def _last_raw_values(self) -> dict[int, float]:
        return dict(self.__dict__.get("_raw_values", {}))

    @property
    def is_alive(self) -> bool:
        """True while the child process is running and usable."""
        return self._dead is None and self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """The child process's id."""
        return self._proc.pid if self._proc is not None else None

    # ------------------------------------------------------------------ identity (from the child)
    @property
    def name(self) -> str:
        return self._info["name"]

    @property
    def category(self) -> str:
        return self._info["category"]

    @property
    def manufacturer_name(self) -> str:
        return self._info["manufacturer_name"]

    @property
    def identifier(self) -> str:
        return self._info["identifier"]

    @property
    def version(self) -> str:
        return self._info["version"]

    @property
    def is_instrument(self) -> bool:
        return self._info["is_instrument"]

    @property
    def is_effect(self) -> bool:
        return self._info["is_effect"]

    @property
    def plugin_class(self) -> str:
        """The class hosting the plugin in the child (``"LV2Plugin"``, ``"VST3Plugin"``, ...)."""
        return self._info["class"]

    # ------------------------------------------------------------------ parameters
    def _parameter_descriptors(self) -> Any:
        return iter(self._info["descriptors"])

    def _new_parameter(self, desc: ParameterDescriptor) -> AudioProcessorParameter:
        return AudioProcessorParameter.rebind(self._exported[desc[0]], self)

    def _param_raw(self, index: int) -> float:
        result: float = self._call("get_raw", index)
        return result

    def _param_set_raw(self, index: int, value: float) -> None:
        self._call("set_raw", index, value)
        self.__dict__.setdefault("_raw_values", {})[index] = value

    def _param_text(self, index: int, raw: float) -> str | None:
        result: str | None = self._call("text", index, raw)
        return result

    def _param_raw_for_text(self, index: int, text: str) -> float | None:
        result: float | None = self._call("raw_for_text", index, text)
        return result

    def _port_value(self, index: int) -> float:
        result: float = self._call("port_value", index)
        return result

    # ------------------------------------------------------------------ engine hooks
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._latency = self._call("prepare", sample_rate, num_channels)

    def _reset_state(self) -> None:
        self._latency = self._call("reset")

    def _buffer(self, nbytes: int) -> np.ndarray:
        shm = self._shm
        if shm is None or shm.size < nbytes:
            new = shared_memory.SharedMemory(create=True, size=max(nbytes, 1 << 16))
            try:
                self._call("attach", new.name)
            except BaseException:
                new.close()
                new.unlink()
                raise
            if shm is not None:
                shm.close()
                shm.unlink()
            self._shm = shm = new
        return np.ndarray((shm.size // 4,), np.float32, buffer=shm.buf)

    def _process(self, block: np.ndarray) -> np.ndarray:
        channels, n = block.shape
        flat = self._buffer(block.nbytes)
        view = flat[: channels * n].reshape(channels, n)
        view[...] = block
        self._latency = self._call("process", channels, n)
        if self._shm is None:  # closed meanwhile
            raise PluginCrashedError(f"The isolated plugin {self._label()} was closed.")
        block[...] = view
        return block

    def _process_audio(self, input_array: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        """An audio array is moved to the child whole and processed there by the plugin's own ``process`` (one
        round trip per call, whatever the buffer size); inside a :class:`~stompbox.Pedalboard` each block makes
        one round trip."""
        if input_array.dtype not in (np.float32, np.float64) or not 1 <= input_array.ndim <= 2:
            return super()._process_audio(input_array, *args, **kwargs)
        with self._lock:
            flat = self._buffer(max(4, input_array.size * 4))
            flat[: input_array.size].reshape(input_array.shape)[...] = input_array
            shape, self._latency = self._call("process_array", input_array.shape, args, kwargs)
            size = int(np.prod(shape))
            out = flat[:size].reshape(shape).copy()
            self._forget_format()  # the child's engine ran: a board using this plugin prepares it again
        return out

    def _render_events(
        self, events: list[tuple[int, bytes]], total: int, rate: float, num_channels: int, block: int, reset: bool
    ) -> np.ndarray:
        with self._lock:
            result: np.ndarray = self._call("render", events, total, rate, num_channels, block, reset)
            return result

    @property
    def latency_samples(self) -> int:
        """The hosted plugin's latency after the last call, in samples."""
        return int(self._latency)

    @property
    def tail_seconds(self) -> float:
        return float(self._call("getattr", "tail_seconds"))

    # ------------------------------------------------------------------ state and extras
    @property
    def raw_state(self) -> bytes:
        """The hosted plugin's ``raw_state``; settable."""
        result: bytes = self._call("getattr", "raw_state")
        return result

    @raw_state.setter
    def raw_state(self, value: bytes) -> None:
        self._call("setattr", "raw_state", value)

    @property
    def presets(self) -> Any:
        """The hosted plugin's presets (LV2)."""
        return self._call("getattr", "presets")

    def load_preset(self, preset: str) -> bool:
        """Load a preset (an LV2 preset label/URI, a ``.vstpreset`` path for VST3)."""
        result: bool = self._call("method", "load_preset", (preset,))
        return result

    @property
    def control_outputs(self) -> dict[str, float]:
        """The hosted plugin's control outputs (LV2, LADSPA)."""
        result: dict[str, float] = self._call("getattr", "control_outputs")
        return result

    def remote(self, method: str, *args: Any) -> Any:
        """Call any method of the plugin object in the child process and return its (picklable) result."""
        return self._call("method", method, args)

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        """Stop the child process and free the shared memory. Unlike a plugin in this process, it does not wait
        for a call in progress on another thread (which then raises :class:`PluginCrashedError`)."""
        proc = self.__dict__.get("_proc")
        if proc is None:
            return
        conn = self.__dict__.get("_conn")
        if conn is not None and self._dead is None and proc.poll() is None:
            try:
                conn.send(("close", ()))
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        self._disconnect()
        self._proc = None

    def _identity(self) -> dict[str, Any]:
        return {**super()._identity(), "isolated": True}

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("An IsolatedPlugin cannot be pickled (it owns a process); pickle a plain plugin instead.")

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "dead"
        name = self.__dict__.get("_info", {}).get("name", self._target)
        return f'<stompbox.IsolatedPlugin "{name}" ({state}, pid {self.pid}) at {id(self):#x}>'


# ---------------------------------------------------------------------------------------------------- child side
def _child_main(fd: int) -> None:
    """The child process: load the plugin, then serve requests until the parent closes the socket."""
    conn = Connection(fd)
    server = _Server()
    while True:
        try:
            op, args = conn.recv()
        except (EOFError, OSError):
            break
        if op == "close":
            break
        try:
            result = ("ok", server.handle(op, args))
        except BaseException as e:  # report everything, including KeyboardInterrupt in the plugin
            result = ("err", _picklable(e))
        try:
            conn.send(result)
        except (OSError, BrokenPipeError):
            break
    server.close()


def _picklable(e: BaseException) -> BaseException:
    import pickle

    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")


class _Server:
    def __init__(self) -> None:
        self.plugin: Any = None
        self.shm: shared_memory.SharedMemory | None = None
        self.flat: np.ndarray | None = None

    def handle(self, op: str, args: tuple[Any, ...]) -> Any:
        plugin = self.plugin
        if op == "process":
            channels, n = args
            view = self.flat[: channels * n].reshape(channels, n)  # type: ignore[index]
            out = plugin._step(view)
            if out is not view:
                view[...] = out
            return plugin.latency_samples
        if op == "process_array":
            shape, process_args, process_kwargs = args
            size = int(np.prod(shape))
            view = self.flat[:size].reshape(shape)  # type: ignore[index]
            out = plugin.process(view, *process_args, **process_kwargs)
            self.flat[: out.size].reshape(out.shape)[...] = out  # type: ignore[index]
            return out.shape, plugin.latency_samples
        if op == "load":
            return self.load(*args)
        if op == "get_raw":
            return plugin._param_raw(*args)
        if op == "set_raw":
            return plugin._param_set_raw(*args)
        if op == "text":
            return plugin._param_text(*args)
        if op == "raw_for_text":
            return plugin._param_raw_for_text(*args)
        if op == "port_value":
            return plugin._port_value(*args)
        if op == "prepare":
            rate, channels = args
            plugin._ensure_format(rate, channels)
            return plugin.latency_samples
        if op == "reset":
            if plugin._format is not None:
                plugin._reset_all()
            return plugin.latency_samples
        if op == "attach":
            self.attach(args[0])
            return None
        if op == "render":
            return plugin._render_events(*args)
        if op == "getattr":
            return getattr(plugin, args[0])
        if op == "setattr":
            setattr(plugin, args[0], args[1])
            return None
        if op == "method":
            return getattr(plugin, args[0])(*args[1])
        raise ValueError(f"unknown request {op!r}")

    def load(self, target: str, plugin_name: str | None) -> _PluginInfo:
        from .loading import load_in_process

        plugin = load_in_process(target, plugin_name=plugin_name)
        self.plugin = plugin
        descriptors = list(plugin._parameter_descriptors())
        exported = {}
        for python_name, desc in plugin._python_names().items():
            param = plugin._parameter(python_name)
            if param is not None:
                exported[desc[0]] = param.export()
        return {
            "class": type(plugin).__name__,
            "name": plugin.name,
            "category": getattr(plugin, "category", ""),
            "manufacturer_name": getattr(plugin, "manufacturer_name", ""),
            "identifier": getattr(plugin, "identifier", ""),
            "version": getattr(plugin, "version", ""),
            "is_instrument": plugin.is_instrument,
            "is_effect": plugin.is_effect,
            "descriptors": [d for d in descriptors if d[0] in exported],
            "parameters": exported,
            "latency": plugin.latency_samples,
        }

    def attach(self, name: str) -> None:
        if self.shm is not None:
            self.flat = None
            self.shm.close()
        shm = shared_memory.SharedMemory(name=name)
        try:  # the parent owns (and unlinks) the segment: do not let this process's tracker remove it
            resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
        except Exception:
            pass
        self.shm = shm
        self.flat = np.ndarray((shm.size // 4,), np.float32, buffer=shm.buf)

    def close(self) -> None:
        plugin, self.plugin = self.plugin, None
        if plugin is not None and hasattr(plugin, "close"):
            plugin.close()
        self.flat = None
        if self.shm is not None:
            self.shm.close()
