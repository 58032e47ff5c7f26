"""A JVM's start with the class archive and without it, side by side (python_jobs.class_archive).

    python bench/class_archive.py                 # 3 runs of each command each way, 50 patients
    python bench/class_archive.py --runs 5 --patients 200

A small demo lakehouse is built once (batch 1, `dbt build`, `audit_stream --once`).
Then each command a user types on the embedded session runs in a new process, with the
archive `make setup` made and with LAKEHOUSE_CLASS_ARCHIVE empty (none), alternated
(the order flips every run), wall time and the machine's CPU seconds (/proc/stat)
measured from outside:

- `dbt run-operation run_query --args '{sql: select 1}'`;
- `python -m python_jobs.audit_stream --once` with nothing new;
- `dbt run-operation gdpr_erase` of one subject requested just before (not timed);
- `python -m python_jobs.engine up` (then `down`, not timed).

Nothing else may run beside it. State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-class-archive.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, bench_state
from bench.warm import _dbt, _job, _subjects

WAYS = ("none", "archive")
STEPS = (
    "trivial run-operation",
    "audit --once, nothing new",
    "gdpr_erase (1 subject)",
    "engine up",
)


def _machine_cpu() -> float:
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    return (int(fields[0]) + int(fields[1]) + int(fields[2])) / os.sysconf("SC_CLK_TCK")


def _run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One command in a new process: (wall seconds, machine CPU seconds). Fails loudly."""
    wall, cpu = time.perf_counter(), _machine_cpu()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    spent = (time.perf_counter() - wall, _machine_cpu() - cpu)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[:4])} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}"
        )
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/class_archive.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--patients", type=int, default=50, help="demo size (default 50)")
    parser.add_argument("--runs", type=int, default=3, help="runs each way (default 3)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    if not 10 <= args.patients <= 100_000:
        parser.error("--patients must be from 10 to 100,000")
    if not 1 <= args.runs <= 9:
        parser.error("--runs must be from 1 to 9")

    from python_jobs import class_archive

    archive = class_archive.archive_path()
    if archive is None or not class_archive.current(archive):
        raise SystemExit(f"no current class archive ({archive}): run `make setup` first")
    state = bench_state("bench-class-archive")
    base = {
        **os.environ,
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
        "LAKEHOUSE_ENGINE": "",
    }
    base.pop(class_archive.ENV, None)
    envs = {"archive": base, "none": {**base, class_archive.ENV: ""}}
    subprocess.run(_job("engine", "down"), cwd=ROOT, env=base, capture_output=True)
    shutil.rmtree(state, ignore_errors=True)
    _run(_job("generate", "--patients", str(args.patients), "--batch", "1"), base)
    build, _ = _run(_dbt("build"), base)
    _run(_job("audit_stream", "--once"), base)
    print(f"demo lakehouse, {args.patients} patients: `dbt build` {build:.1f} s", flush=True)
    subjects = iter(_subjects(state, 2 * args.runs))
    figures: dict[str, dict[str, list[tuple[float, float]]]] = {
        way: {step: [] for step in STEPS} for way in WAYS
    }
    try:
        for run in range(args.runs):
            for way in WAYS if run % 2 == 0 else WAYS[::-1]:
                env = envs[way]
                measured = {
                    STEPS[0]: _run(
                        _dbt("run-operation", "run_query", "--args", '{"sql": "select 1"}'), env
                    ),
                    STEPS[1]: _run(_job("audit_stream", "--once"), env),
                }
                _run(
                    _dbt(
                        "run-operation",
                        "request_erasure",
                        "--args",
                        json.dumps({"subject_ids": [next(subjects)], "reason": "bench"}),
                    ),
                    env,
                )
                measured[STEPS[2]] = _run(_dbt("run-operation", "gdpr_erase"), env)
                _run(_job("audit_stream", "--once"), env)  # the erasure's commits: not timed
                measured[STEPS[3]] = _run(_job("engine", "up"), env)
                _run(_job("engine", "down"), env)
                for step, spent in measured.items():
                    figures[way][step].append(spent)
                    print(
                        f"  run {run + 1}  {way:<8} {step:<27} {spent[0]:6.1f} s wall "
                        f"{spent[1]:6.1f} s CPU",
                        flush=True,
                    )
    finally:
        subprocess.run(_job("engine", "down"), cwd=ROOT, env=base, capture_output=True)
    print(f"\nmedian of {args.runs} run(s)        none: wall   CPU   archive: wall   CPU   ratio")
    report = []
    for step in STEPS:
        cells = {
            way: (
                statistics.median(w for w, _ in figures[way][step]),
                statistics.median(c for _, c in figures[way][step]),
            )
            for way in WAYS
        }
        (nw, nc), (aw, ac) = cells["none"], cells["archive"]
        print(
            f"{step:<27} {nw:9.1f}s {nc:5.1f}s {aw:12.1f}s {ac:5.1f}s   "
            f"{aw / nw:.2f}x wall, {ac / nc:.2f}x CPU"
        )
        report.append({"step": step, **{way: figures[way][step] for way in WAYS}})
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
