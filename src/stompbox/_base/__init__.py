"""The bottom layer: rules shared by every other layer, importing only the standard library and NumPy."""
