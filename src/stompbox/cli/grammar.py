"""The effect grammar of the command line: ``EFFECT [PARAM=VALUE ...] EFFECT ...`` to a :class:`Pedalboard`.

A token without ``=`` names an effect (a built-in plugin class, case-insensitive, ``-``/``_`` ignored, so
``distortion``, ``Distortion`` and ``ladder-filter`` all work); each ``PARAM=VALUE`` token after it sets one
keyword argument of that effect's constructor, exactly as in Python::

    distortion drive_db=25 delay delay_seconds=0.6 reverb room_size=0.75
    ladderfilter mode=HPF24 cutoff_hz=800
    convolution impulse_response_filename=hall.wav mix=0.3

Values are read by the parameter's declared kind: numbers (``-6``, ``1e3``, ``0.5``), booleans
(``true/false/yes/no/on/off/1/0``), and enums by member name (``HPF24``, case-insensitive) or number.

:func:`parse_effects` is the whole grammar (no I/O, no argparse), so tests and fuzzers can call it directly;
:func:`to_tokens` is its inverse for built-in effects. Every error is a :class:`GrammarError` with a one-line
message that names what would have been valid.
"""

from __future__ import annotations

import difflib
import enum
import inspect
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .._base.errors import StompboxError
from ..core import registry

if TYPE_CHECKING:  # imported where used: checking a chain's names (render's first step) needs neither
    from ..board import Pedalboard
    from ..core.plugin import Plugin

__all__ = ["GrammarError", "builtin_effects", "find_effect", "parse_effects", "parse_value", "to_tokens"]

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class GrammarError(StompboxError, ValueError):
    """A command-line effect description that does not make a valid chain (a usage error, exit status 2).

    The message is always one line: control characters echoed from a token are shown escaped.
    """

    def __init__(self, message: str) -> None:
        super().__init__("".join(c if c.isprintable() else repr(c)[1:-1] for c in str(message)))


def builtin_effects() -> dict[str, type[Plugin]]:
    """Every built-in effect class, by its Python name, in alphabetical order."""
    return dict(registry.builtin_effects())


def find_effect(name: str) -> type[Plugin]:
    """The built-in effect class called ``name`` (case-insensitive; ``-`` and ``_`` are ignored).

    Only the module of the effect asked for is imported (less memory for a long render).

    Raises
    ------
    GrammarError
        If there is no such effect; the message lists the valid names (and the closest match).
    """
    try:
        return registry.lookup(name, "effect")
    except registry.UnknownPluginError:
        pass
    by_key = {_key(n): n for n in registry.names("effect")}
    close = difflib.get_close_matches(_key(name), list(by_key), n=1, cutoff=0.6)
    hint = f" (did you mean {by_key[close[0]]}?)" if close else ""
    valid = ", ".join(builtin_effects())
    raise GrammarError(f"unknown effect {name!r}{hint}; valid effects: {valid}")


def check_names(tokens: Sequence[str]) -> None:
    """Raise the :class:`GrammarError` :func:`parse_effects` would for an unknown effect name or a setting
    before any effect, without importing any effect's module (no Numba): a command can answer a usage error
    before it starts reading and writing."""
    known = {_key(n) for n in registry.names("effect")}
    seen = False
    for token in tokens:
        if not isinstance(token, str) or "=" in token or (seen and _number(token)):
            if isinstance(token, str) and "=" in token and not seen:
                raise GrammarError(f"parameter {token!r} comes before any effect; put an effect name first")
            continue
        if token.strip() and not token.startswith("-") and _key(token) not in known:
            find_effect(token.strip())  # raises, with the list of valid names and the closest one
        seen = True


def _key(name: str) -> str:
    return name.strip().replace("-", "").replace("_", "").lower()


def _constructor_extras(cls: type[Plugin]) -> dict[str, inspect.Parameter]:
    """Keyword arguments of ``cls.__init__`` that are not declared parameters (e.g. Convolution's IR file)."""
    try:
        signature = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return {}
    return {
        name: p
        for name, p in signature.parameters.items()
        if name != "self"
        and name not in cls.parameter_specs()
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }


def valid_arguments(cls: type[Plugin]) -> list[str]:
    """The names ``PARAM=`` may take for ``cls``: declared parameters, then other constructor arguments."""
    return [*cls.parameter_specs(), *_constructor_extras(cls)]


def parse_value(cls: type[Plugin], name: str, text: str) -> Any:
    """Turn the text of ``name=text`` into the Python value ``cls(name=...)`` expects.

    The range is not checked here: the plugin's own validation does that (with its own message).
    """
    param = cls.parameter_specs().get(name)
    if param is None:
        return _parse_extra(cls, name, text)
    kind = param.kind
    where = f"{cls.__name__}.{name}"
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        members = {m.lower(): member for m, member in kind.__members__.items()}
        member = members.get(text.strip().lower())
        if member is not None:
            return member
        try:
            return kind(int(text))
        except (ValueError, TypeError):
            pass
        raise GrammarError(f"{where} must be one of {', '.join(kind.__members__)} (got {text!r})")
    if kind is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise GrammarError(f"{where} must be true or false (got {text!r})")
    try:
        number = float(text)
    except ValueError:
        unit = f" in {param.unit}" if param.unit else ""
        raise GrammarError(f"{where} must be a number{unit} (got {text!r}); valid range {param.range}") from None
    if kind is int and number.is_integer():
        return int(number)
    return number


def _parse_extra(cls: type[Plugin], name: str, text: str) -> Any:
    extras = _constructor_extras(cls)
    annotation = extras[name].annotation
    hint = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    if "None" in hint and text.strip().lower() == "none":
        return None
    if "str" in hint or "PathLike" in hint:
        return text
    if "float" in hint or "int" in hint:
        try:
            number = float(text)
        except ValueError:
            raise GrammarError(f"{cls.__name__}.{name} must be a number (got {text!r})") from None
        return int(number) if "int" in hint and "float" not in hint and number.is_integer() else number
    return text


def _build(cls: type[Plugin], args: list[tuple[str, str]]) -> Plugin:
    valid = valid_arguments(cls)
    kwargs: dict[str, Any] = {}
    for name, text in args:
        if name not in valid:
            close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            if not valid:
                raise GrammarError(f"{cls.__name__} takes no parameters (got {name!r})")
            raise GrammarError(f"{cls.__name__} has no parameter {name!r}{hint}; valid parameters: {', '.join(valid)}")
        if name in kwargs:
            raise GrammarError(f"{cls.__name__}: parameter {name!r} given twice")
        kwargs[name] = parse_value(cls, name, text)
    try:
        return cls(**kwargs)
    except TypeError as error:
        missing = [
            n for n, p in _constructor_extras(cls).items() if p.default is inspect.Parameter.empty and n not in kwargs
        ]
        if missing:
            raise GrammarError(f"{cls.__name__} needs {missing[0]}=VALUE") from error
        raise GrammarError(f"{cls.__name__}: {' '.join(str(error).split())}") from error
    except (ValueError, OSError, RuntimeError) as error:
        raise GrammarError(f"{cls.__name__}: {' '.join(str(error).split())}") from error


def _number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def parse_effects(tokens: Sequence[str], board: Pedalboard | None = None, notes: list[str] | None = None) -> Pedalboard:
    """Build a :class:`Pedalboard` from command-line tokens ``EFFECT [PARAM=VALUE ...] ...``.

    Parameters
    ----------
    tokens : sequence of str
        E.g. ``["distortion", "drive_db=25", "delay", "delay_seconds=0.6"]``. An empty sequence gives an empty
        board.
    board : Pedalboard, optional
        Append the effects to this board (e.g. one loaded with ``--chain``) instead of a new one.
    notes : list of str, optional
        Where to put a line for each value given SoX's way, by position (``gain -3``): it is taken as the
        effect's next declared parameter, and the note spells it ``gain_db=-3``. Without ``notes``, such a
        value is a :class:`GrammarError` that names that spelling.

    Returns
    -------
    Pedalboard
        The board, effects in the order given.

    Raises
    ------
    GrammarError
        For an unknown effect or parameter, a parameter before any effect, a malformed or out-of-range value,
        or a missing required argument. The one-line message names what is valid.
    """
    if isinstance(tokens, str):
        raise TypeError("parse_effects() takes a sequence of tokens, not one string (use shlex.split).")
    from ..board import Pedalboard

    result = board if board is not None else Pedalboard()
    current: type[Plugin] | None = None
    args: list[tuple[str, str]] = []
    for token in tokens:
        if not isinstance(token, str):
            raise TypeError(f"tokens must be str, not {type(token).__name__}")
        if "=" in token:
            name, _, value = token.partition("=")
            name = name.strip()
            if current is None:
                raise GrammarError(f"parameter {token!r} comes before any effect; put an effect name first")
            if not name:
                raise GrammarError(f"{token!r}: missing parameter name before '='")
            if not value.strip():
                raise GrammarError(f"{current.__name__}.{name}: missing value after '='")
            args.append((name, value))
            continue
        if not token.strip():
            raise GrammarError("empty effect name")
        if current is not None and _number(token):
            given = {name for name, _ in args}
            free = [name for name in current._params if name not in given]
            name = current.__name__.lower()
            if not free:
                raise GrammarError(f"{name} has no parameter left for the value {token!r}; write PARAM=VALUE")
            if notes is None:
                raise GrammarError(f"effects take PARAM=VALUE settings: write {name} {free[0]}={token}")
            notes.append(f"read '{name} {token}' as {name} {free[0]}={token}")
            args.append((free[0], token))
            continue
        if token.startswith("-"):
            raise GrammarError(f"unknown option {token!r}")
        if current is not None:
            result.append(_build(current, args))
        current, args = find_effect(token.strip()), []
    if current is not None:
        result.append(_build(current, args))
    return result


def _format(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # round-trips exactly
    return str(value)


def to_tokens(plugins: Plugin | Iterable[Plugin | None]) -> list[str]:
    """The command-line tokens that :func:`parse_effects` turns back into ``plugins`` (built-ins only).

    Parameters whose value equals the default are left out. Nested containers and plugins whose constructor
    takes more than parameters (e.g. Convolution's impulse response) cannot be written as tokens and raise
    ``ValueError``.
    """
    from ..board import Pedalboard
    from ..core.plugin import Plugin

    items = list(plugins) if isinstance(plugins, Pedalboard) or not isinstance(plugins, Plugin) else [plugins]
    tokens: list[str] = []
    table = builtin_effects()
    for plugin in items:
        if plugin is None:
            continue
        name = type(plugin).__name__
        if table.get(name) is not type(plugin):
            raise ValueError(f"{name} is not a built-in effect and has no command-line form")
        if any(p.default is inspect.Parameter.empty for p in _constructor_extras(type(plugin)).values()):
            raise ValueError(f"{name} has constructor arguments that are not parameters; use a chain file")
        tokens.append(name.lower())
        for pname, param in type(plugin).parameter_specs().items():
            value = getattr(plugin, pname)
            if not param.is_default(value):
                tokens.append(f"{pname}={_format(value)}")
    return tokens
