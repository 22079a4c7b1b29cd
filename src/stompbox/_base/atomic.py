"""Atomic writes: a file appears under its name whole, or the earlier file there stays as it was.

Every writer of stompbox that writes to a path (audio files, chain files) goes through :class:`AtomicWrite`:

- The data goes to a temporary file in the same folder, ``.NAME.PID-TTTTRRRRRRRR.partial`` (the writer's
  process id, a tag of its host name, 8 random hex digits). Its name always fits the folder's name
  limit: a long NAME is shortened in the temporary's name, never the user's.
- :meth:`AtomicWrite.commit` syncs the temporary file to the disk (``fsync``), renames it over the final name
  and syncs the folder, the order SQLite keeps for its journal: after a power loss the folder holds the earlier
  file or the new one, whole. :meth:`AtomicWrite.discard` removes the temporary file.
- A target that exists and is not a regular file (a FIFO, ``/dev/null``, a terminal) is written in place:
  replacing it would swap a device or a pipe for a regular file. The file is made in the system's temporary
  folder and copied into the target by the commit (a FIFO cannot seek back to finish a header).
- A symbolic link is written through: its target is replaced, the link stays.
- Temporary files left by a process that died (SIGKILL, power loss) are removed by the next write to that
  folder, if the process that made them is gone (its PID is not running, or is running a process started after
  the file was last written: the PID was reused, after a restart for instance), it ran on this host, and the
  file belongs to this user.

Errors are ``OSError`` naming the user's path, never the temporary one.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator

#: Sync the file and its folder to the disk around the rename (the streaming guide gives its cost); the
#: environment variable ``STOMPBOX_FSYNC=0`` turns it off.
FSYNC = os.environ.get("STOMPBOX_FSYNC", "1").strip().lower() not in ("0", "no", "false", "off")
#: Whether an audio writer dropped without ``close()`` finishes its file (pedalboard's rule, for scripts). The
#: command line turns it off while a command runs: it closes every output it finishes, so a writer it drops was
#: cut short by an exception or a signal on its way out, and finishing it would publish a truncated file.
finish_dropped_writers = True
#: the longest file name assumed when the folder cannot tell (``NAME_MAX`` of Linux, macOS and Windows)
_NAME_MAX = 255
_SUFFIX = ".partial"
_TEMPORARY = re.compile(r"^\..*\.(\d{1,10})-([0-9a-f]{4})[0-9a-f]{8}\.partial$", re.DOTALL)
_CLEANED: dict[str, int] = {}  # folder -> its mtime (ns) when this process last left it without stale temporaries
_CLEANED_LOCK = threading.Lock()


def _host_tag() -> str:
    """4 hex digits naming this machine (its host name): a PID means the same process only on the machine that
    wrote it (a folder may be shared over the network, or between containers, which have host names of their
    own). Not its boot: the temporary files of a machine that lost power must be cleaned after it restarts."""
    name = os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
    return hashlib.blake2s(name.encode(errors="surrogateescape"), digest_size=2).hexdigest()


_HOST = _host_tag()


def _name_max(folder: str) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return _NAME_MAX


def temporary_name(name: str, folder: str = ".", pid: int | None = None) -> str:
    """The name of a new temporary file for ``name`` in ``folder``: ``.NAME.PID-TTTTRRRRRRRR.partial``, with
    ``NAME`` cut (at a character boundary) so that the whole fits the folder's name limit."""
    tail = f".{os.getpid() if pid is None else pid}-{_HOST}{secrets.token_hex(4)}{_SUFFIX}"
    raw = os.fsencode(name)
    room = max(1, _name_max(folder) - 1 - len(os.fsencode(tail)))
    if len(raw) > room:
        cut = room
        while cut > 1 and (raw[cut] & 0xC0) == 0x80:  # not inside a UTF-8 character
            cut -= 1
        raw = raw[:cut]
    return "." + os.fsdecode(raw) + tail


def _start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None if this system does not say. A zombie
    (dead, not yet reaped) started at +inf: it writes nothing any more."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        if fields[0] == b"Z":
            return float("inf")
        with open("/proc/stat", "rb") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith(b"btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _owner_gone(pid: int, written: float) -> bool:
    """Whether the process that wrote a temporary file last at ``written`` (epoch seconds) is gone."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # running, as another user
        pass
    started = _start_time(pid)
    # a process started after the file was last written cannot have written it: the PID was reused (the start
    # time is known to a clock tick, the boot time to a second)
    return started is not None and started > written + 2.0


def clean_stale(folder: str) -> list[str]:
    """Remove the temporary files of dead processes in ``folder`` (see the module docstring); returns their
    names. Skipped when the folder has not changed since this process last cleaned it."""
    try:
        changed = os.stat(folder).st_mtime_ns
    except OSError:
        return []
    key = os.path.abspath(folder)
    with _CLEANED_LOCK:
        if _CLEANED.get(key) == changed:
            return []
    removed = []
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and name.endswith(_SUFFIX)):
            continue
        match = _TEMPORARY.match(name)
        if match is None or match.group(2) != _HOST:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or (uid is not None and info.st_uid != uid):
                continue
            if _owner_gone(int(match.group(1)), info.st_mtime):
                os.unlink(entry.path)
                removed.append(name)
        except OSError:
            continue
    return removed


def _remember_clean(folder: str) -> None:
    with contextlib.suppress(OSError):
        changed = os.stat(folder).st_mtime_ns
        with _CLEANED_LOCK:
            _CLEANED[os.path.abspath(folder)] = changed


def _with_path(exc: OSError, path: str) -> OSError:
    """``exc`` as the same kind of ``OSError`` about ``path`` (the user's name, not a temporary one)."""
    if exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror or os.strerror(exc.errno), path)


def _fsync_folder(folder: str) -> None:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        handle = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:  # some filesystems cannot sync a folder (EINVAL): the rename is done either way
        pass
    finally:
        os.close(handle)


class AtomicWrite:
    """A write to ``path`` that appears there only when committed.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write. A symbolic link is written through; a folder is refused (``IsADirectoryError``); a
        missing folder is ``FileNotFoundError``.

    Attributes
    ----------
    path : str
        The path as the user gave it (errors name it).
    final : str
        The file that is replaced (``path``, or the file a symbolic link points to).
    target : str
        Where to write: a new empty temporary file (beside ``final``, or in the system's temporary folder when
        ``final`` is written in place).
    in_place : bool
        True when ``final`` exists and is not a regular file (a FIFO, a device): :meth:`commit` copies the
        written file into it instead of replacing it.
    """

    def __init__(self, path: str | os.PathLike[str], create: bool = True) -> None:
        self.path = os.fspath(path)
        self.temporary: str | None = None
        final = os.path.realpath(self.path) if os.path.islink(self.path) else self.path
        self.final = final
        try:
            info: os.stat_result | None = os.stat(final)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, f"Cannot write {self.path}: it is a directory", self.path)
        self.in_place = info is not None and not stat.S_ISREG(info.st_mode)
        self.target = final
        # a FIFO or a device is written in place: the file is made in the system's temporary folder (a FIFO
        # cannot seek back to finish a header) and copied into it by commit()
        folder = tempfile.gettempdir() if self.in_place else os.path.dirname(os.path.abspath(final))
        if not os.path.isdir(folder):
            raise FileNotFoundError(
                errno.ENOENT, f"Cannot write {self.path}: the folder {folder} does not exist", self.path
            )
        self._folder = folder
        self._replaced = info
        if create:
            self.create()

    def create(self) -> None:
        """Create the temporary file (empty); :attr:`target` names it. An exception (even ``KeyboardInterrupt``)
        at any point leaves no file: its name is recorded before it exists, so :meth:`discard` finds it."""
        folder = self._folder
        clean_stale(folder)
        base = os.path.basename(self.final)
        try:
            for _ in range(100):
                self.temporary = os.path.join(folder, temporary_name(base, folder))
                try:
                    handle = os.open(
                        self.temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
                    )
                except FileExistsError:
                    self.temporary = None  # someone else's: never to be removed
                    continue
                break
            else:  # pragma: no cover - 100 collisions of 32 random bits
                raise FileExistsError(errno.EEXIST, f"Cannot create a temporary file beside {self.path}", self.path)
            os.close(handle)
            self.target = self.temporary
            info = self._replaced
            if info is not None and not self.in_place:  # the permissions of the file it replaces (else umask's)
                with contextlib.suppress(OSError):
                    os.chmod(self.temporary, info.st_mode & 0o7777)
        except OSError as exc:
            self.discard()
            raise _with_path(exc, self.path) from None
        except BaseException:
            self.discard()
            raise

    def commit(self, release: Callable[[int], object] | None = None) -> None:
        """Publish the written file: sync it, rename it over the final name, sync the folder.

        ``release``, if given, is handed a descriptor of the replaced file, opened before the rename, to close
        when convenient: the filesystem frees a file's blocks when its last link and descriptor are gone (a
        rename over a 10 MB file took 6 ms here, more than writing the new one), so a helper thread can pay it.
        Raises ``OSError`` naming :attr:`path` (the temporary file is then removed).
        """
        temporary = self.temporary
        if temporary is None:
            return
        if self.in_place:
            try:
                with open(temporary, "rb") as source, open(self.final, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
            except OSError as exc:
                raise _with_path(exc, self.path) from None
            finally:
                self.discard()
            return
        try:
            if FSYNC:
                handle = os.open(temporary, os.O_RDONLY | getattr(os, "O_BINARY", 0))
                try:
                    os.fsync(handle)
                finally:
                    os.close(handle)
            old = _open_regular(self.final) if release is not None else None
            try:
                os.replace(temporary, self.final)
            finally:
                if old is not None:
                    release(old)  # type: ignore[misc]
        except OSError as exc:
            self.discard()
            raise _with_path(exc, self.path) from None
        self.temporary = None
        if FSYNC:
            _fsync_folder(self._folder)
        _remember_clean(self._folder)

    def discard(self) -> None:
        """Remove the temporary file (an earlier file at the path stays as it was). Safe to call twice."""
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None

    @property
    def committed(self) -> bool:
        """True once there is no temporary file left to publish or discard."""
        return self.temporary is None


def _open_regular(path: str) -> int | None:
    """A read-only descriptor of ``path`` if it is a regular file (opened without blocking on a FIFO)."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        return None
    return handle


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Write a file atomically through a plain path: yields the path to write (a temporary file), published
    when the block exits cleanly and removed when it raises."""
    write = AtomicWrite(path)
    try:
        yield write.target
    except BaseException:
        write.discard()
        raise
    write.commit()


__all__ = ["FSYNC", "AtomicWrite", "atomic_path", "clean_stale", "temporary_name"]
