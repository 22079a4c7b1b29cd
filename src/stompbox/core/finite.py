"""Whether a float32 block is all finite, in one compiled pass that releases the GIL.

The engine checks every block a stateful plugin outputs (the non-finite rule in ``Plugin._step``). NumPy's
``np.isfinite(block).all()`` makes a boolean temporary and takes the GIL twice; this is one compiled call that
reads the bits: a float32 is NaN or infinite exactly when its eight exponent bits are all set, so the largest
exponent field over the block says it, and an integer maximum vectorises. (This module imports Numba; the engine
imports it on first use, so that ``import stompbox`` does not.)
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .jit import kernel

_EXPONENT = np.uint32(0x7F800000)


@intrinsic
def _bits(typingctx, value):  # type: ignore[no-untyped-def]
    """The IEEE-754 bits of a float32, as a uint32 (a reinterpretation, no conversion)."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(32))

    return types.uint32(types.float32), codegen


@kernel
def all_finite(block: np.ndarray) -> bool:  # pragma: no cover - compiled
    """True if no sample of the 2-D float32 ``block`` (any strides) is NaN or infinite."""
    top = np.uint32(0)
    for c in range(block.shape[0]):
        row = block[c]
        for i in range(row.shape[0]):
            top = max(top, _bits(row[i]) & _EXPONENT)
    finite: bool = top != _EXPONENT
    return finite
