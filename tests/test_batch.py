"""Batch processing: many files through one chain on any executor, per-file errors, atomic outputs, resume."""

from __future__ import annotations

import concurrent.futures
import os

import numpy as np
import pytest
import soundfile as sf

import stompbox
from _audio import music
from stompbox.batch import BatchReport, find_audio_files, process_file, process_files
from stompbox.cli.main import main

SR = 22050


@pytest.fixture(autouse=True)
def _needs_audiofile():
    try:
        from stompbox.io import AudioFile  # noqa: F401
    except ImportError:
        pytest.skip("stompbox.io.AudioFile is not available yet")


def _chain():
    return stompbox.Pedalboard(
        [
            stompbox.Distortion(drive_db=15),
            stompbox.Delay(delay_seconds=0.03, feedback=0.3),
            stompbox.Gain(-6),
        ]
    )


@pytest.fixture
def folder(tmp_path):
    """Six short files (one in a subfolder), a corrupt one, and a non-audio file."""
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    for i in range(5):
        sf.write(root / f"take{i}.wav", music(0.3, SR, seed=i).T, SR, subtype="FLOAT")
    sf.write(root / "sub" / "deep.wav", music(0.2, SR, seed=9).T, SR, subtype="FLOAT")
    (root / "broken.wav").write_bytes(b"RIFF" + os.urandom(3000))
    (root / "notes.txt").write_text("not audio")
    return root


def _expected(path, tail=0):
    x, _ = sf.read(path, dtype="float32", always_2d=True)
    x = np.concatenate([x.T, np.zeros((x.shape[1], tail), np.float32)], axis=1)
    return _chain()(x, SR)


def _check_outputs(report: BatchReport, tail=0):
    for result in report.ok:
        y, rate = sf.read(result.output, dtype="float32", always_2d=True)
        assert rate == SR
        assert np.array_equal(y.T, _expected(result.input, tail)), result.input
        assert result.frames_out == result.frames_in + tail


def test_find_audio_files(folder):
    found = [os.path.relpath(p, folder) for p in find_audio_files(folder)]
    assert found == [
        "broken.wav",
        "sub/deep.wav",
        "take0.wav",
        "take1.wav",
        "take2.wav",
        "take3.wav",
        "take4.wav",
    ]


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_any_executor_and_a_bad_file_among_good_ones(folder, tmp_path, kind):
    out = tmp_path / "out"
    pool = concurrent.futures.ThreadPoolExecutor if kind == "thread" else concurrent.futures.ProcessPoolExecutor
    with pool(2) as executor:
        report = process_files(find_audio_files(folder), out, _chain(), executor, root=folder)
    assert [r.status for r in report.results].count("ok") == 6
    (bad,) = report.failed
    assert bad.input.endswith("broken.wav") and bad.error and "\n" not in bad.error
    assert not os.path.exists(bad.output)
    assert os.path.exists(out / "sub" / "deep.wav")  # the input's relative path is kept
    _check_outputs(report)
    leftovers = [n for _, _, files in os.walk(out) for n in files if n.startswith(".")]
    assert leftovers == []  # atomic writes leave no partial files
    assert "6 processed, 1 failed, 0 skipped" in report.summary()


def test_default_process_pool_and_serial_give_identical_outputs(folder, tmp_path):
    inputs = [p for p in find_audio_files(folder) if "broken" not in p]
    pooled = process_files(inputs, tmp_path / "a", _chain().to_dict(), jobs=2, tail=0.05)
    serial = process_files(inputs, tmp_path / "b", _chain(), jobs=1, tail=0.05)
    assert len(pooled.ok) == len(serial.ok) == len(inputs)
    for a, b in zip(pooled.results, serial.results, strict=True):
        assert open(a.output, "rb").read() == open(b.output, "rb").read()
    _check_outputs(serial, tail=int(0.05 * SR))


def test_a_convolution_built_from_an_array_goes_to_worker_processes(folder, tmp_path):
    """The chain reaches the workers as data; an array impulse response travels inside it."""
    ir = np.zeros((2, 300), np.float32)
    ir[0, 0], ir[1, 150] = 1.0, 0.5
    chain = stompbox.Pedalboard([stompbox.Convolution(ir, sample_rate=SR, mix=0.7)])
    inputs = [p for p in find_audio_files(folder) if "broken" not in p][:3]
    report = process_files(inputs, tmp_path / "out", chain, jobs=2)
    assert len(report.ok) == 3, report.summary()
    for result in report.ok:
        x, _ = sf.read(result.input, dtype="float32", always_2d=True)
        y, _ = sf.read(result.output, dtype="float32", always_2d=True)
        assert np.array_equal(y.T, chain(x.T, SR))


def test_skip_existing_resumes(folder, tmp_path):
    inputs = [p for p in find_audio_files(folder) if "broken" not in p]
    out = tmp_path / "out"
    first = process_files(inputs[:3], out, _chain(), jobs=1)
    assert len(first.ok) == 3
    stamp = os.path.getmtime(first.ok[0].output)
    second = process_files(inputs, out, _chain(), jobs=1, skip_existing=True)
    assert [r.status for r in second.results] == ["skipped"] * 3 + ["ok"] * (len(inputs) - 3)
    assert os.path.getmtime(first.ok[0].output) == stamp


def test_explicit_outputs_extension_and_collisions(folder, tmp_path):
    inputs = find_audio_files(folder)[1:3]
    outs = [tmp_path / "x.wav", tmp_path / "y.wav"]
    report = process_files(inputs, outs, _chain(), jobs=1)
    assert [r.output for r in report.results] == [str(p) for p in outs]
    report = process_files(inputs, tmp_path / "flac", _chain(), jobs=1, extension="flac", bit_depth=24)
    assert all(r.output.endswith(".flac") and sf.info(r.output).subtype == "PCM_24" for r in report.results)
    with pytest.raises(ValueError, match="would both be written"):
        process_files([inputs[0], inputs[0]], tmp_path / "c", _chain())
    with pytest.raises(ValueError, match="2 inputs but 1 outputs"):
        process_files(inputs, [tmp_path / "one.wav"], _chain())


def test_process_file_counts(folder, tmp_path):
    src = str(folder / "take0.wav")
    frames_in, frames_out = process_file(src, tmp_path / "o.wav", _chain(), tail=0.1)
    assert frames_in == int(0.3 * SR) and frames_out == frames_in + int(0.1 * SR)


def test_batch_command(folder, tmp_path, capsys):
    chain = tmp_path / "chain.json"
    _chain().save(chain)
    out = tmp_path / "out"
    assert main(["batch", str(folder), str(out), "--chain", str(chain), "--jobs", "2", "--threads"]) == 1
    captured = capsys.readouterr()
    assert "broken.wav" in captured.err and captured.err.count("\n") == 1
    assert "6 processed, 1 failed, 0 skipped" in captured.out
    assert sorted(os.listdir(out)) == ["sub", "take0.wav", "take1.wav", "take2.wav", "take3.wav", "take4.wav"]
    (folder / "broken.wav").unlink()
    assert main(["batch", str(folder), str(out), "--chain", str(chain), "--resume", "-j", "1"]) == 0
    assert "0 processed, 0 failed, 6 skipped" in capsys.readouterr().out
    # effects on the command line instead of a chain file; usage errors
    assert main(["batch", str(folder), str(tmp_path / "o2"), "gain", "gain_db=-3", "-j", "1", "--quiet"]) == 0
    assert main(["batch", str(folder), str(tmp_path / "o3")]) == 2
    assert main(["batch", str(tmp_path / "missing"), str(tmp_path / "o3"), "gain"]) == 1
    capsys.readouterr()


def test_dask_local_cluster_200_files_with_a_corrupt_one(tmp_path):
    """The same job through a Dask LocalCluster (its client's executor is a concurrent.futures.Executor): 200 short
    files, one corrupt; the corrupt one is reported and the 199 others equal a serial run's outputs."""
    distributed = pytest.importorskip("distributed")
    root = tmp_path / "in"
    root.mkdir()
    rng = np.random.default_rng(0)
    for i in range(200):
        if i == 117:
            (root / f"f{i:03d}.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEfmt " + rng.bytes(64))
        else:
            sf.write(root / f"f{i:03d}.wav", (0.3 * rng.standard_normal((800, 2))).astype(np.float32), SR)
    inputs = find_audio_files(root)
    serial = process_files(inputs, tmp_path / "serial", _chain(), jobs=1, root=root)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        report = process_files(inputs, tmp_path / "dask", _chain(), client.get_executor(), root=root)
    assert len(report.results) == 200 and len(report.ok) == 199
    (bad,) = report.failed
    assert bad.input.endswith("f117.wav") and bad.error and not os.path.exists(bad.output)
    for ours, ref in zip(report.results, serial.results, strict=True):
        assert ours.status == ref.status
        if ours.status == "ok":
            a, _ = sf.read(ours.output, dtype="float32")
            b, _ = sf.read(ref.output, dtype="float32")
            assert np.array_equal(a, b), ours.input


def test_a_worker_builds_each_chain_once_per_thread_and_resets_it_per_file(tmp_path):
    import threading

    from stompbox.batch import _chain_for

    description = _chain().to_dict()
    first = _chain_for(description)
    assert _chain_for(description) is first  # reused for the next file of this thread
    other = []
    thread = threading.Thread(target=lambda: other.append(_chain_for(description)))
    thread.start()
    thread.join()
    assert other[0] is not first  # a board is never shared between threads
    # reuse gives the same output as a fresh chain for every file (state is reset per file)
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    sf.write(a, music(0.3, SR, seed=1).T, SR, subtype="FLOAT")
    sf.write(b, music(0.3, SR, seed=2).T, SR, subtype="FLOAT")
    for src in (a, b, a):
        process_file(src, tmp_path / "out.wav", first)
        y, _ = sf.read(tmp_path / "out.wav", dtype="float32", always_2d=True)
        assert np.array_equal(y.T, _expected(src)), src


@pytest.mark.parametrize("count", [1, 2, 7, 199, 1000])
@pytest.mark.parametrize("workers", [1, 2, 8])
def test_tasks_cover_every_file_once_in_order_and_shrink_towards_the_end(count, workers):
    from stompbox.batch import _groups

    todo = list(range(100, 100 + count))
    groups = _groups(todo, workers)
    assert [i for g in groups for i in g] == todo
    left = count
    for group in groups:
        # at most 16 files, and at most a quarter of each worker's remaining share (at least one file)
        assert 1 <= len(group) <= max(1, min(16, left // (4 * workers)))
        left -= len(group)
    assert len(groups[-1]) == 1


def test_a_corrupt_first_file_with_a_pool(folder, tmp_path):
    # with its own pool, process_files renders the first file in the calling process before forking: a bad
    # first file is reported there like any other and the rest go to the workers
    inputs = sorted(find_audio_files(folder))
    inputs.remove(str(folder / "broken.wav"))
    inputs.insert(0, str(folder / "broken.wav"))
    report = process_files(inputs, tmp_path / "out", _chain(), jobs=2, root=folder)
    assert [r.status for r in report.results] == ["failed"] + ["ok"] * (len(inputs) - 1)
    assert not os.path.exists(report.results[0].output)
    _check_outputs(report)
