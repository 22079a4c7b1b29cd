"""The lowest layer: the standard library and NumPy only (errors, checks, atomic writes)."""
