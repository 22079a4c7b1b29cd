"""The compiled device callback (stompbox.live._native) driven directly, as miniaudio drives it: a fake
``ma_device`` whose ``pUserData`` is the control block, interleaved float32 buffers, any frame count.

No audio device and no timing: every count (recorded, dropped, underrun, mixed, processed) is exact.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from _live_standin import PlanGain, compile_standin
from stompbox.live import _native as N
from stompbox.live.device import load
from stompbox.live.stream import _map_channels

CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32)
STOP = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Fake:
    """A control block attached to rings, and a fake device pointing at it."""

    def __init__(self, n_in: int, n_out: int, max_frames: int = 64, in_cap: int = 256, out_cap: int = 256, matrix=None):
        self.ctl = N.new_control_block()
        if matrix is None and n_in and n_out:  # the stream's own: stompbox's channel rule applied to identity
            matrix = _map_channels(np.eye(n_in, dtype=np.float32), n_out)
        self.keep = N.attach(self.ctl, n_in, n_out, max_frames, in_cap, out_cap, matrix)
        self.device = np.zeros(N._USERDATA_OFFSET // 8 + 8, np.int64)  # only pUserData is read
        self.device[N._USERDATA_OFFSET // 8] = self.ctl.ctypes.data
        self.callback = CALLBACK(N.data_callback.address)
        self.n_in, self.n_out = n_in, n_out

    def period(self, inp: np.ndarray | None, frames: int) -> np.ndarray | None:
        """One period: ``inp`` (frames, n_in) interleaved; returns the output (frames, n_out) or None."""
        out = np.full((frames, self.n_out), 7.0, np.float32) if self.n_out else None
        in_arr = None if inp is None else np.ascontiguousarray(inp, np.float32)
        self.callback(
            self.device.ctypes.data,
            None if out is None else out.ctypes.data,
            None if in_arr is None else in_arr.ctypes.data,
            frames,
        )
        return out

    def read(self, frames: int) -> np.ndarray:
        out = np.zeros((self.n_in, frames), np.float32)
        got = N.ring_pop(self.ctl, out, 0)
        return out[:, :got]

    def install(self, slot: int, address: int, table: int, generation: int) -> None:
        base = N.W_SLOTS + N.SLOT_WORDS * slot
        self.ctl[base : base + 3] = address, table, generation
        N.atomic_write(self.ctl, N.W_ACTIVE, slot)


def test_the_callback_reads_user_data_where_this_miniaudio_keeps_it():
    assert N.userdata_offset_matches(load()[1])


def test_duplex_records_dry_input_maps_mono_to_stereo_and_mixes_the_write_queue():
    fake = Fake(1, 2)
    x = np.arange(1, 41, dtype=np.float32)[:, None] / 64  # 40 frames, mono
    queued = np.stack([np.full(30, 0.25, np.float32), np.full(30, -0.5, np.float32)])
    assert N.ring_push(fake.ctl, queued, 0) == 30
    out = fake.period(x, 40)
    # input copied to both channels; the 30 queued frames added to the first 30
    expected = np.repeat(x, 2, axis=1)
    expected[:30, 0] += 0.25
    expected[:30, 1] -= 0.5
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(fake.read(100), x.T)  # the dry input, recorded once
    assert fake.ctl[N.W_DROPPED] == 0 and fake.ctl[N.W_UNDERRUN] == 0  # duplex never counts underruns
    assert fake.ctl[N.W_CALLBACKS] == 1 and fake.ctl[N.W_OUT_CONSUMED] == 30


def test_duplex_downmix_uses_the_channel_rule_matrix():
    matrix = np.array([[0.5, 0.5]], np.float32)  # stereo in, mono out
    fake = Fake(2, 1, matrix=matrix)
    x = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]], np.float32)
    np.testing.assert_array_equal(fake.period(x, 3)[:, 0], [0.5, 0.5, 0.0])


def test_dropped_input_is_counted_frame_exactly():
    fake = Fake(2, 0, in_cap=100)
    x = np.ones((60, 2), np.float32)
    fake.period(x, 60)
    fake.period(x, 60)  # 40 fit, 20 dropped
    assert fake.ctl[N.W_DROPPED] == 20 and fake.ctl[N.W_IN_WRITTEN] == 100
    assert fake.read(30).shape == (2, 30)
    fake.period(x, 60)  # 30 fit, 30 dropped
    assert fake.ctl[N.W_DROPPED] == 50
    assert fake.read(1000).shape == (2, 100)


def test_output_underruns_are_counted_only_while_write_feeds():
    fake = Fake(0, 2)
    fake.period(None, 32)  # nothing queued, nobody writing: silence, not a dropout
    assert fake.ctl[N.W_UNDERRUN] == 0
    N.atomic_write(fake.ctl, N.W_WRITING, 1)
    block = np.stack([np.arange(50, dtype=np.float32), -np.arange(50, dtype=np.float32)])
    N.ring_push(fake.ctl, block, 0)
    out = fake.period(None, 32)
    np.testing.assert_array_equal(out.T, block[:, :32])
    out = fake.period(None, 32)  # 18 left: 14 frames of silence while writing
    np.testing.assert_array_equal(out[:18].T, block[:, 32:])
    assert not out[18:].any()
    assert fake.ctl[N.W_UNDERRUN] == 14
    N.atomic_write(fake.ctl, N.W_WRITING, 0)
    fake.period(None, 32)
    assert fake.ctl[N.W_UNDERRUN] == 14


def test_the_write_queue_wraps_and_refuses_what_does_not_fit():
    fake = Fake(0, 1, out_cap=50)
    data = np.arange(120, dtype=np.float32)[None]
    assert N.ring_push(fake.ctl, data, 0) == 50
    assert N.ring_push(fake.ctl, data, 50) == 0
    got = [fake.period(None, 20)[:, 0]]
    assert N.ring_push(fake.ctl, data, 50) == 20  # wraps around the end of the ring
    for _ in range(3):
        got.append(fake.period(None, 20)[:, 0])
    np.testing.assert_array_equal(np.concatenate(got)[:70], data[0, :70])


def test_long_periods_run_in_pieces_of_max_frames_through_the_plan():
    gain = PlanGain(gain_db=-6.0)
    gain._update()
    plan = compile_standin(gain, 64)
    fake = Fake(1, 1, max_frames=64)
    fake.install(0, plan.address, plan.table.ctypes.data, 1)
    x = np.linspace(-1, 1, 150, dtype=np.float32)[:, None]
    out = fake.period(x, 150)
    np.testing.assert_array_equal(out, x * gain._coef[0])
    assert plan.periods[0] == 3  # 64 + 64 + 22
    assert fake.ctl[N.W_PLAN_CALLS] == 1 and fake.ctl[N.W_ACK_GEN] == 1


def test_plan_swap_between_periods_and_parameter_change_in_place():
    a, b = PlanGain(gain_db=-6.0), PlanGain(gain_db=6.0)
    a._update()
    b._update()
    plan_a, plan_b = compile_standin(a, 64), compile_standin(b, 64)
    fake = Fake(0, 1)
    fake.install(0, plan_a.address, plan_a.table.ctypes.data, 1)
    fake.install(1, plan_b.address, plan_b.table.ctypes.data, 2)  # flips before the next period
    N.ring_push(fake.ctl, np.ones((1, 64), np.float32), 0)
    out = fake.period(None, 16)
    assert np.all(out == b._coef[0]) and plan_a.periods[0] == 0 and fake.ctl[N.W_ACK_GEN] == 2
    b.gain_db = 0.0
    b._update()  # writes the coefficient the plan reads
    assert np.all(fake.period(None, 16) == 1.0)
    assert plan_b.periods[1] == 2  # the new factor was first applied in the second period


def test_non_finite_output_is_reported_and_an_error_silences():
    gain = PlanGain(gain_db=0.0)
    gain._update()
    plan = compile_standin(gain, 64)
    fake = Fake(1, 1)
    fake.install(0, plan.address, plan.table.ctypes.data, 1)
    fake.period(np.array([[np.inf], [0.0]], np.float32), 2)
    assert N.atomic_exchange(fake.ctl, N.W_MASK, 0) == 1 and fake.ctl[N.W_MASK] == 0
    N.atomic_write(fake.ctl, N.W_ERROR, 1)
    out = fake.period(np.ones((8, 1), np.float32), 8)
    assert not out.any() and fake.ctl[N.W_IN_WRITTEN] == 2  # nothing recorded after the error


def test_the_stop_callback_sets_the_stopped_word():
    fake = Fake(0, 1)
    STOP(N.stop_callback.address)(fake.device.ctypes.data)
    assert fake.ctl[N.W_STOPPED] == 1


def test_periods_are_timed_with_the_monotonic_clock():
    import time

    fake = Fake(0, 1)
    fake.ctl[N.W_CLOCK_FN] = N.clock_address()
    fake.ctl[N.W_CLOCK_ID] = time.CLOCK_MONOTONIC
    if not fake.ctl[N.W_CLOCK_FN]:
        pytest.skip("no clock_gettime here")
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    fake.period(None, 4)
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    assert before <= fake.ctl[N.W_LAST_NS] <= after
