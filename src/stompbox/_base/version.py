"""The version of stompbox (``stompbox.__version__``), kept where every layer may read it."""

__version__ = "0.1.0"
