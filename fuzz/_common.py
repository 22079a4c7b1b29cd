"""Shared pieces of the atheris harnesses: instrumented imports of stompbox, and the run limits."""

from __future__ import annotations

import importlib
import os
import sys

import atheris

INSTRUMENTED = [
    "stompbox.core.params",
    "stompbox._base.layout",
    "stompbox.core.automation",
    "stompbox.core.plugin",
    "stompbox.board",
    "stompbox.chains",
    "stompbox.io.formats",
    "stompbox.io.codecs.backends",
    "stompbox.io.codecs.codec_choice",
    "stompbox.io.audiofile",
    "stompbox.cli.grammar",
]


def instrumented_stompbox(extra: tuple[str, ...] = ()) -> None:
    """Import stompbox with coverage instrumentation of the code the harnesses reach: the I/O layer, chains,
    the CLI grammar, boards and the engine. numpy, soundfile and PyAV run at full speed, and so do the effects:
    atheris rewrites bytecode, which Numba's compiler cannot read, so modules with kernels stay uninstrumented
    (their Python-level parameter handling is reached through the engine). ``extra`` names more modules to
    instrument for one harness."""
    modules = [*INSTRUMENTED, *extra]
    with atheris.instrument_imports(include=modules):
        for module in modules:
            importlib.import_module(module)
    from stompbox import effects

    for module in sorted(set(effects.EXPORTS.values())):
        importlib.import_module(f"stompbox.effects.{module}")


def run(test_one_input: object) -> None:
    os.environ.setdefault("NUMBA_DISABLE_PERFORMANCE_WARNINGS", "1")
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
