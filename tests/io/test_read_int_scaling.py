"""Integer PCM: read with pedalboard's scaling, written as its exact inverse.

pedalboard 0.9.26 reads an integer sample ``k`` of ``b`` bits as ``float32(k) * float32(1 / (2**(b-1) - 1))``
(int16: ``k / 32767``, so -32768 reads as -1.0000305; int8: ``k / 127``; int32: ``k / 2**31`` because
float32(2**31 - 1) is 2**31). stompbox reads the same floats, and writes floats as ``round(x * (2**(b-1) - 1))``
clipped to the integer range, so any integer file read and written again at its bit depth is bit-identical.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf

from stompbox.io import AudioFile
from stompbox.io.audiofile import quantize
from stompbox.io.codecs import wav as wav_module

SR = 44100
FULL = {"int8": 127, "int16": 32767, "int24": 8388607}
# (format, libsndfile subtype, file_dtype, bits)
CASES = [
    ("WAV", "PCM_U8", "int8", 8),
    ("WAV", "PCM_16", "int16", 16),
    ("WAV", "PCM_24", "int24", 24),
    ("WAV", "PCM_32", "int32", 32),
    ("FLAC", "PCM_16", "int16", 16),
    ("FLAC", "PCM_24", "int24", 24),
    ("AIFF", "PCM_S8", "int8", 8),
    ("AIFF", "PCM_16", "int16", 16),
    ("AIFF", "PCM_24", "int24", 24),
    ("AIFF", "PCM_32", "int32", 32),
]
IDS = [f"{fmt}-{subtype}" for fmt, subtype, _, _ in CASES]


def integers(bits: int, n: int = 20000, seed: int = 0) -> np.ndarray:
    """Random ``bits``-bit integers (as int64, 2 channels, frames-last) including both extremes and 0."""
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    k = np.random.default_rng(seed).integers(low, high + 1, (n, 2))
    k[:3, 0] = [low, high, 0]
    k[:3, 1] = [-1, 1, low + 1]
    return k


def file_with(k: np.ndarray, fmt: str, subtype: str, bits: int) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, (k << (32 - bits)).astype(np.int32), SR, format=fmt, subtype=subtype)  # exact via int32
    return buffer.getvalue()


def expected_floats(k: np.ndarray, bits: int) -> np.ndarray:
    scale = np.float32(1.0 / (2 ** (bits - 1) - 1))
    return np.ascontiguousarray((k.astype(np.float32) * scale).T)


@pytest.mark.parametrize("numba", [False, True], ids=["numpy", "numba"])
@pytest.mark.parametrize(("fmt", "subtype", "dtype", "bits"), CASES, ids=IDS)
def test_integer_samples_read_as_k_over_full_scale(monkeypatch, fmt, subtype, dtype, bits, numba):
    monkeypatch.setattr(wav_module, "USE_NUMBA", numba)  # both conversions of the fast WAV reader
    k = integers(bits)
    data = file_with(k, fmt, subtype, bits)
    expected = expected_floats(k, bits)
    with AudioFile(io.BytesIO(data)) as f:
        assert f.file_dtype == dtype
        whole = f.read(f.frames)
        f.seek(0)
        pieces = np.concatenate([f.read(999) for _ in range(21)], axis=1)
    np.testing.assert_array_equal(whole, expected)
    np.testing.assert_array_equal(pieces, expected)


def test_the_extremes_have_pedalboards_values():
    data = file_with(np.array([[-32768], [32767], [16384]]), "WAV", "PCM_16", 16)
    with AudioFile(io.BytesIO(data)) as f:
        got = f.read(3)[0]
    assert got[0] == np.float32(-1.0000305) and got[0] < -1.0  # not clipped
    assert got[1] == 1.0
    assert got[2] == np.float32(16384 / 32767)


@pytest.mark.parametrize(("fmt", "subtype", "dtype", "bits"), CASES, ids=IDS)
def test_read_then_write_at_the_same_depth_is_bit_identical(tmp_path, fmt, subtype, dtype, bits):
    k = integers(bits, seed=bits)
    data = file_with(k, fmt, subtype, bits)
    ext = {"WAV": "wav", "FLAC": "flac", "AIFF": "aiff"}[fmt]
    depth = "int32" if bits == 32 else bits
    path = tmp_path / f"copy.{ext}"
    with AudioFile(io.BytesIO(data)) as f, AudioFile(path, "w", SR, 2, bit_depth=depth) as out:
        if bits == 32:
            out.write(f.read_raw(f.frames))  # float32 cannot hold 32-bit integers: copy them raw
        else:
            out.write(f.read(f.frames))
    again = sf.read(path, dtype="int32")[0] >> (32 - bits)
    np.testing.assert_array_equal(again, k)


def test_every_24_bit_value_survives_float32():
    """float32 cannot hold k / 8388607 exactly; the writer picks the integer whose float32 value matches."""
    k = np.arange(-(2**23), 2**23, dtype=np.int32)
    x = (k.astype(np.float32) * np.float32(1 / 8388607)).reshape(-1, 1)
    np.testing.assert_array_equal(quantize(x, "int24")[:, 0] >> 8, k)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_every_8_and_16_bit_value_survives_float32(dtype):
    bits = 8 if dtype == "int8" else 16
    k = np.arange(-(2 ** (bits - 1)), 2 ** (bits - 1))
    x = (k.astype(np.float32) * np.float32(1 / FULL[dtype])).reshape(-1, 1)
    stored = quantize(x, dtype)[:, 0]
    np.testing.assert_array_equal(stored >> (16 - bits), k)  # 8-bit sits in the top byte of an int16


def test_quantize_rounds_clips_and_zeroes_nan():
    x = np.array([[0.5, 1.0, -1.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 1 / 65534]], np.float32).T
    np.testing.assert_array_equal(
        quantize(x, "int16")[:, 0], [16384, 32767, -32767, 32767, -32768, 0, 32767, -32768, 0]
    )  # 16383.5 rounds to even; 0.5000076 rounds down
    np.testing.assert_array_equal(quantize(x, "int8")[:, 0] >> 8, [64, 127, -127, 127, -128, 0, 127, -128, 0])
    int32 = quantize(x, "int32")[:, 0]
    assert int32[1] == 2**31 - 1 and int32[2] == -(2**31) and int32[5] == 0


def test_integer_arrays_are_scaled_by_full_scale_or_shifted(tmp_path):
    """As pedalboard: an int array into a float file is k / 2**(bits-1); into an integer file it is shifted."""
    i16 = np.array([-32768, -1, 1, 16384, 32767], np.int16)
    i8 = np.array([-128, -1, 1, 64, 127], np.int8)
    with AudioFile(tmp_path / "f.wav", "w", SR, bit_depth=32) as out:
        out.write(i16)
    np.testing.assert_array_equal(sf.read(tmp_path / "f.wav", dtype="float32")[0], i16 / np.float32(32768))
    with AudioFile(tmp_path / "s.wav", "w", SR, bit_depth=24) as out:
        out.write(i16)
    np.testing.assert_array_equal(sf.read(tmp_path / "s.wav", dtype="int32")[0] >> 8, i16.astype(np.int32) << 8)
    with AudioFile(tmp_path / "b.wav", "w", SR, bit_depth=16) as out:
        out.write(i8)
    np.testing.assert_array_equal(sf.read(tmp_path / "b.wav", dtype="int16")[0], i8.astype(np.int16) << 8)
    with AudioFile(tmp_path / "t.wav", "w", SR, bit_depth=16) as out:
        out.write(np.array([0x7FFF0000, -0x80000000, 0x12348000], np.int32))  # the top 16 bits, exactly
    np.testing.assert_array_equal(sf.read(tmp_path / "t.wav", dtype="int16")[0], [0x7FFF, -0x8000, 0x1234])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int24", "int32"])
def test_the_numba_and_numpy_quantisers_agree(dtype):
    from stompbox.io.audiofile import quantize_interleave

    x = np.random.default_rng(5).uniform(-1.2, 1.2, (50000, 3)).astype(np.float32)
    x[:4, 0] = [np.nan, np.inf, -np.inf, 0.5]
    expected = quantize(x, dtype)
    np.testing.assert_array_equal(quantize_interleave(x, dtype), expected)  # frames-last input
    np.testing.assert_array_equal(quantize_interleave(np.ascontiguousarray(x.T).T, dtype), expected)  # a view
    k = np.arange(-(2**23), 2**23, 97, dtype=np.int32)
    if dtype == "int24":
        y = (k.astype(np.float32) * np.float32(1 / 8388607)).reshape(-1, 1)
        np.testing.assert_array_equal(quantize_interleave(y, dtype)[:, 0] >> 8, k)
