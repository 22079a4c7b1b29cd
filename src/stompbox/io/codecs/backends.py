"""Codec backends behind one small decoder/encoder interface.

- libsndfile through ``soundfile``: WAV (all PCM/float/mu-law/a-law/ADPCM), AIFF, FLAC, OGG Vorbis and Opus, MP3,
  CAF, W64, RF64, AU. Gapless MP3 when the file has a LAME/Xing tag.
- FFmpeg through PyAV (imported only when needed): M4A/AAC, ALAC, AC3, ADTS and anything else FFmpeg decodes, and
  non-seekable streams (pipes), which libsndfile cannot open.

A decoder yields float32 ``(channels, n)`` blocks and can seek to an exact frame. The backends' own seeks are not
always sample-exact for compressed formats (FIELD-NOTES), so :class:`Decoder.seek` lands early (a pre-roll) and
decodes forward to the target, which gives the same samples as a linear decode.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

import numpy as np

from ..errors import AudioFileError, AudioWriteError, CorruptAudioError, TruncatedAudioWarning, UnsupportedFormatError
from .channel_order import ffmpeg_layout, from_vorbis, is_vorbis_order, sndfile_layout, to_vorbis
from .ogg_pages import MAX_PAGE, EndedView, OggSerialRewriter, last_page_span

PCM_DTYPES = {
    "PCM_S8": "int8", "PCM_U8": "int8", "PCM_16": "int16", "PCM_24": "int24", "PCM_32": "int32",
    "FLOAT": "float32", "DOUBLE": "float64", "ALAC_16": "int16", "ALAC_20": "int24", "ALAC_24": "int24",
    "ALAC_32": "int32",
}  # fmt: skip
#: Scale of integer PCM read as float32, as pedalboard reads it: ``1 / (2**(bits-1) - 1)`` (int16 ``k`` reads
#: as ``k / 32767``, so -32768 reads as -1.0000305). float32(2**31 - 1) is 2**31, so int32 is ``k / 2**31``.
PCM_READ_SCALE = {
    "int8": np.float32(1.0 / 127.0),
    "int16": np.float32(1.0 / 32767.0),
    "int24": np.float32(1.0 / 8388607.0),
    "int32": np.float32(1.0 / 2147483647.0),
}
CTYPES = {"int16": "short", "int32": "int", "float32": "float", "float64": "double"}  # libsndfile's sf_readf_*
INT_READ_DTYPE = {"int8": "int16", "int16": "int16", "int24": "int32", "int32": "int32"}  # libsndfile container
#: The same scales for the values as libsndfile returns them (8-bit in int16 and 24-bit in int32, shifted up).
READ_SCALE = {
    "int8": np.float32(PCM_READ_SCALE["int8"] / 256),
    "int16": PCM_READ_SCALE["int16"],
    "int24": np.float32(PCM_READ_SCALE["int24"] / 256),
    "int32": PCM_READ_SCALE["int32"],
}
SEEK_PREROLL = 8192
SF_COUNT_MAX = 2**63 - 1  # libsndfile's length of a stream whose length it does not know
READ_STEP = 16384  # frames libsndfile decodes per step of a large read
CACHE_FRAMES = 32768  # frames decoded ahead for small sequential reads (FLAC, AIFF, CAF...)
#: sequential reads of fewer frames than this are served from a block decoded ahead (one libsndfile call for many
#: small reads); larger ones are decoded as asked: libsndfile keeps the rest of a FLAC frame for the next read, so
#: a run of reads decodes each frame once, where a block decoded ahead of a crop's last read is decoded in vain
AHEAD_BELOW = 2048
AHEAD_BYTES = 8 << 20  # the most a two-thread read-ahead block may take (PARALLEL_FRAMES of 4 channels)
STREAMING_FRAMES = 1 << 17  # frames read in sequence after which two-thread formats decode big blocks ahead
PARALLEL_FRAMES = 1 << 19  # a FLAC/Vorbis/Opus read (from a path) at least this long is decoded by two threads
#: FFmpeg codecs whose seeks decode linearly (on from here, or from the start) when the target is at most this
#: many seconds ahead or from the start: their decoders carry state from the start of the stream.
LINEAR_SEEK_SECONDS = {"AAC": 60.0}
#: FFmpeg demuxers of raw elementary streams, whose seeks and timestamps are byte-rate estimates.
UNTIMED_FORMATS = frozenset(
    {"AAC", "AC3", "EAC3", "DTS", "DTSHD", "TRUEHD", "MLP", "AMR", "AMRNB", "AMRWB", "GSM", "MP3", "MP2", "MPEG",
     "LOAS", "LATM", "DIRAC", "SBC", "APTX", "CODEC2RAW"}
)  # fmt: skip  # frames decoded and discarded before a compressed-format seek target


class Decoder:
    """What :class:`ReadableAudioFile` needs from a backend."""

    samplerate: float
    num_channels: int
    frames: int
    exact: bool  # is ``frames`` exact (False while it is an estimate)
    file_dtype: str
    format_name: str
    subtype: str
    position: int
    channel_layout: str | None = None  # FFmpeg's name of the layout the file states (None: not stated)

    def read(self, n: int) -> np.ndarray:  # float32 (channels, <= n); shorter only at the end
        raise NotImplementedError

    def read_raw(self, n: int) -> np.ndarray:
        raise NotImplementedError

    def seek(self, frame: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask, capped by a cgroup v2 CPU quota (a container's)."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    global _quota
    if _quota is None:
        _quota = 0
        try:
            with open("/sys/fs/cgroup/cpu.max") as limits:
                quota, period = limits.read().split()[:2]
            if quota != "max":
                _quota = max(1, int(quota) // int(period))
        except (OSError, ValueError):
            pass
    return min(count, _quota) if _quota else count


_quota: int | None = None


class TwoThreadPayoff:
    """Whether decoding a long read in two threads pays, measured rather than assumed.

    Two threads win on an idle second core; when that core is busy with other work (a loaded server), or the
    process may use one CPU only, they can lose to one thread. So long reads are timed both ways, per kind of
    stream (codec, channels, rate), and the faster way (by its smoothed seconds per frame) is taken; every
    :data:`EXPLORE`-th long read takes the other way, so a change of load is noticed. The first long read of
    a kind uses two threads, the second one thread; with one usable CPU, always one.
    """

    EXPLORE = 8

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cost: dict[tuple[Any, bool], float] = {}  # (kind, two threads) -> smoothed seconds per frame
        self._reads: dict[Any, int] = {}

    def choose(self, kind: Any) -> bool:
        """Whether the next long read of ``kind`` uses two threads."""
        if usable_cpus() < 2:
            return False
        with self._lock:
            count = self._reads[kind] = self._reads.get(kind, 0) + 1
            two, one = self._cost.get((kind, True)), self._cost.get((kind, False))
        if two is None or one is None:
            return two is None
        faster = two <= one
        return faster if count % self.EXPLORE else not faster

    def record(self, kind: Any, two: bool, seconds: float, frames: int) -> None:
        """Note that a long read of ``frames`` frames of ``kind`` took ``seconds`` in one or two threads."""
        if frames <= 0:
            return
        cost = seconds / frames
        with self._lock:
            before = self._cost.get((kind, two))
            self._cost[(kind, two)] = cost if before is None else 0.5 * (before + cost)


#: The process's measure of two-thread decoding (see :class:`TwoThreadPayoff`).
TWO_THREADS = TwoThreadPayoff()


def read_ahead(previous: int, n: int, limit: int) -> int:
    """How many frames to decode ahead for sequential reads of ``n`` frames: three reads' worth (at least 8192)
    at the second read after a seek (the first is decoded as asked), then twice the last block, up to ``limit``.
    A seek followed by four reads (a training crop) decodes exactly what it reads (with four reads' worth, a
    fifth of what it decoded was never read); a longer run of reads soon gets whole blocks."""
    return min(limit, 2 * previous if previous else max(3 * n, 8192))


def _peek(source: Any, size: int, from_end: bool = False) -> bytes:
    """Up to ``size`` bytes (-1: all) of a path or a seekable file-like, from its start (or its last ``size``
    bytes); a file-like is left where it was."""
    if isinstance(source, str):
        with open(source, "rb") as handle:
            return _peek(handle, size, from_end)
    here = source.tell()
    try:
        if from_end:
            source.seek(0, io.SEEK_END)
            source.seek(max(0, source.tell() - size))
        else:
            source.seek(0)
        return bytes(source.read(size))
    finally:
        source.seek(here)


def _has_lame_tag(head: bytes) -> bool:
    """Whether an MP3's first frame carries a Xing/Info (LAME) tag, which makes its length exact."""
    start = 0
    if head[:3] == b"ID3" and len(head) >= 10:
        size = (head[6] & 0x7F) << 21 | (head[7] & 0x7F) << 14 | (head[8] & 0x7F) << 7 | (head[9] & 0x7F)
        start = 10 + size
    frame = head[start : start + 200]
    return b"Xing" in frame or b"Info" in frame or b"VBRI" in frame


_QUIET = threading.Lock()
_quiet_depth = 0
_saved_stderr: int | None = None


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Send what C libraries write to file descriptor 2 to the null device meanwhile (libmpg123, inside
    libsndfile, prints warnings about damaged or odd MP3 frames there, with no switch to turn them off).
    Nested and concurrent uses share one redirection; while it lasts, other threads' stderr output is dropped
    too, so it covers only libsndfile's MP3 calls."""
    global _quiet_depth, _saved_stderr
    with _QUIET:
        if _quiet_depth == 0:
            try:
                saved = os.dup(2)
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)
                os.close(null)
                _saved_stderr = saved
            except OSError:
                _saved_stderr = None
        _quiet_depth += 1
    try:
        yield
    finally:
        with _QUIET:
            _quiet_depth -= 1
            if _quiet_depth == 0 and _saved_stderr is not None:
                os.dup2(_saved_stderr, 2)
                os.close(_saved_stderr)
                _saved_stderr = None


_NATIVE: dict[str, tuple[Any, Any, str, Any]] = {}  # dtype -> libsndfile's sf_readf_* and what calling it takes


def _native_reader(sf: Any, dtype: str) -> tuple[Any, Any, str, Any] | None:
    """``(sf_readf_<type>, ffi.cast, "<type> *", sf_error)`` of soundfile's libsndfile binding for ``dtype``
    (looked up once), or None for a soundfile without one."""
    native, ffi = getattr(sf, "_snd", None), getattr(sf, "_ffi", None)
    if native is None or ffi is None:
        return None
    ctype = CTYPES[dtype]
    found = _NATIVE[dtype] = (getattr(native, f"sf_readf_{ctype}"), ffi.cast, f"{ctype} *", native.sf_error)
    return found


class _TrailingJunk(Exception):
    """libsndfile's MP3 decoder failed after the start of the stream (see :meth:`SoundfileDecoder._read_to_junk`)."""


class SoundfileDecoder(Decoder):
    """libsndfile through soundfile."""

    #: a view of a path that was opened for this decoder alone, closed with it (set by codec_choice when it is)
    _owned_source: EndedView

    def __init__(self, source: Any, name: str, quiet: bool = True) -> None:
        import soundfile as sf

        self._sf = sf
        # libsndfile calls a file-like through C callbacks, which drop exceptions (a failing read would look
        # like the end of the file): the trap keeps the first one, and it is raised from here.
        self._trap = _WriteErrorTrap(source) if not isinstance(source, str) else None
        self._path = source if isinstance(source, str) else None
        try:
            # mpg123 notes what it finds in an MP3's first frames on stderr (``quiet``: the file may be one)
            with quiet_stderr() if quiet else contextlib.nullcontext():
                self._file = sf.SoundFile(self._trap if self._trap is not None else source, "r")
        except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
            self._check_source()
            # (soundfile's message names the object it was given: for a file-like, the trap around it)
            reason = exc.error_string if isinstance(exc, sf.LibsndfileError) else str(exc)
            raise UnsupportedFormatError(f"Error opening {name!r}: {reason}") from exc
        self._check_source()
        info = self._file
        self.samplerate = float(info.samplerate)
        self.num_channels = int(info.channels)
        self.frames = int(info.frames)
        self.format_name = str(info.format)
        self.subtype = str(info.subtype)
        self.position = 0
        self.file_dtype = PCM_DTYPES.get(self.subtype, "float32")
        # FLAC's integers are read as floats holding the integers themselves (libsndfile's float normalisation
        # off): its float read copies a decoded frame in one pass, and the float-to-float scaling that follows is
        # ~5% cheaper than reading shorts and converting them; float32(k) * scale either way (|k| < 2**24)
        self._float_ints = self.format_name == "FLAC" and self.file_dtype in ("int8", "int16", "int24")
        self._unnormalised(self._file)
        self.channel_layout = sndfile_layout(info, self.format_name, self.subtype, self._flac_head(source))
        if self.format_name in ("AIFF", "CAF") and self.num_channels > 2:  # their layout tags, as FFmpeg reads them
            self.channel_layout = ffmpeg_layout(source) or self.channel_layout
        self._vorbis_order = is_vorbis_order(self.subtype, self.num_channels)  # read in Vorbis order: reorder
        if self.format_name in ("WAV", "WAVEX", "RF64", "W64") and self.subtype in ("ULAW", "ALAW"):
            self.file_dtype = "float32"
        self.exact = True
        if self.format_name == "MP3":
            self.exact = self._mp3_tagged(source)
        if self.subtype.startswith("ALAC"):  # a CAF counts whole packets: its last may hold fewer frames
            self.exact = False
        # a FLAC stream written to a pipe: STREAMINFO's total was left 0 (unknown), and libFLAC cannot seek in it
        self._unsized = self.frames >= SF_COUNT_MAX or (self.format_name == "FLAC" and self._impossible(source))
        if self._unsized:  # an estimate from the last frames' headers: reads go on to the real end
            self.frames, self.exact = self._flac_tail_estimate(source), False
        self._estimate = self.frames  # the length libsndfile declared at open
        self._name = name
        self._warned = False  # TruncatedAudioWarning given
        self._damage: bool | None = None  # MP3: valid frames after a place mpg123 failed on (None: not asked yet)
        self._compressed = self.format_name in ("MP3", "OGG") or self.subtype in ("VORBIS", "OPUS", "MPEG_LAYER_III")
        # Long reads from a path decode in two threads where the decoder is the bottleneck (MP3 is fast enough).
        self._parallel = self.format_name == "FLAC" or self.subtype in ("VORBIS", "OPUS")
        # Small sequential reads are served from a block decoded ahead: CACHE_FRAMES of an uncompressed format.
        # A two-thread format read from a path, once STREAMING_FRAMES have been read in sequence since the last
        # seek (a stream, not a crop), gets blocks of PARALLEL_FRAMES decoded by two threads instead, so that a
        # chunked read goes as fast as a whole one, if such a block is no more than AHEAD_BYTES. The handle goes
        # back with a seek when a read leaves the block.
        self._cacheable = not self._compressed
        self._streams = (
            self._parallel
            and self._path is not None
            and self.exact
            and PARALLEL_FRAMES * self.num_channels * 4 <= AHEAD_BYTES
        )
        self._in_sequence = 0  # frames read in sequence since the last seek
        self._ahead = 0  # the last block decoded ahead (0 after a seek: see read_ahead)
        self._cache: np.ndarray | None = None
        self._cache_start = 0
        self._cache_eof = False
        self._last_end = 0
        self._last_page_start: int | None = None  # Vorbis: where the last page starts (-1: unknown), on demand
        if self.num_channels < 1 or self.samplerate <= 0:
            self._file.close()
            raise CorruptAudioError(
                f"{name} declares {self.num_channels} channels at {self.samplerate:g} Hz: not usable audio."
            )
        if self.format_name in ("WAV", "WAVEX", "RF64", "W64", "AIFF") and self.frames > 0:
            cut = _pcm_cut(str(getattr(self._file, "extra_info", "")))
            if cut is not None:
                warn_truncated(
                    self, self.frames, f"where its header declares {cut[0]} bytes of audio data and {cut[1]} remain"
                )

    @staticmethod
    def _flac_tail_estimate(source: Any) -> int:
        """The frames of a FLAC whose STREAMINFO gives no usable total, estimated from the headers of the frames
        in its last 256 kB (frame number + 1, times the largest block size): at most a block more than the real
        length. 0 when there are none."""
        from .flac_seektable import frame_numbers

        try:
            head = _peek(source, 64)
            numbers = frame_numbers(_peek(source, 1 << 18, from_end=True))
        except (OSError, AttributeError, ValueError):
            return 0
        block = int.from_bytes(head[10:12], "big") if head[:4] == b"fLaC" else 0
        return (max(numbers) + 1) * block if numbers and block else 0

    def _impossible(self, source: Any) -> bool:
        """Whether a FLAC's STREAMINFO declares more frames than its bytes can hold (a frame of at most 65,535
        samples takes at least 6 bytes): a total that lies, read as an unknown length."""
        try:
            if isinstance(source, str):
                size = os.path.getsize(source)
            else:
                here = source.tell()
                size = source.seek(0, io.SEEK_END)
                source.seek(here)
        except (OSError, AttributeError, ValueError, TypeError):
            return False
        return self.frames > (size // 6 + 1) * 65535

    def _unnormalised(self, file: Any) -> None:
        """Make a FLAC handle's float reads give the integers themselves (see ``_float_ints``)."""
        if not self._float_ints:
            return
        native = getattr(self._sf, "_snd", None)
        if native is None or not hasattr(self._sf, "_ffi"):  # another soundfile: its reads stay normalised
            self._float_ints = False
            return
        native.sf_command(file._file, SFC_SET_NORM_FLOAT, self._sf._ffi.NULL, 0)  # SF_FALSE

    def _flac_head(self, source: Any) -> bytes:
        """The start of a FLAC file of more than two channels, where a channel-mask comment may be."""
        if self.format_name != "FLAC" or self.num_channels <= 2:
            return b""
        try:
            return _peek(source, 1 << 16)
        except (OSError, AttributeError, ValueError):
            return b""

    @staticmethod
    def _mp3_tagged(source: Any) -> bool:
        try:
            head = _peek(source, 1 << 16)
            if head[:3] == b"ID3" and len(head) >= 10:  # an ID3v2 tag (a cover) may push the first frame further
                size = (head[6] & 0x7F) << 21 | (head[7] & 0x7F) << 14 | (head[8] & 0x7F) << 7 | (head[9] & 0x7F)
                if 10 + size + 4096 > len(head):
                    head = _peek(source, 10 + size + 4096)
        except (OSError, AttributeError):
            return False
        return _has_lame_tag(head)

    def _check_source(self) -> None:
        if self._trap is not None and self._trap.error is not None:
            error, self._trap.error = self._trap.error, None
            raise error

    def _read_frames(self, n: int, dtype: str, file: Any = None) -> np.ndarray:
        """``(frames, channels)`` samples straight from libsndfile's ``sf_readf_*``.

        soundfile's ``read()`` seeks back to where it thinks it is after every read (a real seek for FLAC, MP3
        and Vorbis: it made 4096-frame FLAC reads ~1.7x slower); this decoder tracks its position itself.
        """
        sf = self._sf
        file = self._file if file is None else file
        native = _NATIVE.get(dtype)
        if native is None:
            native = _native_reader(sf, dtype)
            if native is None:  # another soundfile: its public read
                data = file.read(n, dtype=dtype, always_2d=True)
                return from_vorbis(data) if self._vorbis_order else data
        file._check_if_closed()
        out = np.empty((n, self.num_channels), dtype)
        if n == 0:
            return out
        readf, cast, pointer, error = native
        handle = file._file
        got = readf(handle, cast(pointer, out.ctypes.data), n)
        code = error(handle)
        if code and self.format_name == "MP3" and file is self._file and self.position:
            raise _TrailingJunk(code)
        if code:
            raise sf.LibsndfileError(code, "Error reading audio data: ")
        if self._vorbis_order:
            out = from_vorbis(out[:got])
        return out if got == n else out[:got]

    def _damage_in_the_middle(self) -> bool:
        """Whether mpg123 failed on damage with valid MP3 frames after it, rather than on junk after the last
        frame (see :mod:`stompbox.io.codecs.mp3_frames`). Reads the file's bytes on this failure path only, and once:
        the answer is kept (a read that meets junk asks, and so does the short read that follows)."""
        if self._damage is None:
            from .mp3_frames import audio_resumes_after_damage

            source = self._path if self._path is not None else self._trap._file  # type: ignore[union-attr]
            try:
                data = _peek(source, -1)  # -1: to the end (a file-like's audio starts at 0: AudioFile rebases it)
            except (OSError, AttributeError, ValueError):
                data = b""
            self._damage = audio_resumes_after_damage(data)
        return self._damage

    def _damaged(self) -> CorruptAudioError:
        return CorruptAudioError(
            f"Could not decode audio data: the MP3 is damaged after frame {self.position}, and valid audio follows "
            "the damage (stompbox does not skip it without a word)."
        )

    def _read_to_junk(self, n: int, dtype: str) -> np.ndarray:
        """Up to ``n`` frames from ``position`` up to where mpg123 gave up on junk after an MP3's last frame (a
        Lyrics3 tag, appended bytes): the audio ends there, as in pedalboard. libsndfile drops what a failing
        read had decoded, so the frames before the junk are decoded again from a seek, 16 at a time, and the
        last few one at a time (a read that starts at the junk fails and loses nothing)."""
        start = self.position

        def restart(at: int) -> None:
            self.position = -SEEK_PREROLL - 1  # not "close ahead": a real seek, from a pre-roll
            self.seek(at)

        data = self._read_in_shrinking_steps(n, dtype, (16, 1), restart, _TrailingJunk)
        self.position = start
        return data

    def _read_in_shrinking_steps(
        self, n: int, dtype: str, steps: tuple[int, ...], restart: Any, failure: type[Exception]
    ) -> np.ndarray:
        """Up to ``n`` frames from ``position``, read in blocks of ``steps[0]`` frames until a read raises
        ``failure``; then from where the good frames end (``restart(frame)`` positions the handle there), in the
        next smaller step, and so on. libsndfile drops what a failing read had decoded, so this finds the last
        frame before the failure to within the smallest step. Leaves the handle wherever the last read left it."""
        start = self.position
        blocks = []
        done = 0
        for step in steps:
            restart(start + done)
            failed = False
            while done < n:
                try:
                    block = self._read_frames(min(step, n - done), dtype)
                except failure:
                    failed = True
                    break
                if block.shape[0] == 0:
                    break
                blocks.append(block)
                done += block.shape[0]
            if not failed:
                break
        return np.concatenate(blocks) if blocks else np.empty((0, self.num_channels), dtype)

    def _read(self, n: int, dtype: str) -> np.ndarray:
        if self.format_name != "MP3":
            return self._read_loud(n, dtype)
        with quiet_stderr():  # libmpg123 prints warnings about damaged frames on stderr
            return self._read_loud(n, dtype)

    def _read_loud(self, n: int, dtype: str) -> np.ndarray:
        try:
            try:
                data = self._read_frames(n, dtype)
            except _TrailingJunk:
                if self._damage_in_the_middle():
                    raise self._damaged() from None
                data = self._read_to_junk(n, dtype)
        except (self._sf.LibsndfileError, RuntimeError) as exc:
            self._check_source()
            if self.format_name != "FLAC":
                raise CorruptAudioError(f"Could not decode audio data: {exc}") from exc
            # libFLAC lost sync: a cut file's last frame, or damage in the middle (frames follow it)
            data = self._read_to_cut(n, dtype)
            if self._flac_frames_after(self.position + data.shape[0]):
                raise CorruptAudioError(f"Could not decode audio data: {exc}") from exc
            warn_truncated(self, self.position + data.shape[0])
        self._check_source()
        got = data.shape[0]
        self.position += got
        if got < n and self.format_name == "MP3" and not self.exact and self.position < 0.99 * self._estimate:
            # a tagless MP3 ending well before its estimated length: junk after its last frame, or damage that
            # mpg123 gave up on with audio after it (which must not end the file without a word)
            if self._damage_in_the_middle():
                raise self._damaged()
        if got < n and self.position < self.frames - self._length_slack():
            # The header states the exact length: data that ends before it is a truncated file, unless the
            # audio resumes after where the decoder stopped (damage in the middle), or nothing decodes at all.
            if self.format_name == "MP3" and self._damage_in_the_middle():
                raise self._damaged()
            if self.position == 0 or (self.format_name == "FLAC" and self._flac_frames_after(self.position)):
                raise CorruptAudioError(
                    f"Could not decode audio data: the audio data ends after frame {self.position}, before the "
                    f"{self.frames} frames the file declares, and the file is damaged there."
                )
            warn_truncated(self, self.position)
        if got < n:  # the real end (of a stream whose length was an estimate, or a header that overstated it)
            self.frames = self.position
            self.exact = True
        elif self.position > self.frames:
            self.frames = self.position
        return data

    def _read_to_cut(self, n: int, dtype: str) -> np.ndarray:
        """Up to ``n`` frames from ``position`` up to where libFLAC fails. libsndfile drops what a failing read
        had decoded, and its handle cannot seek after the failure: fresh handles decode up to the failure again,
        in smaller and smaller steps."""
        start = self.position
        data = self._read_in_shrinking_steps(n, dtype, (4096, 16, 1), self._reopen, self._sf.LibsndfileError)
        self._reopen(start + data.shape[0])
        return data

    def _reopen(self, frame: int) -> None:
        """A fresh libsndfile handle, at ``frame``."""
        self._file.close()
        source: str | _WriteErrorTrap | None = self._path
        if source is None:
            self._trap._file.seek(0)  # type: ignore[union-attr]
            source = self._trap
        with quiet_stderr():
            self._file = self._sf.SoundFile(source, "r")
        self._unnormalised(self._file)
        self._cache = None
        if frame:
            try:
                self._file.seek(frame)
            except (self._sf.LibsndfileError, RuntimeError):
                pass  # at the cut: the next read fails, and reads nothing more

    def _flac_frames_after(self, position: int) -> bool:
        """Whether the FLAC file holds frames that start more than two blocks after frame ``position`` (found
        in its last 256 kB by their headers' CRC): damage in the middle, where a cut file ends at ``position``."""
        from .flac_seektable import frame_numbers

        source = self._path if self._path is not None else self._trap._file  # type: ignore[union-attr]
        try:
            head = _peek(source, 64)
            tail = _peek(source, 1 << 18, from_end=True)
        except (OSError, AttributeError, ValueError):
            return False
        block = int.from_bytes(head[10:12], "big") if head[:4] == b"fLaC" else 0
        numbers = frame_numbers(tail)
        return bool(block and numbers) and max(numbers) * block > position + 2 * block

    def _length_slack(self) -> float:
        """How many frames short of the declared length the data may end before the file counts as truncated:
        none for FLAC (its STREAMINFO counts samples), one MP3 frame for an MP3 with a Xing/LAME tag (the tag
        counts frames; a damaged last frame is dropped, and the length corrected), any for the rest (their
        length is an estimate or a header that may overstate it)."""
        if not self.exact:
            return float("inf")
        if self.format_name == "FLAC":
            return 0
        if self.format_name == "MP3" and self.exact:
            return 1152 if self.samplerate >= 32000 else 576  # MPEG-1 Layer III / MPEG-2 and 2.5
        return float("inf")

    def read(self, n: int) -> np.ndarray:
        sequential = self.position == self._last_end
        out = self._serve(n)
        self._in_sequence = self._in_sequence + out.shape[1] if sequential else out.shape[1]
        self._last_end = self.position
        return out

    def _serve(self, n: int) -> np.ndarray:
        cache = self._cache
        if cache is not None:
            offset = self.position - self._cache_start
            if 0 <= offset <= cache.shape[1]:
                take = min(n, cache.shape[1] - offset)
                out = cache[:, offset : offset + take].copy()
                self.position += take
                if take == n or self._cache_eof:
                    return out
                self._cache = None  # consumed: the handle is where the cache ends, which is here
                return np.concatenate([out, self._serve(n - take)], axis=1)
            self._sync()
        sequential = self.position == self._last_end
        streaming = self._streams and sequential and self._in_sequence >= STREAMING_FRAMES
        limit = PARALLEL_FRAMES if streaming else CACHE_FRAMES
        if (n < AHEAD_BELOW and self._cacheable or streaming and n < limit // 4) and sequential:
            start = self.position  # small sequential reads: decode ahead, serve slices
            ahead = self._ahead = PARALLEL_FRAMES if streaming else read_ahead(self._ahead, n, CACHE_FRAMES)
            block = self._decode(ahead)
            self._cache, self._cache_start, self._cache_eof = block, start, block.shape[1] < ahead
            self.position = start
            return self._serve(n)
        return self._decode(n)

    def _drop_cache(self) -> None:
        """Forget the read-ahead block: ``position`` becomes where the libsndfile handle is (the block's end)."""
        if self._cache is not None:
            self.position = self._cache_start + self._cache.shape[1]
            self._cache = None

    def _sync(self) -> None:
        """Drop the read-ahead block and put the libsndfile handle back at ``position``."""
        if self._cache is not None:
            target = self.position
            self._drop_cache()
            self.seek(target)

    def _decode(self, n: int) -> np.ndarray:
        # Integer PCM as pedalboard scales it: float32(k) * float32(1 / (2**(bits-1) - 1)). libsndfile gives
        # 8- and 24-bit samples in the top bits of int16/int32, so the scale is divided by that shift (a power
        # of two: the product rounds exactly as float32(k) * scale would). Large reads go through a small
        # scratch block (stays in the CPU cache), converted and de-interleaved into the result.
        scale: np.float32 | None
        if self._float_ints:  # the integers as floats (see __init__)
            container, scale = "float32", PCM_READ_SCALE[self.file_dtype]
        else:
            container, scale = INT_READ_DTYPE.get(self.file_dtype, "float32"), READ_SCALE.get(self.file_dtype)
        remaining = self.frames - self.position
        if self._path is not None and self._parallel and self.exact and min(n, remaining) >= PARALLEL_FRAMES:
            # a long read: in two threads where that has paid lately (TWO_THREADS measures both ways)
            kind = (self.subtype, self.num_channels, self.samplerate)
            two = TWO_THREADS.choose(kind)
            began = time.perf_counter()
            out = self._read_in_two_threads(n, container, scale) if two else self._decode_serial(n, container, scale)
            TWO_THREADS.record(kind, two, time.perf_counter() - began, out.shape[1])
            return out
        return self._decode_serial(n, container, scale)

    def _decode_serial(self, n: int, container: str, scale: Any) -> np.ndarray:
        # read(len + 1000) must not allocate for the frames that are not there: size the result by the length
        # (plus a step, should the header understate it), and grow it in the rare case that more comes.
        size = min(n, max(0, self.frames - self.position) + READ_STEP) if self.exact else n
        out = np.empty((self.num_channels, size), np.float32)
        done = 0
        while done < n:
            if done == out.shape[1]:
                out = np.concatenate([out, np.empty((self.num_channels, min(n, 2 * done) - done), np.float32)], 1)
            want = min(READ_STEP, out.shape[1] - done)
            raw = self._read(want, container)
            got = raw.shape[0]
            if scale is None:
                out[:, done : done + got] = raw.T
            else:
                np.multiply(raw.T, scale, out=out[:, done : done + got], casting="unsafe")
            done += got
            if got < want:
                break
        return out if done == out.shape[1] else out[:, :done].copy()

    def _read_in_two_threads(self, n: int, container: str, scale: Any) -> np.ndarray:
        """A long read split in two: a second handle decodes the first half while this one decodes the second
        (libsndfile releases the GIL). Both halves start as :meth:`seek` does (Vorbis/Opus from a pre-roll), so
        the samples are a linear decode's."""
        start = self.position
        total = min(n, self.frames - start)
        middle = start + total // 2
        out = np.empty((self.num_channels, total), np.float32)
        failure: list[BaseException] = []

        def convert(raw: np.ndarray, column: int) -> None:
            if scale is None:
                out[:, column : column + raw.shape[0]] = raw.T
            else:
                np.multiply(raw.T, scale, out=out[:, column : column + raw.shape[0]], casting="unsafe")

        def first_half() -> None:
            try:
                with self._sf.SoundFile(self._path, "r") as other:
                    self._unnormalised(other)
                    at = start if not self._compressed else self._preroll_start(start)
                    other.seek(at)
                    while at < start:  # the same pre-roll as seek(): exactly a linear decode's samples
                        skipped = self._read_frames(min(READ_STEP, start - at), container, other).shape[0]
                        if skipped == 0:
                            raise CorruptAudioError("Could not decode audio data: the file changed while reading.")
                        at += skipped
                    done = 0
                    while done < middle - start:
                        raw = self._read_frames(min(READ_STEP, middle - start - done), container, other)
                        if raw.shape[0] == 0:
                            raise CorruptAudioError("Could not decode audio data: the file changed while reading.")
                        convert(raw, done)
                        done += raw.shape[0]
            except BaseException as exc:  # noqa: BLE001 - re-raised by the reading thread
                failure.append(exc)

        helper = threading.Thread(target=first_half, name="stompbox-flac-decode", daemon=True)
        helper.start()
        try:
            self.seek(middle)
            done = middle - start
            while done < total:
                want = min(READ_STEP, total - done)
                raw = self._read(want, container)
                convert(raw, done)
                done += raw.shape[0]
                if raw.shape[0] < want:
                    break
        finally:
            helper.join()
        if failure:
            error = failure[0]
            if isinstance(error, self._sf.LibsndfileError | RuntimeError) and not isinstance(error, AudioFileError):
                raise CorruptAudioError(f"Could not decode audio data: {error}") from error
            raise error
        if done < total:
            return out[:, :done].copy()
        if n > total:  # the caller asked past the declared end: anything more (or the end)
            more = self._decode(min(n - total, READ_STEP))
            if more.shape[1]:
                return np.concatenate([out, more], axis=1)
        return out

    def read_raw(self, n: int) -> np.ndarray:
        self._sync()
        dtype = self.file_dtype
        if dtype == "int8":
            return np.ascontiguousarray((self._read(n, "int16").T >> 8).astype(np.int8))
        if dtype == "int24":  # 24-bit samples in int32 containers, not shifted: values in [-2**23, 2**23)
            return np.ascontiguousarray(self._read(n, "int32").T >> 8)
        if dtype in ("int16", "int32", "float32", "float64"):
            return np.ascontiguousarray(self._read(n, dtype).T)
        return np.ascontiguousarray(self._read(n, "float32").T)

    def seek(self, frame: int) -> None:
        if self.format_name != "MP3":
            self._seek(frame)
            return
        with quiet_stderr():
            self._seek(frame)

    def _seek(self, frame: int) -> None:
        self._drop_cache()
        self._in_sequence = self._ahead = 0
        try:
            if self._unsized:  # decoded forward to the target (from the start when it is behind)
                if frame < self.position:
                    self._file.seek(0)
                    self.position = 0
                while self.position < frame:
                    if self._read(min(frame - self.position, 65536), "float32").shape[0] == 0:
                        break
                return
            if not self._compressed:
                self._file.seek(frame)
                self.position = frame
                return
            # Compressed formats seek to where _preroll_start() says, before the target, and decode up to it.
            start = self._preroll_start(frame)
            if self.position <= frame <= self.position + SEEK_PREROLL:
                pass  # close ahead: decode on
            elif self.subtype == "VORBIS":
                # libsndfile's Vorbis seek depends on what the handle decoded before (after a short read near the
                # start, a later seek landed 448 frames early, pre-roll or not). A seek to 0 resets its decoder, as
                # a fresh handle would be (and 6x cheaper than opening one).
                self._file.seek(0)
                if start:
                    self._file.seek(start)
                self.position = start
            else:
                self._file.seek(start)
                self.position = start
            while self.position < frame:
                chunk = self._read(min(frame - self.position, 65536), "float32")
                if chunk.shape[0] == 0:
                    break
        except (self._sf.LibsndfileError, RuntimeError) as exc:
            self._check_source()
            raise CorruptAudioError(f"Could not seek in the audio data: {exc}") from exc
        self._check_source()

    def _preroll_start(self, frame: int) -> int:
        """Where a compressed decode towards ``frame`` starts: :data:`SEEK_PREROLL` frames before it (MP3, Opus),
        or the frame itself for Vorbis, but never inside a Vorbis file's last page.

        libsndfile's Vorbis seek decodes from the start of a page up to the exact frame itself, once its decoder
        has been reset (see :meth:`seek`), except in the last page, whose end is trimmed: a seek that lands there
        comes out shifted (48 frames late in a measured file; 6% of 10,000 random seeks, half of them near the
        end, over 40 varied files). A seek just before the last page is exact, and so were all of those 10,000
        without a pre-roll."""
        if self.subtype != "VORBIS":
            return max(0, frame - SEEK_PREROLL)
        last = self._vorbis_last_page_start()
        return max(0, last - 1) if last is not None and frame >= last else frame

    def _vorbis_last_page_start(self) -> int | None:
        """The frame at which the last Ogg page's samples start (read from the file's tail once), or None."""
        if self._last_page_start is None:
            span = None
            try:
                source = self._path if self._path is not None else self._trap._file  # type: ignore[union-attr]
                span = last_page_span(_peek(source, 2 * MAX_PAGE, from_end=True))
            except (OSError, ValueError, AttributeError, TypeError, IndexError):
                span = None
            self._last_page_start = -1 if span is None else max(0, self.frames - span)
        return None if self._last_page_start < 0 else self._last_page_start

    def close(self) -> None:
        self._file.close()
        owned = getattr(self, "_owned_source", None)  # a view of a path opened for this decoder
        if owned is not None:
            owned.close()


def _decoded_frames(container: Any, stream: Any, skipped: tuple[type[Exception], ...]) -> Any:
    """The decoded frames of ``stream``, packet by packet. In a raw stream (MP3, ADTS, AC3...), a packet the
    decoder rejects (``skipped``) is skipped, as FFmpeg's own tools do: junk after the last frame (a Lyrics3 tag,
    a file cut or padded by a copy) then ends the audio instead of failing the read (pedalboard reads such
    files). A function, not a method: a generator holding its decoder would make a reference cycle, and each
    closed reader's codec buffers would wait for the garbage collector."""
    for packet in container.demux(stream):
        try:
            frames = packet.decode()
        except skipped:  # () for the other formats: nothing is skipped
            continue
        yield from frames


class AvDecoder(Decoder):
    """FFmpeg through PyAV: M4A/AAC and everything libsndfile does not read; also non-seekable streams."""

    def __init__(self, source: Any, name: str, seekable: bool = True) -> None:
        import av

        self._av = av
        head = _HeadRecorder(source) if not seekable else None
        try:
            self._container = av.open(head if head is not None else source, "r")
            self._stream = self._container.streams.audio[0]
        except (av.error.FFmpegError, IndexError, ValueError, OSError) as exc:
            raise UnsupportedFormatError(str(exc)) from exc
        stream = self._stream
        self._source = source
        self._seekable = seekable
        if stream.codec_context is None:  # a stream FFmpeg has no decoder for (its attributes raise)
            self._container.close()
            raise UnsupportedFormatError(f"{name}: no decoder for its audio codec.")
        self.samplerate = float(stream.rate or stream.codec_context.sample_rate)
        self.num_channels = int(stream.channels or stream.codec_context.channels)
        if self.num_channels < 1 or self.samplerate <= 0:
            self._container.close()
            raise CorruptAudioError(f"{name} declares {self.num_channels} channels: not usable audio.")
        self.format_name = str(self._container.format.name).split(",")[0].upper()
        self.subtype = str(stream.codec_context.name).upper()
        self.channel_layout = str(stream.layout.name) if stream.layout is not None else None
        if not seekable and self.format_name == "MOV":
            self._container.close()
            raise _FinalError(
                f"{name}: an M4A/MP4 file cannot be read from a non-seekable stream (its index may come after the "
                "audio): read it from a file or an io.BytesIO."
            )
        # Integer PCM and lossless codecs decode to integers: scale them as libsndfile-read files are scaled.
        self.file_dtype, self._sample_format = self._integer_format(stream.codec_context)
        self._scale = READ_SCALE.get(self.file_dtype)
        time_base = stream.time_base
        assert time_base is not None  # (an audio stream's is set)
        self._start_seconds = float(stream.start_time * time_base) if stream.start_time else 0.0
        self._declared: int | None = None  # a length the container's header states, in milliseconds
        self._last_stamp: int | None = None  # where the last decoded frame ends by its timestamp
        self.frames, self.exact = self._length()
        if head is not None and self.format_name == "MP3":
            total = _lame_length(head.head)  # FFmpeg does not trim the encoder padding of a pipe
            if total is not None:
                self.frames, self.exact = total, True
            head.head = b""
        self._name = name
        self._warned = False
        self._resampler = self._new_resampler()
        self._reset_queue(0)
        self._decoder = self._decode(stream)
        self._eof = False
        self.position = 0

    def _reset_queue(self, start: int) -> None:
        """Forget decoded audio; what is decoded next starts at frame ``start`` (-1: placed by its timestamp,
        after a timestamp seek)."""
        self._queue: list[np.ndarray] = []
        self._queued = 0  # frames in the queue
        self._queue_start = start

    def _timed(self) -> bool:
        """Whether this stream's timestamps place a decoded frame on its exact sample (a time base at least as
        fine as the sample rate): M4A/MP4, Ogg... not Matroska/WebM (milliseconds) nor raw streams (estimates),
        whose seeks decode linearly instead."""
        base = self._stream.time_base
        if self.format_name in UNTIMED_FORMATS or base is None:
            return False
        return float(base) * self.samplerate <= 1.0 + 1e-9

    def _decode(self, stream: Any) -> Any:
        """The decoded frames of ``stream`` (see :func:`_decoded_frames`)."""
        skip = self.format_name in UNTIMED_FORMATS
        return _decoded_frames(self._container, stream, (self._av.error.InvalidDataError,) if skip else ())

    @staticmethod
    def _integer_format(context: Any) -> tuple[str, str]:
        """(file_dtype, the sample format to convert to) for a decoder's output."""
        fmt = context.format.name if context.format is not None else ""
        codec = str(context.name)
        if fmt in ("s16", "s16p"):
            return "int16", "s16p"
        if fmt in ("s32", "s32p"):  # FFmpeg puts 24-bit samples in the top bits of 32
            return ("int24" if "24" in codec or codec in ("flac", "alac", "wavpack", "tta") else "int32"), "s32p"
        if fmt in ("u8", "u8p"):
            return "int8", "s16p"
        return "float32", "fltp"

    def _new_resampler(self) -> Any:
        layout = self._stream.layout.name
        return self._av.AudioResampler(format=self._output_format(), layout=layout, rate=int(self.samplerate))

    def _output_format(self) -> str:
        """The resampler's output: planar (one plane per channel, no transposition) below 8 channels, packed
        from 8 on: PyAV's planar frames of 8 or more channels list a plane too many, and converting one to an
        array read past its buffers (a segmentation fault)."""
        return self._sample_format if self.num_channels < 8 else self._sample_format.rstrip("p")

    def _length(self) -> tuple[int, bool]:
        """(frames, exact): the stream's duration where its container states one in samples; else FFmpeg's
        estimate (from the bitrate, or the container's millisecond duration), not exact. A stated duration that
        cannot be true (none, or more than the file's bytes could hold at 1 bit per sample) is an estimate too."""
        stream = self._stream
        if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
            frames = int(round(float(stream.duration * stream.time_base) * self.samplerate))
            # a raw stream's duration is an estimate; a CAF's counts whole packets (its last may hold fewer)
            exact = self._timed() and (self.format_name != "CAF" or self.subtype.startswith("PCM"))
            if frames > self._frames_possible():  # a header that lies: an estimate from the size (4 bits a sample)
                return int(2 * self._container.size / self.num_channels), False
            return frames, exact
        if self._container.duration is not None and self._container.duration > 0:  # microseconds, an estimate
            frames = int(min(self._container.duration * self.samplerate / 1_000_000, self._frames_possible()))
            if self.format_name not in UNTIMED_FORMATS:  # a container's header (Matroska's Duration), not a guess
                self._declared = frames
            return frames, False
        return 0, False

    def _frames_possible(self) -> float:
        """The most frames the file's bytes could hold at 0.05 bits per sample of each channel (HE-AAC v2 and
        Opus at their lowest bitrates use more than 0.1), or infinity when the size is unknown."""
        size = getattr(self._container, "size", None)
        if not isinstance(size, int) or size <= 0:
            return float("inf")
        return 160.0 * size / self.num_channels

    def _frame_start(self, frame: Any) -> int | None:
        if frame.pts is None or frame.time_base is None:
            return None
        return int(round((float(frame.pts * frame.time_base) - self._start_seconds) * self.samplerate))

    def _next_block(self) -> bool:
        """Decode one more packet's worth into the queue; False at the end."""
        if self._eof:
            return False
        try:
            try:
                frame = next(self._decoder)
            except StopIteration:
                frames = self._resampler.resample(None)
                self._eof = True
                if frames:
                    self._append(frames, None)
                self._check_complete()
                return bool(frames)
            stamp = self._frame_start(frame)
            if stamp is not None:
                self._last_stamp = stamp + frame.samples
            self._append(self._resampler.resample(frame), stamp if self._queue_start < 0 else None)
        except CorruptAudioError:
            raise
        except (self._av.error.FFmpegError, ValueError) as exc:  # damaged packets; a frame that changed format
            raise CorruptAudioError(f"Could not decode audio data: {exc}") from exc
        return True

    def _check_complete(self) -> None:
        """At the end of the data: if it ended well before the length the container declares, the file is
        truncated: what is present is the audio, and one warning names the file. The margin allows for codecs
        whose declared length is a packet or two off (a CAF counts whole packets of up to 4096 frames)."""
        declared = self.frames if self.exact else self._declared
        if declared is None:
            return
        end = self._queue_start + self._queued
        # a stated duration (Matroska's) is the last timestamp: a file whose timestamps jump ahead (a gap) reached
        # it, a cut file did not
        reached = end if self.exact or self._last_stamp is None else max(end, self._last_stamp)
        frame_size = getattr(self._stream.codec_context, "frame_size", 0) or 0
        if reached < declared - max(2048, declared // 100, 2 * frame_size):
            if end == 0:  # nothing decodes: damage, not a cut
                raise CorruptAudioError(
                    f"Could not decode audio data: the audio data ends at frame 0, before the {declared} frames "
                    "the file declares: nothing decodes (the file is damaged)."
                )
            warn_truncated(self, end, f"before the {declared} frames its header declares")

    def _append(self, frames: list[Any], start: int | None) -> None:
        """Queue decoded frames. Frames follow each other: timestamps only place the first block after a
        timestamp seek (``start``), never the blocks of a linear decode, whose timestamps may be rounded
        (Matroska's milliseconds) or lie (a gap of an hour)."""
        packed = self.num_channels >= 8  # see _output_format
        for out in frames:
            data = out.to_ndarray()
            data = data.reshape(-1, self.num_channels).T if packed else data.reshape(self.num_channels, -1)
            if self._scale is not None:  # integers, placed in the top bits as libsndfile gives them
                data = np.multiply(data, self._scale, dtype=np.float32)
            else:
                data = data.astype(np.float32, copy=False)
            if self._queue_start < 0:
                self._queue_start = start if start is not None and start >= 0 else 0
            start = None
            if data.shape[1]:
                self._queue.append(data)
                self._queued += data.shape[1]

    def read(self, n: int) -> np.ndarray:
        limit = self.frames if self.exact else None
        while self._queue_start + self._queued < self.position + n and self._next_block():
            pass
        offset = self.position - self._queue_start  # >= 0: seek() places the queue at or before its target
        queued = (
            self._queue[0] if len(self._queue) == 1 else np.concatenate(self._queue, axis=1) if self._queue else None
        )
        take = max(0, min(n, self._queued - offset))
        if limit is not None:
            take = max(0, min(take, limit - self.position))
        if queued is None:
            out = np.zeros((self.num_channels, 0), np.float32)
        else:
            out = np.ascontiguousarray(queued[:, offset : offset + take])
        self.position += take
        rest = queued[:, offset + take :] if queued is not None else None
        self._reset_queue(self.position)
        if rest is not None and rest.shape[1]:
            self._queue.append(rest)
            self._queued = rest.shape[1]
        if take < n:  # the end: the length is known exactly now
            self.frames = self.position
            self.exact = True
        return out

    def read_raw(self, n: int) -> np.ndarray:
        data = self.read(n)
        if self._scale is None:
            return data
        ints = quantize(np.ascontiguousarray(data.T), self.file_dtype).T  # exactly the decoded integers
        if self.file_dtype == "int8":
            return np.ascontiguousarray(ints >> 8).astype(np.int8)
        if self.file_dtype == "int24":
            return np.ascontiguousarray(ints >> 8)
        return np.ascontiguousarray(ints)

    def _skip_to(self, frame: int) -> None:
        while self.position < frame and self.read(min(65536, frame - self.position)).shape[1]:
            pass

    def seek(self, frame: int) -> None:
        if not self._seekable:
            if frame < self.position:
                raise ValueError("This stream is not seekable: it can only be read front to back.")
            self._skip_to(frame)
            return
        # Streams whose timestamps do not place a frame on its sample (raw ADTS/AC3/MP3 streams: estimates;
        # Matroska/WebM: milliseconds) decode from the start (backwards) or on from here (forwards): exact, as a
        # linear decode is. AAC's decoder fills noise-substituted bands from a generator that runs from the start
        # of the stream, so a decode that starts elsewhere differs in those bands: within LINEAR_SEEK_SECONDS it
        # decodes on / from the start too (bit-identical to a linear decode); beyond, a timestamp seek lands on
        # the exact frame, with the same samples except in noise-substituted bands.
        if not self._timed():
            window = float("inf")
        else:
            window = LINEAR_SEEK_SECONDS.get(self.subtype, 0.0) * self.samplerate
        if self.position <= frame <= self.position + window:
            self._skip_to(frame)
            return
        preroll = 1.0 if self.subtype == "OPUS" else 0.5
        target_seconds = 0.0 if frame <= window else max(0.0, frame / self.samplerate - preroll)
        self._reopen(target_seconds)
        if self._queue_start < 0:  # find where decoding resumed
            while self._queue_start < 0 and self._next_block():
                pass
            if self._queue_start < 0 or self._queue_start > frame:  # nothing, or landed late: from the start
                self._reopen(0.0)
        self.position = self._queue_start
        self._skip_to(frame)

    def _reopen(self, target_seconds: float) -> None:
        """A fresh demuxer and decoder, at the start or after a timestamp seek to ``target_seconds``.

        Fresh for every seek: a decoder that has been drained at the end of the stream (or that carries overlap
        state from elsewhere) does not decode the first frames after a seek the way a linear decode does."""
        self._container.close()
        if hasattr(self._source, "seek"):
            self._source.seek(0)
        try:
            self._container = self._av.open(self._source, "r")
            self._stream = stream = self._container.streams.audio[0]
            if target_seconds > 0:
                time_base = stream.time_base
                assert time_base is not None  # (an audio stream's is set)
                timestamp = int((target_seconds + self._start_seconds) / float(time_base))
                self._container.seek(timestamp, backward=True, any_frame=False, stream=stream)
        except self._av.error.FFmpegError as exc:
            raise CorruptAudioError(f"Could not seek in the audio data: {exc}") from exc
        self._decoder = self._decode(stream)
        self._resampler = self._new_resampler()
        self._eof = False
        self._reset_queue(-1 if target_seconds > 0 else 0)
        self.position = 0

    def close(self) -> None:
        self._container.close()


def warn_truncated(decoder: Any, end: int, detail: str = "") -> None:
    """Warn, once per decoder, that the file's audio ends at frame ``end``, before the length its header
    declares (``decoder.frames``)."""
    if getattr(decoder, "_warned", False):
        return
    decoder._warned = True
    import warnings

    declared = detail or (
        f"before the {decoder.frames} frames its header declares" if decoder.exact else "in a cut frame"
    )
    warnings.warn(
        f"{decoder._name}: the audio data ends at frame {end}, {declared}: the file is truncated. Reading the "
        "audio that is present.",
        TruncatedAudioWarning,
        stacklevel=_caller_level(),
    )


def _caller_level() -> int:
    """The ``stacklevel`` of the first caller outside stompbox (the user's line that opened or read the file)."""
    import sys

    frame: FrameType | None = sys._getframe(2)  # warn_truncated's caller
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("stompbox"):
        frame = frame.f_back
        level += 1
    return level


class _FinalError(UnsupportedFormatError):
    """An error that says why this source cannot be read (no need to try another backend)."""


class _HeadRecorder:
    """A non-seekable source that keeps a copy of its first bytes (to read an MP3's LAME tag afterwards)."""

    LIMIT = 1 << 16

    def __init__(self, file: Any) -> None:
        self._file = file
        self.head = b""

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._file.read(size)
        if len(self.head) < self.LIMIT and data:
            self.head += bytes(data[: self.LIMIT - len(self.head)])
        return data

    def seekable(self) -> bool:
        return False


def _lame_length(head: bytes) -> int | None:
    """The exact number of samples of an MP3 from its Xing/Info + LAME tag (frames x samples per frame, minus
    the encoder delay and padding), or None."""
    start = 0
    if head[:3] == b"ID3" and len(head) >= 10:
        start = 10 + ((head[6] & 0x7F) << 21 | (head[7] & 0x7F) << 14 | (head[8] & 0x7F) << 7 | (head[9] & 0x7F))
    if start + 4 > len(head) or head[start] != 0xFF or head[start + 1] & 0xE0 != 0xE0:
        return None
    version = (head[start + 1] >> 3) & 3  # 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    samples_per_frame = 1152 if version == 3 else 576
    frame = head[start : start + 200]
    at = max(frame.find(b"Xing"), frame.find(b"Info"))
    if at < 0:
        return None
    pos = start + at + 4
    flags = int.from_bytes(head[pos : pos + 4], "big")
    pos += 4
    if not flags & 1:
        return None
    frames = int.from_bytes(head[pos : pos + 4], "big")
    pos += 4 + (4 if flags & 2 else 0) + (100 if flags & 4 else 0) + (4 if flags & 8 else 0)
    if head[pos : pos + 4] != b"LAME" or pos + 24 > len(head):
        return None
    delay = (head[pos + 21] << 4) | (head[pos + 22] >> 4)
    padding = ((head[pos + 22] & 0x0F) << 8) | head[pos + 23]
    total = frames * samples_per_frame - delay - padding
    return total if total > 0 else None


def _pcm_cut(log: str) -> tuple[int, int] | None:
    """(bytes declared, bytes present) when libsndfile's log of an uncompressed file's header says its audio
    chunk (or, failing that, the whole file) is longer than the file holds: a truncated file, which libsndfile
    reads to its end without a word."""
    if "should be" not in log:  # libsndfile notes every size it finds wrong so
        return None
    import re

    found = {name: (int(a), int(b)) for name, a, b in re.findall(r"(\w[\w ]*?) *: *(\d+) \(should be (\d+)\)", log)}
    for name in ("data", "SSND", "RIFF", "riff", "FORM", "Riff size"):
        if name in found:
            declared, present = found[name]
            unknown = declared in (0, 0xFFFFFFFF)  # a header written to a pipe: the audio runs to the end
            return (declared, present) if declared > present and not unknown else None
    return None


# ----------------------------------------------------------------------------------------------- encoders
# file dtype -> (largest value M, libsndfile container dtype, left shift into it). Floats are written as
# round(x * M), the exact inverse of how they are read (``k * float32(1 / M)``, pedalboard's scaling).
QUANTIZE = {
    "int8": (127, np.int16, 8),
    "int16": (32767, np.int16, 0),
    "int24": (8388607, np.int32, 8),
    "int32": (2147483648, np.int32, 0),  # read back as k / 2**31
}


def quantize(data: np.ndarray, file_dtype: str) -> np.ndarray:
    """float32 samples -> the integers to store: ``round(x * M)`` clipped to ``[-M-1, M]``, NaN as 0.

    Exactly inverts reading (:data:`~stompbox.io.codecs.backends.PCM_READ_SCALE`): any integer file read by
    ``ReadableAudioFile`` and written again at the same bit depth is bit-identical (for 24-bit, where
    float32 cannot hold ``k / M`` exactly, the neighbour whose float32 value matches is chosen).
    """
    full, container, shift = QUANTIZE[file_dtype]
    scaled = np.multiply(data, float(full), dtype=np.float64)  # as the kernel in _pcm_kernels does
    np.rint(scaled, out=scaled)
    low, high = (-full, full - 1) if file_dtype == "int32" else (-full - 1, full)
    np.clip(scaled, low, high, out=scaled)
    if scaled.size and np.isnan(scaled.min()):
        np.nan_to_num(scaled, copy=False, nan=0.0)
    ints = scaled.astype(container)
    if file_dtype == "int24":
        # where float32(k) * scale misses the sample, the neighbour of k that hits it exactly (whole-array
        # operations: for arbitrary audio nearly every sample misses, and gathers would be slower)
        scale = np.float32(1.0 / full)
        back = ints.astype(np.float32)
        back *= scale
        miss = back != data
        if miss.any():
            below = back < data
            other = ints - 1  # k + 1 where the sample is above float32(k) * scale, else k - 1 (as bool adds)
            other += below
            other += below
            np.clip(other, -full - 1, full, out=other)
            back = other.astype(np.float32)
            back *= scale
            np.copyto(ints, other, where=miss & (back == data))
    if shift:
        ints <<= shift
    result: np.ndarray = ints
    return result


class Encoder:
    def write(self, block: np.ndarray) -> None:  # float32 (channels, n) or int (n, channels) for PCM
        raise NotImplementedError

    def flush(self) -> None:
        pass

    def close(self) -> None:
        raise NotImplementedError

    # a file the encoder opened itself on a path (never a caller's file-like): close() and abort() close it
    _owned: Any = None

    def _stop(self) -> None:
        """Stop the codec without finishing the file, for :meth:`abort` (by default :meth:`close`)."""
        self.close()

    def abort(self) -> None:
        """Stop without finishing the file (it is discarded): release what the encoder holds, raise nothing."""
        try:
            self._stop()
        except Exception:  # noqa: BLE001 - the file is being discarded anyway
            pass
        if self._owned is not None:
            try:
                self._owned.close()
            except OSError:
                pass


SF_FORMATS = {"wav": "WAV", "aiff": "AIFF", "flac": "FLAC", "ogg": "OGG", "opus": "OGG"}  # MP3: io/codecs/mp3_writer.py
WRITE_CHUNK = 32768  # frames per libsndfile write: a single large Vorbis write crashes libvorbis
#: bytes buffered by Python before a write system call, for the files libsndfile writes through us (it hands over
#: each Ogg page as two small writes: with the default 8 kB buffer, about one system call per page)
_FILE_BUFFER = 1 << 18
SFC_SET_ADD_PEAK_CHUNK = 0x1050  # sndfile.h
SFC_SET_NORM_FLOAT = 0x1013  # sndfile.h: float reads of integer formats scaled to [-1, 1) (SF_TRUE) or not


def plain_io(file: Any) -> bool:
    """Whether ``file`` is one of Python's own binary files with no ``read``/``readinto`` of the user's: its
    ``readinto`` may then be called instead of ``read`` (pedalboard calls ``read``, which a user may override,
    even on an instance)."""
    own = getattr(file, "__dict__", {})
    return type(file) in (io.BytesIO, io.BufferedReader, io.FileIO, io.BufferedRandom) and not (
        "read" in own or "readinto" in own
    )


_TRAPS = threading.local()  # the traps of the libsndfile calls running on this thread, innermost last
_HOOKED: list[Any] = []  # the unraisable hook found when ours was installed


def _callback_interrupts(hook: Any) -> None:
    """``sys.unraisablehook`` while libsndfile runs: an exception that is not an ``Exception`` (Ctrl-C's
    ``KeyboardInterrupt``, the command line's SIGTERM) raised by a signal handler as a callback of soundfile
    began, outside the trap's own ``try``, is caught by cffi and only printed; the write then carried on. It is
    given to the trap instead, which re-raises it once libsndfile returns."""
    traps = getattr(_TRAPS, "stack", None)
    exc = getattr(hook, "exc_value", None)
    if traps and exc is not None and not isinstance(exc, Exception):
        if traps[-1].error is None:
            traps[-1].error = exc
        return
    _HOOKED[0](hook)


@contextlib.contextmanager
def _trapping(trap: Any) -> Iterator[None]:
    """Route interrupts raised in soundfile's callbacks on this thread to ``trap`` (see above)."""
    if not _HOOKED or sys.unraisablehook is not _callback_interrupts:
        _HOOKED[:] = [sys.unraisablehook]
        sys.unraisablehook = _callback_interrupts
    stack = _TRAPS.__dict__.setdefault("stack", [])
    stack.append(trap)
    try:
        yield
    finally:
        stack.pop()


class _WriteErrorTrap:
    """A file-like for libsndfile that catches the first exception of the user's ``read``/``write``/``seek``.

    libsndfile calls a Python file-like object through C callbacks, where an exception is printed and dropped
    (the encoder then carries on: a failing MP3 target gave no error at all). The trap keeps the exception,
    reports nothing written from then on (no further calls reach the broken file), and the encoder re-raises
    it from the ``write``/``flush``/``close`` that hit it.
    """

    def __init__(self, file: Any) -> None:
        self._file = file
        self._position = 0
        self.error: BaseException | None = None

    def _call(self, name: str, *args: Any) -> Any:
        if self.error is not None:
            return None
        try:
            return getattr(self._file, name)(*args)
        except BaseException as exc:  # re-raised by the encoder, outside libsndfile's callback (which would drop
            self.error = exc  # it: a Ctrl-C or SIGTERM arriving during a write was lost there)
            return None

    def write(self, data: Any) -> int:
        written = self._call("write", data)
        return 0 if written is None else int(written)

    def seek(self, offset: int = 0, whence: int = io.SEEK_SET) -> int:
        if offset < 0 and whence in (io.SEEK_SET, io.SEEK_CUR):
            # A damaged header can make libsndfile ask for a place before the start. A file descriptor
            # answers lseek's -1 (EINVAL) and libsndfile reports a bad file; io.BytesIO and many file-likes
            # raise ValueError instead, which is libsndfile's request, not a fault of the user's file.
            start = 0 if whence == io.SEEK_SET else self.tell()
            if start + offset < 0:
                return -1
        self._call("seek", offset, whence)
        return self.tell()

    def tell(self) -> int:
        position = self._call("tell")
        if position is not None:
            self._position = int(position)
        return self._position

    def read(self, *args: Any) -> bytes:
        data = self._call("read", *args)
        return b"" if data is None else bytes(data)

    def readinto(self, buffer: Any) -> int:
        if plain_io(self._file):
            count = self._call("readinto", buffer)  # no user code to honour: skip a copy
            return 0 if count is None else int(count)
        data = self.read(len(buffer))  # a user's file-like: its read() is the API (it may override only that)
        buffer[: len(data)] = data
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class _WriteWindow(_WriteErrorTrap):
    """A file-like object as libsndfile's writers see it: a new, empty file starting at its position at open.

    pedalboard writes a file at the stream's position and leaves the bytes before it alone (files can follow each
    other in one stream). libsndfile takes the whole stream for the file: its AIFF writer refused a stream with
    bytes before the position, and its FLAC and MP3 writers went back to byte 0 for their headers, over the
    user's bytes. Here offset 0 is the position at open and the file ends where the writer's bytes end (older
    bytes after the position are not the writer's to read). Seeks to where the file already is are not passed
    on. Errors of the user's methods are trapped as :class:`_WriteErrorTrap` does.
    """

    def __init__(self, file: Any) -> None:
        super().__init__(file)
        origin = self._call("tell")
        if self.error is not None:
            raise self.error
        self._origin = int(origin)
        self._end = 0  # the file's length: the end of the bytes written through the window

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int = 0, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._end}[whence]
        target = base + offset
        if target < 0:
            return -1
        if target != self._position:
            self._call("seek", self._origin + target)  # whence left out, as pedalboard calls it
            if self.error is None:
                self._position = target
        return self._position

    def write(self, data: Any) -> int:
        written = self._call("write", data)
        if self.error is not None:
            return 0
        count = len(data) if written is None else int(written)  # None: all of it, as soundfile takes it
        if count <= 0 < len(data):  # libsndfile's MP3 writer carried on without its bytes
            self.error = AudioWriteError(
                f"Unable to write data to audio file: the file-like object's write() took none of {len(data)} bytes."
            )
            return 0
        self._position += count
        self._end = max(self._end, self._position)
        return count

    def read(self, size: int | None = -1) -> bytes:
        left = self._end - self._position
        size = left if size is None or size < 0 else min(size, left)
        if size <= 0:
            return b""
        data = self._call("read", size)
        data = b"" if data is None else bytes(data)
        self._position += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def seekable_target(file: Any) -> bool:
    """Whether a file-like object to write can go back (False for a pipe, a socket, a terminal)."""
    try:
        seekable = getattr(file, "seekable", None)
        if callable(seekable) and not seekable():
            return False
        if not hasattr(file, "seek"):
            return False
        file.tell()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return True


class ForwardOnlyFile:
    """A non-seekable output (a pipe) as a seekable file for libsndfile's writers.

    Bytes once written cannot be changed: the writers' header updates at the end (FLAC's STREAMINFO totals, found
    by seeking back) are dropped, as FFmpeg and ``flac`` leave them in a pipe (a total of 0 is FLAC's "unknown").
    ``tell()`` and ``seek()`` keep a position of their own, so a writer that goes back and forth sees a file;
    only writes at the end reach the pipe.
    """

    forward_only = True

    def __init__(self, file: Any) -> None:
        self._file = file
        self._end = 0  # bytes passed on
        self._position = 0

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        count = len(view)
        skip = self._end - self._position  # a rewrite of bytes already gone: dropped
        if skip < count:
            fresh = bytes(view[max(0, skip) :])
            while fresh:
                written = self._file.write(fresh)
                written = len(fresh) if written is None else int(written)
                if written <= 0:
                    raise AudioWriteError("Unable to write data to audio file: the stream accepted no more bytes.")
                fresh = fresh[written:]
            self._end = self._position + count
        self._position += count
        return count

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int = 0, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._end}[whence]
        self._position = max(0, base + offset)
        return self._position

    def seekable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        return b""  # what was written is gone: a writer reading back finds nothing

    def flush(self) -> None:
        flush = getattr(self._file, "flush", None)
        if callable(flush):
            flush()


class SoundfileEncoder(Encoder):
    def __init__(self, target: Any, settings: Any, samplerate: int, num_channels: int) -> None:
        import soundfile as sf

        self._sf = sf
        self._forward_only = not isinstance(target, str) and not seekable_target(target)
        if self._forward_only:
            target = ForwardOnlyFile(target)
        fmt = SF_FORMATS[settings.format]
        # A path is opened here and given to libsndfile as a file-like object: libsndfile drops the errors of its
        # own writes to a path (a FLAC file closed "cleanly" on a full disk had total_samples = 0), while every
        # write through a file-like is checked (_WriteWindow). Ogg pages also go through a rewriter that fixes
        # their stream serial numbers (libsndfile's are random).
        self._owned: Any = None
        self._pages: OggSerialRewriter | None = None
        if isinstance(target, str):
            target = self._owned = open(target, "w+b", buffering=_FILE_BUFFER)  # noqa: SIM115 - closed by close()
        if fmt == "OGG":
            target = self._pages = OggSerialRewriter(target)
        self._trap = _WriteWindow(target)
        target = self._trap
        kwargs: dict[str, Any] = {}
        if settings.compression_level is not None:
            kwargs["compression_level"] = settings.compression_level
        if settings.bitrate_mode is not None:
            kwargs["bitrate_mode"] = settings.bitrate_mode
        if fmt == "WAV" and num_channels > 2:
            fmt = "WAVEX"
        try:
            with _trapping(self._trap):
                self._file = sf.SoundFile(
                    target,
                    "w",
                    samplerate=samplerate,
                    channels=num_channels,
                    format=fmt,
                    subtype=settings.subtype,
                    **kwargs,
                )
        except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
            if self._owned is not None:
                self._owned.close()
            if self._trap.error is not None and not isinstance(self._trap.error, Exception):
                raise self._trap.error from None  # an interrupt during the header's write
            raise ValueError(f"Unable to create {settings.format.upper()} writer: {exc}") from exc
        if self._trap.error is not None and not isinstance(self._trap.error, Exception):
            self.abort()
            raise self._trap.error
        native = getattr(sf, "_snd", None)
        if native is not None and hasattr(sf, "_ffi"):
            # No PEAK chunk in float WAV/AIFF files: it holds the time of writing, so the same audio written
            # twice gave two different files.
            native.sf_command(self._file._file, SFC_SET_ADD_PEAK_CHUNK, sf._ffi.NULL, 0)
        self._integer = settings.pcm and settings.file_dtype.startswith("int")
        self._channels = num_channels
        self._vorbis_order = is_vorbis_order(settings.subtype or "", num_channels)  # written in Vorbis order
        self._written = 0
        # libsndfile writes nothing at all for a FLAC file without frames, and an unreadable Opus file.
        self._needs_a_frame = fmt == "FLAC" or settings.subtype == "OPUS"
        self._flac = fmt == "FLAC"
        # Vorbis and Opus take float samples: write() is handed the caller's samples (any layout, unclipped) and
        # clips each step into one reused interleaved buffer (a whole-array copy was an extra pass over memory)
        self.takes_raw_floats = fmt == "OGG" and not self._integer
        self._scratch = np.empty((0, num_channels), np.float32)

    def _check_target(self) -> None:
        if self._trap.error is not None:
            raise self._trap.error

    def _sndfile(self, method: Any, *args: Any) -> None:
        """Call a method of the libsndfile file. If it fails, raise the exception the user's file-like raised
        (libsndfile only saw a failed callback), else :class:`AudioWriteError` (never soundfile's own)."""
        try:
            with _trapping(self._trap):
                method(*args)
        except (AssertionError, self._sf.LibsndfileError) as exc:  # AssertionError: a frame went unwritten
            failure: Exception = exc
        else:
            self._check_target()
            return
        self._check_target()
        raise AudioWriteError(f"Unable to write data to audio file: {failure}") from failure

    def write(self, block: np.ndarray) -> None:
        frames = block.shape[0]
        if self.takes_raw_floats:
            for start in range(0, frames, WRITE_CHUNK):
                self._sndfile(self._file.write, self._clipped(block[start : start + WRITE_CHUNK]))
            self._written += frames
            return
        if self._vorbis_order:
            block = to_vorbis(block)
        for start in range(0, frames, WRITE_CHUNK):
            self._sndfile(self._file.write, block[start : start + WRITE_CHUNK])
        self._written += frames

    def _clipped(self, part: np.ndarray) -> np.ndarray:
        """``part`` (``(n, channels)``, any layout and float type) clipped to [-1, 1] as float32, interleaved in
        the scratch buffer (in Vorbis channel order when the file needs it): what lossy encoders are given."""
        n = part.shape[0]
        if self._scratch.shape[0] < n:
            self._scratch = np.empty((max(n, WRITE_CHUNK), part.shape[1]), np.float32)
        out = self._scratch[:n]
        if part.dtype == np.float32 and part.strides[0] == 4 and part.shape[1] > 1:
            for channel in range(part.shape[1]):  # rows of a channels-first array: read along each row
                out[:, channel] = part[:, channel]
            np.clip(out, -1.0, 1.0, out=out)
        else:
            np.clip(part, -1.0, 1.0, out=out)
        return to_vorbis(out) if self._vorbis_order else out

    def flush(self) -> None:
        self._sndfile(self._file.flush)

    def close(self) -> None:
        try:
            if self._written == 0 and self._needs_a_frame and not self._file.closed:
                # An empty file must still be a valid file (as pedalboard's): one frame of silence.
                silence = np.zeros((1, self._channels), np.int16 if self._integer else np.float32)
                self._sndfile(self._file.write, silence)
            self._sndfile(self._file.close)
            if self._pages is not None:
                self._pages.finish()
            if self._flac and not self._forward_only:
                self._add_seektable()
            if self._owned is not None:
                self._owned.flush()  # a full disk may refuse the last buffered bytes: that is an error
        finally:
            if self._owned is not None:
                self._owned.close()

    def _stop(self) -> None:
        with _trapping(self._trap):
            self._file.close()

    def _add_seektable(self) -> None:
        """Give the finished FLAC file a seek table (:mod:`stompbox.io.codecs.flac_seektable`). A file-like that cannot
        be read back keeps the file as libsndfile wrote it; a failure while moving the data is a failed write
        (the file-like's own exception)."""
        from .flac_seektable import add_to_stream

        if self._trap.error is None:
            self._trap._end = add_to_stream(self._trap._file, self._trap._origin, self._trap._end)


class AvEncoder(Encoder):
    """AAC through PyAV, in an M4A container (``container="ipod"``) or as raw ADTS frames (``"adts"``)."""

    def __init__(self, target: Any, settings: Any, samplerate: int, num_channels: int, container: str = "ipod") -> None:
        import av

        self._av = av
        # A path is opened here and written through Python: FFmpeg's own file writes report a full disk late or
        # not at all, and closing its container after a failed write crashed; a Python file's errors are raised
        # by the call that met them.
        self._owned: Any = None
        if isinstance(target, str):
            target = self._owned = open(target, "w+b")  # noqa: SIM115 - closed by close()
        try:
            # the edit list that trims the encoder's priming and padding counts in the movie's time scale, 1/1000 s
            # by default: lengths came back up to 30 frames off; in samples they are exact
            options = {"movie_timescale": str(samplerate)} if container == "ipod" else {}
            self._container = av.open(target, "w", format=container, options=options)
            self._stream = self._container.add_stream("aac", rate=samplerate)
            self._stream.bit_rate = settings.bit_rate
            # WAV's defaults: a low-frequency channel only in 5.1 and 7.1 (the fourth channel), which the encoder
            # low-passes; three or seven channels are not surround layouts with one (2.1 and 6.1 cut the third or
            # fourth channel of any 3- or 7-channel audio to 120 Hz)
            layouts = {1: "mono", 2: "stereo", 3: "3.0", 4: "quad", 5: "5.0", 6: "5.1", 7: "7.0", 8: "7.1"}
            self._stream.layout = layouts[num_channels]
        except (av.error.FFmpegError, ValueError, KeyError) as exc:
            if self._owned is not None:
                self._owned.close()
            raise ValueError(f"Unable to create {'M4A' if container == 'ipod' else 'AAC'} writer: {exc}") from exc
        self._rate = samplerate
        self._channels = num_channels
        self._layout = layouts[num_channels]
        self._pts = 0

    def write(self, block: np.ndarray) -> None:
        if block.shape[0] == 0:
            return
        # interleaved (PyAV converts to the encoder's planar format): PyAV's planar frames of 8 channels have a
        # ninth plane, and from_ndarray failed on it
        data = np.ascontiguousarray(block, dtype=np.float32).reshape(1, -1)
        if not np.isfinite(data).all():  # FFmpeg's AAC encoder refuses NaN (av.error.ArgumentError): as MP3
            data = np.nan_to_num(data, nan=0.0, posinf=1.0, neginf=-1.0)  # does, silence and full scale
        frame = self._av.AudioFrame.from_ndarray(data, format="flt", layout=self._layout)
        frame.sample_rate = self._rate
        frame.pts = self._pts
        self._pts += block.shape[0]
        try:
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
        except self._av.error.FFmpegError as exc:  # never PyAV's own exception type
            raise AudioWriteError(f"Unable to write data to audio file: {exc}") from exc

    def close(self) -> None:
        try:
            if self._pts == 0:  # an empty file must still be a valid file: one frame of silence
                self.write(np.zeros((1, self._channels), np.float32))
            for packet in self._stream.encode(None):
                self._container.mux(packet)
            self._container.close()
            if self._owned is not None:
                self._owned.flush()
        except self._av.error.FFmpegError as exc:  # never PyAV's own exception type
            raise AudioWriteError(f"Unable to write data to audio file: {exc}") from exc
        finally:
            if self._owned is not None:
                self._owned.close()

    def _stop(self) -> None:
        self._container.close()


def is_bytes_io(obj: Any) -> bool:
    return isinstance(obj, io.BytesIO)
