"""A long-lived JVM: one test suite of this checkout and of an earlier revision, run at
the same time, command by command.

    python bench/long_jvm.py --base 3f71f0a                   # the aggregates suite
    python bench/long_jvm.py --base HEAD~3 --suite tests/functional/test_erasure.py

A fresh `dbt build` (bench/codegen.py, bench/build_cost.py) measures a JVM that lives
four minutes. A lane of `make test` and the warm engine live for an hour: what they
hold grows (Spark's status store, Delta's snapshots, plans), and with it what the
garbage collector costs. This runs one pytest suite in this checkout and the same
suite in a `git worktree` of --base (this checkout's .venv and Delta's jars serve
both), both at once, as the two lanes of `make test` run beside each other. Each side
records every dbt command it drives (tests/dbt_harness.py, TEST_DBT_TIMINGS): wall
seconds, dbt's Python CPU seconds and its JVM's CPU seconds. Printed: each command of
both sides side by side, the totals and the ratios head/base. Both sides must pass
and run the same commands; the worktree is removed at the end.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-long-jvm, apart from `make run`'s data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, base_commit, base_worktree, fresh_bench_state, git, revision_parser

SIDES = ("base", "head")
DEFAULT_SUITE = "tests/functional/test_aggregates.py"


def commands(path: Path) -> list[tuple[float, float, float, str]]:
    """The lines TEST_DBT_TIMINGS wrote: (wall s, Python CPU s, JVM CPU s, command); the
    test each ran in is left out."""
    rows = []
    if not path.exists():  # a suite that drives no dbt command
        return rows
    for line in path.read_text().splitlines():
        # an older checkout's lines have no test field (wall, Python, JVM, command)
        wall, python, jvm, *_test, command = line.split("\t")
        rows.append((float(wall), float(python), float(jvm), command))
    return rows


def totals(rows: list[tuple[float, float, float, str]]) -> tuple[float, float, float]:
    return tuple(sum(row[i] for row in rows) for i in range(3))


def main(argv: list[str] | None = None) -> int:
    parser = revision_parser("python bench/long_jvm.py", __doc__)
    parser.add_argument(
        "--suite",
        default=DEFAULT_SUITE,
        help=f"a test file of tests/ that drives dbt (default {DEFAULT_SUITE})",
    )
    args = parser.parse_args(argv)
    suite = Path(args.suite)
    if suite.is_absolute() or ".." in suite.parts or suite.parts[:1] != ("tests",):
        parser.error(f"--suite must be a path under tests/, got {args.suite!r}")
    if suite.suffix != ".py" or not (ROOT / suite).is_file():
        parser.error(f"--suite {args.suite!r} is not a test file of this checkout")
    commit = base_commit(parser, args.base)
    head_commit = git("rev-parse", "HEAD")

    root = fresh_bench_state("bench-long-jvm")
    with base_worktree(root / "base", commit) as worktree:
        if not (worktree / suite).is_file():
            raise SystemExit(f"{suite} is not in {args.base}")
        projects = {"base": worktree, "head": ROOT}
        print(f"base {commit[:10]}, head {head_commit[:10]}: {suite}, both at once", flush=True)
        started = time.perf_counter()
        running: dict[str, subprocess.Popen] = {}
        walls: dict[str, float] = {}
        try:
            for side in SIDES:
                env = {
                    **os.environ,
                    "TEST_DBT_TIMINGS": str(root / f"{side}.tsv"),
                    "PYTHONPATH": str(projects[side]),
                }
                # the suite's own conftest gives each side a throw-away lakehouse and JVM
                for key in ("LAKEHOUSE_DIR", "LAKEHOUSE_PROJECT_DIR", "DBT_PROFILES_DIR"):
                    env.pop(key, None)
                with (root / f"{side}.log").open("w") as log:
                    running[side] = subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "pytest",
                            "-q",
                            "-p",
                            "no:cacheprovider",
                            str(suite),
                        ],
                        cwd=projects[side],
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
            while len(walls) < len(SIDES):  # each side's own end, whichever ends first
                for side in SIDES:
                    if side not in walls and running[side].poll() is not None:
                        walls[side] = time.perf_counter() - started
                time.sleep(1)
        finally:  # interrupted: no suite left running on a removed worktree
            for process in running.values():
                if process.poll() is None:
                    process.kill()
                    process.wait()
        for side in SIDES:
            code = running[side].returncode
            if code != 0:
                tail = (root / f"{side}.log").read_text()[-3000:]
                raise SystemExit(f"the suite failed on {side} (exit {code}):\n{tail}")
        rows = {side: commands(root / f"{side}.tsv") for side in SIDES}
    if [row[3] for row in rows["base"]] != [row[3] for row in rows["head"]]:
        print("note: the two sides ran different dbt commands; totals compare the suites")
    print(f"{'base wall':>10} {'jvm cpu':>8} | {'head wall':>10} {'jvm cpu':>8}  command")
    for base_row, head_row in zip(rows["base"], rows["head"], strict=False):
        print(
            f"{base_row[0]:10.1f} {base_row[2]:8.1f} | {head_row[0]:10.1f} {head_row[2]:8.1f}"
            f"  {head_row[3][:60]}"
        )
    sums = {side: totals(rows[side]) for side in SIDES}
    for side in SIDES:
        wall, python, jvm = sums[side]
        print(
            f"{side}: suite {walls[side]:.0f} s wall; its {len(rows[side])} dbt commands "
            f"{wall:.1f} s wall, {python:.1f} s dbt's Python CPU, {jvm:.1f} s JVM CPU"
        )
    ratios = [f"suite wall {walls['head'] / walls['base']:.2f}"]
    if sums["base"][0] and sums["base"][2]:
        ratios.append(f"dbt commands' wall {sums['head'][0] / sums['base'][0]:.2f}")
        ratios.append(f"JVM CPU {sums['head'][2] / sums['base'][2]:.2f}")
    print("head/base: " + ", ".join(ratios))
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "base": commit,
                    "head": head_commit,
                    "suite": str(suite),
                    "suite_wall_s": walls,
                    "commands": rows,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
