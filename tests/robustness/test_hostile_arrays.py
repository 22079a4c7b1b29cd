"""``process()`` of every built-in effect under hostile arrays.

Rules checked for each effect the registry knows (and the toy effect of tests/_toy_effect.py), at its defaults:

- Memory layout never changes the result: Fortran-order, non-contiguous, read-only, float64, channels-last and
  memory-mapped inputs give exactly (bit for bit) the output of the same samples as a C-contiguous float32
  array, and the input is never modified.
- 0 and 1 samples, and 256 channels, work (right shape, finite output).
- Finite in, finite out: subnormal (denormal) inputs and ordinary audio give finite outputs.
- NaN and infinity pass through a block, but never poison a stream: the engine (``Plugin._step``) resets a
  plugin's state after any block whose output is not finite, so after one NaN (or inf) block and enough clean
  blocks to flush the plugin's delay lines, the output is finite again (streaming, ``reset=False``).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

import _contract
from stompbox.core import registry
from stompbox.core.plugin import Plugin

SR = 44100
N = 4410  # 0.1 s


def _defaults(name: str) -> Plugin:
    """Every effect the registry knows, and the toy of tests/_toy_effect.py (tests/_contract.py), at its
    defaults: what users start from."""
    cls = _contract.subjects()[name]
    return _contract.make(name, **{p: s.default for p, s in cls.parameter_specs().items()})


FACTORIES = {name: functools.partial(_defaults, name) for name in _contract.subjects()}
NAMES = sorted(FACTORIES)


def test_every_effect_is_covered() -> None:
    assert set(NAMES) == set(registry.builtin_effects()) | {"ToyTremolo"}
    assert len(NAMES) >= 24


def _signal(channels: int = 2, n: int = N, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n) / SR
    tone = 0.4 * np.sin(2 * np.pi * 330 * t) + 0.1 * rng.standard_normal((channels, n))
    return tone.astype(np.float32)


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
def test_memory_layouts_give_identical_output(name: str, tmp_path: Path) -> None:
    plugin = FACTORIES[name]()
    x = _signal()
    reference = plugin.process(x, SR)
    assert reference.shape == x.shape and np.isfinite(reference).all()
    wide = np.zeros((2, 2 * N), np.float32)
    wide[:, ::2] = x
    readonly = x.copy()
    readonly.setflags(write=False)
    mapped_path = tmp_path / "x.f32"
    x.tofile(mapped_path)
    mapped = np.memmap(mapped_path, dtype=np.float32, mode="r", shape=x.shape)
    variants = {
        "fortran": np.asfortranarray(x),
        "strided view": wide[:, ::2],
        "read-only": readonly,
        "float64": x.astype(np.float64),
        "memmap": mapped,
        "reversed view": x[:, ::-1].copy()[:, ::-1],
    }
    for label, variant in variants.items():
        before = np.array(variant, copy=True)
        out = plugin.process(variant, SR)
        assert out.dtype == np.float32, label
        assert _equal(out, reference), f"{name}: {label} input changed the output"
        assert np.array_equal(np.asarray(variant), before), f"{name}: {label} input was modified"
    channels_last = plugin.process(np.asfortranarray(x.T), SR)  # (n, 2) Fortran = a transposed C array
    assert _equal(channels_last, reference.T)
    channels_last_c = plugin.process(np.ascontiguousarray(x.T), SR)
    assert _equal(channels_last_c, reference.T)
    del mapped


@pytest.mark.parametrize("name", NAMES)
def test_zero_and_one_sample(name: str) -> None:
    plugin = FACTORIES[name]()
    for shape in [(2, 0), (1, 0), (0,), (2, 1), (1,)]:
        x = np.full(shape, 0.25, np.float32)
        out = plugin.process(x, SR, layout="channels-first" if len(shape) == 2 else None)
        assert out.shape == shape and out.dtype == np.float32, (name, shape)
        assert np.isfinite(out).all(), (name, shape)
    streaming = FACTORIES[name]()  # one-sample blocks through a stream
    out = [streaming.process(np.full((2, 1), 0.25, np.float32), SR, reset=False) for _ in range(64)]
    assert all(np.isfinite(o).all() for o in out)


@pytest.mark.parametrize("name", NAMES)
def test_256_channels(name: str) -> None:
    plugin = FACTORIES[name]()
    x = _signal(channels=256, n=600)
    out = plugin.process(x, SR)
    assert out.shape == (256, 600) and np.isfinite(out).all()


@pytest.mark.parametrize("name", NAMES)
def test_denormals_give_finite_output(name: str) -> None:
    plugin = FACTORIES[name]()
    tiny = np.float32(1e-41)  # subnormal float32
    x = np.full((2, N), tiny, np.float32)
    x[:, ::3] = -tiny
    out = plugin.process(x, SR)
    assert np.isfinite(out).all()
    decaying = _signal() * np.exp(-np.arange(N) / 50.0).astype(np.float32)  # a tail decaying into denormals
    assert np.isfinite(plugin.process(decaying, SR)).all()


BLOCK = 2048
CLEAN_AFTER = 48  # 2.2 s of clean blocks after the bad one: longer than any default delay line


@pytest.mark.parametrize("bad", ["nan-block", "one-nan", "inf"])
@pytest.mark.parametrize("name", NAMES)
def test_one_bad_block_does_not_poison_the_stream(name: str, bad: str) -> None:
    plugin = FACTORIES[name]()
    clean = _signal(n=BLOCK * (CLEAN_AFTER + 4), seed=1)
    blocks = [np.ascontiguousarray(clean[:, i : i + BLOCK]) for i in range(0, clean.shape[1], BLOCK)]
    poisoned = blocks[3].copy()
    if bad == "nan-block":
        poisoned[:] = np.nan
    elif bad == "one-nan":
        poisoned[0, BLOCK // 2] = np.nan
    else:
        poisoned[1, 100] = np.inf
    outputs = []
    for k, block in enumerate(blocks):
        out = plugin.process(poisoned if k == 3 else block, SR, buffer_size=BLOCK, reset=False)
        assert out.dtype == np.float32
        outputs.append(out)
    assert all(np.isfinite(o).all() for o in outputs[:3]), f"{name}: non-finite before the bad block"
    tail = np.concatenate(outputs[-8:], axis=1)
    assert tail.shape[1] > 0 and np.isfinite(tail).all(), f"{name}: still non-finite long after one {bad} block"
    # and a fresh process() call (reset=True) is clean whatever came before
    assert np.isfinite(plugin.process(_signal(), SR)).all()
