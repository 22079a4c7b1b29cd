"""The test-support plugins of stompbox._internal (pedalboard_native._internal's names)."""

from __future__ import annotations

import numpy as np
import pytest

from stompbox import Pedalboard, Resample
from stompbox._internal import (
    AddLatency,
    FixedSizeBlockTestPlugin,
    ForceMonoTestPlugin,
    PrimeWithSilenceTestPlugin,
    ResampleWithLatency,
)


def _noise(channels: int, n: int = 20000) -> np.ndarray:
    x = np.random.default_rng(channels).random((channels, n)).astype(np.float32)
    return x[0] if channels == 1 else x


@pytest.mark.parametrize("buffer_size", [1, 64, 65, 128, 160, 8192, 8193])
@pytest.mark.parametrize("fixed", [1, 16, 40, 160, 8192, 8193])
@pytest.mark.parametrize("channels", [1, 2])
def test_fixed_size_blocks_are_an_exact_identity(buffer_size, fixed, channels):
    n = 3000 if buffer_size == 1 else 20000
    x = _noise(channels, n)
    plugin = FixedSizeBlockTestPlugin(fixed)
    np.testing.assert_array_equal(plugin.process(x, 44100, buffer_size=buffer_size), x)
    assert plugin.blocks_seen <= {fixed}  # the inner processing saw nothing but whole blocks
    assert plugin.latency_samples == fixed - 1


def test_fixed_size_blocks_stream_with_latency():
    x = _noise(2)
    plugin = FixedSizeBlockTestPlugin(160)
    plugin.reset()
    out = np.concatenate([plugin(x[:, i : i + 100], 44100, reset=False) for i in range(0, x.shape[1], 100)], 1)
    np.testing.assert_array_equal(out, x[:, : out.shape[1]])
    assert out.shape[1] == x.shape[1] - 159


@pytest.mark.parametrize("channels", [1, 2, 3])
def test_force_mono(channels):
    x = _noise(channels)
    y = ForceMonoTestPlugin()(x, 44100)
    if channels == 1:
        np.testing.assert_array_equal(y, x)
    else:
        np.testing.assert_allclose(y, np.tile(x.mean(axis=0), (channels, 1)), rtol=1e-6)


@pytest.mark.parametrize("samples", [0, 1, 160, 8193])
@pytest.mark.parametrize("buffer_size", [1, 128, 8192])
def test_prime_with_silence_is_an_identity(samples, buffer_size):
    x = _noise(2, 3000 if buffer_size == 1 else 20000)
    plugin = PrimeWithSilenceTestPlugin(samples)
    assert plugin.expected_silent_samples == samples
    np.testing.assert_array_equal(plugin(x, 44100, buffer_size=buffer_size), x)


def test_resample_with_latency_matches_resample():
    x = _noise(2) - 0.5
    plugin = ResampleWithLatency(8000, internal_latency=1024)
    assert plugin.internal_latency == 1024 and plugin.quality is Resample.Quality.WindowedSinc32
    y = plugin(x, 44100, buffer_size=333)
    reference = Resample(8000)
    np.testing.assert_array_equal(y, reference(x, 44100))
    assert plugin.latency_samples == reference.latency_samples + 1024


def test_in_a_board_latencies_add_up():
    x = _noise(2)
    board = Pedalboard([AddLatency(100), FixedSizeBlockTestPlugin(160), PrimeWithSilenceTestPlugin(50)])
    np.testing.assert_array_equal(board(x, 44100, buffer_size=77), x)
