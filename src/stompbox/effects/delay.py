"""Delay: a digital echo with feedback and a linear dry/wet mix."""

from __future__ import annotations

import numpy as np

from ..core.jit import kernel
from ..core.params import Param
from ..core.plan import PlanStep
from ..core.plugin import Plugin

MAX_DELAY_SECONDS = 30.0


@kernel
def _delay_kernel(
    block: np.ndarray, buffers: np.ndarray, pos: np.ndarray, params: np.ndarray
) -> None:  # pragma: no cover - compiled
    """Feedback delay line, in place: ``w[n] = x[n] + feedback * w[n-d]``, ``y[n] = dry*x[n] + wet*w[n-d]``.

    ``buffers`` is ``(channels, size)`` with ``size`` a power of two > ``delay``: the ring of past ``w``
    values, written at ``pos[0]`` (advanced in place). ``params`` is float64 ``[delay, feedback, dry, wet]``
    (the delay in whole samples); a delay of zero samples passes the block through.
    """
    delay = int(params[0])
    if delay == 0:
        return
    feedback = params[1]
    dry = params[2]
    wet = params[3]
    n: int
    channels, n = block.shape
    mask: int = buffers.shape[1] - 1
    start = pos[0]
    for c in range(channels):
        ring = buffers[c]
        p = start
        for i in range(n):
            x = block[c, i]
            delayed = ring[(p - delay) & mask]
            ring[p] = x + feedback * delayed
            block[c, i] = dry * x + wet * delayed
            p = (p + 1) & mask
    pos[0] = (start + n) & mask


@kernel
def _delay_tv_kernel(
    block: np.ndarray,
    buffers: np.ndarray,
    pos: int,
    delay: np.ndarray,
    feedback: np.ndarray,
    dry: np.ndarray,
    wet: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """:func:`_delay_kernel` with per-sample ``delay`` (float samples, fractional: read by linear
    interpolation), ``feedback``, ``dry`` and ``wet`` (float64 arrays of the block's length). A delay under one
    sample reads the current input for the missing part (no feedback through a zero-length loop).
    """
    n: int
    channels, n = block.shape
    mask: int = buffers.shape[1] - 1
    for c in range(channels):
        ring = buffers[c]
        p = pos
        for i in range(n):
            x = block[c, i]
            d = delay[i]
            whole = int(d)
            frac = d - whole
            if whole == 0:
                a = x
            else:
                a = ring[(p - whole) & mask]
            b = ring[(p - whole - 1) & mask]
            delayed = a + frac * (b - a)
            if d == 0.0:
                ring[p] = x
                block[c, i] = x
            else:
                ring[p] = x + feedback[i] * delayed
                block[c, i] = dry[i] * x + wet[i] * delayed
            p = (p + 1) & mask
    return (pos + n) & mask


class Delay(Plugin, block_invariant=True, whole_call=True):
    """A digital delay with feedback and a dry/wet mix.

    The delay time is truncated to whole samples (no interpolation), from its float32 value as in pedalboard
    (0.01 s at 44.1 kHz is 440 samples). The delay line holds
    ``w[n] = x[n] + feedback * w[n - d]`` and the output is ``(1 - mix) * x[n] + mix * w[n - d]``, so an impulse
    gives echoes at ``k * d`` samples with amplitudes ``mix * feedback ** (k - 1)``. A delay that rounds to zero
    samples passes the input through unchanged.

    Output has the input's length: echoes that fall after the end of the input are not heard (pad the input with
    silence, or keep calling with ``reset=False``, to hear the tail). This is why a long delay on a short
    signal can seem to ignore ``feedback``: only the first echo fits.

    An automated delay is read with linear interpolation at fractional positions (so a sweep glides, with the
    pitch change of a tape delay, instead of clicking); a static delay is truncated to whole samples as in
    pedalboard.
    """

    delay_seconds = Param(
        0.5,
        minimum=0.0,
        maximum=MAX_DELAY_SECONDS,
        unit="s",
        doc="delay time",
        error="Delay (in seconds) must be between {minimum:.1f}s and {maximum:g}s.",
        per_sample=True,
    )
    feedback = Param(
        0.0,
        minimum=0.0,
        maximum=1.0,
        doc="fraction of the echo fed back into the delay line",
        error="Feedback must be between {minimum:.1f} and {maximum:.1f}.",
        per_sample=True,
    )
    mix = Param(
        0.5,
        minimum=0.0,
        maximum=1.0,
        doc="wet fraction of the output",
        error="Mix must be between {minimum:.1f} and {maximum:.1f}.",
        per_sample=True,
    )

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._sr = sample_rate
        self._channels = num_channels
        self._buffers = np.zeros((num_channels, 0), np.float32)
        self._pos = np.zeros(1, np.int64)  # the ring's write position
        self._settings = np.zeros(4)  # [delay in samples, feedback, dry, wet], written in place by _update

    def _reset_state(self) -> None:
        self._buffers[:] = 0.0
        self._pos[0] = 0

    def _update(self) -> None:
        # the time is held in single precision and truncated to whole samples, as in pedalboard
        self._delay = int(float(np.float32(self.delay_seconds)) * self._sr)
        self._feedback = float(np.float32(self.feedback))
        mix = np.float32(self.mix)
        self._wet = float(mix)
        self._dry = float(np.float32(1.0) - mix)
        if self._delay >= self._buffers.shape[1]:
            self._grow(self._delay + 1)
        self._settings[:] = (self._delay, self._feedback, self._dry, self._wet)

    def _grow(self, needed: int) -> None:
        """Enlarge the ring to a power of two >= ``needed``, keeping the most recent history in order."""
        size = 1 << max(needed - 1, 1).bit_length()
        old = self._buffers
        new = np.zeros((self._channels, size), np.float32)
        if old.shape[1]:
            history = np.roll(old, -int(self._pos[0]), axis=1)  # oldest first
            new[:, size - old.shape[1] :] = history
        self._buffers = new
        self._pos[0] = 0
        self._plan_changed()  # plans hold the old ring's address

    @property
    def tail_seconds(self) -> float:
        if self.delay_seconds == 0.0 or self.mix == 0.0:
            return 0.0
        if self.feedback >= 1.0:
            return float("inf")
        if self.feedback <= 0.0:
            return float(self.delay_seconds)
        # echoes until they fall 60 dB below the first one
        repeats = 1 + int(np.ceil(-3.0 / np.log10(self.feedback)))
        return float(self.delay_seconds) * repeats

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        return None if self._automation else [PlanStep(_delay_kernel, (self._buffers, self._pos, self._settings))]

    def _process(self, block: np.ndarray) -> np.ndarray:
        _delay_kernel(block, self._buffers, self._pos, self._settings)
        return block

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        n = block.shape[1]
        seconds = curves.get("delay_seconds")
        if seconds is None:
            delay = np.full(n, float(self._delay))
        else:
            delay = np.minimum(seconds * self._sr, MAX_DELAY_SECONDS * self._sr)
        top = int(delay.max()) + 2
        if top >= self._buffers.shape[1]:
            self._grow(top + 1)
        feedback = curves.get("feedback")
        feedback = np.full(n, self._feedback) if feedback is None else feedback
        mix = curves.get("mix")
        wet = np.full(n, self._wet) if mix is None else mix
        dry = np.full(n, self._dry) if mix is None else 1.0 - mix
        self._pos[0] = _delay_tv_kernel(block, self._buffers, int(self._pos[0]), delay, feedback, dry, wet)
        return block
