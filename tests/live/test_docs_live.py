"""The live-audio page of the user guide (docs/guide/live.md) runs as written against the private PulseAudio
server of this folder's conftest (its null sink is the default output, its monitor the default input)."""

from __future__ import annotations

import pytest

from _docs import GUIDE, is_live, make_inputs, run_page


@pytest.mark.parametrize("name", [p.name for p in sorted(GUIDE.glob("*.md")) if is_live(p)])
def test_live_guide_page_examples_run(name, pulse, tmp_path, monkeypatch):
    make_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    run_page(GUIDE / name, tmp_path)
