"""Convolution with an impulse response: partitioned FFT convolution, streaming with zero latency.

The impulse response (IR) is cut into partitions of ``B`` samples whose spectra (FFT size ``2B``) are kept;
the input is transformed in overlapping windows of ``2B`` samples (overlap-save) and multiplied with the IR
spectra through a frequency-domain delay line. Whole partitions are transformed in batches; a block that ends
inside a partition is completed immediately (the part of the IR's first partition by direct convolution for
short pieces, by a zero-padded FFT for longer ones), so there is no latency and the output does not depend on
the block size beyond rounding. A long IR's tail (after its first ``8B`` samples) uses partitions eight times
longer, computed once per whole ``8B``-sample input block (two-level non-uniform partitioning, after Gardner
1995): far fewer spectra to multiply per sample for reverb-length IRs.
"""

from __future__ import annotations

import base64
import os
from typing import Any

import numpy as np

from .._base import limits
from ..core.errors import LayoutError
from ..core.jit import kernel
from ..core.params import Param
from ..core.plan import PlanStep
from ..core.plugin import Plugin
from .ir_resample import resample_impulse_response

#: JUCE's impulse-response normalisation: the IR is scaled so that its loudest channel has this L2 norm
NORMALISED_NORM = 0.125
#: an IR whose loudest channel's sum of squares is below this is used as it is (not normalised)
QUIET_SUM_OF_SQUARES = 1e-8
#: partial blocks up to this length use direct convolution for the IR's first partition
_DIRECT_MAX = 32


def read_impulse_response(path: str) -> tuple[np.ndarray, float]:
    """Read an audio file as a float32 ``(channels, frames)`` array and its sample rate.

    Goes through :class:`stompbox.io.AudioFile` when it is available, else through soundfile.
    """
    try:
        from ..io import AudioFile
    except ImportError:
        pass
    else:
        with AudioFile(path) as f:
            return np.ascontiguousarray(f.read(f.frames), np.float32), float(f.samplerate)
    import soundfile

    data, rate = soundfile.read(path, dtype="float32", always_2d=True)
    return np.ascontiguousarray(data.T), float(rate)


@kernel
def _direct_head(
    out: np.ndarray,
    window: np.ndarray,
    start: int,
    n: int,
    h0: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``out[c, i] += sum_k h0[c, k] * window[c, start + i - k]`` for ``i < n`` (the first IR partition)."""
    channels = out.shape[0]
    taps = h0.shape[1]
    for c in range(channels):
        for i in range(n):
            t = start + i
            acc = 0.0
            kmax = min(taps, t + 1)
            for k in range(kmax):
                acc += h0[c, k] * window[c, t - k]
            out[c, i] += acc


#: a long IR is split: its first ``_TAIL_RATIO * B`` samples use partitions of ``B`` samples, the rest (the tail)
#: partitions ``_TAIL_RATIO`` times longer (fewer spectra to multiply per sample; still no latency, see below)
_TAIL_RATIO = 8
#: ... when the tail holds more than this many of those long partitions
_TAIL_MIN_PARTS = 4

#: rocket-fft's transforms for compiled code (``r2c``, ``c2r``), bound by :func:`_load_fft` on first use so that
#: importing stompbox imports neither Numba nor rocket-fft
_r2c: Any = None
_c2r: Any = None


def _load_fft() -> None:
    """Bind rocket-fft's compiled transforms (and register its native code with Numba) before a kernel runs."""
    global _r2c, _c2r
    if _r2c is None:
        from rocket_fft import lowlevel

        _r2c, _c2r = lowlevel.r2c, lowlevel.c2r


def _partition_spectra(rows: np.ndarray, size: int) -> np.ndarray:
    """Spectra ``(P, C, size + 1)`` (FFT size ``2 * size``) of ``rows`` ``(C, L)`` cut into ``size``-sample parts."""
    channels, length = rows.shape
    parts = max(1, -(-length // size))
    padded = np.zeros((channels, parts * size), np.float64)
    padded[:, :length] = rows
    chunks = padded.reshape(channels, parts, size).transpose(1, 0, 2)
    return np.ascontiguousarray(np.fft.rfft(chunks, 2 * size, axis=-1).astype(np.complex64))


@kernel
def _ring_sum(
    acc: np.ndarray, new: np.ndarray, history: np.ndarray, hist_pos: int, spectra: np.ndarray, first: int
) -> None:  # pragma: no cover - compiled
    """``acc[c] = sum_{p >= first} X[-p][c] * spectra[p, c]``: ``X[0]`` is ``new`` ``(C, F)``, ``X[-p]`` for
    ``p >= 1`` the history ring ``(P, C, F)`` entry ``p - 1`` places before its newest one (at ``hist_pos``)."""
    parts, channels, bins = spectra.shape
    ring = history.shape[0]
    for c in range(channels):
        for f in range(bins):
            acc[c, f] = 0
    for p in range(first, parts):
        for c in range(channels):
            if p == 0:
                src = new[c]
            else:
                src = history[(hist_pos + 1 - p + ring) % ring, c]
            h = spectra[p, c]
            o = acc[c]
            for f in range(bins):
                o[f] += src[f] * h[f]


@kernel
def _convolution_kernel(
    block: np.ndarray,
    ints: np.ndarray,
    mix: np.ndarray,
    axes: np.ndarray,
    spectra: np.ndarray,
    h0: np.ndarray,
    history: np.ndarray,
    window: np.ndarray,
    older: np.ndarray,
    seg: np.ndarray,
    spec: np.ndarray,
    acc: np.ndarray,
    real: np.ndarray,
    tp_spectra: np.ndarray,
    tp_history: np.ndarray,
    tp_window: np.ndarray,
    tp_out: np.ndarray,
    tp_spec: np.ndarray,
    tp_acc: np.ndarray,
    tp_real: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """The whole of Convolution's block processing, in place (see the module docstring).

    ``ints``: [position in the current partition, history ring position, whether ``older`` holds the current
    partition's share of older input, the tail part's position and ring position, whether there is a tail part].
    ``mix``: [dry gain, wet gain]. The block is cut at partition boundaries: a whole partition (starting at its
    boundary) is one FFT of its window and one inverse FFT of the spectral sum over all IR partitions; a piece of
    one adds the older partitions' share (one inverse FFT per partition) to the first IR partition's, by direct
    convolution for short pieces, by a zero-padded FFT for longer ones. The tail part (partitions of ``S = 8B``)
    adds its output computed at the end of each whole ``S``-sample input block, delayed by ``S``.
    """
    channels, n = block.shape
    B = h0.shape[1]
    S = tp_out.shape[1]
    parts = spectra.shape[0]
    ring = history.shape[0]
    tp_ring = tp_history.shape[0]
    scale = 1.0 / (2 * B)
    tp_scale = 1.0 / (2 * S)
    dry_gain, wet_gain = mix[0], mix[1]
    done = 0
    while done < n:
        pos = ints[0]
        m = min(n - done, B - pos)
        for c in range(channels):
            for i in range(m):
                window[c, B + pos + i] = block[c, done + i]
        if pos == 0 and m == B:  # a whole partition: all IR partitions in one spectral sum
            _r2c(window, spec, axes, True, 1.0, 1)
            _ring_sum(acc, spec, history, ints[1], spectra, 0)
            _c2r(acc, real, axes, False, scale, 1)
            for c in range(channels):
                for i in range(B):
                    seg[c, i] = real[c, B + i]
        else:
            if ints[2] == 0:  # the older partitions' share of this partition's output, once per partition
                if parts > 1:
                    _ring_sum(acc, spec, history, ints[1], spectra, 1)
                    _c2r(acc, real, axes, False, scale, 1)
                    for c in range(channels):
                        for i in range(B):
                            older[c, i] = real[c, B + i]
                else:
                    older[:] = 0.0
                ints[2] = 1
            if m <= _DIRECT_MAX:
                for c in range(channels):
                    for i in range(m):
                        seg[c, i] = older[c, pos + i]
                _direct_head(seg, window, B + pos, m, h0)
            else:
                for c in range(channels):
                    for i in range(B + pos + m):
                        real[c, i] = window[c, i]
                    for i in range(B + pos + m, 2 * B):
                        real[c, i] = 0.0
                _r2c(real, spec, axes, True, 1.0, 1)
                for c in range(channels):
                    for f in range(B + 1):
                        spec[c, f] = spec[c, f] * spectra[0, c, f]
                _c2r(spec, real, axes, False, scale, 1)
                for c in range(channels):
                    for i in range(m):
                        seg[c, i] = real[c, B + pos + i] + older[c, pos + i]
            if pos + m == B:
                _r2c(window, spec, axes, True, 1.0, 1)
        if pos + m == B:  # the partition is complete: keep its spectrum, slide the window
            hist = (ints[1] + 1) % ring
            ints[1] = hist
            for c in range(channels):
                for f in range(B + 1):
                    history[hist, c, f] = spec[c, f]
                for i in range(B):
                    window[c, i] = window[c, B + i]
                    window[c, B + i] = 0.0
            ints[0] = 0
            ints[2] = 0
        else:
            ints[0] = pos + m
        if ints[5]:  # the tail part (a piece never crosses one of its S-sample blocks)
            tpos = ints[3]
            for c in range(channels):
                for i in range(m):
                    seg[c, i] += tp_out[c, tpos + i]
                    tp_window[c, S + tpos + i] = block[c, done + i]
            tpos += m
            if tpos == S:
                _r2c(tp_window, tp_spec, axes, True, 1.0, 1)
                _ring_sum(tp_acc, tp_spec, tp_history, ints[4], tp_spectra, 0)
                _c2r(tp_acc, tp_real, axes, False, tp_scale, 1)
                hist = (ints[4] + 1) % tp_ring
                ints[4] = hist
                for c in range(channels):
                    for i in range(S):
                        tp_out[c, i] = tp_real[c, S + i]
                        tp_window[c, i] = tp_window[c, S + i]
                    for f in range(S + 1):
                        tp_history[hist, c, f] = tp_spec[c, f]
                tpos = 0
            ints[3] = tpos
        for c in range(channels):
            if dry_gain == 0.0:
                if wet_gain == 1.0:
                    for i in range(m):
                        block[c, done + i] = seg[c, i]
                else:
                    for i in range(m):
                        block[c, done + i] = seg[c, i] * wet_gain
            else:
                for i in range(m):
                    block[c, done + i] = block[c, done + i] * dry_gain + seg[c, i] * wet_gain
        done += m


#: ways of resampling an impulse response given at another sample rate (see Convolution)
IR_RESAMPLING = ("pedalboard", "soxr")


class Convolution(Plugin, block_invariant=True):
    """Convolve the audio with an impulse response (a room, a speaker cabinet, any linear filter).

    The impulse response is normalised as pedalboard (JUCE) does: scaled by ``0.125 / ||h||_2`` where
    ``||h||_2`` is the L2 norm of its loudest channel, so a unit impulse gives ``0.125 * x``; a near-silent IR
    (sum of squares below 1e-8) is used unscaled. An IR at another sample rate is resampled to the rate of the
    audio being processed as pedalboard does it (linear interpolation with a 2-pole low-pass, see
    :mod:`stompbox.effects.ir_resample`), or band-limited with soxr when ``ir_resampling="soxr"``. A mono IR is
    applied to every channel; a stereo IR applies its channels to the left and right channels (channel ``c``
    uses IR channel ``c % ir_channels``; mono input uses the first). There is no latency, and the output does
    not depend on the block size (beyond float rounding, ~1e-7). The output is ``(1 - mix) * x + mix * (h * x)``.

    Parameters
    ----------
    impulse_response_filename : str, os.PathLike or numpy.ndarray
        An audio file to read the impulse response from, or the impulse response itself: float32 (float64 is
        converted), 1-D or 2-D (the smaller dimension is channels).
    sample_rate : float, optional
        Sample rate of an ndarray impulse response in Hz (required for arrays; ignored for files).
    ir_resampling : {"pedalboard", "soxr"}
        How an IR at another sample rate is resampled: as pedalboard does (default, same sound), or with soxr's
        band-limited resampler (no aliasing or high-frequency droop; keyword only, a stompbox extension).
    """

    mix = Param(1.0, minimum=0.0, maximum=1.0, doc="wet fraction of the output", per_sample=True)

    def __init__(
        self,
        impulse_response_filename: str | os.PathLike[str] | np.ndarray,
        mix: float = 1.0,
        sample_rate: float | None = None,
        *,
        ir_resampling: str = "pedalboard",
    ) -> None:
        if ir_resampling not in IR_RESAMPLING:
            raise ValueError(
                f"ir_resampling must be one of {', '.join(map(repr, IR_RESAMPLING))} (got {ir_resampling!r})."
            )
        self._ir_resampling = ir_resampling
        if isinstance(impulse_response_filename, np.ndarray):
            if sample_rate is None:
                raise RuntimeError("sample_rate must be provided when passing a numpy array as an impulse response.")
            ir = np.asarray(impulse_response_filename)
            if ir.dtype not in (np.float32, np.float64):
                raise TypeError("The impulse response must be a float32 (or float64) numpy array.")
            if ir.ndim == 1:
                ir = ir[np.newaxis, :]
            elif ir.ndim == 2:
                if ir.shape[0] > ir.shape[1]:
                    ir = ir.T
            else:
                raise ValueError(f"The impulse response must be 1-D or 2-D (got {ir.ndim} dimensions).")
            if ir.size == 0:  # (2, 0) became (0, 2): no channels, and NumPy's zero-size reduction error later
                raise LayoutError(
                    f"The impulse response is empty (an array of shape {impulse_response_filename.shape})."
                )
            self._ir_rate = limits.check_sample_rate(sample_rate, "sample_rate")
            self._ir = np.ascontiguousarray(ir, np.float32)
            self._ir_filename: str | None = None
        elif isinstance(impulse_response_filename, str | os.PathLike):
            path = os.fspath(impulse_response_filename)
            try:
                ir, rate = read_impulse_response(path)
            except Exception as exc:
                raise RuntimeError(f"Unable to load impulse response: {path}") from exc
            if ir.shape[1] == 0:
                raise RuntimeError(f"Unable to load impulse response: {path}")
            self._ir, self._ir_rate, self._ir_filename = ir, rate, str(path)
            self._ir_location = os.path.abspath(path)  # where it is, whatever the current folder is later
        else:
            raise TypeError(
                "impulse_response_filename must be a path or a float32 numpy array "
                f"(got {type(impulse_response_filename).__name__})."
            )
        super().__init__(mix=mix)

    # ------------------------------------------------------------------ public properties
    @property
    def impulse_response(self) -> np.ndarray | None:
        """The impulse response given as an array, ``(channels, samples)`` float32 (None if read from a file)."""
        return None if self._ir_filename is not None else self._ir.copy()

    @property
    def impulse_response_filename(self) -> str | None:
        """The file the impulse response was read from (None if it was given as an array)."""
        return self._ir_filename

    def _repr_params(self) -> str:
        if self._ir_filename is not None:
            source = f"impulse_response_filename={self._ir_filename}"
        else:
            channels, frames = self._ir.shape
            source = f"impulse_response=<{frames} samples of {channels}-channel audio at {self._ir_rate:g} Hz>"
        return f" {source} mix={self.mix:g}"

    def to_dict(self) -> dict[str, Any]:
        """``{"type": "Convolution", "params": {...}}``. An impulse response read from a file is saved as a
        reference to the file (see :func:`stompbox.chains.file_reference`); one given as an array is saved
        inline, as its ``sample_rate``, ``channels`` and base64 little-endian float32 ``samples``."""
        from ..core.serial import file_reference

        params: dict[str, Any]
        if self._ir_filename is not None:
            params = {"impulse_response_filename": file_reference(self._ir_location)}
        else:
            samples = base64.b64encode(self._ir.astype("<f4").tobytes()).decode("ascii")
            params = {
                "impulse_response": {"sample_rate": self._ir_rate, "channels": self._ir.shape[0], "samples": samples},
            }
        params.update(super().to_dict()["params"])  # mix (a value or its automation)
        if self._ir_resampling != "pedalboard":
            params["ir_resampling"] = self._ir_resampling
        return {"type": "Convolution", "params": params}

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> Convolution:
        from ..core.serial import resolve_reference

        params = dict(data.get("params", {}))
        if "impulse_response" in params:
            inline = params.pop("impulse_response")
            if not isinstance(inline, dict) or not {"sample_rate", "channels", "samples"} <= set(inline):
                raise ValueError("'impulse_response' must have 'sample_rate', 'channels' and 'samples'.")
            raw = base64.b64decode(inline["samples"], validate=True)
            channels = inline["channels"]
            if not isinstance(channels, int) or channels < 1 or len(raw) % (4 * channels):
                raise ValueError(
                    f"'impulse_response' holds {len(raw)} bytes, not float32 samples of {channels!r} channels."
                )
            ir = np.frombuffer(raw, "<f4").astype(np.float32).reshape(channels, -1)
            return cls(ir, sample_rate=inline["sample_rate"], **params)
        return cls(resolve_reference(params.pop("impulse_response_filename")), **params)

    @property
    def tail_seconds(self) -> float:
        return 0.0 if self.mix == 0.0 else self._ir.shape[1] / self._ir_rate

    # ------------------------------------------------------------------ DSP
    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        ir = self._ir
        if sample_rate != self._ir_rate:
            limits.check_resampling_ratio(self._ir_rate, sample_rate)  # 1 Hz to 44.1 kHz asked for 3.5 GB
            if getattr(self, "_ir_resampling", "pedalboard") == "soxr":
                import soxr

                ir = np.ascontiguousarray(soxr.resample(ir.T, self._ir_rate, sample_rate, quality="HQ").T, np.float32)
            else:
                ir = resample_impulse_response(ir, self._ir_rate, sample_rate)
            if ir.shape[1] == 0:
                ir = np.zeros((ir.shape[0], 1), np.float32)
        ir = ir.astype(np.float64)
        energy = float(np.max(np.sum(ir * ir, axis=1)))
        if energy >= QUIET_SUM_OF_SQUARES:
            ir *= NORMALISED_NORM / np.sqrt(energy)
        rows = ir[np.arange(num_channels) % ir.shape[0]]  # the IR channel each input channel uses
        length = rows.shape[1]
        size = 1 << max(6, min(11, (length - 1).bit_length()))
        head = _TAIL_RATIO * size  # IR samples the small partitions cover when a long IR has a tail part
        # the tail's bigger FFTs pay off only over several tail partitions (measured: a 1 s IR is faster without)
        long_ir = length > head + _TAIL_MIN_PARTS * head
        tail = rows[:, head:] if long_ir else None
        if long_ir:
            rows, length = rows[:, :head], head
        self._spectra = _partition_spectra(rows, size)
        self._h0 = np.zeros((num_channels, size), np.float32)
        self._h0[:, : min(size, length)] = rows[:, :size]
        self._B = size
        self._channels = num_channels
        bins = size + 1
        C = num_channels
        # the arrays of the plugin's one step (see _plan_steps): _update and _reset_state write them in place
        self._ints = np.zeros(6, np.int64)
        self._mix = np.array([0.0, 1.0], np.float32)
        self._history = np.zeros((self._spectra.shape[0], C, bins), np.complex64)
        self._window = np.zeros((C, 2 * size), np.float32)  # previous partition + current partial
        if tail is not None:
            tp_spectra = _partition_spectra(tail, head)
            tp = (
                tp_spectra,
                np.zeros(tp_spectra.shape, np.complex64),  # history
                np.zeros((C, 2 * head), np.float32),  # window: previous block + current block
                np.zeros((C, head), np.float32),  # the tail's output for the current block
                np.zeros((C, head + 1), np.complex64),
                np.zeros((C, head + 1), np.complex64),
                np.zeros((C, 2 * head), np.float32),
            )
            self._ints[5] = 1
        else:
            tp = (
                np.zeros((1, C, 1), np.complex64),
                np.zeros((1, C, 1), np.complex64),
                np.zeros((C, 2), np.float32),
                np.zeros((C, 1), np.float32),
                np.zeros((C, 1), np.complex64),
                np.zeros((C, 1), np.complex64),
                np.zeros((C, 2), np.float32),
            )
        self._args = (
            self._ints,
            self._mix,
            np.array([1], np.int64),  # the transforms' axis
            self._spectra,
            self._h0,
            self._history,
            self._window,
            np.zeros((C, size), np.float32),  # older input's share of the current partition's output
            np.zeros((C, size), np.float32),  # a piece's wet output
            np.zeros((C, bins), np.complex64),
            np.zeros((C, bins), np.complex64),
            np.zeros((C, 2 * size), np.float32),
            *tp,
        )
        self._tp_state = tp[1:4]
        _load_fft()
        self._plan_changed()

    def _reset_state(self) -> None:
        self._history[:] = 0
        self._window[:] = 0.0
        self._ints[:5] = 0
        for array in self._tp_state:
            array[:] = 0

    def _update(self) -> None:
        mix = np.float32(self.mix)
        self._mix[0] = np.float32(1.0) - mix
        self._mix[1] = mix

    def _plan_steps(self, max_frames: int) -> list[PlanStep] | None:
        if self._automation:
            return None
        return [PlanStep(_convolution_kernel, self._args)]

    def _process(self, block: np.ndarray) -> np.ndarray:
        _convolution_kernel(block, *self._args)
        return block

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        dry = block.copy()
        self._mix[:] = (0.0, 1.0)
        wet = self._process(block)
        self._request_update()  # the static mix values are restored by the next _update
        mix = curves["mix"].astype(np.float32)
        wet -= dry
        wet *= mix
        wet += dry  # (1 - mix) * dry + mix * wet
        return wet
