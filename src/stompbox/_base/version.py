"""The version of stompbox (``stompbox.__version__``), kept where every layer may read it."""

__version__ = "0.1.0"
#: the pedalboard release whose public API stompbox implements: the ``__version__`` that stompbox.compat's
#: ``pedalboard`` module reports (``__version__`` above stays stompbox's own)
__pedalboard_version__ = "0.9.26"
