"""``LADSPAPlugin``: a LADSPA plugin hosted through ctypes (the C descriptor from ``ladspa_descriptor``).

A LADSPA library (``.so``) holds one or more plugins, each with a label, a unique id and a list of ports
(audio or control, input or output) with range hints. Control inputs become :attr:`parameters` with the
default hints decoded as the LADSPA header defines them (minimum/low/middle/high/maximum, 0/1/100/440, on a
logarithmic scale where the port is logarithmic; ``SAMPLE_RATE`` bounds scale with 44.1 kHz).
"""

from __future__ import annotations

import ctypes
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._base.errors import PluginLoadError
from .external import InstalledPlugins, choose_plugin
from .ports import NOMINAL_RATE, ControlPort, ControlPortPlugin, PortInstance, map_inputs, map_outputs

PORT_INPUT, PORT_OUTPUT, PORT_CONTROL, PORT_AUDIO = 0x1, 0x2, 0x4, 0x8
HINT_BOUNDED_BELOW, HINT_BOUNDED_ABOVE, HINT_TOGGLED = 0x1, 0x2, 0x4
HINT_SAMPLE_RATE, HINT_LOGARITHMIC, HINT_INTEGER = 0x8, 0x10, 0x20
HINT_DEFAULT_MASK = 0x3C0
#: LADSPA's default hints: a point of the range by name, or a fixed value
DEFAULTS: dict[int, str | float] = {
    0x40: "minimum",
    0x80: "low",
    0xC0: "middle",
    0x100: "high",
    0x140: "maximum",
    0x200: 0.0,
    0x240: 1.0,
    0x280: 100.0,
    0x2C0: 440.0,
}

SEARCH_PATHS = ("~/.ladspa", "/usr/lib/ladspa", "/usr/local/lib/ladspa", "/usr/lib/x86_64-linux-gnu/ladspa")

_HANDLE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_RUN_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_ulong)


class PortRangeHint(ctypes.Structure):
    _fields_ = [("HintDescriptor", ctypes.c_int), ("LowerBound", ctypes.c_float), ("UpperBound", ctypes.c_float)]


class LADSPA_Descriptor(ctypes.Structure):
    pass


LADSPA_Descriptor._fields_ = [
    ("UniqueID", ctypes.c_ulong),
    ("Label", ctypes.c_char_p),
    ("Properties", ctypes.c_int),
    ("Name", ctypes.c_char_p),
    ("Maker", ctypes.c_char_p),
    ("Copyright", ctypes.c_char_p),
    ("PortCount", ctypes.c_ulong),
    ("PortDescriptors", ctypes.POINTER(ctypes.c_int)),
    ("PortNames", ctypes.POINTER(ctypes.c_char_p)),
    ("PortRangeHints", ctypes.POINTER(PortRangeHint)),
    ("ImplementationData", ctypes.c_void_p),
    ("instantiate", ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(LADSPA_Descriptor), ctypes.c_ulong)),
    ("connect_port", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p)),
    ("activate", ctypes.c_void_p),
    ("run", _RUN_FN),
    ("run_adding", ctypes.c_void_p),
    ("set_run_adding_gain", ctypes.c_void_p),
    ("deactivate", ctypes.c_void_p),
    ("cleanup", ctypes.c_void_p),
]


_LIBRARIES: dict[str, tuple[ctypes.CDLL, list[Any]]] = {}


def _descriptors(path: str) -> list[Any]:
    """The descriptors a LADSPA library exports (the library stays loaded for the life of the process)."""
    real = os.path.realpath(path)
    cached = _LIBRARIES.get(real)
    if cached is not None:
        return cached[1]
    try:
        lib = ctypes.CDLL(real)
    except OSError as e:
        raise PluginLoadError(f"Unable to load LADSPA library {path}: {e}") from None
    try:
        entry = lib.ladspa_descriptor
    except AttributeError:
        raise PluginLoadError(f"{path} is not a LADSPA library (no ladspa_descriptor).") from None
    entry.restype = ctypes.POINTER(LADSPA_Descriptor)
    entry.argtypes = [ctypes.c_ulong]
    found = []
    for i in range(4096):
        d = entry(i)
        if not d:
            break
        found.append(d)
    _LIBRARIES[real] = (lib, found)
    return found


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", "replace") if raw else ""


def installed_ladspa_plugins() -> list[str]:
    """The LADSPA libraries (``.so``) in ``LADSPA_PATH`` or the standard folders (``~/.ladspa``,
    ``/usr/lib/ladspa``, ``/usr/local/lib/ladspa``), sorted within each folder."""
    env = os.environ.get("LADSPA_PATH")
    folders = env.split(":") if env else list(SEARCH_PATHS)
    found: list[str] = []
    seen: set[str] = set()
    for folder in folders:
        root = Path(os.path.expanduser(folder))
        if root.is_dir():
            for p in sorted(root.glob("*.so")):
                real = os.path.realpath(p)
                if real not in seen:
                    seen.add(real)
                    found.append(str(p))
    return found


def ladspa_plugin_labels(path: str | os.PathLike[str]) -> list[str]:
    """The labels of the plugins in a LADSPA library."""
    return [_text(d.contents.Label) for d in _descriptors(os.fspath(path))]


def _default_value(hint: int, low: float, high: float, log: bool) -> float | None:
    kind = DEFAULTS.get(hint & HINT_DEFAULT_MASK)
    if kind is None:
        return None
    if isinstance(kind, float):
        return kind
    if kind == "minimum":
        return low
    if kind == "maximum":
        return high
    weight = {"low": 0.25, "middle": 0.5, "high": 0.75}[kind]
    if log and low > 0 and high > 0:
        return math.exp(math.log(low) * (1 - weight) + math.log(high) * weight)
    return low * (1 - weight) + high * weight


def _control_port(index: int, name: str, hint: PortRangeHint, rate: float) -> ControlPort:
    h = hint.HintDescriptor
    scale = rate if h & HINT_SAMPLE_RATE else 1.0
    toggled = bool(h & HINT_TOGGLED)
    low = float(hint.LowerBound) * scale if h & HINT_BOUNDED_BELOW else None
    high = float(hint.UpperBound) * scale if h & HINT_BOUNDED_ABOVE else None
    log = bool(h & HINT_LOGARITHMIC)
    if toggled:
        low, high = 0.0, 1.0
    default = _default_value(h, low if low is not None else 0.0, high if high is not None else 1.0, log)
    if low is None:
        low = min(0.0, default if default is not None else 0.0, high if high is not None else 0.0)
    if high is None:
        high = max(low + 1.0, default if default is not None else low)
    if default is None:
        default = min(max(0.0, low), high)
    if h & HINT_INTEGER:
        default = float(round(default))
    unit = ""
    label = name
    if name.endswith(")") and "(" in name:  # "Delay (ms)": the unit is in the name, as LADSPA has no units
        head, _, tail = name.rpartition("(")
        if 0 < len(tail) - 1 <= 6 and head.strip():
            label, unit = head.strip(), tail[:-1].strip()
    return ControlPort(
        index=index,
        symbol=name,
        name=label,
        minimum=low,
        maximum=high,
        default=min(max(default, low), high),
        unit=unit,
        toggled=toggled,
        integer=bool(h & HINT_INTEGER),
        logarithmic=log,
    )


class _Instance(PortInstance):
    def __init__(self, owner: LADSPAPlugin, sample_rate: float) -> None:
        d = owner._descriptor
        desc = d.contents
        handle = desc.instantiate(d, int(round(sample_rate)))
        if not handle:
            raise PluginLoadError(f"The LADSPA plugin {owner.label} failed to instantiate at {sample_rate:g} Hz.")
        self.handle = handle
        self._run = desc.run
        self._run_adding = _RUN_FN(desc.run_adding) if desc.run_adding else None
        self._set_gain = (
            ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_float)(desc.set_run_adding_gain)
            if desc.set_run_adding_gain
            else None
        )
        self._activate_fn = _HANDLE_FN(desc.activate) if desc.activate else None
        self._deactivate_fn = _HANDLE_FN(desc.deactivate) if desc.deactivate else None
        self._cleanup = _HANDLE_FN(desc.cleanup) if desc.cleanup else None
        self._connect(desc.connect_port, owner, owner._control_out_ports, owner._port_count)
        self.activate()

    def run(self, n: int) -> None:
        self._run(self.handle, n)

    def run_adding(self, n: int, gain: float) -> None:
        """The plugin's ``run_adding``: its output times ``gain`` added to what the output buffers hold."""
        if self._run_adding is None:
            self._run(self.handle, n)
            return
        if self._set_gain is not None:
            self._set_gain(self.handle, gain)
        self._run_adding(self.handle, n)

    def _destroy(self) -> None:
        if self._cleanup is not None:
            self._cleanup(self.handle)


class LADSPAPlugin(ControlPortPlugin):
    """A plugin from a LADSPA library, hosted in-process.

    Parameters
    ----------
    path_to_plugin_file : str or os.PathLike
        The library (``/usr/lib/ladspa/amp_1181.so``, or a file name found in the LADSPA folders).
    parameter_values : dict, optional
        Parameter values to set after loading, by Python name.
    plugin_name : str or int, optional
        Which plugin of a library that holds several: its label (``"amp_mono"``), its name, or its unique id.
    initialization_timeout : float
        Accepted for compatibility (seconds).

    Notes
    -----
    A control input named like ``"Delay (ms)"`` becomes ``delay_ms`` with unit ``"ms"``. Audio ports map onto
    the stream's channels as for LV2 (one instance per channel for mono plugins). Set
    :attr:`run_adding_gain` to a number to call the plugin's ``run_adding``: the output is then the dry input
    plus ``gain`` times the plugin's output (plugins without ``run_adding`` ignore it).
    """

    installed_plugins = InstalledPlugins(installed_ladspa_plugins)

    def _describe(self) -> None:
        path = _resolve(self._target)
        descriptors = _descriptors(path)
        if not descriptors:
            raise PluginLoadError(f"The LADSPA library {path} holds no plugins.")
        d = choose_plugin(path, descriptors, self._plugin_name, _names, "labels", lambda c: _text(c.contents.Name))
        desc = d.contents
        self._target = path
        self._descriptor = d
        self.label = _text(desc.Label)
        self.unique_id = int(desc.UniqueID)
        self._name = _text(desc.Name)
        self._maker = _text(desc.Maker)
        self._port_count = int(desc.PortCount)
        self._controls = []
        self._audio_inputs = []
        self._audio_outputs = []
        self._control_out_ports: list[int] = []
        self._control_out_names: dict[int, str] = {}
        for i in range(self._port_count):
            kind = desc.PortDescriptors[i]
            name = _text(desc.PortNames[i])
            if kind & PORT_AUDIO:
                (self._audio_inputs if kind & PORT_INPUT else self._audio_outputs).append(i)
            elif kind & PORT_CONTROL and kind & PORT_INPUT:
                self._controls.append(_control_port(i, name, desc.PortRangeHints[i], NOMINAL_RATE))
            elif kind & PORT_CONTROL:
                self._control_out_ports.append(i)
                self._control_out_names[i] = name
        self.run_adding_gain: float | None = None

    def _new_instance(self, sample_rate: float) -> _Instance:
        return _Instance(self, sample_rate)

    # ------------------------------------------------------------------ identity
    @property
    def identifier(self) -> str:
        """``LADSPA-<label>-<unique id>``."""
        return f"LADSPA-{self.label}-{self.unique_id}"

    @property
    def is_instrument(self) -> bool:
        return False

    @property
    def is_effect(self) -> bool:
        return bool(self._audio_inputs)

    @property
    def has_run_adding(self) -> bool:
        """True if the plugin implements ``run_adding``."""
        return bool(self._descriptor.contents.run_adding)

    @staticmethod
    def get_plugin_names_for_file(path: str | os.PathLike[str]) -> list[str]:
        """The labels of the plugins in a LADSPA library."""
        return ladspa_plugin_labels(_resolve(os.fspath(path)))

    @property
    def control_outputs(self) -> dict[str, float]:
        """The plugin's control outputs after the last block, by port name."""
        if not self._instances:
            return {}
        values = self._instances[0].control_out
        return {name: float(values[i]) for i, name in self._control_out_names.items()}

    # ------------------------------------------------------------------ engine hooks
    def _run_instance(self, inst: PortInstance, piece: np.ndarray, m: int) -> None:
        gain = self.run_adding_gain
        if gain is None or not self.has_run_adding:
            super()._run_instance(inst, piece, m)
            return
        assert isinstance(inst, _Instance)
        # run_adding: the output buffers hold the dry input, to which the plugin adds its output times gain
        map_inputs(inst.audio_in, piece, m)
        map_inputs(inst.audio_out, piece, m)
        inst.run_adding(m, float(gain))
        map_outputs(inst.audio_out, piece, m)

    # ------------------------------------------------------------------ state
    @property
    def raw_state(self) -> bytes:
        """The control values as float32 bytes (LADSPA plugins have no other state); settable."""
        return self._control_values.tobytes()

    @raw_state.setter
    def raw_state(self, value: bytes) -> None:
        values = np.frombuffer(bytes(value), np.float32)
        if values.shape != self._control_values.shape:
            raise ValueError(f"raw_state holds {values.size} values; {self.label} has {self._control_values.size}.")
        with self._lock:
            self._control_values[:] = values

    def __repr__(self) -> str:
        return f'<stompbox.LADSPAPlugin "{self.name}" ({self.label}, {self.unique_id}) at {id(self):#x}>'


def _names(descriptor: Any) -> tuple[str, str, str]:
    """How ``plugin_name`` may name a plugin of a library: its label, its name, its unique id."""
    c = descriptor.contents
    return _text(c.Label), _text(c.Name), str(int(c.UniqueID))


def _resolve(path: str) -> str:
    if os.path.exists(path):
        return path
    if os.sep not in path:
        for candidate in installed_ladspa_plugins():
            if os.path.basename(candidate) in (path, path + ".so"):
                return candidate
    raise PluginLoadError(f"No LADSPA library at {path!r}.")
