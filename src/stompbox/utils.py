"""pedalboard's ``utils`` module: the containers and ``time_stretch`` (loaded on first use)."""

from typing import Any

from .board import Chain, Mix

__all__ = ["Chain", "Mix", "time_stretch"]  # noqa: F822 - time_stretch is loaded on first use


def __getattr__(name: str) -> Any:
    if name == "time_stretch":
        from .effects.pitch import time_stretch

        return time_stretch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
