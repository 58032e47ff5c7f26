"""`make run`'s first run on a fresh lakehouse: three processes against one, side by side.

    python bench/first_run.py                      # 200 patients, one run each
    python bench/first_run.py --patients 120 --runs 2

Each run starts from an empty lakehouse (packages and jars already installed) and
times, as `make run` ran them before and as it runs them now:

- three processes: `python -m python_jobs.generate`, `dbt build`, `python -m
  python_jobs.audit_stream --once`, each with its own JVM but the generator;
- one process: `python -m python_jobs.demo` (the same three steps, dbt in-process and
  the audit on the build's session: one JVM).

Both orders alternate run by run. Printed: each step's wall seconds (the three
processes), each side's total, the medians, their ratio and issue 25's target for
`make run` (120 s). Run it with nothing else busy: the machine's noise is larger than
a small difference.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-first-run, apart from `make run`'s data.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, bench_state

TARGET_SECONDS = 120.0
SIDES = ("three processes", "one process")


def _timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return time.perf_counter() - start


def run_side(side: str, state: Path, patients: int) -> dict[str, float]:
    """One first run of `side` on a fresh lakehouse: seconds per step, and total."""
    shutil.rmtree(state, ignore_errors=True)
    env = {
        **os.environ,
        "LAKEHOUSE_DIR": str(state),
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
        "LAKEHOUSE_ENGINE": "off",
    }
    env.pop("DBT_TARGET", None)
    python = sys.executable
    sample = ["--patients", str(patients), "--seed", "42"]
    if side == "one process":
        total = _timed([python, "-m", "python_jobs.demo", *sample], env)
        return {"total": total}
    steps = {
        "generate": _timed([python, "-m", "python_jobs.generate", *sample], env),
        "dbt build": _timed(
            [
                str(Path(python).parent / "dbt"),
                "build",
                "--target",
                "local",
                "--project-dir",
                str(ROOT),
            ],
            env,
        ),
        "audit --once": _timed([python, "-m", "python_jobs.audit_stream", "--once"], env),
    }
    return {**steps, "total": sum(steps.values())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/first_run.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--patients", type=int, default=200, help="patients (default 200)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each side (default 1)")
    args = parser.parse_args(argv)
    if not 1 <= args.patients <= 1_000_000 or not 1 <= args.runs <= 10:
        parser.error("--patients must be from 1 to 1,000,000 and --runs from 1 to 10")
    root = bench_state("bench-first-run")
    results: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    for run in range(args.runs):
        for side in SIDES if run % 2 == 0 else SIDES[::-1]:
            figures = run_side(side, root / "lakehouse", args.patients)
            results[side].append(figures)
            steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in figures.items())
            print(f"run {run + 1} {side:<16} {steps}", flush=True)
    shutil.rmtree(root / "lakehouse", ignore_errors=True)
    medians = {side: statistics.median(r["total"] for r in results[side]) for side in SIDES}
    print(f"\n{args.patients} patients, median of {args.runs} run(s), a fresh lakehouse each:")
    for side in SIDES:
        verdict = "ok" if medians[side] <= TARGET_SECONDS else "MISSED"
        print(f"  {side:<16} {medians[side]:7.1f} s   target {TARGET_SECONDS:.0f} s  {verdict}")
    print(f"  one/three        {medians['one process'] / medians['three processes']:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
