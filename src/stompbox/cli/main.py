"""Entry point of the ``stompbox`` command: ``stompbox <command> [options]``.

Exit status: 0 on success, 2 for a usage error, 1 for any other error (one line on stderr, no traceback;
``--debug`` shows the traceback instead), 141 without a word when the reader of standard output goes away
(``| head``), as for SoX. SIGINT (Ctrl-C), SIGTERM and SIGHUP stop a command cleanly (an unfinished output is
discarded, an earlier file at its path stays) with status 130, 143 or 129.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .common import CLIError, IntermixedParser, Parser

__all__ = ["main", "entry", "build_parser"]

# subcommand modules, in --help order; each has register(subparsers) setting `func` on its parser
COMMANDS = ["render", "effects", "info", "convert", "plot", "loudness", "batch", "play", "record", "plugins", "demo"]

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for SoX or cat cut off by `| head`

_MODULES = {"play": "live", "record": "live"}  # commands registered by a module of another name


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered.

    ``commands``: the subcommands to register whole (default: all); the others get an empty parser under their
    name, so that only the module of the command that runs is imported (``stompbox info`` does not load the
    effects' machinery that ``render`` needs, nor ``render`` the plotting of ``plot``).
    """
    from .._base.version import __version__

    parser = Parser(
        prog="stompbox",
        description="Streaming audio I/O and effects (pedalboard-compatible).",
    )
    parser.add_argument("--version", action="version", version=f"stompbox {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=IntermixedParser)
    sub.required = True
    whole = set(COMMANDS if commands is None else commands)
    for name in dict.fromkeys(_MODULES.get(n, n) for n in COMMANDS if n in whole):
        importlib.import_module(f".{name}", __package__).register(sub)
    for name in COMMANDS:
        if name not in sub.choices:
            sub.add_parser(name, add_help=False)  # never parsed: the command line names another command
    return parser


def _wanted(argv: Sequence[str]) -> list[str] | None:
    """The subcommands whose parsers a command line needs: the one it names; none for ``--version`` alone;
    all (None) when it names none (``--help``, a usage error: their messages list every command)."""
    for token in argv:
        if token in ("-h", "--help"):
            return None
        if token == "--version":
            return []
        if not token.startswith("-"):
            return [token] if token in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Every output a command finishes, it closes: a writer dropped while it runs was cut short by an exception or
    a signal on its way out, and is discarded, not finished as a script's dropped writer is.
    """
    from .._base import atomic

    saved = atomic.finish_dropped_writers
    atomic.finish_dropped_writers = False
    try:
        return _main(argv)
    finally:
        if saved:
            import gc

            gc.collect()  # writers in reference cycles with a caught exception's traceback go while discarded
        atomic.finish_dropped_writers = saved


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_wanted(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: usage errors exit 2, --help/--version exit 0
        return int(exit_.code or 0)
    try:
        with _signals_as_interrupts():
            return int(args.func(args) or 0)
    except KeyboardInterrupt as interrupt:
        signum = getattr(interrupt, "signum", 2)
        with contextlib.suppress(OSError):  # after a hang-up the terminal may be gone
            print(f"stompbox: {_SIGNAL_WORDS.get(signum, 'interrupted')}", file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # the reader of our standard output went away (e.g. `| head`): exit quietly, with
        _silence_stdout()  # the status of a process ended by SIGPIPE, as SoX's (128 + 13)
        return EXIT_BROKEN_PIPE
    except CLIError as error:
        if args.debug:
            raise
        print(f"stompbox: error: {error}", file=sys.stderr)
        return error.status
    except Exception as error:  # one line, not a traceback, for anything a bad file can raise
        if args.debug:
            raise
        print(f"stompbox: error: {_one_line(error)}", file=sys.stderr)
        return 1


_SIGNAL_WORDS = {2: "interrupted", 15: "terminated", 1: "hung up"}


class _Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread as Ctrl-C is: ``with`` blocks unwind, so an unfinished
    output is discarded and the earlier file stays, and the command exits with 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_as_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP (when their handler is the default, which ends the process on the
    spot and leaves temporary files) raise :class:`_Signalled`; a second one while unwinding is ignored."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    saved: dict[int, Any] = {}

    def interrupt(signum: int, frame: object) -> None:
        for other in saved:
            signal.signal(other, signal.SIG_IGN)  # unwinding: a second signal must not cut the clean-up short
        raise _Signalled(signum)

    for signum in wanted:
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signum) is signal.SIG_DFL:
                saved[signum] = signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, handler)


def entry() -> None:
    """The ``stompbox`` executable: run :func:`main` on ``sys.argv`` and exit the process with its status.

    Before the interpreter shuts down, every object is moved out of the garbage collector's reach
    (``gc.freeze()``): the shutdown's collections would otherwise walk the several hundred thousand objects of
    Numba's compiler, about 80 ms of every command, for memory the process is about to return anyway. Files and
    streams are still closed and flushed as usual; only :func:`main`, which tests and scripts call, leaves the
    collector alone.

    NumPy's BLAS runs on one thread (unless ``OPENBLAS_NUM_THREADS`` says otherwise): the command's matrix
    products are small (a loudness meter's 256 x 256 filter blocks) and a pool of BLAS threads costs more than it
    saves there; on a busy machine a 2-s ``stompbox loudness`` took 0.3-0.5 s with OpenBLAS's threads, 0.1 s
    without. ``batch`` gets its parallelism from processes, each with one BLAS thread.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # read when NumPy loads: after this (see build_parser)
    import gc

    from .._base import atomic

    atomic.finish_dropped_writers = False  # to the end of the process (see main()): no collection needed
    status = main()
    gc.freeze()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        status = status or EXIT_BROKEN_PIPE
    sys.exit(status)


def _silence_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush of what is still buffered
    for a pipe whose reader has gone raises nothing (SoX exits quietly there too)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


if __name__ == "__main__":  # python -m stompbox.cli.main
    entry()
