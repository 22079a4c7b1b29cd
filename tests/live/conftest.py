"""A private PulseAudio server with null sinks, started for the live-audio tests and stopped afterwards.

The server runs in its own temporary ``XDG_RUNTIME_DIR``/``HOME`` with an anonymous unix socket, so it never
touches a user's audio. Tests are skipped when ``pulseaudio``/``pactl`` or the ``miniaudio``
package are missing.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

RATE = 48000
LONG_DESCRIPTION = "Stompbox Test Sink With A Deliberately Long Name Of More Than Sixty-Four Characters"


@dataclass
class PulseServer:
    """One private PulseAudio server: ``sinks`` maps sink names to their descriptions."""

    runtime_dir: str
    process: subprocess.Popen
    env: dict[str, str]
    sinks: dict[str, str] = field(default_factory=dict)

    @property
    def server(self) -> str:
        return self.env["PULSE_SERVER"]

    def pactl(self, *args: str) -> str:
        return subprocess.run(
            ["pactl", *args], env=self.env, check=True, capture_output=True, text=True, timeout=10
        ).stdout

    def kill(self) -> None:
        """Kill the server abruptly (SIGKILL), as a crash or an unplugged device would end it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        shutil.rmtree(self.runtime_dir, ignore_errors=True)


def _make_realtime(pid: int) -> None:
    """Give the server's main thread real-time priority where this process may (root, or an RTPRIO limit).

    A desktop's audio server runs at real-time priority (rtkit). Ours makes its sink threads real-time itself
    but leaves its main thread, which moves the clients' audio, at normal priority: on a machine whose cores are
    busy with other work it is then late itself, and the null sink plays silence for what the clients wrote
    in time. Real-time priority keeps the tests about the clients."""
    chrt = shutil.which("chrt")
    if chrt is not None:
        try:
            subprocess.run([chrt, "-r", "-p", "20", str(pid)], capture_output=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            pass


def start_pulse_server() -> PulseServer:
    """Start a private server with the sinks ``a`` and ``b`` (48 kHz stereo float), ``long`` (a long
    description), a null source described as a microphone and a sink described as a speaker."""
    base = tempfile.mkdtemp(prefix="stompbox-pulse-")
    runtime, home = os.path.join(base, "run"), os.path.join(base, "home")
    os.makedirs(runtime, mode=0o700)
    os.makedirs(home)
    socket = os.path.join(runtime, "native")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULSE_")}
    env.update(XDG_RUNTIME_DIR=runtime, HOME=home, PULSE_SERVER=f"unix:{socket}")
    spec = f"rate={RATE} channels=2 format=float32le"
    # the server's log goes to a file: a pipe nobody reads fills up (64 KiB) and then blocks the server
    log = open(os.path.join(base, "pulseaudio.log"), "wb")  # noqa: SIM115 - the server writes to it until stopped
    process = subprocess.Popen(
        [
            "pulseaudio",
            "--daemonize=no",
            "--exit-idle-time=-1",
            "-n",
            "--use-pid-file=no",
            "--disallow-exit",
            "--log-target=stderr",
            "--log-level=error",
            f"--load=module-native-protocol-unix auth-anonymous=1 socket={socket}",
            f"--load=module-null-sink sink_name=a {spec} sink_properties=device.description=SinkA",
            f"--load=module-null-sink sink_name=b {spec} sink_properties=device.description=SinkB",
            f"--load=module-null-sink sink_name=long {spec} "
            f"sink_properties='device.description=\"{LONG_DESCRIPTION}\"'",
            f"--load=module-null-sink sink_name=spk {spec} sink_properties='device.description=\"Test Speaker\"'",
            "--load=module-null-source source_name=mic description='Test Microphone'",
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    log.close()  # the child has its own descriptor
    server = PulseServer(base, process, env)
    deadline = time.monotonic() + 15
    while True:
        ok = subprocess.run(["pactl", "info"], env=env, capture_output=True, timeout=10).returncode == 0
        if ok:
            break
        if process.poll() is not None or time.monotonic() > deadline:
            with open(os.path.join(base, "pulseaudio.log"), "rb") as written:
                err = written.read().decode(errors="replace")
            server.stop()
            pytest.fail(f"the private PulseAudio server did not start: {err}")
        time.sleep(0.1)
    _make_realtime(process.pid)
    server.pactl("set-default-sink", "a")
    server.pactl("set-default-source", "a.monitor")
    server.sinks = {"a": "SinkA", "b": "SinkB", "long": LONG_DESCRIPTION, "spk": "Test Speaker"}
    return server


def _available() -> str | None:
    if shutil.which("pulseaudio") is None or shutil.which("pactl") is None:
        return "PulseAudio is not installed (Debian: pulseaudio pulseaudio-utils)"
    try:
        import miniaudio  # noqa: F401
    except ImportError:
        return "the miniaudio package is not installed"
    return None


@pytest.fixture(scope="session")
def pulse() -> Iterator[PulseServer]:
    """The shared private server; the process environment points libpulse at it while tests run."""
    reason = _available()
    if reason:
        pytest.skip(reason)
    server = start_pulse_server()
    saved = {k: os.environ.get(k) for k in ("PULSE_SERVER", "STOMPBOX_AUDIO_BACKEND")}
    os.environ["PULSE_SERVER"] = server.server
    os.environ["STOMPBOX_AUDIO_BACKEND"] = "pulseaudio"
    try:
        yield server
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()


@pytest.fixture
def doomed_pulse(pulse: PulseServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[PulseServer]:
    """A second, private server for a test that kills it (the shared one keeps running)."""
    server = start_pulse_server()
    monkeypatch.setenv("PULSE_SERVER", server.server)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _hard_timeout(request: pytest.FixtureRequest) -> Iterator[None]:
    """No live test may hang: dump the stacks and exit if one runs for over 30 s (the guide page, which runs
    the command line in subprocesses several times, 120 s: on a machine whose cores are busy that is slow)."""
    faulthandler.dump_traceback_later(120 if "test_docs_live" in request.node.nodeid else 30, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
