"""MP3 writing with LAME through ``lameenc``, with a Xing/Info + LAME tag for gapless, exact-length reading.

libsndfile's MP3 writer hard-codes LAME's slow algorithm quality 2; pedalboard leaves LAME's default, 3, and
was three times faster. ``lameenc`` runs LAME 3.100 at the quality asked for, but writes only the audio frames.
The tag that makes an MP3 gapless (the first frame of the file: frame count, byte count, seek TOC, and LAME's
encoder delay and padding, from which a decoder knows the exact length) is written here, from the published
layout of the Xing header and the LAME extension: a frame of the stream's own MPEG version, sample rate and
channel mode is reserved at the start (a valid frame of silence until then) and filled in on close. A stream
that cannot seek back (a pipe) gets no tag, as with libsndfile: its length is then an estimate.
"""

from __future__ import annotations

import io
from array import array
from typing import Any

import numpy as np

from ..errors import AudioWriteError
from ..formats import _mp3_limits
from .backends import Encoder
from .mp3_frames import _KBPS_V1, _KBPS_V2, _RATES, frame_length

#: LAME's algorithm quality (``-q``): its default, as pedalboard runs it (libsndfile hard-codes the slower 2)
LAME_QUALITY = 3
#: LAME's encoder delay at these settings: the samples of silence before the first input sample
ENCODER_DELAY = 576
_VBR_MTRH = 4  # LAME's vbr_default
_ENCODER = b"LAME3.100"
_CHUNK = 1 << 15  # frames per lameenc call


def lame_encoder(samplerate: int, num_channels: int, vbr_level: float | None = None, kbps: int = 0) -> Any:
    """A ``lameenc.Encoder`` at LAME's default algorithm quality: VBR at ``vbr_level`` (LAME's V0-V9.999), or a
    constant ``kbps``. The output rate is the input's (LAME would resample the lowest qualities down)."""
    import lameenc

    encoder = lameenc.Encoder()
    encoder.set_in_sample_rate(int(samplerate))
    encoder.set_out_sample_rate(int(samplerate))
    encoder.set_channels(int(num_channels))
    encoder.set_quality(LAME_QUALITY)
    if vbr_level is not None:
        encoder.set_vbr(_VBR_MTRH)
        encoder.set_vbr_quality(min(float(vbr_level), 9.999))  # LAME takes 0 <= q < 10
    else:
        encoder.set_bit_rate(int(kbps))
    return encoder


def pcm16(frames_last: np.ndarray) -> bytes:
    """``(frames, channels)`` float samples, of any memory layout, as the interleaved little-endian 16-bit PCM LAME
    takes: ``rint(clip(float32(x) * 32767, -32767, 32767))``, NaN as silence (infinities full scale, as a float
    encoder would clip them). Worked along each channel's samples (contiguous in a channels-first array) and
    interleaved last, as 16-bit integers (half the bytes of floats to move)."""
    rows = frames_last.T
    scaled = np.multiply(rows, np.float32(32767.0), dtype=np.float32)
    np.clip(scaled, -32767.0, 32767.0, out=scaled)
    if np.isnan(np.add.reduce(scaled, axis=None)):  # NaN survives the clip (a sum is NaN if any sample is)
        np.nan_to_num(scaled, copy=False, nan=0.0)
    quantized = np.empty(scaled.shape, "<i2")
    np.rint(scaled, out=quantized, casting="unsafe")
    if quantized.shape[0] == 1:
        return quantized.tobytes()
    pcm = np.empty(frames_last.shape, "<i2")
    for channel, row in enumerate(quantized):
        pcm[:, channel] = row
    return pcm.tobytes()


_CRC16_TABLE: list[int] = []


def _crc16(data: bytes) -> int:
    """CRC-16 (polynomial 0x8005, reflected, initial 0) as the LAME tag uses it (table-driven)."""
    if not _CRC16_TABLE:
        for byte in range(256):
            crc = byte
            for _ in range(8):
                crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
            _CRC16_TABLE.append(crc)
    crc = 0
    for byte in data:
        crc = (crc >> 8) ^ _CRC16_TABLE[(crc ^ byte) & 0xFF]
    return crc


class LameEncoder(Encoder):
    """An MP3 writer for a path or a file-like object (from its position on)."""

    #: ``write`` takes float samples of any layout, unclipped: :func:`pcm16` clips and quantises them in one go
    takes_raw_floats = True

    def __init__(self, target: Any, settings: Any, samplerate: int, num_channels: int) -> None:
        self._rate = samplerate
        self._channels = num_channels
        # the MPEG version (3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5) and sample-rate index of the frame headers
        self._version = next(version for version, rates in _RATES.items() if samplerate in rates)
        self._rate_index = _RATES[self._version].index(samplerate)
        self._spf = 1152 if self._version == 3 else 576
        self._vbr = settings.bitrate_mode == "VARIABLE"
        self._level = min(float(settings.compression_level or 0.0) * 10.0, 9.999)  # VBR: LAME's V level
        if self._vbr:
            self._kbps = 0
            encoder = lame_encoder(samplerate, num_channels, vbr_level=self._level)
        else:
            low, high = _mp3_limits(samplerate)  # above a rate's highest bitrate, clamped as pedalboard does
            self._kbps = self._nearest_kbps(min(max(float(settings.quality.split()[0]), low), high))
            encoder = lame_encoder(samplerate, num_channels, kbps=self._kbps)
        self._encoder = encoder
        self._owns_file = isinstance(target, str)
        self._file = open(target, "w+b") if self._owns_file else target  # noqa: SIM115 - closed by close()
        self._origin = 0
        self._seekable = True
        if not self._owns_file:
            try:
                self._seekable = bool(target.seekable()) if hasattr(target, "seekable") else True
                self._origin = int(target.tell()) if self._seekable else 0
            except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
                self._seekable = False
        self._tag_kbps = self._tag_bitrate()
        self._tag_size = self._frame_bytes(self._tag_kbps) if self._seekable else 0
        self._offsets = array("Q")  # each audio frame's offset from the start of the tag frame
        self._pending = b""  # bytes of an audio frame not complete yet
        self._written = self._tag_size  # bytes from the origin
        self._samples = 0
        if self._tag_size:
            # reserved for the tag, filled in by close(). Until then it is a valid frame of silence (a header,
            # zero side information), as LAME's own placeholder is: a reader taking the bytes as they arrive (a
            # web service streaming the encode) gets a valid stream from the first byte, with 1152 samples of
            # silence before the audio instead of the tag that a finished file has.
            self._emit(self._header() + bytes(self._tag_size - 4))

    # ------------------------------------------------------------------ tag frame geometry
    def _bitrates(self) -> tuple[int, ...]:
        return _KBPS_V1 if self._version == 3 else _KBPS_V2

    def _nearest_kbps(self, kbps: float) -> int:
        valid = [k for k in self._bitrates() if k]
        return min(valid, key=lambda k: (abs(k - kbps), k))

    def _side_info(self) -> int:
        if self._version == 3:
            return 17 if self._channels == 1 else 32
        return 9 if self._channels == 1 else 17

    def _frame_bytes(self, kbps: int) -> int:
        return (144_000 if self._version == 3 else 72_000) * kbps // self._rate

    def _tag_bitrate(self) -> int:
        """The tag frame's bitrate: the stream's for a constant bitrate, if its frame holds the tag; else the
        lowest that does."""
        need = 4 + self._side_info() + 120 + 36
        if self._kbps and self._frame_bytes(self._kbps) >= need:
            return self._kbps
        return next(k for k in self._bitrates() if k and self._frame_bytes(k) >= need)

    # ------------------------------------------------------------------ writing
    def _emit(self, data: bytes) -> None:
        while data:
            try:
                count = self._file.write(data)  # bytes, as a file-like expects (not a memoryview)
            except OSError as exc:
                if not self._owns_file:
                    raise  # the file-like's own exception
                raise AudioWriteError(f"Unable to write data to audio file: {exc}") from exc
            count = len(data) if count is None else int(count)
            if count <= 0:
                raise AudioWriteError(f"Unable to write data to audio file: write() took none of {len(data)} bytes.")
            data = data[count:]

    def _audio(self, data: bytes) -> None:
        """Write encoded audio and note where each frame starts."""
        if not data:
            return
        data = self._pending + data
        at = 0
        while True:
            length = frame_length(data, at)
            if not length or at + length > len(data):
                break
            self._offsets.append(self._written - len(self._pending) + at)
            at += length
        fresh = data[len(self._pending) :]
        self._emit(fresh)
        self._written += len(fresh)
        self._pending = data[at:]

    def write(self, block: np.ndarray) -> None:
        """Append ``(frames, channels)`` float samples (any memory layout; clipped to [-1, 1] here)."""
        for start in range(0, block.shape[0], _CHUNK):
            part = block[start : start + _CHUNK]
            self._audio(bytes(self._encoder.encode(pcm16(part))))
            self._samples += part.shape[0]

    def flush(self) -> None:
        flush = getattr(self._file, "flush", None)
        if callable(flush):
            flush()

    def close(self) -> None:
        try:
            if self._samples == 0:  # an empty file must still be a valid file: one sample of silence
                self.write(np.zeros((1, self._channels), np.float32))
            self._audio(bytes(self._encoder.flush()))
            if self._tag_size:
                self._file.seek(self._origin)
                self._emit(self._tag())
                self._file.seek(self._origin + self._written)
            self.flush()
        finally:
            if self._owns_file:
                self._file.close()

    # ------------------------------------------------------------------ the tag
    def _header(self) -> bytes:
        """The 4-byte header of the tag frame: the stream's MPEG version, rate and mode at the tag's bitrate."""
        index = self._bitrates().index(self._tag_kbps)
        mode = 3 if self._channels == 1 else 1  # mono, or joint stereo (LAME's default for two channels)
        return bytes(
            [
                0xFF,
                0xE0 | (self._version << 3) | (1 << 1) | 1,  # layer III, no CRC
                (index << 4) | (self._rate_index << 2),
                (mode << 6),
            ]
        )

    def _tag(self) -> bytes:
        frames = len(self._offsets)
        total = self._written
        padding = max(0, min(frames * self._spf - ENCODER_DELAY - self._samples, 4095))  # a 12-bit field
        header = self._header()
        toc = bytearray(100)  # as LAME's: entry i = where i % of the audio starts, in 256ths of its bytes
        first = self._offsets[0] if frames else self._tag_size
        audio = max(1, total - first)
        for i in range(1, 100):
            offset = self._offsets[min(frames - 1, i * frames // 100)] if frames else first
            toc[i] = min(255, (offset - first) * 256 // audio)
        xing = b"Xing" if self._vbr else b"Info"
        quality = max(0, 100 - 10 * int(self._level) - LAME_QUALITY) if self._vbr else 100 - LAME_QUALITY
        body = bytearray(header) + bytes(self._side_info())
        body += xing + (0x0F).to_bytes(4, "big") + frames.to_bytes(4, "big") + total.to_bytes(4, "big")
        body += toc + quality.to_bytes(4, "big")
        lame = bytearray(_ENCODER)
        lame.append(4 if self._vbr else 1)  # tag revision 0, VBR method: 4 = VBR (mtrh), 1 = constant
        lame.append(0)  # lowpass / 100 Hz: not known here
        lame += bytes(8)  # ReplayGain: not computed
        lame.append(0)  # encoding flags, ATH type
        lame.append(min(255, self._kbps))  # bitrate (CBR; 0 for VBR)
        lame += bytes([ENCODER_DELAY >> 4, ((ENCODER_DELAY & 0x0F) << 4) | (padding >> 8), padding & 0xFF])
        source = 1 if self._rate == 44100 else 2 if self._rate == 48000 else 0
        lame.append(((1 if self._channels == 1 else 3) << 2) | source)  # misc: stereo mode, source rate
        lame.append(0)  # MP3 gain
        lame += bytes(2)  # preset and surround
        lame += total.to_bytes(4, "big")  # music length: the whole file from the tag frame
        lame += bytes(2)  # music CRC: not computed
        body += lame
        body += _crc16(bytes(body)).to_bytes(2, "big")  # the tag CRC, over the frame up to here
        return bytes(body) + bytes(self._tag_size - len(body))
