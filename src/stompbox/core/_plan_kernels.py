"""Compiled helpers of plans (see :mod:`stompbox.core.plan`): imported by generated plan bodies only, so importing
stompbox does not import Numba."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, cfunc, types
from numba.extending import intrinsic

from .._base.jit import kernel


@intrinsic
def address_as_pointer(typingctx, address, dtype):  # pragma: no cover - compiled
    """``address`` (an int64) as a pointer to ``dtype`` values (a NumPy scalar type such as ``np.float32``)."""
    target = dtype.instance_type if isinstance(dtype, types.NumberClass) else dtype.dtype
    pointer = types.CPointer(target)
    sig = pointer(address, dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(pointer))

    return sig, codegen


@kernel
def nonfinite(block):  # pragma: no cover - compiled
    """Whether a float32 ``(channels, n)`` block holds a NaN or an infinity (one pass over the exponent bits)."""
    top = np.uint32(0)
    for c in range(block.shape[0]):
        row = block[c].view(np.uint32)
        for i in range(row.shape[0]):
            top = max(top, row[i] & np.uint32(0x7F800000))
    return top == np.uint32(0x7F800000)


_SIGNATURE = types.int64(types.CPointer(types.float32), types.int64, types.int64, types.CPointer(types.int64))


def make_cfunc(body: Any) -> Any:
    """A C-callable ``int64 (float32 *block, int64 channels, int64 n, int64 *table)`` around a plan ``body``."""

    def entry(block_ptr, channels, n, table_ptr):  # pragma: no cover - compiled
        block = carray(block_ptr, (channels, n))
        table = carray(table_ptr, (1 << 40,))  # read where the body reads: its layout knows the length
        return body(block, table)

    return cfunc(_SIGNATURE, nogil=True, cache=False)(entry)


# ------------------------------------------------------------------ the steps of a Mix (see board.Mix)
@kernel
def mix_save(block, saved):  # pragma: no cover - compiled
    """Keep the input of a Mix: ``saved[:, :n] = block``."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            saved[c, i] = block[c, i]


@kernel
def mix_restore(block, saved):  # pragma: no cover - compiled
    """Start the next branch on the input: ``block = saved[:, :n]``."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            block[c, i] = saved[c, i]


@kernel
def mix_add(block, total, first):  # pragma: no cover - compiled
    """Sum a branch's output: ``total[:, :n] = block`` for the first branch (``first[0]`` set), else ``+=``."""
    channels, n = block.shape
    if first[0]:
        for c in range(channels):
            for i in range(n):
                total[c, i] = block[c, i]
    else:
        for c in range(channels):
            for i in range(n):
                total[c, i] += block[c, i]


@kernel
def mix_take(block, total):  # pragma: no cover - compiled
    """The Mix's output: ``block = total[:, :n]``."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            block[c, i] = total[c, i]


@kernel
def mix_silence(block):  # pragma: no cover - compiled
    """An empty Mix outputs silence."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            block[c, i] = 0.0
