"""Run the atheris harnesses for a bounded number of inputs each and report executions, speed and findings.

Usage::

    python fuzz/run.py                         # 100,000 inputs per target (the issue's bar), all targets
    python fuzz/run.py --runs 300 audiofile    # a short run of one target (what the test suite does)
    python fuzz/run.py --seconds 3600          # an hour per target instead of a number of inputs

Each target runs in its own subprocess in a scratch folder seeded with the committed corpus bases. A crash, a
hang (``-timeout``, seconds per input) or a leak makes libFuzzer write the input as ``crash-*``/``timeout-*``/
``oom-*``; those are copied to ``fuzz/findings/<target>/`` and, for the AudioFile target, to
``tests/data/corrupt/found/`` so that they become corpus cases (record their outcome with
``tests/data/make_corrupt.py --record`` once fixed). Exit status 1 if anything was found.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BASES = ROOT / "tests" / "data" / "corrupt" / "base"
FOUND = ROOT / "tests" / "data" / "corrupt" / "found"
TARGETS = {
    "audiofile": ("fuzz_audiofile.py", 65536),
    "chains": ("fuzz_chains.py", 1024),
    "grammar": ("fuzz_grammar.py", 256),
    "limits": ("fuzz_limits.py", 4096),
}


def run_target(
    name: str,
    runs: int | None,
    seconds: int | None,
    timeout: int,
    keep: bool = False,
    save: bool = True,
    seed: int | None = None,
) -> dict:
    script, max_len = TARGETS[name]
    work = Path(tempfile.mkdtemp(prefix=f"stompbox-fuzz-{name}-"))
    corpus = work / "corpus"
    corpus.mkdir()
    if name == "audiofile":
        for path in [*BASES.glob("*"), *FOUND.glob("*")]:
            shutil.copy(path, corpus / path.name)
    args = [sys.executable, str(HERE / script), f"-max_len={max_len}", f"-timeout={timeout}", "-rss_limit_mb=4096",
            f"-artifact_prefix={work}/", "-print_final_stats=1"]  # fmt: skip
    args += [f"-runs={runs}"] if runs is not None else [f"-max_total_time={seconds}"]
    args += [f"-seed={seed}"] if seed is not None else []
    started = time.monotonic()
    proc = subprocess.run([*args, str(corpus)], capture_output=True, text=True, cwd=work)
    elapsed = time.monotonic() - started
    log = proc.stderr + proc.stdout
    done = re.search(r"Done (\d+) runs in (\d+) second", log)
    executions = int(done.group(1)) if done else None
    if executions is None:
        numbers = re.findall(r"^#(\d+)\s", log, re.MULTILINE)
        executions = int(numbers[-1]) if numbers else 0
    cov = re.findall(r"cov: (\d+) ft: (\d+)", log)
    findings = sorted(str(p.name) for p in work.glob("*") if p.is_file() and p.name.split("-")[0] in
                      ("crash", "timeout", "oom", "leak", "slow"))  # fmt: skip
    if findings and save:
        keep_dir = HERE / "findings" / name
        keep_dir.mkdir(parents=True, exist_ok=True)
        for finding in findings:
            shutil.copy(work / finding, keep_dir / finding)
            if name == "audiofile":
                FOUND.mkdir(parents=True, exist_ok=True)
                shutil.copy(work / finding, FOUND / f"fuzz-{finding}")
        (keep_dir / "last-log.txt").write_text(log[-20000:])
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "target": name,
        "executions": executions,
        "seconds": round(elapsed, 1),
        "exec_per_s": round(executions / elapsed, 1) if elapsed else None,
        "coverage_edges": int(cov[-1][0]) if cov else None,
        "features": int(cov[-1][1]) if cov else None,
        "returncode": proc.returncode,
        "findings": findings,
        "log_tail": "" if proc.returncode == 0 else log[-3000:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", help="some of: " + ", ".join(TARGETS) + " (default: all)")
    parser.add_argument("--runs", type=int, default=100_000, help="inputs per target (default 100000)")
    parser.add_argument("--seconds", type=int, help="run each target this long instead of --runs inputs")
    parser.add_argument("--timeout", type=int, default=30, help="seconds one input may take before it is a hang")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders (grown corpora)")
    parser.add_argument("--no-save", action="store_true", help="do not copy findings into the repository")
    parser.add_argument(
        "--seed", type=int, help="libFuzzer's random seed (default: a new one each run; fix it to repeat a run)"
    )
    args = parser.parse_args(argv)
    results = []
    unknown = set(args.targets) - set(TARGETS)
    if unknown:
        parser.error("unknown target(s): " + ", ".join(sorted(unknown)))
    for name in args.targets or list(TARGETS):
        result = run_target(
            name,
            None if args.seconds else args.runs,
            args.seconds,
            args.timeout,
            args.keep,
            not args.no_save,
            args.seed,
        )
        results.append(result)
        print(json.dumps({k: v for k, v in result.items() if k != "log_tail"}), flush=True)
        if result["log_tail"]:
            print(result["log_tail"], file=sys.stderr)
    return 1 if any(r["findings"] or r["returncode"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
