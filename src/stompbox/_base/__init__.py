"""The bottom layer of stompbox: the standard library and NumPy only, imported by every layer above.

- :mod:`~stompbox._base.errors`: the error root :class:`StompboxError` and the errors shared across layers;
- :mod:`~stompbox._base.layout`: the checks of audio arrays (layout detection, dtype, sample rate, block size);
- :mod:`~stompbox._base.channels`: the one rule for converting between channel counts;
- :mod:`~stompbox._base.jit`: the Numba guard every kernel is compiled through (it imports Numba itself only
  when the first kernel is defined);
- :mod:`~stompbox._base.atomic`: the one rule for writing a file atomically (temporary file, sync, rename);
- :mod:`~stompbox._base.limits`: the one rule for each kind of number (sample rates, resampling ratios, channel
  counts per format, tails, nesting, chain files), public as :mod:`stompbox.limits`.
"""
