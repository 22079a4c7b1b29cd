"""Codec degradation effects: MP3Compressor (LAME through lameenc, decoded by FFmpeg through PyAV) and
GSMFullRateCompressor (GSM 06.10 through libsndfile), streaming with a fixed, compensated latency.

How each one streams (measured with soundfile 0.14 / libsndfile 1.2.2):

- **GSM 06.10** is coded continuously. One encoder writes raw GSM frames (33 bytes per 160 samples at 8 kHz)
  into a byte queue as each frame completes; one decoder reads them back from the same queue frame by frame
  (libsndfile's raw GSM reader reads exactly the frames asked for). The result is bit-identical to coding the
  whole signal in one go, so the codec's state carries across blocks as it should. The chain is pedalboard's:
  channel mean -> resample to 8 kHz -> 160-sample frames -> encode+decode -> resample back -> copied to every
  channel.
- **MP3** is coded continuously too: one LAME encoder (``lameenc``) and one FFmpeg decoder (PyAV), fed whole
  frames as they complete. LAME's bytes depend only on the samples given to it, never on how they were cut
  into calls, so the output is the same for any block size; what varies is when a frame's last byte comes out.
  That is bounded by the format: LAME encodes frame ``k`` once its analysis window is full, and the frame's
  tail may be left as a hole for later frames' main data (the bit reservoir), at most as many bytes as
  ``main_data_begin`` can point back (511 in MPEG-1, 255 in MPEG-2/2.5). The stage's lookahead is that bound
  plus the codec delay (cut from the front: lag 0). The bound was reached exactly, and never passed, by noise
  bursts followed by silence at every rate.
"""

from __future__ import annotations

import functools
import io
from typing import Any

import numpy as np

from ..core.params import Param
from ..core.plugin import PairedChannels
from ..io.quality import Quality
from .pipeline_plugin import PipelinePlugin
from .resample import AlignedPipeline, AlignedResampler, FixedBlockAdapter, FunctionStage, Stage

MP3_SAMPLE_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)
GSM_RATE = 8000.0
GSM_FRAME = 160
_GSM_FRAME_BYTES = 33
_GSM_SUB_BLOCK = 16384

_MP3_FRAME = 1152
_MP3_SUB_BLOCK = 16384  # samples per encoder call (fewer Python round trips; LAME's work is the same)


def _soundfile() -> Any:
    import soundfile

    return soundfile


# --------------------------------------------------------------------------------------------- MP3
_MP3_LAG: dict[tuple[int, int], int] = {}


def _lame_encode(segment: np.ndarray, sample_rate: int, vbr_quality: float) -> bytes:
    """``(channels, n)`` float32 audio as a raw VBR MP3 stream (no tag), by LAME through ``lameenc``."""
    from ..io.codecs.mp3_writer import lame_encoder, pcm16

    encoder = lame_encoder(sample_rate, segment.shape[0], vbr_level=vbr_quality)
    return bytes(encoder.encode(pcm16(segment.T)) + encoder.flush())


class _MP3Decoder:
    """FFmpeg's MP3 decoder (PyAV) fed whole frames of a raw stream as they complete; ``(channels, n)`` float32.

    (libsndfile stops a VBR stream without a tag at the length it estimates from the first frame's bitrate.)
    """

    def __init__(self, channels: int) -> None:
        import av

        self._av = av
        codec = av.CodecContext.create("mp3float", "r")
        assert isinstance(codec, av.AudioCodecContext)  # (a decoder of audio)
        self._codec = codec
        self._channels = channels
        self._pending = bytearray()  # bytes of a frame not complete yet

    def decode(self, data: bytes) -> np.ndarray:
        """Decode every frame that ``data`` completes (a partial last frame waits for the next call)."""
        from ..io.codecs.mp3_frames import frame_length

        pending = self._pending
        pending += data
        at = 0
        while True:
            length = frame_length(pending, at)
            if not length or at + length > len(pending):
                break
            at += length
        if not at:
            return np.zeros((self._channels, 0), np.float32)
        packet = self._av.Packet(bytes(pending[:at]))
        del pending[:at]
        frames = self._codec.decode(packet)
        out = np.empty((self._channels, sum(frame.samples for frame in frames)), np.float32)
        at = 0
        for frame in frames:  # planar float32 (FFmpeg's float decoder): each plane is one channel
            count = frame.samples
            for channel, plane in enumerate(frame.planes):
                out[channel, at : at + count] = np.frombuffer(memoryview(plane), np.float32, count)
            at += count
        return out


def _decode(data: bytes, channels: int) -> np.ndarray:
    """A whole raw MP3 stream decoded, ``(channels, n)`` float32."""
    return _MP3Decoder(channels).decode(data)


def _mp3_lag(sample_rate: int, channels: int) -> int:
    """Samples between LAME's input and FFmpeg's output of a stream without a gapless tag (the encoder's
    delay plus the decoder's): measured once per rate and channel count, by where a tone burst comes back."""
    key = (int(sample_rate), channels)
    if key not in _MP3_LAG:
        n = 8 * _MP3_FRAME
        t = np.arange(400)
        burst = (0.5 * np.sin(2 * np.pi * t * 1000.0 / sample_rate) * np.hanning(400)).astype(np.float32)
        probe = np.zeros((channels, n), np.float32)
        probe[:, 3000:3400] = burst
        decoded = _decode(_lame_encode(probe, sample_rate, 2.0), channels)[0]
        match = np.correlate(decoded, burst, "valid")
        _MP3_LAG[key] = int(np.argmax(match)) - 3000
    return _MP3_LAG[key]


def mp3_stream_lookahead(sample_rate: int, channels: int) -> int:
    """Input samples LAME may hold back before the last byte of a frame is out, at most (see the module
    docstring): its analysis window, plus the frames that the bit reservoir can leave unfinished.

    LAME encodes frame ``k`` once ``A + k * spf`` samples are in (``A`` = 1376 for MPEG-1, 800 for MPEG-2 and
    2.5: its 1904- or 1328-sample analysis buffer, primed with 528). The frame's last bytes may be a hole that
    later frames' main data fill: the hole is at most what ``main_data_begin`` can point back (511 bytes in
    MPEG-1, 255 in MPEG-2/2.5), and each later frame adds at least the main data of the smallest frame
    (lowest bitrate, less header and side information), which bounds the frames to wait for.
    """
    from ..io.codecs.mp3_frames import _RATES

    version = next(v for v, rates in _RATES.items() if sample_rate in rates)
    mpeg1 = version == 3
    spf = 1152 if mpeg1 else 576
    smallest = (144_000 * 32 if mpeg1 else 72_000 * 8) // sample_rate
    side = (17 if channels == 1 else 32) if mpeg1 else (9 if channels == 1 else 17)
    room = smallest - 4 - side
    reservoir = 511 if mpeg1 else 255
    frames = -(-reservoir // room)
    return (1376 if mpeg1 else 800) + spf * (frames + 1)  # one frame more than the bound, as a margin


class MP3StreamStage(Stage):
    """Code a stream as MP3 continuously: one LAME encoder, one FFmpeg decoder, frames decoded as they complete.

    LAME's output bytes depend only on the samples it was given (not on how they were cut into calls), and
    the decoder's output only on those bytes, so the decoded stream is the same for any block size; only
    when a frame comes out varies, within :func:`mp3_stream_lookahead`. The codec delay is cut from the
    front, so output sample ``j`` is input sample ``j`` coded.
    """

    def __init__(self, sample_rate: int, num_channels: int, vbr_quality: float) -> None:
        self.in_rate = self.out_rate = float(sample_rate)
        self.rate = int(sample_rate)
        self.channels = num_channels
        self.vbr_quality = vbr_quality
        self._delay = _mp3_lag(self.rate, num_channels)
        # the same for mono and stereo, so that the pairs of wide audio (an odd last channel is mono) line up
        self.lookahead = max(mp3_stream_lookahead(self.rate, c) + _mp3_lag(self.rate, c) for c in (1, 2))
        self.reset()

    def reset(self) -> None:
        from ..io.codecs.mp3_writer import lame_encoder

        self._encoder = lame_encoder(self.rate, self.channels, vbr_level=self.vbr_quality)
        self._decoder = _MP3Decoder(self.channels)
        self._skip = self._delay  # decoded samples before the first input sample's

    def push(self, block: np.ndarray) -> np.ndarray:
        if not block.shape[1]:
            return block
        from ..io.codecs._pcm_kernels import quantize_interleave

        # the interleaved 16-bit samples LAME takes, clipped and rounded in one compiled pass
        pcm = np.empty((block.shape[1], self.channels), "<i2")
        quantize_interleave(np.ascontiguousarray(block, np.float32), pcm, 32767.0, -32767.0, 32767.0, 0)
        out = self._decoder.decode(bytes(self._encoder.encode(pcm.tobytes())))
        if self._skip:
            cut = min(self._skip, out.shape[1])
            out = out[:, cut:]
            self._skip -= cut
        return out

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for handle in ("_encoder", "_decoder"):
            state.pop(handle, None)  # codec handles cannot be copied: a copy (pickle, deepcopy) starts afresh
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.reset()


class MP3Compressor(PairedChannels, PipelinePlugin):
    """Degrade the signal with a real MP3 round trip: LAME VBR encoding, then decoding (libsndfile).

    Channels are kept. Audio with more than two channels is coded as independent stereo pairs by default
    (channels (0, 1), (2, 3), ..., an odd last channel as mono), each exactly as if processed alone; with
    ``mp3.channel_pairs = False`` it raises ``ValueError`` as in pedalboard. The coding latency is reported by
    :attr:`latency_samples` and compensated by ``process``, so the output lines up with the input, and it does
    not depend on ``buffer_size``.

    Notes
    -----
    Supported sample rates: 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100 and 48000 Hz. Other rates
    raise ``ValueError`` when processing.
    """

    vbr_quality = Param(
        2.0,
        minimum=0.0,
        maximum=10.0,
        doc="LAME VBR quality (0 best, 10 smallest)",
        error="VBR quality must be greater than {minimum:g} and less than {maximum:g}. "
        "(Higher numbers are lower quality.)",
    )

    _pipeline: AlignedPipeline | None = None

    def _update(self) -> None:
        config = (self._sr, self._channels, float(self.vbr_quality))
        if config == self._config:
            return
        if self._sr not in MP3_SAMPLE_RATES:
            rates = ", ".join(str(r) for r in MP3_SAMPLE_RATES)
            raise ValueError(
                f"MP3Compressor only supports sample rates of {rates} Hz. (Was passed {self._sr:g} Hz audio.)"
            )
        if self._channels > 2:
            raise ValueError(
                f"MP3Compressor only supports mono or stereo audio. (Was passed {self._channels}-channel audio.)"
            )
        stage = MP3StreamStage(int(self._sr), self._channels, float(self.vbr_quality))
        self._pipeline = AlignedPipeline([stage], self._channels, sub_block=_MP3_SUB_BLOCK)
        self._config = config

    _sanitize_input = True  # the encoder must not be fed NaN or infinity


# --------------------------------------------------------------------------------------------- GSM
class _ByteQueue:
    """Bytes written by an encoder and read back by a decoder, with consumed bytes dropped."""

    # The decoder is told the stream is this long (frames beyond what was written are never requested).
    VIRTUAL_SIZE = _GSM_FRAME_BYTES * (1 << 26)

    def __init__(self) -> None:
        self.data = bytearray()
        self.offset = 0  # absolute position of data[0]
        self.written = 0


class _Sink(io.RawIOBase):
    """The encoder's end of a :class:`_ByteQueue` (append-only)."""

    def __init__(self, queue: _ByteQueue) -> None:
        self._q = queue

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raw = bytes(data)
        self._q.data += raw
        self._q.written += len(raw)
        return len(raw)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._q.written

    def tell(self) -> int:
        return self._q.written


class _Source(io.RawIOBase):
    """The decoder's end of a :class:`_ByteQueue` (reads what the encoder wrote; reports a huge length)."""

    def __init__(self, queue: _ByteQueue) -> None:
        self._q = queue
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        q = self._q
        start = self._pos - q.offset
        end = len(q.data) if size is None or size < 0 else start + size
        chunk = bytes(q.data[start:end])
        self._pos += len(chunk)
        consumed = self._pos - q.offset
        if consumed > 1 << 16:  # forget what was read
            del q.data[:consumed]
            q.offset += consumed
        return chunk

    def readinto(self, buffer: Any) -> int:
        chunk = self.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 0:
            self._pos = offset
        elif whence == 1:
            self._pos += offset
        else:
            self._pos = _ByteQueue.VIRTUAL_SIZE + offset
        self._pos = max(self._pos, self._q.offset)
        return self._pos

    def tell(self) -> int:
        return self._pos


class GSMCodec:
    """A continuous GSM 06.10 encoder+decoder pair (8 kHz mono) working on 160-sample frames."""

    # frames decoded before the decoder is reopened (its virtual stream length runs out after this)
    _MAX_FRAMES = (1 << 26) - 1
    _OPTIONS: dict[str, Any] = {"samplerate": int(GSM_RATE), "channels": 1, "format": "RAW", "subtype": "GSM610"}

    def __init__(self) -> None:
        self._encoder: Any = None
        self._decoder: Any = None
        self.reset()

    def reset(self) -> None:
        sf = _soundfile()
        self.close()
        self._queue = _ByteQueue()
        self._encoder = sf.SoundFile(_Sink(self._queue), "w", **self._OPTIONS)
        self._frames = 0

    def close(self) -> None:
        for handle in (self._encoder, self._decoder):
            if handle is not None:
                try:
                    handle.close()
                except Exception:  # noqa: BLE001 - closing a codec must never raise
                    pass
        self._encoder = self._decoder = None

    def __call__(self, block: np.ndarray) -> np.ndarray:
        """Code one ``(1, 160 * k)`` float32 block; returns the decoded ``(1, 160 * k)`` block."""
        n = block.shape[1]
        if self._frames + n // GSM_FRAME > self._MAX_FRAMES:
            self.reset()
        self._encoder.write(np.clip(block[0], -1.0, 1.0))
        if self._decoder is None:  # opened only now: libsndfile decodes the first frame when it opens
            self._decoder = _soundfile().SoundFile(_Source(self._queue), "r", **self._OPTIONS)
        decoded = self._decoder.read(n, dtype="float32")
        self._frames += n // GSM_FRAME
        out = np.zeros((1, n), np.float32)
        out[0, : decoded.shape[0]] = decoded
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {}  # libsndfile's codec handles cannot be copied: a copy (pickle, deepcopy) starts a fresh codec

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._encoder = self._decoder = None
        self.reset()

    def __del__(self) -> None:
        self.close()


def _mono(block: np.ndarray) -> np.ndarray:
    result: np.ndarray = block.mean(axis=0, keepdims=True, dtype=np.float32)
    return result


def _spread(block: np.ndarray, channels: int) -> np.ndarray:
    """A mono block copied to ``channels`` channels (a module function, so a plugin holding it pickles)."""
    return np.repeat(block, channels, axis=0)


class GSMFullRateCompressor(PairedChannels, PipelinePlugin):
    """Degrade the signal with the GSM 06.10 full-rate speech codec (13 kbit/s, 8 kHz mono).

    The channels are averaged, resampled to 8 kHz with ``quality``, coded and decoded in 160-sample frames,
    resampled back, and the result is copied to every channel. Audio with more than two channels is coded as
    independent pairs (channels (0, 1), (2, 3), ..., an odd last channel alone), each as if processed alone.
    The latency is reported by :attr:`latency_samples` and compensated by ``process``; the output does not
    depend on ``buffer_size``.
    """

    quality = Param(Quality.WindowedSinc8, kind=Quality, doc="resampling method to and from 8 kHz")

    _pipeline: AlignedPipeline | None = None
    _codec: GSMCodec | None = None

    def _update(self) -> None:
        config = (self._sr, self._channels, self.quality)
        if config == self._config:
            return
        from .resample import check_target_rate

        check_target_rate(GSM_RATE, self._sr)
        if self._codec is None:
            self._codec = GSMCodec()
        channels = self._channels
        stages = [
            FunctionStage(_mono, self._sr),
            AlignedResampler(self._sr, GSM_RATE, 1, self.quality),
            FixedBlockAdapter(GSM_FRAME, 1, self._codec, self._codec.reset, GSM_RATE, batch=True),
            AlignedResampler(GSM_RATE, self._sr, 1, self.quality),
            FunctionStage(functools.partial(_spread, channels=channels), self._sr),
        ]
        # pieces of 16384 input samples: each codec call (a libsndfile write and read) costs ~0.1 ms whatever
        # its size, and 2048-sample pieces carried only one or two 160-sample frames each
        self._pipeline = AlignedPipeline(stages, channels, sub_block=_GSM_SUB_BLOCK)
        self._config = config

    _sanitize_input = True  # the encoder must not be fed NaN or infinity

    def _repr_params(self) -> str:
        return ""
