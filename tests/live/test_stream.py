"""stompbox.io.AudioStream against a real (private, null-sink) PulseAudio server, paced in real time.

Signal path of the round-trip tests: a stream plays into null sink ``a``; sink ``a``'s monitor source carries
exactly what was played; a live stream reads ``a.monitor``, runs its plugins and plays into sink ``b``; a
third
stream records ``b.monitor``.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import soundfile

import stompbox
from stompbox.live import stream as live
from stompbox.live.stream import AudioDeviceError, AudioStream

RATE = 48000
AMPLITUDE = 0.5


def tone(seconds: float, freq: float = 440.0, amplitude: float = AMPLITUDE) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def peak_frequency(x: np.ndarray) -> float:
    """Frequency of the strongest component, refined by a parabola through the log spectrum (Hann window)."""
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    k = int(np.argmax(spectrum[1:-1])) + 1
    a, b, c = np.log(spectrum[k - 1 : k + 2] + 1e-30)
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * RATE / len(x)


def rms_db(x: np.ndarray) -> float:
    return 20 * np.log10(np.sqrt(np.mean(np.square(x, dtype=np.float64))) + 1e-12)


def sounding(x: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    """The part of ``x`` between its first and last samples above ``threshold``, less 50 ms at each end."""
    idx = np.flatnonzero(np.abs(x) > threshold)
    assert idx.size, "nothing was recorded"
    return x[idx[0] + 2400 : idx[-1] - 2400]


class Recorder(threading.Thread):
    """Reads ``device`` in 10 ms chunks until stopped; keeps each chunk with its arrival time."""

    def __init__(self, device: str, **kwargs) -> None:
        super().__init__(daemon=True)
        self.stream = AudioStream(input_device_name=device, sample_rate=RATE, **kwargs)
        self.chunks: list[np.ndarray] = []
        self.times: list[float] = []
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.stream:
                while not self.done.is_set():
                    self.chunks.append(self.stream.read(RATE // 100)[0])
                    self.times.append(time.perf_counter())
        except BaseException as error:
            self.error = error

    def stop(self) -> np.ndarray:
        self.done.set()
        self.join(10)
        assert self.error is None, self.error
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)


# ------------------------------------------------------------------------------------------ devices, errors
def test_device_names_are_full_and_select_devices(pulse):
    outputs = AudioStream.output_device_names
    inputs = AudioStream.input_device_names
    assert {"SinkA", "SinkB", "Test Speaker", live._ma.list_devices()[1][0].name} <= set(outputs)
    assert pulse.sinks["long"] in outputs  # 84 characters, not truncated
    assert "Monitor of SinkA" in inputs and "Test Microphone" in inputs
    assert AudioStream.default_output_device_name == "SinkA"
    assert AudioStream.default_input_device_name == "Monitor of SinkA"
    with AudioStream(output_device_name=pulse.sinks["long"]) as stream:
        assert stream.output_device_name == pulse.sinks["long"]
        assert stream.output_device_names == outputs  # also readable from an instance
        assert pulse.sinks["long"] in repr(stream)
    # the server's own ids select the same devices
    assert AudioStream(input_device_name="a.monitor").input_device_name == "Monitor of SinkA"


def test_errors(pulse):
    with pytest.raises(RuntimeError, match="At least one of `input_device_name` or `output_device_name`"):
        AudioStream()
    with pytest.raises(ValueError, match="No such device: Nonexistent Device"):
        AudioStream(output_device_name="Nonexistent Device")
    with pytest.raises(ValueError, match="No such device: Nope"):
        AudioStream(input_device_name="Nope", output_device_name="SinkA")
    with pytest.raises(RuntimeError, match="feedback"):
        AudioStream("Test Microphone", "Test Speaker")
    AudioStream("Test Microphone", "Test Speaker", allow_feedback=True).close()
    AudioStream("Test Microphone", "SinkA").close()  # not a speaker: allowed
    out = AudioStream(output_device_name="SinkA", sample_rate=RATE)
    assert out.buffered_input_sample_count is None
    with pytest.raises(RuntimeError, match="no input device"):
        out.read(10)
    with pytest.raises(ValueError, match="sample rate"):
        out.write(tone(0.01), 44100)
    with pytest.raises(ValueError, match="channel"):
        out.write(np.zeros((3, 100), np.float32), RATE)
    out.close()
    with pytest.raises(RuntimeError, match="closed"):
        out.write(tone(0.01), RATE)
    inp = AudioStream(input_device_name="Monitor of SinkA")
    with pytest.raises(RuntimeError, match="no output device"):
        inp.write(tone(0.01), inp.sample_rate)
    inp.close()
    with pytest.raises(TypeError):
        AudioStream(output_device_name="SinkA", plugins="not a plugin")


def test_properties(pulse):
    board = stompbox.Pedalboard([stompbox.Gain(-3)])
    with AudioStream(
        "Monitor of SinkA", "SinkB", plugins=board, sample_rate=RATE, buffer_size=256, num_input_channels=2
    ) as stream:
        assert stream.running
        assert stream.sample_rate == RATE and stream.buffer_size == 256
        assert stream.num_input_channels == 2 and stream.num_output_channels == 2
        assert stream.plugins is board
        assert stream.dropped_input_frame_count == 0 and stream.ignore_dropped_input is False
        assert 0 < stream.nominal_latency_seconds < 0.1
        deadline = time.monotonic() + 5  # a fresh duplex stream may take over a second to get going
        while stream.buffered_input_sample_count == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stream.buffered_input_sample_count > 0
    assert not stream.running


def test_read_or_write_outside_with_runs_the_stream_for_that_call_only(pulse):
    """As in pedalboard: read() and write() on a stream that is not running start it, and stop it again
    when they return; a stopped stream holds no recorded input, and its dropped-frame count is kept."""
    out = AudioStream(output_device_name="SinkA", sample_rate=RATE)
    out.write(tone(0.05), RATE)
    assert not out.running and out.buffered_input_sample_count is None
    out.close()
    inp = AudioStream(input_device_name="Monitor of SinkA", sample_rate=RATE, buffer_size=256)
    assert inp.read(100).shape == (1, 100)
    assert not inp.running and inp.buffered_input_sample_count == 0
    with inp:
        deadline = time.monotonic() + 5
        while inp.buffered_input_sample_count == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert inp.buffered_input_sample_count > 0
    assert not inp.running and inp.buffered_input_sample_count == 0
    inp.close()


# ------------------------------------------------------------------------------------------ audio round trips
def test_tone_played_in_another_process_is_recorded_with_its_frequency_and_level(pulse, tmp_path):
    player = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import numpy as np, sys, time; from stompbox.live.stream import AudioStream; "
            "print('ready', flush=True); sys.stdin.readline(); time.sleep(1.0); "
            f"t = np.arange({int(1.5 * RATE)}) / {RATE}; "
            f"AudioStream.play(({AMPLITUDE} * np.sin(2 * np.pi * 440 * t)).astype(np.float32), "
            f"{RATE}, 'SinkA')",
        ],
        env=pulse.env | {"STOMPBOX_AUDIO_BACKEND": "pulseaudio"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    # the player has imported what it needs (slow on a loaded machine); its device can take a second or two to
    # start playing there: the recording is long enough for that
    assert player.stdout.readline().strip() == "ready"
    player.stdin.write("go\n")
    player.stdin.flush()
    path = tmp_path / "take.wav"
    frames = live.record_to_file(path, 8.0, "Monitor of SinkA", sample_rate=RATE, num_channels=2)
    assert player.wait(20) == 0
    assert frames == 8 * RATE
    audio, rate = soundfile.read(path, dtype="float32", always_2d=True)
    assert rate == RATE and audio.shape == (8 * RATE, 2)
    x = sounding(audio[:, 0])
    assert 1.3 * RATE < len(x) < 1.5 * RATE  # the whole tone, once
    assert abs(peak_frequency(x) - 440.0) < 1.0
    assert abs(rms_db(x) - rms_db(tone(1.0))) < 1.0
    assert np.allclose(audio[:, 0], audio[:, 1])  # mono played on a stereo sink: both channels


def test_live_effects_gain_and_plugin_swap_while_running(pulse):
    source = threading.Thread(target=AudioStream.play, args=(tone(6.0), RATE, "SinkA"), daemon=True)
    recorder = Recorder("Monitor of SinkB")
    recorder.start()
    board = stompbox.Pedalboard([stompbox.Gain(-12)])
    with AudioStream("Monitor of SinkA", "SinkB", plugins=board, sample_rate=RATE, buffer_size=512) as fx:
        source.start()
        # wait until the tone is flowing through the live stream
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (recorder.chunks and np.abs(recorder.chunks[-1]).max() > 0.05):
            time.sleep(0.02)
        time.sleep(1.0)
        swap_time = time.perf_counter()
        new_board = stompbox.Pedalboard([stompbox.Gain(-6)])
        fx.plugins = new_board
        time.sleep(1.0)
        assert fx._board_in_use is new_board
        first_used = fx._board_first_used - swap_time  # assignment to the first callback that ran it
        dropouts = fx.output_underrun_frame_count
    source.join(10)
    x = recorder.stop()
    times = np.array(recorder.times)
    chunk = RATE // 100
    before = np.concatenate(
        [c for c, t in zip(recorder.chunks, times, strict=True) if swap_time - 0.8 < t < swap_time - 0.1]
    )
    after = np.concatenate(
        [c for c, t in zip(recorder.chunks, times, strict=True) if swap_time + 0.3 < t < swap_time + 0.9]
    )
    reference = rms_db(tone(1.0))
    assert abs(rms_db(before) - reference + 12) < 1.0
    assert abs(rms_db(after) - reference + 6) < 1.0
    assert abs(peak_frequency(after) - 440) < 2.0
    # the new level arrives within 100 ms of the swap (plus the path's own delay through two null sinks)
    levels = np.array([rms_db(c) for c in recorder.chunks])
    arrived = times[(times > swap_time) & (levels > reference - 6 - 1.0)]
    # the swap itself: the next callback block runs the new board (a 512-frame block is 11.6 ms)
    assert 0 <= first_used < 0.1, first_used
    # heard in the recording: that, plus the path through two null sinks and the recorder's 10 ms chunks
    assert arrived.size and arrived[0] - swap_time < first_used + 0.2
    # no dropout: every 10 ms chunk between the tone's start and end is sounding
    idx = np.flatnonzero(np.abs(x) > 0.05)
    steady = x[idx[0] + chunk : idx[-1] - chunk]
    chunk_levels = [rms_db(steady[i : i + chunk]) for i in range(0, len(steady) - chunk, chunk)]
    assert min(chunk_levels) > reference - 12 - 3
    assert dropouts == 0


def test_plugins_with_latency_fill_every_block(pulse):
    """A plugin with latency returns fewer samples at first with reset=False: the stream pads with silence."""
    from stompbox._internal import AddLatency

    recorder = Recorder("Monitor of SinkB")
    recorder.start()
    with AudioStream(output_device_name="SinkB", sample_rate=RATE, num_output_channels=1) as out:
        out.plugins = stompbox.Pedalboard([AddLatency(samples=1000)])
        out.write(tone(0.5), RATE)
        out.plugins = stompbox.Pedalboard([AddLatency(samples=300), stompbox.Gain(-6)])  # swapped mid-stream
        out.write(tone(0.5), RATE)
        time.sleep(0.2)
    x = recorder.stop()
    seg = sounding(x)
    assert abs(peak_frequency(seg) - 440) < 2.0
    assert out.output_underrun_frame_count == 0


def test_read_reports_dropped_input(pulse, monkeypatch):
    monkeypatch.setattr(live, "INPUT_BUFFER_SECONDS", 0.05)
    with AudioStream(input_device_name="Monitor of SinkA", sample_rate=RATE, buffer_size=256) as stream:
        deadline = time.monotonic() + 5  # nobody reads: the 50 ms buffer overflows
        while stream.dropped_input_frame_count == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stream.dropped_input_frame_count > 0
        with pytest.raises(RuntimeError, match="dropped"):
            stream.read(100)
        assert stream.read(100).shape == (1, 100)  # reported once, then reading goes on
        time.sleep(0.3)
        stream.ignore_dropped_input = True
        assert stream.read(100).shape == (1, 100)
        assert stream.read().ndim == 2  # 0: whatever is buffered, at once


def test_play_file_and_record_to_file_stream_in_bounded_blocks(pulse, tmp_path):
    src = tmp_path / "in.wav"
    soundfile.write(src, np.stack([tone(1.0, 440), tone(1.0, 660)], axis=1), RATE)
    recorder = Recorder("Monitor of SinkB", num_input_channels=2)
    recorder.start()
    played = live.play_file(src, [stompbox.Gain(-6)], "SinkB")
    time.sleep(0.1)
    recorder.stop()
    assert played == RATE
    chunks = np.concatenate([c for c in recorder.chunks])  # channel 0 only (Recorder keeps [0])
    seg = sounding(chunks)
    assert abs(peak_frequency(seg) - 440) < 1.0
    assert abs(rms_db(seg) - rms_db(tone(1.0)) + 6) < 1.0


# ------------------------------------------------------------------------------------------ failures
def test_killed_server_ends_read_and_write_within_two_seconds(doomed_pulse):
    sink = "SinkA"
    writer = AudioStream(output_device_name=sink, sample_rate=RATE)
    reader = AudioStream(input_device_name="Monitor of SinkA", sample_rate=RATE)
    results: dict[str, tuple[type, float]] = {}

    def read_forever() -> None:
        try:
            with reader:
                reader.read(60 * RATE)
        except BaseException as error:
            results["read"] = (type(error), time.perf_counter())

    thread = threading.Thread(target=read_forever, daemon=True)
    thread.start()
    killed: list[float] = []

    def kill_later() -> None:
        time.sleep(2.5)
        killed.append(time.perf_counter())
        doomed_pulse.kill()

    threading.Thread(target=kill_later, daemon=True).start()
    with pytest.raises(AudioDeviceError, match="stopped"):
        with writer:
            writer.write(tone(60.0), RATE)
    raised = time.perf_counter()
    thread.join(5)
    assert killed and raised - killed[0] < 2.0
    assert "read" in results and issubclass(results["read"][0], RuntimeError)
    assert results["read"][1] - killed[0] < 2.0
    assert not writer.running and not reader.running


# ------------------------------------------------------------------------------------------ interpreter exit
@pytest.mark.parametrize("started", [False, True], ids=["never-started", "left-running"])
def test_a_script_that_leaves_a_stream_open_exits_at_once(pulse, started):
    """A stream dropped at interpreter exit (never started, or left running) is released without a hang: the
    device used to be closed on a new thread, and no thread can start while the interpreter shuts down."""
    script = (
        "from stompbox.live.stream import AudioStream\n"
        "stream = AudioStream(output_device_name='SinkA')\n"
        + ("stream.__enter__()\n" if started else "")
        + "print(stream.running)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=pulse.env | {"STOMPBOX_AUDIO_BACKEND": "pulseaudio"},
        capture_output=True,
        text=True,
        timeout=15,  # under the live tests' 30-s hard limit, so a hang fails here
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(started)
