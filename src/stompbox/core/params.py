"""Parameters of built-in plugins, declared once.

A :class:`Param` is a data descriptor on a plugin class. It knows its default, its valid range, its unit and a
one-line description; the same declaration drives validation on assignment, ``repr``, serialisation and the
command line's listing of effects.
"""

from __future__ import annotations

import enum
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from .automation import as_automation, is_automation_like
from .errors import ChoiceError

_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class ParamSpec:
    """A read-only description of one parameter: what :meth:`Plugin.parameter_specs` returns."""

    name: str
    default: Any
    minimum: float | None
    maximum: float | None
    unit: str
    doc: str
    kind: type


class Param:
    """A validated plugin parameter.

    Parameters
    ----------
    default
        The value a new plugin starts with.
    minimum, maximum
        Inclusive bounds (``None`` for unbounded). ``min_exclusive`` / ``max_exclusive`` make a bound strict.
    unit
        Unit shown in listings ("dB", "Hz", "ms", "s", ...).
    doc
        One-line description.
    error
        The message of the ``ValueError`` raised for an out-of-range value (pedalboard's text where it has
        one); by default a message naming the parameter and its range.
    kind
        ``float`` (the default), ``int``, ``bool`` or an ``enum.Enum`` subclass.
    float32
        A ``float`` value is stored rounded to the nearest float32 (``0.4`` reads back as
        ``0.4000000059604645``), as pedalboard stores its parameters, so values compare equal to those read from
        pedalboard. ``False`` keeps the double as given (pedalboard's ``PitchShift.semitones``).
    """

    def __init__(
        self,
        default: Any,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
        unit: str = "",
        doc: str = "",
        error: str | None = None,
        kind: type = float,
        float32: bool = True,
    ) -> None:
        self.default = default
        self.minimum = minimum
        self.maximum = maximum
        self.min_exclusive = min_exclusive
        self.max_exclusive = max_exclusive
        self.unit = unit
        self.doc = doc
        self.error = error
        self.kind = kind
        self.float32 = float32
        self.name = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return instance._values[self.name]

    def __set__(self, instance: Any, value: Any) -> None:
        automation = instance._automation
        if self.kind is float and is_automation_like(value):
            auto = self.coerce_automation(type(instance), value)
            automation[self.name] = auto
            # the value read back between blocks: the automation's value at the current stream position
            instance._values[self.name] = float(auto.render(0, 1, 48000.0)[0])
        else:
            instance._values[self.name] = self.coerce(value)
            if automation:
                automation.pop(self.name, None)
        instance._param_changed(self.name)

    def coerce_automation(self, owner: type, value: Any) -> Any:
        """Validate an automation (an Automation, a 1-D array, ``[(time_s, value), ...]`` or a serialised
        dict) for this parameter of ``owner``: it must be automatable and stay within the range."""
        if self.name not in getattr(owner, "_automatable", ()):
            raise TypeError(
                f"{owner.__name__}.{self.name} cannot be automated; set it to a number (got {type(value).__name__})."
            )
        try:
            auto = as_automation(value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{self.name}: {exc}") from None
        try:
            auto.check(self.name, self.minimum, self.maximum, self.min_exclusive, self.max_exclusive)
        except ValueError as exc:
            raise ValueError(f"{exc} Valid range: {self.range_text()}.") from None
        return auto

    @property
    def spec(self) -> ParamSpec:
        return ParamSpec(self.name, self.default, self.minimum, self.maximum, self.unit, self.doc, self.kind)

    def range_text(self) -> str:
        lo = "-inf" if self.minimum is None else f"{self.minimum:g}"
        hi = "inf" if self.maximum is None else f"{self.maximum:g}"
        left = "(" if self.min_exclusive or self.minimum is None else "["
        right = ")" if self.max_exclusive or self.maximum is None else "]"
        unit = f" {self.unit}" if self.unit else ""
        return f"{left}{lo}, {hi}{right}{unit}"

    def coerce(self, value: Any) -> Any:
        """Validate ``value`` and return it in the parameter's own type."""
        kind = self.kind
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            try:
                return kind(value)
            except ValueError:
                if isinstance(value, str) and value in kind.__members__:
                    return kind[value]
                valid = ", ".join(kind.__members__)
                raise ChoiceError(f"{self.name} must be one of {valid} (got {value!r})") from None
        if kind is bool:
            if isinstance(value, bool | numbers.Integral) or hasattr(value, "__bool__"):
                return bool(value)
            raise TypeError(f"{self.name} must be a bool (got {type(value).__name__})")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{self.name} must be a number (got {type(value).__name__}: {value!r})")
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{self.name} must be a finite number (got {value!r})")
        lo, hi = self.minimum, self.maximum
        if self.float32 and kind is float and abs(number) <= _FLOAT32_MAX:
            # stored as float32: checked as float32 too, so a value read back is accepted when set again
            number = float(np.float32(number))
            lo = None if lo is None else float(np.float32(lo))
            hi = None if hi is None else float(np.float32(hi))
        too_low = lo is not None and (number < lo or (self.min_exclusive and number == lo))
        too_high = hi is not None and (number > hi or (self.max_exclusive and number == hi))
        if too_low or too_high:
            message = self.error or f"{self.name} must be in {self.range_text()}."
            raise ValueError(f"{message} (got {self.name}={value!r}; valid range {self.range_text()})")
        if kind is int:
            if number != int(number):
                raise ValueError(f"{self.name} must be a whole number (got {value!r})")
            return int(number)
        return number

    def format(self, value: Any) -> str:
        """The value as ``repr`` shows it (``%g`` for numbers, like pedalboard)."""
        if isinstance(value, enum.Enum):
            return f"{type(value).__qualname__}.{value.name}"
        if isinstance(value, float):
            return f"{value:g}"
        return repr(value)
