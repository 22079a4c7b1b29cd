"""The limits stompbox puts on numbers, each stated once and checked here (standard library and NumPy only).

Every number that sizes memory or work (a sample rate, a resampling ratio, a channel count, a tail, a nesting
depth, a chain file) has one rule, and every public call that takes such a number checks it with a function of
this module. A value outside the rule raises :class:`LimitError` (a ``ValueError``) whose message states the
allowed range, before anything is allocated or handed to a compiled library.

================================  =========================================================================
Number                            Rule
================================  =========================================================================
sample rate processed, resampled  :data:`MIN_SAMPLE_RATE` (1 Hz) to :data:`MAX_SAMPLE_RATE` (10 MHz):
or written                        effects, ``process()``, ``render()``, ``resampled_to()``,
                                  ``StreamResampler``, ``Resample``, ``Convolution``'s impulse response,
                                  writers, streams. A file whose header states any other positive rate is
                                  still read, and reports that rate.
resampling ratio                  at most :data:`MAX_RESAMPLING_RATIO` (4096:1) either way
channels written                  per format: :data:`MAX_CHANNELS_OF_FORMAT`
tail                              at most ``max_tail_seconds``, explicit or ``"auto"``: by default
                                  :data:`DEFAULT_MAX_TAIL_SECONDS` (30 s) in ``render()``, and
                                  :data:`BATCH_MAX_TAIL_SECONDS` (60 s) in ``batch`` and the command line;
                                  pass a larger ``max_tail_seconds`` (``--max-tail``) to raise it
nesting of containers             at most :data:`MAX_NESTING` levels (boards in boards, chain files)
chain file                        at most :data:`MAX_CHAIN_FILE_BYTES` bytes, and at most
                                  :data:`MAX_CHAIN_NODES` values once YAML aliases are expanded
================================  =========================================================================
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from .errors import LimitError

__all__ = [
    "BATCH_MAX_TAIL_SECONDS",
    "DEFAULT_MAX_TAIL_SECONDS",
    "MAX_CHAIN_FILE_BYTES",
    "MAX_CHAIN_NODES",
    "MAX_CHANNELS_OF_FORMAT",
    "MAX_NESTING",
    "MAX_RESAMPLING_RATIO",
    "MAX_SAMPLE_RATE",
    "MIN_SAMPLE_RATE",
    "LimitError",
    "check_chain_bytes",
    "check_chain_nodes",
    "check_channels",
    "check_nesting",
    "check_resampling_ratio",
    "check_sample_rate",
    "check_tail",
]

#: The lowest sample rate processed, resampled or written, in Hz.
MIN_SAMPLE_RATE = 1.0
#: The highest sample rate processed, resampled or written, in Hz. Effects size their delay lines and
#: filters from the rate; 10 MHz keeps every built-in effect's memory bounded (a 2-s delay line: 80 MB).
MAX_SAMPLE_RATE = 10_000_000.0
#: The largest ratio between two sample rates a resampler accepts, either way (soxr's memory and work grow
#: with the ratio; past a few thousand it crashes instead of failing).
MAX_RESAMPLING_RATIO = 4096.0
#: The most channels each written format takes: what its encoder and libsndfile's reader handle (libsndfile
#: neither writes nor reads WAV or AIFF beyond 1024; Vorbis and Opus store a channel count in one byte, and
#: libsndfile's Vorbis encoder crashes at 256).
MAX_CHANNELS_OF_FORMAT: dict[str, int] = {
    "wav": 1024,
    "aiff": 1024,
    "flac": 8,
    "ogg": 255,
    "opus": 255,
    "mp3": 2,
    "m4a": 8,
}
_FORMAT_NAMES = {
    "wav": "WAV",
    "aiff": "AIFF",
    "flac": "FLAC",
    "ogg": "Ogg Vorbis",
    "opus": "Opus",
    "mp3": "MP3",
    "m4a": "AAC (M4A)",
}
#: The longest tail ``render()`` and ``render_file()`` render unless the caller passes a larger
#: ``max_tail_seconds``.
DEFAULT_MAX_TAIL_SECONDS = 30.0
#: The same for ``stompbox.batch`` and the command line (``--max-tail``).
BATCH_MAX_TAIL_SECONDS = 60.0
#: The deepest nesting of containers (a board in a board in ...), in processing and in chain files.
MAX_NESTING = 64
#: The largest chain file read, in bytes.
MAX_CHAIN_FILE_BYTES = 16 << 20
#: The most values (dicts, lists, scalars) a chain file may hold once its YAML aliases are expanded.
MAX_CHAIN_NODES = 100_000


def _hz(value: float) -> str:
    return f"{int(value):,} Hz" if float(value).is_integer() else f"{value:g} Hz"


def check_sample_rate(value: Any, what: str = "sample_rate") -> float:
    """``value`` as a float if it is a number of Hz from :data:`MIN_SAMPLE_RATE` to :data:`MAX_SAMPLE_RATE`.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (a bool is not).
    LimitError
        If it is outside the range, or not finite.
    """
    if type(value) in (int, float) and MIN_SAMPLE_RATE <= value <= MAX_SAMPLE_RATE:  # the common case, fast
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a number of Hz (got {type(value).__name__}).")
    try:
        rate = float(value)
    except OverflowError:  # an int too large for a float
        rate = math.inf
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:  # NaN fails too
        raise LimitError(f"{what} must be from {_hz(MIN_SAMPLE_RATE)} to {_hz(MAX_SAMPLE_RATE)} (got {value!r}).")
    return rate


def check_resampling_ratio(source: float, target: float) -> None:
    """Raise :class:`LimitError` if resampling from ``source`` to ``target`` Hz (both already checked by
    :func:`check_sample_rate`) is a ratio beyond :data:`MAX_RESAMPLING_RATIO` either way."""
    ratio = max(target / source, source / target)
    if ratio > MAX_RESAMPLING_RATIO:
        raise LimitError(
            f"Resampling from {_hz(source)} to {_hz(target)} is a ratio of {ratio:,.6g}:1; at most "
            f"{MAX_RESAMPLING_RATIO:g}:1 (either way) is supported. Resample in steps of at most "
            f"{MAX_RESAMPLING_RATIO:g}:1 if you need more."
        )


def check_channels(count: int, format: str) -> int:
    """``count`` if the format ``format`` (a key of :data:`MAX_CHANNELS_OF_FORMAT`) can hold that many
    channels (at least 1), else :class:`LimitError` naming the format's maximum."""
    most = MAX_CHANNELS_OF_FORMAT.get(format)
    if count < 1:
        raise LimitError(f"num_channels must be at least 1 (got {count}).")
    if most is not None and count > most:
        name = _FORMAT_NAMES.get(format, format.upper())
        allowed = "1 or 2 channels" if most == 2 else f"at most {most:,} channels"
        raise LimitError(f"Unable to create {name} writer: {name} files take {allowed} (got {count:,}).")
    return count


def check_tail(seconds: Any, max_tail_seconds: Any, what: str = "tail") -> float:
    """``seconds`` as a float if it is a finite number of seconds from 0 to ``max_tail_seconds``;
    ``max_tail_seconds`` itself must be a finite number >= 0 (the caller's raised cap, or
    :data:`DEFAULT_MAX_TAIL_SECONDS`)."""
    if isinstance(max_tail_seconds, bool) or not isinstance(max_tail_seconds, numbers.Real):
        raise TypeError(f"max_tail_seconds must be a number of seconds (got {type(max_tail_seconds).__name__}).")
    if not 0.0 <= float(max_tail_seconds) < math.inf:
        raise LimitError(f"max_tail_seconds must be a finite number of seconds >= 0 (got {max_tail_seconds!r}).")
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise TypeError(f"{what} must be a number of seconds (got {type(seconds).__name__}).")
    value = float(seconds)
    if not 0.0 <= value <= float(max_tail_seconds):
        raise LimitError(
            f"{what} must be from 0 to max_tail_seconds={float(max_tail_seconds):g} s (got {seconds!r}); pass a "
            "larger max_tail_seconds to render a longer tail."
        )
    return value


def check_nesting(depth: int, what: str = "Containers") -> None:
    """Raise :class:`LimitError` if ``depth`` levels of containers exceed :data:`MAX_NESTING`."""
    if depth > MAX_NESTING:
        raise LimitError(f"{what} may be nested at most {MAX_NESTING} levels deep (got {depth} or more).")


def check_chain_bytes(size: int) -> None:
    """Raise :class:`LimitError` if a chain file of ``size`` bytes is larger than :data:`MAX_CHAIN_FILE_BYTES`."""
    if size > MAX_CHAIN_FILE_BYTES:
        raise LimitError(f"A chain file may hold at most {MAX_CHAIN_FILE_BYTES:,} bytes (got {size:,}).")


def check_chain_nodes(count: int) -> None:
    """Raise :class:`LimitError` if a chain file expands to more than :data:`MAX_CHAIN_NODES` values."""
    if count > MAX_CHAIN_NODES:
        raise LimitError(
            f"A chain file may hold at most {MAX_CHAIN_NODES:,} values once its YAML aliases are expanded "
            f"(this one holds more than {MAX_CHAIN_NODES:,})."
        )
