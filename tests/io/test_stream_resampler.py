"""StreamResampler: chunk invariance, exact lengths, flush, layouts, timing and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import soxr

from stompbox.io.quality import SOXR_RECIPE, Quality, coerce_quality
from stompbox.io.stream_resampler import StreamResampler

RATES = [(44100, 48000), (48000, 44100), (44100, 22050), (8000, 44100), (44100, 12345.67)]


def _noise(channels: int, n: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((channels, n)) * 0.3).astype(np.float32)


def _run(resampler: StreamResampler, x: np.ndarray, sizes: list[int]) -> np.ndarray:
    parts, i, pos = [], 0, 0
    while pos < x.shape[1]:
        n = sizes[i % len(sizes)]
        parts.append(resampler.process(x[:, pos : pos + n]))
        pos += n
        i += 1
    parts.append(resampler.process())
    return np.concatenate(parts, axis=1)


@pytest.mark.parametrize("source,target", RATES)
@pytest.mark.parametrize("quality", [Quality.ZeroOrderHold, Quality.WindowedSinc32, Quality.WindowedSinc256])
def test_chunked_output_is_bit_identical_and_exact_length(source, target, quality):
    x = _noise(2, 20011)
    whole = _run(StreamResampler(source, target, 2, quality), x, [x.shape[1]])
    chunked = _run(StreamResampler(source, target, 2, quality), x, [1, 4, 5, 1000, 333])
    assert np.array_equal(whole, chunked)
    ratio = float(target) / float(source)
    assert whole.shape == (2, math.floor(x.shape[1] * ratio + 0.5))
    assert whole.dtype == np.float32 and whole.flags.c_contiguous
    # the engine is soxr with the recipe the quality maps to
    ref = soxr.resample(x.T, source, target, SOXR_RECIPE[quality]).T
    assert np.array_equal(whole, ref)


def test_pedalboard_example_lengths_and_flush():
    r = StreamResampler(44100, 22050, 2)
    block = np.zeros((2, 1000), np.float32)
    outs = [r.process(block).shape[1] for _ in range(3)]
    flushed = r.process()
    assert sum(outs) + flushed.shape[1] == 1500
    assert r.process().shape == (2, 0)  # a second flush gives nothing


def test_reuse_after_flush_is_like_new_and_reset():
    x = _noise(1, 5000)
    fresh = _run(StreamResampler(44100, 48000, 1), x, [5000])
    r = StreamResampler(44100, 48000, 1)
    _run(r, _noise(1, 3000, seed=5), [3000])  # a whole stream, flushed
    assert np.array_equal(_run(r, x, [5000]), fresh)
    r.process(_noise(1, 777, seed=6))  # half a stream, then reset
    r.reset()
    assert np.array_equal(_run(r, x, [5000]), fresh)


def test_timing_is_compensated_sine_lands_on_the_analytic_curve():
    sr_in, sr_out, f = 44100, 48000, 1000.0
    t = np.arange(44100) / sr_in
    x = np.sin(2 * np.pi * f * t).astype(np.float32)[None, :]
    y = _run(StreamResampler(sr_in, sr_out, 1), x, [4096])[0]
    expected = np.sin(2 * np.pi * f * np.arange(y.size) / sr_out)
    middle = slice(2000, y.size - 2000)
    assert np.abs(y[middle] - expected[middle]).max() < 1e-3  # same phase, no latency left in the output


def test_layouts():
    x = _noise(2, 4000)
    first = _run(StreamResampler(44100, 32000, 2), x, [4000])
    r = StreamResampler(44100, 32000, 2)
    last = np.concatenate([r.process(np.ascontiguousarray(x.T)), r.process()], axis=0)
    assert last.shape[1] == 2 and np.array_equal(last.T, first)
    mono = StreamResampler(44100, 32000, 1)
    out = np.concatenate([mono.process(x[0]), mono.process()], axis=1)
    assert out.shape[0] == 1 and np.array_equal(out[0], _run(StreamResampler(44100, 32000, 1), x[:1], [4000])[0])


@pytest.mark.parametrize(
    ("source", "target", "quality"),
    [
        (44100, 22050, Quality.WindowedSinc32),
        (44100, 22050, Quality.WindowedSinc8),
        (44100, 22050, Quality.Linear),
        (44100, 12345.67, Quality.ZeroOrderHold),  # soxr's delay() is negative here
        (11025, 48000, Quality.WindowedSinc),  # and larger than the first output's threshold here
        (48000, 123.45, Quality.Linear),
    ],
)
def test_input_latency_is_what_a_fresh_stream_holds_back(source, target, quality):
    """input_latency samples give no output yet, one more gives some, and the flush releases what the
    held samples stand for (the output's length rule: round(n * target / source))."""
    latency = StreamResampler(source, target, 1, quality).input_latency
    assert isinstance(latency, float) and latency >= 0 and latency.is_integer()
    n = int(latency)
    r = StreamResampler(source, target, 1, quality)
    assert r.process(np.ones(n, np.float32)).shape == (1, 0)
    flushed = r.process()
    assert flushed.shape[1] == math.floor(n * target / source + 0.5) <= math.ceil(n / source * target)
    assert r.process().shape == (1, 0)
    assert StreamResampler(source, target, 1, quality).process(np.ones(n + 1, np.float32)).shape[1] >= 1


def test_properties_and_repr():
    r = StreamResampler(44100, 22050.5, 2, Quality.WindowedSinc64)
    assert r.source_sample_rate == 44100 and r.target_sample_rate == 22050.5
    assert r.num_channels == 2 and r.quality is Quality.WindowedSinc64
    text = repr(r)
    assert "quality=WindowedSinc64" in text and "target_sample_rate=22050.5" in text and "unknown" not in text


def test_rates_and_ratios_outside_the_limits_are_refused_before_soxr_allocates():
    """StreamResampler(0.001, 48000, 1) took 2 GB for 10 samples; rates past 10 MHz and ratios past 4096:1
    reach soxr's crashes. Each is refused with the allowed range."""
    from stompbox.limits import LimitError

    with pytest.raises(LimitError, match="source sample rate must be from 1 Hz to 10,000,000 Hz"):
        StreamResampler(0.001, 48000, 1)
    with pytest.raises(LimitError, match="target sample rate must be from 1 Hz to 10,000,000 Hz"):
        StreamResampler(44100, 2**63, 1)
    with pytest.raises(LimitError, match="ratio of 48,000:1; at most 4096:1"):
        StreamResampler(1, 48000, 1)
    with pytest.raises(LimitError, match="ratio of 10,000:1"):
        StreamResampler(10_000_000, 1000, 1)
    edge = StreamResampler(1, 4096, 2)  # the largest ratio is allowed, and exact in length
    out = np.concatenate([edge.process(np.ones((2, 10), np.float32)), edge.process()], axis=1)
    assert out.shape == (2, 40960)


def test_errors():
    with pytest.raises(ValueError, match="num_channels"):
        StreamResampler(44100, 48000, 0)
    with pytest.raises(TypeError):
        StreamResampler(44100, 48000, 1.5)
    for bad in (0, -44100, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="sample rate"):
            StreamResampler(bad, 48000, 1)
        with pytest.raises(ValueError, match="sample rate"):
            StreamResampler(44100, bad, 1)
    r = StreamResampler(44100, 48000, 1)
    with pytest.raises(TypeError, match="float32"):
        r.process(np.zeros(100, np.float64))
    with pytest.raises(ValueError, match="Expected 1-channel input, but was provided a buffer with 2 channels"):
        r.process(np.zeros((2, 44100), np.float32))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        r.process(np.zeros((1, 1, 10), np.float32))
    with pytest.raises(ValueError):
        StreamResampler(44100, 48000, 1, 11)


def test_quality_enum_values_and_coercion():
    assert [q.value for q in Quality] == list(range(11))
    assert Quality.WindowedSinc32 == 8 and Quality.WindowedSinc8 == 10
    assert coerce_quality("windowedsinc16") is Quality.WindowedSinc16
    assert coerce_quality(3) is Quality.Lagrange
    with pytest.raises(ValueError):
        coerce_quality("best-ever")
