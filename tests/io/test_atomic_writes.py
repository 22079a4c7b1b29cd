"""The one atomic-write rule (``stompbox._base.atomic``) as writers use it: a writer dropped without ``close()``
finishes its file (on collection and at interpreter exit) while an exception leaves the earlier file; temporary
names fit any legal file name; temporary files of dead processes are cleaned by the next write to their folder,
and nobody else's are."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from stompbox._base import atomic
from stompbox.io import AudioFile

SR = 44100
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=120, env=env
    )


def _frames(path: Path) -> int:
    with AudioFile(str(path)) as f:
        return f.frames


def _earlier(path: Path) -> bytes:
    with AudioFile(str(path), "w", SR, 1) as out:
        out.write(np.full(1000, 0.5, np.float32))
    return path.read_bytes()


@pytest.mark.parametrize("ext", ["wav", "flac", "mp3", "ogg", "m4a"])
def test_the_one_liner_writes_its_file(tmp_path: Path, ext: str) -> None:
    """``AudioFile(path, "w", rate, 1).write(x)``, found in real scripts, writes the file (pedalboard does)."""
    path = tmp_path / f"out.{ext}"
    proc = _run(
        """
        import sys, numpy as np
        from stompbox.io import AudioFile
        AudioFile(sys.argv[1], "w", 44100, 1).write(np.full(22050, 0.25, np.float32))
        """,
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    expected = 22050
    assert abs(_frames(path) - expected) <= (0 if ext in ("wav", "flac", "ogg") else 2048)


def test_a_script_that_exits_without_closing_finishes_its_files(tmp_path: Path) -> None:
    """Writers still open at interpreter exit (a global over an earlier file, one held in a list) are finished,
    with all their data."""
    _earlier(tmp_path / "a.wav")
    proc = _run(
        """
        import sys, numpy as np
        from stompbox.io import AudioFile
        folder = sys.argv[1]
        kept = []
        out = AudioFile(folder + "/a.wav", "w", 44100, 2)
        for _ in range(3):
            out.write(np.zeros((2, 1000), np.float32))
        kept.append(AudioFile(folder + "/b.flac", "w", 44100, 1))
        kept[0].write(np.zeros(5000, np.float32))
        kept.append(kept)  # a reference cycle: only the exit handler can finish it in time
        """,
        str(tmp_path),
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.wav", "b.flac"]
    assert _frames(tmp_path / "a.wav") == 3000
    assert _frames(tmp_path / "b.flac") == 5000


@pytest.mark.parametrize("inside_with", [True, False])
def test_a_script_that_raises_keeps_the_earlier_file(tmp_path: Path, inside_with: bool) -> None:
    """An exception inside ``with``, or an uncaught exception ending the program with a writer open, leaves the
    earlier file untouched and no temporary file."""
    path = tmp_path / "song.wav"
    before = _earlier(path)
    code = """
        import sys, numpy as np
        from stompbox.io import AudioFile
        with AudioFile(sys.argv[1], "w", 44100, 1) as out:
            out.write(np.zeros(3000, np.float32))
            raise RuntimeError("boom")
        """
    if not inside_with:
        code = """
        import sys, numpy as np
        from stompbox.io import AudioFile
        out = AudioFile(sys.argv[1], "w", 44100, 1)
        out.write(np.zeros(3000, np.float32))
        raise RuntimeError("boom")
        """
    proc = _run(code, str(path))
    assert proc.returncode == 1 and "boom" in proc.stderr
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


# ------------------------------------------------------------------------------------------------ names
@pytest.mark.parametrize("length", [200, 254, 255])
def test_a_name_of_any_legal_length_can_be_written(tmp_path: Path, length: int) -> None:
    """The temporary name is shortened to fit, never the user's (ENAMETOOLONG was caused by our suffix)."""
    path = tmp_path / ("a" * (length - 4) + ".wav")
    before = _earlier(path)
    assert len(path.name) == length and before
    with AudioFile(str(path), "w", SR, 1) as out:
        out.write(np.zeros(100, np.float32))
    assert _frames(path) == 100
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_long_name_of_multibyte_characters_is_cut_between_characters(tmp_path: Path) -> None:
    name = "é" * 125 + ".wav"  # 254 bytes in UTF-8
    temporary = atomic.temporary_name(name, str(tmp_path))
    assert len(os.fsencode(temporary)) <= 255
    temporary.encode("utf-8")  # no half character (it would be a lone surrogate here)
    with AudioFile(str(tmp_path / name), "w", SR, 1) as out:
        out.write(np.zeros(100, np.float32))
    assert [p.name for p in tmp_path.iterdir()] == [name]


# ------------------------------------------------------------------------------------ stale temporaries
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _temporary(folder: Path, name: str, pid: int, host: str | None = None) -> Path:
    temporary = atomic.temporary_name(name, str(folder), pid=pid)
    if host is not None:
        temporary = temporary.replace(f"-{atomic._HOST}", f"-{host}")
    path = folder / temporary
    path.write_bytes(b"half a file")
    return path


def test_the_next_write_cleans_temporaries_of_dead_processes_only(tmp_path: Path) -> None:
    dead = _temporary(tmp_path, "a.wav", _dead_pid())
    other_song = _temporary(tmp_path, "b.flac", _dead_pid())
    mine = _temporary(tmp_path, "c.wav", os.getpid())  # this process is alive: maybe another thread's write
    other_host = _temporary(tmp_path, "d.wav", _dead_pid(), host="0000" if atomic._HOST != "0000" else "0001")
    user_file = tmp_path / ".notes.txt.partial"  # not one of ours
    user_file.write_bytes(b"keep")
    with AudioFile(str(tmp_path / "new.wav"), "w", SR, 1) as out:
        out.write(np.zeros(10, np.float32))
    left = {p.name for p in tmp_path.iterdir()}
    assert dead.name not in left and other_song.name not in left
    assert {mine.name, other_host.name, user_file.name, "new.wav"} == left


def test_a_reused_pid_does_not_keep_a_temporary_alive(tmp_path: Path) -> None:
    """A running process that started after the temporary file was last written cannot have written it."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        stale = _temporary(tmp_path, "a.wav", sleeper.pid)
        old = time.time() - 600
        os.utime(stale, (old, old))
        fresh = _temporary(tmp_path, "b.wav", sleeper.pid)  # written now, by a process started before: alive
        assert atomic.clean_stale(str(tmp_path)) == [stale.name]
        assert fresh.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_other_users_temporaries_are_left_alone(tmp_path: Path) -> None:
    theirs = _temporary(tmp_path, "a.wav", _dead_pid())
    os.chown(theirs, 65534, 65534)
    assert atomic.clean_stale(str(tmp_path)) == []
    assert theirs.exists()


def test_chain_files_are_written_by_the_same_rule(tmp_path: Path) -> None:
    from stompbox import Gain, Pedalboard

    dead = _temporary(tmp_path, "chain.json", _dead_pid())
    path = tmp_path / "chain.json"
    Pedalboard([Gain(3.0)]).save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["chain.json"] and not dead.exists()


def test_raw_pcm_to_a_path_is_written_by_the_same_rule(tmp_path: Path) -> None:
    """The command line's raw writer: the file appears on close; an exception leaves the earlier file."""
    from stompbox.io.raw import RawFormat, RawWriter

    path = tmp_path / "out.raw"
    path.write_bytes(b"earlier")
    layout = RawFormat(SR, 1, "signed-integer", 16)
    with pytest.raises(RuntimeError):
        with RawWriter(str(path), layout) as out:
            out.write(np.zeros((1, 100), np.float32))
            raise RuntimeError("boom")
    assert path.read_bytes() == b"earlier" and [p.name for p in tmp_path.iterdir()] == ["out.raw"]
    with RawWriter(str(path), layout) as out:
        out.write(np.full((1, 100), 0.5, np.float32))
    assert path.read_bytes() == np.full(100, 16384, "<i2").tobytes()
    assert [p.name for p in tmp_path.iterdir()] == ["out.raw"]


def test_the_file_and_its_folder_are_synced_around_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fsync of the temporary file before the rename, of the folder after it (the order SQLite keeps)."""
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(handle: int) -> None:
        events.append("fsync folder" if os.path.isdir(f"/proc/self/fd/{handle}") else "fsync file")
        real_fsync(handle)

    def replace(source: str, target: str) -> None:
        events.append("rename")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(atomic, "FSYNC", True)
    with AudioFile(str(tmp_path / "a.wav"), "w", SR, 1) as out:
        out.write(np.zeros(10, np.float32))
    assert events == ["fsync file", "rename", "fsync folder"]


def test_syncing_can_be_turned_off_by_the_environment() -> None:
    env = dict(os.environ, STOMPBOX_FSYNC="0", PYTHONPATH=SRC)
    code = "from stompbox._base import atomic; print(atomic.FSYNC)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False"
