"""The ``stompbox`` command in pipes, with SoX and FFmpeg as the oracles: ``-`` streams standard input and output
in every command that reads or writes audio (no temporary copies), the output starts at once, an endless
producer cut off by ``head`` ends the pipeline quietly in bounded memory, raw PCM goes both ways in SoX's
vocabulary, and a WAV written to a pipe has the unknown-length header FFmpeg writes there."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from stompbox.io import AudioFile

pytestmark = pytest.mark.skipif(shutil.which("sox") is None, reason="needs SoX")

CLI = [sys.executable, "-m", "stompbox"]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def _run(*args, **kwargs):
    return subprocess.run([*CLI, *args], capture_output=True, timeout=300, env=ENV, **kwargs)


def _sox(*args):
    return subprocess.run(["sox", *args], capture_output=True, check=True, timeout=300).stdout


@pytest.fixture(scope="module")
def tone(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipes") / "tone.wav"
    _sox("-n", "-r", "44100", "-c", "2", "-b", "16", str(path), "synth", "3", "sine", "440", "gain", "-6")
    return str(path)


def _read_within(stream, size, seconds):
    """Up to ``size`` bytes of ``stream`` (less at its end), or None if they did not come within ``seconds``."""
    got = []
    reader = threading.Thread(target=lambda: got.append(stream.read(size)), daemon=True)
    reader.start()
    reader.join(seconds)
    return got[0] if got else None


def test_the_first_byte_comes_before_the_render_is_done(tmp_path):
    """``render - - reverb`` on 10 minutes of audio fed by this test: the output's header and first block come
    out while the test still holds back most of the input, so before the render can be done (the output was
    written once the whole render was: nothing came until the input's end). The time to the first byte is
    measured by ``bench/startup.py cli``, not here."""
    long = tmp_path / "long.wav"
    _sox("-n", "-r", "16000", "-c", "1", "-b", "16", str(long), "synth", "600", "sine", "440")
    data = long.read_bytes()
    first_part = 44 + 10 * 16000 * 2  # the header and 10 s of the 600
    process = subprocess.Popen(
        [*CLI, "render", "-", "-", "--type", "wav", "-q", "reverb"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    go_on = threading.Event()

    def feed():  # 10 s of the input, then the rest once the test has seen output: it never waits for both
        try:
            process.stdin.write(data[:first_part])
            process.stdin.flush()
            go_on.wait(300)
            process.stdin.write(data[first_part:])
            process.stdin.close()
        except (BrokenPipeError, ValueError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        head = _read_within(process.stdout, 44, 120)  # the header is sent before the effect is even loaded
        assert head is not None and head[:4] == b"RIFF" and head[8:12] == b"WAVE"
        block = _read_within(process.stdout, 16000 * 2, 120)  # and the first second of audio follows
        assert block is not None and len(block) == 16000 * 2
        assert not go_on.is_set() and process.poll() is None  # while 590 s of the input are still held back
        go_on.set()
        rest = _read_within(process.stdout, -1, 300)
        assert process.wait(timeout=300) == 0, process.stderr.read()
    finally:
        go_on.set()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert rest is not None
    whole = head + block + rest
    assert len(whole) - whole.index(b"data") - 8 == 600 * 16000 * 2  # every sample came out, and nothing else
    assert np.abs(np.frombuffer(whole[-16000 * 2 :], "<i2")).max() > 1000  # the reverb's output, not silence


def test_an_endless_producer_cut_off_by_head_ends_quietly_in_bounded_memory():
    """An hour of audio from SoX through ``render - -`` into ``head``: the pipeline ends as soon as head has its
    10 MB (the whole hour is 691 MB of 32-bit samples), stompbox says nothing and exits as SoX does (141), and
    its peak memory stays far below the hour's size."""
    sox = subprocess.Popen(
        ["sox", "-n", "-t", "wav", "-", "synth", "3600", "sine", "440"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    # the command, reporting its peak resident memory (VmHWM: ru_maxrss would count the forked test process)
    code = (
        "import sys; from stompbox.cli.main import main; status = main(sys.argv[1:]); "
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0], file=sys.stderr); "
        "sys.exit(status)"
    )
    ours = subprocess.Popen(
        [sys.executable, "-c", code, "render", "-", "-", "--type", "wav", "gain", "-3"],
        stdin=sox.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    sox.stdout.close()
    head = subprocess.Popen(["head", "-c", "10000000"], stdin=ours.stdout, stdout=subprocess.PIPE)
    ours.stdout.close()
    start = time.perf_counter()
    taken = len(head.communicate(timeout=120)[0])
    ours.wait(timeout=60)
    elapsed = time.perf_counter() - start
    *lines, peak_kib = ours.stderr.read().decode().splitlines()
    stderr = "\n".join(lines)
    sox.wait(timeout=60)
    assert taken == 10_000_000
    assert elapsed < 60
    assert ours.returncode == 141, stderr
    assert stderr.strip() == "stompbox: note: read 'gain -3' as gain gain_db=-3"
    assert int(peak_kib) * 1024 < 250e6  # the hour alone is 691 MB (measured: 153 MB, Numba's compiler included)


def test_wav_to_a_pipe_has_ffmpegs_unknown_length_header(tone):
    done = subprocess.run(
        f"{' '.join(CLI)} render {tone} - -t wav gain gain_db=-6 | cat", shell=True, capture_output=True, env=ENV
    )
    data = done.stdout
    assert done.returncode == 0, done.stderr
    assert data[:4] == b"RIFF" and struct.unpack("<I", data[4:8])[0] == 0xFFFFFFFF
    at = data.index(b"data")
    assert struct.unpack("<I", data[at + 4 : at + 8])[0] == 0xFFFFFFFF
    assert len(data) - at - 8 == 3 * 44100 * 4  # all the samples follow, and nothing else
    # FFmpeg, SoX and stompbox read it to the end of the stream
    with AudioFile(__import__("io").BytesIO(data)) as f:
        assert f.read(10**6).shape == (2, 3 * 44100)
    if shutil.which("ffprobe"):
        probe = subprocess.run(
            ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "json", "-"],
            input=data,
            capture_output=True,
        )
        stream = json.loads(probe.stdout)["streams"][0]
        assert (stream["codec_name"], stream["sample_rate"], stream["channels"]) == ("pcm_s16le", "44100", 2)
    decoded = subprocess.run(["sox", "-t", "wav", "-", "-t", "s16", "-"], input=data, capture_output=True).stdout
    assert len(decoded) == 3 * 44100 * 4


@pytest.mark.parametrize("kind", ["flac", "ogg", "mp3", "opus"])
def test_compressed_formats_stream_to_a_pipe(tone, kind):
    """What FFmpeg decodes from the pipe is the tone (lossy: its length within a codec frame, its level)."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("needs ffmpeg")
    done = subprocess.run(f"{' '.join(CLI)} convert {tone} - -t {kind} | cat", shell=True, capture_output=True, env=ENV)
    assert done.returncode == 0, done.stderr
    decoded = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", "-", "-f", "f32le", "-ac", "2", "-ar", "44100", "-"],
        input=done.stdout,
        capture_output=True,
    )
    assert decoded.returncode == 0, decoded.stderr
    samples = np.frombuffer(decoded.stdout, np.float32).reshape(-1, 2)
    assert abs(samples.shape[0] - 3 * 44100) <= 2 * 1152 + 960  # lossy codecs' framing and resampling
    rms = np.sqrt(np.mean(samples[4410:-4410] ** 2))
    assert rms == pytest.approx(0.5 / np.sqrt(2), rel=0.05)  # a sine at -6 dBFS
    if kind == "flac":
        x = np.frombuffer(_sox(tone, "-t", "f32", "-"), np.float32).reshape(-1, 2)
        np.testing.assert_allclose(samples, x, atol=1 / 32767)


def test_m4a_to_a_pipe_is_a_one_line_error(tone):
    done = _run("convert", tone, "-", "-t", "m4a")
    assert done.returncode == 1 and done.stderr.count(b"\n") == 1 and b"non-seekable" in done.stderr


def test_raw_pcm_both_ways_in_soxs_vocabulary(tone):
    """Raw PCM from SoX into stompbox and back out: the same integers as SoX's own raw, every encoding."""
    for encoding, bits in [("signed-integer", 16), ("signed-integer", 24), ("unsigned-integer", 8),
                           ("floating-point", 32), ("signed-integer", 32)]:  # fmt: skip
        raw = _sox(tone, "-t", "raw", "-e", encoding, "-b", str(bits), "-")
        args = ["-r", "44100", "-c", "2", "-e", encoding, "-b", str(bits)]
        done = _run("convert", "-", "-", "--input-type", "raw", "-t", "raw", *args, input=raw)
        assert done.returncode == 0, done.stderr
        assert done.stdout == raw, encoding  # exact integers (and floats) through and back
        wav = _run("convert", "-", "-", "--input-type", "raw", *args, "-t", "wav", input=raw).stdout
        via_sox = subprocess.run(["sox", "-t", "wav", "-", "-t", "raw", "-e", encoding, "-b", str(bits), "-"],
                                 input=wav, capture_output=True).stdout  # fmt: skip
        assert via_sox == raw, encoding


def test_raw_input_needs_its_layout():
    done = _run("convert", "-", "-", "--input-type", "raw", input=b"\0" * 64)
    assert done.returncode == 2 and b"-r RATE -c CHANNELS" in done.stderr and done.stderr.count(b"\n") == 1


@pytest.mark.parametrize("command", ["info", "loudness"])
def test_readers_take_standard_input(tone, command):
    with open(tone, "rb") as f:
        piped = _run(command, "--json", "-", stdin=f)
    direct = _run(command, "--json", tone)
    assert piped.returncode == 0 and direct.returncode == 0, piped.stderr
    (got,), (expected,) = json.loads(piped.stdout), json.loads(direct.stdout)
    assert got["path"] == "-" and got["samplerate"] == expected["samplerate"] == 44100
    assert got["frames"] == expected["frames"] == 3 * 44100


def test_convert_from_a_real_pipe_to_a_file(tone, tmp_path):
    out = tmp_path / "out.flac"
    done = subprocess.run(f"cat {tone} | {' '.join(CLI)} convert - {out}", shell=True, capture_output=True, env=ENV)
    assert done.returncode == 0, done.stderr
    with AudioFile(str(out)) as f, AudioFile(tone) as g:
        np.testing.assert_array_equal(f.read(f.frames), g.read(g.frames))


def test_empty_and_terminal_stdin_are_one_line_errors():
    done = _run("convert", "-", "-", input=b"")
    assert done.returncode == 1 and done.stderr == b"stompbox: error: standard input is empty\n"


def test_audio_is_not_written_to_a_terminal(tone):
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run([*CLI, "convert", tone, "-"], stdout=follower, stderr=subprocess.PIPE, env=ENV,
                              timeout=120)  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2 and b"standard output is a terminal" in done.stderr
