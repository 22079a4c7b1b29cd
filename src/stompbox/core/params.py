"""Parameters of built-in plugins, declared once.

A :class:`Param` is a data descriptor on a plugin class. It knows its default, its valid range, its unit, whether
it can be automated and a one-line description; the same declaration generates the constructor (its signature,
in declaration order, as :func:`inspect.signature` shows it), the Parameters section of the class's docstring,
the range in error messages, and drives validation on assignment, ``repr``, serialisation, chain files and the
command line's listing of effects. Its public, read-only form is :class:`ParamSpec`, from
:meth:`Plugin.parameter_specs() <stompbox.core.plugin.Plugin.parameter_specs>`.
"""

from __future__ import annotations

import enum
import math
import numbers
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

import numpy as np

from .automation import as_automation, is_automation_like
from .errors import ChoiceError

_FLOAT32_MAX = float(np.finfo(np.float32).max)

#: the type a parameter reads back as: its ``kind`` (``float`` unless given)
T = TypeVar("T")


@dataclass(frozen=True)
class ParamSpec:
    """A read-only description of one parameter: what :meth:`Plugin.parameter_specs` returns.

    Attributes
    ----------
    name, default, unit, doc
        The parameter's name, default value (as declared, the constructor's default), unit ("dB", "Hz", ...)
        and one-line description. ``stored_default`` is the default as the attribute reads it back.
    minimum, maximum
        Bounds (``None`` for unbounded); ``min_exclusive`` / ``max_exclusive`` say whether they are strict.
    kind
        ``float``, ``int``, ``bool`` or an ``enum.Enum`` subclass.
    automatable
        Whether an :class:`~stompbox.core.automation.Automation` (or an array, an envelope, an LFO) may be
        assigned; ``per_sample`` says it is applied per sample (else per sub-block of 32 samples).
    choices
        The member names of an enum parameter (``None`` for others).
    range
        The valid range as text (``"[0, 1]"``, ``"(0, inf) Hz"``), ``None`` for enums and bools.
    """

    name: str
    default: Any
    minimum: float | None
    maximum: float | None
    unit: str
    doc: str
    kind: type
    automatable: bool = False
    per_sample: bool = False
    choices: tuple[str, ...] | None = None
    range: str | None = None
    min_exclusive: bool = False
    max_exclusive: bool = False
    #: the default as the attribute reads it back (float32-rounded, an enum member): compare values with this
    stored_default: Any = None

    def is_default(self, value: Any) -> bool:
        """Whether ``value`` (as read from a plugin) is this parameter's default."""
        return bool(value == self.stored_default)

    def format(self, value: Any) -> str:
        """A value of this parameter as ``repr`` shows it (``%g`` for numbers, like pedalboard)."""
        return format_value(value)

    @property
    def automation(self) -> str:
        """How the parameter can be automated: ``"per sample"``, ``"per block"`` or ``""`` (not at all)."""
        if not self.automatable:
            return ""
        return "per sample" if self.per_sample else "per block"


class Param(Generic[T]):
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
        one); by default a message naming the parameter and its range. It is a template: ``{minimum}``,
        ``{maximum}`` and ``{name}`` (with format specs, ``{maximum:g}``) are filled from the declaration, so
        the range is written once.
    kind
        ``float`` (the default), ``int``, ``bool`` or an ``enum.Enum`` subclass.
    automatable
        Whether the parameter accepts automation (float parameters only).
    per_sample
        Automation is applied per sample by the plugin's ``_process_automated`` (else per sub-block of
        ``_automation_chunk`` samples, through ``_update``). Implies ``automatable``.
    keyword_only
        The constructor takes it by keyword only (a stompbox extension that pedalboard's positional order must
        not see).
    float32
        A ``float`` value is stored rounded to the nearest float32 (``0.4`` reads back as
        ``0.4000000059604645``), as pedalboard stores its parameters, so values compare equal to those read from
        pedalboard. ``False`` keeps the double as given (pedalboard's ``PitchShift.semitones``).
    """

    @overload
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
        kind: type[T],
        automatable: bool = False,
        per_sample: bool = False,
        keyword_only: bool = False,
        float32: bool = True,
    ) -> None: ...
    @overload
    def __init__(
        self: Param[float],
        default: float,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        min_exclusive: bool = False,
        max_exclusive: bool = False,
        unit: str = "",
        doc: str = "",
        error: str | None = None,
        automatable: bool = False,
        per_sample: bool = False,
        keyword_only: bool = False,
        float32: bool = True,
    ) -> None: ...
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
        kind: type[Any] = float,
        automatable: bool = False,
        per_sample: bool = False,
        keyword_only: bool = False,
        float32: bool = True,
    ) -> None:
        if (automatable or per_sample) and kind is not float:
            raise TypeError(f"Only float parameters can be automated (this one is {kind.__name__}).")
        self.default = default
        self.minimum = minimum
        self.maximum = maximum
        self.min_exclusive = min_exclusive
        self.max_exclusive = max_exclusive
        self.unit = unit
        self.doc = doc
        self.error = error
        self.kind = kind
        self.automatable = bool(automatable or per_sample)
        self.per_sample = bool(per_sample)
        self.keyword_only = bool(keyword_only)
        self.float32 = float32
        self.name = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Param[T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...
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
        if not self.automatable:
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
        """This declaration's public, read-only form."""
        kind = self.kind
        is_enum = isinstance(kind, type) and issubclass(kind, enum.Enum)
        return ParamSpec(
            self.name,
            self.default,
            self.minimum,
            self.maximum,
            self.unit,
            self.doc,
            kind,
            automatable=self.automatable,
            per_sample=self.per_sample,
            choices=_members(kind) if is_enum else None,
            range=self.range_text() if kind in (int, float) else None,
            min_exclusive=self.min_exclusive,
            max_exclusive=self.max_exclusive,
            stored_default=self.coerce(self.default),
        )

    def error_text(self) -> str:
        """The out-of-range message: the ``error`` template filled from the declared range, or a default."""
        if self.error is None:
            return f"{self.name} must be in {self.range_text()}."
        return self.error.format(minimum=self.minimum, maximum=self.maximum, name=self.name)

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
            message = self.error_text()
            raise ValueError(f"{message} (got {self.name}={value!r}; valid range {self.range_text()})")
        if kind is int:
            if number != int(number):
                raise ValueError(f"{self.name} must be a whole number (got {value!r})")
            return int(number)
        return number

    def format(self, value: Any) -> str:
        """The value as ``repr`` shows it (``%g`` for numbers, like pedalboard)."""
        return format_value(value)


def format_value(value: Any) -> str:
    """A parameter value as ``repr`` shows it: ``%g`` for numbers (like pedalboard), ``Class.Member`` for enums."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)


# ---------------------------------------------------------------------------------------------------------------
# what a declaration generates: the constructor and the docstring's Parameters section

_GENERATED = "_stompbox_generated_init"


def is_generated_init(function: Any) -> bool:
    """Whether ``function`` is a constructor made by :func:`make_init` (so a subclass may get its own)."""
    return bool(getattr(function, _GENERATED, False))


def _annotation(param: Param[Any]) -> Any:
    kind = param.kind
    if param.automatable:
        return f"{kind.__name__} | Automation"
    return kind if kind in (float, int, bool) else kind.__qualname__


def make_init(cls: type, params: dict[str, Param[Any]], base_init: Any) -> Any:
    """A constructor for ``cls`` taking its declared parameters, in declaration order, with their defaults
    (positional or keyword; ``keyword_only`` ones by keyword only), and handing all of them to ``base_init``."""
    import inspect

    names = list(params)
    positional = [name for name in names if not params[name].keyword_only]
    defaults = {name: param.default for name, param in params.items()}
    kinds = {name: inspect.Parameter.KEYWORD_ONLY if params[name].keyword_only else None for name in names}
    signature = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(
                name,
                kinds[name] or inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=defaults[name],
                annotation=_annotation(params[name]),
            )
            for name in [*positional, *(n for n in names if params[n].keyword_only)]
        ],
        return_annotation=None,
    )
    title = cls.__name__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(positional):
            raise TypeError(
                f"{title}() takes {len(positional)} positional argument{'s' if len(positional) != 1 else ''} "
                f"but {len(args)} were given"
            )
        values = dict(defaults)
        for name, value in zip(positional, args, strict=False):
            if name in kwargs:
                raise TypeError(f"{title}() got multiple values for argument {name!r}")
            values[name] = value
        for name, value in kwargs.items():
            # (a subclass's own constructor may pass on parameters it declares itself)
            if name not in values and name not in type(self)._params:
                raise TypeError(f"{title}() got an unexpected keyword argument {name!r}")
            values[name] = value
        base_init(self, **values)

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    __init__.__doc__ = f"Make a {title}; see the class's documentation for the parameters."
    setattr(__init__, _GENERATED, True)
    return __init__


_SECTIONS = ("Attributes", "Methods", "Returns", "Raises", "See Also", "Notes", "References", "Examples")


def _members(kind: type) -> tuple[str, ...]:
    """The member names of an enum parameter's kind."""
    return tuple(getattr(kind, "__members__", {}))


def _entry(param: Param[Any]) -> str:
    import textwrap

    kind = param.kind
    is_enum = isinstance(kind, type) and issubclass(kind, enum.Enum)
    type_text = kind.__qualname__ if is_enum else kind.__name__
    if param.automatable:
        type_text += " or automation"
    head = f"{param.name} : {type_text}, default {param.format(param.coerce(param.default))}"
    text = (param.doc[:1].upper() + param.doc[1:]).rstrip(".") if param.doc else param.name
    if is_enum:
        text += f": one of {', '.join(_members(kind))}."
    elif kind in (int, float) and param.minimum is None and param.maximum is None:
        text += f", in {param.unit} (any finite value)." if param.unit else " (any finite value)."
    elif kind in (int, float):
        text += f". Range {param.range_text()}."
    else:
        text += "."
    if param.automatable:
        text += " Automatable per sample." if param.per_sample else " Automatable per sub-block of 32 samples."
    body = textwrap.wrap(text, width=112, break_on_hyphens=False)
    return "\n".join([head, *("    " + line for line in body)])


def document(doc: str | None, params: dict[str, Param[Any]]) -> str | None:
    """``doc`` with the Parameters section written from the declarations: entries for declared parameters it
    does not describe yet are appended to its Parameters section (made, before any later section, if it has
    none)."""
    import inspect
    import re

    if not doc or not params:
        return doc
    text = inspect.cleandoc(doc)
    lines = text.split("\n")
    header = next(
        (i for i in range(len(lines) - 1) if lines[i].strip() == "Parameters" and set(lines[i + 1].strip()) == {"-"}),
        None,
    )
    if header is None:
        described: set[str] = set()
    else:
        end = next(
            (
                i
                for i in range(header + 2, len(lines) - 1)
                if lines[i].strip() in _SECTIONS and set(lines[i + 1].strip()) == {"-"}
            ),
            len(lines),
        )
        section = lines[header + 2 : end]
        described = {
            name.strip()
            for line in section
            if line and not line.startswith(" ")
            for name in re.split(r"[,:]", line.split(" : ")[0])
        }
    missing = [_entry(param) for name, param in params.items() if name not in described]
    if not missing:
        return text
    if header is None:
        at = next(
            (i for i in range(len(lines) - 1) if lines[i].strip() in _SECTIONS and set(lines[i + 1].strip()) == {"-"}),
            len(lines),
        )
        block = ["Parameters", "----------", *"\n".join(missing).split("\n")]
        before = lines[:at]
        while before and not before[-1].strip():
            before.pop()
        after = lines[at:]
        return "\n".join([*before, "", *block, *([""] + after if after else [])])
    while end > header + 2 and not lines[end - 1].strip():
        end -= 1
    return "\n".join([*lines[:end], *"\n".join(missing).split("\n"), *lines[end:]])
