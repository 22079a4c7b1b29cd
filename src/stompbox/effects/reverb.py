"""Reverb: the Freeverb algorithm (Jezar's 8 damped combs + 4 all-passes), with JUCE's scalings and smoothing.

Computed in single precision in the same order as JUCE's ``Reverb`` (the engine behind pedalboard's
``Reverb``), so the outputs agree to within rounding.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import Number, kernel
from ..core.params import Param
from ..core.plan import PlanStep
from ..core.plugin import PairedChannels, Plugin
from .modulation import Smoothers, _next_value, _ramp

F32 = np.float32

# delay lengths in samples at 44.1 kHz (Freeverb's tunings); the right channel's are longer by the spread
COMB_TUNINGS = (1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617)
ALLPASS_TUNINGS = (556, 441, 341, 225)
STEREO_SPREAD = 23
NUM_COMBS = len(COMB_TUNINGS)
NUM_ALLPASSES = len(ALLPASS_TUNINGS)

# internal scalings
WET_SCALE = 3.0
DRY_SCALE = 2.0
INPUT_GAIN = 0.015
ROOM_SCALE = 0.28
ROOM_OFFSET = 0.7
DAMP_SCALE = 0.4
SMOOTHING_SECONDS = 0.01

# smoother rows (row 5 holds the input gain in its first column: not a smoother)
_DAMP, _FEEDBACK, _DRY, _WET1, _WET2, _GAIN = 0, 1, 2, 3, 4, 5


@kernel
def _flush(x: Number) -> Number:  # pragma: no cover - compiled
    """Round a state value through +0.1 and back, as JUCE does on x86 to keep denormals out of the loops."""
    tenth = np.float32(0.1)
    x += tenth
    x -= tenth
    return x


@kernel
def _reverb_kernel(
    block: np.ndarray,
    combs: np.ndarray,
    allpasses: np.ndarray,
    lines: np.ndarray,
    comb_last: np.ndarray,
    sm: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Freeverb on a mono or stereo ``(channels, n)`` float32 block, in place (the plugin's one step: a block
    of more than two channels, which only comes without ``channel_pairs``, passes through unchanged).

    Channel ``c`` uses combs ``combs[c * 8 + j]`` (length ``lines[0, k]``, position ``lines[1, k]``, low-pass
    memory ``comb_last[k]``) and all-passes ``allpasses[c * 4 + j]`` (length ``lines[2, k]``, position
    ``lines[3, k]``). Both channels' combs are fed ``(left + right) * gain`` (the input gain is row 5 of the
    smoother state ``sm``, column 0); the wet outputs are cross-mixed with ``wet1``/``wet2`` for width.
    """
    channels, n = block.shape
    if channels > 2:
        return
    comb_sizes = lines[0]
    comb_pos = lines[1]
    ap_sizes = lines[2]
    ap_pos = lines[3]
    gain = sm[_GAIN, 0]
    one = np.float32(1.0)
    half = np.float32(0.5)
    ramping = False
    for k in range(5):
        if sm[k, 3] > 0.0:
            ramping = True
    damp, feedback, dry, wet1, wet2 = sm[_DAMP, 1], sm[_FEEDBACK, 1], sm[_DRY, 1], sm[_WET1, 1], sm[_WET2, 1]
    for i in range(n):
        if channels == 2:
            inp = (block[0, i] + block[1, i]) * gain
        else:
            inp = block[0, i] * gain
        if ramping:
            damp = _next_value(sm, _DAMP)
            feedback = _next_value(sm, _FEEDBACK)
        out_l = np.float32(0.0)
        out_r = np.float32(0.0)
        for c in range(channels):
            acc = np.float32(0.0)
            for j in range(8):
                k = c * 8 + j
                p = comb_pos[k]
                buf = combs[k]
                output = buf[p]
                last = _flush(output * (one - damp) + comb_last[k] * damp)
                comb_last[k] = last
                buf[p] = _flush(inp + last * feedback)
                p += 1
                if p >= comb_sizes[k]:
                    p = 0
                comb_pos[k] = p
                acc += output
            for j in range(4):
                k = c * 4 + j
                p = ap_pos[k]
                buf = allpasses[k]
                buffered = buf[p]
                buf[p] = _flush(acc + buffered * half)
                p += 1
                if p >= ap_sizes[k]:
                    p = 0
                ap_pos[k] = p
                acc = buffered - acc
            if c == 0:
                out_l = acc
            else:
                out_r = acc
        if ramping:
            dry = _next_value(sm, _DRY)
            wet1 = _next_value(sm, _WET1)
            wet2 = _next_value(sm, _WET2)
        if channels == 2:
            left = block[0, i]
            right = block[1, i]
            block[0, i] = out_l * wet1 + out_r * wet2 + left * dry
            block[1, i] = out_r * wet1 + out_l * wet2 + right * dry
        else:
            block[0, i] = out_l * wet1 + block[0, i] * dry


class Reverb(PairedChannels, Plugin, block_invariant=True):
    """A stereo room reverb (Freeverb: 8 parallel damped comb filters into 4 series all-passes per channel).

    The right channel's delay lines are 23 samples (at 44.1 kHz) longer than the left's, which decorrelates the
    two. Both channels' reverb is fed the sum of the inputs; ``width`` cross-mixes the two wet outputs (0 gives
    the same wet signal on both sides). Internally the input is scaled by 0.015, the wet level by 3 and the dry
    level by 2, so ``dry_level=0.5, wet_level=0`` is an exact pass-through and ``dry_level=1`` doubles the
    signal. Mono input gets a mono reverb. Audio with more than two channels is reverberated as independent
    stereo pairs by default: channels (0, 1), (2, 3), ..., an odd last channel as mono, each pair exactly as if
    processed alone; set ``reverb.channel_pairs = False`` for pedalboard's behaviour (such audio passes through
    unchanged).
    Parameter changes made while streaming ramp over 10 ms.
    Sample-for-sample compatible with pedalboard's ``Reverb`` (JUCE's ``Reverb``) for mono and stereo.

    All parameters but ``freeze_mode`` are automatable at sub-block granularity (JUCE's design smooths every
    parameter change with a ramp): the value at the start of every 32-sample sub-block (aligned to the stream)
    is taken and, while any parameter is automated, the internal ramps last 32 samples instead of 10 ms, so the
    reverb follows the automation piecewise linearly (for mono and stereo; channel pairs of wider audio keep the
    10 ms ramps).
    """

    room_size = Param(
        0.5,
        minimum=0.0,
        maximum=1.0,
        doc="size of the room (the comb feedback is 0.7 + 0.28 * room_size)",
        error="Room Size value must be between {minimum:.1f} and {maximum:.1f}.",
        automatable=True,
    )
    damping = Param(
        0.5,
        minimum=0.0,
        maximum=1.0,
        doc="high-frequency damping",
        error="Damping value must be between {minimum:.1f} and {maximum:.1f}.",
        automatable=True,
    )
    wet_level = Param(
        0.33,
        minimum=0.0,
        maximum=1.0,
        doc="reverb level",
        error="Wet Level must be between {minimum:.1f} and {maximum:.1f}.",
        automatable=True,
    )
    dry_level = Param(
        0.4,
        minimum=0.0,
        maximum=1.0,
        doc="dry signal level",
        error="Dry Level must be between {minimum:.1f} and {maximum:.1f}.",
        automatable=True,
    )
    width = Param(
        1.0,
        minimum=0.0,
        maximum=1.0,
        doc="stereo width",
        error="Width value must be between {minimum:.1f} and {maximum:.1f}.",
        automatable=True,
    )
    freeze_mode = Param(
        0.0,
        minimum=0.0,
        maximum=1.0,
        doc="at 0.5 or above, hold the current sound forever and take no new input",
        error="Freeze Mode value must be between {minimum:.1f} and {maximum:.1f}.",
    )

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._channels = num_channels
        rate = int(sample_rate)
        lines = min(num_channels, 2)
        comb_sizes = [max(1, (rate * (t + STEREO_SPREAD * c)) // 44100) for c in range(lines) for t in COMB_TUNINGS]
        ap_sizes = [max(1, (rate * (t + STEREO_SPREAD * c)) // 44100) for c in range(lines) for t in ALLPASS_TUNINGS]
        comb_sizes, ap_sizes = comb_sizes or [1], ap_sizes or [1]
        # rows: comb lengths, comb positions, all-pass lengths, all-pass positions
        self._lines = np.zeros((4, len(comb_sizes)), np.int64)
        self._lines[0] = comb_sizes
        self._lines[2, : len(ap_sizes)] = ap_sizes
        self._combs = np.zeros((len(comb_sizes), max(comb_sizes)), np.float32)
        self._allpasses = np.zeros((len(ap_sizes), max(ap_sizes)), np.float32)
        self._comb_last = np.zeros(len(comb_sizes), np.float32)
        self._sm = Smoothers([_ramp(sample_rate, SMOOTHING_SECONDS)] * 5, extra_rows=1)
        self._default_ramps = list(self._sm.ramps)
        # the arrays of the plugin's one step (see _plan_steps): _update and _reset_state write them in place
        self._args = (self._combs, self._allpasses, self._lines, self._comb_last, self._sm.state)
        self._plan_changed()

    def _reset_state(self) -> None:
        self._combs[:] = 0.0
        self._allpasses[:] = 0.0
        self._lines[1] = 0
        self._lines[3] = 0
        self._comb_last[:] = 0.0
        self._sm.snap()

    @property
    def _frozen(self) -> bool:
        return bool(F32(self.freeze_mode) >= F32(0.5))

    def _update(self) -> None:
        width = F32(self.width)
        wet = F32(self.wet_level) * F32(WET_SCALE)
        sm = self._sm
        sm.ramps = [self._automation_chunk] * 5 if self._automation else list(self._default_ramps)
        sm.set_target(_DRY, F32(self.dry_level) * F32(DRY_SCALE))
        sm.set_target(_WET1, F32(0.5) * wet * (F32(1.0) + width))
        sm.set_target(_WET2, F32(0.5) * wet * (F32(1.0) - width))
        if self._frozen:
            sm.state[_GAIN, 0] = 0.0
            sm.set_target(_DAMP, 0.0)
            sm.set_target(_FEEDBACK, 1.0)
        else:
            sm.state[_GAIN, 0] = F32(INPUT_GAIN)
            sm.set_target(_DAMP, F32(self.damping) * F32(DAMP_SCALE))
            sm.set_target(_FEEDBACK, F32(self.room_size) * F32(ROOM_SCALE) + F32(ROOM_OFFSET))

    @property
    def tail_seconds(self) -> float:
        if self._frozen:
            return float("inf")
        if self.wet_level == 0.0:
            return 0.0
        # the longest comb decays by its feedback once per pass: time to fall 60 dB
        feedback = float(F32(self.room_size) * F32(ROOM_SCALE) + F32(ROOM_OFFSET))
        passes = -3.0 / np.log10(feedback)
        return float(passes * (COMB_TUNINGS[-1] + STEREO_SPREAD) / 44100.0)

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        if self._automation:
            return None
        if self._pairs is not None:
            return super()._plan_steps(max_frames)  # the pair clones' steps, one per pair of rows
        return [PlanStep(_reverb_kernel, self._args)]

    def _process(self, block: np.ndarray) -> np.ndarray:
        _reverb_kernel(block, *self._args)
        return block
