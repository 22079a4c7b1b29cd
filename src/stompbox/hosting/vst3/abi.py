"""The VST3 binary interface, written from the (MIT-licensed) VST3 SDK ``pluginterfaces`` headers.

Only what a host needs: interface ids, the struct layouts that cross the boundary, and a small helper that
calls
a method of a C++ interface through its vtable. On Linux the SDK is built without ``COM_COMPATIBLE``:
interface
ids are the four 32-bit words of ``DECLARE_CLASS_IID`` written big-endian, ``tresult`` failure codes are small
integers (``kNoInterface = -1``), and the structs use natural alignment (``#pragma pack(16)`` on 64-bit).
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    c_char,
    c_char_p,
    c_double,
    c_float,
    c_int16,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any

# ---------------------------------------------------------------------------------------------------- results
K_RESULT_OK = 0
K_RESULT_FALSE = 1
K_NO_INTERFACE = -1
K_INVALID_ARGUMENT = 2
K_NOT_IMPLEMENTED = 3

# media types, bus directions, bus types
K_AUDIO = 0
K_EVENT = 1
K_INPUT = 0
K_OUTPUT = 1
K_MAIN_BUS = 0
K_AUX_BUS = 1

# process modes and sample sizes
K_REALTIME = 0
K_OFFLINE = 2
K_SAMPLE32 = 0

# speaker arrangements (bit sets)
K_SPEAKER_L = 1 << 0
K_SPEAKER_R = 1 << 1
K_SPEAKER_M = 1 << 19
K_EMPTY = 0
K_MONO = K_SPEAKER_M
K_STEREO = K_SPEAKER_L | K_SPEAKER_R

# ParameterInfo flags
K_CAN_AUTOMATE = 1 << 0
K_IS_READ_ONLY = 1 << 1
K_IS_WRAP_AROUND = 1 << 2
K_IS_LIST = 1 << 3
K_IS_HIDDEN = 1 << 4
K_IS_PROGRAM_CHANGE = 1 << 15
K_IS_BYPASS = 1 << 16

# IComponentHandler::restartComponent flags
K_RELOAD_COMPONENT = 1 << 0
K_IO_CHANGED = 1 << 1
K_PARAM_VALUES_CHANGED = 1 << 2
K_LATENCY_CHANGED = 1 << 3

# PClassInfo2::classFlags / categories
K_AUDIO_EFFECT_CLASS = b"Audio Module Class"

# ControllerNumbers (ivstmidicontrollers.h) beyond the 128 MIDI CCs
K_CTRL_AFTER_TOUCH = 128
K_CTRL_PITCH_BEND = 129
K_CTRL_PROGRAM_CHANGE = 130

# Event types
K_NOTE_ON_EVENT = 0
K_NOTE_OFF_EVENT = 1
K_DATA_EVENT = 2
K_POLY_PRESSURE_EVENT = 3


def iid(l1: int, l2: int, l3: int, l4: int) -> bytes:
    """The 16 bytes of an interface id from the four words of ``DECLARE_CLASS_IID`` (non-COM byte order)."""
    return b"".join(w.to_bytes(4, "big") for w in (l1, l2, l3, l4))


FUNKNOWN_IID = iid(0x00000000, 0x00000000, 0xC0000000, 0x00000046)
IBSTREAM_IID = iid(0xC3BF6EA2, 0x30994752, 0x9B6BF990, 0x1EE33E9B)
IPLUGINBASE_IID = iid(0x22888DDB, 0x156E45AE, 0x8358B348, 0x08190625)
IPLUGINFACTORY_IID = iid(0x7A4D811C, 0x52114A1F, 0xAED9D2EE, 0x0B43BF9F)
IPLUGINFACTORY2_IID = iid(0x0007B650, 0xF24B4C0B, 0xA464EDB9, 0xF00B2ABB)
IPLUGINFACTORY3_IID = iid(0x4555A2AB, 0xC1234E57, 0x9B122910, 0x36878931)
ICOMPONENT_IID = iid(0xE831FF31, 0xF2D54301, 0x928EBBEE, 0x25697802)
IAUDIOPROCESSOR_IID = iid(0x42043F99, 0xB7DA453C, 0xA569E79D, 0x9AAEC33D)
IEDITCONTROLLER_IID = iid(0xDCD7BBE3, 0x7742448D, 0xA874AACC, 0x979C759E)
ICONNECTIONPOINT_IID = iid(0x70A4156F, 0x6E6E4026, 0x989148BF, 0xAA60D8D1)
IMESSAGE_IID = iid(0x936F033B, 0xC6C047DB, 0xBB0882F8, 0x13C1E613)
IATTRIBUTELIST_IID = iid(0x1E5F0AEB, 0xCC7F4533, 0xA2544011, 0x38AD5EE4)
IHOSTAPPLICATION_IID = iid(0x58E595CC, 0xDB2D4969, 0x8B6AAF8C, 0x36A664E5)
ICOMPONENTHANDLER_IID = iid(0x93A0BEA3, 0x0BD045DB, 0x8E890B0C, 0xC1E46AC6)
IPARAMVALUEQUEUE_IID = iid(0x01263A18, 0xED074F6F, 0x98C9D356, 0x4686F9BA)
IPARAMETERCHANGES_IID = iid(0xA4779663, 0x0BB64A56, 0xB44384A8, 0x466FEB9D)
IEVENTLIST_IID = iid(0x3A2C4214, 0x346349FE, 0xB2C4F397, 0xB9695A44)
IPLUGINTERFACESUPPORT_IID = iid(0x4FB58B9E, 0x9EAA4E0F, 0xAB361C1C, 0xCCB56FEA)
IMIDIMAPPING_IID = iid(0xDF0FF9F7, 0x49B74669, 0xB63AB732, 0x7ADBF5E5)
# editors (pluginterfaces/gui/iplugview.h; the last three are in namespace Steinberg::Linux)
IPLUGVIEW_IID = iid(0x5BC32507, 0xD06049EA, 0xA6151B52, 0x2B755B29)
IPLUGFRAME_IID = iid(0x367FAF01, 0xAFA94693, 0x8D4DA2A0, 0xED0882A3)
IEVENTHANDLER_IID = iid(0x561E65C9, 0x13A0496F, 0x813A2C35, 0x654D7983)
ITIMERHANDLER_IID = iid(0x10BDD94F, 0x41424774, 0x821FAD8F, 0xECA72CA9)
IRUNLOOP_IID = iid(0x18C35366, 0x97764F1A, 0x9C5B8385, 0x7A871389)
K_PLATFORM_TYPE_X11 = b"X11EmbedWindowID"

String128 = c_uint16 * 128


def from_string128(buf: Any) -> str:
    """Decode a NUL-terminated UTF-16 ``String128``."""
    units = list(buf)
    if 0 in units:
        units = units[: units.index(0)]
    return bytes(b for u in units for b in u.to_bytes(2, "little")).decode("utf-16-le", errors="replace")


def to_tchar(text: str) -> ctypes.Array[c_uint16]:
    """A NUL-terminated UTF-16 string (``TChar*``) owned by the returned array."""
    data = text.encode("utf-16-le")
    units = [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]
    return (c_uint16 * (len(units) + 1))(*units, 0)


def cstr(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------------- structs
class ViewRect(Structure):
    _fields_ = [("left", c_int32), ("top", c_int32), ("right", c_int32), ("bottom", c_int32)]


class PFactoryInfo(Structure):
    _fields_ = [("vendor", c_char * 64), ("url", c_char * 256), ("email", c_char * 128), ("flags", c_int32)]


class PClassInfo(Structure):
    _fields_ = [
        ("cid", c_uint8 * 16),
        ("cardinality", c_int32),
        ("category", c_char * 32),
        ("name", c_char * 64),
    ]


class PClassInfo2(Structure):
    _fields_ = [
        ("cid", c_uint8 * 16),
        ("cardinality", c_int32),
        ("category", c_char * 32),
        ("name", c_char * 64),
        ("classFlags", c_uint32),
        ("subCategories", c_char * 128),
        ("vendor", c_char * 64),
        ("version", c_char * 64),
        ("sdkVersion", c_char * 64),
    ]


class BusInfo(Structure):
    _fields_ = [
        ("mediaType", c_int32),
        ("direction", c_int32),
        ("channelCount", c_int32),
        ("name", String128),
        ("busType", c_int32),
        ("flags", c_uint32),
    ]


class ParameterInfo(Structure):
    _fields_ = [
        ("id", c_uint32),
        ("title", String128),
        ("shortTitle", String128),
        ("units", String128),
        ("stepCount", c_int32),
        ("defaultNormalizedValue", c_double),
        ("unitId", c_int32),
        ("flags", c_int32),
    ]


class ProcessSetup(Structure):
    _fields_ = [
        ("processMode", c_int32),
        ("symbolicSampleSize", c_int32),
        ("maxSamplesPerBlock", c_int32),
        ("sampleRate", c_double),
    ]


class AudioBusBuffers(Structure):
    _fields_ = [
        ("numChannels", c_int32),
        ("silenceFlags", c_uint64),
        ("channelBuffers32", POINTER(POINTER(c_float))),
    ]


class ProcessContext(Structure):
    _fields_ = [
        ("state", c_uint32),
        ("sampleRate", c_double),
        ("projectTimeSamples", c_int64),
        ("systemTime", c_int64),
        ("continousTimeSamples", c_int64),
        ("projectTimeMusic", c_double),
        ("barPositionMusic", c_double),
        ("cycleStartMusic", c_double),
        ("cycleEndMusic", c_double),
        ("tempo", c_double),
        ("timeSigNumerator", c_int32),
        ("timeSigDenominator", c_int32),
        ("chord", c_uint8 * 4),  # Chord: keyNote, rootNote (uint8 each), chordMask (int16)
        ("smpteOffsetSubframes", c_int32),
        ("frameRate", c_uint32 * 2),
        ("samplesToNextClock", c_int32),
    ]


class ProcessData(Structure):
    _fields_ = [
        ("processMode", c_int32),
        ("symbolicSampleSize", c_int32),
        ("numSamples", c_int32),
        ("numInputs", c_int32),
        ("numOutputs", c_int32),
        ("inputs", POINTER(AudioBusBuffers)),
        ("outputs", POINTER(AudioBusBuffers)),
        ("inputParameterChanges", c_void_p),
        ("outputParameterChanges", c_void_p),
        ("inputEvents", c_void_p),
        ("outputEvents", c_void_p),
        ("processContext", c_void_p),
    ]


class NoteOnEvent(Structure):
    _fields_ = [
        ("channel", c_int16),
        ("pitch", c_int16),
        ("tuning", c_float),
        ("velocity", c_float),
        ("length", c_int32),
        ("noteId", c_int32),
    ]


class NoteOffEvent(Structure):
    _fields_ = [
        ("channel", c_int16),
        ("pitch", c_int16),
        ("velocity", c_float),
        ("noteId", c_int32),
        ("tuning", c_float),
    ]


class DataEvent(Structure):
    _fields_ = [("size", c_uint32), ("type", c_uint32), ("bytes", c_void_p)]


class PolyPressureEvent(Structure):
    _fields_ = [("channel", c_int16), ("pitch", c_int16), ("pressure", c_float), ("noteId", c_int32)]


class _EventUnion(Union):
    _fields_ = [
        ("noteOn", NoteOnEvent),
        ("noteOff", NoteOffEvent),
        ("data", DataEvent),
        ("polyPressure", PolyPressureEvent),
        ("_space", c_uint64 * 3),  # the largest member (NoteExpressionTextEvent) is 24 bytes
    ]


class Event(Structure):
    _anonymous_ = ("u",)
    _fields_ = [
        ("busIndex", c_int32),
        ("sampleOffset", c_int32),
        ("ppqPosition", c_double),
        ("flags", c_uint16),
        ("type", c_uint16),
        ("u", _EventUnion),
    ]


assert ctypes.sizeof(ParameterInfo) == 792
assert ctypes.sizeof(ProcessData) == 80
assert ctypes.sizeof(AudioBusBuffers) == 24
assert ctypes.sizeof(Event) == 48


# ---------------------------------------------------------------------------------------------------- calling
_PROTOS: dict[tuple[Any, ...], Any] = {}


def proto(restype: Any, *argtypes: Any) -> Any:
    """A cached C function type with ``this`` as the first argument."""
    key = (restype, *argtypes)
    if key not in _PROTOS:
        _PROTOS[key] = CFUNCTYPE(restype, c_void_p, *argtypes)
    return _PROTOS[key]


#: method tables: interface name -> list of (name, restype, argtypes), after FUnknown's three methods
_FUNKNOWN = [
    ("queryInterface", c_int32, (c_void_p, POINTER(c_void_p))),
    ("addRef", c_uint32, ()),
    ("release", c_uint32, ()),
]
_PLUGIN_BASE = [("initialize", c_int32, (c_void_p,)), ("terminate", c_int32, ())]

METHODS: dict[str, list[tuple[str, Any, tuple[Any, ...]]]] = {
    "FUnknown": _FUNKNOWN,
    "IPluginFactory": _FUNKNOWN
    + [
        ("getFactoryInfo", c_int32, (POINTER(PFactoryInfo),)),
        ("countClasses", c_int32, ()),
        ("getClassInfo", c_int32, (c_int32, POINTER(PClassInfo))),
        ("createInstance", c_int32, (c_void_p, c_void_p, POINTER(c_void_p))),
        ("getClassInfo2", c_int32, (c_int32, POINTER(PClassInfo2))),
        ("getClassInfoUnicode", c_int32, (c_int32, c_void_p)),
        ("setHostContext", c_int32, (c_void_p,)),
    ],
    "IComponent": _FUNKNOWN
    + _PLUGIN_BASE
    + [
        ("getControllerClassId", c_int32, (c_void_p,)),
        ("setIoMode", c_int32, (c_int32,)),
        ("getBusCount", c_int32, (c_int32, c_int32)),
        ("getBusInfo", c_int32, (c_int32, c_int32, c_int32, POINTER(BusInfo))),
        ("getRoutingInfo", c_int32, (c_void_p, c_void_p)),
        ("activateBus", c_int32, (c_int32, c_int32, c_int32, c_uint8)),
        ("setActive", c_int32, (c_uint8,)),
        ("setState", c_int32, (c_void_p,)),
        ("getState", c_int32, (c_void_p,)),
    ],
    "IAudioProcessor": _FUNKNOWN
    + [
        ("setBusArrangements", c_int32, (POINTER(c_uint64), c_int32, POINTER(c_uint64), c_int32)),
        ("getBusArrangement", c_int32, (c_int32, c_int32, POINTER(c_uint64))),
        ("canProcessSampleSize", c_int32, (c_int32,)),
        ("getLatencySamples", c_uint32, ()),
        ("setupProcessing", c_int32, (POINTER(ProcessSetup),)),
        ("setProcessing", c_int32, (c_uint8,)),
        ("process", c_int32, (POINTER(ProcessData),)),
        ("getTailSamples", c_uint32, ()),
    ],
    "IEditController": _FUNKNOWN
    + _PLUGIN_BASE
    + [
        ("setComponentState", c_int32, (c_void_p,)),
        ("setState", c_int32, (c_void_p,)),
        ("getState", c_int32, (c_void_p,)),
        ("getParameterCount", c_int32, ()),
        ("getParameterInfo", c_int32, (c_int32, POINTER(ParameterInfo))),
        ("getParamStringByValue", c_int32, (c_uint32, c_double, c_void_p)),
        ("getParamValueByString", c_int32, (c_uint32, c_void_p, POINTER(c_double))),
        ("normalizedParamToPlain", c_double, (c_uint32, c_double)),
        ("plainParamToNormalized", c_double, (c_uint32, c_double)),
        ("getParamNormalized", c_double, (c_uint32,)),
        ("setParamNormalized", c_int32, (c_uint32, c_double)),
        ("setComponentHandler", c_int32, (c_void_p,)),
        ("createView", c_void_p, (c_void_p,)),
    ],
    "IConnectionPoint": _FUNKNOWN
    + [
        ("connect", c_int32, (c_void_p,)),
        ("disconnect", c_int32, (c_void_p,)),
        ("notify", c_int32, (c_void_p,)),
    ],
    "IPluginBase": _FUNKNOWN + _PLUGIN_BASE,
    "IPlugView": _FUNKNOWN
    + [
        ("isPlatformTypeSupported", c_int32, (c_char_p,)),
        ("attached", c_int32, (c_void_p, c_char_p)),
        ("removed", c_int32, ()),
        ("onWheel", c_int32, (c_float,)),
        ("onKeyDown", c_int32, (c_uint16, c_int16, c_int16)),
        ("onKeyUp", c_int32, (c_uint16, c_int16, c_int16)),
        ("getSize", c_int32, (POINTER(ViewRect),)),
        ("onSize", c_int32, (POINTER(ViewRect),)),
        ("onFocus", c_int32, (c_uint8,)),
        ("setFrame", c_int32, (c_void_p,)),
        ("canResize", c_int32, ()),
        ("checkSizeConstraint", c_int32, (POINTER(ViewRect),)),
    ],
    "IMidiMapping": _FUNKNOWN
    + [("getMidiControllerAssignment", c_int32, (c_int32, c_int16, c_int16, POINTER(c_uint32)))],
    "IEventHandler": _FUNKNOWN + [("onFDIsSet", None, (c_int32,))],
    "ITimerHandler": _FUNKNOWN + [("onTimer", None, ())],
}


class ComPtr:
    """A reference to a C++ interface pointer; ``ptr.method(args...)`` calls through the vtable.

    The number of vtable slots is not known from the pointer, so the interface name must be right: calling
    ``getClassInfo2`` on a factory that does not implement ``IPluginFactory2`` would read past its vtable.
    """

    __slots__ = ("ptr", "interface", "_bound")

    def __init__(self, ptr: int, interface: str) -> None:
        if not ptr:
            raise ValueError(f"NULL {interface} pointer")
        self.ptr = int(ptr)
        self.interface = interface
        self._bound: dict[str, Any] = {}

    def bind(self, name: str) -> Any:
        """The raw C function of method ``name`` (call it with the pointer as the first argument)."""
        fn = self._bound.get(name)
        if fn is None:
            table = METHODS[self.interface]
            for index, entry in enumerate(table):  # noqa: B007 (index is used after the loop)
                if entry[0] == name:
                    _, restype, argtypes = entry
                    break
            else:
                raise AttributeError(f"{self.interface} has no method {name}")
            vtable = ctypes.cast(self.ptr, POINTER(POINTER(c_void_p))).contents
            fn = proto(restype, *argtypes)(vtable[index])
            self._bound[name] = fn
        return fn

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        fn = self.bind(name)
        ptr = self.ptr
        return lambda *args: fn(ptr, *args)

    def query(self, iid_bytes: bytes, interface: str) -> ComPtr | None:
        """``queryInterface``: a new reference to another interface of the same object, or None."""
        out = c_void_p()
        buf = ctypes.create_string_buffer(iid_bytes, 16)
        result = self.bind("queryInterface")(self.ptr, ctypes.addressof(buf), ctypes.byref(out))
        if result != K_RESULT_OK or not out.value:
            return None
        return ComPtr(out.value, interface)

    def release(self) -> int:
        return int(self.bind("release")(self.ptr))
