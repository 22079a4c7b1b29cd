"""Run a VST3 processor over many blocks in one compiled call.

Calling ``IAudioProcessor::process`` through ctypes costs a few microseconds of Python per block, plus the
copies in and out of the bus buffers; over a long file that is 5-10 % of a light plugin's time. :func:`run_blocks`
does the whole loop in a Numba kernel that releases the GIL: for each block it aims the main buses' channel
pointers at the block's frames in the caller's arrays (no copies: in place, as JUCE-based hosts such as
pedalboard process), sets ``ProcessData::numSamples``, calls the plugin's ``process`` through its function pointer
and advances the ``ProcessContext`` clocks, as :meth:`Vst3Instance.process` does for one block.
Callbacks the plugin makes into the host (parameter changes, events) are ctypes callbacks, which take the GIL
themselves, so they still work from inside the kernel.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ...core.jit import kernel


@intrinsic
def _call_process(typingctx, fn, this, data):  # type: ignore[no-untyped-def]
    """``((tresult (*)(void*, ProcessData*)) fn)(this, data)``: a C call through an address held as an integer."""
    sig = types.int32(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        void_ptr = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [void_ptr, void_ptr])
        target = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(target, [builder.inttoptr(args[1], void_ptr), builder.inttoptr(args[2], void_ptr)])

    return sig, codegen


@kernel
def run_blocks(
    fn: int,
    this: int,
    data: int,
    in_pointers: np.ndarray,
    out_pointers: np.ndarray,
    in_address: int,
    out_address: int,
    in_row_bytes: int,
    out_row_bytes: int,
    channels: int,
    n: int,
    block: int,
    num_samples: np.ndarray,
    context: np.ndarray,
    clock_a: int,
    clock_b: int,
) -> int:
    """Process ``n`` frames of ``channels`` rows in blocks of at most ``block`` frames, in place in the caller's
    arrays: before each block the main buses' channel pointers (``in_pointers``/``out_pointers``, int64 views of
    the ``channelBuffers32`` arrays) are aimed at the block's frames in the input and output arrays (base
    addresses and row strides in bytes; the same array for in-place processing, as JUCE hosts do).

    ``num_samples`` is a 1-element int32 view of ``ProcessData::numSamples`` and ``context`` an int64 view of the
    ``ProcessContext``, whose words ``clock_a`` and ``clock_b`` (``projectTimeSamples`` and
    ``continousTimeSamples``) advance by each block. The caller restores the pointers afterwards. Returns the
    number of blocks whose ``process`` did not return kResultOk.
    """
    failures = 0
    for start in range(0, n, block):
        m = min(block, n - start)
        for c in range(channels):
            in_pointers[c] = in_address + c * in_row_bytes + start * 4
            out_pointers[c] = out_address + c * out_row_bytes + start * 4
        num_samples[0] = m
        if _call_process(fn, this, data) != 0:
            failures += 1
        context[clock_a] += m
        context[clock_b] += m
    return failures
