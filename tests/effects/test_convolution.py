"""Convolution: normalisation, agreement with direct convolution, streaming, IR files and resampling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import soundfile

from _audio import SR, diff_db, music, noise, speech
from stompbox import Convolution


def decaying_ir(seconds: float, channels: int = 1, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    return (rng.standard_normal((channels, n)) * np.exp(-np.arange(n) / n * 6)).astype(np.float32)


def linear_convolution(a: np.ndarray, b: np.ndarray, length: int) -> np.ndarray:
    """The first ``length`` samples of the full linear convolution of ``a`` and ``b``, in float64.

    Computed through one zero-padded float64 FFT of at least ``len(a) + len(b) - 1`` points, so nothing wraps
    around: the result is the direct sum ``sum_k a[k] b[n - k]`` up to float64 rounding (relative error ~1e-15,
    i.e. -300 dB, far below the -100 dB the tests ask of the float32 plugin), in O(N log N) instead of np.convolve's
    O(N * M), which took 90 s for a 5 s IR.
    """
    n = a.size + b.size - 1
    size = 1 << max(0, n - 1).bit_length()
    spectrum = np.fft.rfft(a.astype(np.float64), size) * np.fft.rfft(b.astype(np.float64), size)
    return np.fft.irfft(spectrum, size)[:length]


def direct(x: np.ndarray, ir: np.ndarray, mix: float = 1.0) -> np.ndarray:
    """Exact (float64) convolution per channel, with the 0.125 / ||h||_2 normalisation (loudest IR channel)."""
    ir64 = ir.astype(np.float64)
    gain = 0.125 / np.sqrt(np.max(np.sum(ir64**2, axis=1)))
    frames = x.shape[1]
    wet = np.stack([linear_convolution(x[c], ir64[c % ir.shape[0]], frames) for c in range(x.shape[0])]) * gain
    return (1 - mix) * x + mix * wet


def test_the_reference_is_the_direct_sum():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(300), rng.standard_normal(77)
    np.testing.assert_allclose(linear_convolution(a, b, 300), np.convolve(a, b)[:300], rtol=0, atol=1e-12)
    assert linear_convolution(np.ones(1), np.ones(1), 1)[0] == pytest.approx(1.0, abs=1e-15)


def test_unit_impulse_gives_one_eighth():
    x = music(0.3)
    ir = np.zeros(64, np.float32)
    ir[0] = 1.0
    np.testing.assert_allclose(Convolution(ir, sample_rate=SR)(x, SR), 0.125 * x, atol=1e-7)
    ir[0] = 4.0  # the normalisation removes the IR's own gain
    np.testing.assert_allclose(Convolution(ir, sample_rate=SR)(x, SR), 0.125 * x, atol=1e-7)


def test_near_silent_ir_is_not_normalised():
    x = music(0.2)
    ir = np.zeros(16, np.float32)
    ir[0] = 5e-5  # sum of squares 2.5e-9 < 1e-8: used as it is
    np.testing.assert_allclose(Convolution(ir, sample_rate=SR)(x, SR), 5e-5 * x, rtol=1e-5, atol=1e-10)
    assert np.all(Convolution(np.zeros(16, np.float32), sample_rate=SR)(x, SR) == 0.0)


def test_delayed_impulse_delays():
    x = music(0.3)
    ir = np.zeros(3000, np.float32)
    ir[2500] = -2.0
    y = Convolution(ir, sample_rate=SR)(x, SR)
    np.testing.assert_allclose(y[:, 2500:], -0.125 * x[:, :-2500], atol=1e-7)
    assert np.max(np.abs(y[:, :2500])) < 1e-7


@pytest.mark.parametrize("seconds", [0.001, 0.05, 0.4, 1.0])
@pytest.mark.parametrize("signal", ["music", "speech"])
def test_matches_direct_convolution(seconds, signal):
    x = music(1.0) if signal == "music" else speech(1.0)
    ir = decaying_ir(seconds)
    assert diff_db(Convolution(ir, sample_rate=SR)(x, SR), direct(x, ir)) < -100


@pytest.mark.parametrize("seconds", [2.0, 5.0])
def test_long_ir_tail_partitions_match_direct_convolution(seconds):
    """IRs over 81920 samples convolve their tail (after 16384 samples) in 16384-sample partitions."""
    x = music(2.5)
    ir = decaying_ir(seconds, channels=2)
    plugin = Convolution(ir, sample_rate=SR)
    whole = plugin(x, SR)
    assert plugin._tail_part is not None  # the two-level path is the one under test
    assert diff_db(whole, direct(x, ir)) < -100
    # streamed in irregular blocks that straddle the 16384-sample tail blocks: the same output
    pieces, start = [], 0
    plugin.reset()
    for size in [1, 7, 16383, 2, 512, 8192, 40000, 3000]:
        pieces.append(plugin.process(x[:, start : start + size], SR, reset=False, layout="channels-first"))
        start += size
    pieces.append(plugin.process(x[:, start:], SR, reset=False, layout="channels-first"))
    np.testing.assert_allclose(np.concatenate(pieces, axis=1), whole, atol=1e-6)


def test_stereo_ir():
    x = music(0.5)
    ir = decaying_ir(0.1, channels=2)
    assert diff_db(Convolution(ir, sample_rate=SR)(x, SR), direct(x, ir)) < -100
    # mono input uses the first IR channel, normalised by the loudest channel
    assert diff_db(Convolution(ir, sample_rate=SR)(x[:1], SR), direct(x[:1], ir)) < -100
    # an IR given channels-last is read the same way
    np.testing.assert_array_equal(Convolution(ir.T.copy(), sample_rate=SR).impulse_response, ir)


def test_mix_is_linear():
    x = music(0.5)
    ir = decaying_ir(0.05)
    assert diff_db(Convolution(ir, mix=0.3, sample_rate=SR)(x, SR), direct(x, ir, 0.3)) < -100
    np.testing.assert_array_equal(Convolution(ir, mix=0.0, sample_rate=SR)(x, SR), x)


def test_irregular_blocks_and_zero_latency():
    x = music(0.5)
    ir = decaying_ir(0.2)
    plugin = Convolution(ir, sample_rate=SR)
    plugin(x[:, :0], SR, reset=False)  # an empty block fixes the channel layout
    sizes = [1, 100, 2047, 3, 4096, 5000, 64, 10000]
    pieces, start = [], 0
    for size in sizes:
        pieces.append(plugin(x[:, start : start + size], SR, reset=False))
        assert pieces[-1].shape[1] == min(size, x.shape[1] - start)  # no latency: every call returns all samples
        start += size
    pieces.append(plugin(x[:, start:], SR, reset=False))
    assert plugin.latency_samples == 0
    assert diff_db(np.concatenate(pieces, axis=1), direct(x, ir)) < -100


def test_tail_continues_with_reset_false():
    ir = decaying_ir(0.3)
    plugin = Convolution(ir, sample_rate=SR)
    x = noise(0.2, channels=1)
    head = plugin(x, SR, reset=False)
    tail = plugin(np.zeros((1, SR // 2), np.float32), SR, reset=False)
    full = direct(np.concatenate([x, np.zeros((1, SR // 2), np.float32)], axis=1), ir)
    assert diff_db(np.concatenate([head, tail], axis=1), full) < -100
    assert np.max(np.abs(tail)) > 1e-3


def test_ir_file(tmp_path):
    ir = decaying_ir(0.05, channels=2)
    path = tmp_path / "room.wav"
    soundfile.write(path, ir.T, SR, subtype="FLOAT")
    plugin = Convolution(str(path))
    assert plugin.impulse_response_filename == str(path)
    assert plugin.impulse_response is None
    assert "impulse_response_filename=" in repr(plugin)
    x = music(0.3)
    assert diff_db(plugin(x, SR), direct(x, ir)) < -100
    assert diff_db(Convolution(path)(x, SR), direct(x, ir)) < -100  # os.PathLike works too


def test_ir_is_resampled_to_the_stream_rate():
    ir = np.zeros(200, np.float32)
    ir[50] = 1.0
    x = np.zeros(2000, np.float32)
    x[0] = 1.0
    y = Convolution(ir, sample_rate=SR / 2)(x, SR)
    # the impulse moves to sample 100 at the doubled rate, and the resampled IR is normalised to 0.125
    assert abs(int(np.argmax(np.abs(y))) - 100) <= 1
    assert np.sqrt(np.sum(y.astype(np.float64) ** 2)) == pytest.approx(0.125, rel=1e-4)


def test_errors():
    ir = np.ones(10, np.float32)
    with pytest.raises(RuntimeError, match="sample_rate must be provided"):
        Convolution(ir)
    with pytest.raises(RuntimeError, match="Unable to load impulse response: /nonexistent/ir.wav"):
        Convolution("/nonexistent/ir.wav")
    with pytest.raises(TypeError):
        Convolution(np.ones(10, np.int16), sample_rate=SR)
    with pytest.raises(ValueError):
        Convolution(ir, mix=1.5, sample_rate=SR)
    plugin = Convolution(ir, sample_rate=SR)
    with pytest.raises(ValueError):
        plugin.mix = -0.5


def test_properties_and_repr():
    ir = np.ones((2, 12345), np.float32)
    plugin = Convolution(ir, mix=0.5, sample_rate=SR)
    assert repr(plugin).startswith(
        "<stompbox.Convolution impulse_response=<12345 samples of 2-channel audio at 44100 Hz> mix=0.5"
    )
    np.testing.assert_array_equal(plugin.impulse_response, ir)
    assert plugin.impulse_response_filename is None
    assert plugin.mix == 0.5
    assert Convolution(ir.astype(np.float64), sample_rate=SR).impulse_response.dtype == np.float32


# ---------------------------------------------------------------------------------------------- IR resampling
def _biquad_impulse(n: int) -> np.ndarray:
    """Impulse response of the 2-pole Butterworth at a quarter of the sample rate, from its coefficients:
    k = 1/tan(pi/4) = 1, b = (c, 2c, c) with c = 1/(2 + sqrt 2), a1 = 0, a2 = c (2 - sqrt 2)."""
    c = 1.0 / (2.0 + np.sqrt(2.0))
    a2 = c * (2.0 - np.sqrt(2.0))
    h = np.zeros(n)
    for i in range(n):
        x = (c if i == 0 else 0.0) + (2 * c if i == 1 else 0.0) + (c if i == 2 else 0.0)
        h[i] = x - (a2 * h[i - 2] if i >= 2 else 0.0)
    return h


def test_ir_resampling_by_two_down_is_filter_then_every_other_sample():
    from stompbox.effects.ir_resample import resample_impulse_response

    ir = np.zeros((1, 40), np.float32)
    ir[0, 0] = 1.0
    out = resample_impulse_response(ir, 88200.0, 44100.0)
    assert out.shape == (1, 20)
    np.testing.assert_allclose(out[0], _biquad_impulse(40)[::2], atol=1e-7)


def test_ir_resampling_by_two_up_is_linear_interpolation_then_filter():
    from stompbox.effects.ir_resample import resample_impulse_response

    ir = np.zeros((1, 20), np.float32)
    ir[0, 0] = 1.0
    out = resample_impulse_response(ir, 22050.0, 44100.0)
    assert out.shape == (1, 40)
    interpolated = np.zeros(40)
    interpolated[:2] = [1.0, 0.5]  # halfway between the impulse and the next (zero) sample
    expected = np.convolve(interpolated, _biquad_impulse(40))[:40]
    np.testing.assert_allclose(out[0], expected, atol=1e-7)


@pytest.mark.parametrize(("from_rate", "to_rate"), [(48000.0, 44100.0), (22050.0, 44100.0), (8000.0, 48000.0)])
def test_ir_resampling_keeps_dc_and_gives_the_rounded_length(from_rate, to_rate):
    from stompbox.effects.ir_resample import resample_impulse_response

    ir = np.ones((2, 3001), np.float32)
    out = resample_impulse_response(ir, from_rate, to_rate)
    assert out.shape == (2, round(3001 * to_rate / from_rate))
    np.testing.assert_allclose(out[:, 200 : out.shape[1] - 200], 1.0, atol=1e-5)  # unity DC gain, settled


def test_soxr_ir_resampling_is_an_option():
    ir = (np.random.default_rng(3).standard_normal(2000) * np.exp(-np.arange(2000) / 300)).astype(np.float32)
    x = np.random.default_rng(4).standard_normal((1, 20000)).astype(np.float32)
    default = Convolution(ir, sample_rate=48000)(x, 44100)
    band_limited = Convolution(ir, sample_rate=48000, ir_resampling="soxr")(x, 44100)
    assert 1e-4 < np.sqrt(np.mean((default - band_limited) ** 2)) / np.sqrt(np.mean(default**2)) < 0.5
    same_rate = Convolution(ir, sample_rate=44100, ir_resampling="soxr")(x, 44100)
    np.testing.assert_array_equal(same_rate, Convolution(ir, sample_rate=44100)(x, 44100))
    with pytest.raises(ValueError, match="ir_resampling"):
        Convolution(ir, sample_rate=48000, ir_resampling="sinc")
    copy = pickle.loads(pickle.dumps(Convolution(ir, sample_rate=48000, ir_resampling="soxr")))
    np.testing.assert_array_equal(copy(x, 44100), band_limited)


# ---------------------------------------------------------------------------------------------------- chain files
def test_array_ir_is_saved_inline_and_loads_bit_identical(tmp_path):
    """An IR given as an array goes into the chain file itself (base64 little-endian float32), so the chain
    can be saved, sent to batch workers as data, and loaded anywhere."""
    from stompbox import LFO, Pedalboard, load_chain

    ir = decaying_ir(0.05, channels=2)
    board = Pedalboard([Convolution(ir, mix=LFO("sine", rate_hz=2.0, depth=0.2, offset=0.6), sample_rate=48000)])
    inline = board.to_dict()["plugins"][0]["params"]["impulse_response"]
    assert inline["sample_rate"] == 48000 and inline["channels"] == 2
    assert len(inline["samples"]) == 4 * ((ir.size * 4 + 2) // 3)  # base64 of 4 bytes per sample
    x = music(0.5, channels=2)
    for name in ("chain.json", "chain.yaml"):
        board.save(tmp_path / name)
        again = load_chain(tmp_path / name)
        assert np.array_equal(again[0].impulse_response, board[0].impulse_response)
        assert np.array_equal(again(x, SR), board(x, SR))


def test_a_saved_ir_file_is_found_from_any_current_folder(tmp_path, monkeypatch):
    """An IR inside the chain file's folder is saved relative to it, so the folder can move; one outside it is
    saved by absolute path. Either way, loading does not depend on the current folder."""
    from stompbox import load_chain

    project = tmp_path / "project"
    (project / "irs").mkdir(parents=True)
    soundfile.write(project / "irs" / "room.wav", decaying_ir(0.05).T, SR, subtype="FLOAT")
    soundfile.write(tmp_path / "elsewhere.wav", decaying_ir(0.02, seed=5).T, SR, subtype="FLOAT")
    monkeypatch.chdir(project)
    near, far = Convolution("irs/room.wav", mix=0.5), Convolution("../elsewhere.wav")
    assert near.impulse_response_filename == "irs/room.wav"  # as given, as pedalboard keeps it
    near.save(project / "near.json")
    far.save(project / "far.json")
    assert '"impulse_response_filename": "irs/room.wav"' in (project / "near.json").read_text()
    assert f'"impulse_response_filename": "{tmp_path / "elsewhere.wav"}"' in (project / "far.json").read_text()
    x = music(0.3)
    expected_near, expected_far = near(x, SR), far(x, SR)
    moved = tmp_path / "moved"
    project.rename(moved)
    monkeypatch.chdir("/")
    assert np.array_equal(load_chain(moved / "near.json")(x, SR), expected_near)
    assert np.array_equal(load_chain(moved / "far.json")(x, SR), expected_far)
    # to_dict() names the file by absolute path; a dict has no folder of its own, so a relative name in one
    # written by hand is relative to the current folder
    assert near.to_dict()["params"]["impulse_response_filename"] == str(project / "irs" / "room.wav")
    monkeypatch.chdir(moved)
    by_hand = {"type": "Convolution", "params": {"impulse_response_filename": "irs/room.wav", "mix": 0.5}}
    assert np.array_equal(Convolution.from_dict(by_hand)(x, SR), expected_near)


@pytest.mark.parametrize(
    "inline, match",
    [
        ({"sample_rate": 48000, "channels": 2}, "must have 'sample_rate', 'channels' and 'samples'"),
        ({"sample_rate": 48000, "channels": 2, "samples": "AAAAAA=="}, "holds 4 bytes, not float32 samples of 2"),
        ({"sample_rate": 48000, "channels": 0, "samples": "AAAAAA=="}, "of 0 channels"),
        ({"sample_rate": 48000, "channels": 1, "samples": "not base64!"}, "Convolution"),
        ({"sample_rate": -1, "channels": 1, "samples": "AAAAAA=="}, "sample_rate must be from 1 Hz to 10,000,000 Hz"),
    ],
)
def test_bad_inline_irs_are_chain_format_errors(inline, match):
    from stompbox.chains import ChainFormatError, from_dict

    with pytest.raises(ChainFormatError, match=match):
        from_dict({"type": "Convolution", "params": {"impulse_response": inline}})
