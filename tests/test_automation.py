"""Parameter automation: per-sample arrays, envelopes and LFOs, applied sample-accurately and block-invariantly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import stompbox as sb
from _audio import music, noise, process_in_blocks
from stompbox.chains import dumps, loads
from stompbox.core.automation import LFO, Curve, Envelope

SR = 44100


# ------------------------------------------------------------------------------------------ the objects
def test_envelope_linear_and_exponential_values():
    env = Envelope([(0.0, 100.0), (1.0, 1000.0), (2.0, 1000.0)], curve=["exponential", "linear"])
    v = env.render(0, 2 * 1000 + 1, 1000.0)
    assert v[0] == pytest.approx(100.0)
    assert v[500] == pytest.approx(np.sqrt(100.0 * 1000.0))  # geometric midpoint
    assert v[1000] == pytest.approx(1000.0)
    lin = Envelope([(0.5, -1.0), (1.5, 1.0)]).render(0, 2001, 1000.0)
    assert lin[0] == -1.0 and lin[499] == -1.0  # before the first point: held
    assert lin[1000] == pytest.approx(0.0)
    assert lin[2000] == 1.0  # after the last point: held
    jump = Envelope([(0.0, 0.0), (0.01, 0.0), (0.01, 5.0)]).render(0, 20, 1000.0)
    assert jump[9] == 0.0 and jump[10] == 5.0


@pytest.mark.parametrize(
    ("shape", "quarter", "three_quarters"),
    [("sine", 1, -1), ("triangle", 1, -1), ("square", 1, -1), ("saw", -0.5, 0.5)],
)
def test_lfo_shapes(shape, quarter, three_quarters):
    lfo = LFO(shape, rate_hz=1.0, depth=2.0, offset=10.0)
    v = lfo.render(0, 1000, 1000.0)
    assert v[250] == pytest.approx(10.0 + 2.0 * quarter)
    assert v[750] == pytest.approx(10.0 + 2.0 * three_quarters)
    assert lfo.bounds() == (8.0, 12.0)


def test_lfo_and_envelope_render_is_position_exact():
    # rendering a range in pieces gives exactly the whole (the phase comes from the absolute position)
    for auto in (LFO("sine", 3.7, 1.0), Envelope([(0, 1.0), (0.3, 5.0)], "exponential")):
        whole = auto.render(0, 10000, 44100.0)
        pieces = np.concatenate([auto.render(i, 333, 44100.0) for i in range(0, 10000, 333)])[:10000]
        np.testing.assert_array_equal(whole, pieces)


def test_invalid_automations_name_the_parameter_and_value():
    with pytest.raises(ValueError, match=r"cutoff_frequency_hz.*breakpoint 1 at 0.5 s.*-3"):
        sb.LowpassFilter(cutoff_frequency_hz=[(0.0, 100.0), (0.5, -3.0)])
    with pytest.raises(ValueError, match=r"mix.*sample 2.*1\.5"):
        sb.Delay(mix=np.array([0.0, 0.5, 1.5]))
    with pytest.raises(ValueError, match=r"gain_db.*sample 1.*nan"):
        sb.Gain(gain_db=np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match=r"ratio.*LFO reaches 0"):
        sb.Compressor(ratio=LFO(depth=2.0, offset=2.0))
    with pytest.raises(ValueError, match="exponential"):
        Envelope([(0, 0.0), (1, 1.0)], "exponential")
    with pytest.raises(ValueError, match="must not decrease"):
        Envelope([(1, 0.0), (0, 1.0)])
    with pytest.raises(TypeError, match="lookahead_ms cannot be automated"):
        sb.BrickwallLimiter(lookahead_ms=[(0, 1.0), (1, 2.0)])
    with pytest.raises(TypeError, match="freeze_mode cannot be automated"):
        sb.Reverb(freeze_mode=LFO())


# ------------------------------------------------------------------------------------------ the bar: Gain
def test_gain_ramp_matches_the_analytic_result_whole_and_in_blocks():
    n = 10 * SR
    x = noise(10.0, SR, channels=2, amplitude=0.3)
    ramp = np.linspace(-60.0, 0.0, n)
    expected = x.astype(np.float64) * 10.0 ** (ramp / 20.0)
    whole = sb.Gain(gain_db=ramp).process(x, SR)
    assert np.max(np.abs(whole - expected)) < 1e-6
    blocks = process_in_blocks(sb.Gain(gain_db=ramp), x, SR, 512)
    assert np.max(np.abs(blocks - expected)) < 1e-6
    np.testing.assert_array_equal(blocks, whole)


def test_envelope_gain_equals_its_rendered_array_and_clock_restarts_on_reset():
    x = noise(1.0, SR, channels=1)
    env = Envelope([(0.0, -20.0), (0.5, 6.0), (1.0, -3.0)])
    g = sb.Gain(gain_db=env)
    first = g.process(x, SR)
    expected = x * 10.0 ** (env.render(0, x.shape[1], SR) / 20.0)
    np.testing.assert_allclose(first, expected, atol=1e-6)
    np.testing.assert_array_equal(g.process(x, SR), first)  # reset=True: the envelope starts again
    g.reset()
    a = g.process(x[:, : SR // 2], SR, reset=False)
    b = g.process(x[:, SR // 2 :], SR, reset=False)  # the clock continued
    np.testing.assert_array_equal(np.concatenate([a, b], axis=1), first)
    assert g.gain_db == pytest.approx(-3.0, abs=1e-3)  # reading gives the value at the current position


def test_setting_a_number_removes_the_automation():
    g = sb.Gain(gain_db=LFO())
    assert "gain_db" in g.automation
    g.gain_db = 2.0
    assert g.automation == {} and g.gain_db == 2.0
    x = noise(0.1, SR)
    np.testing.assert_array_equal(g.process(x, SR), sb.Gain(2.0).process(x, SR))


# ------------------------------------------------------------------------------------------ the bar: filter sweep
def _stepped(plugin, name, values, x, step):
    """Reference: the plugin with a static parameter, set anew every ``step`` samples while streaming."""
    plugin.reset()
    out = []
    for i in range(0, x.shape[1], step):
        setattr(plugin, name, float(values[i]))
        out.append(plugin.process(x[:, i : i + step], SR, reset=False, layout="channels-first"))
    return np.concatenate(out, axis=1)


def _spectrum_db(y, ref):
    window = np.hanning(y.shape[1])
    err = np.abs(np.fft.rfft((y - ref)[0] * window))
    top = np.max(np.abs(np.fft.rfft(ref[0] * window)))
    return 20 * np.log10(np.max(err) / top)


@pytest.mark.parametrize(
    ("cls", "name", "kwargs"),
    [
        (sb.LowpassFilter, "cutoff_frequency_hz", {}),
        (sb.PeakFilter, "cutoff_frequency_hz", {"gain_db": 12.0, "q": 2.0}),
        (sb.HighShelfFilter, "cutoff_frequency_hz", {"gain_db": -12.0}),
    ],
)
def test_filter_sweep_has_no_steps(cls, name, kwargs):
    # an exponential sweep 100 Hz -> 8 kHz over 0.4 s of noise: the automated filter equals a reference whose
    # cutoff is set anew every sample (finely stepped) to below -80 dB of the signal, everywhere in the spectrum,
    # while a reference stepped every 512 samples (zipper noise) is far from it
    x = noise(0.4, SR, channels=1, amplitude=0.3)
    env = Envelope([(0.0, 100.0), (0.4, 8000.0)], "exponential")
    values = env.render(0, x.shape[1], SR)
    y = cls(**kwargs, **{name: env}).process(x, SR)
    fine = _stepped(cls(**kwargs), name, values, x, 1)
    coarse = _stepped(cls(**kwargs), name, values, x, 512)
    assert _spectrum_db(y, fine) < -80.0
    assert _spectrum_db(coarse, fine) > -80.0 + 20.0  # the test can see steps


def test_filter_automation_with_a_constant_equals_the_static_filter():
    x = music(0.5, SR)
    for cls, kwargs in ((sb.LowpassFilter, {}), (sb.PeakFilter, {"gain_db": 6.0, "q": 2.0})):
        static = cls(cutoff_frequency_hz=1000.0, **kwargs).process(x, SR)
        automated = cls(cutoff_frequency_hz=np.full(x.shape[1], 1000.0), **kwargs).process(x, SR)
        assert np.max(np.abs(static - automated)) < 1e-5


# ------------------------------------------------------------------------------------------ every effect
# (every automatable parameter of every effect the registry knows is automated, streamed in blocks of any size
# and heard: tests/test_contract.py)


def test_sub_block_automation_uses_the_value_at_each_sub_block_start():
    # BrickwallLimiter's ceiling is applied per 32-sample sub-block, aligned to the stream: a hard-clipped full
    # scale square wave comes out at exactly the ceiling of each sub-block once the gain has settled
    x = np.ones((1, 4096), np.float32)
    ceiling = np.repeat([-6.0, -12.0], 2048)
    y = sb.BrickwallLimiter(ceiling_db=ceiling, release_ms=1).process(x, SR)
    assert np.max(np.abs(y[0, 1800:2000])) == pytest.approx(10 ** (-6 / 20), rel=1e-4)
    assert np.max(np.abs(y[0, 3800:])) == pytest.approx(10 ** (-12 / 20), rel=1e-4)


# ------------------------------------------------------------------------------------------ chains and files
def test_envelopes_and_lfos_are_saved_and_loaded():
    board = sb.Pedalboard(
        [
            sb.Gain(gain_db=Envelope([(0, -60.0), (2.0, 0.0)], "linear")),
            sb.PeakFilter(cutoff_frequency_hz=Envelope([(0, 100.0), (1, 5000.0)], "exponential"), gain_db=6.0),
            sb.Chorus(mix=LFO("triangle", 0.5, 0.25, 0.5, phase=0.25)),
        ]
    )
    text = dumps(board)
    json.loads(text)
    again = loads(text)
    assert again[0].automation["gain_db"] == board[0].automation["gain_db"]
    assert again[2].automation["mix"] == LFO("triangle", 0.5, 0.25, 0.5, phase=0.25)
    x = music(0.3, SR)
    np.testing.assert_array_equal(again.process(x, SR), board.process(x, SR))
    assert "Envelope([(0, -60), (2, 0)])" in repr(board[0])


def test_arrays_are_refused_in_files_with_a_clear_error():
    board = sb.Pedalboard([sb.Gain(gain_db=np.zeros(10))])
    with pytest.raises(ValueError, match=r"Gain.gain_db.*per-sample automation array cannot be saved"):
        dumps(board)
    assert isinstance(board[0].automation["gain_db"], Curve)


def test_automation_in_chains_and_mix():
    x = music(0.3, SR)
    env = Envelope([(0, -30.0), (0.3, 0.0)])
    chained = sb.Pedalboard([sb.Gain(-3.0), sb.Gain(gain_db=env)]).process(x, SR, buffer_size=100)
    direct = sb.Gain(gain_db=env).process(sb.Gain(-3.0).process(x, SR), SR)
    np.testing.assert_allclose(chained, direct, atol=1e-7)
