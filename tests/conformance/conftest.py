"""Conformance tests compare stompbox with pedalboard 0.9.26; they skip when pedalboard is not installed."""

import pytest

pedalboard = pytest.importorskip("pedalboard", reason="pedalboard (the reference) is not installed")


@pytest.fixture(scope="session")
def pb():
    return pedalboard
