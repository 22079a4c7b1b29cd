"""Parameter automation: values that change over the stream, sample by sample.

Any automatable parameter of a built-in effect accepts, instead of a number:

- a per-sample array (:class:`Curve`, or a plain 1-D ``numpy.ndarray``): value ``i`` applies to sample ``i`` of
  the stream; after the last value the last one is held;
- an :class:`Envelope`: breakpoints ``[(time_s, value), ...]`` joined by linear or exponential segments (a plain
  list of ``(time, value)`` pairs is read as a linear envelope);
- an :class:`LFO`: ``offset + depth * wave(rate_hz * t + phase)`` with a sine, triangle, square or saw wave.

An automation is a pure function of the stream position: :meth:`Automation.render` gives the values for samples
``[start, start + n)`` counted from the start of the stream. Each plugin keeps that position (its clock): it
advances with every sample processed, carries over between ``process(..., reset=False)`` calls, and restarts at
0 on a reset. So processing an array whole, in blocks of any size, or streamed, applies exactly the same values.

Envelopes and LFOs are data (:meth:`Automation.to_dict`), so they are saved in chain files; per-sample arrays are
not (``to_dict`` raises a ``ValueError`` for them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["LFO", "Automation", "Curve", "Envelope", "as_automation", "is_automation_like"]

#: the ``"automation"`` key of a serialised automation names its class
_KINDS: dict[str, type[Automation]] = {}


class Automation:
    """Base class: a parameter value as a function of the stream position (see the module docstring)."""

    kind = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind:
            _KINDS[cls.kind] = cls

    def render(self, start: int, n: int, sample_rate: float) -> np.ndarray:
        """The values (float64, length ``n``) for stream samples ``start`` .. ``start + n - 1``."""
        raise NotImplementedError

    def value_at(self, seconds: float, sample_rate: float = 48000.0) -> float:
        """The value at a time in seconds from the start of the stream."""
        index = int(round(seconds * sample_rate))
        return float(self.render(index, 1, sample_rate)[0])

    def bounds(self) -> tuple[float, float]:
        """The smallest and largest value the automation can take."""
        raise NotImplementedError

    def check(self, name: str, lower: float | None, upper: float | None, lower_open: bool, upper_open: bool) -> None:
        """Raise ``ValueError`` naming ``name`` if any value lies outside the given range (or is not finite)."""
        lo, hi = self.bounds()
        bad = None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            bad = lo if not math.isfinite(lo) else hi
        elif lower is not None and (lo < lower or (lower_open and lo == lower)):
            bad = lo
        elif upper is not None and (hi > upper or (upper_open and hi == upper)):
            bad = hi
        if bad is not None:
            raise ValueError(f"{name}: {self._where(bad)} is out of range ({bad!r}).")

    def _where(self, value: float) -> str:
        return f"the automated value {value!r}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description, read back by :meth:`from_dict`."""
        raise NotImplementedError

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Automation:
        """Rebuild an automation from :meth:`to_dict`'s output."""
        kind = data.get("automation")
        cls = _KINDS.get(str(kind))
        if cls is None or cls is Curve:
            raise ValueError(f"Unknown automation kind {kind!r}: expected 'envelope' or 'lfo'.")
        fields = {k: v for k, v in data.items() if k != "automation"}
        return cls(**fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, str(self._key())))

    def _key(self) -> object:
        return self.to_dict()


class Curve(Automation):
    """Per-sample values: ``values[i]`` applies to sample ``i`` of the stream; the last value is held after the
    end. Not saved in chain files (an array is data, not a description).

    Parameters
    ----------
    values : array_like
        1-D sequence of finite numbers (at least one), in the parameter's unit.
    """

    kind = "curve"

    def __init__(self, values: Any) -> None:
        array = np.asarray(values, dtype=np.float64)
        if array.ndim != 1 or array.size == 0:
            raise ValueError(f"An automation array must be 1-D and non-empty (got shape {array.shape}).")
        self.values = np.array(array)  # our own copy: later changes to the caller's array do not leak in
        self.values.setflags(write=False)

    def render(self, start: int, n: int, sample_rate: float) -> np.ndarray:
        v = self.values
        stop = start + n
        if stop <= v.size:
            return v[start:stop]
        out = np.empty(n, np.float64)
        have = max(0, min(v.size - start, n))
        out[:have] = v[start : start + have]
        out[have:] = v[-1]
        return out

    def bounds(self) -> tuple[float, float]:
        finite = np.isfinite(self.values)
        if not finite.all():
            i = int(np.argmin(finite))
            return float(self.values[i]), float(self.values[i])
        return float(self.values.min()), float(self.values.max())

    def check(self, name: str, lower: float | None, upper: float | None, lower_open: bool, upper_open: bool) -> None:
        v = self.values
        bad = ~np.isfinite(v)
        if lower is not None:
            bad |= (v <= lower) if lower_open else (v < lower)
        if upper is not None:
            bad |= (v >= upper) if upper_open else (v > upper)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name}: automation value at sample {i} is out of range ({float(v[i])!r}).")

    def to_dict(self) -> dict[str, Any]:
        raise ValueError(
            "A per-sample automation array cannot be saved in a chain file; use an Envelope (breakpoints) or an "
            "LFO, which are saved as data."
        )

    def _key(self) -> object:
        return self.values.tobytes()

    def __repr__(self) -> str:
        return f"Curve(<{self.values.size} values>)"


class Envelope(Automation):
    """A breakpoint envelope: ``[(time_s, value), ...]`` joined by straight or exponential segments.

    Before the first breakpoint the first value holds, after the last the last value holds. A linear segment
    moves at a constant rate; an exponential one at a constant ratio (``v0 * (v1 / v0) ** fraction``, the natural
    choice for frequencies), which needs both ends non-zero and of the same sign. Times are in seconds from the
    start of the stream (or since the last reset).

    Parameters
    ----------
    points : sequence of (float, float)
        Breakpoints ``(time_s, value)`` with non-decreasing times (a repeated time makes a jump).
    curve : {"linear", "exponential"} or sequence of them
        The shape of every segment, or one shape per segment (``len(points) - 1`` of them). Default linear.
    """

    kind = "envelope"
    CURVES = ("linear", "exponential")

    def __init__(self, points: Sequence[Sequence[float]], curve: str | Sequence[str] = "linear") -> None:
        pts = [tuple(p) for p in points]
        if not pts or any(len(p) != 2 for p in pts):
            raise ValueError("An Envelope needs at least one (time_s, value) breakpoint.")
        times = np.array([float(p[0]) for p in pts])
        values = np.array([float(p[1]) for p in pts])
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(values))):
            raise ValueError("Envelope breakpoints must be finite numbers.")
        if np.any(np.diff(times) < 0):
            raise ValueError("Envelope breakpoint times must not decrease.")
        segments = max(len(pts) - 1, 0)
        curves = [curve] * segments if isinstance(curve, str) else list(curve)
        if len(curves) != segments or any(c not in self.CURVES for c in curves):
            raise ValueError(
                f"curve must be 'linear', 'exponential', or one of them per segment ({segments} segments)."
            )
        for i, c in enumerate(curves):
            if c == "exponential" and not (values[i] * values[i + 1] > 0):
                raise ValueError(
                    f"Envelope segment {i} is exponential but its values {values[i]:g} and {values[i + 1]:g} are "
                    "not both non-zero with the same sign."
                )
        self.times = times
        self.values = values
        self.curves = curves
        self._curve_arg = curve if isinstance(curve, str) else list(curve)
        self._exp = np.array([c == "exponential" for c in curves] + [False])

    def render(self, start: int, n: int, sample_rate: float) -> np.ndarray:
        t = (start + np.arange(n, dtype=np.float64)) / float(sample_rate)
        times, values = self.times, self.values
        if len(times) == 1:
            return np.full(n, values[0])
        # segment k covers [times[k], times[k+1]); searchsorted 'right' makes a repeated time a jump
        k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 2)
        t0, t1 = times[k], times[k + 1]
        v0, v1 = values[k], values[k + 1]
        span = t1 - t0
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.clip(np.where(span > 0, (t - t0) / np.where(span > 0, span, 1.0), 1.0), 0.0, 1.0)
            out: np.ndarray = v0 + (v1 - v0) * frac
            if self._exp.any():
                e = self._exp[k]
                if e.any():
                    out[e] = v0[e] * np.power(v1[e] / v0[e], frac[e])
        out[t < times[0]] = values[0]
        out[t >= times[-1]] = values[-1]
        return out

    def bounds(self) -> tuple[float, float]:
        return float(self.values.min()), float(self.values.max())

    def _where(self, value: float) -> str:
        i = int(np.argmin(np.abs(self.values - value)))
        return f"envelope breakpoint {i} at {self.times[i]:g} s has value {value!r}, which"

    def to_dict(self) -> dict[str, Any]:
        return {
            "automation": self.kind,
            "points": [[float(t), float(v)] for t, v in zip(self.times, self.values, strict=True)],
            "curve": self._curve_arg,
        }

    def __repr__(self) -> str:
        pts = ", ".join(f"({t:g}, {v:g})" for t, v in zip(self.times, self.values, strict=True))
        curve = "" if self._curve_arg == "linear" else f", curve={self._curve_arg!r}"
        return f"Envelope([{pts}]{curve})"


class LFO(Automation):
    """A low-frequency oscillator: ``offset + depth * wave(rate_hz * t + phase)``, ``wave`` in [-1, 1].

    The phase is computed from the absolute stream position (not accumulated), so it never drifts and does not
    depend on the block size.

    Parameters
    ----------
    shape : {"sine", "triangle", "square", "saw"}
        ``sine``: ``sin(2 pi x)``; ``triangle``: in phase with the sine (0 at ``x = 0``, 1 at 0.25, -1 at 0.75);
        ``square``: 1 for the first half of each cycle, -1 for the second (it jumps, by design); ``saw``: rises
        linearly from -1 to 1 over each cycle. Default ``"sine"``.
    rate_hz : float
        Cycles per second, >= 0 (default 1.0).
    depth : float
        Amplitude of the swing around ``offset``, in the parameter's unit (default 1.0).
    offset : float
        Centre value, in the parameter's unit (default 0.0).
    phase : float
        Starting phase in cycles (0 to 1; default 0.0).
    """

    kind = "lfo"
    SHAPES = ("sine", "triangle", "square", "saw")

    def __init__(
        self, shape: str = "sine", rate_hz: float = 1.0, depth: float = 1.0, offset: float = 0.0, phase: float = 0.0
    ) -> None:
        if shape not in self.SHAPES:
            raise ValueError(f"LFO shape must be one of {', '.join(self.SHAPES)} (got {shape!r}).")
        numbers = {"rate_hz": rate_hz, "depth": depth, "offset": offset, "phase": phase}
        for key, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"LFO {key} must be a finite number (got {value!r}).")
        if rate_hz < 0:
            raise ValueError(f"LFO rate_hz must be >= 0 (got {rate_hz!r}).")
        self.shape = shape
        self.rate_hz = float(rate_hz)
        self.depth = float(depth)
        self.offset = float(offset)
        self.phase = float(phase)

    def render(self, start: int, n: int, sample_rate: float) -> np.ndarray:
        # cycles = rate * i / sr + phase, from the integer position (exact, no accumulated drift)
        index = start + np.arange(n, dtype=np.float64)
        x = index * (self.rate_hz / float(sample_rate)) + self.phase
        x -= np.floor(x)
        if self.shape == "sine":
            wave = np.sin(2.0 * np.pi * x)
        elif self.shape == "triangle":
            wave = 1.0 - 4.0 * np.abs(((x + 0.25) % 1.0) - 0.5)  # 0 at x=0, 1 at 0.25, -1 at 0.75
        elif self.shape == "square":
            wave = np.where(x < 0.5, 1.0, -1.0)
        else:
            wave = 2.0 * x - 1.0
        return self.offset + self.depth * wave

    def bounds(self) -> tuple[float, float]:
        d = abs(self.depth)
        return self.offset - d, self.offset + d

    def _where(self, value: float) -> str:
        return f"the LFO reaches {value!r} (offset {self.offset:g} +- depth {abs(self.depth):g}), which"

    def to_dict(self) -> dict[str, Any]:
        return {
            "automation": self.kind,
            "shape": self.shape,
            "rate_hz": self.rate_hz,
            "depth": self.depth,
            "offset": self.offset,
            "phase": self.phase,
        }

    def __repr__(self) -> str:
        return f"LFO({self.shape!r}, rate_hz={self.rate_hz:g}, depth={self.depth:g}, offset={self.offset:g}" + (
            f", phase={self.phase:g})" if self.phase else ")"
        )


def is_automation_like(value: Any) -> bool:
    """Whether ``value`` is an automation (or something :func:`as_automation` turns into one) rather than a
    plain number."""
    if isinstance(value, Automation | np.ndarray):
        return True
    if isinstance(value, dict):
        return "automation" in value
    if isinstance(value, list | tuple) and value:
        return True
    return False


def as_automation(value: Any) -> Automation:
    """An :class:`Automation` from an automation, a 1-D array (:class:`Curve`), a list of ``(time, value)``
    pairs (a linear :class:`Envelope`) or a serialised dict."""
    if isinstance(value, Automation):
        return value
    if isinstance(value, np.ndarray):
        return Curve(value)
    if isinstance(value, dict):
        return Automation.from_dict(value)
    if isinstance(value, list | tuple):
        if all(isinstance(p, list | tuple | np.ndarray) and len(p) == 2 for p in value):
            return Envelope(value)
        return Curve(np.asarray(value, dtype=np.float64))
    raise TypeError(f"Cannot automate with a {type(value).__name__}.")
