"""The base of stompbox's enums: integers that print as pedalboard's enums print."""

from __future__ import annotations

import enum

__all__ = ["PedalboardEnum"]

_NUMERIC_FORMATS = frozenset("bcdoxXneEfFgG%")


class PedalboardEnum(enum.IntEnum):
    """An ``IntEnum`` whose ``str()`` and ``format()`` give ``'Mode.HPF12'``, as pedalboard's enums do
    (``IntEnum`` gives ``'1'``); ``repr()`` is ``<Mode.HPF12: 1>`` in both. A numeric format
    (``f"{mode:d}"``) formats the integer; another format spec pads or aligns the text."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, spec: str) -> str:
        if spec and spec[-1] in _NUMERIC_FORMATS:
            return int.__format__(int(self), spec)
        return format(str(self), spec)
