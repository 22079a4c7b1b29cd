"""The Plugin contract: layouts, dtypes, errors, reset and latency, containers, copying, threads."""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest

import stompbox
from _audio import SR, noise, process_in_blocks
from stompbox import Chain, Gain, Invert, Mix, Pedalboard, Plugin
from stompbox._internal import AddLatency
from stompbox.core import DuplicatePluginError, LayoutError

GAIN6 = 10 ** (6 / 20)


# ---------------------------------------------------------------- shapes, layouts and dtypes
def test_channels_first_last_and_mono_keep_their_layout():
    x = noise(0.1, channels=2)
    g = Gain(6)
    assert g(x, SR).shape == x.shape
    np.testing.assert_allclose(g(x, SR), x * GAIN6, rtol=1e-6)
    y = g(np.ascontiguousarray(x.T), SR)
    assert y.shape == x.T.shape
    np.testing.assert_allclose(y, x.T * GAIN6, rtol=1e-6)
    mono = x[0]
    assert g(mono, SR).shape == mono.shape


def test_float64_in_float32_out_and_input_untouched():
    x = noise(0.1).astype(np.float64)
    before = x.copy()
    y = Gain(6)(x, SR)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(x, before)


def test_non_contiguous_and_fortran_inputs():
    x = noise(0.2, channels=4)
    view = x[::2, ::3]
    np.testing.assert_allclose(Gain(6)(view, SR), view * GAIN6, rtol=1e-6)
    fortran = np.asfortranarray(x)
    np.testing.assert_allclose(Gain(6)(fortran, SR), x * GAIN6, rtol=1e-6)
    readonly = x.copy()
    readonly.flags.writeable = False
    np.testing.assert_allclose(Gain(6)(readonly, SR), x * GAIN6, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.uint8, np.bool_, np.complex64])
def test_non_float_dtypes_are_type_errors(dtype):
    with pytest.raises(TypeError, match="32-bit and 64-bit floating point"):
        Gain(0)(np.zeros((2, 10), dtype=dtype), SR)


def test_lists_are_type_errors():
    with pytest.raises(TypeError, match="numpy.ndarray"):
        Gain(0)([0.0, 1.0], SR)


def test_three_dimensional_input_is_a_clear_error():
    with pytest.raises(LayoutError, match="1 or 2"):
        Gain(0)(np.zeros((2, 2, 10), np.float32), SR)
    with pytest.raises(RuntimeError):  # the exception pedalboard code catches
        Gain(0)(np.zeros((2, 2, 10), np.float32), SR)


def test_square_arrays_need_a_hint_and_reset_forgets_it():
    g = Gain(0)
    with pytest.raises(LayoutError, match="Unable to determine channel layout"):
        g(np.ones((2, 2), np.float32), SR)
    g(np.zeros((2, 100), np.float32), SR)
    assert g(np.ones((2, 2), np.float32), SR).shape == (2, 2)
    g.reset()
    with pytest.raises(RuntimeError):
        g(np.ones((2, 2), np.float32), SR)


@pytest.mark.parametrize("name", ["Gain", "Reverb", "Compressor", "PitchShift", "Resample", "MP3Compressor"])
def test_a_single_sample_of_one_channel_needs_no_hint(name):
    """(1, 1) is one channel of one sample in either layout: pedalboard processes it on a fresh plugin, and so
    does stompbox (a larger square array still needs a hint)."""
    import stompbox

    plugin = getattr(stompbox, name)()
    out = plugin(np.full((1, 1), 0.5, np.float32), SR)
    assert out.shape == (1, 1) and out.dtype == np.float32 and np.isfinite(out).all()
    assert plugin(np.full(1, 0.5, np.float32), SR).shape == (1,)
    if name == "Gain":  # the default gain is 1 dB
        assert out[0, 0] == pytest.approx(0.5 * 10 ** (1 / 20), rel=1e-6)


def test_empty_arrays_return_empty_arrays_and_hint_the_layout():
    g = Gain(0)
    assert g(np.zeros((2, 0), np.float32), SR).shape == (2, 0)
    assert g(np.ones((2, 2), np.float32), SR).shape == (2, 2)
    assert Gain(0)(np.zeros(0, np.float32), SR).shape == (0,)


@pytest.mark.parametrize("rate", [0, -44100, float("nan"), float("inf")])
def test_bad_sample_rates(rate):
    with pytest.raises(ValueError, match="sample_rate"):
        Gain(0)(noise(0.01), rate)


def test_sample_rate_type():
    with pytest.raises(TypeError):
        Gain(0)(noise(0.01), "44100")


@pytest.mark.parametrize("size", [0, -1])
def test_bad_buffer_sizes_do_not_hang(size):
    with pytest.raises(ValueError, match="buffer_size"):
        Gain(0)(noise(0.01), SR, buffer_size=size)
    with pytest.raises(TypeError):
        Gain(0)(noise(0.01), SR, buffer_size=1.5)


def test_nan_and_inf_pass_through_memoryless_effects():
    x = np.array([[0.5, np.nan, np.inf, -np.inf, 0.25]], np.float32)
    y = Invert()(x, SR)
    np.testing.assert_array_equal(y, -x)


def test_many_channels():
    x = noise(0.05, channels=64)
    np.testing.assert_allclose(Gain(6)(x, SR), x * GAIN6, rtol=1e-6)


# ---------------------------------------------------------------- parameters
def test_parameters_validate_on_assignment_and_construction():
    g = Gain(3)
    g.gain_db = -2.5
    assert g.gain_db == -2.5
    with pytest.raises(TypeError):
        g.gain_db = "loud"
    with pytest.raises(ValueError, match="finite"):
        g.gain_db = float("nan")
    with pytest.raises(ValueError, match="Bit depth must be between 0 and 32 bits"):
        stompbox.Bitcrush(33)
    with pytest.raises(ValueError, match=r"bit_depth=-1"):
        stompbox.Bitcrush(8).bit_depth = -1
    with pytest.raises(TypeError, match="unexpected keyword"):
        Gain(gain=3)


def test_parameter_specs_describe_default_range_and_unit():
    spec = stompbox.Bitcrush.parameter_specs()["bit_depth"]
    assert (spec.default, spec.minimum, spec.maximum, spec.unit) == (8.0, 0.0, 32.0, "bits")


def test_parameter_change_applies_on_next_call():
    g = Gain(0)
    x = noise(0.05)
    np.testing.assert_allclose(g(x, SR), x, rtol=1e-6)
    g.gain_db = 6
    np.testing.assert_allclose(g(x, SR), x * GAIN6, rtol=1e-6)


def test_repr_shows_parameters():
    assert repr(Gain(1)).startswith("<stompbox.Gain gain_db=1 at 0x")
    assert "drive_db=10" in repr(stompbox.Distortion(gain_db=10))


def test_abstract_classes_cannot_be_instantiated():
    with pytest.raises(TypeError, match="abstract"):
        Plugin()
    with pytest.raises(TypeError, match="abstract"):
        stompbox.PluginContainer()


def test_effect_flags():
    assert (Gain().is_effect, Gain().is_instrument) == (True, False)


# ---------------------------------------------------------------- latency and reset
@pytest.mark.parametrize("latency", [0, 1, 100, 8191, 8192, 20000])
@pytest.mark.parametrize("buffer_size", [1, 100, 8192])
def test_latency_is_compensated_with_reset(latency, buffer_size):
    x = noise(0.3 if buffer_size > 1 else 0.02)
    y = AddLatency(latency)(x, SR, buffer_size=buffer_size)
    np.testing.assert_array_equal(y, x)


def test_streaming_withholds_latency_then_continues():
    plugin = AddLatency(1000)
    x = noise(0.2)
    first = plugin(x[:, :600], SR, reset=False)
    second = plugin(x[:, 600:1500], SR, reset=False)
    third = plugin(x[:, 1500:], SR, reset=False)
    assert first.shape[1] == 0 and second.shape[1] == 500
    streamed = np.concatenate([first, second, third], axis=1)
    np.testing.assert_array_equal(streamed, x[:, : x.shape[1] - 1000])


def test_containers_sum_and_align_latency():
    x = noise(0.5)
    board = Pedalboard([AddLatency(100), Mix([AddLatency(10), Chain([AddLatency(333), Gain(0)])])])
    assert board.latency_samples == 100 + 333
    np.testing.assert_allclose(board(x, SR), 2 * x, atol=1e-6)


def test_mix_sums_and_empty_mix_is_silence():
    x = noise(0.1)
    np.testing.assert_allclose(Mix([Gain(0), Gain(0)])(x, SR), 2 * x, rtol=1e-6)
    assert not np.any(Mix([])(x, SR))
    np.testing.assert_allclose(Mix([Gain(6), Invert()])(x, SR), x * (GAIN6 - 1), atol=1e-6)


def test_a_none_branch_of_a_mix_is_the_dry_input_aligned_with_the_others():
    x = noise(0.1)
    np.testing.assert_array_equal(Mix([None])(x, SR), x)
    np.testing.assert_allclose(Mix([None, Gain(6)])(x, SR), x * (1 + GAIN6), rtol=1e-6)
    # the dry branch waits for a latent branch: out = x + x (latency compensated), not x + x shifted by 250
    mix = Mix([None, AddLatency(250)])
    assert mix.latency_samples == 250
    np.testing.assert_allclose(mix(x, SR), 2 * x, atol=1e-6)
    np.testing.assert_allclose(process_in_blocks(mix, x, SR, 64), 2 * x[:, : x.shape[1] - 250], atol=1e-6)


def test_nested_boards_multiply_gains():
    x = noise(0.1)
    board = Pedalboard([Pedalboard([Gain(6)]), Mix([Chain([Gain(6)]), Chain([Gain(6)])])])
    np.testing.assert_allclose(board(x, SR), x * GAIN6 * 2 * GAIN6, rtol=1e-5)


@pytest.mark.parametrize("block", [1, 7, 512, 8192])
def test_block_processing_matches_whole_for_a_nested_board(block):
    x = noise(0.3 if block > 1 else 0.03)
    board = Pedalboard([Gain(3), Mix([AddLatency(5), Chain([Invert(), AddLatency(9)])]), AddLatency(7)])
    whole = board(x, SR)
    streamed = process_in_blocks(board, x, SR, block)
    latency = board.latency_samples
    np.testing.assert_allclose(streamed, whole[:, : x.shape[1] - latency], atol=1e-6)


def test_reset_false_keeps_state_and_reset_true_clears_it():
    plugin = AddLatency(10)
    x = noise(0.01)
    plugin(x, SR, reset=False)
    carried = plugin(np.zeros_like(x), SR, reset=False)
    np.testing.assert_array_equal(carried[:, :10], x[:, -10:])
    plugin(x, SR, reset=False)
    np.testing.assert_array_equal(plugin(np.zeros_like(x), SR), np.zeros_like(x))


def test_channel_count_change_reprepares():
    plugin = AddLatency(3)
    plugin(noise(0.01, channels=2), SR, reset=False)
    y = plugin(noise(0.01, channels=1), SR, reset=False)
    assert y.shape[0] == 1


# ---------------------------------------------------------------- containers
def test_pedalboard_list_api():
    a, b, c = Gain(1), Gain(2), Invert()
    board = Pedalboard([a, b])
    board.append(c)
    board.insert(0, None)
    assert len(board) == 4 and board[1] is a and board[-1] is c and c in board
    sliced = board[1:3]
    assert isinstance(sliced, Pedalboard) and list(sliced) == [a, b]
    board.remove(None)
    del board[0]
    board[0] = Gain(3)
    assert [type(p).__name__ for p in board] == ["Gain", "Invert"]
    with pytest.raises(ValueError, match="not in list"):
        board.remove(a)
    with pytest.raises(TypeError):
        board.append("reverb")
    with pytest.raises(IndexError):
        board[10]


def test_none_entries_pass_through():
    x = noise(0.05)
    np.testing.assert_array_equal(Pedalboard([None, None])(x, SR), x)


def test_a_board_cannot_contain_itself():
    board = Pedalboard([Gain(1)])
    with pytest.raises(ValueError, match="itself"):
        board.append(board)
    outer = Pedalboard([board])
    with pytest.raises(ValueError):
        board.append(outer)


def test_duplicate_instances_are_refused():
    g = Gain(1)
    with pytest.raises(DuplicatePluginError, match="same plugin instance"):
        Pedalboard([g, Mix([g])])(noise(0.01), SR)
    with pytest.raises(RuntimeError):
        Pedalboard([g, g])(noise(0.01), SR)


def test_functional_process():
    x = noise(0.05)
    np.testing.assert_allclose(stompbox.process(x, SR, [Gain(6), Invert()]), -x * GAIN6, rtol=1e-6)
    np.testing.assert_array_equal(stompbox.process(x, SR, []), x)


def test_repr_of_containers():
    assert repr(Pedalboard([Gain(1), None])).startswith("<Pedalboard with 2 plugins: [<stompbox.Gain gain_db=1")
    assert repr(Mix([Gain(1)])).startswith("<stompbox.Mix with 1 plugin: [")


# ---------------------------------------------------------------- copying and threads
def test_pickle_and_deepcopy_give_identical_output():
    x = noise(0.2)
    board = Pedalboard([Gain(-3), Mix([AddLatency(11), Invert()]), stompbox.Bitcrush(6)])
    expected = board(x, SR)
    for clone in (pickle.loads(pickle.dumps(board)), copy.deepcopy(board)):
        assert clone is not board and clone[0] is not board[0]
        np.testing.assert_array_equal(clone(x, SR), expected)
        assert clone[0].gain_db == -3


def test_deepcopy_mid_stream_continues_identically():
    x = noise(0.1)
    plugin = AddLatency(50)
    plugin(x, SR, reset=False)
    clone = copy.deepcopy(plugin)
    np.testing.assert_array_equal(clone(x, SR, reset=False), plugin(x, SR, reset=False))


def test_one_board_from_many_threads_is_serialised_not_corrupted():
    x = noise(1.0)
    board = Pedalboard([Gain(6), AddLatency(100), Invert()])
    expected = board(x, SR)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                results.append(board(x, SR, buffer_size=1000))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 20
    for r in results:
        np.testing.assert_array_equal(r, expected)


def test_explicit_layout_resolves_square_and_short_blocks():
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(AddLatency(0)(x, SR, layout="channels-last"), x)
    plugin = AddLatency(1)
    plugin(np.zeros((2, 0), np.float32), SR, reset=False)
    assert plugin(np.ones((2, 1), np.float32), SR, reset=False).shape == (2, 0)  # stereo, 1 sample withheld
    with pytest.raises(ValueError, match="layout"):
        Gain()(x, SR, layout="rows")


def test_a_non_finite_block_does_not_poison_the_stream():
    plugin = AddLatency(3)
    x = noise(0.01)
    bad = x.copy()
    bad[0, 5] = np.nan
    plugin(bad, SR, reset=False)  # the NaN is still inside the delay line after this call...
    after = plugin(x, SR, reset=False)
    assert np.all(np.isfinite(after))  # ...but the state was cleared because the block's output was not finite


def test_latency_raised_mid_stream_is_withheld_too():
    plugin = AddLatency(10)
    x = noise(0.01)
    assert plugin(x, SR, reset=False).shape[1] == x.shape[1] - 10
    plugin.samples = 25  # 15 more samples of latency: the stream as a whole now withholds 25
    assert plugin(x, SR, reset=False).shape[1] == x.shape[1] - 15


class _BlockRecorder(Plugin):
    """Identity that records the size of every block it is handed."""

    _abstract = False

    def __init__(self, invariant: bool) -> None:
        super().__init__()
        self.sizes: list[int] = []
        self._invariant = invariant

    @property
    def _block_invariant(self) -> bool:  # type: ignore[override]
        return self._invariant

    def _process(self, block: np.ndarray) -> np.ndarray:
        self.sizes.append(block.shape[1])
        return block


@pytest.mark.parametrize("channels, floor", [(1, 131072), (2, 65536), (8, 16384), (64, 2048)])
def test_block_invariant_plugins_run_in_large_blocks_whatever_buffer_size(channels, floor):
    audio = np.random.default_rng(channels).uniform(-1, 1, (channels, 300_000)).astype(np.float32)
    recorder = _BlockRecorder(invariant=True)
    out = recorder.process(audio, SR, buffer_size=512)
    np.testing.assert_array_equal(out, audio)
    assert recorder.sizes[:-1] == [max(512, floor)] * (len(recorder.sizes) - 1)
    assert sum(recorder.sizes) == 300_000
    # a buffer_size above the floor is used as given
    recorder.sizes.clear()
    recorder.process(audio, SR, buffer_size=200_000)
    assert recorder.sizes == [200_000, 100_000]


def test_plugins_that_depend_on_block_size_get_exactly_buffer_size_even_inside_boards():
    audio = np.random.default_rng(2).uniform(-1, 1, (2, 10_000)).astype(np.float32)
    strict = _BlockRecorder(invariant=False)
    board = Pedalboard([Gain(-3), strict, Invert()])  # one block-dependent child makes the whole board honour it
    assert not board._block_invariant and Pedalboard([Gain(-3), Invert()])._block_invariant
    board.process(audio, SR, buffer_size=512)
    assert strict.sizes == [512] * 19 + [10_000 - 19 * 512]
    loose = _BlockRecorder(invariant=True)
    Pedalboard([Gain(-3), Mix([loose, Invert()])]).process(audio, SR, buffer_size=512)
    assert loose.sizes == [10_000]


def test_built_in_effects_are_block_invariant():
    for name in ("Gain", "Compressor", "LowpassFilter", "Reverb", "Convolution", "Resample", "MP3Compressor"):
        assert getattr(stompbox, name)._block_invariant, name
    from stompbox._internal import ForceMonoTestPlugin

    assert not AddLatency._block_invariant and not ForceMonoTestPlugin._block_invariant


def test_all_finite_agrees_with_numpy_on_every_kind_of_float32():
    # the engine's non-finite check reads exponent bits; it must say exactly what np.isfinite says
    from stompbox.core.finite import all_finite

    rng = np.random.default_rng(7)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3.4e38, -3.4e38], np.float32)
    for trial in range(300):
        bits = rng.integers(0, 2**32, size=(3, 257), dtype=np.uint32)
        bits &= np.uint32(0xBF7FFFFF) if trial % 2 else np.uint32(0xFFFFFFFF)  # half the trials: no NaN/inf
        block = bits.view(np.float32)
        if trial % 3 == 0:
            block[trial % 3, trial % 257] = specials[trial % len(specials)]
        for view in (block, block[:, ::2], block[1:, 5:200]):
            assert all_finite(view) == bool(np.isfinite(view).all())


def test_whole_call_plugins_run_a_call_as_one_block_unless_automated(monkeypatch):
    # a filter keeps no block-sized scratch, so a call runs in one step in place in the output array; under
    # automation (per-sample coefficient curves) it is cut into steps of bounded size; both give the staged result
    import stompbox
    from stompbox.core.plugin import _MIN_STEP_SAMPLES

    x = np.random.default_rng(3).standard_normal((2, 300_000)).astype(np.float32)
    steps: list[int] = []
    original = stompbox.PeakFilter._process

    def counting(self, block):
        steps.append(block.shape[1])
        return original(self, block)

    monkeypatch.setattr(stompbox.PeakFilter, "_process", counting)
    whole = stompbox.PeakFilter(cutoff_frequency_hz=1000, gain_db=6)(x, 44100)
    assert steps == [300_000]
    staged = stompbox.Pedalboard([stompbox.PeakFilter(cutoff_frequency_hz=1000, gain_db=6)])(x, 44100)
    np.testing.assert_array_equal(whole, staged)
    steps.clear()
    automated = stompbox.PeakFilter(cutoff_frequency_hz=np.full(300_000, 1000.0), gain_db=6)
    monkeypatch.setattr(stompbox.PeakFilter, "_process_automated", lambda self, b, c: steps.append(b.shape[1]) or b)
    automated(x, 44100)
    assert steps and max(steps) <= _MIN_STEP_SAMPLES // 2
