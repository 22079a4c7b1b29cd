"""Tags (title, artist, album, track, date, comment) and cover art: read and written with mutagen.

One mapping for every format, with these keys (all optional): ``"title"``, ``"artist"``, ``"album"``,
``"track"``, ``"date"``, ``"comment"`` (strings) and ``"cover"`` (the image's bytes, JPEG or PNG). They are
stored as each format stores them, and as FFmpeg reads and writes them:

========================  ===========================================================================
MP3                        ID3v2.4 frames TIT2, TPE1, TALB, TRCK, TDRC, COMM (read: also FFmpeg's
                           TXXX:comment); the cover as APIC (front cover)
FLAC, Ogg Vorbis, Opus     Vorbis comments TITLE, ARTIST, ALBUM, TRACKNUMBER, DATE, COMMENT; the cover as a
                           FLAC PICTURE block (FLAC) or a METADATA_BLOCK_PICTURE comment (Ogg)
M4A                        iTunes ``ilst`` atoms ©nam, ©ART, ©alb, trkn, ©day, ©cmt, covr
WAV                        a ``LIST``/``INFO`` chunk: INAM, IART, IPRD, IPRT (track), ICRD, ICMT; the cover in
                           an ``id3 `` chunk (APIC), which FFmpeg and most players read
========================  ===========================================================================

Other formats (AIFF, CAF, raw streams...) have no tags here: reading gives ``{}``, and writing tags to them
raises ``ValueError`` when the writer is opened.
"""

from __future__ import annotations

import base64
import io
import os
import struct
from typing import Any

from .errors import AudioWriteError

__all__ = ["TAG_KEYS", "read_tags", "write_tags", "check_tags", "taggable", "carried_tags", "image_type"]

#: The keys of a tag mapping, in the order they are shown.
TAG_KEYS = ("title", "artist", "album", "track", "date", "comment", "cover")
_TEXT_KEYS = TAG_KEYS[:-1]
_VORBIS = {"title": "TITLE", "artist": "ARTIST", "album": "ALBUM", "track": "TRACKNUMBER", "date": "DATE",
           "comment": "COMMENT"}  # fmt: skip
_ID3 = {"title": "TIT2", "artist": "TPE1", "album": "TALB", "track": "TRCK", "date": "TDRC"}
_MP4 = {"title": "\xa9nam", "artist": "\xa9ART", "album": "\xa9alb", "date": "\xa9day", "comment": "\xa9cmt"}
_INFO = {"title": b"INAM", "artist": b"IART", "album": b"IPRD", "track": b"IPRT", "date": b"ICRD",
         "comment": b"ICMT"}  # fmt: skip
_INFO_READ = {**{v: k for k, v in _INFO.items()}, b"ITRK": "track"}
_TAGGABLE = ("mp3", "flac", "ogg", "opus", "m4a", "wav")


def taggable(format_key: str) -> bool:
    """Whether files of this format (a key of :mod:`stompbox.io.formats`) can carry tags here."""
    return format_key in _TAGGABLE


def carried_tags(reader: Any, output_path: Any) -> dict[str, Any]:
    """The tags of ``reader`` that an output at ``output_path`` can carry: all of them when its format takes
    tags (by its extension), else none. What ``convert``, ``render`` and ``batch`` keep by default."""
    from .formats import format_for_extension

    try:
        key = format_for_extension(os.path.splitext(os.fspath(output_path))[1])
    except Exception:  # noqa: BLE001 - not a format stompbox writes: the writer says so
        return {}
    return dict(getattr(reader, "tags", {}) or {}) if taggable(key) else {}


def check_tags(tags: Any) -> dict[str, Any]:
    """A clean copy of a tag mapping: known keys only, text as str (numbers allowed for the track and date),
    the cover as bytes; empty values dropped. Raises ``TypeError``/``ValueError`` for anything else."""
    if tags is None:
        return {}
    if not hasattr(tags, "items"):
        raise TypeError(f"tags must be a mapping such as {{'title': '...'}}, not {type(tags).__name__}.")
    clean: dict[str, Any] = {}
    for key, value in tags.items():
        if key not in TAG_KEYS:
            raise ValueError(f"Unknown tag {key!r}: stompbox reads and writes {', '.join(TAG_KEYS)}.")
        if value is None:
            continue
        if key == "cover":
            if not isinstance(value, bytes | bytearray | memoryview):
                raise TypeError(f"The cover tag takes the image's bytes (JPEG or PNG), not {type(value).__name__}.")
            if len(value):
                clean[key] = bytes(value)
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise TypeError(f"The {key} tag takes a string, not {type(value).__name__}.")
        text = str(value)
        if "\x00" in text:
            raise ValueError(f"The {key} tag cannot hold a NUL character.")
        if text:
            clean[key] = text
    return clean


def image_type(image: bytes) -> str:
    """The MIME type of a cover image's bytes (PNG, GIF, else JPEG)."""
    return _mime(image)


def _mime(image: bytes) -> str:
    if image.startswith(b"\x89PNG"):
        return "image/png"
    if image[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return "image/jpeg"


def _first(values: Any) -> str | None:
    if values is None:
        return None
    if isinstance(values, list | tuple):
        values = values[0] if values else None
    return None if values is None else str(values)


# ----------------------------------------------------------------------------------------------------- reading
def read_tags(source: Any, format_name: str) -> dict[str, Any]:
    """The tags of a file (a path or a seekable binary file-like, left where it was) as a mapping; ``{}`` when
    it has none or its format has none here. ``format_name`` is the decoder's (``"WAV"``, ``"FLAC"``...)."""
    name = format_name.upper()
    fileobj = None
    here = None
    if not isinstance(source, str):
        if not (hasattr(source, "seek") and hasattr(source, "read")):
            return {}
        here = source.tell()
        source.seek(0)
        fileobj = source
    try:
        if name in ("WAV", "WAVEX", "RF64"):
            return _read_wav(source)
        return _read_mutagen(source if fileobj is None else fileobj)
    except Exception:  # noqa: BLE001 - a damaged tag is no tag: the audio still reads
        return {}
    finally:
        if here is not None:
            source.seek(here)


def _read_mutagen(source: Any) -> dict[str, Any]:
    import mutagen

    found = mutagen.File(source)
    if found is None or found.tags is None:
        return {}
    from mutagen.id3 import ID3
    from mutagen.mp4 import MP4Tags

    tags: dict[str, Any] = {}
    if isinstance(found.tags, ID3):  # MP3 (and AIFF's ID3 chunk)
        id3 = found.tags
        for key, frame in _ID3.items():
            if frame in id3:
                tags[key] = str(id3[frame].text[0]) if id3[frame].text else None
        comments = id3.getall("COMM") or [
            frame for frame in id3.getall("TXXX") if frame.desc.lower() == "comment"
        ]  # FFmpeg writes its comment as TXXX:comment
        if comments and comments[0].text:
            tags["comment"] = str(comments[0].text[0])
        pictures = id3.getall("APIC")
        if pictures:
            tags["cover"] = bytes(pictures[0].data)
    elif isinstance(found.tags, MP4Tags):
        ilst = found.tags
        for key, atom in _MP4.items():
            value = _first(ilst.get(atom))
            if value is not None:
                tags[key] = value
        if "trkn" in ilst and ilst["trkn"]:
            number, total = ilst["trkn"][0]
            tags["track"] = f"{number}/{total}" if total else str(number)
        if "covr" in ilst and ilst["covr"]:
            tags["cover"] = bytes(ilst["covr"][0])
    elif hasattr(found.tags, "get"):  # Vorbis comments: FLAC, Ogg Vorbis, Opus
        comments = found.tags
        for key, field in _VORBIS.items():
            value = _first(comments.get(field))
            if value is None and key == "comment":
                value = _first(comments.get("DESCRIPTION"))
            if value is not None:
                tags[key] = value
        pictures = list(getattr(found, "pictures", []) or [])
        if not pictures:
            from mutagen.flac import Picture

            for encoded in comments.get("METADATA_BLOCK_PICTURE", []) or []:
                try:
                    pictures.append(Picture(base64.b64decode(encoded)))
                except Exception:  # noqa: BLE001 - a broken picture is skipped
                    continue
        if pictures:
            tags["cover"] = bytes(pictures[0].data)
    return {key: tags[key] for key in TAG_KEYS if tags.get(key)}


def _riff_chunks(data: bytes) -> list[tuple[bytes, int, int]]:
    """(id, offset of the body, size) of the top-level chunks of a RIFF/WAVE file's bytes."""
    chunks = []
    pos = 12
    while pos + 8 <= len(data):
        chunk_id = data[pos : pos + 4]
        (size,) = struct.unpack_from("<I", data, pos + 4)
        chunks.append((chunk_id, pos + 8, size))
        if chunk_id == b"data" and pos + 8 + size > len(data):
            break
        pos += 8 + size + (size & 1)
    return chunks


def _read_wav(source: Any) -> dict[str, Any]:
    if isinstance(source, str):
        with open(source, "rb") as handle:
            return _read_wav(handle)
    head = source.read(12)
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return {}
    tags: dict[str, Any] = {}
    pos = 12
    while True:
        source.seek(pos)
        header = source.read(8)
        if len(header) < 8:
            break
        chunk_id, size = header[:4], struct.unpack("<I", header[4:])[0]
        if chunk_id == b"LIST" and size <= 1 << 20:
            body = source.read(size)
            if body[:4] == b"INFO":
                at = 4
                while at + 8 <= len(body):
                    key, length = body[at : at + 4], struct.unpack_from("<I", body, at + 4)[0]
                    value = body[at + 8 : at + 8 + length].split(b"\x00", 1)[0]
                    if key in _INFO_READ and value:
                        tags.setdefault(_INFO_READ[key], value.decode("utf-8", "replace"))
                    at += 8 + length + (length & 1)
        elif chunk_id.lower() == b"id3 " and size <= 64 << 20:
            from mutagen.id3 import ID3

            id3 = ID3(io.BytesIO(source.read(size)))
            pictures = id3.getall("APIC")
            if pictures:
                tags["cover"] = bytes(pictures[0].data)
        pos += 8 + size + (size & 1)
    return {key: tags[key] for key in TAG_KEYS if tags.get(key)}


# ----------------------------------------------------------------------------------------------------- writing
def write_tags(target: Any, format_key: str, tags: dict[str, Any], origin: int = 0) -> None:
    """Write ``tags`` (from :func:`check_tags`) into a finished file: a path, or a seekable, readable binary
    file-like holding the file from ``origin`` to its end."""
    if not tags:
        return
    if isinstance(target, str):
        with open(target, "r+b") as handle:
            _write(handle, format_key, tags)
        return
    target.seek(origin)
    buffer = io.BytesIO(target.read())
    _write(buffer, format_key, tags)
    target.seek(origin)
    target.write(buffer.getvalue())
    if hasattr(target, "truncate"):
        target.truncate()


def _write(handle: Any, format_key: str, tags: dict[str, Any]) -> None:
    from mutagen import MutagenError

    try:
        _write_format(handle, format_key, tags)
    except (MutagenError, struct.error, KeyError) as exc:
        raise AudioWriteError(f"Unable to write the tags into the {format_key.upper()} file: {exc}") from exc


def _write_format(handle: Any, format_key: str, tags: dict[str, Any]) -> None:
    if format_key == "wav":
        _write_wav(handle, tags)
    elif format_key == "mp3":
        _write_id3(handle, tags)
    elif format_key == "m4a":
        _write_mp4(handle, tags)
    elif format_key in ("flac", "ogg", "opus"):
        _write_vorbis(handle, format_key, tags)
    else:
        raise ValueError(f"{format_key.upper()} files cannot carry tags in stompbox.")
    handle.seek(0)


def _apic(image: bytes) -> Any:
    from mutagen.id3 import APIC, PictureType

    return APIC(encoding=3, mime=_mime(image), type=PictureType.COVER_FRONT, desc="", data=image)


def _write_id3(handle: Any, tags: dict[str, Any]) -> None:
    from mutagen import id3

    frames = id3.ID3()
    for key, frame in _ID3.items():
        if key in tags:
            frames.add(getattr(id3, frame)(encoding=3, text=[tags[key]]))
    if "comment" in tags:
        frames.add(id3.COMM(encoding=3, lang="eng", desc="", text=[tags["comment"]]))
    if "cover" in tags:
        frames.add(_apic(tags["cover"]))
    handle.seek(0)
    frames.save(handle, v2_version=4)


def _write_mp4(handle: Any, tags: dict[str, Any]) -> None:
    from mutagen.mp4 import MP4, MP4Cover

    handle.seek(0)
    mp4 = MP4(handle)
    if mp4.tags is None:
        mp4.add_tags()
    atoms = mp4.tags
    assert atoms is not None  # (add_tags made them)
    for key, atom in _MP4.items():
        if key in tags:
            atoms[atom] = [tags[key]]
    if "track" in tags:
        number, _, total = tags["track"].partition("/")
        try:
            atoms["trkn"] = [(int(number), int(total) if total else 0)]
        except ValueError:
            pass  # not a number: M4A's track atom holds numbers only
    if "cover" in tags:
        image = tags["cover"]
        kind = MP4Cover.FORMAT_PNG if _mime(image) == "image/png" else MP4Cover.FORMAT_JPEG
        atoms["covr"] = [MP4Cover(image, imageformat=kind)]
    handle.seek(0)
    mp4.save(handle)


def _picture(image: bytes) -> Any:
    from mutagen.flac import Picture

    picture = Picture()
    picture.type = 3  # front cover
    picture.mime = _mime(image)
    picture.data = image
    return picture


def _write_vorbis(handle: Any, format_key: str, tags: dict[str, Any]) -> None:
    handle.seek(0)
    if format_key == "flac":
        from mutagen.flac import FLAC

        found: Any = FLAC(handle)
    elif format_key == "opus":
        from mutagen.oggopus import OggOpus

        found = OggOpus(handle)
    else:
        from mutagen.oggvorbis import OggVorbis

        found = OggVorbis(handle)
    if found.tags is None:
        found.add_tags()
    for key, field in _VORBIS.items():
        if key in tags:
            found.tags[field] = [tags[key]]
    if "cover" in tags:
        picture = _picture(tags["cover"])
        if format_key == "flac":
            found.clear_pictures()
            found.add_picture(picture)
        else:
            found.tags["METADATA_BLOCK_PICTURE"] = [base64.b64encode(picture.write()).decode("ascii")]
    handle.seek(0)
    found.save(handle)


def _write_wav(handle: Any, tags: dict[str, Any]) -> None:
    """Append a LIST/INFO chunk (and, for a cover, an ``id3 `` chunk) after the file's chunks; the RIFF size
    grows to match. RF64 files and files past 4 GiB keep no tags (their sizes live elsewhere)."""
    handle.seek(0)
    head = handle.read(12)
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return
    info = b"INFO"
    for key, code in _INFO.items():
        if key in tags:
            value = tags[key].encode("utf-8") + b"\x00"
            info += code + struct.pack("<I", len(value)) + value + (b"\x00" if len(value) & 1 else b"")
    extra = b"LIST" + struct.pack("<I", len(info)) + info if len(info) > 4 else b""
    if "cover" in tags:
        from mutagen.id3 import ID3

        frames = ID3()
        frames.add(_apic(tags["cover"]))
        blob = io.BytesIO()
        frames.save(blob, v2_version=4, padding=lambda info: 0)
        data = blob.getvalue()
        extra += b"id3 " + struct.pack("<I", len(data)) + data + (b"\x00" if len(data) & 1 else b"")
    end = handle.seek(0, os.SEEK_END)
    if end & 1:  # the last chunk's pad byte
        handle.write(b"\x00")
        end += 1
    if end + len(extra) - 8 > 0xFFFFFFFF:
        return
    handle.write(extra)
    handle.seek(4)
    handle.write(struct.pack("<I", end + len(extra) - 8))
