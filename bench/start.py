"""A dbt command's start on the embedded session: Delta's jars by path vs through Ivy.

    python bench/start.py               # 3 runs of each, alternating
    python bench/start.py --runs 5

profiles.yml names Delta's jars by their path in ~/.m2 (`spark.jars`). The way it did
before, and the way Delta's docs show, is a Maven coordinate (`spark.jars.packages`,
with the modules Spark ships excluded), which Spark resolves through Ivy at every JVM
start. This times the same trivial command (`dbt run-operation run_query --args
'{sql: select 1}'`, a new process each time, as a user types it) with the profile as
it is and with a copy whose jars are the coordinate, alternating which goes first.
Printed: wall seconds and lines of output of every run, the medians and their ratio.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-start (an empty lakehouse).
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

VARIANTS = ("by path", "Ivy")


def ivy_profile(folder: Path) -> Path:
    """A copy of profiles.yml whose local target names Delta by coordinate (Ivy)."""
    from python_jobs import jars

    lines = (ROOT / "profiles.yml").read_text().splitlines()
    start = lines.index("        spark.jars: >-")
    end = next(i for i in range(start, len(lines)) if "{%- endfor %}" in lines[i])
    delta = jars.delta_package()
    lines[start : end + 1] = [
        f"        spark.jars.packages: {delta.coordinate}",
        f'        spark.jars.excludes: "{",".join(sorted(jars.SPARK_SHIPS))}"',
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profiles.yml").write_text("\n".join(lines) + "\n")
    return folder


def _run(env: dict[str, str]) -> tuple[float, int]:
    """The trivial command in a new process: (wall seconds, lines of output)."""
    dbt = Path(sys.executable).parent / "dbt"
    command = [str(dbt), "run-operation", "run_query", "--args", "{sql: select 1}"]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "--project-dir", str(ROOT)], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"dbt run-operation failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return wall, len((done.stdout + done.stderr).splitlines())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/start.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 9:
        parser.error("--runs must be between 1 and 9")
    state = bench_state("bench-start")
    shutil.rmtree(state, ignore_errors=True)
    base = {
        **os.environ,
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
        "LAKEHOUSE_ENGINE": "",
    }
    envs = {
        "by path": {**base, "DBT_PROFILES_DIR": str(ROOT)},
        "Ivy": {**base, "DBT_PROFILES_DIR": str(ivy_profile(state / "ivy-profile"))},
    }
    _run(envs["by path"])  # parse and the metastore's creation, not timed
    walls: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    output: dict[str, list[int]] = {variant: [] for variant in VARIANTS}
    for run in range(args.runs):
        for variant in VARIANTS if run % 2 == 0 else VARIANTS[::-1]:
            wall, lines = _run(envs[variant])
            walls[variant].append(wall)
            output[variant].append(lines)
            print(f"  run {run + 1}  {variant:<8} {wall:6.1f} s  {lines:3d} lines of output")
    path, ivy = (statistics.median(walls[variant]) for variant in VARIANTS)
    print(
        f"median: jars by path {path:.1f} s ({statistics.median(output['by path']):.0f} lines), "
        f"through Ivy {ivy:.1f} s ({statistics.median(output['Ivy']):.0f} lines); "
        f"by path / Ivy {path / ivy:.2f}"
    )
    if args.out:
        args.out.write_text(json.dumps({"wall_s": walls, "output_lines": output}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
