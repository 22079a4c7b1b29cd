"""Third-party plugins as stompbox plugins: :class:`ExternalPlugin` and :class:`AudioProcessorParameter`.

Parameters are presented the way pedalboard 0.9.26 presents them: each plugin parameter gets a snake_case
Python name (its name plus its unit label, ``"Threshold"`` + ``"dB"`` -> ``threshold_db``), and its type and
range are inferred by asking the plugin for the text of 1001 evenly spaced raw values (0, 0.001, ..., 1):
a parameter whose texts all read as numbers is a float with ``min_value``/``max_value`` and a (possibly
approximate) step; one with two texts such as "On"/"Off" is a bool; anything else is a string with
``valid_values``. ``plugin.<name>`` reads the value (from the plugin's own text) and ``plugin.<name> = v``
converts ``v`` through the plugin's text parser, checking the range first.
"""

from __future__ import annotations

import base64
import os
import re
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from .._base.enums import PedalboardEnum
from ..core import Plugin
from ..core.layout import check_buffer_size, check_sample_rate
from .midi import check_not_swapped, read_midi_messages, sample_index

T = TypeVar("T")
#: what a format tells about one parameter: index, name, unit label, default raw value, step count (0:
#: continuous), automatable
ParameterDescriptor = tuple[int, str, str, float, int, bool]

FLOAT_SUFFIXES = ("x", "%", "*", ",", ".", "hz", "ms", "db", "sec", "dbtp", "seconds")
TRUE_STRINGS = frozenset({"on", "yes", "true", "enabled"})
HIDDEN_NAME_PATTERNS = (re.compile("MIDI CC "), re.compile(r"P\d\d\d"))
SEARCH_STEPS = 1000
CONTINUOUS_STEPS = 2**31 - 1  # what pedalboard reports as num_steps for a continuous parameter


def strip_float_suffixes(text: Any, si_prefixes: bool = True) -> Any:
    """Remove the unit suffixes numbers are printed with ("400 Hz" -> "400", "3 kHz" -> "3000.0")."""
    if not isinstance(text, str):
        return text
    s = text.strip()
    if si_prefixes and s.lower().endswith("khz") and len(s) >= 3:
        try:
            return str(float(s[:-3]) * 1000)
        except ValueError:
            return s
    changed = True
    while changed and s:
        changed = False
        lower = s.lower()
        for suffix in FLOAT_SUFFIXES:
            if lower.endswith(suffix) and len(s) > len(suffix):
                s = s[: -len(suffix)].strip()
                changed = True
                break
    return s


def looks_like_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    try:
        float(strip_float_suffixes(value))
        return True
    except (TypeError, ValueError):
        return False


def normalize_parameter_name(name: str) -> str:
    """pedalboard's Python name of a parameter: lower case, ``#``/``♯`` -> ``_sharp``, ``♭`` -> ``_flat``,
    anything but ASCII letters and digits -> ``_``, runs of ``_`` collapsed, ends stripped."""
    name = name.lower().strip()
    name = name.replace("#", "_sharp").replace("♯", "_sharp").replace("♭", "_flat")
    chars = [c if (c.isalpha() or c.isnumeric()) and c.isprintable() and ord(c) < 128 else "_" for c in name]
    out = re.sub("_+", "_", "".join(chars))
    return out.strip("_")


def python_parameter_name(name: str, label: str) -> str | None:
    """The Python name for a parameter with this name and unit label (None if it has neither)."""
    if not name and not label:
        return None
    if label and not label.startswith(":"):
        name = f"{name} {label}"
    return normalize_parameter_name(name)


class ParameterAccess:
    """What an :class:`AudioProcessorParameter` needs from its plugin (implemented by each plugin format)."""

    def _param_raw(self, index: int) -> float:
        raise NotImplementedError

    def _param_set_raw(self, index: int, value: float) -> None:
        raise NotImplementedError

    def _param_text(self, index: int, raw: float) -> str | None:
        raise NotImplementedError

    def _param_raw_for_text(self, index: int, text: str) -> float | None:
        raise NotImplementedError


class AudioProcessorParameter:
    """One parameter of a hosted plugin, with the type and range inferred from its text values.

    Attributes
    ----------
    name : str
        The plugin's name for the parameter.
    python_name : str
        The attribute name on the plugin (``threshold_db``).
    label, units : str or None
        The unit ("dB", "Hz", "ms"), from the plugin or inferred from its texts.
    type : type
        ``float``, ``bool`` or ``str``.
    min_value, max_value : float or bool or None
        The range of values (in the parameter's own units).
    step_size, approximate_step_size : float or None
        The distance between neighbouring values, exact when uniform, else the mean.
    valid_values : list
        Every distinct value found (numbers, booleans or strings).
    range : tuple
        ``(min_value, max_value, step_size)``.
    raw_value : float
        The normalised value in [0, 1], as the plugin sees it (read and write).
    default_raw_value : float
        The normalised default.
    """

    def __init__(
        self,
        plugin: ParameterAccess,
        index: int,
        name: str,
        label: str,
        default_raw_value: float = 0.0,
        num_steps: int = 0,
        is_automatable: bool = True,
        search_steps: int = SEARCH_STEPS,
    ) -> None:
        self._plugin = weakref.proxy(plugin)
        self.index = index
        self.name = name
        self._plugin_label = label
        self._label: str | None = None
        self.default_raw_value = float(default_raw_value)
        self._step_count = int(num_steps)  # the plugin's count of steps between values (0: continuous)
        self.is_automatable = bool(is_automatable)
        self.python_name = python_parameter_name(name, label)
        self._scan(search_steps)

    # ------------------------------------------------------------------ inference
    def _scan(self, steps: int) -> None:
        ranges: dict[tuple[float, float], Any] = {}
        start = 0.0
        current: str | None = None
        for i in range(steps + 1):
            raw = i / steps
            # hosts hand raw values to plugins as float32 (as pedalboard does), so scan at float32 points
            text = self._plugin._param_text(self.index, float(np.float32(raw)))
            if current is None:
                current = text
            elif text != current:
                ranges[(start, raw)] = current
                current, start = text, raw
        if current is None:
            raise NotImplementedError(f"Plugin parameter '{self.name}' failed to return a valid string for its value.")
        ranges[(start, 1.0)] = current

        self.min_value: Any = None
        self.max_value: Any = None
        self.step_size: Any = None
        self.approximate_step_size: float | None = None
        self.type: type = str
        values = list(ranges.values())
        if all(looks_like_float(v) for v in values):
            self.type = float
            floats = {k: float(strip_float_suffixes(v)) for k, v in ranges.items()}
            self.min_value = min(floats.values())
            self.max_value = max(floats.values())
            if not self._plugin_label:
                self._label = self._infer_label(values)
            ordered = sorted(floats.values())
            steps_seen = {round(abs(b - a), 8) for a, b in zip(ordered, ordered[1:], strict=False)}
            if len(steps_seen) == 1:
                self.step_size = next(iter(steps_seen))
            elif steps_seen:
                self.approximate_step_size = sum(steps_seen) / len(steps_seen)
            ranges = dict(floats)
        elif len(ranges) == 2 and TRUE_STRINGS & {str(v).lower() for v in values}:
            self.type = bool
            ranges = {k: str(v).lower() in TRUE_STRINGS for k, v in ranges.items()}
            self.min_value, self.max_value, self.step_size = False, True, 1
        self.ranges = ranges
        self.valid_values = list(ranges.values())
        self.range = (self.min_value, self.max_value, self.step_size)
        self._raw_ranges = {value: span for span, value in ranges.items()}

    @staticmethod
    def _infer_label(values: list[Any]) -> str | None:
        labels = set()
        for value in values:
            if not isinstance(value, str):
                continue
            stripped = strip_float_suffixes(value, si_prefixes=False)
            if stripped == value or stripped not in value:
                return None
            labels.add(value.replace(stripped, "").strip())
        return next(iter(labels)) if len(labels) == 1 else None

    # ------------------------------------------------------------------ plugin-backed values
    @property
    def label(self) -> str | None:
        """The unit of the parameter ("dB", "Hz", ...), or None."""
        return self._label or self._plugin_label or None

    @property
    def units(self) -> str | None:
        """Alias of :attr:`label`."""
        return self.label

    # pedalboard reports a hosted parameter's metadata as its host (JUCE) does: a number of states rather than
    # of steps, 2**31-1 of them for a continuous parameter, every parameter discrete and none boolean,
    # inverted or meta; these read the same
    @property
    def num_steps(self) -> int:
        """The number of values the parameter takes: the plugin's step count + 1, or 2147483647 (2**31 - 1)
        for a continuous parameter (as pedalboard reports it)."""
        return self._step_count + 1 if self._step_count > 0 else CONTINUOUS_STEPS

    @property
    def is_discrete(self) -> bool:
        """True, as pedalboard reports for every hosted parameter (see :attr:`num_steps` for continuity)."""
        return True

    @property
    def is_boolean(self) -> bool:
        """False, as pedalboard reports for every hosted parameter (:attr:`type` is ``bool`` for switches)."""
        return False

    @property
    def is_orientation_inverted(self) -> bool:
        """False: no hosted format here reports inverted parameters (as pedalboard on Linux)."""
        return False

    @property
    def is_meta_parameter(self) -> bool:
        """False: no hosted format here reports meta parameters (as pedalboard on Linux)."""
        return False

    @property
    def raw_value(self) -> float:
        """The parameter's normalised value, 0.0 to 1.0, as the plugin itself stores it (settable). A VST3
        plugin's reads and writes are float32 values, as pedalboard (its host) hands them over."""
        result: float = self._plugin._param_raw(self.index)
        return result

    @raw_value.setter
    def raw_value(self, value: float) -> None:
        value = float(value)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"raw_value of parameter '{self.python_name}' must be in [0, 1], got {value!r}")
        self._plugin._param_set_raw(self.index, value)

    @property
    def string_value(self) -> str:
        """The plugin's text for the current value."""
        return self.get_text_for_raw_value(self.raw_value)

    def get_text_for_raw_value(self, raw_value: float, maximum_string_length: int = 512) -> str:
        """The plugin's text for a raw (normalised) value."""
        text = self._plugin._param_text(self.index, float(raw_value))
        return (text or "")[:maximum_string_length]

    def get_raw_value_for_text(self, string_value: str) -> float:
        """The raw value the plugin's parser gives for a text (``ValueError`` if it cannot parse it)."""
        raw = self._plugin._param_raw_for_text(self.index, str(string_value))
        if raw is None:
            raise ValueError(f"Plugin parameter '{self.name}' could not parse {string_value!r}.")
        result: float = raw
        return result

    def get_name(self, maximum_string_length: int = 512) -> str:
        """The parameter's name, cut to at most ``maximum_string_length`` characters."""
        return self.name[:maximum_string_length]

    @property
    def value(self) -> Any:
        """The current value, typed (float, bool or str)."""
        if self.type is float:
            return float(strip_float_suffixes(self.string_value))
        if self.type is bool:
            return self.raw_value >= 0.5
        return self.string_value

    # ------------------------------------------------------------------ conversion
    def get_raw_value_for(self, new_value: float | str | bool) -> float:
        """The raw value for a value in the parameter's units, with range and type checks (``ValueError``)."""
        if self.type is float:
            candidate: Any = new_value
            if isinstance(new_value, str) and self.label and new_value.endswith(self.label):
                candidate = new_value[: -len(self.label)]
            try:
                number = float(candidate)
            except (TypeError, ValueError):
                raise self._not_a_number(new_value) from None
            if number < self.min_value or number > self.max_value:
                raise self._out_of_range(new_value)
            reported = self._plugin._param_raw_for_text(self.index, str(number))
            closest = min(
                ((abs(number - v), span) for v, span in self._raw_ranges.items() if isinstance(v, float)),
                default=None,
                key=lambda item: item[0],
            )
            if closest is not None:
                low, high = closest[1]
                if reported is None or not low <= reported <= high:
                    return low
            return reported if reported is not None else 0.0
        if self.type is str:
            if not isinstance(new_value, str | int | float | bool):
                raise ValueError(
                    f"Value received for parameter '{self.python_name}' "
                    f"({new_value!r}) should be a string (or "
                    f"string-like), but got an object of type: {type(new_value)}"
                )
            text = str(new_value)
            if text not in self.valid_values:
                raise self._not_valid(text)
            reported = self._plugin._param_raw_for_text(self.index, text)
            low, high = self._raw_ranges[text]
            if reported is None or not low <= reported <= high:
                return low
            result: float = reported
            return result
        if not isinstance(new_value, bool | WrappedBool):
            raise ValueError(
                f"Value received for parameter '{self.python_name}' "
                f"({new_value!r}) should be a boolean, but got "
                f"an object of type: {type(new_value)}"
            )
        return 1.0 if new_value else 0.0

    # the errors of a value that does not fit, in pedalboard's words
    def _not_a_number(self, new_value: object) -> ValueError:
        suffix = f" (with the optional suffix '{self.label}')" if self.label else ""
        return ValueError(
            f"Value received for parameter '{self.python_name}' ({new_value!r}) must be a number or a string{suffix}"
        )

    def _out_of_range(self, new_value: object) -> ValueError:
        unit = self.label or ""
        return ValueError(
            f"Value received for parameter '{self.python_name}' ({new_value!r}) is out of range "
            f"[{self.min_value}{unit}, {self.max_value}{unit}]"
        )

    def _not_valid(self, text: str) -> ValueError:
        return ValueError(
            f"Value received for parameter '{self.python_name}' ({text!r}) not in list of valid values: "
            f"{self.valid_values}"
        )

    # ------------------------------------------------------------------ moving between processes
    def export(self) -> tuple[type[AudioProcessorParameter], dict[str, Any]]:
        """Everything this parameter inferred, without its plugin (picklable; see :meth:`rebind`)."""
        state = {k: v for k, v in self.__dict__.items() if k != "_plugin"}
        return type(self), state

    @staticmethod
    def rebind(
        exported: tuple[type[AudioProcessorParameter], dict[str, Any]], plugin: ParameterAccess
    ) -> AudioProcessorParameter:
        """A parameter from :meth:`export`'s output that talks to ``plugin`` (no re-scan of its values)."""
        cls, state = exported
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        obj._plugin = weakref.proxy(plugin)
        return obj

    def __repr__(self) -> str:
        head = f'<stompbox.AudioProcessorParameter name="{self.name}"'
        if self.label:
            head += f' label="{self.label}"'
        head += f" raw_value={self.raw_value:g}"
        if self.type is float:
            step = (
                self.step_size
                if self.step_size
                else (f"~{self.approximate_step_size}" if self.approximate_step_size else "?")
            )
            return f"{head} value={self.string_value} range=({self.min_value}, {self.max_value}, {step})>"
        if self.type is bool:
            return f"{head} value={self.string_value} boolean>"
        count = len(self.valid_values)
        return f'{head} value="{self.string_value}" ({count} valid string value{"" if count == 1 else "s"})>'


class WrappedBool:
    """A bool that can carry attributes (``bool`` itself cannot be subclassed)."""

    def __init__(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"WrappedBool should be passed a boolean, got {type(value)}")
        self._value = value

    def __repr__(self) -> str:
        return repr(self._value)

    def __str__(self) -> str:
        return str(self._value)

    def __eq__(self, other: object) -> bool:
        return self._value == other

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return self._value


def _with_parameter(base: type) -> type:
    class WithParameter(base):  # type: ignore[misc]
        """A value that also exposes its parameter's attributes (``plugin.gain_db.range``)."""

        def __new__(cls, value: Any, parameter: AudioProcessorParameter) -> Any:
            obj = base.__new__(cls, value) if base is not WrappedBool else object.__new__(cls)
            return obj

        def __init__(self, value: Any, parameter: AudioProcessorParameter) -> None:
            if base is WrappedBool:
                WrappedBool.__init__(self, value)
            self._parameter = parameter

        def __getattr__(self, name: str) -> Any:
            if name.startswith("__") or name == "_parameter":
                raise AttributeError(name)
            return getattr(self._parameter, name)

        def __reduce__(self) -> Any:
            return (base, (base(self) if base is not WrappedBool else bool(self),))

    WithParameter.__name__ = WithParameter.__qualname__ = f"{base.__name__.capitalize()}WithParameter"
    return WithParameter


FloatWithParameter = _with_parameter(float)
StringWithParameter = _with_parameter(str)
BooleanWithParameter = _with_parameter(WrappedBool)
BooleanWithParameter.__name__ = BooleanWithParameter.__qualname__ = "BooleanWithParameter"


class ReadOnlyDict(dict[str, Any]):
    """The ``parameters`` mapping: assigning into it raises ``TypeError`` (set the attribute instead)."""

    def __setitem__(self, name: str, value: Any) -> None:
        raise TypeError(
            "The .parameters dictionary on a Plugin instance returns "
            "a read-only dictionary of its parameters. "
            f"To change a parameter, set the parameter on the plugin directly as an attribute. "
            f"(`my_plugin.{name} = {value}`)"
        )


def is_plugin_uri(text: str) -> bool:
    """Whether ``text`` names a plugin by URI (an LV2 plugin: ``http://...``, ``urn:...``) rather than by file."""
    return "://" in text or text.startswith("urn:")


_chain_loader: Callable[..., ExternalPlugin] | None = None


def set_chain_loader(load: Callable[..., ExternalPlugin]) -> None:
    """Set how a chain file's hosted plugin is loaded (:func:`stompbox.hosting.load_plugin`, which sits above
    this base class of the hosts; not for users)."""
    global _chain_loader
    _chain_loader = load


class ExternalPluginReloadType(PedalboardEnum):
    """How a hosted plugin is reset between streams (pedalboard's enum of the same name).

    Detected the first time the plugin is reset with a stream format: noise in, the plugin's own reset
    (deactivate and reactivate), then ~1.5 s of silence in. A plugin whose output stays under -120 dBFS clears its
    audio on reset; one that still sounds (a tail or state it keeps, as ZamTube does) is reloaded on every reset
    instead: a new instance with the old one's state.
    """

    Unknown = 0
    ClearsAudioOnReset = 1
    PersistsAudioOnReset = 2


def check_parameter_values(parameter_values: object) -> None:
    """``parameter_values`` is a dict or None (a ``TypeError`` that says what went wrong otherwise)."""
    if parameter_values is not None and not isinstance(parameter_values, dict):
        raise TypeError(
            "Expected a dictionary to be passed to parameter_values, but received a "
            f'{type(parameter_values).__name__}. (If passing a plugin name, pass "plugin_name=..." as a '
            "keyword argument instead.)"
        )


def choose_plugin(
    path: str,
    found: Sequence[T],
    plugin_name: object,
    names: Callable[[T], Sequence[str]],
    kind: str = "names",
    note: Callable[[T], str] | None = None,
) -> T:
    """The plugin to load from a file that holds those ``found``: the only one, or the one that ``plugin_name``
    names (any of its ``names``, the first of which is what lists show, with ``note`` in brackets after it).

    Raises ``ValueError`` listing the plugins for a file of several and no name, or a name it does not hold.
    """
    if plugin_name is None:
        if len(found) > 1:
            shown = "\n".join(f'\t"{names(p)[0]}"' + (f" ({note(p)})" if note else "") for p in found)
            raise ValueError(
                f'Plugin file {path} contains {len(found)} plugins, and the "plugin_name" argument was not '
                f"provided. Please specify which plugin to load by passing one of the following {kind} as "
                f'"plugin_name":\n{shown}'
            )
        return found[0]
    for p in found:
        if str(plugin_name) in names(p):
            return p
    shown = "\n".join(f'\t"{names(p)[0]}"' for p in found)
    raise ValueError(f'Plugin file {path} does not contain a plugin named "{plugin_name}". Valid names:\n{shown}')


class InstalledPlugins:
    """A format's ``installed_plugins``: read on the class (``VST3Plugin.installed_plugins``, as in pedalboard)
    or an instance, it lists the plugins of the format installed now."""

    def __init__(self, find: Callable[[], list[str]]) -> None:
        self._find = find

    def __get__(self, obj: object, owner: type | None = None) -> list[str]:
        return self._find()


class ExternalPlugin(Plugin, ParameterAccess):
    """Base class of the plugins hosted from files (VST3, LV2, LADSPA, isolated). Do not instantiate it
    directly; use :func:`load_plugin`.

    It holds the lifecycle every format shares: the arguments are checked, the format's :meth:`_load` finds
    and instantiates the plugin, ``parameter_values`` are set; copies and pickles reload the plugin from its
    path and plugin name and restore its ``raw_state``; :meth:`close` (or garbage collection) releases what the
    format's :meth:`_release` frees. Formats provide ``_parameter_descriptors()`` (index, name, label, default,
    steps, automatable) and the :class:`ParameterAccess` methods; this class turns them into ``parameters`` and
    attribute access.
    """

    _abstract = True

    def __init__(
        self,
        path_to_plugin_file: str | os.PathLike[str],
        parameter_values: dict[str, Any] | None = None,
        plugin_name: str | None = None,
        initialization_timeout: float = 10.0,
    ) -> None:
        super().__init__()
        check_parameter_values(parameter_values)
        self._target = os.fspath(path_to_plugin_file)
        self._plugin_name = plugin_name
        self._initialization_timeout = float(initialization_timeout)
        self._load()
        self._loaded = True
        self._set_initial_parameter_values(parameter_values)

    # ------------------------------------------------------------------ to implement
    def _load(self) -> None:
        """Find the plugin ``_target`` and ``_plugin_name`` name and instantiate it (``PluginLoadError``, an
        ``ImportError``, when it cannot be loaded). A format may replace ``_target`` by the form it found (the
        path of a LADSPA library named by its file name)."""
        raise NotImplementedError

    def _release(self) -> None:
        """Free the native instance(s) now (called by :meth:`close`, with the plugin's lock held)."""

    @property
    def raw_state(self) -> bytes:
        """The plugin's complete state as bytes; settable (what copies and chain files carry)."""
        raise NotImplementedError

    @raw_state.setter
    def raw_state(self, value: bytes) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ identity
    @property
    def path_to_plugin_file(self) -> str:
        """The path (or URI) this plugin was loaded from."""
        return self._target

    @property
    def descriptive_name(self) -> str:
        """The plugin's name, as its description gives it."""
        return str(self.name)

    @property
    def category(self) -> str:
        """The plugin's category ("" where the format has none)."""
        return ""

    @property
    def version(self) -> str:
        """The plugin's version ("" where the format has none)."""
        return ""

    # ------------------------------------------------------------------ copies, pickling, teardown
    def _identity(self) -> dict[str, Any]:
        """What loads this plugin again: ``path`` (a file, bundle or LV2 URI), the ``plugin_name`` it was
        loaded with, and its complete state (``raw_state``). Pickles, copies and chain files carry it."""
        return {"path": self._target, "plugin_name": self._plugin_name, "raw_state": self.raw_state}

    def __getstate__(self) -> dict[str, Any]:
        return self._identity()

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.__init__(data["path"], plugin_name=data.get("plugin_name"))  # type: ignore[misc]
        if data.get("raw_state"):
            self.raw_state = data["raw_state"]

    def close(self) -> None:
        """Release the plugin's native instance now (otherwise done when it is garbage-collected)."""
        with self._lock:
            self._release()
            self._forget_format()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ chains as data
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description by identity and state: ``{"type": "ExternalPlugin", "path": ...,
        "plugin_name": ..., "raw_state": <base64>}``; :func:`stompbox.load_chain` loads the plugin from ``path``
        again and restores the state, so the copy sounds the same (where the plugin is installed). A plugin
        file or bundle is named as :func:`stompbox.chains.file_reference` does (relative to a chain file's
        folder that holds it, else absolute); an LV2 URI or a LADSPA library name stays as it is."""
        from ..core.serial import file_reference

        identity = self._identity()
        raw = identity["raw_state"] or b""
        raw = raw.encode() if isinstance(raw, str) else bytes(raw)
        path = str(identity["path"])
        if os.path.exists(path):  # a file or bundle (not an LV2 URI, nor a LADSPA library found on its path)
            path = file_reference(path)
        data: dict[str, Any] = {"type": "ExternalPlugin", "path": path}
        if identity["plugin_name"] is not None:
            data["plugin_name"] = identity["plugin_name"]
        data["raw_state"] = base64.b64encode(raw).decode("ascii")
        if identity.get("isolated"):
            data["isolated"] = True
        return data

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> ExternalPlugin:
        from ..core.serial import resolve_reference

        if _chain_loader is None:  # set when stompbox.hosting is imported, which importing this module does
            raise RuntimeError("stompbox.hosting is not initialised")
        load_plugin = _chain_loader
        path = data["path"]
        if not isinstance(path, str):
            raise TypeError(f"'path' must be a string (got {type(path).__name__}).")
        if not is_plugin_uri(path):
            located = resolve_reference(path)  # relative to the chain file's folder
            path = located if os.path.exists(located) or os.sep in path else path  # else a LADSPA name
        plugin = load_plugin(path, plugin_name=data.get("plugin_name"), isolated=bool(data.get("isolated", False)))
        raw = data.get("raw_state")
        if raw:
            plugin.raw_state = base64.b64decode(raw, validate=True)
        return plugin

    # ------------------------------------------------------------------ to implement
    def _parameter_descriptors(self) -> Iterator[ParameterDescriptor]:
        raise NotImplementedError

    # ------------------------------------------------------------------ parameters
    def _parameter_cache(self) -> dict[int, AudioProcessorParameter]:
        cache = self.__dict__.get("_param_objects")
        if cache is None:
            cache = {}
            self.__dict__["_param_objects"] = cache
        return cache

    def _python_names(self) -> dict[str, ParameterDescriptor]:
        names = self.__dict__.get("_param_names")
        if names is None:
            names = {}
            for desc in self._parameter_descriptors():
                _index, name, label, *_ = desc
                if any(p.match(name) for p in HIDDEN_NAME_PATTERNS):
                    continue
                python_name = python_parameter_name(name, label)
                if python_name and python_name not in names:
                    names[python_name] = desc
            self.__dict__["_param_names"] = names
        return names

    def _parameter(self, python_name: str) -> AudioProcessorParameter | None:
        desc = self._python_names().get(python_name)
        if desc is None:
            return None
        cache = self._parameter_cache()
        index = desc[0]
        if index not in cache:
            cache[index] = self._new_parameter(desc)
        return cache[index]

    def _new_parameter(self, desc: ParameterDescriptor) -> AudioProcessorParameter:
        """The parameter object for one descriptor (formats with typed ports return a subclass)."""
        return AudioProcessorParameter(self, *desc)

    @property
    def parameters(self) -> dict[str, AudioProcessorParameter]:
        """Read-only dict of Python parameter names to :class:`AudioProcessorParameter`."""
        result = ReadOnlyDict()
        for python_name in self._python_names():
            param = self._parameter(python_name)
            if param is not None:
                dict.__setitem__(result, python_name, param)
        return result

    def _set_initial_parameter_values(self, parameter_values: dict[str, Any] | None) -> None:
        check_parameter_values(parameter_values)
        if parameter_values is None:
            return
        names = self._python_names()
        for key, value in parameter_values.items():
            if key not in names:
                raise AttributeError(f'Parameter named "{key}" not found. Valid options: {", ".join(names)}')
            setattr(self, key, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._python_names()))

    def __getattr__(self, name: str) -> Any:
        if self._ready_for_params(name):
            param = self._parameter(name)
            if param is not None:
                if param.type is float:
                    return FloatWithParameter(param.value, param)
                if param.type is bool:
                    return BooleanWithParameter(param.raw_value >= 0.5, param)
                return StringWithParameter(str(param.string_value), param)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _ready_for_params(self, name: str) -> bool:
        return not name.startswith("_") and self.__dict__.get("_loaded", False)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and self.__dict__.get("_loaded", False):
            param = self._parameter(name)
            if param is not None:
                param.raw_value = param.get_raw_value_for(value)
                return
        super().__setattr__(name, value)

    # ------------------------------------------------------------------ instruments (MIDI in, audio out)
    #: the largest block handed to the plugin by :meth:`_render_midi`
    _max_block = 8192

    def process(self, input_array: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        """Process audio (effects) or render MIDI (instruments).

        Effects: ``process(input_array, sample_rate, buffer_size=8192, reset=True)`` as every plugin.
        Instruments: ``process(midi_messages, duration, sample_rate, num_channels=2, buffer_size=8192,
        reset=True)`` returns ``(num_channels, int(duration * sample_rate))`` float32; messages are
        ``mido.Message`` objects (``time`` in absolute seconds), ``(bytes, seconds)`` or ``(list[int],
        seconds)`` and start on the sample their timestamp gives. Times become samples as in pedalboard: the
        product is computed in float32 and truncated (see :func:`stompbox.hosting.midi.sample_index`).
        """
        if isinstance(input_array, np.ndarray):
            if self.is_instrument:
                raise ValueError(
                    f"Plugin '{self.name}' is an instrument: pass MIDI messages, a duration and a sample "
                    "rate, not audio."
                )
            return self._process_audio(input_array, *args, **kwargs)
        if not self.is_instrument:
            raise ValueError(
                f"Plugin '{self.name}' is an audio effect: pass an audio array and a sample rate, not MIDI messages."
            )
        return self._render_midi(input_array, *args, **kwargs)

    def _process_audio(self, input_array: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
        """Effects: what :meth:`process` does with an audio array (the engine's template, as every plugin)."""
        return super().process(input_array, *args, **kwargs)

    __call__ = process

    def _render_midi(
        self,
        midi_messages: Any,
        duration: float,
        sample_rate: float,
        num_channels: int = 2,
        buffer_size: int = 8192,
        reset: bool = True,
    ) -> np.ndarray:
        check_not_swapped(duration, sample_rate)
        rate = check_sample_rate(sample_rate)
        block = min(check_buffer_size(buffer_size), self._max_block)
        events = read_midi_messages(midi_messages, float(duration), rate)
        return self._render_events(events, sample_index(duration, rate), rate, int(num_channels), block, reset)

    def _render_events(
        self, events: list[tuple[int, bytes]], total: int, rate: float, num_channels: int, block: int, reset: bool
    ) -> np.ndarray:
        """Instruments: ``total`` samples rendered in blocks of ``block`` with these ``(sample, midi_bytes)``
        events (checked arguments of :meth:`_render_midi`)."""
        out = np.zeros((num_channels, total), np.float32)
        with self._lock:
            reset_done = self._ensure_format(rate, num_channels)
            if reset and not reset_done:
                self._reset_all()
            k = 0
            for start in range(0, total, block):
                n = min(block, total - start)
                batch = []
                while k < len(events) and events[k][0] < start + n:
                    batch.append((events[k][0] - start, events[k][1]))
                    k += 1
                out[:, start : start + n] = self._render_block(batch, n)
        return out

    def _render_block(self, events: list[tuple[int, bytes]], n: int) -> np.ndarray:
        """Instruments: run one block of ``n`` samples with these ``(offset, midi_bytes)`` events and return
        the ``(num_channels, n)`` output (for :meth:`_render_midi`)."""
        raise NotImplementedError
