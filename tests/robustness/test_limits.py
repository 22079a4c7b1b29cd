"""One rule per kind of number (``stompbox.limits``), and the cases that broke it: crashes inside soxr and
libsndfile, allocations of terabytes, loops of minutes, and exceptions of other libraries reaching the user.

Each value outside a rule raises ``LimitError``: a ``ValueError`` and a ``StompboxError`` whose message states
the allowed range, raised before anything is allocated.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest
import soundfile

import stompbox
from stompbox import BrickwallLimiter, Chorus, Convolution, Delay, Gain, Pedalboard, Reverb
from stompbox.core.errors import StompboxError
from stompbox.io import AudioFile
from stompbox.limits import (
    MAX_CHANNELS_OF_FORMAT,
    MAX_NESTING,
    MAX_SAMPLE_RATE,
    MIN_SAMPLE_RATE,
    LimitError,
)

SR = 44100
RANGE = "from 1 Hz to 10,000,000 Hz"


def test_the_error_is_a_value_error_of_stompbox():
    assert issubclass(LimitError, ValueError) and issubclass(LimitError, StompboxError)
    assert (MIN_SAMPLE_RATE, MAX_SAMPLE_RATE) == (1.0, 10_000_000.0)


# ------------------------------------------------------------------------------------------ sample rates
@pytest.mark.parametrize("cls", [Delay, Reverb, Chorus, BrickwallLimiter])
@pytest.mark.parametrize("rate", [1e12, 2**63, 1e-9, 0.5, float("nan")])
def test_effects_refuse_rates_outside_the_range_before_allocating(cls, rate):
    """1e12 or 2**63 Hz asked NumPy for 128 GiB to 1 EiB; 1e-9 Hz ran Chorus for minutes."""
    with pytest.raises(LimitError, match=RANGE):
        cls()(np.zeros(64, np.float32), rate)


@pytest.mark.parametrize("rate", [MIN_SAMPLE_RATE, MAX_SAMPLE_RATE])
def test_effects_run_at_both_ends_of_the_range(rate):
    x = np.zeros((2, 256), np.float32)
    x[:, 0] = 1.0
    for plugin in (Delay(delay_seconds=0.5), Reverb(), Chorus(), BrickwallLimiter(), Gain(6.0)):
        y = plugin(x, rate)
        assert y.shape == x.shape and np.isfinite(y).all(), plugin


def test_convolution_checks_its_impulse_response_rate_and_the_ratio_to_the_stream():
    ir = np.ones(100, np.float32)
    with pytest.raises(LimitError, match=RANGE):
        Convolution(ir, sample_rate=0)
    slow = Convolution(ir, sample_rate=1)  # stretching it to 44.1 kHz asked for 3.5 GB
    with pytest.raises(LimitError, match="ratio of 44,100:1; at most 4096:1"):
        slow(np.zeros(16, np.float32), SR)
    assert slow(np.zeros(16, np.float32), 4000).shape == (16,)  # 4000:1 is allowed


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 2), (0, 0)])
def test_an_empty_impulse_response_is_a_layout_error(shape):
    """(2, 0) and (0, 2) reached NumPy's 'zero-size array to reduction operation' at the first call."""
    with pytest.raises(stompbox.core.errors.LayoutError, match="empty"):
        Convolution(np.zeros(shape, np.float32), sample_rate=SR)


def test_resampled_to_and_stream_resampler_refuse_what_crashed_soxr(tmp_path):
    path = tmp_path / "a.wav"
    soundfile.write(path, np.zeros(4410, np.float32), SR)
    with AudioFile(str(path)) as f, pytest.raises(LimitError, match=RANGE):
        f.resampled_to(1e9)  # segfaulted inside soxr after 8.4 GB
    with pytest.raises(LimitError, match=RANGE):
        stompbox.io.StreamResampler(0.001, 48000, 1)  # 2 GB for 10 samples


@pytest.mark.parametrize("extension", ["wav", "aiff", "flac", "ogg"])
def test_a_file_declaring_1_hz_is_read_but_not_resampled_past_the_ratio(tmp_path, extension):
    """Headers may say 1 Hz: such a file reads as it is; resampling it to 22050 Hz crashed soxr."""
    path = tmp_path / f"one.{extension}"
    x = np.linspace(-0.5, 0.5, 100, dtype=np.float32)
    soundfile.write(path, x, 1, subtype="PCM_16" if extension != "ogg" else "VORBIS")
    with AudioFile(str(path)) as f:
        assert f.samplerate == 1 and f.frames == 100
        with pytest.raises(LimitError, match="ratio of 22,050:1; at most 4096:1"):
            f.resampled_to(22050)
        assert f.resampled_to(4096).frames == 100 * 4096
        if extension != "ogg":  # 16-bit samples: within two steps
            np.testing.assert_allclose(f.read(100)[0], x, atol=2 / 32768)


@pytest.mark.parametrize("rate", [2**31 - 1, 2**31, 2**32 - 1, 10_000_001])
@pytest.mark.parametrize("extension", ["wav", "aiff"])
def test_writers_refuse_rates_no_reader_gets_back(tmp_path, extension, rate):
    """A WAV at 2**31..2**32-1 Hz could not be read back; an AIFF at 2**31-1 Hz read back as 800,000,000 Hz;
    an AIFF at 2**31 raised soundfile's OverflowError. Nothing is left in the folder."""
    with pytest.raises(LimitError, match=RANGE):
        AudioFile(str(tmp_path / f"x.{extension}"), "w", rate, 1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("extension", ["wav", "aiff"])
def test_the_highest_rate_written_reads_back_exactly(tmp_path, extension):
    path = str(tmp_path / f"x.{extension}")
    with AudioFile(path, "w", 10_000_000, 1) as f:
        f.write(np.zeros(16, np.float32))
    with AudioFile(path) as f:
        assert f.samplerate == 10_000_000


# ------------------------------------------------------------------------------------------ channels
@pytest.mark.parametrize("extension,most", [(k, v) for k, v in MAX_CHANNELS_OF_FORMAT.items()])
def test_each_format_refuses_one_channel_more_than_it_holds(tmp_path, extension, most):
    """An Ogg Vorbis writer of 256 channels segfaulted in libsndfile's sf_close."""
    rate = 48000
    with pytest.raises(LimitError, match=f"(at most {most:,} channels|1 or 2 channels) \\(got {most + 1:,}\\)"):
        AudioFile(str(tmp_path / f"x.{extension}"), "w", rate, most + 1)
    assert list(tmp_path.iterdir()) == []


def test_ogg_vorbis_at_its_most_channels_is_written_and_read_back(tmp_path):
    path = str(tmp_path / "x.ogg")
    with AudioFile(path, "w", 8000, 255) as f:
        f.write(np.zeros((255, 400), np.float32))
    with AudioFile(path) as f:
        assert f.num_channels == 255


# ------------------------------------------------------------------------------------------ tails
def test_render_refuses_a_tail_past_max_tail_seconds_and_the_cap_can_be_raised():
    x = np.zeros(100, np.float32)
    with pytest.raises(LimitError, match=r"max_tail_seconds=30 s \(got 1000000000000.0\)"):
        stompbox.render(x, SR, [Reverb()], tail=1e12)  # grew to a MemoryError
    with pytest.raises(LimitError, match="max_tail_seconds=30"):
        stompbox.render(x, SR, [Gain()], tail=31)
    out = stompbox.render(x, SR, [Gain()], tail=31, max_tail_seconds=31)
    assert out.shape == (100 + 31 * SR,)


def test_cli_render_refuses_a_tail_past_max_tail_before_writing(tmp_path):
    """`stompbox render ... reverb --tail 1e6` wrote 38 GB in 9 minutes."""
    source, target = tmp_path / "in.wav", tmp_path / "out.wav"
    soundfile.write(source, np.zeros(441, np.float32), SR)
    done = subprocess.run(
        [sys.executable, "-m", "stompbox", "render", str(source), str(target), "reverb", "--tail", "1e6"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "--max-tail=60 s (got 1000000.0)" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.wav"]


# ------------------------------------------------------------------------------------------ nesting
def test_boards_nest_at_most_max_nesting_deep_built_either_way():
    """5,000 nested boards raised RecursionError (while building them)."""
    board = Gain()
    for _ in range(MAX_NESTING):
        board = Pedalboard([board])
    assert board(np.ones(8, np.float32), SR).shape == (8,)
    with pytest.raises(LimitError, match=f"at most {MAX_NESTING} levels"):
        Pedalboard([board])
    top = Pedalboard()  # built from the top down, each append is legal; using the result is not
    level = top
    for _ in range(5000):
        inner = Pedalboard()
        level.append(inner)
        level = inner
    with pytest.raises(LimitError, match=f"at most {MAX_NESTING} levels"):
        top(np.ones(8, np.float32), SR)
    with pytest.raises(LimitError, match=f"at most {MAX_NESTING} levels"):
        top.to_dict()
    assert repr(top) == "<Pedalboard with 1 plugin: [...]>"


def test_a_board_sharing_a_plugin_on_every_level_is_refused_at_once():
    """60 levels of Pedalboard([p, p]) are 2**60 paths: walking them never ended."""
    board = Pedalboard([Gain()])
    for _ in range(60):
        board = Pedalboard([board, board])
    start = time.perf_counter()
    with pytest.raises(stompbox.core.errors.DuplicatePluginError):
        board(np.ones(8, np.float32), SR)
    assert time.perf_counter() - start < 5


# ------------------------------------------------------------------------------------------ chain files
def _alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_a_yaml_chain_whose_aliases_expand_past_the_limit_is_refused_before_it_is_built():
    """324 bytes of nested aliases took 40 s and 2.5 GB, and the error formatted the whole object."""
    text = _alias_bomb(6)  # 9**6 = 531,441 values in about 200 bytes
    start = time.perf_counter()
    with pytest.raises(LimitError, match="at most 100,000 values once its YAML aliases are expanded") as caught:
        stompbox.chains.loads(text)
    assert time.perf_counter() - start < 2 and len(str(caught.value)) < 200
    with pytest.raises(LimitError):
        stompbox.chains.loads("&a [*a, 1]")  # an alias inside itself


def test_a_chain_file_larger_than_the_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(stompbox.limits.MAX_CHAIN_FILE_BYTES + 1)
    with pytest.raises(LimitError, match="at most 16,777,216 bytes"):
        stompbox.load_chain(path)


def test_chain_errors_show_a_short_excerpt_of_what_was_found():
    with pytest.raises(stompbox.chains.ChainFormatError) as caught:
        stompbox.chains.loads("[" + ",".join(["[1, 2, 3]"] * 20000) + "]")
    assert len(str(caught.value)) < 200
    assert isinstance(caught.value, StompboxError)


# ------------------------------------------------------------------------------------------ foreign exceptions
def test_nan_samples_to_m4a_are_written_as_silence(tmp_path):
    """NaN reached the user as av.error.ArgumentError; MP3 already wrote NaN as silence, infinities as full
    scale."""
    x = np.full((1, 4096), np.nan, np.float32)
    x[0, 2048:] = np.inf
    path = str(tmp_path / "x.m4a")
    with AudioFile(path, "w", SR, 1) as f:
        f.write(x)
    with AudioFile(path) as f:
        y = f.read(f.frames)
    assert y.shape == (1, 4096) and np.isfinite(y).all()
    assert np.abs(y[0, :1024]).max() < 0.01  # the silent half
    assert np.abs(y[0, 2600:3600]).mean() > 0.5  # the full-scale half


@pytest.mark.parametrize("quality", [float("nan"), float("inf"), 10**400, "9" * 5000])
@pytest.mark.parametrize("extension", ["mp3", "flac", "ogg", "m4a"])
def test_absurd_qualities_are_stompbox_errors(tmp_path, extension, quality):
    """MP3 quality=nan raised "cannot convert float NaN to integer"; 10**400 an OverflowError."""
    with pytest.raises(stompbox.io.UnsupportedFormatError, match="quality"):
        AudioFile(str(tmp_path / f"x.{extension}"), "w", SR, 1, quality=quality)
    assert list(tmp_path.iterdir()) == []


def test_time_stretch_and_loudness_follow_the_same_rate_rule():
    """time_stretch took any positive rate (1e-9 Hz ran); loudness took 1e12 Hz."""
    from stompbox.analysis import loudness

    with pytest.raises(LimitError, match=RANGE):
        stompbox.time_stretch(np.zeros(1000, np.float32), 1e-9, 1.5)
    with pytest.raises(LimitError, match=RANGE):
        loudness(np.zeros((2, 48000), np.float32), 1e12)
    with pytest.raises(LimitError, match="at least 4000 Hz"):  # its own floor inside the range
        loudness(np.zeros((2, 48000), np.float32), 3000)


def test_resample_plugin_targets_follow_the_rate_rule_when_used():
    """Resample(target_sample_rate=0.5) is a valid parameter (as in pedalboard), but resampling to it is not."""
    plugin = stompbox.Resample(target_sample_rate=0.5)
    with pytest.raises(LimitError, match="target_sample_rate must be from 1 Hz"):
        plugin(np.zeros(100, np.float32), 1000)
    assert stompbox.Resample(target_sample_rate=1)(np.zeros(100, np.float32), 1000).shape == (100,)
