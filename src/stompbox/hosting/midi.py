"""MIDI input for instrument plugins: the message forms pedalboard accepts, turned into timed byte strings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np


def sample_index(seconds: float, sample_rate: float) -> int:
    """The sample a time in seconds falls on, as pedalboard computes it: the float32 product of the time and
    the sample rate, truncated. (So 0.53 s at 48 kHz is sample 25439, not 25440; a rendered buffer of
    ``duration`` seconds has ``sample_index(duration, sample_rate)`` samples.)"""
    return int(np.float32(seconds) * np.float32(sample_rate))


def check_not_swapped(duration: Any, sample_rate: Any) -> None:
    """``ValueError`` naming the likely mistake when ``duration`` and ``sample_rate`` look swapped (checked before
    the sample rate's own range, whose error would not say why)."""
    if isinstance(duration, int | float) and isinstance(sample_rate, int | float) and duration > sample_rate > 0:
        raise ValueError(
            f"The duration ({duration}) is longer than the sample rate ({sample_rate}): are you "
            "reversing the order of the duration and sample_rate arguments? (Expected: midi_messages, "
            "duration, sample_rate.)"
        )


def read_midi_messages(messages: Iterable[Any], duration: float, sample_rate: float) -> list[tuple[int, bytes]]:
    """``(sample_index, midi_bytes)`` for each message, sorted by time (stable), dropping those after
    ``duration``.

    Accepted items: objects with ``.bytes()`` and ``.time`` (``mido.Message``; ``time`` in absolute seconds),
    ``(bytes, seconds)`` and ``(list[int], seconds)`` tuples. An item that cannot be read raises
    ``TypeError``.
    More than 100 messages of which more than 100 share one timestamp raises ``ValueError`` (the times look
    like deltas rather than absolute seconds).
    """
    check_not_swapped(duration, sample_rate)
    timed: list[tuple[float, bytes]] = []
    for item in messages:
        if hasattr(item, "bytes") and hasattr(item, "time"):
            data, seconds = bytes(item.bytes()), float(item.time)
        elif isinstance(item, tuple | list) and len(item) == 2:
            raw, seconds = item
            if isinstance(raw, bytes | bytearray):
                data = bytes(raw)
            elif isinstance(raw, list | tuple) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
                data = bytes(raw)
            else:
                raise TypeError(f"Unable to read MIDI message data from {item!r}: expected bytes or a list of ints.")
            try:
                seconds = float(seconds)
            except (TypeError, ValueError):
                raise TypeError(f"Unable to read a timestamp (in seconds) from {item!r}.") from None
        else:
            raise TypeError(
                f"Unable to read MIDI message {item!r}: expected a mido.Message, (bytes, seconds) or "
                "(list[int], seconds)."
            )
        if not data:
            raise TypeError(f"Empty MIDI message: {item!r}")
        timed.append((seconds, data))
    if len(timed) > 100:
        _, most = Counter(t for t, _ in timed).most_common(1)[0]
        if most > 100:
            raise ValueError(
                f"{most} MIDI messages share the same timestamp. Timestamps must be absolute, in seconds "
                "from the start of the buffer (not deltas between messages, as in MIDI files)."
            )
    out = []
    for seconds, data in sorted(timed, key=lambda x: x[0]):
        if seconds > duration or seconds < 0:
            continue
        out.append((sample_index(seconds, sample_rate), data))
    return out
