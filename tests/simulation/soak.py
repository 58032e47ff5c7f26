"""Random histories against one lakehouse, every law checked after every step.

    python -m tests.simulation.soak --seed 1 --minutes 30          # make soak
    python -m tests.simulation.soak --replay tests/simulation/regressions/x.json

One process, one JVM, one throw-away lakehouse (a small demo build first); history k
of a run has seed `seed + k` and subjects of its own. A history that breaks a law is
shrunk to a minimal one (steps dropped while it still breaks the same law, each
candidate replayed on fresh subjects) and saved under tests/simulation/regressions/,
where the suite replays it (test_simulation.py). The report (--report) gives the seed
range, the steps and the minutes, and every finding.
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.dbt_harness import DbtProject, isolate

REGRESSIONS = Path(__file__).resolve().parent / "regressions"


class Soak:
    """The lakehouse the histories share, and a counter that gives each its subjects."""

    def __init__(self, dbt: DbtProject, spark) -> None:
        self.dbt, self.spark = dbt, spark
        self.histories = 0
        self.worlds: list = []  # every World run, for the timings

    def timings(self) -> str:
        """Seconds per operation (laws included), over every history run."""
        spent: dict[str, list[float]] = {}
        for world in self.worlds:
            for op, seconds in world.timings:
                spent.setdefault(op, []).append(seconds)
        return ", ".join(
            f"{op} {len(s)}x {sum(s) / len(s):.1f} s" for op, s in sorted(spent.items())
        )

    def run(self, history: list[dict]) -> tuple[str, str] | None:
        """Apply `history` on fresh subjects; (law, detail) of the first law it breaks."""
        from tests.simulation.world import LawBroken, World

        world = World(self.dbt, self.spark, self.next_number())
        self.worlds.append(world)
        for step in history:
            try:
                world.apply(step)
            except LawBroken as broken:
                return broken.law, f"step {world.step} {json.dumps(step)}: {broken}"
            except AssertionError as failed:  # a command failed that must not
                return "command failed", f"step {world.step} {json.dumps(step)}: {failed}"
            except Exception as error:
                return (
                    "error",
                    f"step {world.step} {json.dumps(step)}: {type(error).__name__}: {error}",
                )
        return None

    def next_number(self) -> int:
        self.histories += 1
        return self.histories

    def shrink(self, history: list[dict], law: str) -> list[dict]:
        from tests.simulation.history import shrink

        def fails(candidate: list[dict]) -> bool:
            found = self.run(candidate)
            return found is not None and found[0] == law

        return shrink(history, fails)


def save(history: list[dict], law: str, detail: str, seed: int) -> Path:
    REGRESSIONS.mkdir(exist_ok=True)
    slug = "".join(c if c.isalnum() else "-" for c in law)[:40]
    path = REGRESSIONS / f"seed{seed}-{slug}.json"
    path.write_text(
        json.dumps({"seed": seed, "law": law, "found": detail, "history": history}, indent=1) + "\n"
    )
    return path


def open_lakehouse(patients: int = 20) -> tuple[DbtProject, object]:
    """This process's throw-away lakehouse, built once (the demo's sources, a few
    patients), and its Spark session."""
    state = Path(tempfile.mkdtemp(prefix="gdpr_lakehouse_soak_"))
    atexit.register(shutil.rmtree, state, ignore_errors=True)  # nothing left behind
    isolate(state)
    from demo import generate
    from python_jobs.spark import get_spark

    dbt = DbtProject(target_path=state / "target", log_path=state / "logs")
    spark = get_spark("gdpr_lakehouse_soak")
    generate.main(["--patients", str(patients), "--batch", "1"])
    dbt.invoke("build")
    return dbt, spark


def main(argv: list[str] | None = None) -> int:
    from tests.simulation.history import generate

    parser = argparse.ArgumentParser(prog="python -m tests.simulation.soak", description=__doc__)
    parser.add_argument("--seed", type=int, default=1, help="the first history's seed")
    parser.add_argument("--histories", type=int, default=1000, help="at most this many")
    parser.add_argument("--steps", type=int, default=30, help="steps per history (>= 1)")
    parser.add_argument(
        "--minutes", type=float, default=30.0, help="budget: no history starts after it"
    )
    parser.add_argument("--replay", type=Path, help="replay one saved history, then stop")
    parser.add_argument("--no-shrink", action="store_true", help="save a failing history as drawn")
    parser.add_argument("--stop-at-first", action="store_true", help="stop at the first finding")
    parser.add_argument("--report", type=Path, help="write the report here too")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.histories < 1 or args.minutes <= 0:
        parser.error("--steps and --histories are whole numbers >= 1, --minutes > 0")
    started = time.monotonic()
    dbt, spark = open_lakehouse()
    soak = Soak(dbt, spark)
    if args.replay:
        saved = json.loads(args.replay.read_text())
        found = soak.run(saved["history"])
        print(
            f"{args.replay}: " + ("no law broken" if found is None else f"{found[0]}: {found[1]}")
        )
        return 0 if found is None else 1
    lines, findings, steps, seed = [], 0, 0, args.seed
    budget = started + args.minutes * 60
    ran = 0
    while ran < args.histories and time.monotonic() < budget:
        history = generate(seed, args.steps)
        began = time.monotonic()
        found = soak.run(history)
        ran += 1
        steps += len(history)
        line = f"seed {seed}: {len(history)} steps, {time.monotonic() - began:.0f} s, "
        if found is None:
            line += "every law held"
        else:
            findings += 1
            law, detail = found
            minimal = history if args.no_shrink else soak.shrink(history, law)
            path = save(minimal, law, detail, seed)
            line += f"BROKEN {law} ({len(minimal)} steps: {path.name}): {detail}"
        print(line, flush=True)
        lines.append(line)
        seed += 1
        if found is not None and args.stop_at_first:
            break
    summary = (
        f"soak: seeds {args.seed}..{seed - 1}, {ran} histories, {steps} steps, "
        f"{(time.monotonic() - started) / 60:.1f} min, {findings} broke a law"
    )
    timings = f"seconds per step (laws included): {soak.timings()}"
    print(summary, timings, sep="\n")
    if args.report:
        args.report.write_text("\n".join([summary, timings, *lines]) + "\n")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
