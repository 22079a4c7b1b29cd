"""``stompbox render`` and the streaming core under it (``stompbox.batch.stream_through``).

The reference is the Python API: a file rendered by the command line must hold exactly the samples that
``board(whole_input_with_tail_silence, samplerate)`` returns, and have exactly that length, whatever the
block size and whatever latency the chain has.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import stompbox
from _audio import music
from stompbox._internal import AddLatency
from stompbox.batch import stream_through
from stompbox.cli.array_source import ArraySource
from stompbox.cli.main import main
from stompbox.io import AudioFile

SR = 44100


def _stream(board, x, tail=0, block=4096):
    blocks = []
    counts = stream_through(board, ArraySource(x, SR), blocks.append, tail_frames=tail, block_frames=block)
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((x.shape[0], 0), np.float32), counts


def _padded(x, tail):
    return np.concatenate([x, np.zeros((x.shape[0], tail), np.float32)], axis=1)


# ------------------------------------------------------------------ the streaming core, on arrays


@pytest.mark.parametrize("block", [4096, 1000, 37])
def test_latency_is_flushed_to_the_exact_input_length(block):
    x = music(0.5)
    out, (read, written) = _stream(AddLatency(1500), x, block=block)
    assert read == written == x.shape[1]
    assert np.array_equal(out, x)  # a pure delay reported as latency gives the input back, sample for sample


@pytest.mark.parametrize("block", [8192, 3000])
def test_stream_equals_whole_array_processing_with_latency_and_tail(block):
    x = music(0.6)
    tail = 5000
    make = lambda: stompbox.Pedalboard(  # noqa: E731
        [
            stompbox.Distortion(drive_db=12),
            AddLatency(700),
            stompbox.BrickwallLimiter(),
            stompbox.Delay(0.05, 0.3),
        ]
    )
    out, (read, written) = _stream(make(), x, tail=tail, block=block)
    assert (read, written) == (x.shape[1], x.shape[1] + tail)
    expected = make()(_padded(x, tail), SR)
    assert out.shape == expected.shape
    assert np.array_equal(out, expected)


def test_tail_lets_a_delay_ring_out():
    x = np.zeros((1, 1000), np.float32)
    x[0, -1] = 1.0  # an impulse on the last input sample
    delay = int(0.1 * SR)
    out, (_, written) = _stream(stompbox.Delay(delay_seconds=0.1, mix=1.0), x, tail=delay + 10)
    assert written == 1000 + delay + 10
    assert np.argmax(np.abs(out[0])) == 999 + delay  # the echo lands inside the tail
    assert out[0, 999 + delay] == pytest.approx(1.0, abs=1e-6)


def test_empty_input_gives_only_the_tail():
    out, counts = _stream(AddLatency(100), np.zeros((2, 0), np.float32), tail=50)
    assert counts == (0, 50) and out.shape == (2, 50) and not out.any()


def test_the_board_is_reset_between_renders():
    board = stompbox.Pedalboard([stompbox.Delay(delay_seconds=0.01, feedback=0.5), AddLatency(300)])
    x = music(0.2)
    first, _ = _stream(board, x, tail=2000)
    second, _ = _stream(board, x, tail=2000)
    assert np.array_equal(first, second)


# ------------------------------------------------------------------ the command line, on files


@pytest.fixture
def io_ready():
    try:
        from stompbox.io import AudioFile  # noqa: F401
    except ImportError:
        pytest.skip("stompbox.io.AudioFile is not available yet")


@pytest.fixture
def song(tmp_path, io_ready):
    path = tmp_path / "song.wav"
    sf.write(path, music(1.0).T, SR, subtype="FLOAT")
    return str(path)


def _read(path):
    data, rate = sf.read(path, dtype="float32", always_2d=True)
    return data.T, rate


def test_render_equals_the_python_api(song, tmp_path):
    out = str(tmp_path / "out.wav")
    argv = [
        "render", song, out, "distortion", "drive_db=20", "ladderfilter", "mode=HPF24", "cutoff_hz=300",
        "delay", "delay_seconds=0.05", "feedback=0.4", "reverb", "room_size=0.75", "--quiet",
    ]  # fmt: skip
    assert main(argv) == 0
    y, rate = _read(out)
    x, _ = _read(song)
    board = stompbox.Pedalboard(
        [
            stompbox.Distortion(drive_db=20),
            stompbox.LadderFilter(mode=stompbox.LadderFilter.Mode.HPF24, cutoff_hz=300),
            stompbox.Delay(delay_seconds=0.05, feedback=0.4),
            stompbox.Reverb(room_size=0.75),
        ]
    )
    assert rate == SR
    assert sf.info(out).subtype == "FLOAT"  # the input's sample type is kept
    assert np.array_equal(y, board(x, SR))


def test_render_with_latency_gives_the_input_length_and_tail(song, tmp_path):
    out = str(tmp_path / "out.wav")
    assert main(["render", song, out, "pitchshift", "semitones=3", "brickwalllimiter", "--tail", "0.25"]) == 0
    y, _ = _read(out)
    x, _ = _read(song)
    assert y.shape[1] == x.shape[1] + int(0.25 * SR)
    board = stompbox.Pedalboard([stompbox.PitchShift(semitones=3), stompbox.BrickwallLimiter()])
    assert np.array_equal(y, board(_padded(x, int(0.25 * SR)), SR))
    assert board.latency_samples > 2000  # the chain really had latency to compensate


def test_chain_file_then_command_line_effects_and_save_chain(song, tmp_path):
    chain = str(tmp_path / "chain.yaml")
    stompbox.Pedalboard([stompbox.Gain(gain_db=-6), stompbox.Delay(delay_seconds=0.02)]).save(chain)
    out, saved = str(tmp_path / "out.wav"), str(tmp_path / "all.json")
    assert main(["render", song, out, "--chain", chain, "invert", "--save-chain", saved, "--tail", "auto"]) == 0
    board = stompbox.load_chain(saved)
    assert [type(p) for p in board] == [stompbox.Gain, stompbox.Delay, stompbox.Invert]
    y, _ = _read(out)
    x, _ = _read(song)
    # "auto": until the output stays below -80 dBFS, as stompbox.render decides it
    from stompbox.render import render

    expected = render(x, SR, board, "auto", max_tail_seconds=60)
    assert y.shape[1] > x.shape[1] and np.array_equal(y, expected)
    last = np.flatnonzero((np.abs(y) >= 1e-4).any(axis=0))[-1]
    assert last == y.shape[1] - 1  # the tail ends right after its last sample above -80 dBFS


def test_output_options(song, tmp_path):
    out = str(tmp_path / "out.flac")
    argv = ["render", song, out, "gain", "gain_db=-3", "-r", "22050", "-c", "1", "-b", "24"]
    assert main(argv) == 0
    info = sf.info(out)
    assert (info.samplerate, info.channels, info.subtype) == (22050, 1, "PCM_24")
    assert info.frames == 22050  # one second, resampled


def test_no_effects_copies(song, tmp_path):
    out = str(tmp_path / "copy.wav")
    assert main(["render", song, out]) == 0
    assert np.array_equal(_read(out)[0], _read(song)[0])


@pytest.mark.parametrize(
    "argv_tail, status, pieces",
    [
        (["distorton"], 2, ["unknown effect 'distorton'", "Distortion"]),
        (["delay", "delay_time=1"], 2, ["Delay has no parameter 'delay_time'", "delay_seconds"]),
        (["reverb", "room_size=2"], 2, ["room_size", "[0, 1]"]),
        (["ladderfilter", "mode=HPF48"], 2, ["HPF24"]),
        (["--chain", "/nonexistent/chain.json"], 1, ["no such chain file"]),
    ],
)
def test_errors_are_one_line_with_exit_status(song, tmp_path, capsys, argv_tail, status, pieces):
    out = tmp_path / "out.wav"
    assert main(["render", song, str(out), *argv_tail]) == status
    err = capsys.readouterr().err
    assert err.startswith("stompbox: error:") and err.count("\n") == 1, err
    for piece in pieces:
        assert piece in err
    assert not out.exists()


def test_tail_auto_is_capped(song, tmp_path):
    out = str(tmp_path / "out.wav")
    assert main(["render", song, out, "delay", "delay_seconds=0.01", "feedback=1", "--tail", "auto"]) == 0
    assert sf.info(out).frames == SR + 60 * SR  # an endless echo: 60 s of tail, not forever


def test_missing_input_and_usage(tmp_path, capsys, io_ready):
    assert main(["render", str(tmp_path / "nope.wav"), str(tmp_path / "o.wav"), "gain"]) == 1
    assert "nope.wav: no such file" in capsys.readouterr().err
    assert main(["render", str(tmp_path / "only_in.wav")]) == 2
    assert main(["render", "a.wav", "b.wav", "--tail", "-1"]) == 2
    capsys.readouterr()


def test_a_failed_render_leaves_no_output(song, tmp_path):
    out = tmp_path / "out.xyz"  # an unknown format
    assert main(["render", song, str(out), "gain"]) == 1
    assert os.listdir(tmp_path) == ["song.wav"]


def _cli(*args, **kwargs):
    code = "import sys; from stompbox.cli.main import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, timeout=120, **kwargs)


def test_stdin_to_stdout_pipe(song, tmp_path):
    with open(song, "rb") as f:
        done = _cli("render", "-", "-", "gain", "gain_db=-6", "--format", "flac", "-b", "24", stdin=f)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""  # not a terminal: no progress bar
    piped = tmp_path / "piped.flac"
    piped.write_bytes(done.stdout)
    with AudioFile(str(piped)) as f:  # written to a pipe: STREAMINFO's total is 0 (unknown), as flac's and FFmpeg's
        y, rate = f.read(10 * SR), f.samplerate
    x, _ = _read(song)
    assert rate == SR and y.shape == x.shape
    assert np.abs(y - x * 10 ** (-6 / 20)).max() < 2**-22  # 24-bit FLAC of the same samples


def test_pipe_errors_exit_nonzero_with_one_line(tmp_path, io_ready):
    done = _cli("render", "-", "-", "gain", input=b"")
    assert done.returncode == 1 and b"standard input is empty" in done.stderr
    done = _cli("render", "-", "-", "nosuchfx", input=b"RIFF")
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr


def test_effects_listing(capsys):
    assert main(["effects"]) == 0
    text = capsys.readouterr().out
    assert "Delay: " in text and "delay_seconds=0.5" in text and "[0, 30] s" in text
    assert "mode=LPF12" in text and "HPF24" in text
    assert main(["effects", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    by_name = {e["name"]: e for e in listing}
    assert set(by_name) == set(stompbox.cli.grammar.builtin_effects())
    delay = {p["name"]: p for p in by_name["Delay"]["parameters"]}
    assert delay["delay_seconds"] == {
        "name": "delay_seconds", "type": "float", "default": 0.5, "minimum": 0.0, "maximum": 30.0,
        "range": "[0, 30] s", "unit": "s", "automation": "per sample", "doc": delay["delay_seconds"]["doc"],
    }  # fmt: skip
    assert {p["name"]: p["automation"] for p in by_name["Limiter"]["parameters"]} == {
        "threshold_db": "per block", "release_ms": "per block"
    }  # fmt: skip
    assert "delay time (automatable per sample)" in text
    for effect in listing:  # every listed default is accepted back by the grammar
        cls = stompbox.cli.grammar.find_effect(effect["name"])
        for p in cls.parameter_specs().values():
            listed = next(q for q in effect["parameters"] if q["name"] == p.name)
            assert listed["default"] == (p.default.name if hasattr(p.default, "name") else p.default)
    ladder = next(p for p in by_name["LadderFilter"]["parameters"] if p["name"] == "mode")
    assert ladder["choices"] == ["LPF12", "HPF12", "BPF12", "LPF24", "HPF24", "BPF24"]
    assert main(["effects", "reverb"]) == 0
    assert capsys.readouterr().out.startswith("Reverb: ")
    assert main(["effects", "reverbb"]) == 2
    assert "did you mean Reverb?" in capsys.readouterr().err


# Runs a command and prints its peak RSS in KiB. A process started from pytest (by fork or vfork) takes the peak
# RSS of pytest's memory, ~1 GB late in a run, into its own ru_maxrss when it execs; the command is started from
# this small interpreter instead, so its ru_maxrss is its own.
_PEAK_OF_CHILD = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(child.pid, 0)
errors = child.stderr.read().decode()
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(errors)
print(usage.ru_maxrss)
"""


def test_one_hour_render_runs_in_bounded_memory_and_matches_the_python_api(tmp_path, io_ready):
    """``stompbox render`` of a 1-hour stereo file through the talk's chain costs no more memory than a 2-second
    one: the whole command's peak RSS (``ru_maxrss`` of the process, start-up included) is within 10 MiB of the
    same command's on the file's first two seconds, and under 200 MiB; the output holds exactly the samples the
    Python API gives when the same file is streamed through the same chain in 1-second blocks (the command uses
    65536-frame blocks).

    Most of the peak is the runtime: Python, NumPy and Numba/LLVM take 140-155 MiB before the first sample,
    depending on which kernels are loaded from Numba's cache and which must be compiled; rendering an hour adds
    under 3 MiB. Comparing with the short render, made the same way right before, takes the runtime out."""
    from stompbox.io import AudioFile

    if shutil.disk_usage(tmp_path).free < 2.5e9:
        pytest.skip("needs 2.5 GB of free disk")
    source, target = tmp_path / "hour.wav", tmp_path / "out.wav"
    short = tmp_path / "two-seconds.wav"
    minute = (np.random.default_rng(0).standard_normal((SR * 60, 2)) * 3000).astype(np.int16)
    with sf.SoundFile(source, "w", SR, 2, subtype="PCM_16") as f:
        for _ in range(60):
            f.write(minute)
    sf.write(short, minute[: 2 * SR], SR, subtype="PCM_16")
    effects = ["distortion", "drive_db=25", "delay", "delay_seconds=0.6", "reverb", "room_size=0.75"]

    def peak_mib(path: Path, out: Path) -> float:
        command = [sys.executable, "-m", "stompbox", "render", str(path), str(out), *effects, "--bit-depth", "32"]
        done = subprocess.run(
            [sys.executable, "-c", _PEAK_OF_CHILD, *command], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return int(done.stdout.split()[-1]) / 1024

    runtime = peak_mib(short, tmp_path / "two-seconds-out.wav")  # (also brings every kernel into the cache)
    hour = peak_mib(source, target)
    assert hour - runtime < 10, f"peak RSS {hour:.1f} MiB for an hour against {runtime:.1f} MiB for two seconds"
    assert hour < 200, f"peak RSS {hour:.1f} MiB"
    board = stompbox.Pedalboard(
        [stompbox.Distortion(drive_db=25), stompbox.Delay(delay_seconds=0.6), stompbox.Reverb(room_size=0.75)]
    )
    worst, frames = 0.0, 0
    with AudioFile(str(source)) as original, AudioFile(str(target)) as rendered:
        assert rendered.frames == original.frames == SR * 3600
        while (block := original.read(SR)).shape[1]:
            expected = board.process(block, SR, reset=False)
            got = rendered.read(block.shape[1])
            worst = max(worst, float(np.max(np.abs(got - expected))))
            frames += block.shape[1]
    assert frames == SR * 3600
    assert worst == 0.0, worst
