"""Reading and writing files never loads Numba by itself: an I/O-only process stays ~110 MB smaller and starts
a quarter of a second sooner. Once stompbox's effects have loaded Numba, the compiled conversions take over; both
ways give the same bits."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

_JOB = textwrap.dedent(
    """
    import sys
    import numpy as np
    from stompbox.io import AudioFile

    folder = sys.argv[1]
    x = (0.3 * np.random.default_rng(0).standard_normal((2, 44100 * 30))).astype(np.float32)
    for depth in (8, 16, 24, 32):
        path = f"{folder}/numpy{depth}.wav"
        with AudioFile(path, "w", 44100, 2, bit_depth=depth) as out:
            out.write(x)  # 30 s in one call
            out.write(x[:, :1000].T.copy())  # channels-last
        with AudioFile(path) as f:
            f.read(f.frames)
            f.seek(0)
            while f.read(4096).shape[1]:
                pass
    print("numba" in sys.modules)
    import stompbox

    stompbox.Gain()  # an effect: Numba is set up now
    for depth in (8, 16, 24, 32):
        with AudioFile(f"{folder}/numba{depth}.wav", "w", 44100, 2, bit_depth=depth) as out:
            out.write(x)
            out.write(x[:, :1000].T.copy())
    print("numba" in sys.modules)
    """
)


def test_io_alone_does_not_load_numba_and_both_conversions_agree(tmp_path):
    done = subprocess.run([sys.executable, "-c", _JOB, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True"]
    from stompbox.io import AudioFile

    for depth in (8, 16, 24, 32):
        assert (tmp_path / f"numpy{depth}.wav").read_bytes() == (tmp_path / f"numba{depth}.wav").read_bytes()
        with AudioFile(str(tmp_path / f"numba{depth}.wav")) as f:
            assert f.frames == 44100 * 30 + 1000


@pytest.mark.parametrize("channels", [1, 2, 3])
@pytest.mark.parametrize("frames", [1, 65535, 65536, 65537, 200_000])
def test_numpy_quantising_in_steps_equals_one_pass(frames, channels):
    """Including the stereo 16- and 32-bit interleaving, which packs each frame's two integers into one."""
    from stompbox.io.audiofile import _quantize_in_steps, quantize_interleave

    x = (0.7 * np.random.default_rng(frames).standard_normal((channels, frames))).astype(np.float32)
    x[0, 0] = np.nan
    x[-1, -1] = 2.0
    for depth in ("int16", "int24", "int32"):
        for view in (x.T, np.ascontiguousarray(x.T), x[:, 1:].T, x.T[1:]):  # slices of either layout too
            assert np.array_equal(_quantize_in_steps(view, depth), quantize_interleave(view, depth))


@pytest.mark.parametrize("numba", [False, True])
def test_a_long_24_bit_write_in_steps_writes_the_same_bytes(numba, tmp_path, monkeypatch):
    """A long 24-bit write quantises its next step on the helper thread while it writes this one; the file is
    byte for byte the one a single-step write makes, whatever the layout and the step (an uneven last step
    included), with either conversion."""
    import stompbox.io.audiofile as audiofile
    from stompbox._base import jit
    from stompbox.io import AudioFile

    monkeypatch.setattr(jit, "loaded", lambda: numba)
    x = (0.5 * np.random.default_rng(4).standard_normal((2, 30_011))).astype(np.float32)
    for name, samples in {"first": x, "last": np.ascontiguousarray(x.T), "slice": x[:, 11:]}.items():
        files = []
        for step in (1 << 30, 1000, 4096):
            monkeypatch.setattr(audiofile, "PIPELINE_FRAMES", step)
            path = tmp_path / f"{name}-{step}.wav"
            with AudioFile(str(path), "w", 44100, 2, bit_depth=24) as out:
                out.write(samples)
                assert out.frames == max(samples.shape)
            files.append(path.read_bytes())
        assert files[0] == files[1] == files[2], name


def test_a_failing_target_in_the_middle_of_a_long_24_bit_write(monkeypatch):
    """The target fails after a few steps: the write raises the target's error once the helper thread is done
    with the caller's array, and the file object reports what was written before."""
    import io

    import stompbox.io.audiofile as audiofile
    from stompbox.io import AudioFile

    class Fails(io.BytesIO):
        def write(self, data):
            if self.tell() > 20_000:
                raise OSError("disk full")
            return super().write(data)

    monkeypatch.setattr(audiofile, "PIPELINE_FRAMES", 1000)
    x = (0.5 * np.random.default_rng(5).standard_normal((2, 50_000))).astype(np.float32)
    out = AudioFile(Fails(), "w", 44100, 2, format="wav", bit_depth=24)
    with pytest.raises(OSError, match="disk full"):
        out.write(x)
    assert 0 < out.frames < 50_000
    with pytest.raises(OSError):
        out.close()
