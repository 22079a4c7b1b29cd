"""pedalboard's ``utils`` module: the containers (and, with the pitch family, ``time_stretch``)."""

from .board import Chain, Mix

__all__ = ["Chain", "Mix"]
