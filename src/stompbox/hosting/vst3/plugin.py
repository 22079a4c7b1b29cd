"""``VST3Plugin``: a VST3 effect or instrument, hosted through ctypes, behaving like any stompbox plugin."""

from __future__ import annotations

import ctypes
import os
import struct
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..._base.errors import PluginLoadError
from ..external import ExternalPlugin, ExternalPluginReloadType, InstalledPlugins, ParameterDescriptor, choose_plugin
from . import abi, state
from .instance import Vst3Instance
from .module import load_module

#: largest block handed to a plugin in one process() call; longer engine blocks are split
MAX_BLOCK = 8192
#: Output level (linear; -120 dBFS) under which a plugin counts as silent after its reset. Filters leave residues
#: far below it (measured: ZamDelay 1.2e-12, ZamPhono 1.2e-20); ZamTube keeps a tone at 7.8e-4 (-62 dBFS).
_RESET_SILENCE = 1e-6
#: getTailSamples() values at or above this mean "infinite"; reported tails are capped here (seconds)
MAX_TAIL_SECONDS = 60.0

SEARCH_PATHS = ("~/.vst3", "/usr/lib/vst3", "/usr/local/lib/vst3")


def installed_vst3_plugins() -> list[str]:
    """Paths of the ``.vst3`` bundles in the standard Linux folders (``~/.vst3``, ``/usr/lib/vst3``,
    ``/usr/local/lib/vst3``), sorted within each folder."""
    found: list[str] = []
    for folder in SEARCH_PATHS:
        root = Path(os.path.expanduser(folder))
        if root.is_dir():
            found += sorted(str(p) for p in root.rglob("*.vst3") if not any(q.suffix == ".vst3" for q in p.parents))
    return found


class VST3Plugin(ExternalPlugin, chunks_itself=True):
    """A VST3 plugin loaded from a ``.vst3`` bundle (or its shared object), hosted in-process.

    Parameters
    ----------
    path_to_plugin_file : str or os.PathLike
        The ``.vst3`` bundle folder (``/usr/lib/vst3/ZamComp.vst3``) or the ``.so`` inside it.
    parameter_values : dict, optional
        Parameter values to set after loading, by Python name (``{"threshold_db": -20}``).
    plugin_name : str, optional
        Which plugin to load from a bundle that holds several (see :meth:`get_plugin_names_for_file`).
    initialization_timeout : float
        Accepted for compatibility (seconds). Plugins load synchronously here; a plugin that never returns
        from
        its initialisation cannot be interrupted from Python.

    Notes
    -----
    Parameters appear as attributes (``plugin.threshold_db = -20``) and in :attr:`parameters`. The plugin's
    reported latency is compensated by ``process()``. A plugin is processed in blocks of ``buffer_size`` samples
    (at most 8192); the block loop of a long array runs in compiled code with the GIL released. A plugin whose
    own reset does not clear its audio is reloaded with its state on reset (see
    :class:`ExternalPluginReloadType`). Pickling and deep copies store the path, the plugin name and
    ``raw_state`` and reload the plugin. A plugin that crashes takes the interpreter with it (there is no sandbox).
    """

    installed_plugins = InstalledPlugins(installed_vst3_plugins)
    #: how a reset clears this plugin (pedalboard's ``_reload_type``); detected on the first reset
    _reload_type = ExternalPluginReloadType.Unknown

    def _load(self) -> None:
        module = load_module(self._target)
        classes = module.audio_classes
        if not classes:
            raise PluginLoadError(f"Unable to load plugin {self._target}: the file contains no audio plugin classes.")
        info = choose_plugin(self._target, classes, self._plugin_name, lambda c: (c.name,))
        self._class_info = info
        self._instance = Vst3Instance(module, info, self._lock)
        self._latency = 0
        inst = self._instance
        self._is_instrument = info.is_instrument or (bool(inst.event_inputs) and not inst.audio_inputs)

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        """The plugin's name (from its factory)."""
        return self._class_info.name

    @property
    def category(self) -> str:
        """The plugin's VST3 sub-categories, e.g. ``"Fx|Dynamics|Mono"``."""
        return self._class_info.sub_categories

    @property
    def manufacturer_name(self) -> str:
        """The vendor named by the plugin's factory."""
        return self._class_info.vendor or self._instance.module.vendor

    @property
    def version(self) -> str:
        """The plugin's version string, as its factory reports it."""
        return self._class_info.version

    @property
    def identifier(self) -> str:
        """A stable id, pedalboard's for the same plugin: ``VST3-<name>-<path hash>-<class id hash>`` (hex of the
        31-multiplier string hash of the absolute path, and of the same hash over the class id read as four
        big-endian 32-bit words)."""
        path_hash = _hash31(ord(c) for c in os.path.abspath(self._target))
        cid_hash = _hash31(struct.unpack(">4I", self._class_info.cid))
        return f"VST3-{self.name}-{path_hash:x}-{cid_hash:x}"

    @property
    def has_shared_container(self) -> bool:
        """True if the plugin's processor and editor share one component (a single-component plugin)."""
        return len(self._instance.module.audio_classes) > 1

    @property
    def is_instrument(self) -> bool:
        """True for an instrument (sub-category "Instrument", or event input and no audio input)."""
        return self._is_instrument

    @property
    def is_effect(self) -> bool:
        """True if the plugin takes audio in."""
        return bool(self._instance.audio_inputs) and not self._class_info.is_instrument

    @staticmethod
    def get_plugin_names_for_file(path: str | os.PathLike[str]) -> list[str]:
        """The names of the plugins in a VST3 file (ImportError if it cannot be scanned)."""
        return [c.name for c in load_module(os.fspath(path)).audio_classes]

    # ------------------------------------------------------------------ parameters
    def _parameter_descriptors(self) -> Iterator[ParameterDescriptor]:
        for p in self._instance.params:
            yield (p.index, p.title, p.units, p.default, p.step_count, p.is_automatable)

    def _pid(self, index: int) -> int:
        return self._instance.params[index].id

    # normalised values cross the host boundary as float32, as in pedalboard's host (JUCE), so the values read
    # back and the plugin's texts for them are pedalboard's
    def _param_raw(self, index: int) -> float:
        with self._lock:
            return float(np.float32(self._instance.get_normalized(self._pid(index))))

    def _param_set_raw(self, index: int, value: float) -> None:
        with self._lock:
            self._instance.set_normalized(self._pid(index), float(np.float32(value)))

    def _param_text(self, index: int, raw: float) -> str | None:
        with self._lock:
            return self._instance.text_for(self._pid(index), raw)

    def _param_raw_for_text(self, index: int, text: str) -> float | None:
        with self._lock:
            return self._instance.value_for_text(self._pid(index), text)

    # ------------------------------------------------------------------ engine hooks
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._instance.configure(sample_rate, num_channels, MAX_BLOCK)
        self._latency = self._instance.latency()

    def _reset_state(self) -> None:
        inst = self._instance
        if inst.setup is None:
            return
        if self._reload_type is ExternalPluginReloadType.Unknown:
            self._reload_type = self._probe_reset()
        if self._reload_type is ExternalPluginReloadType.PersistsAudioOnReset:
            self._reload()
        else:
            self._plain_reset()

    def _plain_reset(self) -> None:
        """The plugin's own reset: deactivate and reactivate, clocks back to 0."""
        inst = self._instance
        inst.stop()
        inst.component.setActive(1)
        inst.active = True
        inst.processor.setProcessing(1)
        inst.processing = True
        inst.reset_timeline()
        self._latency = inst.latency()

    def _probe_reset(self) -> ExternalPluginReloadType:
        """Find out whether the plugin's own reset clears its audio (see :class:`ExternalPluginReloadType`)."""
        inst = self._instance
        if inst.main_in is None or inst.main_out is None or self._is_instrument:
            return ExternalPluginReloadType.ClearsAudioOnReset
        assert inst.setup is not None  # (probed after the first setup)
        channels, block = inst.setup[1], min(8192, inst.setup[2])
        noise = np.random.default_rng(0).uniform(-0.5, 0.5, (channels, block)).astype(np.float32)
        self._plain_reset()
        for _ in range(4):
            inst.main_in[:channels, :block] = noise
            inst.process(block)
        self._plain_reset()
        heard = 0.0
        for _ in range(8):  # ~1.5 s: partitioned convolutions (ZamHeadX2) give back their state late
            inst.main_in[:channels, :block] = 0.0
            inst.process(block)
            heard = max(heard, float(np.max(np.abs(inst.main_out[:channels, :block]))))
        if heard > _RESET_SILENCE:
            return ExternalPluginReloadType.PersistsAudioOnReset
        self._plain_reset()
        return ExternalPluginReloadType.ClearsAudioOnReset

    def _reload(self) -> None:
        """Replace the instance by a fresh one holding the same state, set up for the same stream."""
        old = self._instance
        component, controller = old.get_component_state(), old.get_controller_state()
        setup = old.setup
        fresh = Vst3Instance(old.module, self._class_info, self._lock)
        try:
            fresh.set_state(component, controller)
            if setup is not None:
                fresh.configure(*setup)
        except BaseException:
            fresh.close()
            raise
        self._instance = fresh
        old.close()
        self._latency = fresh.latency() if setup is not None else 0

    def _process(self, block: np.ndarray) -> np.ndarray:
        inst = self._instance
        channels, n = block.shape
        chunk = min(self._chunk or MAX_BLOCK, MAX_BLOCK)
        if n > chunk and block.flags.c_contiguous and inst.main_in is not None and inst.main_out is not None:
            # a whole run of blocks in one compiled call (process() hands us large blocks: _chunks_itself)
            inst.process_many(block, block, chunk)
        else:
            main_in, main_out = inst.main_in, inst.main_out
            for start in range(0, n, chunk):
                m = min(chunk, n - start)
                if main_in is not None:
                    main_in[:channels, :m] = block[:, start : start + m]
                inst.process(m)
                assert main_out is not None  # (an effect has a main output bus)
                block[:, start : start + m] = main_out[:channels, :m]
        self._after_blocks()
        return block

    def _after_blocks(self) -> None:
        """Take note of what the plugin asked for while processing (a new latency)."""
        inst = self._instance
        if inst.handler.restart_flags:
            if inst.handler.restart_flags & abi.K_LATENCY_CHANGED:
                self._latency = inst.latency()
            inst.handler.restart_flags = 0

    def _run(self, audio: np.ndarray, block_size: int, flush: bool) -> np.ndarray:
        """The engine's block loop, with a zero-copy path for the common case: a float32 array whose samples
        are contiguous, no latency to withhold, no automation. The plugin then reads the caller's array and
        writes a new one directly, in blocks of ``buffer_size`` run by one compiled call."""
        inst = self._instance
        chunk = min(block_size, MAX_BLOCK)
        if (
            audio.dtype == np.float32
            and audio.strides[1] == 4
            and audio.shape[1] > chunk
            and self._latency_free()
            and not self._automation
            and inst.main_in is not None
            and inst.main_out is not None
        ):
            self._begin_step()
            out = np.empty(audio.shape, np.float32)
            inst.process_many(audio, out, chunk)
            self._after_blocks()
            self._end_step(out, audio.shape[1])
            return out
        return super()._run(audio, block_size, flush)

    @property
    def latency_samples(self) -> int:
        """The latency the plugin reports (``getLatencySamples``) for the current stream format."""
        return int(self._latency)

    @property
    def reported_latency_samples(self) -> int:
        """The latency the plugin reports, in samples at the current sample rate (compensated by ``process``)."""
        return self.latency_samples

    @property
    def tail_seconds(self) -> float:
        """The plugin's reported tail (``getTailSamples``) in seconds, capped at 60 s."""
        inst = self._instance
        if inst.setup is None:
            return 0.0
        samples = inst.tail()
        if samples >= 0xFFFFFFFF:
            return MAX_TAIL_SECONDS
        return min(MAX_TAIL_SECONDS, samples / inst.setup[0])

    # ------------------------------------------------------------------ instruments
    def _render_block(self, events: list[tuple[int, bytes]], n: int) -> np.ndarray:
        inst = self._instance
        for offset, data in events:
            controller = midi_controller(data)
            if controller is None:
                add_midi_event(inst.events, offset, data)
            else:
                inst.add_midi_controller(offset, *controller)
        if inst.main_in is not None:
            inst.main_in[:, :n] = 0.0
        inst.process(n)
        channels = self._format[1] if self._format else 2
        assert inst.main_out is not None  # (an instrument has a main output bus)
        return inst.main_out[:channels, :n]

    # ------------------------------------------------------------------ state
    @property
    def raw_state(self) -> bytes:
        """The plugin's state as bytes (component and controller state, in pedalboard's container)."""
        with self._lock:
            return state.pack_raw_state(self._instance.get_component_state(), self._instance.get_controller_state())

    @raw_state.setter
    def raw_state(self, value: bytes) -> None:
        component, controller = state.unpack_raw_state(value)
        self._set_states(component, controller)

    def _set_states(self, component: bytes | None, controller: bytes | None) -> None:
        with self._lock:
            self._instance.set_state(component, controller)
            if self._instance.setup is not None:
                self._latency = self._instance.latency()

    @property
    def preset_data(self) -> bytes:
        """The plugin's state in ``.vstpreset`` format (bytes starting with ``b"VST3"``); settable."""
        with self._lock:
            inst = self._instance
            return state.pack_preset(self._class_info.cid, inst.get_component_state(), inst.get_controller_state())

    @preset_data.setter
    def preset_data(self, value: bytes) -> None:
        class_id, component, controller = state.unpack_preset(value)
        if class_id != self._class_info.cid:
            raise ValueError(
                f"The preset is for a different plugin (class id {class_id.hex().upper()}, this plugin is "
                f"{self._class_info.cid.hex().upper()})."
            )
        self._set_states(component, controller)

    def load_preset(self, preset_file_path: str | os.PathLike[str]) -> bool:
        """Load a ``.vstpreset`` file; returns True (raises ``ValueError`` for a file of another format or
        plugin)."""
        with open(preset_file_path, "rb") as f:
            self.preset_data = f.read()
        return True

    def show_editor(self, close_event: threading.Event | None = None) -> None:
        """Open the plugin's editor in a window and block until the window is closed.

        Parameters
        ----------
        close_event : threading.Event, optional
            Set it (from another thread) to close the window and return.

        Raises
        ------
        RuntimeError
            With no X11 display (``DISPLAY`` unset: on a headless machine, start Xvfb), for a plugin without
            an editor, or an editor that cannot open in an X11 window.

        Notes
        -----
        Linux/X11 only. The editor is embedded in a new top-level window of its own size; its X events,
        file descriptors and timers run on the calling thread (which may be any thread) until the call
        returns. Audio can be processed from other threads meanwhile; parameters changed in the editor
        reach the audio on the next ``process()`` call.
        """
        from . import editor

        display = editor.check_display()
        with self._lock:
            view = editor.create_view(self._instance.controller, self.name)
        editor.run_editor(view, display, self.name, close_event)

    # ------------------------------------------------------------------ teardown
    def _release(self) -> None:
        inst = self.__dict__.get("_instance")
        if inst is not None:
            inst.close()

    def __repr__(self) -> str:
        return f'<stompbox.VST3Plugin "{self.name}" at {id(self):#x}>'


def midi_controller(data: bytes) -> tuple[int, int, float] | None:
    """``(channel, VST3 controller number, normalised value)`` for a control change (CC 0-127, value / 127),
    channel pressure (``kAfterTouch``), pitch bend (``kPitchBend``, 14 bits / 16383) or program change
    (``kCtrlProgramChange``, program / 127); None for other messages. A VST3 plugin receives these as changes
    of the parameters its ``IMidiMapping`` assigns to them."""
    if not data:
        return None
    kind, channel = data[0] & 0xF0, data[0] & 0x0F
    if kind == 0xB0 and len(data) >= 3 and data[1] < 128:
        return channel, data[1], data[2] / 127.0
    if kind == 0xD0 and len(data) >= 2:
        return channel, abi.K_CTRL_AFTER_TOUCH, data[1] / 127.0
    if kind == 0xE0 and len(data) >= 3:
        return channel, abi.K_CTRL_PITCH_BEND, ((data[2] << 7) | data[1]) / 16383.0
    if kind == 0xC0 and len(data) >= 2:
        return channel, abi.K_CTRL_PROGRAM_CHANGE, data[1] / 127.0
    return None


def add_midi_event(events: Any, offset: int, data: bytes) -> None:
    """Append one MIDI message to a VST3 event list as a note-on/off, poly-pressure or SysEx event.

    Other channel messages (controllers, pitch bend, channel pressure, program change) have no VST3 event
    type: see :func:`midi_controller`. Anything else is dropped.
    """
    status = data[0]
    kind = status & 0xF0
    channel = status & 0x0F
    ev = abi.Event()
    ev.busIndex = 0
    ev.sampleOffset = int(offset)
    if kind == 0x90 and len(data) >= 3 and data[2] > 0:
        ev.type = abi.K_NOTE_ON_EVENT
        ev.noteOn.channel, ev.noteOn.pitch = channel, data[1]
        ev.noteOn.velocity = data[2] / 127.0
        ev.noteOn.noteId = -1
        events.add(ev)
    elif (kind == 0x80 and len(data) >= 3) or (kind == 0x90 and len(data) >= 3):
        ev.type = abi.K_NOTE_OFF_EVENT
        ev.noteOff.channel, ev.noteOff.pitch = channel, data[1]
        ev.noteOff.velocity = data[2] / 127.0 if kind == 0x80 else 0.0
        ev.noteOff.noteId = -1
        events.add(ev)
    elif kind == 0xA0 and len(data) >= 3:
        ev.type = abi.K_POLY_PRESSURE_EVENT
        ev.polyPressure.channel, ev.polyPressure.pitch = channel, data[1]
        ev.polyPressure.pressure = data[2] / 127.0
        ev.polyPressure.noteId = -1
        events.add(ev)
    elif status == 0xF0:
        payload = ctypes.create_string_buffer(bytes(data), len(data))
        ev.type = abi.K_DATA_EVENT
        ev.data.size = len(data)
        ev.data.type = 0
        ev.data.bytes = ctypes.addressof(payload)
        events.add(ev, payload)


def _hash31(values: Iterable[int]) -> int:
    """``h = 31 * h + v`` over ``values``, modulo 2**32 (the string hash plugin hosts build identifiers from)."""
    h = 0
    for v in values:
        h = (h * 31 + v) & 0xFFFFFFFF
    return h
