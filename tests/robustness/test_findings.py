"""Bugs found by the fuzzers and the corpus in code this suite does not own, kept as reproducers.

Each test states the documented behaviour and is marked ``xfail(strict=True)`` until the bug is fixed: when a
fix lands, the test passes, pytest reports XPASS as a failure, and the mark must be removed (and the matching
``known_issue`` entry in ``fuzz/fuzz_chains.py``).
"""

from __future__ import annotations

import pytest

from stompbox.chains import loads


@pytest.mark.xfail(strict=True, reason="chains/Convolution._from_dict: KeyError for a Convolution without a file")
def test_convolution_without_impulse_response_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads('{"type": "Convolution"}')


@pytest.mark.xfail(strict=True, reason="chains.loads: RecursionError for deeply nested JSON (json module limit)")
def test_deeply_nested_json_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads("[" * 100_000)


@pytest.mark.xfail(strict=True, reason="chains.loads: RecursionError for deeply nested YAML")
def test_deeply_nested_yaml_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads("- " * 5000)


@pytest.mark.xfail(strict=True, reason="chains.from_dict: 600 nested boards build, then RecursionError")
def test_600_nested_boards_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads("[" * 600 + "]" * 600)


@pytest.mark.xfail(strict=True, reason="effects/basic.py db_to_gain: OverflowError for gain_db=1e10 (fuzz_chains)")
def test_huge_gain_db_does_not_raise_overflow_error() -> None:
    import numpy as np

    from stompbox import Gain

    out = Gain(gain_db=1e10).process(np.full((2, 8), 0.1, np.float32), 44100)  # pedalboard: inf
    assert out.shape == (2, 8)
