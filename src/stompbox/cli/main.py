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


#: where an exception raised by a signal handler does harm: in the import machinery it leaves a module half
#: imported (and whatever imports it next, the clean-up included, fails), and in a finaliser (``__del__``) it is
#: printed and dropped, so the command went on to the end as if never signalled
_UNSAFE_CODE = ("<frozen importlib",)
_UNSAFE_FUNCTIONS = ("__del__",)
#: a signal is held back from those places for at most this long (then raised wherever the command is)
_MAX_DEFERRAL = 2.0
_RETRY = 0.005  # seconds between the re-deliveries of a held-back signal


def _unsafe(frame: Any) -> bool:
    """Whether ``frame`` (where the main thread was interrupted) or a caller is in an import or a finaliser."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(_UNSAFE_CODE) or code.co_name in _UNSAFE_FUNCTIONS:
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def _signals_as_interrupts() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP (when their handler is Python's default: Ctrl-C's
    ``KeyboardInterrupt``, or the end of the process on the spot, which leaves temporary files) raise
    :class:`_Signalled` in the main thread, once: further ones while it unwinds are ignored.

    The exception is raised where it can unwind the command, not where it would do harm: a signal that comes
    while the command imports a module or runs a finaliser is held back until it has left them (re-delivered
    every few milliseconds, for at most 2 s), and one dropped all the same (raised in a finaliser or a callback
    Python runs for the garbage collector, which prints such exceptions and goes on) is raised again. A signal
    still held back when the command ends is raised then.
    """
    import signal
    import threading
    import time

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    defaults = {"SIGINT": signal.default_int_handler, "SIGTERM": signal.SIG_DFL, "SIGHUP": signal.SIG_DFL}
    saved: dict[int, Any] = {}
    # "pending": the signal to raise; "raised": it is unwinding the command; "since": when it first came
    state: dict[str, Any] = {"pending": None, "raised": False, "since": None, "retrier": None}
    main_id = threading.main_thread().ident
    can_retry = hasattr(signal, "pthread_kill") and main_id is not None

    def retry() -> None:  # re-delivers a held-back signal to the main thread until it has been raised
        while state["pending"] is not None:
            time.sleep(_RETRY)
            signum = state["pending"]
            if signum is not None:
                with contextlib.suppress(OSError, ValueError):
                    signal.pthread_kill(main_id, signum)  # type: ignore[arg-type]

    def hold(signum: int) -> None:
        state["pending"] = signum
        if state["retrier"] is None or not state["retrier"].is_alive():
            state["retrier"] = threading.Thread(target=retry, name="stompbox-signal", daemon=True)
            state["retrier"].start()

    def interrupt(signum: int, frame: Any) -> None:
        if state["raised"]:
            return  # unwinding: a second signal must not cut the clean-up short
        signum = state["pending"] or signum
        if state["since"] is None:
            state["since"] = time.monotonic()
        if can_retry and _unsafe(frame) and time.monotonic() - state["since"] < _MAX_DEFERRAL:
            hold(signum)
            return
        state["pending"], state["raised"] = None, True
        raise _Signalled(signum)

    previous_hook = sys.unraisablehook

    def dropped(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, _Signalled) and state["raised"]:
            state["raised"] = False  # raised where Python drops exceptions: raise it again, elsewhere
            if can_retry:
                hold(unraisable.exc_value.signum)
            return
        previous_hook(unraisable)

    for name, default in defaults.items():
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signum) is default:
                saved[signum] = signal.signal(signum, interrupt)
    sys.unraisablehook = dropped
    try:
        yield
        if state["pending"] is not None and not state["raised"]:  # held back to the end: raise it now
            signum, state["pending"], state["raised"] = state["pending"], None, True
            raise _Signalled(signum)
    finally:
        state["pending"] = None
        sys.unraisablehook = previous_hook
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
