"""The resampling quality enum shared by ``stompbox.io`` and the ``Resample`` plugin.

Values and names match pedalboard's ``Resample.Quality``. stompbox resamples with soxr, so each value selects
a soxr recipe (see :data:`SOXR_RECIPE`); the names are kept for compatibility, the filter lengths are soxr's.
"""

from __future__ import annotations

from .._base.enums import PedalboardEnum

__all__ = ["Quality", "SOXR_RECIPE", "coerce_quality"]


class Quality(PedalboardEnum):
    """Resampling quality, from the cheapest (``ZeroOrderHold``) to the most precise (``WindowedSinc256``).

    The integer values are pedalboard's. How each maps to the resampling engine (soxr):

    ========================  =====  ===============================================================
    name                      value  soxr recipe
    ========================  =====  ===============================================================
    ZeroOrderHold             0      QQ (quick cubic interpolation, no anti-aliasing filter)
    Linear                    1      QQ
    CatmullRom                2      QQ
    Lagrange                  3      QQ
    WindowedSinc              4      HQ (20-bit, 95 % bandwidth, anti-aliased)
    WindowedSinc256           5      VHQ (28-bit, 95 % bandwidth)
    WindowedSinc128           6      VHQ
    WindowedSinc64            7      HQ
    WindowedSinc32 (default)  8      HQ
    WindowedSinc16            9      MQ (16-bit, 91 % bandwidth)
    WindowedSinc8             10     LQ (16-bit, 80 % bandwidth)
    ========================  =====  ===============================================================

    The four interpolator qualities all map to soxr's "quick" recipe: like pedalboard's interpolators they
    are cheap and alias, but they are not sample-for-sample the same curves (a cubic, not a hold or a line).
    """

    ZeroOrderHold = 0
    Linear = 1
    CatmullRom = 2
    Lagrange = 3
    WindowedSinc = 4
    WindowedSinc256 = 5
    WindowedSinc128 = 6
    WindowedSinc64 = 7
    WindowedSinc32 = 8
    WindowedSinc16 = 9
    WindowedSinc8 = 10


#: soxr quality recipe for each :class:`Quality`.
SOXR_RECIPE: dict[Quality, str] = {
    Quality.ZeroOrderHold: "QQ",
    Quality.Linear: "QQ",
    Quality.CatmullRom: "QQ",
    Quality.Lagrange: "QQ",
    Quality.WindowedSinc: "HQ",
    Quality.WindowedSinc256: "VHQ",
    Quality.WindowedSinc128: "VHQ",
    Quality.WindowedSinc64: "HQ",
    Quality.WindowedSinc32: "HQ",
    Quality.WindowedSinc16: "MQ",
    Quality.WindowedSinc8: "LQ",
}


def coerce_quality(quality: object) -> Quality:
    """Return ``quality`` as a :class:`Quality`.

    Accepts a :class:`Quality`, any enum or int with one of the values 0..10 (so pedalboard's own
    ``Resample.Quality`` members work too), or a member name such as ``"WindowedSinc32"`` (case-insensitive).

    Raises
    ------
    ValueError
        For an unknown name or value. ``TypeError`` for other types.
    """
    if isinstance(quality, Quality):
        return quality
    if isinstance(quality, str):
        wanted = quality.strip().lower()
        for member in Quality:
            if member.name.lower() == wanted:
                return member
        names = ", ".join(m.name for m in Quality)
        raise ValueError(f"Unknown resampling quality {quality!r}; expected one of: {names}.")
    if isinstance(quality, bool):
        raise TypeError(f"Resampling quality must be a Quality, an int or a name, not {quality!r}.")
    value = getattr(quality, "value", quality)
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return Quality(value)
        except ValueError:
            raise ValueError(f"Unknown resampling quality value {value!r}; expected 0..10.") from None
    raise TypeError(f"Resampling quality must be a Quality, an int or a name, not {type(quality).__name__}.")
