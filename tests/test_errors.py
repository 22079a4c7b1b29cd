"""One error root: every exception stompbox defines is a ``stompbox.StompboxError`` and also the built-in
exception pedalboard raises in the same place."""

from __future__ import annotations

import pytest

import stompbox
from stompbox._base import errors


def test_the_root_is_exported_from_the_package() -> None:
    assert stompbox.StompboxError is errors.StompboxError
    assert "StompboxError" in stompbox.__all__
    assert stompbox.core.StompboxError is errors.StompboxError


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (errors.LayoutError, ValueError),
        (errors.ChainFormatError, ValueError),
        (errors.AudioDeviceError, RuntimeError),
        (errors.PluginLoadError, ImportError),
        (errors.ClosedError, RuntimeError),
        (errors.DuplicatePluginError, RuntimeError),
    ],
)
def test_each_error_is_both_the_root_and_the_builtin(cls: type, builtin: type) -> None:
    assert issubclass(cls, errors.StompboxError) and issubclass(cls, builtin)


def test_the_errors_are_the_same_classes_at_their_old_import_paths() -> None:
    from stompbox.chains import ChainFormatError
    from stompbox.cli.common import CLIError
    from stompbox.cli.grammar import GrammarError
    from stompbox.core.errors import LayoutError
    from stompbox.hosting import PluginLoadError
    from stompbox.hosting.ladspa import PluginLoadError as LadspaError
    from stompbox.hosting.lv2 import PluginLoadError as Lv2Error
    from stompbox.hosting.vst3 import PluginLoadError as Vst3Error
    from stompbox.io import AudioDeviceError, AudioFileError

    assert ChainFormatError is errors.ChainFormatError and LayoutError is errors.LayoutError
    assert PluginLoadError is LadspaError is Lv2Error is Vst3Error is errors.PluginLoadError
    assert AudioDeviceError is errors.AudioDeviceError
    for cls in (GrammarError, CLIError, AudioFileError):
        assert issubclass(cls, stompbox.StompboxError)
    assert issubclass(GrammarError, ValueError)


def test_load_plugin_of_a_missing_file_raises_the_plugin_load_error(tmp_path) -> None:
    missing = tmp_path / "nothing-here.vst3"
    with pytest.raises(stompbox.StompboxError) as info:
        stompbox.load_plugin(str(missing))
    assert isinstance(info.value, ImportError)  # what pedalboard raises
    assert type(info.value) is errors.PluginLoadError
    assert "Failed to load plugin as VST3Plugin" in str(info.value)


def test_every_public_exception_class_of_stompbox_is_a_stompbox_error() -> None:
    import importlib
    import pkgutil

    found = []
    for info in pkgutil.walk_packages(stompbox.__path__, "stompbox."):
        if ".cli." in info.name or info.name.endswith("__main__"):
            continue  # the command line: CLIError and GrammarError are checked above
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # a host library that is not installed here
            continue
        for name, value in vars(module).items():
            is_error = isinstance(value, type) and issubclass(value, Exception) and not issubclass(value, Warning)
            if is_error and value.__module__ == info.name:
                if not name.startswith("_"):
                    found.append(value)
    assert len(found) >= 15
    outside = [f"{c.__module__}.{c.__name__}" for c in found if not issubclass(c, stompbox.StompboxError)]
    assert outside == []
