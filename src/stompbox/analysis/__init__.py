"""Measuring and showing audio: plots of waveforms and spectrograms (:mod:`stompbox.analysis.plot`, needs the
optional extra ``plot``). Submodules are imported on use so ``import stompbox.analysis`` stays light."""
