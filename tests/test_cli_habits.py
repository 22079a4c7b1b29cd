"""The command's habits are SoX's and the same in every subcommand: a walk over every subcommand's ``--help``
checks the shared options, and the parser takes them (``-q`` is quiet, ``--quality`` is long only)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np
import pytest

from stompbox.cli.main import COMMANDS, build_parser, main
from stompbox.io import AudioFile

#: subcommands that read audio (take '-' for standard input), and that write it (rate, channels, bits, type)
READERS = {"render", "convert", "info", "loudness", "plot", "play"}
WRITERS = {"render", "convert", "batch", "record", "demo"}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _options(p: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in p._actions for s in a.option_strings}


def test_every_subcommand_is_walked():
    assert set(_subparsers()) == set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_shared_options_in_every_help(name, capsys):
    assert main([name, "--help"]) == 0
    text = capsys.readouterr().out
    options = _options(_subparsers()[name])
    for short, long in [("-q", "--quiet"), ("-V", "--verbose")]:
        assert short in text and long in text, (name, short)
        assert options[short] is options[long]
    assert "--debug" in options
    assert "--quality" not in options or options["--quality"].option_strings == ["--quality"]  # -q is quiet
    if name in WRITERS or name in READERS - {"info", "loudness", "plot", "play"}:
        for short, long in [("-r", "--rate"), ("-c", "--channels"), ("-b", "--bits"), ("-t", "--type")]:
            assert short in text and long in text, (name, short)
            assert options[short] is options[long]
    if name in READERS:  # raw input described in SoX's words; the readers' -t/-r/-c/-b describe their input
        assert "--input-type" in options or "-t" in options
        for short in ("-r", "-c", "-b", "-t"):
            assert short in options, (name, short)
    if name in ("render", "convert", "batch"):
        assert options["--samplerate"] is options["-r"] and options["--bit-depth"] is options["-b"]
        assert options["--format"] is options["-t"]  # the older spellings stay


def test_debug_is_taken_before_and_after_the_subcommand(tmp_path, capsys):
    missing = str(tmp_path / "missing.wav")
    assert main(["info", missing]) == 1
    with pytest.raises(Exception, match="missing"):
        main(["info", missing, "--debug"])
    with pytest.raises(Exception, match="missing"):
        main(["--debug", "info", missing])
    capsys.readouterr()


def test_quiet_and_verbose(tmp_path, capsys):
    src = tmp_path / "in.wav"
    with AudioFile(str(src), "w", 44100, 2) as f:
        f.write(np.zeros((2, 4410), np.float32))
    out = tmp_path / "out.flac"
    assert main(["convert", str(src), str(out), "-V"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "44100 Hz 2 ch" in err and "flac" in err
    assert main(["render", str(src), str(tmp_path / "o.wav"), "gain", "-3", "-q"]) == 0
    assert capsys.readouterr().err == ""  # quiet: not even the note on 'gain -3'
    assert main(["convert", str(src), str(tmp_path / "o.mp3"), "--quality", "V2", "-q"]) == 0


def test_sox_style_positional_values_are_read_with_a_note(tmp_path, capsys):
    src = tmp_path / "in.wav"
    with AudioFile(str(src), "w", 44100, 1) as f:
        f.write(np.full(4410, 0.5, np.float32))
    out = tmp_path / "out.wav"
    assert main(["render", str(src), str(out), "gain", "-6"]) == 0
    assert capsys.readouterr().err == "stompbox: note: read 'gain -6' as gain gain_db=-6\n"
    with AudioFile(str(out)) as f:
        assert f.read(10).max() == pytest.approx(0.5 * 10 ** (-6 / 20), abs=1e-4)
    from stompbox.cli.grammar import GrammarError, parse_effects

    with pytest.raises(GrammarError, match="write gain gain_db=-3"):
        parse_effects(["gain", "-3"])  # the Python grammar alone names the spelling


def test_usage_errors_are_one_line_like_the_tools_own():
    code = "import sys; from stompbox.cli.main import main; sys.exit(main())"
    for argv in (["render"], ["info", "--nope", "x.wav"], ["convert", "-r", "fast", "a", "b"], ["nosuch"]):
        done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, argv
        assert done.stderr.count("\n") == 1 and ": error: " in done.stderr and "usage:" not in done.stderr, argv


def test_json_is_one_shape_for_info_and_loudness(tmp_path, capsys):
    a = tmp_path / "a.wav"
    with AudioFile(str(a), "w", 48000, 2) as f:
        f.write(np.zeros((2, 48000), np.float32) + 0.1)
    missing = str(tmp_path / "missing.wav")
    for command in ("info", "loudness"):
        assert main([command, "--json", str(a), missing, str(a)]) == 1
        records = json.loads(capsys.readouterr().out)
        assert [r["path"] for r in records] == [str(a), missing, str(a)]
        assert "error" in records[1] and "error" not in records[0]
        assert records[0]["samplerate"] == 48000 and records[0]["num_channels"] == 2
        assert records[0]["frames"] == 48000 and records[0]["duration"] == pytest.approx(1.0)


def test_effects_listing_is_plain_text_and_documents_every_argument(capsys):
    assert main(["effects"]) == 0
    text = capsys.readouterr().out
    assert "``" not in text and ":mod:" not in text  # reST markup is for the API docs, not a terminal
    assert main(["effects", "--json", "convolution"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    docs = {p["name"]: p["doc"] for p in entry["parameters"]}
    assert "soxr" in docs["ir_resampling"]  # not "constructor argument"


def test_an_audio_file_given_as_a_chain_is_a_one_line_usage_error(tmp_path, capsys):
    src = tmp_path / "in.wav"
    with AudioFile(str(src), "w", 44100, 1) as f:
        f.write(np.full(441, 0.25, np.float32))
    assert main(["render", str(src), str(tmp_path / "o.wav"), "--chain", str(src)]) == 2
    assert capsys.readouterr().err == f"stompbox: error: {src}: not a chain file (a chain is JSON or YAML text)\n"
