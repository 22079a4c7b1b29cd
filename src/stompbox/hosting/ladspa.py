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
from .external import ControlPort, ControlPortPlugin, map_inputs, map_outputs

MAX_BLOCK = 8192
#: the sample rate that ``SAMPLE_RATE``-hinted bounds are given for in :attr:`parameters`
NOMINAL_RATE = 44100.0

PORT_INPUT, PORT_OUTPUT, PORT_CONTROL, PORT_AUDIO = 0x1, 0x2, 0x4, 0x8
HINT_BOUNDED_BELOW, HINT_BOUNDED_ABOVE, HINT_TOGGLED = 0x1, 0x2, 0x4
HINT_SAMPLE_RATE, HINT_LOGARITHMIC, HINT_INTEGER = 0x8, 0x10, 0x20
HINT_DEFAULT_MASK = 0x3C0
DEFAULTS = {
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


class _Instance:
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
        self._activate = _HANDLE_FN(desc.activate) if desc.activate else None
        self._deactivate = _HANDLE_FN(desc.deactivate) if desc.deactivate else None
        self._cleanup = _HANDLE_FN(desc.cleanup) if desc.cleanup else None
        self.audio_in = np.zeros((len(owner._audio_in_ports), MAX_BLOCK), np.float32)
        self.audio_out = np.zeros((len(owner._audio_out_ports), MAX_BLOCK), np.float32)
        self.control_out = np.zeros(max(1, owner._port_count), np.float32)
        connect = desc.connect_port
        for i, p in enumerate(owner._audio_in_ports):
            connect(handle, p, self.audio_in[i].ctypes.data)
        for i, p in enumerate(owner._audio_out_ports):
            connect(handle, p, self.audio_out[i].ctypes.data)
        values = owner._control_values
        for i, c in enumerate(owner._controls):
            connect(handle, c.index, values[i : i + 1].ctypes.data)
        for p in owner._control_out_ports:
            connect(handle, p, self.control_out[p : p + 1].ctypes.data)
        self.active = False
        self.activate()

    def activate(self) -> None:
        if not self.active:
            if self._activate is not None:
                self._activate(self.handle)
            self.active = True

    def deactivate(self) -> None:
        if self.active:
            if self._deactivate is not None:
                self._deactivate(self.handle)
            self.active = False

    def run(self, n: int, adding_gain: float | None) -> None:
        if adding_gain is not None and self._run_adding is not None:
            if self._set_gain is not None:
                self._set_gain(self.handle, adding_gain)
            self._run_adding(self.handle, n)
        else:
            self._run(self.handle, n)

    def free(self) -> None:
        if self.handle:
            self.deactivate()
            if self._cleanup is not None:
                self._cleanup(self.handle)
            self.handle = None


class _InstalledPlugins:
    def __get__(self, obj: Any, owner: Any) -> list[str]:
        return installed_ladspa_plugins()


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

    installed_plugins = _InstalledPlugins()

    def __init__(
        self,
        path_to_plugin_file: str | os.PathLike[str],
        parameter_values: dict[str, Any] | None = None,
        plugin_name: str | int | None = None,
        initialization_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        if parameter_values is not None and not isinstance(parameter_values, dict):
            raise TypeError(
                "Expected a dictionary to be passed to parameter_values, but received a "
                f'{type(parameter_values).__name__}. (If passing a plugin name, pass "plugin_name=..." as a '
                "keyword argument instead.)"
            )
        path = _resolve(os.fspath(path_to_plugin_file))
        descriptors = _descriptors(path)
        if not descriptors:
            raise PluginLoadError(f"The LADSPA library {path} holds no plugins.")
        d = _choose(path, descriptors, plugin_name)
        desc = d.contents
        self._path = path
        self._plugin_name = plugin_name
        self._descriptor = d
        self.label = _text(desc.Label)
        self.unique_id = int(desc.UniqueID)
        self._name = _text(desc.Name)
        self._maker = _text(desc.Maker)
        self._port_count = int(desc.PortCount)
        controls: list[ControlPort] = []
        self._audio_in_ports: list[int] = []
        self._audio_out_ports: list[int] = []
        self._control_out_ports: list[int] = []
        self._control_out_names: dict[int, str] = {}
        for i in range(self._port_count):
            kind = desc.PortDescriptors[i]
            name = _text(desc.PortNames[i])
            if kind & PORT_AUDIO:
                (self._audio_in_ports if kind & PORT_INPUT else self._audio_out_ports).append(i)
            elif kind & PORT_CONTROL and kind & PORT_INPUT:
                controls.append(_control_port(i, name, desc.PortRangeHints[i], NOMINAL_RATE))
            elif kind & PORT_CONTROL:
                self._control_out_ports.append(i)
                self._control_out_names[i] = name
        self._controls = controls
        self._control_values = np.array([c.default for c in controls], np.float32)
        self._instances: list[_Instance] = [_Instance(self, NOMINAL_RATE)]
        self._rate = NOMINAL_RATE
        self.run_adding_gain: float | None = None
        self._loaded = True
        self._set_initial_parameter_values(parameter_values)

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return self._name

    @property
    def descriptive_name(self) -> str:
        return self._name

    @property
    def manufacturer_name(self) -> str:
        return self._maker

    @property
    def path_to_plugin_file(self) -> str:
        return self._path

    @property
    def identifier(self) -> str:
        """``LADSPA-<label>-<unique id>``."""
        return f"LADSPA-{self.label}-{self.unique_id}"

    @property
    def category(self) -> str:
        return ""

    @property
    def version(self) -> str:
        return ""

    @property
    def is_instrument(self) -> bool:
        return False

    @property
    def is_effect(self) -> bool:
        return bool(self._audio_in_ports)

    @property
    def num_audio_inputs(self) -> int:
        return len(self._audio_in_ports)

    @property
    def num_audio_outputs(self) -> int:
        return len(self._audio_out_ports)

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
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        wanted = num_channels if (len(self._audio_in_ports) == 1 and len(self._audio_out_ports) == 1) else 1
        if self._rate == sample_rate and len(self._instances) == wanted:
            return
        self._free_instances()
        self._instances = [_Instance(self, sample_rate) for _ in range(max(1, wanted))]
        self._rate = sample_rate

    def _reset_state(self) -> None:
        for inst in self._instances:
            inst.deactivate()
            inst.activate()

    def _process(self, block: np.ndarray) -> np.ndarray:
        n = block.shape[1]
        gain = self.run_adding_gain
        adding = gain is not None and self.has_run_adding
        insts = self._instances
        for start in range(0, n, MAX_BLOCK):
            m = min(MAX_BLOCK, n - start)
            piece = block[:, start : start + m]
            if len(insts) > 1:
                for c, inst in enumerate(insts):
                    inst.audio_in[0, :m] = piece[c]
                    if adding:
                        inst.audio_out[0, :m] = piece[c]
                    inst.run(m, float(gain) if adding else None)  # type: ignore[arg-type]
                    piece[c] = inst.audio_out[0, :m]
            else:
                inst = insts[0]
                map_inputs(inst.audio_in, piece, m)
                if adding:
                    map_inputs(inst.audio_out, piece, m)
                inst.run(m, float(gain) if adding else None)  # type: ignore[arg-type]
                map_outputs(inst.audio_out, piece, m)
        return block

    # ------------------------------------------------------------------ state, copies, teardown
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

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self._path, "plugin_name": self._plugin_name, "raw_state": self.raw_state}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.__init__(data["path"], plugin_name=data.get("plugin_name"))  # type: ignore[misc]
        self.raw_state = data["raw_state"]

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_new_ladspa, (), self.__getstate__())

    def _free_instances(self) -> None:
        for inst in self._instances:
            inst.free()
        self._instances = []
        self._rate = 0.0

    def close(self) -> None:
        """Release the plugin instances now (otherwise done when garbage-collected)."""
        if "_instances" in self.__dict__:
            with self._lock:
                self._free_instances()
                self._forget_format()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f'<stompbox.LADSPAPlugin "{self.name}" ({self.label}, {self.unique_id}) at {id(self):#x}>'


def _new_ladspa() -> LADSPAPlugin:
    return LADSPAPlugin.__new__(LADSPAPlugin)


def _resolve(path: str) -> str:
    if os.path.exists(path):
        return path
    if os.sep not in path:
        for candidate in installed_ladspa_plugins():
            if os.path.basename(candidate) in (path, path + ".so"):
                return candidate
    raise PluginLoadError(f"No LADSPA library at {path!r}.")


def _choose(path: str, descriptors: list[Any], plugin_name: str | int | None) -> Any:
    if plugin_name is None:
        if len(descriptors) > 1:
            names = "\n".join(f'\t"{_text(d.contents.Label)}" ({_text(d.contents.Name)})' for d in descriptors)
            raise ValueError(
                f'Plugin file {path} contains {len(descriptors)} plugins, and the "plugin_name" argument was '
                "not provided. Please specify which plugin to load by passing one of the following labels as "
                f'"plugin_name":\n{names}'
            )
        return descriptors[0]
    key = str(plugin_name)
    for d in descriptors:
        c = d.contents
        if key in (_text(c.Label), _text(c.Name), str(int(c.UniqueID))):
            return d
    names = "\n".join(f'\t"{_text(d.contents.Label)}"' for d in descriptors)
    raise ValueError(f'Plugin file {path} does not contain a plugin named "{plugin_name}". Valid names:\n{names}')
