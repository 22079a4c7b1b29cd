"""The public API surface: every pedalboard 0.9.26 name exists in stompbox, and every built-in effect's
constructor takes the same parameters, in the same order, with the same defaults."""

from __future__ import annotations

import inspect
import re

import pytest

import stompbox

# pedalboard names that are pybind11 leftovers or platform-specific, not API
NOT_API = {"Unknown", "ClearsAudioOnReset", "PersistsAudioOnReset", "AudioUnitPlugin"}


def has(name: str) -> bool:
    try:
        getattr(stompbox, name)
    except (AttributeError, ImportError):
        return False
    return True


def pedalboard_names(pb) -> list[str]:
    return sorted(n for n in dir(pb) if not n.startswith("_") and n not in NOT_API and n != "numpy")


def test_every_pedalboard_name_exists(pb):
    missing = [n for n in pedalboard_names(pb) if not has(n)]
    assert not missing, f"missing from stompbox: {missing}"


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _pybind_signature(pb_class) -> list[tuple[str, str | None]]:
    """Parameter names and default texts from a pybind11 ``__init__`` docstring."""
    doc = (pb_class.__init__.__doc__ or "").strip().splitlines()[0]
    inner = doc[doc.index("(") + 1 : doc.rindex(")")]
    parts = [p.strip() for p in _split_top_level(inner)][1:]  # drop self
    result = []
    for part in parts:
        name = part.split(":")[0].strip()
        default = part.split("=", 1)[1].strip() if "=" in part else None
        result.append((name, default))
    return result


def effect_names(pb) -> list[str]:
    names = []
    for name in pedalboard_names(pb):
        obj = getattr(pb, name)
        if (
            isinstance(obj, type)
            and issubclass(obj, pb.Plugin)
            and name
            not in (
                "Plugin",
                "PluginContainer",
                "Pedalboard",
                "Chain",
                "Mix",
                "ExternalPlugin",
                "VST3Plugin",
                "IIRFilter",
            )
        ):
            names.append(name)
    return names


def _same_default(ours, theirs_text: str | None) -> bool:
    if theirs_text is None:
        return ours is inspect.Parameter.empty
    if theirs_text == "None":
        return ours is None
    if theirs_text in ("True", "False"):
        return ours is (theirs_text == "True")
    enum_default = re.fullmatch(r"<\w+\.(\w+): (-?\d+)>", theirs_text)  # pybind11 shows enums as <Mode.LPF12: 0>
    if enum_default:
        return getattr(ours, "name", None) == enum_default.group(1) and int(ours) == int(enum_default.group(2))
    try:
        return float(ours) == pytest.approx(float(theirs_text), rel=1e-6)
    except (TypeError, ValueError):
        return False


def test_constructor_signatures_match(pb):
    problems = []
    for name in effect_names(pb):
        if not has(name):
            continue  # reported by test_every_pedalboard_name_exists
        theirs = _pybind_signature(getattr(pb, name))
        ours = [
            (p.name, p.default)
            for p in inspect.signature(getattr(stompbox, name).__init__).parameters.values()
            # keyword-only parameters are stompbox extensions (e.g. Convolution's ir_resampling): pedalboard code
            # never passes them, so they cannot change what its calls mean
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL, p.KEYWORD_ONLY)
        ]
        if [n for n, _ in ours] != [n for n, _ in theirs]:
            problems.append(f"{name}: parameters {[n for n, _ in ours]} != {[n for n, _ in theirs]}")
            continue
        for (pname, our_default), (_, their_default) in zip(ours, theirs, strict=True):
            if not _same_default(our_default, their_default):
                problems.append(f"{name}.{pname}: default {our_default!r} != {their_default}")
    assert not problems, "\n".join(problems)


def test_default_parameter_values_match(pb):
    problems = []
    for name in effect_names(pb):
        if not has(name) or name in ("Convolution",):
            continue
        ours, theirs = getattr(stompbox, name)(), getattr(pb, name)()
        for pname in type(ours).parameter_specs():
            a, b = getattr(ours, pname), getattr(theirs, pname, None)
            if b is None:
                continue
            if isinstance(a, float | int) and not isinstance(a, bool):
                if float(a) != pytest.approx(float(b), rel=1e-6):
                    problems.append(f"{name}.{pname}: {a} != {b}")
            elif int(getattr(a, "value", a)) != int(b):
                problems.append(f"{name}.{pname}: {a} != {b}")
    assert not problems, "\n".join(problems)
