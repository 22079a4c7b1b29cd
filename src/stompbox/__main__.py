"""``python -m stompbox ...``: the same command line as the ``stompbox`` script."""

import sys

from stompbox.cli.main import main

sys.exit(main())
