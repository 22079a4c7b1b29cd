"""``python -m stompbox ...``: the same command line as the ``stompbox`` script."""

from stompbox.cli.main import entry

entry()
