"""Live-audio measurements on a private PulseAudio server with a null sink (started here, stopped at the end).

1. Callback cost: Python time spent in AudioStream's device callback per 512-frame block (duplex, stereo),
   with an empty board and with Gain + Compressor, measured on the live device.
2. Round-trip latency of the live path, stompbox vs pedalboard, on the same virtual device and buffer size: a
   live stream reads the sink's monitor and plays into the same sink through Gain(-6 dB), so one click played
   into the sink comes back as a train of echoes spaced by exactly the loop's round trip.

Run: python bench/live.py  (needs Debian pulseaudio + pulseaudio-utils and the miniaudio package)
"""

from __future__ import annotations

import os
import sys
import threading
import time

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


def main() -> None:
    import conftest

    server = conftest.start_pulse_server()
    os.environ["PULSE_SERVER"] = server.server
    os.environ["XDG_RUNTIME_DIR"] = server.env["XDG_RUNTIME_DIR"]
    os.environ["STOMPBOX_AUDIO_BACKEND"] = "pulseaudio"
    try:
        import stompbox
        from stompbox.live.stream import AudioStream

        # 1. callback cost
        for label, board in [
            ("empty board", stompbox.Pedalboard()),
            ("Gain+Compressor", stompbox.Pedalboard([stompbox.Gain(-6), stompbox.Compressor()])),
        ]:
            s = AudioStream(
                "Monitor of SinkB",
                "SinkB",
                plugins=board,
                sample_rate=RATE,
                buffer_size=BUFFER,
                num_input_channels=2,
            )
            costs: list[float] = []
            inner = s._callback

            def timed(o, i, n, inner=inner, costs=costs):
                t = time.perf_counter()
                inner(o, i, n)
                costs.append(time.perf_counter() - t)

            s._device._handler = timed
            with s:
                time.sleep(3.0)
            c = np.array(costs[20:]) * 1e6
            print(
                f"callback cost, {label}, {BUFFER} frames stereo: median {np.median(c):.0f} us, "
                f"p99 {np.percentile(c, 99):.0f} us over {len(c)} blocks "
                f"({100 * np.median(c) / 1e6 / (BUFFER / RATE):.2f}% of the block period)"
            )

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
    finally:
        server.stop()


if __name__ == "__main__":
    main()
