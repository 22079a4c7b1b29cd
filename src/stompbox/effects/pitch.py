"""Pitch shifting and time stretching: ``PitchShift`` (a streaming plugin) and ``time_stretch`` (a function).

Both run one engine, a phase vocoder written for stompbox (numpy FFTs, one Numba kernel):

- **Analysis.** Hann-windowed frames of ``N`` samples (2048 at 44.1/48 kHz, scaled with the sample rate). Each
  bin's instantaneous frequency is the phase advance between the frame and the same frame one sample earlier
  (exact for a stationary sinusoid, and free of the wrapping ambiguity of a hop-sized difference).
- **Identity phase locking with peak shifting** (Laroche & Dolson, 1999). Spectral peaks are picked on the
  magnitude summed over channels; each peak owns the bins down to the spectral minimum towards its neighbours.
  A region is moved as a whole by ``round(f * (ratio - 1))`` bins, where ``f`` is the peak's exact frequency in
  bins, and rotated by one phase so that the peak's phase advances by ``hop * ratio * omega`` between output
  frames. The bins around a peak keep their phase relation to it (no "phasiness"), and the region keeps the
  window's spectral shape. The pitch of a partial is set by its phase advance, so it is exact even though the
  region is moved by whole bins.
- **Channels together.** Every channel of a region gets the same move and the same rotation (computed on the
  channel sum), so the phase and level differences between channels, i.e. the stereo image, are kept.
- **Transients.** A frame where the spectrum jumps (detector ``compound``: the fraction of bins rising by more
  than 3 dB, or the high-frequency content doubling) resets the output phases to the input's, which keeps
  attacks sharp (``crisp``; ``mixed`` resets only above 500 Hz; ``smooth`` never resets).
- **Identity frames.** With a pitch ratio of exactly 1 and equal analysis/synthesis hops, a frame is passed
  through unchanged, so the overlap-add of Hann analysis and synthesis windows reconstructs the input to
  float rounding: ``PitchShift(0)`` and ``time_stretch(x, sr, 1.0, 0.0)`` return the input (aligned) with no
  special case.
- **Formants** (``time_stretch`` only, ``preserve_formants=True``): a cepstrally smoothed spectral envelope of
  the input frame is re-imposed after shifting, with the correction limited to +/-20 dB.

``PitchShift`` streams: input is cut into fixed hops of ``N / 8`` samples whatever the caller's block size, so
the output does not depend on how the audio is split; its latency is a fixed ``N - 1`` samples (46 ms at
44.1 kHz, about 1/20 of pedalboard's), reported by ``latency_samples`` and compensated by ``process``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._base import limits
from ..core.jit import kernel
from ..core.layout import check_ndim, detect_layout
from ..core.params import Param
from ..core.plugin import Plugin

#: largest pitch shift, either way (semitones)
MAX_SEMITONES = 72.0
#: frames per analysis batch (bounds the memory of long inputs)
_BATCH = 128

TRANSIENT_MODES = ("crisp", "mixed", "smooth")
TRANSIENT_DETECTORS = ("compound", "percussive", "soft")


# --------------------------------------------------------------------------------------------- the kernel
@kernel
def _vocode(
    spec: np.ndarray,
    ref_prev: np.ndarray,
    env: np.ndarray,
    ratio: np.ndarray,
    hop_out: float,
    identity: np.ndarray,
    reset_bin: int,
    detector: int,
    lock: bool,
    last_out: np.ndarray,
    prev_mag: np.ndarray,
    det: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Turn analysis spectra into synthesis spectra, frame by frame.

    spec (K, C, B) complex: analysis spectra; ref_prev (K, B) complex: spectrum of the channel sum one sample
    earlier; env (K, B) log envelope, or shape (0, 0) for no formant correction; ratio (K,) pitch ratios;
    hop_out: synthesis hop (samples); identity (K,) bool: pass the frame through; reset_bin: first bin whose
    phase a transient resets (B or more: never); detector: 0 compound, 1 percussive, 2 soft; lock: identity
    phase locking (else each bin is its own region). State (updated): last_out (B,) complex, the previous
    output frame's channel sum (its phases are what the next frame continues); prev_mag (B,); det (3,) =
    [previous rise fraction, previous high-frequency content, frames seen]. out (K, C, B) is overwritten.
    Phases are handled as unit phasors, so a region costs one arctangent (its frequency) and one sine/cosine.
    """
    n_frames, channels, bins = spec.shape
    fft_size = 2 * (bins - 1)
    bin_w = 2.0 * np.pi / fft_size
    mag = np.empty(bins)
    ref = np.empty(bins, np.complex128)
    peaks = np.empty(bins, np.int64)
    lows = np.empty(bins + 1, np.int64)
    use_env = env.shape[0] > 0
    for f in range(n_frames):
        for k in range(bins):
            s = 0.0
            r = 0.0j
            for c in range(channels):
                v = spec[f, c, k]
                s += np.sqrt(v.real * v.real + v.imag * v.imag)
                r += v
                out[f, c, k] = 0.0j
            mag[k] = s
            ref[k] = r
        # ---- transient detection
        rising = 0
        hf = 0.0
        for k in range(bins):
            if mag[k] > 1e-4 and mag[k] > 1.4125 * prev_mag[k]:
                rising += 1
            hf += k * mag[k]
            prev_mag[k] = mag[k]
        frac = rising / bins
        transient = False
        if det[2] > 0.0:
            perc = frac > 0.35 and frac > det[0]
            soft = hf > 2.0 * det[1] and hf > 1e-2 * bins
            if detector == 0:
                transient = perc or soft
            elif detector == 1:
                transient = perc
            else:
                transient = soft
        det[0] = frac
        det[1] = hf
        det[2] += 1.0
        p = ratio[f]
        if identity[f]:
            for c in range(channels):
                for k in range(bins):
                    out[f, c, k] = spec[f, c, k]
            for k in range(bins):
                last_out[k] = ref[k]
            continue
        # ---- peaks and their regions
        n_peaks = 0
        if lock:
            for k in range(bins):
                m = mag[k]
                if m > 0.0 and (k == 0 or m > mag[k - 1]) and (k == bins - 1 or m >= mag[k + 1]):
                    peaks[n_peaks] = k
                    n_peaks += 1
            lows[0] = 0
            for i in range(1, n_peaks):
                lo = peaks[i - 1] + 1
                best = lo
                for k in range(lo, peaks[i]):
                    if mag[k] < mag[best]:
                        best = k
                lows[i] = best
            lows[n_peaks] = bins
        else:
            for k in range(bins):
                if mag[k] > 0.0:
                    peaks[n_peaks] = k
                    lows[n_peaks] = k
                    n_peaks += 1
            if n_peaks > 0:
                lows[0] = 0
            lows[n_peaks] = bins
        # ---- move and rotate each region
        for i in range(n_peaks):
            kp = peaks[i]
            r = ref[kp]
            r_abs = np.sqrt(r.real * r.real + r.imag * r.imag)
            dev = 0.0
            omega = kp * bin_w
            rp = ref_prev[f, kp]
            if r_abs > 0.0 and (rp.real != 0.0 or rp.imag != 0.0):
                z = r * np.conj(rp)
                d = np.arctan2(z.imag, z.real)  # phase advance over one sample
                dev = d / bin_w - kp
                if dev > 1.5 or dev < -1.5:  # not a clean partial: use the bin's own frequency
                    dev = 0.0
                else:
                    omega = d
            shift = int(np.floor((kp + dev) * (p - 1.0) + 0.5))
            j_peak = kp + shift
            if j_peak < 0 or j_peak >= bins or r_abs == 0.0:
                continue
            if transient and j_peak >= reset_bin:
                rot = 1.0 + 0.0j
            else:
                # rotation = (previous output phase + hop * omega * ratio) - input phase, as unit phasors
                adv = hop_out * omega * p
                rot = (np.cos(adv) + 1j * np.sin(adv)) * np.conj(r) / r_abs
                q = last_out[j_peak]
                q_abs = np.sqrt(q.real * q.real + q.imag * q.imag)
                if q_abs > 0.0:
                    rot *= q / q_abs
            for k in range(lows[i], lows[i + 1]):
                j = k + shift
                if j < 0 or j >= bins:
                    continue
                g = rot
                if use_env:
                    e = env[f, j] - env[f, k]
                    if e > 2.302585:
                        e = 2.302585
                    elif e < -2.302585:
                        e = -2.302585
                    g = rot * np.exp(e)
                for c in range(channels):
                    out[f, c, j] += spec[f, c, k] * g
        for k in range(bins):
            r = 0.0j
            for c in range(channels):
                r += out[f, c, k]
            last_out[k] = r


@kernel
def _overlap_add(frames: np.ndarray, hop: int, dest: np.ndarray) -> None:  # pragma: no cover - compiled
    """Add frames (K, C, N) into dest (C, >= (K - 1) * hop + N), frame k starting at k * hop."""
    n_frames, channels, size = frames.shape
    for f in range(n_frames):
        base = f * hop
        for c in range(channels):
            for i in range(size):
                dest[c, base + i] += frames[f, c, i]


# --------------------------------------------------------------------------------------------- the engine
def frame_size(sample_rate: float, long_window: bool | None = None) -> int:
    """The analysis frame length (samples) for ``sample_rate``: 2048 at 44.1 and 48 kHz, the power of two
    nearest 46 ms otherwise (256 ... 16384); doubled for ``long_window=True``, halved for ``False``."""
    size = 2 ** int(round(math.log2(max(2048.0 * sample_rate / 44100.0, 1.0))))
    if long_window is True:
        size *= 2
    elif long_window is False:
        size //= 2
    return int(min(max(size, 256), 16384))


class _Vocoder:
    """The stateful part of the phase vocoder: windows, phase memory and transient-detector memory."""

    def __init__(
        self,
        size: int,
        hop: int,
        channels: int,
        sample_rate: float,
        transient_mode: str = "crisp",
        detector: str = "compound",
        lock: bool = True,
        formant_quefrency: int = 0,
    ) -> None:
        self.size, self.hop, self.channels = size, hop, channels
        self.bins = size // 2 + 1
        window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(size) / size)  # periodic Hann
        self.window = window
        # Hann analysis x Hann synthesis overlap-adds to 3/8 * size / hop
        self.synthesis = window / (0.375 * size / hop)
        if transient_mode == "crisp":
            self.reset_bin = 0
        elif transient_mode == "mixed":
            self.reset_bin = int(math.ceil(500.0 * size / sample_rate))
        else:
            self.reset_bin = self.bins + 1
        self.detector = TRANSIENT_DETECTORS.index(detector)
        self.lock = bool(lock)
        self.quefrency = int(formant_quefrency)
        self.reset()

    def reset(self) -> None:
        self.last_out = np.zeros(self.bins, np.complex128)
        self.prev_mag = np.zeros(self.bins)
        self.det = np.zeros(3)

    def _envelope(self, spec: np.ndarray) -> np.ndarray:
        """Log spectral envelope (K, B) of spectra (K, C, B) by cepstral smoothing."""
        if self.quefrency <= 0:
            return np.zeros((0, 0))
        log_mag = np.log(np.abs(spec).sum(axis=1) + 1e-9)
        cep = np.fft.irfft(log_mag, n=self.size, axis=-1)
        q = min(self.quefrency, self.size // 2 - 1)
        cep[:, q + 1 : self.size - q] = 0.0
        return np.ascontiguousarray(np.fft.rfft(cep, axis=-1).real)

    def run(self, frames: np.ndarray, ratios: np.ndarray, identity: np.ndarray) -> np.ndarray:
        """Analyse and resynthesise frames.

        ``frames`` is (K, C, N + 1) raw input: sample ``1:`` is the frame, ``:-1`` the frame one sample
        earlier. Returns (K, C, N) synthesis-windowed output frames (float64), ready to overlap-add at the
        synthesis hop.
        """
        win = self.window
        spec = np.fft.rfft(frames[..., 1:] * win, axis=-1)
        ref_prev = np.fft.rfft(frames[..., :-1].sum(axis=1) * win, axis=-1)
        out = np.empty_like(spec)
        _vocode(
            spec, ref_prev, self._envelope(spec), np.ascontiguousarray(ratios, np.float64), float(self.hop),
            np.ascontiguousarray(identity, np.bool_), self.reset_bin, self.detector, self.lock,
            self.last_out, self.prev_mag, self.det, out,
        )  # fmt: skip
        result = np.fft.irfft(out, n=self.size, axis=-1)
        result *= self.synthesis
        return result


# --------------------------------------------------------------------------------------------- PitchShift
def semitones_to_ratio(semitones: float) -> float:
    """A pitch interval in semitones as a frequency ratio, ``2 ** (semitones / 12)``."""
    return float(2.0 ** (semitones / 12.0))


class PitchShift(Plugin, block_invariant=True):
    """Shift the pitch of the audio without changing its duration.

    A phase vocoder with identity phase locking, peak shifting and transient phase resets (see the module
    documentation); channels are processed together, so the stereo image is kept. The effect streams: any
    block size, with ``reset=False``, gives the same samples. It has a fixed latency of ``N - 1`` samples,
    where ``N`` is the analysis frame (2048 at 44.1 and 48 kHz, so 2047 samples = 46 ms at 44.1 kHz; scaled to
    about 46 ms at other rates). ``process`` compensates it, so with ``reset=True`` the output has the input's
    length and is time-aligned with it; with ``reset=False`` the first ``latency_samples`` samples of a stream
    are withheld. At 0 semitones the input comes back exactly (delayed by the latency), by the engine's own
    identity rule rather than a special case.
    """

    semitones = Param(
        0.0,
        float32=False,  # pedalboard keeps semitones as a double
        minimum=-MAX_SEMITONES,
        maximum=MAX_SEMITONES,
        unit="st",
        doc="pitch shift (frequency ratio 2 ** (semitones / 12); content above Nyquist is dropped)",
        error="Semitones of pitch must be a value between {minimum:g}st and {maximum:g}st.",
    )

    #: analysis frames per synthesis hop
    OVERLAP = 8

    _vocoder: _Vocoder | None = None
    _size = 0

    def _prepare(self, sample_rate: float, num_channels: int) -> None:
        self._size = frame_size(sample_rate)
        self._hop = self._size // self.OVERLAP
        self._channels = num_channels
        self._vocoder = _Vocoder(self._size, self._hop, num_channels, sample_rate)

    def _update(self) -> None:
        self._ratio = semitones_to_ratio(float(self.semitones))

    def _reset_state(self) -> None:
        assert self._vocoder is not None
        size, hop, channels = self._size, self._hop, self._channels
        self._vocoder.reset()
        # input: N + 1 samples of history (zeros before the stream) followed by samples not yet framed
        self._input = np.zeros((channels, size + 1), np.float64)
        # overlap-add tail: output positions [last frame end - (N - hop), last frame end)
        self._tail = np.zeros((channels, size - hop), np.float64)
        # output not yet returned; the H - 1 leading zeros make the delay exactly N - 1 (see latency_samples)
        self._fifo = np.zeros((channels, hop - 1), np.float32)

    @property
    def latency_samples(self) -> int:
        """``N - 1`` samples (2047 at 44.1 and 48 kHz): output sample ``i + N - 1`` is input sample ``i``
        shifted. The last frame holding an input sample ends ``N - 1`` samples after it, and a hop of output
        is released each time a frame is complete."""
        return max(self._size - 1, 0)

    def _process(self, block: np.ndarray) -> np.ndarray:
        assert self._vocoder is not None
        size, hop = self._size, self._hop
        n = block.shape[1]
        data = np.concatenate([self._input, block], axis=1)
        pending = data.shape[1] - (size + 1)
        count = pending // hop
        pieces = [self._fifo]
        if count:
            ratios = np.full(count, self._ratio)
            identity = np.full(count, self._ratio == 1.0)
            windows = np.lib.stride_tricks.sliding_window_view(data, size + 1, axis=1)
            region = np.zeros((self._channels, (count - 1) * hop + size), np.float64)
            region[:, : size - hop] = self._tail
            for start in range(0, count, _BATCH):
                stop = min(start + _BATCH, count)
                frames = windows[:, (start + 1) * hop : stop * hop + 1 : hop].transpose(1, 0, 2)
                out = self._vocoder.run(frames, ratios[start:stop], identity[start:stop])
                _overlap_add(out, hop, region[:, start * hop :])
            pieces.append(region[:, : count * hop].astype(np.float32))
            self._tail = region[:, count * hop :].copy()
            self._input = data[:, count * hop :].copy()
        else:
            self._input = data
        joined = np.concatenate(pieces, axis=1)
        self._fifo = joined[:, n:].copy()
        return np.ascontiguousarray(joined[:, :n])


# --------------------------------------------------------------------------------------------- time_stretch
def _factor_array(value: Any, name: str, length: int) -> tuple[np.ndarray | None, float]:
    """A per-sample factor: (float64 array, 0.0) for arrays, (None, value) for scalars."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or value.shape[0] != length:
            raise ValueError(
                f"{name} must be the same length as the input audio buffer, but was passed an array of length "
                f"{value.shape[0] if value.ndim else 0} instead of {length} samples."
            )
        if not np.issubdtype(value.dtype, np.floating) and not np.issubdtype(value.dtype, np.integer):
            raise TypeError(f"{name} must be a float or an array of float64 values (got dtype {value.dtype}).")
        return np.asarray(value, np.float64), 0.0
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{name} must be a float or a numpy array of float64 (got {type(value).__name__}).")
    return None, float(value)


def _check_stretch(value: float, index: int | None) -> None:
    if not (value > 0.0) or not math.isfinite(value):
        where = "was passed" if index is None else f"element at index {index} was"
        raise ValueError(f"stretch_factor must be greater than 0.0x, but {where} {value:f}x.")


def _check_pitch(value: float, index: int | None) -> None:
    if not (abs(value) <= MAX_SEMITONES):
        where = "was passed" if index is None else f"element at index {index} was"
        raise ValueError(
            f"pitch_shift_in_semitones must be between -72 and +72 semitones, but {where} {value:f} semitones."
        )


def _check_choice(value: Any, name: str, valid: tuple[str, ...]) -> str:
    if value not in valid:
        listing = ", ".join(f'"{v}"' for v in valid[:-1]) + f', or "{valid[-1]}"'
        raise ValueError(
            f'time_stretch got an unknown value for {name}; expected one of {listing}, but was passed: "{value}"'
        )
    return str(value)


def time_stretch(
    input_audio: np.ndarray,
    samplerate: float,
    stretch_factor: float | np.ndarray = 1.0,
    pitch_shift_in_semitones: float | np.ndarray = 0.0,
    high_quality: bool = True,
    transient_mode: str = "crisp",
    transient_detector: str = "compound",
    retain_phase_continuity: bool = True,
    use_long_fft_window: bool | None = None,
    use_time_domain_smoothing: bool = False,
    preserve_formants: bool = True,
) -> np.ndarray:
    """Change the speed and/or the pitch of audio independently.

    Parameters
    ----------
    input_audio : numpy.ndarray
        float32 audio (float64 raises ``TypeError``, as in pedalboard): 1-D mono, ``(channels, samples)`` or
        ``(samples, channels)`` (the smaller dimension is the channels).
    samplerate : float
        Sample rate in Hz (> 0).
    stretch_factor : float or numpy.ndarray
        Speed factor (> 0): 2.0 plays twice as fast (half the length), 0.5 half as fast. Either one value or a
        float64 array with one value per input sample (taken once per analysis hop, N/8 samples).
    pitch_shift_in_semitones : float or numpy.ndarray
        Pitch shift, -72 to 72 semitones; one value or a float64 array with one value per input sample.
    high_quality : bool
        True (default): 8 frames overlap; False: 4 (about twice as fast, more phasiness).
    transient_mode : {"crisp", "mixed", "smooth"}
        What a detected transient does: reset all output phases to the input's (crisp), only above 500 Hz
        (mixed), or nothing (smooth).
    transient_detector : {"compound", "percussive", "soft"}
        Percussive: more than 35% of bins rise by 3 dB; soft: the high-frequency content doubles; compound:
        either.
    retain_phase_continuity : bool
        True (default): identity phase locking around spectral peaks; False: every bin is phased on its own.
    use_long_fft_window : bool or None
        None: a 46 ms frame (2048 samples at 44.1 kHz); True: twice that (better for low, tonal material);
        False: half (better time resolution).
    use_time_domain_smoothing : bool
        Accepted for compatibility; it has no effect in this engine.
    preserve_formants : bool
        True (default): re-impose the input's spectral envelope after pitch shifting, so voices do not sound
        "chipmunked".

    Returns
    -------
    numpy.ndarray
        float32, always 2-D: ``(channels, M)`` for 1-D or channels-first input, ``(M, channels)`` for
        channels-last input. ``M = round(N / stretch_factor)`` (half up, as measured on pedalboard 0.9.26)
        for a constant factor, and ``round(sum(1 / stretch_factor))`` for an array (input sample ``i`` lasts
        ``1 / factor[i]`` output samples). Output sample ``t`` lines up with input sample
        ``t * stretch_factor``.
    """
    if not isinstance(input_audio, np.ndarray):
        raise TypeError(f"input_audio must be a numpy.ndarray of float32 (got {type(input_audio).__name__}).")
    if input_audio.dtype != np.float32:
        raise TypeError(f"time_stretch only accepts float32 audio (got {input_audio.dtype}); use x.astype(np.float32).")
    check_ndim(input_audio)
    rate = limits.check_sample_rate(samplerate, "samplerate")
    if input_audio.ndim == 1:
        audio, layout = input_audio[np.newaxis, :], "channels-first"
    else:
        layout = detect_layout(input_audio.shape, "channels-first")
        audio = input_audio if layout == "channels-first" else input_audio.T
    channels, length = audio.shape
    stretch_arr, stretch = _factor_array(stretch_factor, "stretch_factor", length)
    pitch_arr, pitch = _factor_array(pitch_shift_in_semitones, "pitch_shift_in_semitones", length)
    if stretch_arr is None:
        _check_stretch(stretch, None)
    else:
        bad = np.flatnonzero(~((stretch_arr > 0.0) & np.isfinite(stretch_arr)))
        if bad.size:
            _check_stretch(float(stretch_arr[bad[0]]), int(bad[0]))
    if pitch_arr is None:
        _check_pitch(pitch, None)
    else:
        bad = np.flatnonzero(~(np.abs(pitch_arr) <= MAX_SEMITONES))
        if bad.size:
            _check_pitch(float(pitch_arr[bad[0]]), int(bad[0]))
    mode = _check_choice(transient_mode, "transient_mode", TRANSIENT_MODES)
    detector = _check_choice(transient_detector, "transient_detector", TRANSIENT_DETECTORS)

    if stretch_arr is None:
        out_len = int(math.floor(length / stretch + 0.5))  # rounded half up, as pedalboard 0.9.26 does
    else:
        out_len = int(math.floor(math.fsum(1.0 / stretch_arr) + 0.5 + 1e-9)) if length else 0
    result = _stretch(
        audio, rate, out_len, stretch_arr, stretch, pitch_arr, pitch, bool(high_quality), mode, detector,
        bool(retain_phase_continuity), use_long_fft_window, bool(preserve_formants),
    )  # fmt: skip
    return np.ascontiguousarray(result.T) if layout == "channels-last" else result


def _stretch(
    audio: np.ndarray,
    rate: float,
    out_len: int,
    stretch_arr: np.ndarray | None,
    stretch: float,
    pitch_arr: np.ndarray | None,
    pitch: float,
    high_quality: bool,
    mode: str,
    detector: str,
    lock: bool,
    long_window: bool | None,
    formants: bool,
) -> np.ndarray:
    channels, length = audio.shape
    if out_len == 0 or length == 0:
        return np.zeros((channels, out_len), np.float32)
    size = frame_size(rate, long_window)
    hop = size // (8 if high_quality else 4)
    half = size // 2
    quefrency = int(rate / 900.0) if formants else 0
    vocoder = _Vocoder(size, hop, channels, rate, mode, detector, lock, quefrency)
    # synthesis frame m is centred on output sample m * hop; it reads the input frame centred on centres[m]
    first = -(half // hop)
    last = (out_len + half) // hop + 1
    m = np.arange(first, last)
    if stretch_arr is None:
        centres = m * (hop * stretch)
        steps = np.full(m.size, hop * stretch)
    else:
        centres = np.empty(m.size)
        steps = np.empty(m.size)
        pos = 0.0
        zero = -first
        for i in range(zero, m.size):  # forward from output sample 0 (input sample 0)
            centres[i] = pos
            steps[i] = hop * stretch_arr[min(int(pos), length - 1)]
            pos += steps[i]
        for i in range(zero - 1, -1, -1):  # the frames before the start, at the first sample's speed
            steps[i] = hop * stretch_arr[0]
            centres[i] = centres[i + 1] - steps[i]
    idx = np.clip(np.floor(centres).astype(np.int64), 0, length - 1)
    ratios = semitones_to_ratio(pitch) * np.ones(m.size) if pitch_arr is None else 2.0 ** (pitch_arr[idx] / 12.0)
    # a frame is passed through unchanged when the pitch ratio is 1 and the analysis hop equals the synthesis hop
    identity = (ratios == 1.0) & (np.abs(steps - hop) < 1e-9)
    starts = np.floor(centres + 0.5).astype(np.int64) - half - 1  # frame samples [start + 1, start + 1 + size)
    pad_lo = max(0, -int(starts.min()))
    pad_hi = max(0, int(starts.max()) + size + 1 - length)
    padded = np.zeros((channels, pad_lo + length + pad_hi), np.float64)
    padded[:, pad_lo : pad_lo + length] = audio
    region = np.zeros((channels, (m.size - 1) * hop + size), np.float64)
    offsets = np.arange(size + 1)
    for b in range(0, m.size, _BATCH):
        sel = slice(b, min(b + _BATCH, m.size))
        gather = (starts[sel] + pad_lo)[:, None] + offsets  # (k, N + 1)
        frames = padded[:, gather].transpose(1, 0, 2)
        out = vocoder.run(frames, ratios[sel], identity[sel])
        _overlap_add(out, hop, region[:, b * hop :])
    # region sample 0 is output sample first * hop - half
    begin = half - first * hop
    return region[:, begin : begin + out_len].astype(np.float32)
