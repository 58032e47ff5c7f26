"""REORG TABLE ... APPLY (PURGE) in a Spark application of its own, whose executors are
its driver's JVM, for a lakehouse whose jobs run on a Spark cluster.

Open-source Delta (4.0.1 through 4.4.0) cannot run REORG PURGE on a cluster: its file
filter (ReorgTableHelper.filterParquetFilesOnExecutors, delta-io/delta#5697) asks for
the active SparkSession inside an executor task, and an executor of a cluster has none
("No active or default Spark session found"). A `local[2]` application on the same
storage and metastore has its executors in the driver, so REORG works there and
rewrites only the files that carry deletion vectors. python_jobs.purge starts it when
its own session is on a cluster, and it runs the macro purge_deletion_vectors, the
project's one REORG (its clustering detour included); Delta's optimistic concurrency
makes it safe beside the cluster's writers.

    python -m python_jobs.reorg --tag '<userMetadata JSON>' bronze.users [silver.orders ...]

Prints one JSON line per table: {"table", "rewritten", "version"}.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

from python_jobs.project import ProjectError, prog, run_job

# schema.table as the purge job names a relation (backquoted or not)
TABLE = re.compile(r"^`?([A-Za-z0-9_]{1,128})`?\.`?([A-Za-z0-9_]{1,128})`?$")
MASTER = "local[2]"


def quoted(table: str) -> str:
    match = TABLE.match(table)
    if not match:
        raise ProjectError(
            f"reorg: {table[:80]!r} is not a table name; give schema.table (letters, digits, _)"
        )
    return f"`{match.group(1)}`.`{match.group(2)}`"


def reorg_in_local_app(tables: list[str], tag: str, timeout: float = 1800) -> dict[str, int]:
    """REORG PURGE each table in a local application; {table: files rewritten}."""
    if not tables:
        return {}
    env = dict(os.environ, LAKEHOUSE_SPARK_MASTER=MASTER)
    command = [sys.executable, "-m", "python_jobs.reorg", "--tag", tag, *map(quoted, tables)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            results[row["table"]] = int(row["rewritten"])
    absent = [table for table in map(quoted, tables) if table not in results]
    if done.returncode != 0 or absent:
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1][:400]
        raise ProjectError(
            f"REORG PURGE in a local application failed for {', '.join(absent) or 'a table'} "
            f"(exit {done.returncode}): {detail}"
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.reorg"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tag", required=True, help="the commits' userMetadata (JSON)")
    parser.add_argument("tables", nargs="+", help="schema.table")
    args = parser.parse_args(argv)
    try:
        json.loads(args.tag)
    except ValueError as error:
        raise ProjectError(f"reorg: --tag must be JSON ({error})") from error
    tables = [quoted(table) for table in args.tables]
    from python_jobs.macros import OperationError, on_session
    from python_jobs.spark import get_spark

    spark = get_spark("gdpr_lakehouse.reorg")
    master = spark.conf.get("spark.master", "")
    if not master.startswith("local"):
        raise ProjectError(f"reorg: must run on local executors, not {master}")
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", args.tag)
    macros = on_session(spark)
    for table in tables:
        try:
            rewritten = int(macros.purge_deletion_vectors(table))
        except OperationError as error:
            raise ProjectError(f"reorg: {table}: {error}") from None
        version = int(spark.sql(f"describe history {table} limit 1").first()["version"])
        print(json.dumps({"table": table, "rewritten": rewritten, "version": version}), flush=True)
    return 0


if __name__ == "__main__":
    run_job(main, "reorg")
