"""The command line's effect grammar: ``EFFECT [PARAM=VALUE ...] ...`` to a Pedalboard, and back."""

from __future__ import annotations

import numpy as np
import pytest

import stompbox
from stompbox.cli.grammar import GrammarError, builtin_effects, find_effect, parse_effects, to_tokens


def test_the_talks_chain():
    board = parse_effects("distortion drive_db=25 delay delay_seconds=0.6 reverb room_size=0.75".split())
    assert isinstance(board, stompbox.Pedalboard)
    assert [type(p) for p in board] == [stompbox.Distortion, stompbox.Delay, stompbox.Reverb]
    assert board[0].drive_db == 25.0
    # (parameters are stored as float32, as pedalboard stores them; unset parameters keep their defaults)
    assert board[1].delay_seconds == float(np.float32(0.6)) and board[1].feedback == 0.0
    assert board[2].room_size == 0.75
    # the same chain as written in Python gives the same description
    python = stompbox.Pedalboard(
        [stompbox.Distortion(drive_db=25), stompbox.Delay(delay_seconds=0.6), stompbox.Reverb(room_size=0.75)]
    )
    assert board.to_dict() == python.to_dict()


@pytest.mark.parametrize(
    "name",
    ["LadderFilter", "ladderfilter", "LADDERFILTER", "ladder-filter", "ladder_filter", " ladderfilter"],
)
def test_effect_names_are_case_insensitive(name):
    assert find_effect(name) is stompbox.LadderFilter


def test_value_kinds():
    (ladder,) = parse_effects(["ladderfilter", "mode=HPF24", "cutoff_hz=1e3", "resonance=0.5"])
    assert ladder.mode == stompbox.LadderFilter.Mode.HPF24 and ladder.cutoff_hz == 1000.0
    (lower,) = parse_effects(["ladderfilter", "mode=bpf12"])  # enum names case-insensitive
    assert lower.mode == stompbox.LadderFilter.Mode.BPF12
    (by_number,) = parse_effects(["ladderfilter", "mode=4"])
    assert by_number.mode == stompbox.LadderFilter.Mode(4)
    for text, expected in [
        ("true", True),
        ("yes", True),
        ("on", True),
        ("1", True),
        ("False", False),
        ("0", False),
    ]:
        (limiter,) = parse_effects(["brickwalllimiter", f"true_peak={text}"])
        assert limiter.true_peak is expected
    (gain,) = parse_effects(["gain", "gain_db=-6"])  # a negative value is not an option
    assert gain.gain_db == -6.0
    (resample,) = parse_effects(["resample", "target_sample_rate=16000", "quality=Linear"])
    assert resample.target_sample_rate == 16000 and resample.quality.name == "Linear"
    assert len(parse_effects([])) == 0


def test_constructor_arguments_that_are_not_parameters(tmp_path):
    sf = pytest.importorskip("soundfile")
    ir = np.zeros(64, np.float32)
    ir[0] = 1.0
    path = tmp_path / "ir.wav"
    sf.write(path, ir, 44100, subtype="FLOAT")
    (conv,) = parse_effects(["convolution", f"impulse_response_filename={path}", "mix=0.5"])
    assert isinstance(conv, stompbox.Convolution) and conv.mix == 0.5
    with pytest.raises(GrammarError, match="Convolution needs impulse_response_filename="):
        parse_effects(["convolution", "mix=0.5"])


def test_appends_to_a_given_board():
    base = stompbox.Pedalboard([stompbox.Gain(gain_db=-3)])
    out = parse_effects(["invert"], base)
    assert out is base and [type(p) for p in out] == [stompbox.Gain, stompbox.Invert]


@pytest.mark.parametrize(
    "tokens, pieces",
    [
        (["distorton"], ["unknown effect 'distorton'", "did you mean Distortion?", "Reverb", "LadderFilter"]),
        (["frobnicator"], ["unknown effect 'frobnicator'", "valid effects:", "Gain"]),
        (
            ["delay", "dleay_seconds=1"],
            ["Delay has no parameter 'dleay_seconds'", "delay_seconds, feedback, mix"],
        ),
        (["delay", "delay_seconds=40"], ["Delay", "[0, 30] s", "40"]),
        (["delay", "delay_seconds=abc"], ["Delay.delay_seconds must be a number", "[0, 30] s"]),
        (["reverb", "room_size=1.5"], ["Reverb", "room_size", "[0, 1]"]),
        (["ladderfilter", "mode=HPF36"], ["LadderFilter.mode must be one of", "HPF24", "LPF12"]),
        (["brickwalllimiter", "true_peak=maybe"], ["true_peak must be true or false"]),
        (["drive_db=3", "distortion"], ["comes before any effect"]),
        (["gain", "gain_db="], ["missing value"]),
        (["gain", "=3"], ["missing parameter name"]),
        (["gain", "gain_db=1", "gain_db=2"], ["given twice"]),
        (["invert", "amount=1"], ["Invert takes no parameters"]),
        (["gain", "gain_db=nan"], ["finite"]),
        (["gain", "--tail"], ["unknown option '--tail'"]),
    ],
)
def test_errors_name_what_is_valid(tokens, pieces):
    with pytest.raises(GrammarError) as caught:
        parse_effects(tokens)
    message = str(caught.value)
    assert "\n" not in message
    for piece in pieces:
        assert piece in message, message


def test_a_string_is_not_a_token_list():
    with pytest.raises(TypeError):
        parse_effects("gain gain_db=3")  # type: ignore[arg-type]


def test_to_tokens_round_trips_every_builtin_with_non_default_values():
    rng = np.random.default_rng(0)
    boards = []
    for name, cls in builtin_effects().items():
        if name == "Convolution":
            continue
        settings = {}
        for pname, spec in cls.parameter_specs().items():
            if spec.kind is bool:
                settings[pname] = not spec.default
            elif spec.kind in (int, float):
                lo = spec.minimum if spec.minimum is not None else -24.0
                hi = spec.maximum if spec.maximum is not None else lo + 48.0
                value = float(rng.uniform(lo, hi))
                settings[pname] = round(value) if spec.kind is int else value
            else:  # an enum: the last member
                settings[pname] = list(spec.kind)[-1]
        boards.append(cls(**settings))
    board = stompbox.Pedalboard(boards)
    tokens = to_tokens(board)
    assert parse_effects(tokens).to_dict() == board.to_dict()


def test_every_builtin_is_reachable_by_its_name():
    names = builtin_effects()
    assert {"Distortion", "Delay", "Reverb", "LadderFilter", "Gain", "Compressor", "PitchShift"} <= set(names)
    assert "IIRFilter" not in names  # abstract: cannot be instantiated
    for name, cls in names.items():
        assert find_effect(name.lower()) is cls
