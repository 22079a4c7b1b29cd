"""Bugs found by the fuzzers and the corpus, kept as regression tests now that they are fixed."""

from __future__ import annotations

import pytest

from stompbox.chains import loads


def test_convolution_without_impulse_response_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads('{"type": "Convolution"}')


def test_deeply_nested_json_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads("[" * 100_000)


def test_deeply_nested_yaml_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads("- " * 5000)


def test_600_nested_boards_is_a_chain_error() -> None:
    with pytest.raises(ValueError):
        loads("[" * 600 + "]" * 600)


def test_huge_gain_db_does_not_raise_overflow_error() -> None:
    import numpy as np

    from stompbox import Gain

    out = Gain(gain_db=1e10).process(np.full((2, 8), 0.1, np.float32), 44100)  # pedalboard: inf
    assert out.shape == (2, 8)


def test_grammar_errors_are_one_line_for_names_with_newlines() -> None:
    from stompbox.cli.grammar import GrammarError, parse_effects

    with pytest.raises(GrammarError) as info:
        parse_effects(["Bitcrush", "!\n[=", "Bitcrush"])  # found by fuzz/fuzz_grammar.py
    assert "\n" not in str(info.value)
    assert "!\\n[" in str(info.value)  # the token is still shown, escaped


def test_absurd_brickwall_release_and_ceiling_do_not_overflow() -> None:
    """Found by fuzz/fuzz_grammar.py: release_ms=1e39 is inf in float32 and int(inf) raised OverflowError."""
    import warnings

    import numpy as np

    from stompbox import BrickwallLimiter

    x = np.full((2, 64), 0.5, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kwargs in ({"release_ms": 1e39}, {"release_ms": 1e300}, {"ceiling_db": 1e30}):
            out = BrickwallLimiter(**kwargs)(x, 44100)
            np.testing.assert_array_equal(out, x)  # 0.5 is below every ceiling here: untouched


def test_a_seek_before_the_start_of_a_file_like_is_a_failed_seek(tmp_path) -> None:
    """Found by fuzz/fuzz_audiofile.py: a damaged AIFF header makes libsndfile seek to byte -1. A file descriptor
    answers that with lseek's -1; io.BytesIO raised ValueError, which escaped as an undocumented exception. The
    file-like now reads exactly as the same bytes from a path do."""
    from pathlib import Path

    from stompbox.io import AudioFile

    data = (
        Path(__file__).parents[1] / "data/corrupt/found/fuzz-crash-b57d52c013d8edfb7c832d60fe8f28c60ab04b6a"
    ).read_bytes()
    path = tmp_path / "damaged.aiff"
    path.write_bytes(data)
    from stompbox.io import CorruptAudioError

    outcomes = []
    for source in (str(path), __import__("io").BytesIO(data)):
        with AudioFile(source) as f:
            header = (f.num_channels, f.samplerate, f.frames)
            with pytest.raises(CorruptAudioError, match="ends at frame 0, before the 3200 frames") as raised:
                f.read(f.frames + 10)  # the header declares 3200 frames and no data decodes
            outcomes.append((header, str(raised.value)))
    assert outcomes[0] == outcomes[1] and outcomes[0][0] == (2, 16000, 3200)
