"""Live-audio measurements on a private PulseAudio server with null sinks (started here, stopped at the end).

1. Dropouts (the default): a 60 s duplex stream through the null sinks at buffer sizes 128, 256 and 512 frames
   with Distortion -> Delay -> Reverb, while the main thread runs a pure-Python busy loop that holds the GIL
   (round "busy"), and again while two other processes load both cores as well (round "loaded"). A player
   thread writes a 440 Hz tone into sink ``a``; the live stream reads ``a.monitor``, runs the board and plays
   into sink ``b`` (a reader thread collects its dry input); a recorder thread reads ``b.monitor``. Each run is
   made twice: with the board's compiled plan on the audio thread (no GIL), and with the board run through
   Python from the audio thread (``_force_python_path``: the callback takes the GIL every period, as every
   callback did before compiled plans). Printed per run: what the streams counted (the player's output
   underruns, the live stream's and the recorder's dropped input frames) and what reached sink ``b``: frames of
   silence inside the recorded effect output (the sink found the live stream's buffer empty), in how many gaps,
   and the longest time between two device periods of the live stream.
2. ``--roundtrip``: round-trip latency of the live path, stompbox vs pedalboard, on the same virtual device: a
   live stream reads the sink's monitor and plays into the same sink through Gain(-6 dB), so one click played
   into the sink comes back as a train of echoes spaced by exactly the loop's round trip.

Run: python bench/live.py [--seconds 60] [--sizes 128,256,512] [--rounds busy,loaded] [--roundtrip]
(needs Debian pulseaudio + pulseaudio-utils and the miniaudio package)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "live"))

RATE = 48000
BUFFER = 512


def echo_spacing(x: np.ndarray) -> float:
    """Seconds between successive echoes of a click (peak of the autocorrelation after the click itself)."""
    x = x - x.mean()
    n = 1 << int(np.ceil(np.log2(2 * len(x))))
    spec = np.fft.rfft(x, n)
    ac = np.fft.irfft(spec * np.conj(spec), n)[: len(x)]
    lo = int(0.003 * RATE)
    return (lo + int(np.argmax(ac[lo : int(1.0 * RATE)]))) / RATE


def record(name: str, seconds: float, out: list) -> None:
    from stompbox.live.stream import AudioStream

    with AudioStream(input_device_name=name, sample_rate=RATE) as s:
        out.append(s.read(int(seconds * RATE))[0])


def click() -> np.ndarray:
    c = np.zeros(RATE // 10, np.float32)
    c[100:110] = 0.8
    return c


def measure_loop(make_stream) -> float:
    from stompbox.live.stream import AudioStream

    got: list = []
    with make_stream():
        time.sleep(2.0)  # let the loop settle
        rec = threading.Thread(target=record, args=("Monitor of SinkA", 1.5, got))
        rec.start()
        time.sleep(0.3)
        AudioStream.play(click(), RATE, "SinkA")
        rec.join(10)
    return echo_spacing(got[0])


def busy_loop(seconds: float) -> int:
    """Pure Python on the main thread: it holds the GIL except at the interpreter's switch interval."""
    end = time.perf_counter() + seconds
    count = 0
    while time.perf_counter() < end:
        count += 1
    return count


def silence_gaps(x: np.ndarray, shortest: int = 8) -> tuple[int, int]:
    """``(frames, gaps)``: runs of exact zeros (at least ``shortest`` long) between the first and the last
    sounding sample. A reverberated tone is never exactly zero: such a run is the sink finding nothing to play."""
    idx = np.flatnonzero(np.abs(x) > 1e-3)
    if idx.size == 0:
        return len(x), 1
    zero = np.r_[0, (x[idx[0] : idx[-1]] == 0).astype(np.int8), 0]
    edges = np.diff(zero)
    runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
    runs = runs[runs >= shortest]
    return int(runs.sum()), int(runs.size)


def dropout_run(seconds: float, buffer_size: int, compiled: bool) -> dict:
    """One duplex run (see the module text); returns the counts."""
    import stompbox
    from stompbox.live import _native
    from stompbox.live.stream import AudioStream

    AudioStream._force_python_path = not compiled
    board = stompbox.Pedalboard([stompbox.Distortion(), stompbox.Delay(), stompbox.Reverb()])
    tone = (0.3 * np.sin(2 * np.pi * 440 * np.arange(int((seconds + 1.0) * RATE)) / RATE)).astype(np.float32)
    player = AudioStream(output_device_name="SinkA", sample_rate=RATE)
    recorder = AudioStream(input_device_name="Monitor of SinkB", sample_rate=RATE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Python path warns that it depends on the GIL: that is the point
        fx = AudioStream("Monitor of SinkA", "SinkB", plugins=board, sample_rate=RATE, buffer_size=buffer_size)
    stop = threading.Event()
    recorded: list[np.ndarray] = []
    errors: list[BaseException] = []

    def read_into(stream: AudioStream, out: list | None) -> None:
        try:
            while not stop.is_set():
                block = stream.read(RATE // 100)
                if out is not None:
                    out.append(block[0])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    def play() -> None:
        try:
            player.write(tone, RATE)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    with recorder, fx, player:
        threads = [
            threading.Thread(target=read_into, args=(recorder, recorded), daemon=True),
            threading.Thread(target=read_into, args=(fx, None), daemon=True),
        ]
        for thread in threads:
            thread.start()
        writer = threading.Thread(target=play, daemon=True)
        writer.start()
        time.sleep(0.5)  # the tone is flowing, the streams have settled
        fx._ctl[_native.W_MAX_GAP_NS] = 0
        busy_loop(seconds)
        writer.join(seconds + 30)
        stop.set()
        for thread in threads:
            thread.join(5)
        counts = {
            "player_underrun": player.output_underrun_frame_count,
            "fx_dropped": fx.dropped_input_frame_count,
            "recorder_dropped": recorder.dropped_input_frame_count,
            "max_period_gap_ms": fx._ctl[_native.W_MAX_GAP_NS] / 1e6,
            "compiled_plan": bool(fx._slots[int(fx._ctl[_native.W_ACTIVE])][3]),
        }
    AudioStream._force_python_path = False
    audio = np.concatenate(recorded) if recorded else np.zeros(0, np.float32)
    counts["gap_frames"], counts["gaps"] = silence_gaps(audio)
    counts["errors"] = [repr(e) for e in errors]
    return counts


def dropouts(seconds: float, sizes: list[int], rounds: list[str]) -> None:
    print(
        f"duplex stream, Distortion -> Delay -> Reverb, {seconds:g} s per run, main thread in a pure-Python busy "
        "loop; the board's compiled plan vs the board run through Python (the callback takes the GIL)"
    )
    print(
        f"{'round':7} {'buffer':>6} {'path':9} {'underrun':>8} {'dropped':>8} {'rec.drop':>8} "
        f"{'silence at sink':>16} {'max period gap':>15}"
    )
    for round_name in rounds:
        loaders = []
        if round_name == "loaded":  # another process loads both cores
            loaders = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        try:
            for size in sizes:
                for compiled in (True, False):
                    c = dropout_run(seconds, size, compiled)
                    print(
                        f"{round_name:7} {size:>6} {'compiled' if compiled else 'Python':9} "
                        f"{c['player_underrun']:>8} {c['fx_dropped']:>8} {c['recorder_dropped']:>8} "
                        f"{c['gap_frames']:>7} fr ({c['gaps']:>3}) {c['max_period_gap_ms']:>12.1f} ms"
                        + (f"  errors: {c['errors']}" if c["errors"] else "")
                        + ("" if not compiled or c["compiled_plan"] else "  (no compiled plan: ran through Python)"),
                        flush=True,
                    )
        finally:
            for loader in loaders:
                loader.kill()
                loader.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each dropout run (default 60)")
    parser.add_argument("--sizes", default="128,256,512", help="buffer sizes in frames")
    parser.add_argument("--rounds", default="busy,loaded", help="busy (GIL held), loaded (+ two busy processes)")
    parser.add_argument("--roundtrip", action="store_true", help="measure the round-trip latency instead")
    args = parser.parse_args()
    import conftest

    server = conftest.start_pulse_server()
    os.environ["PULSE_SERVER"] = server.server
    os.environ["XDG_RUNTIME_DIR"] = server.env["XDG_RUNTIME_DIR"]
    os.environ["STOMPBOX_AUDIO_BACKEND"] = "pulseaudio"
    try:
        if args.roundtrip:
            roundtrip(server)
        else:
            dropouts(args.seconds, [int(v) for v in args.sizes.split(",")], args.rounds.split(","))
    finally:
        server.stop()


def roundtrip(server) -> None:
    """Part 2 (see the module text)."""
    import stompbox
    from stompbox.live.stream import AudioStream

    # 2. round trip through the same sink (a feedback loop with -6 dB per pass)
    ours = measure_loop(
        lambda: AudioStream(
            "Monitor of SinkA",
            "SinkA",
            plugins=stompbox.Pedalboard([stompbox.Gain(-6)]),
            sample_rate=RATE,
            buffer_size=BUFFER,
            num_input_channels=2,
        )
    )
    print(f"stompbox round trip (live path + server), buffer {BUFFER}: {ours * 1e3:.1f} ms")
    try:
        import pedalboard
        from pedalboard.io import AudioStream as PBStream
    except ImportError:
        print("pedalboard not installed: no comparison")
        return
    server.pactl("set-default-sink", "a")
    server.pactl("set-default-source", "a.monitor")
    name = PBStream.default_output_device_name
    try:
        PBStream(name, name, sample_rate=RATE, buffer_size=BUFFER, allow_feedback=True)
    except Exception as error:  # JUCE's ALSA layer cannot open the pulse PCM here
        print(f"pedalboard cannot open {name!r} on this server: {error!r}")
        return
    theirs = measure_loop(
        lambda: PBStream(
            name,
            name,
            plugins=pedalboard.Pedalboard([pedalboard.Gain(-6)]),
            sample_rate=RATE,
            buffer_size=BUFFER,
            allow_feedback=True,
        )
    )
    print(f"pedalboard round trip ({name!r}), buffer {BUFFER}: {theirs * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
