"""Host-side VST3 objects implemented in Python: the objects a plugin calls back into.

Each class gets one C vtable (built once, from ctypes callbacks); each instance is a one-word C struct
pointing
at it. A callback finds its Python object from the ``this`` pointer through a registry. Objects the host owns
stay registered until :meth:`PyComObject.dispose`; objects a plugin creates through
``IHostApplication::createInstance`` (messages, attribute lists) are dropped when their reference count falls
to zero.

A callback never lets a Python exception escape into the plugin: it returns an error code instead.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from ctypes import POINTER, c_char_p, c_double, c_int32, c_int64, c_uint16, c_uint32, c_void_p
from typing import Any, ClassVar

from . import abi

_REGISTRY: dict[int, PyComObject] = {}
_REGISTRY_LOCK = threading.Lock()


def _error_value(restype: Any) -> Any:
    if restype in (c_int32,):
        return abi.K_INVALID_ARGUMENT
    if restype is c_double:
        return 0.0
    return 0


class PyComObject:
    """Base class of a Python object exposed to a plugin as a C++ interface."""

    IIDS: ClassVar[tuple[bytes, ...]] = ()
    METHODS: ClassVar[list[tuple[str, Any, tuple[Any, ...]]]] = []
    _vtable: ClassVar[Any] = None
    _callbacks: ClassVar[list[Any]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._vtable = None

    @classmethod
    def _build_vtable(cls) -> Any:
        entries: list[tuple[str, Any, tuple[Any, ...]]] = [("queryInterface", c_int32, (c_void_p, POINTER(c_void_p)))]
        entries += [("addRef", c_uint32, ()), ("release", c_uint32, ())]
        entries += cls.METHODS
        callbacks = []
        for name, restype, argtypes in entries:
            callbacks.append(abi.proto(restype, *argtypes)(cls._dispatcher(name, restype)))
        cls._callbacks = callbacks  # keep the thunks alive as long as the class
        cls._vtable = (c_void_p * len(callbacks))(*[ctypes.cast(cb, c_void_p).value for cb in callbacks])
        return cls._vtable

    @staticmethod
    def _dispatcher(name: str, restype: Any) -> Any:
        error = _error_value(restype)

        def call(this: int, *args: Any) -> Any:
            obj = _REGISTRY.get(this)
            if obj is None:
                return error
            try:
                result = getattr(obj, name)(*args)
            except Exception:  # never unwind through the plugin's C++ frames
                return error
            return error if result is None else result

        return call

    def __init__(self, owned: bool = True) -> None:
        vtable = type(self)._vtable or type(self)._build_vtable()
        self._struct = (c_void_p * 1)(ctypes.addressof(vtable))
        self.ptr: int = ctypes.addressof(self._struct)
        self._refs = 1
        self._owned = owned  # True: the host keeps the object alive until dispose()
        with _REGISTRY_LOCK:
            _REGISTRY[self.ptr] = self

    # -- FUnknown
    def queryInterface(self, iid_ptr: int, out: Any) -> int:  # noqa: N802 (the C++ name)
        wanted = ctypes.string_at(iid_ptr, 16)
        if wanted == abi.FUNKNOWN_IID or wanted in self.IIDS:
            self._refs += 1
            out[0] = self.ptr
            return abi.K_RESULT_OK
        out[0] = None
        return abi.K_NO_INTERFACE

    def addRef(self) -> int:  # noqa: N802
        self._refs += 1
        return self._refs

    def release(self) -> int:  # noqa: N802
        self._refs -= 1
        if self._refs <= 0 and not self._owned:
            with _REGISTRY_LOCK:
                _REGISTRY.pop(self.ptr, None)
        return max(self._refs, 0)

    def dispose(self) -> None:
        """Forget this object: later calls into it from the plugin return an error instead of crashing."""
        with _REGISTRY_LOCK:
            _REGISTRY.pop(self.ptr, None)


# ----------------------------------------------------------------------------------------------------
# messages
class AttributeList(PyComObject):
    IIDS = (abi.IATTRIBUTELIST_IID,)
    METHODS = [
        ("setInt", c_int32, (c_char_p, c_int64)),
        ("getInt", c_int32, (c_char_p, POINTER(c_int64))),
        ("setFloat", c_int32, (c_char_p, c_double)),
        ("getFloat", c_int32, (c_char_p, POINTER(c_double))),
        ("setString", c_int32, (c_char_p, POINTER(c_uint16))),
        ("getString", c_int32, (c_char_p, POINTER(c_uint16), c_uint32)),
        ("setBinary", c_int32, (c_char_p, c_void_p, c_uint32)),
        ("getBinary", c_int32, (c_char_p, POINTER(c_void_p), POINTER(c_uint32))),
    ]

    def __init__(self, owned: bool = False) -> None:
        super().__init__(owned)
        self.values: dict[bytes, Any] = {}

    def _get(self, key: bytes, kind: type) -> Any:
        value = self.values.get(key)
        return value if isinstance(value, kind) else None

    def setInt(self, key: bytes, value: int) -> int:  # noqa: N802
        self.values[key] = int(value)
        return abi.K_RESULT_OK

    def getInt(self, key: bytes, out: Any) -> int:  # noqa: N802
        value = self._get(key, int)
        if value is None:
            return abi.K_RESULT_FALSE
        out[0] = value
        return abi.K_RESULT_OK

    def setFloat(self, key: bytes, value: float) -> int:  # noqa: N802
        self.values[key] = float(value)
        return abi.K_RESULT_OK

    def getFloat(self, key: bytes, out: Any) -> int:  # noqa: N802
        value = self._get(key, float)
        if value is None:
            return abi.K_RESULT_FALSE
        out[0] = value
        return abi.K_RESULT_OK

    def setString(self, key: bytes, text: Any) -> int:  # noqa: N802
        units = []
        i = 0
        while text[i]:
            units.append(text[i])
            i += 1
        self.values[key] = ("str", units)
        return abi.K_RESULT_OK

    def getString(self, key: bytes, out: Any, size_bytes: int) -> int:  # noqa: N802
        value = self.values.get(key)
        if not (isinstance(value, tuple) and value[0] == "str"):
            return abi.K_RESULT_FALSE
        units = value[1][: max(0, size_bytes // 2 - 1)]
        for i, unit in enumerate(units):
            out[i] = unit
        out[len(units)] = 0
        return abi.K_RESULT_OK

    def setBinary(self, key: bytes, data: int, size: int) -> int:  # noqa: N802
        self.values[key] = ctypes.create_string_buffer(ctypes.string_at(data, size) if size else b"", max(size, 1))
        self.values[key + b"\0size"] = size
        return abi.K_RESULT_OK

    def getBinary(self, key: bytes, out_data: Any, out_size: Any) -> int:  # noqa: N802
        buf = self.values.get(key)
        if not isinstance(buf, ctypes.Array):
            return abi.K_RESULT_FALSE
        out_data[0] = ctypes.addressof(buf)
        out_size[0] = self.values[key + b"\0size"]
        return abi.K_RESULT_OK


class Message(PyComObject):
    IIDS = (abi.IMESSAGE_IID,)
    METHODS = [
        ("getMessageID", c_void_p, ()),
        ("setMessageID", None, (c_char_p,)),
        ("getAttributes", c_void_p, ()),
    ]

    def __init__(self, owned: bool = False) -> None:
        super().__init__(owned)
        self._id = ctypes.create_string_buffer(b"", 1)
        self.attributes = AttributeList(owned=True)

    def getMessageID(self) -> int:  # noqa: N802
        return ctypes.addressof(self._id)

    def setMessageID(self, message_id: bytes | None) -> None:  # noqa: N802
        self._id = ctypes.create_string_buffer(message_id or b"")

    def getAttributes(self) -> int:  # noqa: N802
        return self.attributes.ptr

    def release(self) -> int:  # noqa: N802
        refs = super().release()
        if refs == 0:
            self.attributes.dispose()
        return refs


# ---------------------------------------------------------------------------------------------------- host
class HostApplication(PyComObject):
    """The host context given to ``initialize``: a name, and a factory for messages and attribute lists."""

    IIDS = (abi.IHOSTAPPLICATION_IID,)
    METHODS = [
        ("getName", c_int32, (POINTER(c_uint16),)),
        ("createInstance", c_int32, (c_void_p, c_void_p, POINTER(c_void_p))),
    ]

    def getName(self, out: Any) -> int:  # noqa: N802
        for i, ch in enumerate("stompbox"):
            out[i] = ord(ch)
        out[len("stompbox")] = 0
        return abi.K_RESULT_OK

    def createInstance(self, cid: int, iid_ptr: int, out: Any) -> int:  # noqa: N802
        cls_id = ctypes.string_at(cid, 16) if cid else b""
        wanted = ctypes.string_at(iid_ptr, 16) if iid_ptr else b""
        if abi.IMESSAGE_IID in (cls_id, wanted):
            out[0] = Message().ptr
            return abi.K_RESULT_OK
        if abi.IATTRIBUTELIST_IID in (cls_id, wanted):
            out[0] = AttributeList().ptr
            return abi.K_RESULT_OK
        out[0] = None
        return abi.K_RESULT_FALSE


_HOST: HostApplication | None = None


def host_application() -> HostApplication:
    """The one host context of this process."""
    global _HOST
    if _HOST is None:
        _HOST = HostApplication()
    return _HOST


class ComponentHandler(PyComObject):
    """Receives edits and restart requests from an edit controller."""

    IIDS = (abi.ICOMPONENTHANDLER_IID,)
    METHODS = [
        ("beginEdit", c_int32, (c_uint32,)),
        ("performEdit", c_int32, (c_uint32, c_double)),
        ("endEdit", c_int32, (c_uint32,)),
        ("restartComponent", c_int32, (c_int32,)),
    ]

    def __init__(self, on_edit: Callable[[int, float], None] | None = None) -> None:
        super().__init__()
        self.edits: dict[int, float] = {}
        self.restart_flags = 0
        self.on_edit = on_edit  # told of each edit (the plugin's editor moved a control)

    def beginEdit(self, param_id: int) -> int:  # noqa: N802
        return abi.K_RESULT_OK

    def performEdit(self, param_id: int, value: float) -> int:  # noqa: N802
        self.edits[int(param_id)] = float(value)
        if self.on_edit is not None:
            self.on_edit(int(param_id), float(value))
        return abi.K_RESULT_OK

    def endEdit(self, param_id: int) -> int:  # noqa: N802
        return abi.K_RESULT_OK

    def restartComponent(self, flags: int) -> int:  # noqa: N802
        self.restart_flags |= int(flags)
        return abi.K_RESULT_OK


class MemoryStream(PyComObject):
    """``IBStream`` over a Python ``bytearray``."""

    IIDS = (abi.IBSTREAM_IID,)
    METHODS = [
        ("read", c_int32, (c_void_p, c_int32, POINTER(c_int32))),
        ("write", c_int32, (c_void_p, c_int32, POINTER(c_int32))),
        ("seek", c_int32, (c_int64, c_int32, POINTER(c_int64))),
        ("tell", c_int32, (POINTER(c_int64),)),
    ]

    def __init__(self, data: bytes = b"") -> None:
        super().__init__()
        self.data = bytearray(data)
        self.pos = 0

    def read(self, buffer: int, count: int, out_read: Any) -> int:
        chunk = bytes(self.data[self.pos : self.pos + max(0, count)])
        if chunk:
            ctypes.memmove(buffer, chunk, len(chunk))
        self.pos += len(chunk)
        if out_read:
            out_read[0] = len(chunk)
        return abi.K_RESULT_OK

    def write(self, buffer: int, count: int, out_written: Any) -> int:
        if count < 0:
            return abi.K_INVALID_ARGUMENT
        chunk = ctypes.string_at(buffer, count) if count else b""
        end = self.pos + count
        if self.pos > len(self.data):
            self.data.extend(b"\0" * (self.pos - len(self.data)))
        self.data[self.pos : end] = chunk
        self.pos = end
        if out_written:
            out_written[0] = count
        return abi.K_RESULT_OK

    def seek(self, pos: int, mode: int, out_result: Any) -> int:
        base = {0: 0, 1: self.pos, 2: len(self.data)}.get(mode)
        if base is None or base + pos < 0:
            return abi.K_INVALID_ARGUMENT
        self.pos = base + pos
        if out_result:
            out_result[0] = self.pos
        return abi.K_RESULT_OK

    def tell(self, out_pos: Any) -> int:
        if not out_pos:
            return abi.K_INVALID_ARGUMENT
        out_pos[0] = self.pos
        return abi.K_RESULT_OK


# ---------------------------------------------------------------------------------------------------- process
class ParamValueQueue(PyComObject):
    IIDS = (abi.IPARAMVALUEQUEUE_IID,)
    METHODS = [
        ("getParameterId", c_uint32, ()),
        ("getPointCount", c_int32, ()),
        ("getPoint", c_int32, (c_int32, POINTER(c_int32), POINTER(c_double))),
        ("addPoint", c_int32, (c_int32, c_double, POINTER(c_int32))),
    ]

    def __init__(self, param_id: int = 0) -> None:
        super().__init__()
        self.param_id = param_id
        self.points: list[tuple[int, float]] = []

    def getParameterId(self) -> int:  # noqa: N802
        return self.param_id

    def getPointCount(self) -> int:  # noqa: N802
        return len(self.points)

    def getPoint(self, index: int, out_offset: Any, out_value: Any) -> int:  # noqa: N802
        if not 0 <= index < len(self.points):
            return abi.K_INVALID_ARGUMENT
        out_offset[0], out_value[0] = self.points[index]
        return abi.K_RESULT_OK

    def addPoint(self, offset: int, value: float, out_index: Any) -> int:  # noqa: N802
        self.points.append((int(offset), float(value)))
        if out_index:
            out_index[0] = len(self.points) - 1
        return abi.K_RESULT_OK


class ParameterChanges(PyComObject):
    """The parameter changes of one ``process()`` call (input: host to plugin; output: plugin to host)."""

    IIDS = (abi.IPARAMETERCHANGES_IID,)
    METHODS = [
        ("getParameterCount", c_int32, ()),
        ("getParameterData", c_void_p, (c_int32,)),
        ("addParameterData", c_void_p, (POINTER(c_uint32), POINTER(c_int32))),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._pool: list[ParamValueQueue] = []
        self.queues: list[ParamValueQueue] = []

    def clear(self) -> None:
        self.queues.clear()

    def add(self, param_id: int) -> ParamValueQueue:
        for queue in self.queues:
            if queue.param_id == param_id:
                return queue
        if len(self._pool) <= len(self.queues):
            self._pool.append(ParamValueQueue())
        queue = self._pool[len(self.queues)]
        queue.param_id = int(param_id)
        queue.points = []
        self.queues.append(queue)
        return queue

    def getParameterCount(self) -> int:  # noqa: N802
        return len(self.queues)

    def getParameterData(self, index: int) -> int:  # noqa: N802
        if not 0 <= index < len(self.queues):
            return 0
        return self.queues[index].ptr

    def addParameterData(self, param_id: Any, out_index: Any) -> int:  # noqa: N802
        queue = self.add(int(param_id[0]))
        if out_index:
            out_index[0] = self.queues.index(queue)
        return queue.ptr

    def dispose(self) -> None:
        for queue in self._pool:
            queue.dispose()
        super().dispose()


class EventList(PyComObject):
    """``IEventList``: the note and MIDI events of one ``process()`` call."""

    IIDS = (abi.IEVENTLIST_IID,)
    METHODS = [
        ("getEventCount", c_int32, ()),
        ("getEvent", c_int32, (c_int32, POINTER(abi.Event))),
        ("addEvent", c_int32, (POINTER(abi.Event),)),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.events: list[abi.Event] = []
        self._keep: list[Any] = []  # payloads (SysEx bytes) referenced by DataEvents

    def clear(self) -> None:
        self.events.clear()
        self._keep.clear()

    def add(self, event: abi.Event, payload: Any = None) -> None:
        self.events.append(event)
        if payload is not None:
            self._keep.append(payload)

    def getEventCount(self) -> int:  # noqa: N802
        return len(self.events)

    def getEvent(self, index: int, out: Any) -> int:  # noqa: N802
        if not 0 <= index < len(self.events):
            return abi.K_INVALID_ARGUMENT
        ctypes.memmove(out, ctypes.addressof(self.events[index]), ctypes.sizeof(abi.Event))
        return abi.K_RESULT_OK

    def addEvent(self, event: Any) -> int:  # noqa: N802
        copy = abi.Event()
        ctypes.memmove(ctypes.addressof(copy), event, ctypes.sizeof(abi.Event))
        self.events.append(copy)
        return abi.K_RESULT_OK


__all__ = [
    "AttributeList",
    "ComponentHandler",
    "EventList",
    "HostApplication",
    "MemoryStream",
    "Message",
    "ParamValueQueue",
    "ParameterChanges",
    "PyComObject",
    "host_application",
]
