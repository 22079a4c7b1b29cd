"""``stompbox demo [OUT_DIR]``: the main job on an embedded default input.

Synthesises the example riff (:func:`stompbox.examples.example_clip`, Karplus-Strong guitar and bass at
112 BPM), streams it through the talk's chain (Distortion -> Delay -> Reverb, then an output gain so the wet
mix does not clip), and writes the dry and wet audio, the chain as a file, and a before/after picture.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

from .array_source import ArraySource
from .common import CLIError, add_common_options

#: 112 BPM, as in the example riff: a dotted eighth note is 0.75 beats
DOTTED_EIGHTH_SECONDS = round(0.75 * 60.0 / 112.0, 3)
TAIL_SECONDS = 3.0


def demo_chain() -> Any:
    """The demo's chain: Distortion(drive_db=25) -> Delay (a dotted eighth at 112 BPM) ->
    Reverb(room_size=0.75) -> Gain(-10 dB), which brings the wet mix's peak under full scale."""
    import stompbox

    return stompbox.Pedalboard(
        [
            stompbox.Distortion(drive_db=25),
            stompbox.Delay(delay_seconds=DOTTED_EIGHTH_SECONDS, feedback=0.35, mix=0.3),
            stompbox.Reverb(room_size=0.75, wet_level=0.3),
            stompbox.Gain(gain_db=-10),
        ]
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="synthesise a riff, run Distortion -> Delay -> Reverb, write the audio and a before/after plot",
        description=(
            "The main job on a built-in input: synthesise stompbox's example riff, stream it through "
            "Distortion -> Delay -> Reverb, and write demo_dry.wav, demo_wet.wav, demo_chain.json and "
            "demo.png (before/after; needs matplotlib) into OUT_DIR."
        ),
    )
    p.add_argument("out_dir", nargs="?", default=".", metavar="OUT_DIR", help="folder to write into (default: .)")
    p.add_argument("--seconds", type=float, default=8.0, metavar="S", help="length of the riff (default 8)")
    p.add_argument(
        "-r", "--rate", "--samplerate", dest="rate", type=int, default=44100, metavar="R", help="sample rate (44100)"
    )
    p.add_argument("-c", "--channels", type=int, default=None, metavar="N", help="channels (default: the riff's)")
    p.add_argument("-b", "--bits", type=int, default=16, choices=(8, 16, 24, 32), metavar="B", help="bits (16)")
    p.add_argument("-t", "--type", default="wav", metavar="TYPE", help="format of the audio files (default wav)")
    p.add_argument("--no-plot", action="store_true", help="skip the picture")
    add_common_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..batch import stream_through
    from ..examples import example_clip
    from ..io import AudioFile

    if not 0 < args.seconds <= 600:
        raise CLIError(f"--seconds must be in (0, 600] (got {args.seconds:g})", status=2)
    if args.rate < 8000:
        raise CLIError(f"--rate must be at least 8000 Hz (got {args.rate})", status=2)
    folder = args.out_dir
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise CLIError(f"{folder}: cannot create folder ({error.strerror or error})") from error
    rate = args.rate
    dry = example_clip(rate, args.seconds)
    if args.channels is not None and args.channels != dry.shape[0]:
        from ..io.channels import convert_channels

        dry = convert_channels(dry, args.channels)
    kind = args.type.lstrip(".").lower()
    board = demo_chain()
    written: list[str] = []

    def path(name: str) -> str:
        return os.path.join(folder, name)

    with AudioFile(path(f"demo_dry.{kind}"), "w", rate, dry.shape[0], bit_depth=args.bits) as out:
        out.write(dry)
    written.append(path(f"demo_dry.{kind}"))

    blocks: list[np.ndarray] = []

    def keep(block: np.ndarray) -> None:
        blocks.append(block.copy())
        out.write(block)

    with AudioFile(path(f"demo_wet.{kind}"), "w", rate, dry.shape[0], bit_depth=args.bits) as out:
        stream_through(board, ArraySource(dry, rate), keep, tail_frames=int(TAIL_SECONDS * rate))
    wet = np.concatenate(blocks, axis=1)
    written.append(path(f"demo_wet.{kind}"))

    board.save(path("demo_chain.json"))
    written.append(path("demo_chain.json"))

    note = ""
    if not args.no_plot:
        try:
            from ..analysis.plot import plot_audio

            plot_audio(
                dry,
                rate,
                wet,
                path=path("demo.png"),
                title="stompbox demo: Distortion -> Delay -> Reverb",
                labels=("dry (synthesised riff)", "wet"),
            )
            written.append(path("demo.png"))
        except ImportError:
            note = "(no demo.png: plotting needs matplotlib, `pip install stompbox[plot]`)"
    if args.quiet:
        return 0
    chain = " -> ".join(_describe(p) for p in board)
    print(f"chain: {chain}")
    for name in written:
        print(f"wrote {name}")
    if note:
        print(note)
    print(f"render your own file the same way: stompbox render IN.wav OUT.wav --chain {path('demo_chain.json')}")
    return 0


def _describe(plugin: Any) -> str:
    """``Delay(delay_seconds=0.402, feedback=0.35, mix=0.3)``: the parameters that differ from defaults."""
    changed = []
    specs = type(plugin).parameter_specs()
    for name, param in specs.items():
        value = getattr(plugin, name)
        if not param.is_default(value):
            changed.append(f"{name}={param.format(value)}")
    if not changed and specs:  # show the main setting even at its default
        name, param = next(iter(specs.items()))
        changed.append(f"{name}={param.format(getattr(plugin, name))}")
    return f"{type(plugin).__name__}({', '.join(changed)})"
