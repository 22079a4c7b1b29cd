"""What the host offers a plugin at ``instantiate``: the feature array (URID map, options, bounded block
length, worker, log, default state) and the atom buffers of its atom ports."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ..ports import MAX_BLOCK
from .abi import (
    ATOM,
    ATOM_CAPACITY,
    BUFSZ,
    LOG_PRINTF,
    LOG_VPRINTF,
    LV2,
    MIDI_EVENT,
    OPTIONS,
    RESPOND_FN,
    SCHEDULE_FN,
    STATE,
    URID,
    WORKER,
    LV2_Feature,
    LV2_Log_Log,
    LV2_Options_Option,
    LV2_Worker_Interface,
    LV2_Worker_Schedule,
)
from .world import Lilv, UridMap

#: features this host provides (a plugin that requires any other one cannot be loaded)
SUPPORTED_FEATURES = frozenset(
    {
        URID + "map",
        URID + "unmap",
        OPTIONS + "options",
        BUFSZ + "boundedBlockLength",
        WORKER + "schedule",
        "http://lv2plug.in/ns/ext/log#log",
        STATE + "loadDefaultState",
        LV2 + "hardRTCapable",
        LV2 + "isLive",
        LV2 + "inPlaceBroken",
        "http://lv2plug.in/ns/ext/port-props#supportsStrictBounds",
    }
)


class HostFeatures:
    """The feature array handed to ``instantiate`` (one per instance: options carry the sample rate)."""

    def __init__(self, world: Lilv, sample_rate: float) -> None:
        urids = world.urids
        self._keep: list[Any] = []
        self.worker: Worker | None = None
        self._sample_rate = ctypes.c_float(sample_rate)
        self._max_block = ctypes.c_int32(MAX_BLOCK)
        self._min_block = ctypes.c_int32(1)
        self._nominal = ctypes.c_int32(MAX_BLOCK)
        self._seq_size = ctypes.c_int32(ATOM_CAPACITY)
        atom_int, atom_float = urids.map(ATOM + "Int"), urids.map(ATOM + "Float")
        opts: list[tuple[str, int, ctypes.c_int32 | ctypes.c_float]] = [
            (BUFSZ + "maxBlockLength", atom_int, self._max_block),
            (BUFSZ + "minBlockLength", atom_int, self._min_block),
            (BUFSZ + "nominalBlockLength", atom_int, self._nominal),
            (BUFSZ + "sequenceSize", atom_int, self._seq_size),
            ("http://lv2plug.in/ns/ext/parameters#sampleRate", atom_float, self._sample_rate),
        ]
        self.options = (LV2_Options_Option * (len(opts) + 1))()
        for i, (key, type_, value) in enumerate(opts):
            self.options[i] = LV2_Options_Option(0, 0, urids.map(key), 4, type_, ctypes.addressof(value))
        self.log = LV2_Log_Log(None, LOG_PRINTF, LOG_VPRINTF)
        self.schedule = LV2_Worker_Schedule(None, SCHEDULE_FN(self._schedule))
        entries = [
            (URID + "map", ctypes.addressof(urids.map_struct)),
            (URID + "unmap", ctypes.addressof(urids.unmap_struct)),
            (OPTIONS + "options", ctypes.addressof(self.options)),
            (BUFSZ + "boundedBlockLength", None),
            (WORKER + "schedule", ctypes.addressof(self.schedule)),
            ("http://lv2plug.in/ns/ext/log#log", ctypes.addressof(self.log)),
            (STATE + "loadDefaultState", None),
        ]
        self.features = [LV2_Feature(uri.encode(), data) for uri, data in entries]
        # NULL-terminated: ctypes fills the element after the given ones with a NULL pointer
        self.array = (ctypes.POINTER(LV2_Feature) * (len(self.features) + 1))(
            *(ctypes.pointer(f) for f in self.features)
        )

    def _schedule(self, _handle: Any, size: int, data: int) -> int:
        worker = self.worker
        if worker is None:
            return 1  # LV2_WORKER_ERR_UNKNOWN
        return worker.work(size, data)


class Worker:
    """``worker:schedule`` done synchronously: the work runs inside ``run()``, its responses are delivered
    after it (as hosts without a worker thread do)."""

    def __init__(self, iface: LV2_Worker_Interface, handle: int) -> None:
        self.iface, self.handle = iface, handle
        self.responses: list[bytes] = []
        self._respond = RESPOND_FN(self._on_respond)

    def _on_respond(self, _handle: Any, size: int, data: int) -> int:
        self.responses.append(ctypes.string_at(data, size))
        return 0

    def work(self, size: int, data: int) -> int:
        return int(self.iface.work(self.handle, self._respond, None, size, data))

    def deliver(self) -> None:
        while self.responses:
            body = self.responses.pop(0)
            buf = ctypes.create_string_buffer(body, len(body))
            self.iface.work_response(self.handle, len(body), buf)
        if self.iface.end_run:
            ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(self.iface.end_run)(self.handle)


class AtomBuffer:
    """An ``LV2_Atom_Sequence`` buffer for an atom port (input: events written before each run; output: an
    empty chunk of the whole capacity for the plugin to write into)."""

    def __init__(self, urids: UridMap, is_input: bool) -> None:
        self.is_input = is_input
        self.data = np.zeros(ATOM_CAPACITY // 4, np.uint32)  # 4-byte aligned (8 via numpy's allocator)
        self.address = self.data.ctypes.data
        self.sequence = urids.map(ATOM + "Sequence")
        self.chunk = urids.map(ATOM + "Chunk")
        self.midi = urids.map(MIDI_EVENT)
        self.clear()

    def clear(self) -> None:
        d = self.data
        if self.is_input:
            d[0], d[1], d[2], d[3] = 8, self.sequence, 0, 0  # atom {size, type}, body {unit, pad}
        else:
            d[0], d[1] = ATOM_CAPACITY - 8, self.chunk

    def write_midi(self, events: list[tuple[int, bytes]]) -> None:
        """Fill the sequence with MIDI events at sample offsets (sorted)."""
        self.clear()
        raw = self.data.view(np.uint8)
        size = 8
        for offset, message in events:
            pos = 8 + size
            need = 16 + ((len(message) + 7) & ~7)
            if pos + need > ATOM_CAPACITY:
                break
            raw[pos : pos + 8] = np.frombuffer(np.int64(offset).tobytes(), np.uint8)
            raw[pos + 8 : pos + 16] = np.frombuffer(np.array([len(message), self.midi], np.uint32).tobytes(), np.uint8)
            raw[pos + 16 : pos + 16 + len(message)] = np.frombuffer(message, np.uint8)
            size += need
        self.data[0] = size
