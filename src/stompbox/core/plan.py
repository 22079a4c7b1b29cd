"""TEMPORARY stand-in (branch planfx) until helper `plan` lands core/plan.py: only PlanStep."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class PlanStep(NamedTuple):
    kernel: Any
    args: tuple[np.ndarray, ...]
    rows: tuple[int, int] | None = None
