# ruff: noqa: UP031 - percent formatting of enums is what is measured here
"""stompbox's enums print, format and convert as pedalboard's: str/format name the member, repr and int agree."""

from __future__ import annotations

import pytest

import stompbox
import stompbox.io


def pairs(pb):
    import pedalboard.io

    return [
        (stompbox.LadderFilter.Mode, pb.LadderFilter.Mode),
        (stompbox.Resample.Quality, pb.Resample.Quality),
        (stompbox.ExternalPluginReloadType, pb.ExternalPluginReloadType),
        (stompbox.io.WriteableAudioFileFlag, pedalboard.io.WriteableAudioFileFlag),
    ]


def test_every_member_prints_as_pedalboards(pb):
    seen = 0
    for ours, theirs in pairs(pb):
        assert list(ours.__members__) == list(theirs.__members__)
        for name, member in ours.__members__.items():
            other = theirs.__members__[name]
            assert (repr(member), str(member), format(member), f"{member}", "%s" % member) == (
                repr(other),
                str(other),
                format(other),
                f"{other}",
                "%s" % other,
            )
            assert (int(member), "%d" % member, member.name) == (int(other), "%d" % other, other.name)
            seen += 1
    assert seen == 6 + 11 + 3 + 1


def test_the_texts_the_issue_names():
    assert str(stompbox.LadderFilter.Mode.HPF12) == "Mode.HPF12"
    assert f"{stompbox.Resample.Quality.WindowedSinc32}" == "Quality.WindowedSinc32"
    assert f"{stompbox.Resample.Quality.WindowedSinc32:d}" == "8"  # a numeric spec formats the number
    assert f"{stompbox.LadderFilter.Mode.HPF12:>12}" == "  Mode.HPF12"


@pytest.mark.parametrize("value", [1, stompbox.LadderFilter.Mode.HPF12])
def test_members_still_compare_and_convert_as_ints(value):
    assert stompbox.LadderFilter(mode=value).mode is stompbox.LadderFilter.Mode.HPF12
    assert stompbox.LadderFilter.Mode(1) == 1
