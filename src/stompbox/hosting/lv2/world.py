"""The lilv world: the library, one world holding every installed plugin description, the URID map, and
finding plugins in it (by URI, by bundle folder and name)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlparse

from ..._base.errors import PluginLoadError
from ..external import choose_plugin
from .abi import LV2, MAP_FN, RDF_TYPE, SIGNATURES, UNMAP_FN, LV2_URID_Map, LV2_URID_Unmap


class Lilv:
    """The lilv library and one world holding every installed plugin description (shared, thread-safe)."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("lilv-0") or "liblilv-0.so.0"
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            raise PluginLoadError(
                f"LV2 hosting needs liblilv (Debian package liblilv-0-0), which could not be loaded: {e}"
            ) from None
        for fname, (restype, argtypes) in SIGNATURES.items():
            fn = getattr(lib, fname)
            fn.restype, fn.argtypes = restype, argtypes
        self.lib = lib
        self.lock = threading.RLock()
        self.world = lib.lilv_world_new()
        lib.lilv_world_load_all(self.world)
        self._nodes: dict[str, int] = {}
        self.urids = UridMap()
        self.loaded_bundles: set[str] = set()

    def uri(self, text: str) -> int:
        """A cached LilvNode for a URI (kept for the life of the process)."""
        node = self._nodes.get(text)
        if node is None:
            node = self.lib.lilv_new_uri(self.world, text.encode())
            self._nodes[text] = node
        return node

    def string(self, node: int | None) -> str:
        if not node:
            return ""
        raw = self.lib.lilv_node_as_string(node)
        return raw.decode("utf-8", "replace") if raw else ""

    def take_string(self, node: int | None) -> str:
        """The string of a node the caller owns, freeing it."""
        if not node:
            return ""
        try:
            return self.string(node)
        finally:
            self.lib.lilv_node_free(node)

    def iter_nodes(self, nodes: int | None) -> Iterator[int]:
        lib = self.lib
        if not nodes:
            return
        it = lib.lilv_nodes_begin(nodes)
        while not lib.lilv_nodes_is_end(nodes, it):
            yield lib.lilv_nodes_get(nodes, it)
            it = lib.lilv_nodes_next(nodes, it)

    def plugins(self) -> Iterator[int]:
        lib = self.lib
        plugins = lib.lilv_world_get_all_plugins(self.world)
        it = lib.lilv_plugins_begin(plugins)
        while not lib.lilv_plugins_is_end(plugins, it):
            yield lib.lilv_plugins_get(plugins, it)
            it = lib.lilv_plugins_next(plugins, it)

    def plugin_uri(self, plugin: int) -> str:
        return self.string(self.lib.lilv_plugin_get_uri(plugin))

    def bundle_path(self, plugin: int) -> str:
        return uri_to_path(self.string(self.lib.lilv_plugin_get_bundle_uri(plugin)))

    def load_bundle(self, path: str) -> None:
        with self.lock:
            if path in self.loaded_bundles:
                return
            node = self.lib.lilv_new_file_uri(self.world, None, (path.rstrip("/") + "/").encode())
            try:
                self.lib.lilv_world_load_bundle(self.world, node)
            finally:
                self.lib.lilv_node_free(node)
            self.loaded_bundles.add(path)


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return os.path.normpath(unquote(parsed.path)) if parsed.scheme == "file" else uri


_LILV: Lilv | None = None
_LILV_LOCK = threading.Lock()


def lilv() -> Lilv:
    """The process-wide lilv world (created on first use: reading every installed description takes a
    fraction of a second)."""
    global _LILV
    with _LILV_LOCK:
        if _LILV is None:
            _LILV = Lilv()
        return _LILV


class UridMap:
    """``urid:map`` and ``urid:unmap``: URIs <-> small integers, one table for the whole process."""

    def __init__(self) -> None:
        self._ids: dict[bytes, int] = {}
        self._uris: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self._lock = threading.Lock()
        self._map_fn = MAP_FN(self._map)
        self._unmap_fn = UNMAP_FN(self._unmap)
        self.map_struct = LV2_URID_Map(None, self._map_fn)
        self.unmap_struct = LV2_URID_Unmap(None, self._unmap_fn)

    def _map(self, _handle: Any, uri: bytes | None) -> int:
        if not uri:
            return 0
        return self.map(uri)

    def map(self, uri: bytes | str) -> int:
        key = uri.encode() if isinstance(uri, str) else uri
        with self._lock:
            urid = self._ids.get(key)
            if urid is None:
                urid = len(self._ids) + 1
                self._ids[key] = urid
                self._uris[urid] = ctypes.create_string_buffer(key)
            return urid

    def _unmap(self, _handle: Any, urid: int) -> int | None:
        buf = self._uris.get(urid)
        return ctypes.addressof(buf) if buf is not None else None

    def unmap(self, urid: int) -> str | None:
        buf = self._uris.get(urid)
        return buf.value.decode() if buf is not None else None


# ---------------------------------------------------------------------------------------------------- discovery
def installed_lv2_plugins() -> list[str]:
    """The URIs of every LV2 plugin lilv finds (``LV2_PATH``, or ``~/.lv2``, ``/usr/lib/lv2``,
    ``/usr/local/lib/lv2`` and the multiarch folder), sorted."""
    world = lilv()
    with world.lock:
        return sorted(world.plugin_uri(p) for p in world.plugins())


def find_plugin(target: str, plugin_name: str | None) -> tuple[Lilv, int]:
    """The lilv plugin for a URI, or for a bundle folder (or a file in it) plus an optional name/URI."""
    world = lilv()
    with world.lock:
        if ("://" in target or target.startswith("urn:")) and not target.startswith("file://"):
            for p in world.plugins():
                if world.plugin_uri(p) == target:
                    return world, p
            raise PluginLoadError(f"No LV2 plugin with the URI {target!r} is installed.")
        path = uri_to_path(target) if target.startswith("file://") else target
        bundle = os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path))
        if not os.path.isfile(os.path.join(bundle, "manifest.ttl")):
            raise PluginLoadError(f"{target!r} is not an LV2 bundle (no manifest.ttl).")
        found = bundle_plugins(world, bundle)
        if not found:
            raise PluginLoadError(f"The LV2 bundle {bundle} describes no plugin.")
        chosen = choose_plugin(
            target,
            found,
            plugin_name,
            lambda p: (plugin_name_of(world, p), world.plugin_uri(p)),
            "names (or URIs)",
            world.plugin_uri,
        )
        return world, chosen


def bundle_plugins(world: Lilv, bundle: str) -> list[int]:
    """The plugins a bundle folder describes (read into the world first if lilv did not find it installed)."""
    with world.lock:
        found = [p for p in world.plugins() if os.path.realpath(world.bundle_path(p)) == bundle]
        if not found:
            world.load_bundle(bundle)
            found = [p for p in world.plugins() if os.path.realpath(world.bundle_path(p)) == bundle]
        return found


def plugin_classes(world: Lilv, plugin: int) -> list[str]:
    """The plugin's ``rdf:type`` URIs other than ``lv2:Plugin`` (lilv's class lookup needs the LV2 spec
    bundles, which are often not installed)."""
    lib = world.lib
    nodes = lib.lilv_plugin_get_value(plugin, world.uri(RDF_TYPE))
    out = [world.string(n) for n in world.iter_nodes(nodes)]
    lib.lilv_nodes_free(nodes)
    return sorted(c for c in out if c != LV2 + "Plugin")


def plugin_name_of(world: Lilv, plugin: int) -> str:
    """The plugin's ``doap:name``."""
    return world.take_string(world.lib.lilv_plugin_get_name(plugin))


def lv2_plugin_names(path: str | os.PathLike[str]) -> list[str]:
    """The names of the plugins described in an LV2 bundle."""
    world = lilv()
    bundle = os.path.realpath(os.fspath(path))
    with world.lock:
        return [plugin_name_of(world, p) for p in bundle_plugins(world, bundle)]
