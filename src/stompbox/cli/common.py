"""Helpers shared by the CLI subcommands.

This module is imported by every command before its arguments are parsed, so it imports nothing heavy (no
NumPy, no codecs): what a helper needs, it imports when called."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any, NoReturn

from .._base.errors import StompboxError

__all__ = [
    "CLIError",
    "Parser",
    "open_reader",
    "open_input",
    "open_output",
    "dbfs",
    "show_progress",
    "add_common_options",
    "add_input_options",
    "add_output_options",
]


def __getattr__(name: str) -> Any:  # ArraySource needs NumPy and the reader base: not for `stompbox --version`
    if name == "ArraySource":
        from .array_source import ArraySource

        return ArraySource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


STDIO = "-"  # the name of standard input / output, as in SoX and FFmpeg
#: ``--channels``: the conversion rule of :class:`stompbox.io.ChannelConvertedReadableAudioFile`, in one line.
CHANNELS_HELP = (
    "channel count; fewer channels are downmixed as FFmpeg does (centre and surrounds at -3 dB, LFE dropped, "
    "scaled so it cannot clip; stereo to mono is the mean), mono is copied to every channel, and speakers a "
    "smaller layout lacks are silent"
)


class CLIError(StompboxError):
    """An error reported as ``stompbox: error: <message>`` with exit status ``status`` (default 1)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, as the tool's own: ``stompbox render: error: ...`` (status 2)."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {text} (see {self.prog} --help)\n")


class IntermixedParser(Parser):
    """A subcommand's parser, taking options anywhere among the positionals (``loudness a.wav --json b.wav``,
    ``render a b distortion --tail 2 delay``)."""

    _inside = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._inside:
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


def add_common_options(p: argparse.ArgumentParser) -> None:
    """The options every subcommand takes: ``-q/--quiet``, ``-V/--verbose`` and ``--debug`` (SoX's spellings;
    ``--debug`` is also taken before the subcommand)."""
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, notes or summaries")
    p.add_argument("-V", "--verbose", action="count", default=0, help="say more about what is done (on stderr)")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show full tracebacks on errors")


def _encoding(text: str) -> str:
    from ..io.raw import parse_encoding

    try:
        return parse_encoding(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_input_options(p: argparse.ArgumentParser) -> None:
    """How to read an input that is not a self-describing file: ``--input-type`` (``raw``, or a format name for
    standard input) and the layout of raw input (``--input-rate``... default to ``-r``/``-c``/``-e``/``-b``)."""
    p.add_argument(
        "--input-type",
        "--input-format",
        dest="input_type",
        metavar="TYPE",
        help="type of the input: 'raw' for headerless PCM (default: read from the data)",
    )
    p.add_argument("--input-rate", type=positive_rate, metavar="R", help="sample rate of raw input (default: -r)")
    p.add_argument("--input-channels", type=positive_int, metavar="N", help="channels of raw input (default: -c)")
    p.add_argument("--input-encoding", type=_encoding, metavar="E", help="encoding of raw input (default: -e)")
    p.add_argument("--input-bits", type=int, metavar="B", help="bits per sample of raw input (default: -b)")


def add_reader_options(p: argparse.ArgumentParser) -> None:
    """For commands that only read audio (info, loudness, plot, play): SoX's format options describe the input,
    as they do before an input file in SoX (``-t raw -r 48000 -c 2 -e signed-integer -b 16``)."""
    p.add_argument(
        "-t",
        "--type",
        "--input-type",
        "--input-format",
        dest="input_type",
        metavar="TYPE",
        help="type of the input: 'raw' for headerless PCM (default: read from the data)",
    )
    p.add_argument("-r", "--rate", dest="input_rate", type=positive_rate, metavar="R", help="sample rate of raw input")
    p.add_argument(
        "-c", "--channels", dest="input_channels", type=positive_int, metavar="N", help="channels of raw input"
    )
    p.add_argument(
        "-b", "--bits", dest="input_bits", type=int, choices=(8, 16, 24, 32, 64), metavar="B", help="bits of raw input"
    )
    p.add_argument("-e", "--encoding", dest="input_encoding", type=_encoding, metavar="E", help="encoding of raw input")


def add_output_options(p: argparse.ArgumentParser, *, quality: bool = True, type_help: str | None = None) -> None:
    """The output format options of SoX: ``-r/--rate``, ``-c/--channels``, ``-b/--bits``, ``-e/--encoding``,
    ``-t/--type``, and ``--quality`` (long only: ``-q`` is quiet). Older spellings stay as aliases."""
    p.add_argument(
        "-r", "--rate", "--samplerate", dest="rate", type=positive_rate, metavar="R", help="sample rate in Hz"
    )
    p.add_argument("-c", "--channels", type=positive_int, metavar="N", help=CHANNELS_HELP)
    p.add_argument(
        "-b",
        "--bits",
        "--bit-depth",
        dest="bits",
        type=int,
        choices=(8, 16, 24, 32, 64),
        metavar="B",
        help="bits per sample (8/16/24/32; 32 is float in WAV/AIFF)",
    )
    p.add_argument(
        "-e",
        "--encoding",
        type=_encoding,
        metavar="E",
        help="raw output: signed-integer (default), unsigned-integer or floating-point",
    )
    p.add_argument(
        "-t",
        "--type",
        "--format",
        dest="type",
        metavar="TYPE",
        help=type_help
        or "output format (wav, flac, ogg, opus, mp3, aiff, m4a, raw); default: from OUT's extension, wav for '-'",
    )
    if quality:
        p.add_argument("--quality", metavar="Q", help='encoder quality, e.g. "V2" or "192 kbps" (MP3), 0-8 (FLAC)')
    p.add_argument(
        "--no-tags",
        action="store_true",
        help="drop the input's tags and cover art (kept by default in MP3, FLAC, Ogg, Opus, M4A and WAV outputs)",
    )


def positive_rate(text: str) -> float:
    """An argparse type: a sample rate in the range of :mod:`stompbox.limits` (an int when whole)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    from ..limits import LimitError, check_sample_rate

    try:
        check_sample_rate(value, "sample rate")  # `convert -r 1000000000` crashed inside soxr
    except LimitError as error:
        raise argparse.ArgumentTypeError(str(error).rstrip(".")) from None
    return int(value) if value.is_integer() else value


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {text})")
    return value


def _raw_layout(args: argparse.Namespace) -> Any:
    from ..io.raw import RawFormat

    rate = getattr(args, "input_rate", None) or getattr(args, "rate", None)
    channels = getattr(args, "input_channels", None) or getattr(args, "channels", None)
    if rate is None or channels is None:
        raise CLIError("raw input needs its sample rate and channels: give -r RATE -c CHANNELS", status=2)
    encoding = getattr(args, "input_encoding", None) or getattr(args, "encoding", None) or "signed-integer"
    bits = getattr(args, "input_bits", None) or getattr(args, "bits", None)
    try:
        return RawFormat(rate, channels, encoding, bits)
    except ValueError as error:
        raise CLIError(str(error), status=2) from error


def open_input(path: str, args: argparse.Namespace) -> Any:
    """The reader of an input named on the command line: ``-`` is standard input, read as a stream (never
    copied to a file first); ``--input-type raw`` reads headerless PCM (from ``-`` or a file)."""
    kind = (getattr(args, "input_type", None) or "").lstrip(".").lower()
    if path == STDIO:
        stream = sys.stdin.buffer
        if stream.isatty():
            raise CLIError("standard input is a terminal: pipe audio in, or give a file name", status=2)
        peek = getattr(stream, "peek", None)
        if callable(peek) and not peek(1):
            raise CLIError("standard input is empty")
        if kind == "raw":
            from ..io.raw import RawReader

            return RawReader(stream, _raw_layout(args), name="-")
        from ..io import AudioFile

        try:
            return AudioFile(stream)
        except (ValueError, RuntimeError, OSError, TypeError) as error:
            raise CLIError(f"standard input: {' '.join(str(error).split())}") from error
    if kind == "raw":
        if not os.path.isfile(path):
            raise CLIError(f"{path}: no such file")
        from ..io.raw import RawReader

        return RawReader(open(path, "rb"), _raw_layout(args), name=path)  # noqa: SIM115 - read to the end
    return open_reader(path)


#: the command's encoder qualities when none is given: FFmpeg's defaults (libmp3lame 128 kbps, libvorbis q3 about
#: 112 kbps, its AAC encoder 128 kbps, libopus 64 kbps), not the Python API's (pedalboard's: 320, 500, 256, 128)
DEFAULT_QUALITY = {
    "mp3": "128 kbps",
    "ogg": "112",
    "oga": "112",
    "m4a": "128",
    "mp4": "128",
    "aac": "128",
    "opus": "64",
}
#: codecs that store samples of a width (libsndfile's and FFmpeg's names): any other is lossy or companded
_WIDE = ("PCM_", "FLOAT", "DOUBLE", "ALAC", "FLAC")


def input_dtype(source: Any) -> str:
    """The sample type an input holds, as the output's default bit depth follows it: a lossy or companded
    codec (MP3, AAC, Vorbis, mu-law...) decodes to float32, but holds no more than FFmpeg writes from it to WAV:
    16 bits."""
    codec = str(getattr(source, "codec", "") or "").upper()
    kind = str(getattr(source, "format", "") or "").upper()
    if codec and not codec.startswith(_WIDE) and kind != "FLAC":
        return "int16"
    return str(source.file_dtype)


def output_defaults(source: Any, out_path: str) -> tuple[int, Any]:
    """The bit depth and encoder quality of an output written from ``source`` to ``out_path`` (its format from
    the extension) when the command line gives none: FFmpeg's defaults, not the Python API's (pedalboard's).

    The bit depth is the input's where the format stores it, 16 for lossy or companded input (see
    :func:`input_dtype`), 16 for lossy formats; the quality is :data:`DEFAULT_QUALITY`'s. A ``.aac`` is raw ADTS
    whoever writes it. This is the one rule of ``convert``, ``render`` and ``batch`` (whose workers call it: it
    is a module-level function, so process pools can send it)."""
    from ..io.formats import default_bit_depth

    kind = os.path.splitext(out_path)[1].lstrip(".").lower()
    return default_bit_depth(input_dtype(source), out_path), DEFAULT_QUALITY.get(kind)


def output_type(path: str, args: argparse.Namespace) -> str:
    """The format key of an output: ``-t/--type`` if given, else from the path's extension (``wav`` for ``-``)."""
    kind = getattr(args, "type", None)
    if kind:
        result: str = kind.strip().lstrip(".").lower()
        return result
    if path == STDIO:
        return "wav"
    return os.path.splitext(path)[1].lstrip(".").lower()


def open_output(
    path: str,
    args: argparse.Namespace,
    rate: int,
    channels: int,
    bits: int | None,
    quality: Any = None,
    source: Any = None,
) -> Any:
    """A writer for an output named on the command line: ``-`` is standard output, written as a stream (a WAV
    header with unknown sizes, as FFmpeg writes to a pipe); ``-t raw`` writes headerless PCM. A file output
    keeps the tags of ``source`` (the input) where its format takes tags, unless ``--no-tags``. ``bits`` and
    ``quality`` given as None are :func:`output_defaults`'s for ``source`` (required then)."""
    kind = output_type(path, args)
    if path == STDIO and sys.stdout.isatty():  # audio bytes on a terminal help nobody (FFmpeg refuses too)
        raise CLIError("standard output is a terminal: redirect it (> out.wav) or pipe it (| play -)", status=2)
    if path != STDIO:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise CLIError(f"{path}: folder {parent} does not exist")
    if kind == "raw":
        from ..io.raw import RawFormat, RawWriter

        bits_given = getattr(args, "bits", None)
        encoding = getattr(args, "encoding", None) or ("floating-point" if bits_given == 64 else "signed-integer")
        try:
            layout = RawFormat(rate, channels, encoding, bits_given)
        except ValueError as error:
            raise CLIError(str(error), status=2) from error
        try:
            return RawWriter(sys.stdout.buffer if path == STDIO else path, layout)
        except OSError as error:
            raise CLIError(f"{path}: {error.strerror or error}") from error
    from ..io import AudioFile

    target: Any = sys.stdout.buffer if path == STDIO else path
    fmt = kind if (path == STDIO or getattr(args, "type", None)) else None
    shown = "standard output" if path == STDIO else path
    if bits is None or quality is None:
        default_bits, default_quality = output_defaults(source, f"{path}.{kind}")
        bits = default_bits if bits is None else bits
        quality = default_quality if quality is None else quality
    tags = None
    if source is not None and path != STDIO and not getattr(args, "no_tags", False):
        from ..io.tags import carried_tags

        tags = carried_tags(source, f"{path}.{kind}")
    try:
        return AudioFile(target, "w", rate, channels, bit_depth=bits, quality=quality, format=fmt, tags=tags)
    except (ValueError, TypeError, RuntimeError, OSError) as error:
        raise CLIError(f"{shown}: {' '.join(str(error).split())}") from error


def open_reader(path: str) -> Any:
    """Open ``path`` for reading, turning the common failures into one-line :class:`CLIError` messages."""
    if not os.path.exists(path):
        raise CLIError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory")
    from ..io import AudioFile

    try:
        return AudioFile(path)
    except (ValueError, RuntimeError, OSError, TypeError) as error:
        raise CLIError(f"{path}: {' '.join(str(error).split())}") from error


def dbfs(peak: float) -> float:
    """A linear peak in dB relative to full scale (-inf for silence)."""
    return 20.0 * math.log10(peak) if peak > 0 else -math.inf


def show_progress(quiet: bool, seconds: float) -> bool:
    """Whether to draw a progress bar: on a terminal, not ``--quiet``, and for files longer than 20 s."""
    return not quiet and seconds >= 20.0 and sys.stderr.isatty()


def conform(
    reader: Any, out_path: str, samplerate: float | None, channels: int | None, quality: Any, quiet: bool
) -> tuple[Any, int]:
    """:func:`stompbox.batch.conform_reader` for a command: a note on stderr when the output's format made it
    change the rate (unless ``quiet``), a :class:`CLIError` for a fractional rate."""
    from ..batch import conform_reader

    try:
        reader, rate, note = conform_reader(reader, out_path, samplerate, channels, quality)
    except ValueError as error:
        raise CLIError(str(error).replace("give samplerate", "pass --samplerate")) from error
    if note and not quiet:
        print(f"stompbox: note: {note}", file=sys.stderr)
    return reader, rate


def describe(args: argparse.Namespace, in_path: str, source: Any, out_path: str, out: Any) -> None:
    """With ``-V``: one line on stderr naming the input and output formats (as SoX's ``-V``)."""
    if not getattr(args, "verbose", 0) or getattr(args, "quiet", False):
        return
    kind = getattr(source, "format", None) or type(source).__name__
    length = f"{source.frames} frames" if getattr(source, "exact_duration_known", False) else "length unknown"
    written = getattr(out, "file_dtype", None) or getattr(getattr(out, "_layout", None), "file_dtype", "")
    print(
        f"stompbox: {in_path}: {kind} {source.samplerate:g} Hz {source.num_channels} ch {source.file_dtype}, "
        f"{length} -> {out_path}: {output_type(out_path, args)} {out.samplerate:g} Hz {out.num_channels} ch "
        f"{written}",
        file=sys.stderr,
    )
