"""Fuzz the command line's effect grammar (``stompbox.cli.grammar.parse_effects``): every token list must give a
``Pedalboard`` or raise ``GrammarError`` (a ``ValueError`` with a one-line message); a board that was built must
process a short block, or refuse the sample rate with a one-line ``ValueError`` (settings that depend on the rate,
such as a Resample ratio, can only be checked there). Anything else is a finding.
"""

from __future__ import annotations

import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import instrumented_stompbox, run  # noqa: E402

instrumented_stompbox()

import atheris  # noqa: E402
import numpy as np  # noqa: E402

from stompbox.cli.grammar import GrammarError, builtin_effects, parse_effects  # noqa: E402

AUDIO = np.random.default_rng(0).uniform(-0.5, 0.5, (2, 64)).astype(np.float32)
EFFECTS = sorted(builtin_effects())
PARAMS = sorted({name for cls in builtin_effects().values() for name in cls._params})
VALUES = [
    "0",
    "1",
    "-1",
    "0.5",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "true",
    "off",
    "LPF24",
    "hpf12",
    "2",
    "1e-320",
    "0x10",
    "1_000",
    "",
    " ",
    "=",
    "9" * 400,
    "ZeroOrderHold",
]


def _token(fdp: atheris.FuzzedDataProvider) -> str:
    kind = fdp.ConsumeIntInRange(0, 5)
    if kind == 0:
        return EFFECTS[fdp.ConsumeIntInRange(0, len(EFFECTS) - 1)]
    if kind in (1, 2):
        name = PARAMS[fdp.ConsumeIntInRange(0, len(PARAMS) - 1)]
        value = VALUES[fdp.ConsumeIntInRange(0, len(VALUES) - 1)] if kind == 1 else fdp.ConsumeUnicode(6)
        return f"{name}={value}"
    if kind == 3:
        return EFFECTS[fdp.ConsumeIntInRange(0, len(EFFECTS) - 1)].lower().replace("filter", "-filter")
    return fdp.ConsumeUnicodeNoSurrogates(12)


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    tokens = [_token(fdp) for _ in range(fdp.ConsumeIntInRange(0, 8))]
    try:
        board = parse_effects(tokens)
    except GrammarError as exc:
        # one line, whatever the tokens hold (control characters are echoed escaped)
        assert "\n" not in str(exc), repr(str(exc))
        return
    try:
        out = board.process(AUDIO, 44100, buffer_size=32)
    except ValueError as exc:
        # settings valid alone but not at this sample rate (e.g. a Resample ratio beyond 4096:1) are refused
        # when the rate is known, with a one-line message
        message = str(exc)
        assert "\n" not in message and " Hz" in message, repr(message)
        return
    assert out.dtype == np.float32 and out.shape == AUDIO.shape, out.shape


if __name__ == "__main__":
    run(test_one_input)
