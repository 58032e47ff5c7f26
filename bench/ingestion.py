"""Ingestion benchmark: the cost of one new batch as landing history grows, and rows/s.

    python bench/ingestion.py                             # 1, 10 and 50 batches landed
    python bench/ingestion.py --landed 1,10,50 --patients 200 --scale-patients 100000

Same JVM, same run, in-process dbt. For each k in --landed (ascending): batches up to
k are landed and bronze catches up (`dbt run --select +bronze`, not timed), then batch
k + 1 lands and the same command is timed: wall seconds and JVM core-seconds, the
ratio to the first k, and how many landing files the build read (bronze.landing_batch)
of all landed. Then, in a fresh lakehouse, one batch of --scale-patients
patients (about 10 landing events per patient) is landed and the first bronze build
timed: landing events per second.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-ingestion, apart from `make run`'s data.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import Clock, bench_state, dbt_invoker

BUILD = ("run", "--select", "+bronze")


def _land(landing: Path, patients: int, batch: int) -> None:
    from demo import generate

    args = ["--landing", str(landing), "--patients", str(patients), "--batch", str(batch)]
    generate.main(args)


def _events(spark, landing: Path) -> int:
    return sum(
        spark.read.parquet(str(folder)).count() for folder in landing.iterdir() if folder.is_dir()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python bench/ingestion.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--landed", default="1,10,50", help="batches already landed (default 1,10,50)"
    )
    parser.add_argument(
        "--patients", type=int, default=200, help="patients of batch 1 (default 200)"
    )
    parser.add_argument(
        "--scale-patients",
        type=int,
        default=100_000,
        help="patients of the throughput batch, ~10 events each; 0 skips it (default 100000)",
    )
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    try:
        landed = sorted({int(k) for k in args.landed.split(",")})
    except ValueError:
        parser.error(f"--landed must be whole numbers separated by commas, got {args.landed!r}")
    if not landed or landed[0] < 1 or args.patients < 1 or args.scale_patients < 0:
        parser.error("--landed values and --patients must be >= 1, --scale-patients >= 0")

    state = bench_state("bench-ingestion")
    shutil.rmtree(state, ignore_errors=True)
    from python_jobs.spark import get_spark

    spark = get_spark("bench-ingestion")
    dbt = dbt_invoker(state)
    landing = state / "landing"

    rows, count = [], 0
    for k in landed:
        while count < k:
            count += 1
            _land(landing, args.patients, count)
        dbt(*BUILD)  # catch up, not timed
        count += 1
        _land(landing, args.patients, count)
        with Clock(spark) as clock:
            dbt(*BUILD)
        # what the build read: this build's batch of files, out of all landed
        files = spark.sql("select count(*) from bronze.landing_batch").first()[0]
        landed_files = sum(1 for _ in landing.glob("*/*.parquet"))
        rows.append(
            {
                "landed": k,
                "wall_s": round(clock.wall, 1),
                "core_s": round(clock.cpu, 1),
                "files_read": files,
                "files_landed": landed_files,
            }
        )
        print(
            f"  {k:>3} batch(es) landed, batch {count} built: {clock.wall:6.1f} s wall  "
            f"{clock.cpu:6.1f} core-s  read {files} of {landed_files} landing files"
        )
    first = rows[0]
    print("\nOne new batch, `dbt run --select +bronze`, by batches already landed:")
    print("  landed  wall s  core-s  x first (wall)  files read / landed")
    for row in rows:
        ratio = row["wall_s"] / first["wall_s"] if first["wall_s"] else 0.0
        row["ratio"] = round(ratio, 2)
        print(
            f"  {row['landed']:>6}  {row['wall_s']:>6}  {row['core_s']:>6}  {ratio:>14.2f}"
            f"  {row['files_read']:>5} / {row['files_landed']}"
        )

    report = {"patients": args.patients, "incremental": rows}
    if args.scale_patients:
        shutil.rmtree(landing)
        for schema in ("bronze", "privacy"):
            spark.sql(f"drop schema if exists {schema} cascade")
        _land(landing, args.scale_patients, 1)
        events = _events(spark, landing)
        with Clock(spark) as clock:
            dbt(*BUILD)
        rate = events / clock.wall
        report["throughput"] = {
            "patients": args.scale_patients,
            "events": events,
            "wall_s": round(clock.wall, 1),
            "core_s": round(clock.cpu, 1),
            "events_per_s": round(rate),
        }
        print(
            f"\nFirst build of {events:,} landing events ({args.scale_patients:,} patients): "
            f"{clock.wall:.1f} s wall, {clock.cpu:.1f} core-s, {rate:,.0f} events/s"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
