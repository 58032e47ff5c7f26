"""The daily loop on the warm engine (make up) and on the embedded session, side by side.

    python bench/warm.py                    # 200 patients, each command once per engine
    python bench/warm.py --patients 120 --runs 2
    python bench/warm.py --engines warm     # the engine alone (it builds the demo too)

One demo lakehouse is built once (batch 1, `dbt build`, `audit_stream --once`). Then
each engine in turn, embedded first, runs the commands a user types, each in a new
process exactly as typed, wall time measured from outside:

- a trivial run-operation (`dbt run-operation run_query --args '{sql: select 1}'`);
- `gdpr_erase` of one subject requested just before (the request is not timed);
- `restore_version` of silver_patients to the version before that erasure;
- `gdpr_erase` of a second subject, the same way (on the warm engine its JIT has
  compiled the first erasure's code by then; the first is the day's first);
- `audit_stream --once` with nothing new (a catch-up run first, not timed).

The warm engine's start (`engine up`) is printed apart: it is paid once a day, not per
command. With --runs 2 the order flips on the second run (warm first) so neither
engine always runs on the warmer machine. Targets (issue 25): trivial <= 5 s, erase
<= 20 s (both), restore <= 15 s, audit with nothing new <= 10 s, on the warm engine.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-warm, apart from `make run`'s data.
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

ENGINES = ("embedded", "warm")
STEPS = (
    "trivial run-operation",
    "gdpr_erase (1 subject)",
    "restore_version",
    "gdpr_erase, next subject",
    "audit --once, nothing new",
)
TARGETS = {STEPS[0]: 5, STEPS[1]: 20, STEPS[2]: 15, STEPS[3]: 20, STEPS[4]: 10}


def _run(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """One command in a new process; (wall seconds, its output). Fails loudly."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[:4])} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}"
        )
    return wall, done.stdout


def _dbt(*args: str) -> list[str]:
    return [str(Path(sys.executable).parent / "dbt"), *args, "--project-dir", str(ROOT)]


def _job(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", f"python_jobs.{module}", *args]


def _subjects(state: Path, count: int) -> list[str]:
    """Patient ids of the landed batch, newest first (none erased yet)."""
    import pyarrow.parquet as pq

    ids: set[str] = set()
    for path in (state / "landing" / "patients").glob("batch-*.parquet"):
        ids.update(
            str(v) for v in pq.read_table(path, columns=["patient_id"]).column(0).to_pylist()
        )
    return sorted(ids, reverse=True)[:count]


def _silver_version(state: Path) -> int:
    """silver.patients' newest version, from its _delta_log."""
    from python_jobs.delta_files import commit_files

    return max(commit_files(state / "warehouse" / "silver.db" / "patients"))


def _erase(subject: str, target: str, env: dict[str, str]) -> float:
    """Request one subject's erasure (not timed), then the timed `gdpr_erase`."""
    _run(
        _dbt(
            "run-operation",
            "request_erasure",
            "--args",
            json.dumps({"subject_ids": [subject], "reason": "bench/warm.py"}),
            "--target",
            target,
        ),
        env,
    )
    wall, _ = _run(_dbt("run-operation", "gdpr_erase", "--target", target), env)
    return wall


def _measure(engine: str, subjects: list[str], env: dict[str, str]) -> dict[str, float]:
    target = "warm" if engine == "warm" else "local"
    walls: dict[str, float] = {}
    walls[STEPS[0]], _ = _run(
        _dbt(
            "run-operation",
            "run_query",
            "--args",
            json.dumps({"sql": "select 1"}),
            "--target",
            target,
        ),
        env,
    )
    before = _silver_version(Path(env["LAKEHOUSE_DIR"]))
    walls[STEPS[1]] = _erase(subjects[0], target, env)
    walls[STEPS[2]], _ = _run(
        _dbt(
            "run-operation",
            "restore_version",
            "--args",
            json.dumps({"model": "silver_patients", "version": before, "reason": "bench/warm.py"}),
            "--target",
            target,
        ),
        env,
    )
    # a second subject: on the warm engine the JIT has compiled the first one's code
    walls[STEPS[3]] = _erase(subjects[1], target, env)
    _run(_job("audit_stream", "--once"), env)  # the new commits: not timed
    walls[STEPS[4]], out = _run(_job("audit_stream", "--once"), env)
    if "Audited 0 new version(s)" not in out:
        raise SystemExit(f"audit_stream --once found new versions on a second run:\n{out}")
    return walls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/warm.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--patients", type=int, default=200, help="demo size (default 200)")
    parser.add_argument("--runs", type=int, default=1, help="runs per engine (default 1)")
    parser.add_argument(
        "--engines",
        default="embedded,warm",
        help="which to measure, comma-separated (default embedded,warm; warm alone builds "
        "the demo through the engine too)",
    )
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    engines = tuple(dict.fromkeys(name.strip() for name in args.engines.split(",")))
    if not engines or not set(engines) <= set(ENGINES):
        parser.error(f"--engines must name embedded, warm or both, got {args.engines!r}")
    engines = tuple(e for e in ENGINES if e in engines)
    if not 10 <= args.patients <= 100_000:
        parser.error("--patients must be from 10 to 100,000")
    if not 1 <= args.runs <= 5:
        parser.error("--runs must be from 1 to 5")

    state = bench_state("bench-warm")
    env = {
        **os.environ,
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
        "LAKEHOUSE_ENGINE": "",
    }
    subprocess.run(_job("engine", "down"), cwd=ROOT, env=env, capture_output=True)
    shutil.rmtree(state, ignore_errors=True)
    _run(_job("generate", "--patients", str(args.patients), "--batch", "1"), env)
    walls: dict[str, dict[str, list[float]]] = {e: {s: [] for s in STEPS} for e in engines}
    starts: list[float] = []
    warm_only = engines == ("warm",)

    def engine_up() -> None:
        started, _ = _run(_job("engine", "up"), env)
        starts.append(started)
        print(f"  engine up: {started:.1f} s (once a day)")

    try:
        if warm_only:
            engine_up()
        first = "warm" if warm_only else "local"
        build, _ = _run(_dbt("build", "--target", first), env)
        _run(_job("audit_stream", "--once"), env)
        print(
            f"demo lakehouse, {args.patients} patients: `dbt build --target {first}` {build:.1f} s"
        )
        subjects = iter(_subjects(state, 4 * args.runs))
        for run in range(args.runs):
            for engine in engines if run % 2 == 0 else engines[::-1]:
                if engine == "warm" and not warm_only:
                    engine_up()
                measured = _measure(engine, [next(subjects), next(subjects)], env)
                if engine == "warm" and not warm_only:
                    _run(_job("engine", "down"), env)
                for step, wall in measured.items():
                    walls[engine][step].append(wall)
                    print(f"  run {run + 1}  {engine:<8}  {step:<27} {wall:6.1f} s", flush=True)
    finally:
        subprocess.run(_job("engine", "down"), cwd=ROOT, env=env, capture_output=True)
    heading = "".join(f" {engine:>9}" for engine in engines)
    print(f"\n{'median of ' + str(args.runs) + ' run(s)':<29}{heading} {'target':>7}  warm")
    report = []
    for step in STEPS:
        medians = {engine: statistics.median(walls[engine][step]) for engine in engines}
        figures = "".join(f" {medians[engine]:8.1f}s" for engine in engines)
        verdict = ""
        if "warm" in medians:
            verdict = "ok" if medians["warm"] <= TARGETS[step] else "MISSED"
            if "embedded" in medians:
                verdict += f", {medians['embedded'] / medians['warm']:.1f}x faster"
        print(f"{step:<29}{figures} {TARGETS[step]:6d}s  {verdict}")
        report.append({"step": step, **{f"{e}_s": walls[e][step] for e in engines}})
    if args.out:
        args.out.write_text(json.dumps({"engine_up_s": starts, "results": report}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
