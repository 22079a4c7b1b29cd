"""Plugin state containers: the ``raw_state`` blob and the ``.vstpreset`` file format.

``raw_state`` uses the same container as pedalboard 0.9.26 (so states saved by either load in both):
``b"VC2!"``, a little-endian uint32 byte count, then a NUL-terminated one-line XML document
``<VST3PluginState><IComponent>..</IComponent><IEditController>..</IEditController></VST3PluginState>`` whose
elements hold the component's and the controller's ``getState`` bytes as ``"<size>.<chars>"``: the bytes
read as
one little-endian integer, cut into 6-bit digits from the least significant end, each written with the
alphabet
``.A-Za-z0-9+``.

``.vstpreset`` (the VST3 SDK's documented preset format): ``b"VST3"``, int32 version (1), the class id as 32
ASCII hex digits, int64 offset of the chunk list; chunk data; the list ``b"List"``, int32 count, then per
chunk a
4-byte id (``Comp``, ``Cont``), int64 offset and int64 size.
"""

from __future__ import annotations

import re
import struct

ALPHABET = ".ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+"
_INDEX = {c: i for i, c in enumerate(ALPHABET)}
MAGIC = b"VC2!"


def encode_block(data: bytes) -> str:
    """``"<size>.<6-bit digits>"`` for a byte string."""
    value = int.from_bytes(data, "little")
    digits = (len(data) * 8 + 5) // 6
    return f"{len(data)}." + "".join(ALPHABET[(value >> (6 * i)) & 63] for i in range(digits))


def decode_block(text: str) -> bytes:
    size_text, _, digits = text.strip().partition(".")
    size = int(size_text)
    value = 0
    for i, ch in enumerate(digits):
        value |= _INDEX[ch] << (6 * i)
    return value.to_bytes(max(size, (len(digits) * 6 + 7) // 8), "little")[:size]


def pack_raw_state(component: bytes, controller: bytes) -> bytes:
    xml = '<?xml version="1.0" encoding="UTF-8"?> <VST3PluginState>'
    xml += f"<IComponent>{encode_block(component)}</IComponent>"
    if controller:
        xml += f"<IEditController>{encode_block(controller)}</IEditController>"
    xml += "</VST3PluginState>"
    body = xml.encode("utf-8") + b"\0"
    return MAGIC + struct.pack("<I", len(body)) + body


def unpack_raw_state(blob: bytes) -> tuple[bytes | None, bytes | None]:
    """(component, controller) state from a ``raw_state`` blob; raises ``ValueError`` for other data."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(f"raw_state must be bytes, not {type(blob).__name__}")
    blob = bytes(blob)
    if not blob.startswith(MAGIC) or len(blob) < 8:
        raise ValueError("raw_state is not a VST3 plugin state (it should start with b'VC2!').")
    (size,) = struct.unpack("<I", blob[4:8])
    xml = blob[8 : 8 + size].rstrip(b"\0").decode("utf-8", errors="replace")
    if "<VST3PluginState" not in xml:
        raise ValueError("raw_state is not a VST3 plugin state (no <VST3PluginState> element).")

    def element(tag: str) -> bytes | None:
        m = re.search(rf"<{tag}>([^<]*)</{tag}>", xml)
        return decode_block(m.group(1)) if m and m.group(1).strip() else None

    return element("IComponent"), element("IEditController")


def pack_preset(class_id: bytes, component: bytes, controller: bytes) -> bytes:
    header_size = 4 + 4 + 32 + 8
    chunks = [(b"Comp", component)] + ([(b"Cont", controller)] if controller else [])
    body = b""
    entries = []
    offset = header_size
    for cid, data in chunks:
        entries.append((cid, offset, len(data)))
        body += data
        offset += len(data)
    listing = b"List" + struct.pack("<i", len(entries))
    listing += b"".join(cid + struct.pack("<qq", off, size) for cid, off, size in entries)
    header = b"VST3" + struct.pack("<i", 1) + class_id.hex().upper().encode("ascii") + struct.pack("<q", offset)
    return header + body + listing


def unpack_preset(data: bytes) -> tuple[bytes, bytes | None, bytes | None]:
    """(class id, component state, controller state) from ``.vstpreset`` bytes."""
    data = bytes(data)
    if len(data) < 48 or not data.startswith(b"VST3"):
        raise ValueError("Not a .vstpreset file (it should start with b'VST3').")
    try:
        class_id = bytes.fromhex(data[8:40].decode("ascii"))
    except ValueError:
        raise ValueError("Not a .vstpreset file (bad class id).") from None
    (list_offset,) = struct.unpack("<q", data[40:48])
    if data[list_offset : list_offset + 4] != b"List":
        raise ValueError("Not a .vstpreset file (no chunk list).")
    (count,) = struct.unpack("<i", data[list_offset + 4 : list_offset + 8])
    chunks: dict[bytes, bytes] = {}
    pos = list_offset + 8
    for _ in range(count):
        cid = data[pos : pos + 4]
        off, size = struct.unpack("<qq", data[pos + 4 : pos + 20])
        chunks[cid] = data[off : off + size]
        pos += 20
    return class_id, chunks.get(b"Comp"), chunks.get(b"Cont")
