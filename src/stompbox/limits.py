"""The limits stompbox puts on numbers: sample rates, resampling ratios, channel counts, tails, nesting and
chain files. Each is stated once here and checked by every public call that takes such a number; a value
outside raises :class:`LimitError` (a ``ValueError``) that states the allowed range.

See the table in :mod:`stompbox._base.limits` and the "Limits" section of the robustness guide.
"""

from ._base.limits import *  # noqa: F403
from ._base.limits import __all__  # noqa: F401
