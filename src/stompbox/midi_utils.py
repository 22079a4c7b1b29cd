"""MIDI message helpers under pedalboard's ``pedalboard.midi_utils`` names.

Instrument plugins take MIDI as mido-style messages (objects with ``bytes()`` and ``time``) or
``(message, seconds)`` tuples whose message is ``bytes`` or a list of byte values; these helpers turn such
input into ``(bytes, seconds)`` pairs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["normalize_midi_messages", "parse_midi_message_part", "parse_midi_message_string"]


def parse_midi_message_part(byte: int | str | bytes) -> int:
    """One byte of a MIDI message as an int: an int as it is, a string of decimal digits, or one byte.

    Raises
    ------
    NotImplementedError
        For any other text or type (as pedalboard).
    """
    if isinstance(byte, bool):
        raise NotImplementedError(f"Not sure how to interpret provided MIDI message part: {byte!r}.")
    if isinstance(byte, int):
        return byte
    if isinstance(byte, bytes | bytearray) and len(byte) == 1:
        return byte[0]
    if isinstance(byte, str) and byte.isdecimal():
        return int(byte)
    raise NotImplementedError(f"Not sure how to interpret provided MIDI message part: {byte!r}.")


def parse_midi_message_string(midi_message_string: str) -> bytes:
    """Text MIDI messages are not supported (as in pedalboard): raises ``NotImplementedError``."""
    raise NotImplementedError(
        f"MIDI messages must currently be bytes or lists of byte values, not text ({midi_message_string!r})."
    )


def _message_bytes(message: Any) -> bytes:
    if isinstance(message, bytes | bytearray):
        return bytes(message)
    if isinstance(message, str):
        return parse_midi_message_string(message)
    if isinstance(message, list | tuple):
        return bytes(parse_midi_message_part(part) for part in message)
    raise NotImplementedError(f"MIDI messages must currently be bytes or lists of byte values, not {message!r}.")


def normalize_midi_messages(_input: Iterable[Any]) -> list[tuple[bytes, float]]:
    """``(bytes, seconds)`` for each message of ``_input``: mido-style messages (``bytes()`` and ``time``) or
    ``(message, seconds)`` pairs, the message being ``bytes`` or a list of byte values.

    Raises
    ------
    TypeError
        An item is neither form (its index is named).
    NotImplementedError
        A message is text or another type.
    """
    out: list[tuple[bytes, float]] = []
    for index, item in enumerate(_input):
        if hasattr(item, "bytes") and hasattr(item, "time"):
            out.append((bytes(item.bytes()), item.time))
        elif isinstance(item, tuple | list) and len(item) == 2:
            out.append((_message_bytes(item[0]), item[1]))
        else:
            raise TypeError(
                f"Unable to interpret MIDI message at index {index}: {item!r}. MIDI messages must be objects with "
                "`bytes` and `time` attributes (like mido.Message) or (message, seconds) tuples, the time counted "
                "from the start of the rendered buffer."
            )
    return out
