"""One instantiated LV2 plugin with its buffers connected (audio, controls, control outputs, CV, atoms)."""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._base.errors import PluginLoadError
from ..ports import MAX_BLOCK, PortInstance
from .abi import ATOM_CAPACITY, WORKER, LV2_Worker_Interface
from .features import AtomBuffer, HostFeatures, Worker

if TYPE_CHECKING:
    from .plugin import LV2Plugin


class Lv2Instance(PortInstance):
    """One instantiated plugin with its buffers connected."""

    def __init__(self, owner: LV2Plugin, sample_rate: float) -> None:
        world = owner._world
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            # plugins built on Qt (synthv1) create a QApplication even without a UI: let it start headless
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        self.features = HostFeatures(world, sample_rate)
        with world.lock:
            ptr = world.lib.lilv_plugin_instantiate(owner._plugin, sample_rate, self.features.array)
        if not ptr:
            raise PluginLoadError(f"The LV2 plugin {owner.uri} failed to instantiate at {sample_rate:g} Hz.")
        self.ptr = ptr
        self.world = world
        desc = ptr.contents.lv2_descriptor.contents
        self.handle = ptr.contents.lv2_handle
        self._run = desc.run
        self._activate_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(desc.activate) if desc.activate else None
        self._deactivate_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(desc.deactivate) if desc.deactivate else None
        if desc.extension_data:
            worker = desc.extension_data(WORKER.encode() + b"interface")
            if worker:
                iface = ctypes.cast(worker, ctypes.POINTER(LV2_Worker_Interface)).contents
                self.features.worker = Worker(iface, self.handle)
        connect = desc.connect_port
        control_outputs = [p.index for p in owner._ports if p.kind == "control" and not p.is_input]
        self._connect(connect, owner, control_outputs, len(owner._ports))
        self.atoms: list[AtomBuffer] = []
        self.midi_in: AtomBuffer | None = None
        self._keep: list[Any] = []
        for p in owner._ports:
            if p.kind == "cv" or (p.kind == "audio" and p.sidechain):
                buf = np.full(MAX_BLOCK, p.cv if p.is_input else 0.0, np.float32)
                self._keep.append(buf)
                connect(self.handle, p.index, buf.ctypes.data)
            elif p.kind == "atom":
                atom = AtomBuffer(world.urids, p.is_input)
                self.atoms.append(atom)
                if p.is_input and p.midi and self.midi_in is None:
                    self.midi_in = atom
                connect(self.handle, p.index, atom.address)
            elif p.kind == "other":
                buf = np.zeros(ATOM_CAPACITY // 4, np.float32)
                self._keep.append(buf)
                connect(self.handle, p.index, buf.ctypes.data)
        # activated right away: some plugins (swh) allocate in activate() and free in cleanup() unconditionally
        self.activate()

    def run(self, n: int) -> None:
        for atom in self.atoms:
            if not atom.is_input or atom is not self.midi_in:
                atom.clear()
        self._run(self.handle, n)
        if self.midi_in is not None:
            self.midi_in.clear()
        worker = self.features.worker
        if worker is not None and worker.responses:
            worker.deliver()

    def _destroy(self) -> None:
        self.world.lib.lilv_instance_free(self.ptr)
        self.ptr = None
