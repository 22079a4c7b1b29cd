"""Whether a float32 block is all finite, in one compiled pass that releases the GIL.

The engine checks every block a stateful plugin outputs (the non-finite rule in ``Plugin._step``). NumPy's
``np.isfinite(block).all()`` makes a boolean temporary and takes the GIL twice; this reads the bits once: a float32
is NaN or infinite exactly when its eight exponent bits are all set, so the largest exponent field over the block
says it, and an integer maximum vectorises.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

_EXPONENT = np.uint32(0x7F800000)


@kernel
def _max_exponent(bits: np.ndarray) -> np.uint32:  # pragma: no cover - compiled
    top = np.uint32(0)
    for c in range(bits.shape[0]):
        row = bits[c]
        for i in range(row.shape[0]):
            top = max(top, row[i] & np.uint32(0x7F800000))
    return top


def all_finite(block: np.ndarray) -> bool:
    """True if no sample of the 2-D float32 ``block`` (any strides) is NaN or infinite."""
    return bool(_max_exponent(block.view(np.uint32)) != _EXPONENT)
