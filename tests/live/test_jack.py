"""AudioStream on a JACK server: a private ``jackd`` with its dummy backend (Debian ``jackd2``), started here.

miniaudio's JACK backend is selected with ``STOMPBOX_AUDIO_BACKEND=jack``. The test runs in a subprocess (the
backend is chosen once per process): one stream plays a tone, another records, and their ports are connected to
each other with ``jack_connect`` (JACK moves float samples untouched, so frequency and level come back exact).
miniaudio's JACK backend opens only the server's own channel count (2 here; 1 is refused with "invalid
arguments", which our error message now explains), so the streams are stereo.
pedalboard 0.9.26 cannot be compared here: its JUCE ALSA layer lists "JACK Audio Connection Kit" (the ALSA jack
plugin) but opening it raises ``ValueError('no channels')``, as it does for "PulseAudio Sound Server".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("jackd") is None or shutil.which("jack_connect") is None,
    reason="jackd2 not installed (apt-get install jackd2)",
)
RATE = 48000


@pytest.fixture(scope="module")
def jack():
    name = f"stompbox-test-{os.getpid()}"
    env = {**os.environ, "JACK_DEFAULT_SERVER": name, "JACK_NO_AUDIO_RESERVATION": "1", "JACK_NO_START_SERVER": "1"}
    server = subprocess.Popen(
        ["jackd", "-n", name, "--no-realtime", "-d", "dummy", "-r", str(RATE), "-p", "512"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            probe = subprocess.run(["jack_lsp"], env=env, capture_output=True, text=True, timeout=10)
            if "system:playback_1" in probe.stdout:
                break
            if server.poll() is not None:
                pytest.skip("jackd could not start here")
            time.sleep(0.1)
        else:
            pytest.skip("jackd did not come up within 10 s")
        yield {**env, "STOMPBOX_AUDIO_BACKEND": "jack"}
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()


SCRIPT = textwrap.dedent(
    """
    import subprocess, time
    import numpy as np
    from stompbox.io import AudioStream

    RATE = 48000
    t = np.arange(int(1.5 * RATE)) / RATE
    tone = np.repeat((0.25 * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32)[None, :], 2, axis=0)
    print("devices", AudioStream.output_device_names, AudioStream.input_device_names)

    def ports():
        return subprocess.run(["jack_lsp"], capture_output=True, text=True, check=True).stdout.split()

    with AudioStream(input_device_name="Default Capture Device", sample_rate=RATE, num_input_channels=2) as rec:
        before = set(ports())
        with AudioStream(output_device_name="Default Playback Device", sample_rate=RATE, num_output_channels=2) as out:
            new = [p for p in ports() if p not in before]
            mine = [p for p in ports() if p.endswith(":capture0") and not p.startswith("system:")]
            playback = [p for p in new if p.endswith(":playback0")]
            assert len(mine) == 1 and len(playback) == 1, (mine, playback)
            subprocess.run(["jack_disconnect", "system:capture_1", mine[0]], check=False)
            subprocess.run(["jack_connect", playback[0], mine[0]], check=True)
            rec.read(rec.buffered_input_sample_count)  # drop what came before the connection
            out.write(tone, RATE)
            got = [rec.read(RATE // 10) for _ in range(25)]
        print("rates", rec.sample_rate, out.sample_rate, "dropped", rec.dropped_input_frame_count)
    x = np.concatenate(got, axis=1)[0]  # channel 1: connected to the player's first port
    np.save("recorded.npy", x)
    """
)


def test_tone_through_jack_comes_back_with_its_frequency_and_level(jack, tmp_path):
    import numpy as np

    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=jack, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Default Playback Device" in result.stdout and "Default Capture Device" in result.stdout
    x = np.load(tmp_path / "recorded.npy")
    loud = np.flatnonzero(np.abs(x) > 0.01)
    assert loud.size, "the tone did not come back"
    tone = x[loud[0] : loud[-1] + 1]
    assert abs(len(tone) - 1.5 * RATE) < 0.01 * RATE  # the whole tone, once
    n = 1 << 20
    spectrum = np.abs(np.fft.rfft(tone * np.hanning(len(tone)), n))
    assert abs(np.argmax(spectrum) * RATE / n - 440.0) < 1.0
    level_db = 20 * np.log10(np.sqrt(np.mean(tone.astype(np.float64) ** 2)))
    assert abs(level_db - 20 * np.log10(0.25 / np.sqrt(2))) < 1.0
