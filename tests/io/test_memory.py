"""Bounded memory: a long file streamed through stompbox.io in 1-second chunks stays under 100 MB above the
interpreter's baseline RSS (after its imports), and does not grow with the file's length: between a sixth and five
sixths of the file (codecs set up, buffers allocated, the allocator settled; the end's one-off allocations not yet
made) the peak grows by under 1 MB (thousands of blocks: a leak of a few hundred bytes per block would show). Each
job runs in a fresh subprocess that records its peak RSS after the imports, at a sixth and at five sixths of the
file, and after closing the files.

An I/O-only job never loads Numba (see ``stompbox._base.jit.loaded``): it would add about 110 MB.

The peak is the process's ``VmHWM`` (/proc/self/status), not ``ru_maxrss``: a process started from pytest takes
the peak RSS of pytest's own memory (~1 GB late in a run) into its ``ru_maxrss`` when it execs, which made both
readings that and the job's growth invisible.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import soundfile as sf

LIMIT_MB = 100.0  # peak above the interpreter's RSS after its imports
GROWTH_MB = 1.0  # growth of the peak from a sixth to five sixths of the file

_JOB = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from stompbox.io import AudioFile

    def peak_kib():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

    source, target = sys.argv[1], sys.argv[2]
    imported = peak_kib()
    frames = 0
    settled = late = None
    with AudioFile(source) as f:
        rate = int(f.samplerate)
        out = AudioFile(target, "w", rate, f.num_channels, bit_depth=16) if target != "-" else None
        try:
            while True:
                block = f.read(rate)
                if block.shape[1] == 0:
                    break
                frames += block.shape[1]
                if out is not None:
                    out.write(block)
                if settled is None and frames >= f.frames // 6:
                    settled = peak_kib()
                if late is None and frames >= 5 * f.frames // 6:
                    late = peak_kib()
        finally:
            if out is not None:
                out.close()
    peak = peak_kib()
    print(json.dumps({
        "frames": frames,
        "imported_mb": imported / 1024.0,
        "settled_mb": settled / 1024.0,
        "peak_mb": peak / 1024.0,
        "growth_mb": (late - settled) / 1024.0,
    }))
    """
)


def _run_job(source: str, target: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _JOB, source, target], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def _needs_audiofile():
    try:
        from stompbox.io import AudioFile  # noqa: F401
    except ImportError:
        pytest.skip("stompbox.io.AudioFile is not available yet")


def _need_disk(path, gigabytes: float) -> None:
    if shutil.disk_usage(path).free < gigabytes * 1e9:
        pytest.skip(f"needs {gigabytes} GB of free disk")


def test_one_hour_stereo_wav_read_and_rewritten_in_one_second_chunks(tmp_path):
    _need_disk(tmp_path, 1.5)  # 635 MB in, 635 MB out
    rate, seconds = 44100, 3600
    source = tmp_path / "hour.wav"
    rng = np.random.default_rng(0)
    minute = (rng.standard_normal((rate * 60, 2)) * 3000).astype(np.int16)  # one minute, repeated
    with sf.SoundFile(source, "w", rate, 2, subtype="PCM_16") as f:
        for _ in range(seconds // 60):
            f.write(minute)
    result = _run_job(str(source), str(tmp_path / "copy.wav"))
    assert result["frames"] == rate * seconds
    assert sf.info(tmp_path / "copy.wav").frames == rate * seconds
    _check(result)


def _check(result: dict) -> None:
    assert result["imported_mb"] < 100, result  # the job's own fresh interpreter (not pytest's memory)
    assert result["peak_mb"] - result["imported_mb"] < LIMIT_MB, result
    assert result["growth_mb"] < GROWTH_MB, result


def test_twelve_hour_silent_ogg_streams_through(tmp_path):
    # 12 hours of Vorbis at 8 kHz mono, ~20 s here (encoding 44.1 kHz stereo silence would take minutes):
    # the bound under test is about the stream's length (no buffer grows with it), which is the same here.
    rate, seconds = 8000, 12 * 3600
    source = tmp_path / "silence.ogg"
    block = np.zeros((65536, 1), np.float32)  # libvorbis is only safe with writes of <= 64k frames
    with sf.SoundFile(source, "w", rate, 1, format="OGG", subtype="VORBIS") as f:
        for _ in range(rate * seconds // 65536):
            f.write(block)
        f.write(block[: rate * seconds % 65536])
    result = _run_job(str(source), "-")
    assert result["frames"] == rate * seconds
    _check(result)
