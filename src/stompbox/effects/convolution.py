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
def _spectral_sum(
    out: np.ndarray,
    new: np.ndarray,
    history: np.ndarray,
    hist_pos: int,
    spectra: np.ndarray,
    first: int,
) -> None:  # pragma: no cover - compiled
    """Frequency-domain delay line product for ``K`` consecutive partitions.

    ``new`` is ``(K, C, F)`` (spectra of the newest input windows), ``history`` ``(P, C, F)`` a ring of older
    window spectra whose newest entry is at ``hist_pos``, ``spectra`` ``(P, C, F)`` the IR partitions (channel
    ``c`` of the input uses row ``c`` of ``spectra``). ``out[k] = sum_{p >= first} X[k - p] * H[p]`` where
    ``X[j]`` for ``j < 0`` comes from the history.
    """
    n_new, channels, bins = new.shape
    parts = spectra.shape[0]
    ring = history.shape[0]
    for k in range(n_new):
        for c in range(channels):
            for f in range(bins):
                out[k, c, f] = 0
        for p in range(first, parts):
            j = k - p
            for c in range(channels):
                if j >= 0:
                    src = new[j, c]
                else:
                    src = history[(hist_pos + 1 + j) % ring, c]
                h = spectra[p, c]
                o = out[k, c]
                for f in range(bins):
                    o[f] += src[f] * h[f]


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
#: partitions ``_TAIL_RATIO`` times longer (fewer spectra to multiply per sample; still no latency, see _TailPart)
_TAIL_RATIO = 8
#: ... when the tail holds more than this many of those long partitions
_TAIL_MIN_PARTS = 4


def _partition_spectra(rows: np.ndarray, size: int) -> np.ndarray:
    """Spectra ``(P, C, size + 1)`` (FFT size ``2 * size``) of ``rows`` ``(C, L)`` cut into ``size``-sample parts."""
    channels, length = rows.shape
    parts = max(1, -(-length // size))
    padded = np.zeros((channels, parts * size), np.float64)
    padded[:, :length] = rows
    chunks = padded.reshape(channels, parts, size).transpose(1, 0, 2)
    return np.ascontiguousarray(np.fft.rfft(chunks, 2 * size, axis=-1).astype(np.complex64))


class _TailPart:
    """The IR's tail ``h[D:]`` (``D`` = the partition size ``S`` here), convolved in whole ``S``-sample blocks.

    Input block ``j`` (stream samples ``[jS, (j + 1)S)``) is complete when its last sample arrives; its
    convolution with the tail, delayed by ``D = S``, is first needed for output sample ``(j + 1)S``: so the
    tail adds no latency, and its output does not depend on how the stream is cut into blocks.
    """

    def __init__(self, tail: np.ndarray, size: int) -> None:
        self.size = size
        self.spectra = _partition_spectra(tail, size)
        parts, channels, bins = self.spectra.shape
        self.history = np.zeros((parts, channels, bins), np.complex64)
        self.acc = np.zeros((1, channels, bins), np.complex64)
        self.window = np.zeros((channels, 2 * size), np.float32)  # previous block + current block
        self.out = np.zeros((channels, size), np.float32)  # the tail's output for the current block
        self.reset()

    def reset(self) -> None:
        self.history[:] = 0
        self.hist_pos = 0
        self.window[:] = 0.0
        self.out[:] = 0.0
        self.pos = 0

    def process(self, wet: np.ndarray, x: np.ndarray) -> None:
        """Add the tail's output for input ``x`` ``(C, n)`` to ``wet``."""
        S, n, done = self.size, x.shape[1], 0
        while done < n:
            m = min(n - done, S - self.pos)
            wet[:, done : done + m] += self.out[:, self.pos : self.pos + m]
            self.window[:, S + self.pos : S + self.pos + m] = x[:, done : done + m]
            self.pos += m
            done += m
            if self.pos == S:
                spectrum = np.fft.rfft(self.window, axis=-1).astype(np.complex64)[np.newaxis]
                _spectral_sum(self.acc, spectrum, self.history, self.hist_pos, self.spectra, 0)
                self.out[:] = np.fft.irfft(self.acc[0], 2 * S, axis=-1)[:, S:]
                self.hist_pos = (self.hist_pos + 1) % self.history.shape[0]
                self.history[self.hist_pos] = spectrum[0]
                self.window[:, :S] = self.window[:, S:]
                self.pos = 0


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
        self._tail_part = _TailPart(rows[:, head:], head) if long_ir else None
        if self._tail_part is not None:
            rows, length = rows[:, :head], head
        parts = -(-length // size)
        self._spectra = _partition_spectra(rows, size)
        self._h0 = np.zeros((num_channels, size), np.float32)
        self._h0[:, : min(size, length)] = rows[:, :size]
        self._B = size
        self._P = parts
        self._channels = num_channels
        bins = size + 1
        self._history = np.zeros((max(parts, 1), num_channels, bins), np.complex64)
        self._window = np.zeros((num_channels, 2 * size), np.float32)  # previous partition + current partial
        self._acc = np.zeros((1, num_channels, bins), np.complex64)
        self._empty = np.zeros((0, num_channels, bins), np.complex64)
        self._mix_values = (np.float32(0.0), np.float32(1.0))

    def _reset_state(self) -> None:
        self._history[:] = 0
        self._hist_pos = 0
        self._window[:] = 0.0
        self._pos = 0  # samples of the current partition already seen
        self._tail: np.ndarray | None = None  # the older partitions' share of the current partition's output
        if self._tail_part is not None:
            self._tail_part.reset()

    def _update(self) -> None:
        mix = np.float32(self.mix)
        self._mix_values = (np.float32(1.0) - mix, mix)

    def _push(self, spectra: np.ndarray) -> None:
        """Append window spectra ``(K, C, F)`` to the history ring."""
        ring = self._history.shape[0]
        for spectrum in spectra[-ring:]:
            self._hist_pos = (self._hist_pos + 1) % ring
            self._history[self._hist_pos] = spectrum

    def _older_share(self) -> np.ndarray:
        """Output of the current partition due to input before it (IR partitions 1..P-1), ``(C, B)``."""
        if self._tail is None:
            if self._P > 1:
                _spectral_sum(self._acc, self._empty_next(), self._history, self._hist_pos, self._spectra, 1)
                self._tail = np.fft.irfft(self._acc[0], 2 * self._B, axis=-1)[:, self._B :].astype(np.float32)
            else:
                self._tail = np.zeros((self._channels, self._B), np.float32)
        return self._tail

    def _empty_next(self) -> np.ndarray:
        # one placeholder "new" window so the kernel computes the sum for the partition about to be filled;
        # partition 0 (the only one using it) is skipped with first=1
        return np.zeros((1, self._channels, self._B + 1), np.complex64)

    def _partial(self, wet: np.ndarray, x: np.ndarray) -> None:
        """Process ``x`` (fewer samples than fill the current partition... or exactly the rest of it)."""
        B, n, pos = self._B, x.shape[1], self._pos
        self._window[:, B + pos : B + pos + n] = x
        tail = self._older_share()
        if n <= _DIRECT_MAX:
            out = tail[:, pos : pos + n].copy()
            _direct_head(out, self._window, B + pos, n, self._h0)
        else:
            view = self._window.copy()
            view[:, B + pos + n :] = 0.0
            spectrum = np.fft.rfft(view, axis=-1) * self._spectra[0]
            out = np.fft.irfft(spectrum, 2 * B, axis=-1)[:, B + pos : B + pos + n].astype(np.float32)
            out += tail[:, pos : pos + n]
        wet[:, :n] = out
        self._pos = pos + n
        if self._pos == B:  # the partition is complete: keep its spectrum, slide the window
            self._push(np.fft.rfft(self._window, axis=-1)[np.newaxis])
            self._window[:, :B] = self._window[:, B:]
            self._window[:, B:] = 0.0
            self._pos = 0
            self._tail = None

    def _whole(self, wet: np.ndarray, x: np.ndarray) -> None:
        """Process a whole number ``K`` of partitions starting at a partition boundary."""
        B, C = self._B, self._channels
        K = x.shape[1] // B
        frames = np.empty((C, (K + 1) * B), np.float32)
        frames[:, :B] = self._window[:, :B]
        frames[:, B:] = x
        # windows k = frames[:, kB : kB + 2B]
        windows = np.lib.stride_tricks.sliding_window_view(frames, 2 * B, axis=1)[:, ::B]  # (C, K, 2B)
        spectra = np.ascontiguousarray(np.fft.rfft(windows, axis=-1).transpose(1, 0, 2))  # (K, C, F)
        acc = np.empty_like(spectra)
        _spectral_sum(acc, spectra, self._history, self._hist_pos, self._spectra, 0)
        out = np.fft.irfft(acc, 2 * B, axis=-1)[:, :, B:]  # (K, C, B)
        wet[:, : K * B] = out.transpose(1, 0, 2).reshape(C, K * B)
        self._push(spectra)
        self._window[:, :B] = x[:, -B:]
        self._tail = None

    def _process(self, block: np.ndarray) -> np.ndarray:
        n = block.shape[1]
        wet = np.empty_like(block)
        B = self._B
        done = 0
        if self._pos:
            first = min(n, B - self._pos)
            self._partial(wet, block[:, :first])
            done = first
        whole = (n - done) // B * B
        if whole:
            self._whole(wet[:, done : done + whole], block[:, done : done + whole])
            done += whole
        if done < n:
            self._partial(wet[:, done:], block[:, done:])
        if self._tail_part is not None:
            self._tail_part.process(wet, block)
        dry_gain, wet_gain = self._mix_values
        if dry_gain == 0.0:
            if wet_gain == 1.0:
                return wet
            wet *= wet_gain
            return wet
        block *= dry_gain
        wet *= wet_gain
        block += wet
        return block

    def _process_automated(self, block: np.ndarray, curves: dict[str, np.ndarray]) -> np.ndarray:
        dry = block.copy()
        self._mix_values = (np.float32(0.0), np.float32(1.0))
        wet = self._process(block)
        self._request_update()  # the static mix values are restored by the next _update
        mix = curves["mix"].astype(np.float32)
        wet -= dry
        wet *= mix
        wet += dry  # (1 - mix) * dry + mix * wet
        return wet
