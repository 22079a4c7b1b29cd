"""``LV2Plugin``: an LV2 effect or instrument hosted through ctypes over liblilv (Debian ``liblilv-0-0``)."""

from __future__ import annotations

import os
import threading

import numpy as np

from ..._base.errors import PluginLoadError
from ..external import InstalledPlugins
from ..ports import ControlPortPlugin, map_outputs
from . import state
from .abi import LV2, STATE
from .features import SUPPORTED_FEATURES
from .instance import Lv2Instance
from .ports import describe_ports
from .world import find_plugin, installed_lv2_plugins, lv2_plugin_names, plugin_classes, plugin_name_of


class LV2Plugin(ControlPortPlugin):
    """An LV2 plugin, found by URI or by bundle folder, hosted in-process through liblilv.

    Parameters
    ----------
    path_to_plugin_file : str or os.PathLike
        The plugin's URI (``"urn:zamaudio:ZamComp"``) or its bundle folder (``/usr/lib/lv2/ZamComp.lv2``, or
        a file inside it).
    parameter_values : dict, optional
        Parameter values to set after loading, by Python name (``{"threshold_db": -20}``).
    plugin_name : str, optional
        Which plugin of a bundle that describes several (its name or URI).
    initialization_timeout : float
        Accepted for compatibility (seconds); loading is synchronous.

    Notes
    -----
    Control inputs are :attr:`parameters`: float ports in their own units (range and default from the
    plugin; logarithmic ports map their normalised ``raw_value`` logarithmically), toggles as ``bool``,
    enumerations as ``str`` (their labels). Audio: a plugin with one audio input and one output processes
    each channel of a multichannel stream with its own instance (dual mono); otherwise plugin input ``j``
    gets stream channel ``j % channels`` (a stream with more channels than inputs is averaged down onto
    them) and each stream channel gets the average of the plugin outputs ``j`` with ``j % channels`` equal to
    it (a stereo plugin on a mono stream returns the mean of its outputs; a mono output is copied to every
    channel). Side-chain inputs get silence. Latency reported on a ``lv2:reportsLatency`` port is
    compensated. Instruments (MIDI input and no audio input) render MIDI as VST3 instruments do.
    A plugin that crashes takes the interpreter with it: load it with ``isolated=True`` to avoid that.
    """

    installed_plugins = InstalledPlugins(installed_lv2_plugins)

    def _describe(self) -> None:
        world, plugin = find_plugin(self._target, self._plugin_name)
        lib = world.lib
        self._world = world
        self._plugin = plugin
        with world.lock:
            self.uri = world.plugin_uri(plugin)
            self._name = plugin_name_of(world, plugin)
            self._maker = world.take_string(lib.lilv_plugin_get_author_name(plugin))
            self._classes = plugin_classes(world, plugin)
            required = lib.lilv_plugin_get_required_features(plugin)
            missing = [world.string(n) for n in world.iter_nodes(required)]
            lib.lilv_nodes_free(required)
            missing = [f for f in missing if f not in SUPPORTED_FEATURES]
            if missing:
                raise PluginLoadError(
                    f"The LV2 plugin {self.uri} requires host features stompbox does not provide: " + ", ".join(missing)
                )
            self._ports, self._controls = describe_ports(world, plugin)
            self._has_state = bool(lib.lilv_plugin_has_extension_data(plugin, world.uri(STATE + "interface")))
        audio = [p for p in self._ports if p.kind == "audio" and not p.sidechain]
        self._audio_inputs = [p.index for p in audio if p.is_input]
        self._audio_outputs = [p.index for p in audio if not p.is_input]
        self._latency_port = next(
            (p.index for p in self._ports if p.kind == "control" and not p.is_input and p.reports_latency), None
        )
        self._has_midi_in = any(p.kind == "atom" and p.is_input and p.midi for p in self._ports)
        self._is_instrument = bool(self._audio_outputs) and (
            (LV2 + "InstrumentPlugin" in self._classes and self._has_midi_in)
            or (self._has_midi_in and not self._audio_inputs)
        )
        self._latency = 0

    def _new_instance(self, sample_rate: float) -> Lv2Instance:
        return Lv2Instance(self, sample_rate)

    # ------------------------------------------------------------------ identity
    @property
    def path_to_plugin_file(self) -> str:
        """The plugin's bundle folder."""
        return self._world.bundle_path(self._plugin)

    @property
    def category(self) -> str:
        """The plugin's classes, e.g. ``"Compressor"`` or ``"Instrument"`` (``|``-separated if several)."""
        names = [c[len(LV2) :].removesuffix("Plugin") for c in self._classes if c.startswith(LV2)]
        return "|".join(n for n in names if n) or "Plugin"

    @property
    def identifier(self) -> str:
        """``LV2-<uri>``."""
        return f"LV2-{self.uri}"

    @property
    def is_instrument(self) -> bool:
        """True for an instrument: audio outputs, a MIDI input, and an instrument class or no audio input."""
        return self._is_instrument

    @property
    def is_effect(self) -> bool:
        return bool(self._audio_inputs) and not self._is_instrument

    @staticmethod
    def get_plugin_names_for_file(path: str | os.PathLike[str]) -> list[str]:
        """The names of the plugins an LV2 bundle describes."""
        return lv2_plugin_names(path)

    @property
    def control_outputs(self) -> dict[str, float]:
        """The plugin's control outputs (meters, gain reduction, latency) after the last block, by symbol."""
        if not self._instances:
            return {}
        values = self._instances[0].control_out
        return {p.symbol: float(values[p.index]) for p in self._ports if p.kind == "control" and not p.is_input}

    # ------------------------------------------------------------------ engine hooks
    def _instantiate(self, sample_rate: float, count: int) -> None:
        saved = state.save(self) if self._has_state and self._instances else None
        super()._instantiate(sample_rate, count)
        if saved:
            state.restore(self, saved)

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        super()._prepare(sample_rate, num_channels)
        self._probe_latency()

    def _probe_latency(self) -> None:
        """Run a short block of silence to learn the reported latency (the state is reset right after)."""
        if self._latency_port is None:
            return
        inst = self._instances[0]
        inst.activate()
        inst.audio_in[:, :64] = 0.0
        inst.run(64)
        self._after_blocks()

    def _after_blocks(self) -> None:
        if self._latency_port is not None:
            self._latency = max(0, int(round(float(self._instances[0].control_out[self._latency_port]))))

    def _render_block(self, events: list[tuple[int, bytes]], n: int) -> np.ndarray:
        inst = self._instances[0]
        assert isinstance(inst, Lv2Instance)
        channels = self._format[1] if self._format else 2
        if inst.midi_in is not None:
            inst.midi_in.write_midi(events)
        inst.audio_in[:, :n] = 0.0
        inst.run(n)
        out = np.zeros((channels, n), np.float32)
        map_outputs(inst.audio_out, out, n)
        return out

    @property
    def latency_samples(self) -> int:
        """The latency the plugin reports on its ``lv2:reportsLatency`` output, in samples."""
        return int(self._latency)

    # ------------------------------------------------------------------ presets and state
    @property
    def presets(self) -> dict[str, str]:
        """The presets in the plugin's bundle (and any other loaded bundle): label -> preset URI."""
        return state.presets(self)

    def load_preset(self, preset: str) -> bool:
        """Apply a preset from :attr:`presets`, by label or URI (``ValueError`` if there is no such preset).

        Returns True.
        """
        presets = self.presets
        uri = presets.get(preset, preset if preset in presets.values() else None)
        if uri is None:
            raise ValueError(f"No preset {preset!r} for {self.name}. Presets: {', '.join(presets) or 'none'}")
        state.load_preset(self, uri)
        return True

    @property
    def raw_state(self) -> bytes:
        """The plugin's state (control values and anything it saves through ``state:interface``) as Turtle
        bytes, restorable by assigning it back."""
        return state.save(self).encode()

    @raw_state.setter
    def raw_state(self, value: bytes | str) -> None:
        state.restore(self, value.decode() if isinstance(value, bytes | bytearray) else str(value))

    def show_editor(self, close_event: threading.Event | None = None) -> None:
        """Not available: stompbox hosts plugins without their editors."""
        raise RuntimeError("show_editor() is not supported by stompbox's LV2 host (no editor windows).")

    def __repr__(self) -> str:
        return f'<stompbox.LV2Plugin "{self.name}" ({self.uri}) at {id(self):#x}>'
