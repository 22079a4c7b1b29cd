"""The compiled half of the live stream: miniaudio's data callback as a Numba ``cfunc`` that never takes the GIL.

miniaudio calls :func:`data_callback` on its audio thread with the device pointer, interleaved float32 output and
input buffers and a frame count. The device's ``pUserData`` holds the address of the stream's *control block*, a
C-contiguous int64 numpy array laid out by the constants below; everything the callback needs (the rings, the
scratch block, the channel matrix, the active plan) is reached through addresses stored in it. Nothing in the
callback touches a Python object, allocates, or can raise.

Per period the callback:

1. stamps the period (count and ``CLOCK_MONOTONIC`` time, through ``clock_gettime`` called by address);
2. reads the active plan slot once (two slots and an active index: Python writes the inactive slot, then flips
   the index with a release store) and acknowledges the slot's generation;
3. deinterleaves the input, records it (a lock-free single-producer/single-consumer ring whose counters only
   grow; the frames that do not fit are counted as dropped), maps it to the output channels through a matrix
   made by stompbox's channel rule, and adds what :meth:`AudioStream.write` queued in the output ring;
4. calls the plan (``int64 plan(float32* block, int64 channels, int64 n, int64* table)``, C-contiguous
   ``(channels, n)`` in place; it returns the bit mask of steps whose output was not finite, OR-ed into the
   control block for Python to act on) through its address;
5. interleaves the block into the output, or records it (input-only streams).

The Python side of the rings (:func:`ring_push` / :func:`ring_pop`) is compiled too and releases the GIL.
Counters are published with release stores and read with acquire loads, so a consumer never sees a counter
before the frames it covers.

This module imports Numba: it is imported by :mod:`stompbox.live.stream` only when a device is opened.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base.jit import _guard

_guard()  # a usable Numba cache folder before Numba is imported

import numba  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba import types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

# ------------------------------------------------------------------ the control block (int64 words)
MAGIC = 0x53544F4D50424F58  # "STOMPBOX"
W_MAGIC = 0
W_N_IN = 1  # input channels (0: no input device)
W_N_OUT = 2  # output channels (0: no output device)
W_MAX_FRAMES = 3  # frames of the scratch block (longer device periods are processed in pieces)
W_SCRATCH = 4  # address of float32[channels * max_frames]
W_MATRIX = 5  # address of float32[n_out, n_in]: input -> output channels (duplex)
W_ACTIVE = 6  # active plan slot, 0 or 1 (written by Python with a release store)
W_ERROR = 7  # non-zero: output silence (Python saw a failure)
W_CALLBACKS = 8  # periods seen
W_LAST_NS = 9  # CLOCK_MONOTONIC nanoseconds of the last period (0 without a clock)
W_ACK_GEN = 10  # generation of the plan slot the callback last started a period with
W_ACK_NS = 11  # when it first did (CLOCK_MONOTONIC ns)
W_MASK = 12  # OR of the plans' non-finite masks (Python exchanges it with 0)
W_STOPPED = 13  # set by the stop callback
W_CLOCK_FN = 14  # address of clock_gettime, or 0
W_TIMESPEC = 15  # two words: its struct timespec
W_IN_DATA = 17  # address of float32[n_in, in_capacity]
W_IN_CAP = 18
W_IN_WRITTEN = 19  # producer: the callback
W_IN_CONSUMED = 20  # consumer: read()
W_DROPPED = 21  # input frames that did not fit (callback)
W_OUT_DATA = 22  # address of float32[n_out, out_capacity]
W_OUT_CAP = 23
W_OUT_WRITTEN = 24  # producer: write()
W_OUT_CONSUMED = 25  # consumer: the callback
W_UNDERRUN = 26  # output frames the queue could not fill while write() was feeding (callback)
W_WRITING = 27  # write() is feeding (set by Python)
W_PLAN_CALLS = 28  # periods that ran a plan
W_ACK_PERIOD = 29  # the period count (W_CALLBACKS) when the callback first ran the slot of W_ACK_GEN
W_MAX_GAP_NS = 30  # the longest time between the starts of two periods (diagnostics; Python may reset it)
W_BUSY_NS = 31  # the longest time a period took inside the callback (diagnostics)
W_SLOTS = 32  # slot k: words 32 + 4k .. : plan address, table address, generation
SLOT_WORDS = 4
W_MAX_GAP_AT = 40  # the period count when W_MAX_GAP_NS was measured (diagnostics)
W_CLOCK_ID = 41  # the clock_gettime clock (CLOCK_MONOTONIC: Python's time.CLOCK_MONOTONIC)
W_PLAN_FRAMES = 42  # frames run through plans (the plugins' clocks advance by it, from Python)
CTL_WORDS = 48


# ------------------------------------------------------------------ intrinsics: raw memory, atomics, calls
@intrinsic
def _addr(typingctx: Any, ptr: Any) -> Any:
    """A pointer as an int64 address."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ptrtoint(args[0], ir.IntType(64))

    return types.int64(ptr), codegen


@intrinsic
def _ptr(typingctx: Any, address: Any) -> Any:
    """An int64 address as a ``void*`` (for ``numba.carray``)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], ir.IntType(8).as_pointer())

    return types.voidptr(types.int64), codegen


def _i64_pointer(builder: Any, address: Any) -> Any:
    return builder.inttoptr(address, ir.IntType(64).as_pointer())


@intrinsic
def load_acquire(typingctx: Any, address: Any) -> Any:
    """Atomic int64 load with acquire ordering."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.load_atomic(_i64_pointer(builder, args[0]), "acquire", 8)

    return types.int64(types.int64), codegen


@intrinsic
def store_release(typingctx: Any, address: Any, value: Any) -> Any:
    """Atomic int64 store with release ordering (every earlier write is visible before it)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        builder.store_atomic(args[1], _i64_pointer(builder, args[0]), "release", 8)
        return context.get_dummy_value()

    return types.none(types.int64, types.int64), codegen


@intrinsic
def fetch_or(typingctx: Any, address: Any, value: Any) -> Any:
    """Atomic ``*address |= value``; returns the old value."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.atomic_rmw("or", _i64_pointer(builder, args[0]), args[1], "acq_rel")

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def exchange(typingctx: Any, address: Any, value: Any) -> Any:
    """Atomic exchange; returns the old value."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.atomic_rmw("xchg", _i64_pointer(builder, args[0]), args[1], "acq_rel")

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def call_plan(typingctx: Any, function: Any, block: Any, channels: Any, frames: Any, table: Any) -> Any:
    """Call ``int64 plan(float32* block, int64 channels, int64 n, int64* table)`` at address ``function``."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64, ptr = ir.IntType(64), ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(i64, [ptr, i64, i64, ptr])
        target = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(target, [builder.inttoptr(args[1], ptr), args[2], args[3], builder.inttoptr(args[4], ptr)])

    sig = types.int64(types.int64, types.int64, types.int64, types.int64, types.int64)
    return sig, codegen


@intrinsic
def call_clock(typingctx: Any, function: Any, clock_id: Any, timespec: Any) -> Any:
    """Call ``int clock_gettime(int clock_id, struct timespec* ts)`` at address ``function``."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i32, ptr = ir.IntType(32), ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(i32, [i32, ptr])
        target = builder.inttoptr(args[0], fnty.as_pointer())
        result = builder.call(target, [builder.trunc(args[1], i32), builder.inttoptr(args[2], ptr)])
        return builder.sext(result, ir.IntType(64))

    return types.int64(types.int64, types.int64, types.int64), codegen


# ------------------------------------------------------------------ ring buffers (planar float32, monotonic counters)
_JIT = {"nogil": True, "cache": True, "error_model": "numpy", "boundscheck": False}


@numba.njit(**_JIT)
def _word(base: int, index: int) -> int:
    return base + 8 * index


@numba.njit(**_JIT)
def _record(ctl: Any, base: int, src: Any, n: int) -> None:
    """Callback side: push ``src`` (channels, >= n) into the input ring; count what does not fit."""
    cap = ctl[W_IN_CAP]
    channels = ctl[W_N_IN]
    data = numba.carray(_ptr(ctl[W_IN_DATA]), (channels, cap), np.float32)
    written = ctl[W_IN_WRITTEN]
    space = cap - (written - load_acquire(_word(base, W_IN_CONSUMED)))
    take = min(n, space)
    for i in range(take):
        pos = (written + i) % cap
        for c in range(channels):
            data[c, pos] = src[c, i]
    if take > 0:
        store_release(_word(base, W_IN_WRITTEN), written + take)
    if take < n:
        store_release(_word(base, W_DROPPED), ctl[W_DROPPED] + (n - take))


@numba.njit(**_JIT)
def _take_queued(ctl: Any, base: int, block: Any, n: int, add: bool) -> int:
    """Callback side: move up to ``n`` frames of ``write()``'s queue into ``block`` (added or stored)."""
    cap = ctl[W_OUT_CAP]
    channels = ctl[W_N_OUT]
    data = numba.carray(_ptr(ctl[W_OUT_DATA]), (channels, cap), np.float32)
    consumed = ctl[W_OUT_CONSUMED]
    got = min(n, load_acquire(_word(base, W_OUT_WRITTEN)) - consumed)
    for i in range(got):
        pos = (consumed + i) % cap
        for c in range(channels):
            if add:
                block[c, i] += data[c, pos]
            else:
                block[c, i] = data[c, pos]
    if got > 0:
        store_release(_word(base, W_OUT_CONSUMED), consumed + got)
    return got


@numba.njit(**_JIT)
def ring_push(ctl: Any, block: Any, start: int) -> int:
    """Python side of ``write()``: queue frames ``start:`` of ``block`` (channels, n); returns how many fit."""
    base = ctl.ctypes.data
    cap = ctl[W_OUT_CAP]
    channels = ctl[W_N_OUT]
    data = numba.carray(_ptr(ctl[W_OUT_DATA]), (channels, cap), np.float32)
    written = ctl[W_OUT_WRITTEN]
    space = cap - (written - load_acquire(_word(base, W_OUT_CONSUMED)))
    take = min(block.shape[1] - start, space)
    for c in range(channels):
        for i in range(take):
            data[c, (written + i) % cap] = block[c, start + i]
    if take > 0:
        store_release(_word(base, W_OUT_WRITTEN), written + take)
    return max(take, 0)


@numba.njit(**_JIT)
def ring_pop(ctl: Any, out: Any, start: int) -> int:
    """Python side of ``read()``: move recorded frames into ``out[:, start:]``; returns how many."""
    base = ctl.ctypes.data
    cap = ctl[W_IN_CAP]
    channels = ctl[W_N_IN]
    data = numba.carray(_ptr(ctl[W_IN_DATA]), (channels, cap), np.float32)
    consumed = ctl[W_IN_CONSUMED]
    got = min(out.shape[1] - start, load_acquire(_word(base, W_IN_WRITTEN)) - consumed)
    for c in range(channels):
        for i in range(got):
            out[c, start + i] = data[c, (consumed + i) % cap]
    if got > 0:
        store_release(_word(base, W_IN_CONSUMED), consumed + got)
    return max(got, 0)


@numba.njit(**_JIT)
def atomic_read(ctl: Any, index: int) -> int:
    return load_acquire(_word(ctl.ctypes.data, index))


@numba.njit(**_JIT)
def atomic_write(ctl: Any, index: int, value: int) -> None:
    store_release(_word(ctl.ctypes.data, index), value)


@numba.njit(**_JIT)
def atomic_exchange(ctl: Any, index: int, value: int) -> int:
    return exchange(_word(ctl.ctypes.data, index), value)


# ------------------------------------------------------------------ one device period
@numba.njit(**_JIT)
def _now_ns(ctl: Any, base: int) -> int:
    clock = ctl[W_CLOCK_FN]
    if clock == 0:
        return 0
    call_clock(clock, ctl[W_CLOCK_ID], _word(base, W_TIMESPEC))
    return ctl[W_TIMESPEC] * 1_000_000_000 + ctl[W_TIMESPEC + 1]


@numba.njit(**_JIT)
def run_period(base: int, out_addr: int, in_addr: int, frames: int) -> None:
    """The whole device period (see the module text). ``base`` is the control block's address."""
    ctl = numba.carray(_ptr(base), CTL_WORDS, np.int64)
    if ctl[W_MAGIC] != MAGIC:
        return
    now = _now_ns(ctl, base)
    if ctl[W_LAST_NS] != 0 and now - ctl[W_LAST_NS] > ctl[W_MAX_GAP_NS]:
        ctl[W_MAX_GAP_NS] = now - ctl[W_LAST_NS]
        ctl[W_MAX_GAP_AT] = ctl[W_CALLBACKS]
    store_release(_word(base, W_CALLBACKS), ctl[W_CALLBACKS] + 1)
    store_release(_word(base, W_LAST_NS), now)
    active = load_acquire(_word(base, W_ACTIVE))
    slot = W_SLOTS + SLOT_WORDS * active
    plan = ctl[slot]
    table = ctl[slot + 1]
    generation = ctl[slot + 2]
    if ctl[W_ACK_GEN] != generation:
        ctl[W_ACK_NS] = now
        ctl[W_ACK_PERIOD] = ctl[W_CALLBACKS]
        store_release(_word(base, W_ACK_GEN), generation)
    n_in = ctl[W_N_IN]
    n_out = ctl[W_N_OUT]
    if load_acquire(_word(base, W_ERROR)) != 0:
        if out_addr != 0:
            silent = numba.carray(_ptr(out_addr), frames * n_out, np.float32)
            silent[:] = 0.0
        return
    max_frames = ctl[W_MAX_FRAMES]
    channels = n_out if out_addr != 0 else n_in
    scratch_addr = ctl[W_SCRATCH]
    duplex = in_addr != 0 and out_addr != 0
    matrix = numba.carray(_ptr(ctl[W_MATRIX]), (max(n_out, 1), max(n_in, 1)), np.float32)
    writing = load_acquire(_word(base, W_WRITING)) != 0
    done = 0
    while done < frames:
        n = min(max_frames, frames - done)
        block = numba.carray(_ptr(scratch_addr), (channels, n), np.float32)
        if in_addr != 0:
            inp = numba.carray(_ptr(in_addr + 4 * done * n_in), (n, n_in), np.float32)
            if duplex:
                _record(ctl, base, inp.T, n)
                for c in range(channels):
                    for i in range(n):
                        block[c, i] = 0.0
                for c in range(channels):
                    for j in range(n_in):
                        weight = matrix[c, j]
                        if weight == 1.0:
                            for i in range(n):
                                block[c, i] += inp[i, j]
                        elif weight != 0.0:
                            for i in range(n):
                                block[c, i] += weight * inp[i, j]
                _take_queued(ctl, base, block, n, True)
            else:
                for c in range(channels):
                    for i in range(n):
                        block[c, i] = inp[i, c]
        else:
            got = _take_queued(ctl, base, block, n, False)
            for c in range(channels):
                for i in range(got, n):
                    block[c, i] = 0.0
            if got < n and writing:
                store_release(_word(base, W_UNDERRUN), ctl[W_UNDERRUN] + (n - got))
        if plan != 0:
            mask = call_plan(plan, scratch_addr, channels, n, table)
            if mask != 0:
                fetch_or(_word(base, W_MASK), mask)
            store_release(_word(base, W_PLAN_FRAMES), ctl[W_PLAN_FRAMES] + n)
        if out_addr != 0:
            out = numba.carray(_ptr(out_addr + 4 * done * n_out), (n, n_out), np.float32)
            for i in range(n):
                for c in range(n_out):
                    out[i, c] = block[c, i]
        else:
            _record(ctl, base, block, n)
        done += n
    if plan != 0:
        ctl[W_PLAN_CALLS] += 1
    spent = _now_ns(ctl, base) - now
    if spent > ctl[W_BUSY_NS]:
        ctl[W_BUSY_NS] = spent


_USERDATA_OFFSET = 48  # offsetof(ma_device, pUserData) in pyminiaudio 1.x; checked against cffi before use


@numba.cfunc(types.void(types.voidptr, types.voidptr, types.voidptr, types.uint32), **_JIT)
def data_callback(device: Any, output: Any, input: Any, frame_count: Any) -> None:  # noqa: A002
    base = load_acquire(_addr(device) + _USERDATA_OFFSET)
    if base != 0 and frame_count > 0:
        run_period(base, _addr(output), _addr(input), frame_count)


@numba.cfunc(types.void(types.voidptr), **_JIT)
def stop_callback(device: Any) -> None:
    base = load_acquire(_addr(device) + _USERDATA_OFFSET)
    if base != 0:
        store_release(base + 8 * W_STOPPED, 1)


_ENTRY_SOURCE = """# generated by stompbox.live: the C entry point of plan {plan}, compiled once and cached
from numba import carray, cfunc, types

from {plan} import body

SIGNATURE = types.int64(types.CPointer(types.float32), types.int64, types.int64, types.CPointer(types.int64))


@cfunc(SIGNATURE, nogil=True, cache=True, error_model="numpy")
def entry(block_ptr, channels, n, table_ptr):
    block = carray(block_ptr, (channels, n))
    table = carray(table_ptr, (1 << 40,))
    return body(block, table)
"""
_entries: dict[str, Any] = {}


def plan_address(plan: Any) -> int:
    """The address of ``int64 plan(float32* block, int64 channels, int64 n, int64* table)`` for ``plan``.

    A plan's own ``address`` compiles its C wrapper in every process (about a second); here the wrapper is a
    generated module beside the plan's generated body, so Numba's disk cache serves it from the second process on
    and a stream that swaps boards does not stall on a compiler. Falls back to ``plan.address``.
    """
    module = getattr(plan, "_module", None)
    name = getattr(module, "__name__", "")
    path = getattr(module, "__file__", None)
    if not name.startswith("stompbox_plan_") or path is None:
        return int(plan.address)
    entry = _entries.get(name)
    if entry is None:
        from pathlib import Path

        from ..core.plan import load_generated

        entry_name = "stompbox_live_" + name[len("stompbox_plan_") :]
        try:
            loaded = load_generated(entry_name, _ENTRY_SOURCE.format(plan=name), Path(path).parent)
        except Exception:  # noqa: BLE001 - an unwritable folder: the plan compiles its own wrapper
            return int(plan.address)
        entry = _entries[name] = loaded.entry
    return int(entry.address)


def new_control_block() -> np.ndarray:
    """A zeroed control block with its magic word."""
    ctl = np.zeros(CTL_WORDS, np.int64)
    ctl[W_MAGIC] = MAGIC
    return ctl


def attach(
    ctl: np.ndarray, n_in: int, n_out: int, max_frames: int, in_capacity: int, out_capacity: int, matrix: Any
) -> list[np.ndarray]:
    """Give ``ctl`` new rings (both empty), a scratch block and the input-to-output channel ``matrix``
    (``(n_out, n_in)``, used by duplex streams); the counters of dropped and underrun frames are kept.
    Returns the arrays, which must stay alive as long as a device uses ``ctl``. ``n_in``/``n_out`` are 0 for a
    direction the device does not have."""
    scratch = np.zeros(max(n_in, n_out, 1) * max_frames, np.float32)
    mix = np.zeros((max(n_out, 1), max(n_in, 1)), np.float32)
    if matrix is not None:
        mix[...] = matrix
    in_ring = np.zeros((max(n_in, 1), in_capacity), np.float32)
    out_ring = np.zeros((max(n_out, 1), out_capacity), np.float32)
    ctl[W_N_IN], ctl[W_N_OUT], ctl[W_MAX_FRAMES] = n_in, n_out, max_frames
    ctl[W_SCRATCH], ctl[W_MATRIX] = scratch.ctypes.data, mix.ctypes.data
    ctl[W_IN_DATA], ctl[W_IN_CAP] = in_ring.ctypes.data, in_capacity
    ctl[W_OUT_DATA], ctl[W_OUT_CAP] = out_ring.ctypes.data, out_capacity
    for word in (W_IN_WRITTEN, W_IN_CONSUMED, W_OUT_WRITTEN, W_OUT_CONSUMED, W_ERROR, W_WRITING):
        ctl[word] = 0
    return [scratch, mix, in_ring, out_ring]


def clock_address() -> int:
    """The address of the C library's ``clock_gettime`` (0 where there is none: the watchdog then counts
    periods instead of reading their time)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        return int(ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value or 0)
    except (OSError, AttributeError):
        return 0


def userdata_offset_matches(ffi: Any) -> bool:
    """Whether this miniaudio build puts ``pUserData`` where the compiled callback reads it."""
    return int(ffi.offsetof("ma_device", "pUserData")) == _USERDATA_OFFSET
