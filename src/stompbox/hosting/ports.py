"""Port-based plugin formats (LV2, LADSPA): control ports as parameters, and the instances a plugin runs.

A port-based plugin is described port by port: audio inputs and outputs, control inputs (one float each that
the host owns: :class:`ControlPort`, shown as a :class:`PortParameter`) and control outputs. The host
instantiates the plugin at a sample rate, connects each port to a buffer, activates it and runs it on blocks of
at most :data:`MAX_BLOCK` samples. :class:`ControlPortPlugin` holds what LV2 and LADSPA share: the control
values, the instances (one per channel for a plugin with one audio input and one output: dual mono), the block
loop that maps a stream's channels onto the plugin's ports, reset and release; :class:`PortInstance` the
activation and teardown of one instance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .external import (
    SEARCH_STEPS,
    TRUE_STRINGS,
    AudioProcessorParameter,
    ExternalPlugin,
    ParameterAccess,
    ParameterDescriptor,
    python_parameter_name,
    strip_float_suffixes,
)

#: the largest block handed to a port-based plugin in one run (longer blocks are split)
MAX_BLOCK = 8192
#: the sample rate a plugin is instantiated at when it is loaded (``SAMPLE_RATE``-hinted LADSPA bounds are
#: given for it)
NOMINAL_RATE = 44100.0


# ---------------------------------------------------------------------------------------------------- control ports
@dataclass(frozen=True)
class ControlPort:
    """A control input of a port-based plugin (LV2, LADSPA): one float the host owns, with its metadata.

    ``scale_points`` are ``(value, label)`` pairs sorted by value; with ``enumeration`` the port takes only
    those values.
    """

    index: int
    symbol: str
    name: str
    minimum: float
    maximum: float
    default: float
    unit: str = ""
    toggled: bool = False
    integer: bool = False
    logarithmic: bool = False
    enumeration: bool = False
    scale_points: tuple[tuple[float, str], ...] = ()

    @property
    def choices(self) -> tuple[tuple[float, str], ...]:
        """The values an enumeration port takes (empty for other ports)."""
        return self.scale_points if self.enumeration and self.scale_points and not self.toggled else ()

    @property
    def num_steps(self) -> int:
        if self.toggled:
            return 1
        if self.choices:
            return max(1, len(self.choices) - 1)
        if self.integer and self.maximum > self.minimum:
            return int(round(self.maximum - self.minimum))
        return 0

    def _log(self) -> bool:
        return self.logarithmic and self.minimum > 0 and self.maximum > self.minimum

    def to_raw(self, value: float) -> float:
        """The normalised [0, 1] position of a value."""
        value = float(value)
        if self.toggled:
            return 1.0 if value > 0 else 0.0
        choices = self.choices
        if choices:
            if len(choices) == 1:
                return 0.0
            best = min(range(len(choices)), key=lambda i: abs(choices[i][0] - value))
            return best / (len(choices) - 1)
        low, high = self.minimum, self.maximum
        if not high > low:
            return 0.0
        value = min(max(value, low), high)
        if self._log():
            return math.log(value / low) / math.log(high / low)
        return (value - low) / (high - low)

    def from_raw(self, raw: float) -> float:
        """The value at a normalised position (rounded for integer ports, snapped for enumerations)."""
        raw = min(max(float(raw), 0.0), 1.0)
        if self.toggled:
            return (self.maximum if self.maximum > 0 else 1.0) if raw >= 0.5 else 0.0
        choices = self.choices
        if choices:
            return choices[int(round(raw * (len(choices) - 1)))][0]
        low, high = self.minimum, self.maximum
        if not high > low:
            return low
        value = low * (high / low) ** raw if self._log() else low + raw * (high - low)
        if self.integer:
            value = float(round(value))
        return min(max(value, low), high)

    def text(self, value: float) -> str:
        """How a value is shown: "On"/"Off", an enumeration's label, or the number."""
        if self.toggled:
            return "On" if value > 0 else "Off"
        for point, label in self.choices:
            if point == value:
                return label
        if self.integer:
            return str(int(round(value)))
        return f"{value:.7g}"

    def parse(self, text: str) -> float | None:
        """The value for a text (a label, "On"/"Off" or a number with an optional unit), or None."""
        text = str(text).strip()
        for point, label in self.scale_points:
            if label == text:
                return point
        if self.toggled and text.lower() in TRUE_STRINGS | {"off", "no", "false", "disabled"}:
            return 1.0 if text.lower() in TRUE_STRINGS else 0.0
        if self.unit and text.endswith(self.unit):
            text = text[: -len(self.unit)]
        try:
            return float(strip_float_suffixes(text))
        except ValueError:
            return None


class PortParameter(AudioProcessorParameter):
    """A parameter backed by a :class:`ControlPort`: its type, range, default and choices come from the
    plugin's own description, so nothing is inferred by scanning.

    ``type`` is ``bool`` for toggles, ``str`` for enumerations (``valid_values`` are the labels) and
    ``float`` otherwise (``step_size`` 1 for integer ports). Values are set exactly (not snapped to a grid of
    1001 points as for VST3); ``port`` holds the description.
    """

    def __init__(self, plugin: ParameterAccess, descriptor: ParameterDescriptor, *, port: ControlPort) -> None:
        self.port = port
        super().__init__(plugin, *descriptor, search_steps=0)

    def _scan(self, steps: int) -> None:
        port = self.port
        self.approximate_step_size = None
        self.step_size = None
        if port.toggled:
            self.type = bool
            self.min_value, self.max_value, self.step_size = False, True, 1
            ranges: dict[tuple[float, float], Any] = {(0.0, 0.5): False, (0.5, 1.0): True}
        elif port.choices:
            self.type = str
            self.min_value = self.max_value = None
            n = len(port.choices)
            ranges = {}
            for i, (_value, label) in enumerate(port.choices):
                low = 0.0 if n == 1 else max(0.0, (i - 0.5) / (n - 1))
                high = 1.0 if n == 1 else min(1.0, (i + 0.5) / (n - 1))
                ranges[(low, high)] = label
        else:
            self.type = float
            self.min_value, self.max_value = float(port.minimum), float(port.maximum)
            ranges = {}
            if port.integer:
                self.step_size = 1.0
                if port.maximum - port.minimum <= SEARCH_STEPS:
                    for v in range(int(round(port.minimum)), int(round(port.maximum)) + 1):
                        raw = port.to_raw(v)
                        ranges[(raw, raw)] = float(v)
        self.ranges = ranges
        self.valid_values = list(ranges.values())
        self.range = (self.min_value, self.max_value, self.step_size)
        self._raw_ranges = {value: span for span, value in ranges.items()}

    @property
    def default_value(self) -> Any:
        """The plugin's default, typed like :attr:`value`."""
        return self._typed(self.port.default)

    def _typed(self, value: float) -> Any:
        if self.type is bool:
            return value > 0
        if self.type is str:
            return self.port.text(value)
        return float(f"{value:.7g}")

    @property
    def value(self) -> Any:
        """The current value: float (in the port's units), bool or str (an enumeration's label)."""
        return self._typed(self._plugin._port_value(self.index))

    def get_text_for_raw_value(self, raw_value: float, maximum_string_length: int = 512) -> str:
        return self.port.text(self.port.from_raw(raw_value))[:maximum_string_length]

    def get_raw_value_for_text(self, string_value: str) -> float:
        value = self.port.parse(string_value)
        if value is None:
            raise ValueError(f"Plugin parameter '{self.name}' could not parse {string_value!r}.")
        return self.port.to_raw(value)

    def get_raw_value_for(self, new_value: float | str | bool) -> float:
        port = self.port
        if self.type is float:
            if isinstance(new_value, bool):
                new_value = float(new_value)
            number = port.parse(new_value) if isinstance(new_value, str) else None
            if number is None:
                try:
                    number = float(new_value)
                except (TypeError, ValueError):
                    raise self._not_a_number(new_value) from None
            if not self.min_value <= number <= self.max_value:
                raise self._out_of_range(new_value)
            return port.to_raw(number)
        if self.type is str:
            text = str(new_value)
            for value, label in port.choices:
                if text == label:
                    return port.to_raw(value)
            if isinstance(new_value, int | float) and not isinstance(new_value, bool):
                for value, _label in port.choices:
                    if value == new_value:
                        return port.to_raw(value)
            raise self._not_valid(text)
        return super().get_raw_value_for(new_value)


# ---------------------------------------------------------------------------------------------------- instances
class PortInstance:
    """One instance of a port-based plugin: its audio buffers and control outputs connected, activated.

    A format's instance calls :meth:`_connect` once its C handle exists and sets ``_activate_fn`` and
    ``_deactivate_fn`` (the plugin's optional callbacks) and :meth:`_destroy` (the format's cleanup).
    """

    handle: Any = None
    active = False
    _activate_fn: Callable[[Any], None] | None = None
    _deactivate_fn: Callable[[Any], None] | None = None

    def _connect(
        self,
        connect: Callable[[Any, int, Any], None],
        owner: ControlPortPlugin,
        control_outputs: list[int],
        num_ports: int,
    ) -> None:
        """Connect the audio ports to ``audio_in``/``audio_out`` (``(ports, MAX_BLOCK)`` float32), the control
        inputs to the owner's control values, and the control outputs to ``control_out`` (one float per port
        index)."""
        self.audio_in = np.zeros((len(owner._audio_inputs), MAX_BLOCK), np.float32)
        self.audio_out = np.zeros((len(owner._audio_outputs), MAX_BLOCK), np.float32)
        self.control_out = np.zeros(max(1, num_ports), np.float32)
        for i, index in enumerate(owner._audio_inputs):
            connect(self.handle, index, self.audio_in[i].ctypes.data)
        for i, index in enumerate(owner._audio_outputs):
            connect(self.handle, index, self.audio_out[i].ctypes.data)
        values = owner._control_values
        for i, port in enumerate(owner._controls):
            connect(self.handle, port.index, values[i : i + 1].ctypes.data)
        for index in control_outputs:
            connect(self.handle, index, self.control_out[index : index + 1].ctypes.data)

    def activate(self) -> None:
        if not self.active:
            if self._activate_fn is not None:
                self._activate_fn(self.handle)
            self.active = True

    def deactivate(self) -> None:
        if self.active:
            if self._deactivate_fn is not None:
                self._deactivate_fn(self.handle)
            self.active = False

    def run(self, n: int) -> None:
        """Run the plugin on the first ``n`` samples of the connected buffers."""
        raise NotImplementedError

    def free(self) -> None:
        """Deactivate and destroy the instance (once)."""
        if self.handle:
            self.deactivate()
            self._destroy()
            self.handle = None

    def _destroy(self) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------------- plugins
class ControlPortPlugin(ExternalPlugin):
    """What the port-based formats (LV2, LADSPA) share: the host owns one float32 per control input
    (``_control_values``, described by ``_controls``) and connects the plugin's instances to it.

    A format's :meth:`_describe` finds the plugin and lists its ports (``_controls``, and the port indices of
    the audio inputs and outputs in ``_audio_inputs``/``_audio_outputs``); :meth:`_new_instance` makes one
    :class:`PortInstance`. A plugin with one audio input and one output runs one instance per channel (dual
    mono); any other runs one instance, with the stream's channels mapped onto its ports (:func:`map_inputs`,
    :func:`map_outputs`).
    """

    _abstract = True
    _controls: list[ControlPort]
    _control_values: np.ndarray
    _audio_inputs: list[int]
    _audio_outputs: list[int]
    _instances: list[PortInstance]
    _rate: float

    # ------------------------------------------------------------------ to implement
    def _describe(self) -> None:
        """Find the plugin and set ``_controls``, ``_audio_inputs`` and ``_audio_outputs``."""
        raise NotImplementedError

    def _new_instance(self, sample_rate: float) -> PortInstance:
        raise NotImplementedError

    def _after_blocks(self) -> None:
        """Read what the plugin reported while processing (LV2: its latency)."""

    # ------------------------------------------------------------------ identity
    _name: str
    _maker: str

    @property
    def name(self) -> str:
        """The plugin's name, as its description gives it."""
        return self._name

    @property
    def manufacturer_name(self) -> str:
        """The plugin's author, as its description gives it."""
        return self._maker

    # ------------------------------------------------------------------ lifecycle
    def _load(self) -> None:
        self._describe()
        self._control_values = np.array([c.default for c in self._controls], np.float32)
        self._instances = []
        self._rate = 0.0
        self._instantiate(NOMINAL_RATE, 1)  # fail at load time, not on first use

    def _instantiate(self, sample_rate: float, count: int) -> None:
        """Replace the instances by ``count`` new ones at ``sample_rate``."""
        self._free_instances()
        self._instances = [self._new_instance(sample_rate) for _ in range(count)]
        self._rate = sample_rate

    def _free_instances(self) -> None:
        for inst in self._instances:
            inst.free()
        self._instances = []
        self._rate = 0.0

    def _release(self) -> None:
        if "_instances" in self.__dict__:
            self._free_instances()

    @property
    def num_audio_inputs(self) -> int:
        return len(self._audio_inputs)

    @property
    def num_audio_outputs(self) -> int:
        return len(self._audio_outputs)

    # ------------------------------------------------------------------ engine hooks
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        dual_mono = len(self._audio_inputs) == 1 and len(self._audio_outputs) == 1
        wanted = max(1, num_channels) if dual_mono else 1
        if self._rate != sample_rate or len(self._instances) != wanted:
            self._instantiate(sample_rate, wanted)

    def _reset_state(self) -> None:
        for inst in self._instances:
            inst.deactivate()
            inst.activate()

    def _process(self, block: np.ndarray) -> np.ndarray:
        n = block.shape[1]
        insts = self._instances
        for start in range(0, n, MAX_BLOCK):
            m = min(MAX_BLOCK, n - start)
            piece = block[:, start : start + m]
            if len(insts) > 1:  # dual mono: channel c through instance c
                for c, inst in enumerate(insts):
                    self._run_instance(inst, piece[c : c + 1], m)
            else:
                self._run_instance(insts[0], piece, m)
        self._after_blocks()
        return block

    def _run_instance(self, inst: PortInstance, piece: np.ndarray, m: int) -> None:
        """Run one instance on ``m`` samples of a ``(channels, m)`` piece of the block, in place."""
        map_inputs(inst.audio_in, piece, m)
        inst.run(m)
        map_outputs(inst.audio_out, piece, m)

    # ------------------------------------------------------------------ parameters
    def _parameter_descriptors(self) -> Iterator[ParameterDescriptor]:
        seen: set[str | None] = set()
        for i, port in enumerate(self._controls):
            name = port.name or port.symbol
            if python_parameter_name(name, port.unit) in seen:
                name = f"{name} {port.symbol}"
            seen.add(python_parameter_name(name, port.unit))
            yield (i, name, port.unit, port.to_raw(port.default), port.num_steps, True)

    def _new_parameter(self, desc: ParameterDescriptor) -> AudioProcessorParameter:
        return PortParameter(self, desc, port=self._controls[desc[0]])

    def _port_value(self, index: int) -> float:
        return float(self._control_values[index])

    def _param_raw(self, index: int) -> float:
        return self._controls[index].to_raw(float(self._control_values[index]))

    def _param_set_raw(self, index: int, value: float) -> None:
        with self._lock:
            self._control_values[index] = self._controls[index].from_raw(value)

    def _param_text(self, index: int, raw: float) -> str | None:
        port = self._controls[index]
        return port.text(port.from_raw(raw))

    def _param_raw_for_text(self, index: int, text: str) -> float | None:
        port = self._controls[index]
        value = port.parse(text)
        return None if value is None else port.to_raw(value)

    def _set_port_by_symbol(self, symbol: str, value: float) -> bool:
        for i, port in enumerate(self._controls):
            if port.symbol == symbol:
                self._control_values[i] = value
                return True
        return False

    @property
    def port_values(self) -> dict[str, float]:
        """The control inputs by port symbol (the plugin's own names), in the ports' units."""
        return {p.symbol: float(v) for p, v in zip(self._controls, self._control_values, strict=True)}


def map_inputs(plugin_in: np.ndarray, block: np.ndarray, m: int) -> None:
    """Copy a ``(channels, m)`` block onto a plugin's ``(inputs, >= m)`` buffers: input ``j`` gets channel
    ``j % channels``; with more channels than inputs, input ``j`` gets the mean of channels ``j``,
    ``j + inputs``, ..."""
    n_in, channels = plugin_in.shape[0], block.shape[0]
    if n_in == channels:
        plugin_in[:, :m] = block
    elif channels < n_in:
        for j in range(n_in):
            plugin_in[j, :m] = block[j % channels]
    else:
        for j in range(n_in):
            plugin_in[j, :m] = block[j::n_in].mean(axis=0)


def map_outputs(plugin_out: np.ndarray, block: np.ndarray, m: int) -> None:
    """Write a plugin's ``(outputs, >= m)`` buffers into a ``(channels, m)`` block: channel ``c`` gets the
    mean of outputs ``c``, ``c + channels``, ... (a stereo plugin on a mono stream gives the mean of its two
    outputs), or output ``c % outputs`` when there are fewer outputs (a mono output feeds every channel). A
    plugin without audio outputs leaves the block as it is (analysers pass the audio through)."""
    n_out, channels = plugin_out.shape[0], block.shape[0]
    if n_out == 0:
        return
    if n_out == channels:
        block[...] = plugin_out[:, :m]
    elif n_out > channels:
        for c in range(channels):
            block[c] = plugin_out[c:n_out:channels, :m].mean(axis=0)
    else:
        for c in range(channels):
            block[c] = plugin_out[c % n_out, :m]
