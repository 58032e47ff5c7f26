"""Engine settings of the local target, on or off: `dbt build`, side by side.

    python bench/codegen.py                          # code generation; 120 and 5,000 patients
    python bench/codegen.py --setting jit --patients 120 --runs 3
    python bench/codegen.py --patients 120,20000 --runs 3

--setting codegen (the default): the `local` target turns Spark's code generation off
(LAKEHOUSE_CODEGEN, profiles.yml): on small tables Spark spends more CPU writing and
compiling Java per query, in every task, than the generated code saves.
--setting jit: the `local` target's JVM compiles a method after three times the calls
HotSpot waits for by default (-XX:CompileThresholdScaling=3 in profiles.yml); "off" runs
the JVM's default (LAKEHOUSE_JAVA_OPTIONS=-XX:CompileThresholdScaling=1).
--setting adaptive: the `local` target turns adaptive query execution off
(LAKEHOUSE_ADAPTIVE, profiles.yml); the other side runs Spark's default, AQE on.

This prints what each choice costs or saves at each size. For each --patients size,
batch 1 is landed once; each run copies it into a fresh lakehouse and times the whole
`dbt build` in its own process (JVM start included, the same for both), the project's
choice and the other in alternating order so neither always runs on a warmer machine.
Printed: wall seconds and the machine's CPU seconds (every process, from /proc/stat:
run it with nothing else busy) of every run, the median of each and the ratios.

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

# per --setting: (the environment of the project's choice, of the other)
SETTINGS = {
    "codegen": ({"LAKEHOUSE_CODEGEN": "false"}, {"LAKEHOUSE_CODEGEN": "true"}),
    "jit": ({}, {"LAKEHOUSE_JAVA_OPTIONS": "-XX:CompileThresholdScaling=1"}),
    "adaptive": ({"LAKEHOUSE_ADAPTIVE": "false"}, {"LAKEHOUSE_ADAPTIVE": "true"}),
}
LABELS = ("project", "other")


def _machine_cpu() -> float:
    """CPU seconds every process of the machine has used (user, nice, system)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:4]
    return sum(int(value) for value in fields) / os.sysconf("SC_CLK_TCK")


def _build(state: Path, landing: Path, env_extra: dict[str, str]) -> tuple[float, float]:
    """A fresh lakehouse holding `landing`; `dbt build` in a new process; (wall seconds,
    machine CPU seconds)."""
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(landing, state / "landing")
    env = {
        **os.environ,
        "LAKEHOUSE_DIR": str(state),
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
        **env_extra,
    }
    dbt = Path(sys.executable).parent / "dbt"
    start, cpu = time.perf_counter(), _machine_cpu()
    done = subprocess.run(
        [str(dbt), "build", "--project-dir", str(ROOT)],
        env=env,
        capture_output=True,
        text=True,
    )
    wall, cpu = time.perf_counter() - start, _machine_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"dbt build ({env_extra}) failed:\n{done.stdout[-3000:]}")
    return wall, cpu


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
    parser.add_argument(
        "--setting",
        choices=sorted(SETTINGS),
        default="codegen",
        help="what to turn off and on: Spark's code generation (default) or the JIT threshold",
    )
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
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label in LABELS}
        for run in range(args.runs):
            order = LABELS if run % 2 == 0 else LABELS[::-1]
            for label in order:
                env_extra = SETTINGS[args.setting][LABELS.index(label)]
                wall, cpu = _build(root / "lakehouse", landing, env_extra)
                runs[label].append((wall, cpu))
                print(
                    f"{patients:>9,} patients  {args.setting} {label:<7} run {run + 1}: "
                    f"{wall:7.1f} s wall, {cpu:7.1f} s CPU"
                )
        (wall_p, cpu_p), (wall_o, cpu_o) = (
            (
                statistics.median(w for w, _ in runs[label]),
                statistics.median(c for _, c in runs[label]),
            )
            for label in LABELS
        )
        report.append(
            {
                "patients": patients,
                "setting": args.setting,
                **{f"{label}_wall_cpu_s": runs[label] for label in LABELS},
            }
        )
        print(
            f"{patients:>9,} patients  median: project's choice {wall_p:.1f} s wall "
            f"{cpu_p:.1f} s CPU, other {wall_o:.1f} s wall {cpu_o:.1f} s CPU; "
            f"other/project {wall_o / wall_p:.2f} wall, {cpu_o / cpu_p:.2f} CPU"
        )
    shutil.rmtree(root / "lakehouse", ignore_errors=True)
    if args.out:
        args.out.write_text(json.dumps({"results": report}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
