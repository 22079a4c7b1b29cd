"""Compiled helpers of plans (see :mod:`stompbox.core.plan`): imported by generated plan bodies only, so importing
stompbox does not import Numba."""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import carray, cfunc, types
from numba.extending import intrinsic

from .._base.jit import kernel


@intrinsic
def address_as_pointer(typingctx: Any, address: Any, dtype: Any) -> Any:  # pragma: no cover - compiled
    """``address`` (an int64) as a pointer to ``dtype`` values (a NumPy scalar type such as ``np.float32``)."""
    target = dtype.instance_type if isinstance(dtype, types.NumberClass) else dtype.dtype
    pointer = types.CPointer(target)
    sig = pointer(address, dtype)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], context.get_value_type(pointer))

    return sig, codegen


@intrinsic
def pointer_as_address(typingctx: Any, pointer: Any) -> Any:  # pragma: no cover - compiled
    """A pointer as an int64 address."""
    sig = types.int64(pointer)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ptrtoint(args[0], context.get_value_type(types.int64))

    return sig, codegen


@intrinsic
def call_step(
    typingctx: Any, function: Any, block: Any, rows: Any, n: Any, args: Any
) -> Any:  # pragma: no cover - compiled
    """Call the step entry point at address ``function``: ``void step(int64 block, int64 rows, int64 n,
    int64 args)`` (all addresses and counts as int64)."""
    sig = types.void(types.int64, types.int64, types.int64, types.int64, types.int64)

    def codegen(context: Any, builder: Any, signature: Any, values: Any) -> Any:
        i64 = context.get_value_type(types.int64)
        fnty = ir.FunctionType(ir.VoidType(), [i64, i64, i64, i64])
        target = builder.inttoptr(values[0], fnty.as_pointer())
        builder.call(target, list(values[1:]))
        return context.get_dummy_value()

    return sig, codegen


@kernel
def nonfinite(block: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Whether a float32 ``(channels, n)`` block holds a NaN or an infinity (one pass over the exponent bits)."""
    top = np.uint32(0)
    for c in range(block.shape[0]):
        row = block[c].view(np.uint32)
        for i in range(row.shape[0]):
            top = max(top, row[i] & np.uint32(0x7F800000))
    return top == np.uint32(0x7F800000)


#: header of a plan table: [number of steps, length of the table]; then per step
#: [entry point, first row, stop row (-1: all), check bit (-1: none), length L of its arguments, L argument words]
HEADER = 2
STEP_WORDS = 5


@kernel
def run_plan(block: int, channels: int, n: int, table: int) -> int:  # pragma: no cover - compiled
    """Run the steps of a plan ``table`` (int64 words, see ``HEADER``) on the float32 block at address ``block``
    (``channels`` rows of ``n`` samples, planar); return the bit mask of the checks that found non-finite
    output."""
    words = carray(address_as_pointer(table, np.int64), (HEADER,))
    words = carray(address_as_pointer(table, np.int64), (words[1],))
    mask = 0
    o = HEADER
    for _ in range(words[0]):
        first = words[o + 1]
        stop = words[o + 2]
        if stop < 0:
            stop = channels
        start = block + first * n * 4
        call_step(words[o], start, stop - first, n, table + (o + STEP_WORDS) * 8)
        bit = words[o + 3]
        if bit >= 0 and n > 0:
            if nonfinite(carray(address_as_pointer(start, np.float32), (stop - first, n))):
                mask |= 1 << bit
        o += STEP_WORDS + words[o + 4]
    return mask


@kernel
def run_arrays(block: np.ndarray, table: np.ndarray) -> int:  # pragma: no cover - compiled
    """:func:`run_plan` on a C-contiguous float32 ``(channels, n)`` array and an int64 table array."""
    return run_plan(block.ctypes.data, block.shape[0], block.shape[1], table.ctypes.data)


_SIGNATURE = types.int64(types.CPointer(types.float32), types.int64, types.int64, types.CPointer(types.int64))
#: the signature of a step's entry point: ``void step(int64 block, int64 rows, int64 n, int64 args)``
STEP_SIGNATURE = types.void(types.int64, types.int64, types.int64, types.int64)
_entry: Any = None


def _run_entry(block: Any, channels: int, n: int, table: Any) -> int:  # pragma: no cover - compiled
    return run_plan(pointer_as_address(block), channels, n, pointer_as_address(table))


def make_entry(step: Any) -> Any:
    """Compile a generated step function as a C callback of :data:`STEP_SIGNATURE`, cached on disk, loaded from
    the cache the quick way (see ``stompbox._base.jit._fast_cache_load``)."""
    from numba.core import sigutils
    from numba.core.ccallback import CFunc

    from .._base.jit import _fast_cache_load, _guard

    _guard()
    entry = CFunc(step, sigutils.normalize_signature(STEP_SIGNATURE), locals={}, options={"nogil": True})
    try:
        entry.enable_caching()
    except (RuntimeError, OSError):  # no usable cache: compile in memory
        pass
    else:
        _fast_cache_load(entry)
    entry.compile()
    return entry


def plan_entry() -> Any:
    """The C-callable ``int64 (float32 *block, int64 channels, int64 n, int64 *table)`` that runs any plan."""
    global _entry
    if _entry is None:
        try:
            _entry = cfunc(_SIGNATURE, nogil=True, cache=True)(_run_entry)
        except (RuntimeError, OSError):  # no usable cache
            _entry = cfunc(_SIGNATURE, nogil=True, cache=False)(_run_entry)
    return _entry


# ------------------------------------------------------------------ the steps of a Mix (see board.Mix)
@kernel
def mix_save(block: np.ndarray, saved: np.ndarray) -> None:  # pragma: no cover - compiled
    """Keep the input of a Mix: ``saved[:, :n] = block``."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            saved[c, i] = block[c, i]


@kernel
def mix_restore(block: np.ndarray, saved: np.ndarray) -> None:  # pragma: no cover - compiled
    """Start the next branch on the input: ``block = saved[:, :n]``."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            block[c, i] = saved[c, i]


@kernel
def mix_add(block: np.ndarray, total: np.ndarray, first: np.ndarray) -> None:  # pragma: no cover - compiled
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
def mix_take(block: np.ndarray, total: np.ndarray) -> None:  # pragma: no cover - compiled
    """The Mix's output: ``block = total[:, :n]``."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            block[c, i] = total[c, i]


@kernel
def mix_silence(block: np.ndarray) -> None:  # pragma: no cover - compiled
    """An empty Mix outputs silence."""
    channels, n = block.shape
    for c in range(channels):
        for i in range(n):
            block[c, i] = 0.0
