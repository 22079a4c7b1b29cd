"""Where a signal stops the command: SIGTERM, SIGHUP and Ctrl-C raise an exception that unwinds the command
(see tests/robustness/test_killed_writers.py for what that leaves on disk), but never in the middle of an
import, which would leave a module half imported for the clean-up to trip on, nor in a finaliser, where Python
prints the exception and drops it, so that the command went on to the end. Each case runs in a fresh
interpreter that signals itself at a chosen moment."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def _run(code: str, folder: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(folder)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_during_an_import_is_raised_after_it(tmp_path: Path, signame: str) -> None:
    """The module signals the process as its import begins and takes 0.3 s more: the import completes (the
    module is whole in ``sys.modules``), and the exception comes after it, with the signal's number."""
    (tmp_path / "slow_module.py").write_text(
        textwrap.dedent(
            f"""
            import os, signal, time
            os.kill(os.getpid(), signal.{signame})
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                pass
            WHOLE = True
            """
        )
    )
    out = _run(
        """
        import sys, time
        sys.path.insert(0, sys.argv[1])
        from stompbox.cli.main import _Signalled, _signals_as_interrupts
        imported = False
        try:
            with _signals_as_interrupts():
                import slow_module
                imported = True
                time.sleep(10)
            print("not-raised")
        except _Signalled as signalled:
            print(signalled.signum, imported, getattr(sys.modules.get("slow_module"), "WHOLE", False))
        """,
        tmp_path,
    )
    import signal

    assert out == [str(int(getattr(signal, signame))), "True", "True"]


def test_a_signal_during_a_finaliser_is_not_dropped(tmp_path: Path) -> None:
    """A finaliser (``__del__``) is running when SIGTERM comes: the exception is raised after it, so the command
    still stops (raised inside it, Python printed and dropped it, and the command ran to its end)."""
    out = _run(
        """
        import os, signal, time
        from stompbox.cli.main import _Signalled, _signals_as_interrupts

        class Finalised:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)
                end = time.monotonic() + 0.2
                while time.monotonic() < end:
                    pass

        finalised = False
        try:
            with _signals_as_interrupts():
                Finalised()  # dropped at once: its finaliser runs here
                finalised = True
                time.sleep(10)
            print("not-raised")
        except _Signalled as signalled:
            print(signalled.signum, finalised)
        """,
        tmp_path,
    )
    assert out == ["15", "True"]


def test_a_second_signal_does_not_cut_the_clean_up_short(tmp_path: Path) -> None:
    out = _run(
        """
        import os, signal, time
        from stompbox.cli.main import _Signalled, _signals_as_interrupts

        cleaned = False
        try:
            with _signals_as_interrupts():
                try:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(10)
                finally:
                    os.kill(os.getpid(), signal.SIGHUP)  # while unwinding
                    end = time.monotonic() + 0.1
                    while time.monotonic() < end:
                        pass
                    cleaned = True
        except _Signalled as signalled:
            print(signalled.signum, cleaned)
        """,
        tmp_path,
    )
    assert out == ["15", "True"]
