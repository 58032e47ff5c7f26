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
median of each side and the ratio head/base, then where the difference goes: the nodes
whose median time (dbt's run_results.json) grew or shrank most. The worktree is
removed at the end.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-build-cost, apart from `make run`'s data.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (
    ROOT,
    base_commit,
    base_worktree,
    demo_sizes,
    fresh_bench_state,
    git,
    revision_parser,
)

SIDES = ("base", "head")


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
    command = [sys.executable, "-m", "demo.generate", "--landing", str(landing)]
    command += ["--patients", str(patients), "--batch", "1"]
    done = subprocess.run(
        command, cwd=project, env=_env(project, landing.parent), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"generate in {project} failed:\n{done.stderr[-2000:]}")


def _build(project: Path, state: Path, landing: Path) -> tuple[float, dict[str, float]]:
    """A fresh lakehouse holding `landing`; `dbt build` of `project` in a new process.
    Its wall seconds, and each node's seconds as dbt recorded them."""
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
    results = json.loads((state / "target" / "run_results.json").read_text())["results"]
    return wall, {r["unique_id"]: float(r["execution_time"]) for r in results}


def node_differences(
    nodes: dict[str, list[dict[str, float]]], top: int = 8
) -> list[tuple[str, float, float]]:
    """(node, base median s, head median s) of the nodes whose median time differs most
    between the sides, largest difference first; a node one side lacks counts as 0 s."""
    names = {name for side in SIDES for run in nodes[side] for name in run}
    medians = {
        name: tuple(statistics.median(run.get(name, 0.0) for run in nodes[side]) for side in SIDES)
        for name in names
    }
    ranked = sorted(medians.items(), key=lambda item: -abs(item[1][1] - item[1][0]))
    return [(name, base, head) for name, (base, head) in ranked[:top]]


def _compare(projects: dict[str, Path], root: Path, sizes: list[int], runs: int) -> list[dict]:
    """Each size built by both sides, alternated; what each run took, printed as it goes."""
    report = []
    for patients in sizes:
        landings = {side: root / f"landing-{side}-{patients}" / "landing" for side in SIDES}
        for side in SIDES:
            _land(projects[side], landings[side], patients)
        walls: dict[str, list[float]] = {side: [] for side in SIDES}
        nodes: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
        for run in range(runs):
            for side in SIDES if run % 2 == 0 else SIDES[::-1]:
                wall, timings = _build(projects[side], root / "lakehouse", landings[side])
                walls[side].append(wall)
                nodes[side].append(timings)
                print(f"{patients:>9,} patients  {side}  run {run + 1}: {wall:7.1f} s", flush=True)
        base, head = (statistics.median(walls[side]) for side in SIDES)
        differences = node_differences(nodes)
        report.append(
            {
                "patients": patients,
                "base_s": walls["base"],
                "head_s": walls["head"],
                "nodes": [{"node": n, "base_s": b, "head_s": h} for n, b, h in differences],
            }
        )
        print(
            f"{patients:>9,} patients  median: base {base:.1f} s, head {head:.1f} s, "
            f"head/base {head / base:.2f}",
            flush=True,
        )
        print(f"{patients:>9,} patients  nodes whose time changed most (median s):")
        for name, node_base, node_head in differences:
            print(f"    {name.split('.', 2)[-1]:<48} {node_base:7.1f} -> {node_head:7.1f}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = revision_parser("python bench/build_cost.py", __doc__)
    parser.add_argument(
        "--patients", default="1000", help="demo sizes, comma-separated (default 1000)"
    )
    parser.add_argument("--runs", type=int, default=1, help="runs per side (default 1)")
    args = parser.parse_args(argv)
    sizes = demo_sizes(parser, args.patients, args.runs)
    commit = base_commit(parser, args.base)
    head_commit = git("rev-parse", "HEAD")

    root = fresh_bench_state("bench-build-cost")
    with base_worktree(root / "base", commit) as worktree:
        projects = {"base": worktree, "head": ROOT}
        print(f"base {commit[:10]}, head {head_commit[:10]}", flush=True)
        try:
            report = _compare(projects, root, sizes, args.runs)
        finally:
            shutil.rmtree(root / "lakehouse", ignore_errors=True)
    if args.out:
        args.out.write_text(
            json.dumps({"base": commit, "head": head_commit, "results": report}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
