"""The bottom layer: rules that every other layer shares, built on the standard library and NumPy only."""
