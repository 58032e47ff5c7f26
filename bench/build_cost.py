"""What a change costs a whole build: `dbt build` of this checkout and of an earlier
revision, side by side on the same demo data.

    python bench/build_cost.py --base af42576 --patients 100000         # issue 22's ratio
    python bench/build_cost.py --base HEAD~5 --patients 1000,10000 --runs 2

The base revision is checked out with `git worktree` into the bench's state folder
(this checkout's .venv and Delta's jars serve both). For each --patients size, each
revision lands batch 1 with its own generator (the same seed: the same people; the
landing schema may differ between revisions) into a lakehouse of its own, and each
run times a whole `dbt build` on a fresh copy of that landing zone, in a new process
(JVM start included, the same for both), base and head in alternating order so
neither always runs on a warmer machine. Printed: wall seconds of every run, the
median of each side and the ratio head/base. The worktree is removed at the end.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-build-cost, apart from `make run`'s data.
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

from bench._common import ROOT, bench_state, demo_sizes

SIDES = ("base", "head")


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def _env(project: Path, state: Path) -> dict[str, str]:
    return {
        **os.environ,
        "LAKEHOUSE_DIR": str(state),
        "LAKEHOUSE_PROJECT_DIR": str(project),
        "DBT_PROFILES_DIR": str(project),
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
        "PYTHONPATH": str(project),
    }


def _land(project: Path, landing: Path, patients: int) -> None:
    """Batch 1 of the demo, by the revision's own generator, into `landing`."""
    command = [sys.executable, "-m", "python_jobs.generate", "--landing", str(landing)]
    command += ["--patients", str(patients), "--batch", "1"]
    done = subprocess.run(
        command, cwd=project, env=_env(project, landing.parent), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"generate in {project} failed:\n{done.stderr[-2000:]}")


def _build(project: Path, state: Path, landing: Path) -> float:
    """A fresh lakehouse holding `landing`; `dbt build` of `project` in a new process."""
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(landing, state / "landing")
    dbt = Path(sys.executable).parent / "dbt"
    start = time.perf_counter()
    done = subprocess.run(
        [str(dbt), "build", "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project,
        env=_env(project, state),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"dbt build of {project} failed:\n{done.stdout[-3000:]}")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/build_cost.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--base", required=True, help="the earlier revision (a commit or ref)")
    parser.add_argument(
        "--patients", default="1000", help="demo sizes, comma-separated (default 1000)"
    )
    parser.add_argument("--runs", type=int, default=1, help="runs per side (default 1)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    sizes = demo_sizes(parser, args.patients, args.runs)
    if args.base.startswith("-"):
        parser.error(f"--base must name a revision, got {args.base!r}")
    found = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{args.base}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        parser.error(f"--base {args.base!r} is not a commit of this repository")
    base_commit = found.stdout.strip()
    head_commit = _git("rev-parse", "HEAD")

    root = bench_state("bench-build-cost")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    worktree = root / "base"
    _git("worktree", "add", "--detach", str(worktree), base_commit)
    if (ROOT / ".venv").exists():
        (worktree / ".venv").symlink_to(ROOT / ".venv")
    projects = {"base": worktree, "head": ROOT}
    print(f"base {base_commit[:10]}, head {head_commit[:10]}", flush=True)
    report = []
    try:
        for patients in sizes:
            landings = {side: root / f"landing-{side}-{patients}" / "landing" for side in SIDES}
            for side in SIDES:
                _land(projects[side], landings[side], patients)
            walls: dict[str, list[float]] = {side: [] for side in SIDES}
            for run in range(args.runs):
                for side in SIDES if run % 2 == 0 else SIDES[::-1]:
                    wall = _build(projects[side], root / "lakehouse", landings[side])
                    walls[side].append(wall)
                    print(
                        f"{patients:>9,} patients  {side}  run {run + 1}: {wall:7.1f} s", flush=True
                    )
            base, head = (statistics.median(walls[side]) for side in SIDES)
            report.append({"patients": patients, "base_s": walls["base"], "head_s": walls["head"]})
            print(
                f"{patients:>9,} patients  median: base {base:.1f} s, head {head:.1f} s, "
                f"head/base {head / base:.2f}",
                flush=True,
            )
    finally:
        _git("worktree", "remove", "--force", str(worktree))
        shutil.rmtree(root / "lakehouse", ignore_errors=True)
    if args.out:
        args.out.write_text(
            json.dumps({"base": base_commit, "head": head_commit, "results": report}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
