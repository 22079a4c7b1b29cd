"""Loading a VST3 module (``.vst3`` bundle or shared object) and reading its factory."""

from __future__ import annotations

import ctypes
import os
import platform
import threading
from dataclasses import dataclass
from pathlib import Path

from ..._base.errors import PluginLoadError
from . import abi
from .hostobjs import host_application


@dataclass(frozen=True)
class ClassInfo:
    """One class exported by a VST3 factory."""

    cid: bytes
    name: str
    category: str
    cardinality: int
    sub_categories: str = ""
    vendor: str = ""
    version: str = ""
    sdk_version: str = ""

    @property
    def is_audio_module(self) -> bool:
        return self.category == "Audio Module Class"

    @property
    def is_instrument(self) -> bool:
        return "Instrument" in self.sub_categories.split("|")


def _arch_folder() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine) + "-linux"


def binary_path(path: str | os.PathLike[str]) -> Path:
    """The shared object inside a ``.vst3`` bundle (or the path itself when it is a file)."""
    p = Path(path)
    if not p.exists():
        raise PluginLoadError(f"Unable to load plugin {os.fspath(path)}: unsupported plugin format or load failure.")
    if p.is_file():
        return p
    contents = p / "Contents"
    preferred = contents / _arch_folder() / (p.stem + ".so")
    if preferred.is_file():
        return preferred
    candidates = sorted((contents / _arch_folder()).glob("*.so")) if (contents / _arch_folder()).is_dir() else []
    if candidates:
        return candidates[0]
    raise PluginLoadError(
        f"Unable to load plugin {os.fspath(path)}: no {_arch_folder()} shared object found in the bundle."
    )


class Vst3Module:
    """A loaded VST3 shared object: ``ModuleEntry`` called, factory read. Kept loaded for the process's life
    (unloading code that a plugin thread may still run is the classic host crash)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        so = binary_path(path)
        try:
            self.lib = ctypes.CDLL(os.fspath(so), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise PluginLoadError(f"Unable to load plugin {self.path}: {e}") from None
        try:
            get_factory = self.lib.GetPluginFactory
        except AttributeError:
            raise PluginLoadError(
                f"Unable to load plugin {self.path}: the file is a shared library but not a VST3 plugin "
                "(it exports no GetPluginFactory)."
            ) from None
        entry = getattr(self.lib, "ModuleEntry", None)
        if entry is not None:
            entry.restype = ctypes.c_bool
            entry.argtypes = [ctypes.c_void_p]
            if not entry(self.lib._handle):
                raise PluginLoadError(f"Unable to load plugin {self.path}: ModuleEntry failed.")
        get_factory.restype = ctypes.c_void_p
        get_factory.argtypes = []
        ptr = get_factory()
        if not ptr:
            raise PluginLoadError(f"Unable to load plugin {self.path}: GetPluginFactory returned NULL.")
        self.factory = abi.ComPtr(ptr, "IPluginFactory")
        self.has_factory2 = self._supports(abi.IPLUGINFACTORY2_IID)
        has_factory3 = self._supports(abi.IPLUGINFACTORY3_IID)
        if has_factory3:
            self.factory.setHostContext(host_application().ptr)
        info = abi.PFactoryInfo()
        self.factory.getFactoryInfo(ctypes.byref(info))
        self.vendor = abi.cstr(info.vendor)
        self.classes = self._read_classes()

    def _supports(self, iid_bytes: bytes) -> bool:
        other = self.factory.query(iid_bytes, "IPluginFactory")
        if other is None:
            return False
        other.release()
        return True

    def _read_classes(self) -> list[ClassInfo]:
        classes = []
        for i in range(self.factory.countClasses()):
            if self.has_factory2:
                info2 = abi.PClassInfo2()
                if self.factory.getClassInfo2(i, ctypes.byref(info2)) == abi.K_RESULT_OK:
                    classes.append(
                        ClassInfo(
                            bytes(info2.cid),
                            abi.cstr(info2.name),
                            abi.cstr(info2.category),
                            info2.cardinality,
                            abi.cstr(info2.subCategories),
                            abi.cstr(info2.vendor) or self.vendor,
                            abi.cstr(info2.version),
                            abi.cstr(info2.sdkVersion),
                        )
                    )
                    continue
            info = abi.PClassInfo()
            if self.factory.getClassInfo(i, ctypes.byref(info)) == abi.K_RESULT_OK:
                classes.append(
                    ClassInfo(bytes(info.cid), abi.cstr(info.name), abi.cstr(info.category), info.cardinality)
                )
        return classes

    @property
    def audio_classes(self) -> list[ClassInfo]:
        return [c for c in self.classes if c.is_audio_module]

    def create(self, cid: bytes, iid_bytes: bytes, interface: str) -> abi.ComPtr | None:
        out = ctypes.c_void_p()
        cid_buf = ctypes.create_string_buffer(cid, 16)
        iid_buf = ctypes.create_string_buffer(iid_bytes, 16)
        result = self.factory.createInstance(ctypes.addressof(cid_buf), ctypes.addressof(iid_buf), ctypes.byref(out))
        if result != abi.K_RESULT_OK or not out.value:
            return None
        return abi.ComPtr(out.value, interface)


_MODULES: dict[str, Vst3Module] = {}
_MODULES_LOCK = threading.Lock()


def load_module(path: str | os.PathLike[str]) -> Vst3Module:
    """The module at ``path``, loaded once per process."""
    key = os.path.realpath(os.fspath(path))
    with _MODULES_LOCK:
        module = _MODULES.get(key)
        if module is None:
            module = Vst3Module(path)
            _MODULES[key] = module
        return module
