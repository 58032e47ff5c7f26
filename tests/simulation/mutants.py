"""Does the soak find a broken guard? One guard disabled at a time, a soak on each.

    python -m tests.simulation.mutants --minutes 15            # every mutant
    python -m tests.simulation.mutants --only tombstone-filter

Each mutant is this checkout copied to a temporary folder (the files git tracks, as
they are in the working tree) with one guard taken out, and `python -m
tests.simulation.soak` run there in a process of its own, until a law breaks or the
budget ends. A mutant the soak does not find within its budget is a hole in the laws.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# name -> (file, text, the text that replaces it): one guard each
MUTANTS = {
    # bronze keeps an erased subject's new events out
    "tombstone-filter": (
        "macros/privacy/ledger/tombstones/not_tombstoned.sql",
        "    not exists (\n        select 1 from {{ ref('privacy_erasure_tombstones') }}",
        "    true or not exists (\n        select 1 from {{ ref('privacy_erasure_tombstones') }}",
    ),
    # a file is recorded ingested only when bronze read every row of it
    "ledger-content-check": (
        "macros/landing/batch/record_landing_files.sql",
        "case when batch.file_issue is null and files_read.rows_read is not null",
        "case when true or batch.file_issue is null and files_read.rows_read is not null",
    ),
    # restore_version erases every tombstoned subject again after its RESTORE
    "re-erasure-after-restore": (
        "macros/privacy/restore/restore_version.sql",
        "{%- do gdpr_lakehouse._reapply_write(ctx, item) -%}",
        "{#- mutant: no re-erasure -#}",
    ),
    # the purge rewrites the landing zone without the erased subjects' events
    "purge-landing-rewrite": (
        "python_jobs/purge.py",
        "    changed = pc.sum(hit).as_py() or 0\n",
        "    changed = 0\n",
    ),
}


def copy_checkout(folder: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / name.decode()
        if source.is_file():
            target = folder / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def mutate(folder: Path, name: str) -> None:
    file, text, replacement = MUTANTS[name]
    path = folder / file
    source = path.read_text()
    if source.count(text) != 1:
        raise SystemExit(f"mutant {name}: {file} no longer holds its guard once; update MUTANTS")
    path.write_text(source.replace(text, replacement))


def run(name: str, minutes: float, seed: int, steps: int) -> str:
    with tempfile.TemporaryDirectory(prefix=f"gdpr_mutant_{name}_") as tmp:
        folder = Path(tmp)
        copy_checkout(folder)
        mutate(folder, name)
        began = time.monotonic()
        report = folder / "report.txt"
        command = [
            sys.executable, "-m", "tests.simulation.soak", "--seed", str(seed),
            "--steps", str(steps), "--minutes", str(minutes), "--no-shrink",
            "--stop-at-first", "--report", str(report),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(folder)}
        with open(folder / "soak.log", "w") as log:
            code = subprocess.call(
                command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        spent = (time.monotonic() - began) / 60
        lines = report.read_text().splitlines() if report.exists() else []
        found = [line for line in lines if "BROKEN" in line]
        if code == 1 and found:
            return f"{name}: found in {spent:.1f} min: {found[0][:300]}"
        return f"{name}: NOT found in {spent:.1f} min (exit {code}): {lines[:1]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.simulation.mutants", description=__doc__)
    parser.add_argument("--minutes", type=float, default=15.0, help="each mutant's soak budget")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--only", choices=sorted(MUTANTS), action="append")
    args = parser.parse_args(argv)
    missed = 0
    for name in args.only or list(MUTANTS):
        line = run(name, args.minutes, args.seed, args.steps)
        missed += "NOT found" in line
        print(line, flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
