"""Read audio files the way a careful user would, and print one JSON line per file with the outcome.

Run as ``python read_worker.py FILE [FILE ...]`` (in a subprocess, so that a crash in a codec library kills only
this process). Before each file it prints ``{"start": FILE}``; after it ``{"case": FILE, "outcome": {...}}``,
where the outcome is ``{"frames": N, "channels": C, "samplerate": R}`` or ``{"raises": "ExceptionClass"}``.
The file is read front to back from its path, then again from an ``io.BytesIO`` of its bytes (the outcome must
be the same), and a seek to the middle and back to the start must give the same samples as the linear read.
"""

from __future__ import annotations

import io
import json
import os
import sys

import numpy as np

from stompbox.io import AudioFile

MAX_SAMPLES = 50_000_000  # stop reading a (fake) endless file here: a bounded answer, not a hang
BLOCK = 4096
KEEP = 1 << 20  # frames kept to compare the path read with the BytesIO read


def _read_all(source: object) -> tuple[dict, int]:
    with AudioFile(source) as f:
        channels, rate = f.num_channels, f.samplerate
        frames = 0
        kept: list[np.ndarray] = []
        while frames * channels < MAX_SAMPLES:
            block = f.read(BLOCK)
            if block.shape != (channels, block.shape[1]) or block.dtype != np.float32:
                raise AssertionError(f"bad block {block.shape} {block.dtype}")
            if block.shape[1] == 0:
                break
            frames += block.shape[1]
            if frames <= KEEP:
                kept.append(np.nan_to_num(block))
        if frames > 2 and f.seekable():  # a seek to the middle, then back to the start, must not fail
            f.seek(frames // 2)
            f.read(BLOCK)
            f.seek(0)
            again = f.read(min(frames, BLOCK))
            if again.shape[1] != min(frames, BLOCK):
                raise AssertionError(f"re-read after seek gave {again.shape[1]} frames")
    samples = np.concatenate(kept, axis=1) if kept else np.zeros((channels, 0), np.float32)
    return {"frames": frames, "channels": channels, "samplerate": rate}, samples


def outcome(path: str) -> dict:
    try:
        result, samples = _read_all(path)
    except Exception as exc:  # noqa: BLE001 - the outcome is the exception's class
        return {"raises": type(exc).__name__, "message": str(exc)[:200]}
    try:
        with open(path, "rb") as handle:
            blob = handle.read()
        from_bytes, samples_bytes = _read_all(io.BytesIO(blob))
    except Exception as exc:  # noqa: BLE001
        return {**result, "bytesio_raises": type(exc).__name__, "message": str(exc)[:200]}
    # the same samples (within 1e-4: without a file name to hint at the format, the bytes may go to another
    # decoder of the same codec, e.g. FFmpeg's MP3 decoder instead of mpg123)
    if from_bytes != result or (samples.size and np.abs(samples - samples_bytes).max() > 1e-4):
        return {**result, "bytesio_differs": from_bytes}
    return result


def run_batch(paths: list[str], timeout: float = 60.0) -> dict[str, dict]:
    """Outcomes of ``paths``, read by worker subprocesses: a crash or a hang is charged to the file being read,
    and the remaining files go to a fresh worker. A crash gives ``{"crash": returncode}``, a hang
    ``{"hang": seconds}``."""
    import subprocess

    results: dict[str, dict] = {}
    todo = list(paths)
    while todo:
        try:
            proc = subprocess.run([sys.executable, __file__, *todo], capture_output=True, text=True, timeout=timeout)
            stdout, failure = proc.stdout, ({"crash": proc.returncode} if proc.returncode else None)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout or b""
            stdout = out.decode() if isinstance(out, bytes) else out
            failure = {"hang": timeout}
        current = None
        for line in stdout.splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if "start" in record:
                current = record["start"]
            else:
                results[record["case"]] = record["outcome"]
                current = None
        done = set(results)
        if failure is None:
            break
        if current is None:  # died between files (e.g. at import): charge the next one
            current = next(p for p in todo if p not in done)
        results[current] = failure
        todo = [p for p in todo if p not in results]
    return results


def main(paths: list[str]) -> None:
    for path in paths:
        print(json.dumps({"start": path}), flush=True)
        if os.path.basename(path) == os.environ.get("READ_WORKER_ABORT_ON"):  # test hook: a "codec crash"
            os.abort()
        print(json.dumps({"case": path, "outcome": outcome(path)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
