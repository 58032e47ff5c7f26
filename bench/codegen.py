"""Spark code generation off or on for the local engine: `dbt build`, side by side.

    python bench/codegen.py                          # 120 and 5,000 patients, 2 runs each
    python bench/codegen.py --patients 120,20000 --runs 3

The `local` target turns Spark's code generation off by default (LAKEHOUSE_CODEGEN,
profiles.yml): on small tables Spark spends more CPU writing and compiling Java per query,
in every task, than the generated code saves. This prints what that choice costs or
saves at each size. For each --patients size, batch 1 is landed once; each run copies
it into a fresh lakehouse and times the whole `dbt build` in its own process (JVM start
and Ivy resolution included, the same for both settings), off and on in alternating
order so neither always runs on a warmer machine. Printed: wall seconds of every run,
the median of each setting and the ratio on/off.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-codegen, apart from `make run`'s data.
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

SETTINGS = ("false", "true")


def _build(state: Path, landing: Path, codegen: str) -> float:
    """A fresh lakehouse holding `landing`; `dbt build` in a new process; wall seconds."""
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(landing, state / "landing")
    env = {
        **os.environ,
        "LAKEHOUSE_DIR": str(state),
        "LAKEHOUSE_CODEGEN": codegen,
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
    }
    dbt = Path(sys.executable).parent / "dbt"
    start = time.perf_counter()
    done = subprocess.run(
        [str(dbt), "build", "--project-dir", str(ROOT)],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"dbt build (LAKEHOUSE_CODEGEN={codegen}) failed:\n{done.stdout[-3000:]}")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/codegen.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--patients", default="120,5000", help="demo sizes, comma-separated (default 120,5000)"
    )
    parser.add_argument("--runs", type=int, default=2, help="runs per setting (default 2)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    sizes = demo_sizes(parser, args.patients, args.runs)

    root = bench_state("bench-codegen")
    shutil.rmtree(root, ignore_errors=True)
    report = []
    for patients in sizes:
        landing = root / f"landing-{patients}"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "python_jobs.generate",
                "--landing",
                str(landing),
                *("--patients", str(patients), "--batch", "1"),
            ],
            env={**os.environ, "LAKEHOUSE_DIR": str(root)},
            check=True,
            capture_output=True,
        )
        walls: dict[str, list[float]] = {setting: [] for setting in SETTINGS}
        for run in range(args.runs):
            order = SETTINGS if run % 2 == 0 else SETTINGS[::-1]
            for setting in order:
                wall = _build(root / "lakehouse", landing, setting)
                walls[setting].append(wall)
                print(
                    f"{patients:>9,} patients  codegen {setting:<5}  run {run + 1}: {wall:7.1f} s"
                )
        off, on = (statistics.median(walls[setting]) for setting in SETTINGS)
        report.append({"patients": patients, "off_s": walls["false"], "on_s": walls["true"]})
        print(
            f"{patients:>9,} patients  median: codegen off {off:.1f} s, on {on:.1f} s, "
            f"on/off {on / off:.2f}"
        )
    shutil.rmtree(root / "lakehouse", ignore_errors=True)
    if args.out:
        args.out.write_text(json.dumps({"results": report}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
