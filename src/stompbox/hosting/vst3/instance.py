"""One VST3 plugin instance: component, processor and controller, their wiring, and ``process()``.

Host sequence (VST3 SDK "Audio Processor Call Sequence"): create the component, ``initialize(host)``, query
``IAudioProcessor``; get the edit controller (the component itself, or a separate class named by
``getControllerClassId``), ``initialize(host)``, connect the two ``IConnectionPoint``s, give the controller
the
component's state; then per stream format: ``setBusArrangements`` -> ``activateBus`` -> ``setupProcessing`` ->
``setActive(true)`` -> ``setProcessing(true)`` -> ``process``... and the reverse to stop.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, byref, c_double, c_float, c_uint64
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._base.errors import PluginLoadError
from . import abi
from .hostobjs import ComponentHandler, EventList, MemoryStream, ParameterChanges, host_application
from .module import ClassInfo, Vst3Module


@dataclass
class ParamInfo:
    """What the controller says about one parameter (``ParameterInfo``)."""

    id: int
    index: int
    title: str
    short_title: str
    units: str
    step_count: int
    default: float
    flags: int

    @property
    def is_hidden(self) -> bool:
        return bool(self.flags & abi.K_IS_HIDDEN)

    @property
    def is_read_only(self) -> bool:
        return bool(self.flags & abi.K_IS_READ_ONLY)

    @property
    def is_automatable(self) -> bool:
        return bool(self.flags & abi.K_CAN_AUTOMATE)


@dataclass
class BusDesc:
    media: int
    direction: int
    index: int
    channels: int
    name: str
    bus_type: int
    flags: int


def _arrangement(channels: int) -> int:
    if channels <= 0:
        return abi.K_EMPTY
    if channels == 1:
        return abi.K_MONO
    if channels == 2:
        return abi.K_STEREO
    return (1 << channels) - 1


def _channel_count(arrangement: int) -> int:
    return bin(arrangement).count("1")


class Vst3Instance:
    """A live plugin instance. Not thread-safe: the owning :class:`VST3Plugin` serialises calls."""

    def __init__(self, module: Vst3Module, info: ClassInfo, lock: threading.RLock | None = None) -> None:
        self.module = module
        self.info = info
        self.lock = lock if lock is not None else threading.RLock()  # the owner's: held around process()
        self.host = host_application()
        self.handler = ComponentHandler(self._edited)
        self._objects: list[Any] = [self.handler]
        self.controller: abi.ComPtr | None = None
        self._separate_controller = False
        self._conn_component: abi.ComPtr | None = None
        self._conn_controller: abi.ComPtr | None = None
        self.active = False
        self.processing = False
        self.setup: tuple[float, int, int] | None = None
        self.pending: dict[int, float] = {}
        self.values: dict[int, float] = {}
        self.midi_points: list[tuple[int, int, float]] = []  # (param id, sample offset, value) from MIDI controllers
        self.midi_mapping: abi.ComPtr | None = None
        self._midi_map: dict[tuple[int, int], int | None] = {}

        component = module.create(info.cid, abi.ICOMPONENT_IID, "IComponent")
        if component is None:
            raise PluginLoadError(f"Unable to load plugin {module.path}: the factory could not create {info.name!r}.")
        self.component = component
        if component.initialize(self.host.ptr) != abi.K_RESULT_OK:
            component.release()
            raise PluginLoadError(f"Unable to load plugin {module.path}: {info.name!r} failed to initialise.")
        processor = component.query(abi.IAUDIOPROCESSOR_IID, "IAudioProcessor")
        if processor is None:
            self._terminate_component()
            raise PluginLoadError(f"Unable to load plugin {module.path}: {info.name!r} is not an audio processor.")
        self.processor = processor
        self._init_controller()
        if self.controller is not None:
            self.midi_mapping = self.controller.query(abi.IMIDIMAPPING_IID, "IMidiMapping")
        self.buses = self._read_buses()
        self.params = self._read_params()
        self._by_id = {p.id: p for p in self.params}

        # the process() call's data, built once per stream setup
        self.in_changes = ParameterChanges()
        self.out_changes = ParameterChanges()
        self.events = EventList()
        self._objects += [self.in_changes, self.out_changes, self.events]
        self._data = abi.ProcessData()
        self._context = abi.ProcessContext()
        self._process_fn = processor.bind("process")
        self._processor_ptr = processor.ptr
        self._data_ref = byref(self._data)
        self._fast_views: tuple[Any, ...] | None = None

    # ------------------------------------------------------------------ setup
    def _init_controller(self) -> None:
        controller = self.component.query(abi.IEDITCONTROLLER_IID, "IEditController")
        if controller is None:
            cid = ctypes.create_string_buffer(16)
            if self.component.getControllerClassId(ctypes.addressof(cid)) == abi.K_RESULT_OK:
                controller = self.module.create(cid.raw[:16], abi.IEDITCONTROLLER_IID, "IEditController")
                if controller is not None:
                    if controller.initialize(self.host.ptr) != abi.K_RESULT_OK:
                        controller.release()
                        controller = None
                    else:
                        self._separate_controller = True
        self.controller = controller
        if controller is None:
            return
        controller.setComponentHandler(self.handler.ptr)
        if self._separate_controller:
            a = self.component.query(abi.ICONNECTIONPOINT_IID, "IConnectionPoint")
            b = controller.query(abi.ICONNECTIONPOINT_IID, "IConnectionPoint")
            if a is not None and b is not None:
                a.connect(b.ptr)
                b.connect(a.ptr)
                self._conn_component, self._conn_controller = a, b
            else:
                for c in (a, b):
                    if c is not None:
                        c.release()
            self._sync_controller_from_component()

    def _sync_controller_from_component(self) -> None:
        if self.controller is None or not self._separate_controller:
            return
        data = self.get_component_state()
        if data:
            stream = MemoryStream(data)
            try:
                self.controller.setComponentState(stream.ptr)
            finally:
                stream.dispose()

    def _read_buses(self) -> dict[tuple[int, int], list[BusDesc]]:
        buses: dict[tuple[int, int], list[BusDesc]] = {}
        for media in (abi.K_AUDIO, abi.K_EVENT):
            for direction in (abi.K_INPUT, abi.K_OUTPUT):
                found = []
                for i in range(max(0, self.component.getBusCount(media, direction))):
                    info = abi.BusInfo()
                    if self.component.getBusInfo(media, direction, i, byref(info)) != abi.K_RESULT_OK:
                        continue
                    found.append(
                        BusDesc(
                            media,
                            direction,
                            i,
                            info.channelCount,
                            abi.from_string128(info.name),
                            info.busType,
                            info.flags,
                        )
                    )
                buses[(media, direction)] = found
        return buses

    def _read_params(self) -> list[ParamInfo]:
        params: list[ParamInfo] = []
        if self.controller is None:
            return params
        for i in range(max(0, self.controller.getParameterCount())):
            info = abi.ParameterInfo()
            if self.controller.getParameterInfo(i, byref(info)) != abi.K_RESULT_OK:
                continue
            params.append(
                ParamInfo(
                    int(info.id),
                    i,
                    abi.from_string128(info.title),
                    abi.from_string128(info.shortTitle),
                    abi.from_string128(info.units),
                    int(info.stepCount),
                    float(info.defaultNormalizedValue),
                    int(info.flags),
                )
            )
        return params

    @property
    def audio_inputs(self) -> list[BusDesc]:
        return self.buses[(abi.K_AUDIO, abi.K_INPUT)]

    @property
    def audio_outputs(self) -> list[BusDesc]:
        return self.buses[(abi.K_AUDIO, abi.K_OUTPUT)]

    @property
    def event_inputs(self) -> list[BusDesc]:
        return self.buses[(abi.K_EVENT, abi.K_INPUT)]

    def main_bus_channels(self) -> tuple[int, int]:
        """The channel counts the main input and output buses currently expect."""
        result = []
        for direction in (abi.K_INPUT, abi.K_OUTPUT):
            arr = c_uint64(0)
            buses = self.buses[(abi.K_AUDIO, direction)]
            if not buses:
                result.append(0)
            elif self.processor.getBusArrangement(direction, 0, byref(arr)) == abi.K_RESULT_OK:
                result.append(_channel_count(arr.value))
            else:
                result.append(buses[0].channels)
        return result[0], result[1]

    def stop(self) -> None:
        if self.processing:
            self.processor.setProcessing(0)
            self.processing = False
        if self.active:
            self.component.setActive(0)
            self.active = False

    def configure(self, sample_rate: float, channels: int, max_block: int) -> None:
        """Set up buses and processing for a stream format; raises ``ValueError`` for a channel count the
        plugin does not accept."""
        self.stop()
        self.setup = None
        ins, outs = self.audio_inputs, self.audio_outputs
        in_arr = (c_uint64 * max(1, len(ins)))()
        out_arr = (c_uint64 * max(1, len(outs)))()
        for i, bus in enumerate(ins):
            in_arr[i] = _arrangement(channels if i == 0 else bus.channels)
        for i, bus in enumerate(outs):
            out_arr[i] = _arrangement(channels if i == 0 else bus.channels)
        self.processor.setBusArrangements(in_arr, len(ins), out_arr, len(outs))
        got_in, got_out = self.main_bus_channels()
        if (ins and got_in != channels) or (outs and got_out != channels):
            raise ValueError(
                f"Plugin '{self.info.name}' does not support {channels}-channel output. (Main bus currently "
                f"expects {got_in} input channels and {got_out} output channels.)"
            )
        # the buses' channel counts after the arrangement (aux buses keep what the plugin says)
        self.bus_channels = {}
        for direction, buses in ((abi.K_INPUT, ins), (abi.K_OUTPUT, outs)):
            counts = []
            for i, bus in enumerate(buses):
                arr = c_uint64(0)
                if self.processor.getBusArrangement(direction, i, byref(arr)) == abi.K_RESULT_OK:
                    counts.append(_channel_count(arr.value))
                else:
                    counts.append(channels if i == 0 else bus.channels)
            self.bus_channels[direction] = counts
        for media, direction in (
            (abi.K_AUDIO, abi.K_INPUT),
            (abi.K_AUDIO, abi.K_OUTPUT),
            (abi.K_EVENT, abi.K_INPUT),
        ):
            for i, _bus in enumerate(self.buses[(media, direction)]):
                self.component.activateBus(media, direction, i, 1 if i == 0 else 0)
        setup = abi.ProcessSetup(abi.K_OFFLINE, abi.K_SAMPLE32, int(max_block), float(sample_rate))
        if self.processor.setupProcessing(byref(setup)) != abi.K_RESULT_OK:
            # some plugins refuse offline mode: try realtime
            setup.processMode = abi.K_REALTIME
            if self.processor.setupProcessing(byref(setup)) != abi.K_RESULT_OK:
                raise ValueError(f"Plugin '{self.info.name}' refused sample rate {sample_rate} / block {max_block}.")
        self._mode = setup.processMode
        self.component.setActive(1)
        self.active = True
        self.processor.setProcessing(1)
        self.processing = True
        self._build_buffers(channels, max_block, float(sample_rate))
        self.setup = (float(sample_rate), channels, int(max_block))

    def _build_buffers(self, channels: int, max_block: int, sample_rate: float) -> None:
        def make(counts: list[int]) -> tuple[ctypes.Array[abi.AudioBusBuffers], list[np.ndarray], list[Any]]:
            buses = (abi.AudioBusBuffers * max(1, len(counts)))()
            arrays, keep = [], []
            for i, n in enumerate(counts):
                arr = np.zeros((max(n, 1), max_block), np.float32)
                ptrs = (POINTER(c_float) * max(n, 1))()
                for c in range(n):
                    ptrs[c] = arr[c].ctypes.data_as(POINTER(c_float))
                buses[i].numChannels = n
                buses[i].silenceFlags = 0
                buses[i].channelBuffers32 = ctypes.cast(ptrs, POINTER(POINTER(c_float)))
                arrays.append(arr)
                keep.append(ptrs)
            return buses, arrays, keep

        self._in_buses, self._in_arrays, k1 = make(self.bus_channels[abi.K_INPUT])
        self._out_buses, self._out_arrays, k2 = make(self.bus_channels[abi.K_OUTPUT])
        self._keep = (k1, k2)
        d = self._data
        d.processMode = self._mode
        d.symbolicSampleSize = abi.K_SAMPLE32
        d.numInputs = len(self.bus_channels[abi.K_INPUT])
        d.numOutputs = len(self.bus_channels[abi.K_OUTPUT])
        d.inputs = ctypes.cast(self._in_buses, POINTER(abi.AudioBusBuffers)) if d.numInputs else None
        d.outputs = ctypes.cast(self._out_buses, POINTER(abi.AudioBusBuffers)) if d.numOutputs else None
        d.inputParameterChanges = self.in_changes.ptr
        d.outputParameterChanges = self.out_changes.ptr
        d.inputEvents = self.events.ptr
        d.outputEvents = None
        ctx = self._context
        ctx.state = (1 << 10) | (1 << 13) | (1 << 17)  # tempo, time signature, continuous time valid
        ctx.sampleRate = sample_rate
        ctx.tempo = 120.0
        ctx.timeSigNumerator = 4
        ctx.timeSigDenominator = 4
        ctx.projectTimeSamples = 0
        ctx.continousTimeSamples = 0
        d.processContext = ctypes.addressof(ctx)
        self.main_in = self._in_arrays[0] if d.numInputs else None
        self.main_out = self._out_arrays[0] if d.numOutputs else None

    # ------------------------------------------------------------------ processing
    def flush_parameters(self) -> None:
        """Put pending parameter changes into the next block's input changes (none: a NULL pointer, which
        saves the plugin a call back into Python)."""
        changes = self.in_changes
        changes.clear()
        if self.pending or self.midi_points:
            for pid, value in self.pending.items():
                changes.add(pid).points = [(0, value)]
            self.pending.clear()
            for pid, offset, value in self.midi_points:  # in time order: queues stay sorted by offset
                changes.add(pid).points.append((offset, value))
            self.midi_points.clear()
            self._data.inputParameterChanges = changes.ptr
        else:
            self._data.inputParameterChanges = None

    def process(self, n: int) -> int:
        """Run one block of ``n`` frames from ``main_in`` into ``main_out`` (plus the event list)."""
        self.flush_parameters()
        out_changes = self.out_changes
        if out_changes.queues:
            out_changes.clear()
        self._data.numSamples = n
        result: int = self._process_fn(self._processor_ptr, self._data_ref)
        if self.events.events:
            self.events.clear()
        ctx = self._context
        ctx.projectTimeSamples += n
        ctx.continousTimeSamples += n
        self._apply_output_changes()
        return result

    def process_many(self, audio: np.ndarray, out: np.ndarray, block: int) -> None:
        """Run ``audio`` (channels, n) float32 into ``out`` (may be ``audio`` itself) in blocks of at most
        ``block`` frames: what calling :meth:`process` per block does, in one compiled call that releases the GIL
        and hands the plugin the arrays' own memory (see :mod:`.fastpath`). Both arrays must be C-contiguous
        float32 with as many channels as the main buses."""
        from . import fastpath

        channels, n = audio.shape
        assert self.main_in is not None and self.main_out is not None, "process_many needs main audio buses"
        start = 0
        if self.pending or self.events.events:
            # parameter changes (and events) belong to the first block: send it the ordinary way
            start = min(block, n)
            self.main_in[:channels, :start] = audio[:, :start]
            self.process(start)
            out[:, :start] = self.main_out[:channels, :start]
            if start >= n:
                return
        views = self._fast_views
        if views is None:
            data, ctx = self._data, self._context
            num_samples = np.ctypeslib.as_array(
                (ctypes.c_int32 * 1).from_address(ctypes.addressof(data) + type(data).numSamples.offset)
            )
            words = ctypes.sizeof(ctx) // 8
            context = np.ctypeslib.as_array((ctypes.c_int64 * words).from_address(ctypes.addressof(ctx)))
            fn = ctypes.cast(self._process_fn, ctypes.c_void_p).value
            views = self._fast_views = (fn, num_samples, context)
        fn, num_samples, context = views
        in_ptrs, out_ptrs = self._keep[0][0], self._keep[1][0]  # main buses' channelBuffers32 arrays
        in_view = np.ctypeslib.as_array((ctypes.c_int64 * len(in_ptrs)).from_address(ctypes.addressof(in_ptrs)))
        out_view = np.ctypeslib.as_array((ctypes.c_int64 * len(out_ptrs)).from_address(ctypes.addressof(out_ptrs)))
        saved_in, saved_out = in_view.copy(), out_view.copy()
        self.flush_parameters()  # nothing pending: no input changes
        out_changes = self.out_changes
        if out_changes.queues:
            out_changes.clear()
        try:
            fastpath.run_blocks(
                fn,
                self._processor_ptr,
                ctypes.addressof(self._data),
                in_view,
                out_view,
                audio.ctypes.data + start * 4,
                out.ctypes.data + start * 4,
                audio.strides[0],
                out.strides[0],
                channels,
                n - start,
                block,
                num_samples,
                context,
                abi.ProcessContext.projectTimeSamples.offset // 8,
                abi.ProcessContext.continousTimeSamples.offset // 8,
            )
        finally:
            in_view[:] = saved_in
            out_view[:] = saved_out
        self._apply_output_changes()

    def _apply_output_changes(self) -> None:
        """Hand the last value of each output parameter change (meters) to the controller."""
        out_changes = self.out_changes
        if out_changes.queues and self.controller is not None:
            for queue in out_changes.queues:
                if queue.points:
                    self.controller.setParamNormalized(queue.param_id, queue.points[-1][1])
                    self.values.pop(queue.param_id, None)

    @property
    def component_processor_ptr(self) -> int:
        return self.processor.ptr

    def reset_timeline(self) -> None:
        self._context.projectTimeSamples = 0
        self._context.continousTimeSamples = 0

    def latency(self) -> int:
        return int(self.processor.getLatencySamples())

    def tail(self) -> int:
        return int(self.processor.getTailSamples())

    # ------------------------------------------------------------------ parameters
    def add_midi_controller(self, offset: int, channel: int, number: int, value: float) -> bool:
        """Queue a MIDI controller (CC 0-127, or ``abi.K_CTRL_*``) for the next block as a change, at ``offset``,
        of the parameter the plugin maps it to (``IMidiMapping``); False if it maps it to none."""
        key = (channel, number)
        pid = self._midi_map.get(key, -1)
        if pid == -1:
            pid = None
            out = ctypes.c_uint32(0)
            mapping = self.midi_mapping
            if mapping is not None:
                if mapping.getMidiControllerAssignment(0, channel, number, byref(out)) == abi.K_RESULT_OK:
                    pid = int(out.value)
            self._midi_map[key] = pid
        if pid is None:
            return False
        self.midi_points.append((pid, int(offset), float(value)))
        self.values[pid] = float(value)
        if self.controller is not None:
            self.controller.setParamNormalized(pid, float(value))
        return True

    def _edited(self, pid: int, value: float) -> None:
        """An edit from the plugin's own editor (``IComponentHandler::performEdit``, on the editor's thread): the
        controller has it already; the processor gets it with the next block."""
        with self.lock:
            self.values[pid] = value
            self.pending[pid] = value

    def get_normalized(self, pid: int) -> float:
        """The parameter's raw value: the last value the host set (as pedalboard/JUCE report it), else the
        controller's."""
        value = self.values.get(pid)
        if value is not None:
            return value
        return float(self.controller.getParamNormalized(pid)) if self.controller is not None else 0.0

    def set_normalized(self, pid: int, value: float) -> None:
        """Set a parameter on the controller and queue it for the processor's next block. Raw values are
        float32 on the way in, as in pedalboard, so both hosts give a plugin the same numbers."""
        value = float(np.float32(min(1.0, max(0.0, float(value)))))
        self.values[pid] = value
        if self.controller is not None:
            self.controller.setParamNormalized(pid, value)
        self.pending[pid] = value

    def text_for(self, pid: int, value: float) -> str | None:
        if self.controller is None:
            return None
        buf = abi.String128()
        if self.controller.getParamStringByValue(pid, float(value), ctypes.addressof(buf)) != abi.K_RESULT_OK:
            return None
        return abi.from_string128(buf)

    def value_for_text(self, pid: int, text: str) -> float | None:
        if self.controller is None:
            return None
        out = c_double(0.0)
        chars = abi.to_tchar(text)
        if self.controller.getParamValueByString(pid, ctypes.addressof(chars), byref(out)) != abi.K_RESULT_OK:
            return None
        return float(out.value)

    def to_plain(self, pid: int, value: float) -> float:
        return float(self.controller.normalizedParamToPlain(pid, float(value))) if self.controller else value

    # ------------------------------------------------------------------ state
    def commit_parameters(self) -> None:
        """Deliver pending parameter changes to the processor now.

        VST3 parameter changes reach the audio component only inside ``process()``, so a state read right
        after setting parameters would miss them. One sample of silence is processed to deliver them; when
        the plugin was not set up for a stream, it is set up at 44.1 kHz with its default channel count and
        stopped again afterwards.
        """
        if not self.pending:
            return
        was = self.setup
        if was is None:
            _, channels = self.main_bus_channels()
            self.configure(44100.0, max(1, channels or 2), 512)
        if self.main_in is not None:
            self.main_in[:, :1] = 0.0
        self.process(1)
        if was is None:
            self.stop()
            self.setup = None

    def _read_state(self, target: abi.ComPtr) -> bytes:
        stream = MemoryStream()
        try:
            if target.getState(stream.ptr) != abi.K_RESULT_OK:
                return b""
            return bytes(stream.data)
        finally:
            stream.dispose()

    def get_component_state(self) -> bytes:
        self.commit_parameters()
        return self._read_state(self.component)

    def get_controller_state(self) -> bytes:
        if self.controller is None:
            return b""
        return self._read_state(self.controller)

    def set_state(self, component: bytes | None, controller: bytes | None) -> None:
        """Restore the component's and the controller's state (either may be None or empty)."""
        was = self.setup
        self.stop()
        if component:
            stream = MemoryStream(component)
            try:
                if self.component.setState(stream.ptr) != abi.K_RESULT_OK:
                    raise ValueError(f"Plugin '{self.info.name}' rejected the state it was given.")
            finally:
                stream.dispose()
            if self.controller is not None and self._separate_controller:
                stream = MemoryStream(component)
                try:
                    self.controller.setComponentState(stream.ptr)
                finally:
                    stream.dispose()
        if controller and self.controller is not None:
            stream = MemoryStream(controller)
            try:
                self.controller.setState(stream.ptr)
            finally:
                stream.dispose()
        self.pending.clear()
        self.values.clear()
        if was is not None:
            self.configure(*was)

    # ------------------------------------------------------------------ teardown
    def _terminate_component(self) -> None:
        self.component.terminate()
        self.component.release()

    def close(self) -> None:
        """Stop, disconnect, terminate and release everything (idempotent)."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        try:
            self.stop()
            if self._conn_component is not None and self._conn_controller is not None:
                self._conn_component.disconnect(self._conn_controller.ptr)
                self._conn_controller.disconnect(self._conn_component.ptr)
                self._conn_component.release()
                self._conn_controller.release()
            if self.midi_mapping is not None:
                self.midi_mapping.release()
            if self.controller is not None:
                self.controller.setComponentHandler(None)
                if self._separate_controller:
                    self.controller.terminate()
                self.controller.release()
            self.processor.release()
            self._terminate_component()
        finally:
            for obj in self._objects:
                obj.dispose()
