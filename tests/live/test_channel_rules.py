"""AudioStream converts what it is given by stompbox's one layout rule and one channel rule (no device needed)."""

from __future__ import annotations

import numpy as np
import pytest

from stompbox._base.channels import convert_channels
from stompbox._base.errors import LayoutError
from stompbox.live import stream as live


def test_a_two_by_one_block_on_a_stereo_device_is_two_channels_of_one_frame() -> None:
    block = np.array([[0.25], [-0.5]], np.float32)
    out = live._as_channels_first(block, 2)
    assert out.shape == (2, 1) and out[0, 0] == np.float32(0.25) and out[1, 0] == np.float32(-0.5)


def test_frames_last_mono_is_copied_to_both_channels() -> None:
    block = np.arange(6, dtype=np.float32)[:, None] / 8  # (6, 1): six frames of one channel
    out = live._as_channels_first(block, 2)
    assert out.shape == (2, 6)
    assert np.array_equal(out[0], block[:, 0]) and np.array_equal(out[1], block[:, 0])


def test_a_square_block_that_is_not_the_device_channels_is_ambiguous() -> None:
    with pytest.raises(LayoutError):
        live._as_channels_first(np.zeros((3, 3), np.float32), 1)


def test_input_channels_are_mapped_to_the_output_by_the_channel_rule() -> None:
    rng = np.random.default_rng(3)
    surround = rng.uniform(-0.5, 0.5, (6, 64)).astype(np.float32)  # 5.1 input to a stereo output
    out = live._map_channels(surround, 2)
    assert np.array_equal(out, convert_channels(surround, 2))
    # 5.1 to stereo (BS.775 levels, never clipping): L' = (L + 0.7071 C + 0.7071 Ls) / 2.4142; index 4 is Ls
    left = (surround[0] + 0.70710678 * surround[2] + 0.70710678 * surround[4]) / 2.41421356
    assert np.allclose(out[0], left, atol=1e-6)
    stereo = surround[:2]
    four = live._map_channels(stereo, 4)  # stereo to quad: front pair kept, back pair silent
    assert np.array_equal(four[:2], stereo) and not four[2:].any()
