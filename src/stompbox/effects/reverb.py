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
#: frames per tile of the kernel (its scratch holds one tile)
TILE = 256

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
def _comb8(
    combs: np.ndarray,
    lines: np.ndarray,
    comb_last: np.ndarray,
    base: int,
    inp: np.ndarray,
    damp: np.ndarray,
    feedback: np.ndarray,
    out: np.ndarray,
    m: int,
) -> None:  # pragma: no cover - compiled
    """The 8 damped combs ``base .. base + 7`` over ``m`` samples: ``out[i]`` = the sum of their outputs (in
    order). Written out comb by comb so that each comb's position and low-pass memory stay in registers and
    the eight recursions run side by side."""
    one = np.float32(1.0)
    zero = np.float32(0.0)
    b0 = combs[base + 0]
    b1 = combs[base + 1]
    b2 = combs[base + 2]
    b3 = combs[base + 3]
    b4 = combs[base + 4]
    b5 = combs[base + 5]
    b6 = combs[base + 6]
    b7 = combs[base + 7]
    s0 = lines[0, base + 0]
    s1 = lines[0, base + 1]
    s2 = lines[0, base + 2]
    s3 = lines[0, base + 3]
    s4 = lines[0, base + 4]
    s5 = lines[0, base + 5]
    s6 = lines[0, base + 6]
    s7 = lines[0, base + 7]
    p0 = lines[1, base + 0]
    p1 = lines[1, base + 1]
    p2 = lines[1, base + 2]
    p3 = lines[1, base + 3]
    p4 = lines[1, base + 4]
    p5 = lines[1, base + 5]
    p6 = lines[1, base + 6]
    p7 = lines[1, base + 7]
    l0 = comb_last[base + 0]
    l1 = comb_last[base + 1]
    l2 = comb_last[base + 2]
    l3 = comb_last[base + 3]
    l4 = comb_last[base + 4]
    l5 = comb_last[base + 5]
    l6 = comb_last[base + 6]
    l7 = comb_last[base + 7]
    for i in range(m):
        x = inp[i]
        d = damp[i]
        f = feedback[i]
        od = one - d
        o0 = b0[p0]
        l0 = _flush(o0 * od + l0 * d)
        b0[p0] = _flush(x + l0 * f)
        p0 += 1
        if p0 >= s0:
            p0 = 0
        o1 = b1[p1]
        l1 = _flush(o1 * od + l1 * d)
        b1[p1] = _flush(x + l1 * f)
        p1 += 1
        if p1 >= s1:
            p1 = 0
        o2 = b2[p2]
        l2 = _flush(o2 * od + l2 * d)
        b2[p2] = _flush(x + l2 * f)
        p2 += 1
        if p2 >= s2:
            p2 = 0
        o3 = b3[p3]
        l3 = _flush(o3 * od + l3 * d)
        b3[p3] = _flush(x + l3 * f)
        p3 += 1
        if p3 >= s3:
            p3 = 0
        o4 = b4[p4]
        l4 = _flush(o4 * od + l4 * d)
        b4[p4] = _flush(x + l4 * f)
        p4 += 1
        if p4 >= s4:
            p4 = 0
        o5 = b5[p5]
        l5 = _flush(o5 * od + l5 * d)
        b5[p5] = _flush(x + l5 * f)
        p5 += 1
        if p5 >= s5:
            p5 = 0
        o6 = b6[p6]
        l6 = _flush(o6 * od + l6 * d)
        b6[p6] = _flush(x + l6 * f)
        p6 += 1
        if p6 >= s6:
            p6 = 0
        o7 = b7[p7]
        l7 = _flush(o7 * od + l7 * d)
        b7[p7] = _flush(x + l7 * f)
        p7 += 1
        if p7 >= s7:
            p7 = 0
        out[i] = zero + o0 + o1 + o2 + o3 + o4 + o5 + o6 + o7
    lines[1, base + 0] = p0
    lines[1, base + 1] = p1
    lines[1, base + 2] = p2
    lines[1, base + 3] = p3
    lines[1, base + 4] = p4
    lines[1, base + 5] = p5
    lines[1, base + 6] = p6
    lines[1, base + 7] = p7
    comb_last[base + 0] = l0
    comb_last[base + 1] = l1
    comb_last[base + 2] = l2
    comb_last[base + 3] = l3
    comb_last[base + 4] = l4
    comb_last[base + 5] = l5
    comb_last[base + 6] = l6
    comb_last[base + 7] = l7


@kernel
def _allpass4(allpasses: np.ndarray, lines: np.ndarray, base: int, acc: np.ndarray, m: int) -> None:  # pragma: no cover
    """The 4 series all-passes ``base .. base + 3`` over ``m`` samples of ``acc``, in place (one all-pass over
    all samples, then the next: each depends only on its own past and the previous one's output)."""
    half = np.float32(0.5)
    for j in range(4):
        k = base + j
        buf = allpasses[k]
        size = lines[2, k]
        p = lines[3, k]
        for i in range(m):
            buffered = buf[p]
            buf[p] = _flush(acc[i] + buffered * half)
            p += 1
            if p >= size:
                p = 0
            acc[i] = buffered - acc[i]
        lines[3, k] = p


@kernel
def _reverb_kernel(
    block: np.ndarray,
    combs: np.ndarray,
    allpasses: np.ndarray,
    lines: np.ndarray,
    comb_last: np.ndarray,
    sm: np.ndarray,
    scratch: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Freeverb on a mono or stereo ``(channels, n)`` float32 block, in place (the plugin's one step: a block
    of more than two channels, which only comes without ``channel_pairs``, passes through unchanged).

    Channel ``c`` uses combs ``combs[c * 8 + j]`` (length ``lines[0, k]``, position ``lines[1, k]``, low-pass
    memory ``comb_last[k]``) and all-passes ``allpasses[c * 4 + j]`` (length ``lines[2, k]``, position
    ``lines[3, k]``). Both channels' combs are fed ``(left + right) * gain`` (the input gain is row 5 of the
    smoother state ``sm``, column 0); the wet outputs are cross-mixed with ``wet1``/``wet2`` for width.

    The block is worked through in tiles of ``scratch.shape[1]`` frames (``scratch`` float32 ``(8, tile)``:
    the input, the five smoothed parameters and the two wet signals of a tile), each comb and all-pass over a
    whole tile at a time; every sample sees the same operations in the same order as a sample-by-sample loop.
    """
    channels, n = block.shape
    if channels > 2:
        return
    gain = sm[_GAIN, 0]
    ramping = False
    for k in range(5):
        if sm[k, 3] > 0.0:
            ramping = True
    tile = scratch.shape[1]
    inp = scratch[0]
    damp = scratch[1]
    feedback = scratch[2]
    dry = scratch[3]
    wet1 = scratch[4]
    wet2 = scratch[5]
    out_l = scratch[6]
    out_r = scratch[7]
    for start in range(0, n, tile):
        m = min(tile, n - start)
        for i in range(m):
            if channels == 2:
                inp[i] = (block[0, start + i] + block[1, start + i]) * gain
            else:
                inp[i] = block[0, start + i] * gain
        if ramping:
            for i in range(m):
                damp[i] = _next_value(sm, _DAMP)
                feedback[i] = _next_value(sm, _FEEDBACK)
                dry[i] = _next_value(sm, _DRY)
                wet1[i] = _next_value(sm, _WET1)
                wet2[i] = _next_value(sm, _WET2)
        else:
            damp[:m] = sm[_DAMP, 1]
            feedback[:m] = sm[_FEEDBACK, 1]
            dry[:m] = sm[_DRY, 1]
            wet1[:m] = sm[_WET1, 1]
            wet2[:m] = sm[_WET2, 1]
        _comb8(combs, lines, comb_last, 0, inp, damp, feedback, out_l, m)
        _allpass4(allpasses, lines, 0, out_l, m)
        if channels == 2:
            _comb8(combs, lines, comb_last, 8, inp, damp, feedback, out_r, m)
            _allpass4(allpasses, lines, 4, out_r, m)
            for i in range(m):
                left = block[0, start + i]
                right = block[1, start + i]
                block[0, start + i] = out_l[i] * wet1[i] + out_r[i] * wet2[i] + left * dry[i]
                block[1, start + i] = out_r[i] * wet1[i] + out_l[i] * wet2[i] + right * dry[i]
        else:
            for i in range(m):
                block[0, start + i] = out_l[i] * wet1[i] + block[0, start + i] * dry[i]


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
        self._scratch = np.zeros((8, TILE), np.float32)  # a tile's input, parameters and wet signals
        self._args = (self._combs, self._allpasses, self._lines, self._comb_last, self._sm.state, self._scratch)
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
