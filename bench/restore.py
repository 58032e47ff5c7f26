"""Restore benchmark: Delta RESTORE alone vs restore_version (RESTORE + re-erasure).

    python bench/restore.py                          # 1M and 10M rows; 10 and 100 versions
    python bench/restore.py --sizes 1000000 --versions 10

Same JVM, same run. Once: a small lakehouse is built and a few patients are erased
with gdpr_erase (their tombstones are what re-erasure applies). Then per size N:
bronze.patients is set to N rows that still hold the erased patients (the state a
restore to before the erasure brings back: version A), the patients are deleted
again (version B), and
  1. RESTORE      `RESTORE TABLE bronze.patients TO VERSION AS OF A`, timed alone,
                  then back to B (Delta only: the erased rows are back in between);
                  three rounds, the median printed;
  2. restore_version  `dbt run-operation restore_version {model: bronze_patients,
                  version: A}` in process: RESTORE, one MERGE re-erasing every
                  tombstoned subject over the N rows, evidence and restore log.
                  Checked: the erased patients are at 0 rows and N - erased remain.
Then on the last table, RESTORE across V extra versions (small appends) for each --versions.
Wall seconds and JVM core-seconds are printed side by side.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-restore, apart from `make run`'s data.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import Clock, bench_state, dbt_invoker

ERASED = 5
ROWS_PER_FILE = 250_000


def _latest(spark, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def _synthetic_insert(spark, rows: int) -> str:
    """INSERT of `rows` synthetic patients shaped like bronze.patients (random ciphertext)."""
    fields = spark.table("bronze.patients").schema.fieldNames()
    expressions = []
    for name in fields:
        if name == "patient_pseudonym":
            expressions.append(f"sha2(concat('synthetic', cast(id as string)), 256) as {name}")
        elif name.endswith("_enc"):
            expressions.append(f"unhex(sha2(concat('{name}', cast(id as string)), 256)) as {name}")
        else:
            expressions.append(f"template.{name}")
    files = max(1, rows // ROWS_PER_FILE)
    return (
        f"insert into bronze.patients select /*+ REPARTITION({files}) */ {', '.join(expressions)} "
        f"from range({rows}) cross join (select * from bench_erased_rows limit 1) as template"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--versions", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--patients", type=int, default=200)
    parser.add_argument(
        "--rebuild", action="store_true", help="regenerate and rebuild the bench lakehouse"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    state = bench_state("bench-restore")
    if args.rebuild and state.exists():
        import shutil

        shutil.rmtree(state)

    from demo import generate
    from python_jobs.spark import get_spark

    spark = get_spark("gdpr_lakehouse.bench_restore")
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    dbt = dbt_invoker(state)
    if not spark.catalog.tableExists("privacy.restore_log"):
        print(f"building the bench lakehouse: {args.patients} patients ...", flush=True)
        generate.main(["--patients", str(args.patients), "--landing", str(state / "landing")])
        dbt("build", "--exclude", "resource_type:test")
    dbt("parse")

    if not spark.catalog.tableExists("bench_erased_rows"):
        base = _latest(spark, "bronze.patients")
        chosen = spark.sql(
            "select k.subject_id, k.subject_pseudonym from bronze.patients b "
            "join privacy.subject_keys k on k.subject_pseudonym = b.patient_pseudonym "
            f"order by k.subject_id limit {ERASED}"
        ).collect()
        dbt(
            "run-operation",
            "gdpr_erase",
            "--args",
            json.dumps({"subject_ids": [row[0] for row in chosen]}),
        )
        # the erased patients' rows, for every size below: the version before erasure
        spark.sql(f"restore table bronze.patients to version as of {base}").collect()
        spark.sql(
            "create or replace table bench_erased_rows using delta as select * from bronze.patients "
            f"where patient_pseudonym in ({', '.join(repr(row[1]) for row in chosen)})"
        ).collect()
    erased = [
        row[0] for row in spark.sql("select patient_pseudonym from bench_erased_rows").collect()
    ]
    quoted = ", ".join(repr(p) for p in erased)

    def erased_rows() -> int:
        return spark.sql(
            f"select count(*) from bronze.patients where patient_pseudonym in ({quoted})"
        ).first()[0]

    results = []
    for size in args.sizes:
        # version A: N rows, the erased patients among them; version B: without them
        spark.sql("delete from bronze.patients").collect()
        spark.sql(_synthetic_insert(spark, size - ERASED)).collect()
        spark.sql("insert into bronze.patients select * from bench_erased_rows").collect()
        version_a = _latest(spark, "bronze.patients")
        spark.sql(f"delete from bronze.patients where patient_pseudonym in ({quoted})").collect()
        version_b = _latest(spark, "bronze.patients")
        files = spark.sql("describe detail bronze.patients").first()["numFiles"]

        # RESTORE alone: to A (the erased rows come back) and back to B, three rounds;
        # the median round counts (the first pays class loading)
        rounds = []
        for _ in range(3):
            with Clock(spark) as restore:
                spark.sql(f"restore table bronze.patients to version as of {version_a}").collect()
            if erased_rows() != ERASED:
                raise SystemExit("RESTORE did not bring the rows of version A back")
            with Clock(spark) as restore_back:
                spark.sql(f"restore table bronze.patients to version as of {version_b}").collect()
            rounds.append((restore.wall, restore.cpu, restore_back.wall))
        restore_wall, restore_cpu, back_wall = sorted(rounds)[1]

        out = io.StringIO()
        with Clock(spark) as operation, contextlib.redirect_stdout(out):
            dbt(
                "run-operation",
                "restore_version",
                "--args",
                json.dumps({"model": "bronze_patients", "version": version_a}),
                quiet=False,
            )
        if erased_rows() != 0 or spark.table("bronze.patients").count() != size - ERASED:
            raise SystemExit("restore_version did not leave exactly the rows of A minus the erased")
        line = next(
            line
            for line in out.getvalue().splitlines()
            if line.strip().startswith("bronze.patients")
        )
        results.append(
            {
                "rows": size,
                "files": files,
                "restore_wall_s": round(restore_wall, 2),
                "restore_core_s": round(restore_cpu, 2),
                "restore_back_wall_s": round(back_wall, 2),
                "restore_rounds_wall_s": [round(r[0], 2) for r in rounds],
                "restore_and_reerase_s": float(line.split()[-1]),
                "restore_version_wall_s": round(operation.wall, 2),
                "restore_version_core_s": round(operation.cpu, 2),
            }
        )
        print(
            f"  {size:,} rows: RESTORE {restore_wall:.1f} s (median of 3), restore_version {operation.wall:.1f} s",
            flush=True,
        )

    depth = []
    for extra in args.versions:
        # on the smallest table: RESTORE across `extra` newer versions
        start = _latest(spark, "bronze.patients")
        for _ in range(extra):
            spark.sql(
                "insert into bronze.patients select * from bronze.patients "
                f"where patient_id not in ({quoted}) limit 1"
            ).collect()
        with Clock(spark) as across:
            spark.sql(f"restore table bronze.patients to version as of {start}").collect()
        depth.append({"versions": extra, "restore_wall_s": round(across.wall, 2)})
        print(f"  across {extra} versions: RESTORE {across.wall:.2f} s", flush=True)

    cores = os.cpu_count()
    print(
        f"\nRestore of bronze.patients ({ERASED} erased patients in the old version), {cores} cores, one warm JVM:"
    )
    print(
        f"{'rows':>12} {'files':>6} {'RESTORE wall s':>15} {'RESTORE core-s':>15} "
        f"{'RESTORE + re-erasure s':>23} {'restore_version wall s':>23} {'core-s':>8}"
    )
    for r in results:
        print(
            f"{r['rows']:>12,} {r['files']:>6} {r['restore_wall_s']:>15.2f} {r['restore_core_s']:>15.2f} "
            f"{r['restore_and_reerase_s']:>23.1f} {r['restore_version_wall_s']:>23.1f} {r['restore_version_core_s']:>8.1f}"
        )
    print("RESTORE + re-erasure: restore_version's own figure (RESTORE commit + re-erasure MERGE);")
    print(
        "restore_version wall: the whole in-process dbt run-operation (parse, history, log, evidence)."
    )
    if depth:
        print(f"\nRESTORE of the {args.sizes[-1]:,}-row table across newer versions:")
        print(f"{'versions':>9} {'RESTORE wall s':>15}")
        for d in depth:
            print(f"{d['versions']:>9} {d['restore_wall_s']:>15.2f}")
    if args.json:
        args.json.write_text(json.dumps({"sizes": results, "versions": depth}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
