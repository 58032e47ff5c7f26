"""Erasure at scale: the 65M-customer workload of shared reference 003, strategies side by side.

    make bench                                        # 6.5M customers, 3 runs each (~13 min)
    python bench/run.py --rows 65000000 --runs 1      # the document's size
    python bench/run.py --rows 650000 --runs 1 --sizes 1 100   # a quick look

The workload (bench/generate_customers.py): `gdpr.customers`, TPC-DS customer schema, and
`gdpr.customer_delete_keys`, 10% of the customer ids, spread over every file. Step 1 of
the document, CONVERT TO DELTA of the Parquet table, is timed too. Then, same data, same
JVM, every case on a fresh SHALLOW CLONE (metadata only) of its layout:

  bulk: erase the 10% (the document's experiment), deletion vectors on and off for each:
    document DELETE   DELETE ... WHERE EXISTS (subquery), as the document ran it
    MERGE, bcast off  a plain MERGE ... WHEN MATCHED THEN DELETE, broadcast joins off
    MERGE, bcast on   the same with the document's autoBroadcastJoinThreshold of 100 MB
    gdpr_erase        the MERGE gdpr_erase runs, compiled from its macro by dbt, on the
                      table as loaded, after OPTIMIZE ZORDER BY c_customer_id, and
                      after liquid clustering (CLUSTER BY c_customer_id + OPTIMIZE)
    + REORG TABLE ... APPLY (PURGE) after each deletion-vector run: the physical erasure,
      as python_jobs.purge does it (purge.reorg_purge), checked in the files themselves:
      no deletion vector left, exactly the surviving rows in the Parquet files.
  requests: 1, 100, 10,000 keys (--sizes), gdpr_erase and DELETE ... IN (literal keys)
    on each layout, deletion vectors on.

Each case runs --runs times (the broadcast-off baseline, 4x slower, once); the median
is reported. Every run checks Delta's own
operation metrics (rows deleted == the rows those keys hold, counted beforehand), so a
fast wrong run fails. The ceiling, measured in the same run: this machine's scan rate
(key column, all columns) and rewrite rate (read + write every column) on the same
table, in rows per core-second. Core-seconds are the Spark JVM's CPU time (/proc).

Prints a table; writes bench_<rows>.json and bench_<rows>.png to --out (default
<LAKEHOUSE_DIR or .lakehouse>/bench-customers/reports).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow.parquet as pq

from bench._common import Clock, bench_state, dbt_invoker
from python_jobs.delta_files import read_snapshot
from python_jobs.purge import reorg_purge

# shared reference 003: 65M rows, 3 workers x 12 cores; DELETE after Z-ordering 7 s
# find + 50 s write. Its best, per core, scaled linearly to other sizes.
DOCUMENT_ROWS = 65_000_000
DOCUMENT_BEST_CORE_S = 57 * 36
DOCUMENT_CASES = {  # (find s, write s) as the document reports them, x 36 cores
    "plain DELETE": (32, 156),
    "broadcast 100 MB": (8, 96),
    "Z-ordered": (7, 50),
}
TARGET_LOGICAL_CORE_S = 200  # at 65M: 10x the document per core
TARGET_PURGED_CORE_S = 600
TARGET_TABLE = "gdpr.erase_target"
LAYOUTS = {  # layout: the table each case clones
    "as loaded": "gdpr.customers",
    "Z-ordered": "gdpr.customers_zorder",
    "liquid": "gdpr.customers_liquid",
}
KEYS_TABLE = "gdpr.erase_keys"


def bench_spark():
    """The project's Spark settings (dbt's local target), sized for this workload."""
    os.environ.setdefault("LAKEHOUSE_DRIVER_MEMORY", "12g")
    os.environ.setdefault("LAKEHOUSE_SHUFFLE_PARTITIONS", "8")
    from python_jobs.spark import get_spark

    spark = get_spark("gdpr_lakehouse.bench")
    # OPTIMIZE's file size: 1 GB by default would leave a 3 GB table in 3 files
    spark.conf.set("spark.databricks.delta.optimize.maxFileSize", str(64 * 1024 * 1024))
    return spark


def gdpr_erase_sql(state: Path) -> str:
    """The MERGE gdpr_erase runs for a relation, rendered from its macro by dbt."""
    dbt = dbt_invoker(state)
    step = f"{{'relation': '{TARGET_TABLE}', 'key': 'c_customer_id', 'action': 'delete', 'pii_columns': []}}"
    keys = f"select c_customer_id as erase_key from {KEYS_TABLE}"
    result = dbt(
        "compile",
        "--no-populate-cache",
        "--inline",
        f'{{{{ gdpr_lakehouse._erase_merge_sql({step}, "{keys}") }}}}',
    )
    return result.result.results[0].node.compiled_code.strip()


def plain_merge_sql() -> str:
    return (
        f"merge into {TARGET_TABLE} as t using (select distinct c_customer_id from {KEYS_TABLE}) as k "
        "on t.c_customer_id = k.c_customer_id when matched then delete"
    )


def document_delete_sql() -> str:
    return (
        f"delete from {TARGET_TABLE} as t1 where exists "
        f"(select c_customer_id from {KEYS_TABLE} where t1.c_customer_id = c_customer_id)"
    )


class Bench:
    def __init__(self, spark, rows: int, runs: int) -> None:
        self.spark, self.rows, self.runs = spark, rows, runs
        self.results: list[dict] = []

    def sql(self, statement: str):
        return self.spark.sql(statement).collect()

    def timed(self, statement: str) -> tuple[Clock, list]:
        with Clock(self.spark) as clock:
            result = self.sql(statement)
        return clock, result

    def record(self, group: str, case: str, clock: Clock, **extra) -> dict:
        entry = {
            "group": group,
            "case": case,
            "rows": self.rows,
            "wall_s": round(clock.wall, 2),
            "core_s": round(clock.cpu, 2),
            "rows_per_core_s": round(self.rows / clock.cpu) if clock.cpu else None,
            **extra,
        }
        self.results.append(entry)
        return entry

    def fresh_clone(self, layout: str, deletion_vectors: bool) -> None:
        self.sql(f"drop table if exists {TARGET_TABLE}")
        self.sql(
            f"create table {TARGET_TABLE} shallow clone {layout} tblproperties "
            f"('delta.enableDeletionVectors' = '{str(deletion_vectors).lower()}')"
        )

    def keys(self, table: str) -> None:
        self.sql(f"drop table if exists {KEYS_TABLE}")
        self.sql(f"create table {KEYS_TABLE} using delta as select * from {table}")

    def erase(
        self, group, case, layout, dv, statement, expected, *, conf=None, purge=False, runs=None
    ):
        """Median of --runs runs of one erasure statement on fresh clones of a layout; checked."""
        runs_wanted, runs, purges = runs or self.runs, [], []
        for _ in range(runs_wanted):
            self.fresh_clone(LAYOUTS[layout], dv)
            old = {key: self.spark.conf.get(key) for key in conf or {}}
            for key, value in (conf or {}).items():
                self.spark.conf.set(key, value)
            try:
                clock, _ = self.timed(statement)
            finally:
                for key, value in old.items():
                    self.spark.conf.set(key, value)
            metrics = self.last_metrics()
            deleted = int(metrics.get("numTargetRowsDeleted", metrics.get("numDeletedRows", -1)))
            if deleted != expected:
                raise SystemExit(
                    f"{case} ({layout}): Delta says {deleted} rows deleted, expected {expected}"
                )
            runs.append((clock, metrics))
            if purge:
                with Clock(self.spark) as purge_clock:
                    rewritten = reorg_purge(self.spark, TARGET_TABLE)
                self.check_purged(case, layout, expected, rewritten)
                purges.append(purge_clock)
        clock, metrics = sorted(runs, key=lambda run: run[0].cpu)[len(runs) // 2]
        entry = self.record(
            group,
            case,
            clock,
            layout=layout,
            deletion_vectors=dv,
            keys_rows=expected,
            runs_core_s=[round(run[0].cpu, 2) for run in runs],
            find_s=_seconds(metrics, "scanTimeMs"),
            write_s=_seconds(metrics, "rewriteTimeMs"),
            files_removed=int(
                metrics.get("numTargetFilesRemoved", metrics.get("numRemovedFiles", 0))
            ),
            deletion_vectors_added=int(
                metrics.get(
                    "numTargetDeletionVectorsAdded", metrics.get("numDeletionVectorsAdded", 0)
                )
            ),
        )
        if purges:
            middle = sorted(purges, key=lambda c: c.cpu)[len(purges) // 2]
            entry.update(purge_wall_s=round(middle.wall, 2), purge_core_s=round(middle.cpu, 2))
        print(_line(entry), flush=True)
        return entry

    def check_purged(self, case: str, layout: str, expected: int, rewritten: int) -> None:
        """After the physical erasure: no live file keeps a deletion vector, and the
        files hold exactly the rows that should remain (read without Delta's DVs)."""
        location = self.sql(f"describe detail {TARGET_TABLE}")[0]["location"]
        snapshot = read_snapshot(Path(location.removeprefix("file:")))
        marked = sum(1 for vector in snapshot.files.values() if vector)
        physical = sum(pq.ParquetFile(path).metadata.num_rows for path in snapshot.files)
        if marked or physical != self.rows - expected or not rewritten:
            raise SystemExit(
                f"{case} ({layout}): after REORG PURGE {marked} file(s) still carry deletion "
                f"vectors and the files hold {physical:,} rows ({self.rows - expected:,} expected)"
            )

    def last_metrics(self) -> dict:
        row = self.sql(f"describe history {TARGET_TABLE} limit 1")[0]
        return dict(row["operationMetrics"] or {})


def _seconds(metrics: dict, name: str) -> float | None:
    """A phase's seconds from Delta's metrics; None when Delta did not time the phases
    (a DELETE that writes deletion vectors reports scanTimeMs = rewriteTimeMs = 0)."""
    if not any(int(metrics.get(phase, 0)) for phase in ("scanTimeMs", "rewriteTimeMs")):
        return None
    return round(int(metrics[name]) / 1000, 2) if name in metrics else None


def _line(entry: dict) -> str:
    purge = f", REORG PURGE {entry['purge_core_s']:.1f} core-s" if "purge_core_s" in entry else ""
    return (
        f"  {entry['case']:<26} {entry.get('layout', ''):<10} dv={'on ' if entry.get('deletion_vectors') else 'off'} "
        f"{entry['wall_s']:7.1f} s {entry['core_s']:7.1f} core-s{purge}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=6_500_000, help="customers (default 6.5M)")
    parser.add_argument("--runs", type=int, default=3, help="runs per case, median reported")
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=[1, 100, 10_000], help="request sizes"
    )
    parser.add_argument("--out", type=Path, help="folder for the JSON and PNG")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--replot",
        type=Path,
        metavar="JSON",
        help="print the table and redraw the chart of a past run",
    )
    args = parser.parse_args(argv)
    if args.replot:
        if not args.replot.is_file():
            parser.error(f"--replot: no such file {args.replot}")
        report = json.loads(args.replot.read_text())
        _print_report(report)
        print(
            f"\nwrote {_chart(report, (args.out or args.replot.parent) / args.replot.with_suffix('.png').name)}"
        )
        return 0
    if not 1_000 <= args.rows <= 2_000_000_000:
        parser.error(f"--rows must be between 1,000 and 2,000,000,000 (got {args.rows})")
    if not 1 <= args.runs <= 9:
        parser.error(f"--runs must be between 1 and 9 (got {args.runs})")
    if any(not 1 <= size <= args.rows // 10 for size in args.sizes):
        parser.error(f"--sizes must be between 1 and --rows / 10 ({args.rows // 10})")

    state = bench_state("bench-customers")
    out = (args.out or state / "reports").resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    merge_sql = gdpr_erase_sql(state)  # dbt renders the macro before Spark starts

    from bench.generate_customers import generate

    spark = bench_spark()
    bench = Bench(spark, args.rows, args.runs)
    print(
        f"customers: {args.rows:,} rows; {os.cpu_count()} cores; {args.runs} run(s) per case",
        flush=True,
    )
    made = generate(spark, state, args.rows, args.seed)

    # step 1 of the document: CONVERT TO DELTA, in place, on a copy of the Parquet files
    converted = state / "work" / "converted"
    for table in ("gdpr.customers", "gdpr.customers_zorder", "gdpr.customers_liquid", TARGET_TABLE):
        bench.sql(f"drop table if exists {table}")
    shutil.rmtree(state / "work", ignore_errors=True)
    shutil.copytree(state / "source" / "customers", converted)
    clock, _ = bench.timed(f"convert to delta parquet.`{converted}`")
    bench.record("prepare", "CONVERT TO DELTA", clock)
    bench.sql(f"create table gdpr.customers using delta location '{converted}'")

    # the ceiling: scan and rewrite rates of this machine on this table
    clock, _ = bench.timed("select sum(xxhash64(c_customer_id)) from gdpr.customers")
    bench.record("ceiling", "scan key column", clock)
    clock, _ = bench.timed("select sum(xxhash64(*)) from gdpr.customers")
    bench.record("ceiling", "scan all columns", clock)
    clock, _ = bench.timed(
        "create or replace table gdpr.ceiling_copy using delta as select * from gdpr.customers"
    )
    ceiling = bench.record("ceiling", "rewrite all columns", clock)
    bench.sql("drop table gdpr.ceiling_copy")

    # layouts: as loaded (arrival order), Z-ordered, liquid-clustered
    with Clock(spark) as clock:
        bench.sql("create table gdpr.customers_zorder using delta as select * from gdpr.customers")
        bench.sql("optimize gdpr.customers_zorder zorder by (c_customer_id)")
    bench.record("prepare", "copy + OPTIMIZE ZORDER BY", clock)
    with Clock(spark) as clock:
        bench.sql(
            "create table gdpr.customers_liquid using delta cluster by (c_customer_id) "
            "as select * from gdpr.customers"
        )
        bench.sql("optimize gdpr.customers_liquid")
    bench.record("prepare", "copy + liquid clustering", clock)
    for entry in bench.results:
        print(
            f"  {entry['case']:<28} {entry['wall_s']:7.1f} s {entry['core_s']:7.1f} core-s",
            flush=True,
        )
    files = {
        name: bench.sql(f"describe detail {table}")[0]["numFiles"]
        for name, table in LAYOUTS.items()
    }

    # warm the JVM (JIT, class loading) on a throwaway erasure so the first case is fair
    bench.keys("gdpr.customer_delete_keys")
    bench.fresh_clone("gdpr.customers", True)
    bench.sql(merge_sql)

    expected = bench.sql(
        "select count(*) from gdpr.customers where c_customer_id in (select c_customer_id from gdpr.customer_delete_keys)"
    )[0][0]
    print(f"\nbulk: erase {expected:,} customers (10%)", flush=True)
    try:
        bench.fresh_clone("gdpr.customers", True)
        bench.sql(document_delete_sql())
        document_delete = "ran"
    except Exception as error:  # the open-source Delta answer, reported as it is
        document_delete = str(error).strip().splitlines()[0][:200]
        print(
            f"  document DELETE ... WHERE EXISTS: not supported here: {document_delete}", flush=True
        )
    bulk = []
    for dv in (True, False):
        bulk.append(
            bench.erase(
                "bulk",
                "MERGE, bcast off",
                "as loaded",
                dv,
                plain_merge_sql(),
                expected,
                conf={"spark.sql.autoBroadcastJoinThreshold": "-1"},
                purge=dv,
                runs=1,  # 4x the others: one run says enough, and keeps make bench short
            )
        )
        bulk.append(
            bench.erase(
                "bulk",
                "MERGE, bcast on (100 MB)",
                "as loaded",
                dv,
                plain_merge_sql(),
                expected,
                conf={"spark.sql.autoBroadcastJoinThreshold": str(100 * 1024 * 1024)},
                purge=dv,
            )
        )
        for layout in LAYOUTS:
            bulk.append(
                bench.erase("bulk", "gdpr_erase", layout, dv, merge_sql, expected, purge=dv)
            )

    for size in args.sizes:
        stride = max(1, (args.rows // 10) // size)
        bench.sql(
            "create or replace temp view request_keys as select * from gdpr.customer_delete_keys "
            f"where ((c_customer_sk - 3) div 10) % {stride} = 0 order by c_customer_sk limit {size}"
        )
        bench.keys("request_keys")
        keys = [row[0] for row in bench.sql(f"select c_customer_id from {KEYS_TABLE}")]
        rows = bench.sql(
            f"select count(*) from gdpr.customers where c_customer_id in (select c_customer_id from {KEYS_TABLE})"
        )[0][0]
        literal = ", ".join(f"'{key}'" for key in keys)  # generated codes: letters only
        in_list = f"delete from {TARGET_TABLE} where c_customer_id in ({literal})"
        print(f"\nrequest of {size:,} key(s) ({rows} rows)", flush=True)
        for layout in LAYOUTS:
            bench.erase(f"request {size}", "gdpr_erase", layout, True, merge_sql, rows)
            bench.erase(f"request {size}", "DELETE ... IN (keys)", layout, True, in_list, rows)

    report = {
        "rows": args.rows,
        "runs": args.runs,
        "generated": made,
        "files": files,
        "machine": _machine(),
        "document_delete": document_delete,
        "ceiling_rows_per_core_s": ceiling["rows_per_core_s"],
        "ran_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started),
        "results": bench.results,
    }
    _print_report(report)
    json_path = out / f"bench_{args.rows}.json"
    json_path.write_text(json.dumps(report, indent=2))
    png_path = _chart(report, out / f"bench_{args.rows}.png")
    print(f"\nwrote {json_path} and {png_path} ({report['seconds']} s in all)")
    return 0


def _machine() -> dict:
    memory = next(
        (
            int(line.split()[1]) // 1024 // 1024
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        None,
    )
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "cpu": cpu,
        "python": platform.python_version(),
    }


def _document_core_s(rows: int) -> float:
    return DOCUMENT_BEST_CORE_S * rows / DOCUMENT_ROWS


def _print_report(report: dict) -> None:
    rows, ceiling = report["rows"], report["ceiling_rows_per_core_s"]
    machine = report["machine"]
    print(
        f"\n{rows:,} customers, {machine['cores']} cores ({machine['cpu']}), {machine['memory_gib']} GiB, "
        f"median of {report['runs']} run(s); document's best scaled to this size: "
        f"{_document_core_s(rows):,.0f} core-s"
    )
    header = (
        f"{'group':<13} {'strategy':<26} {'layout':<10} {'DV':<3} {'seconds':>8} {'core-s':>8} "
        f"{'rows/s/core':>12} {'vs doc':>7} {'vs ceil':>7} {'find s':>7} {'write s':>7} {'+PURGE core-s':>13}"
    )
    print(header)
    for r in report["results"]:
        versus_doc = (
            _document_core_s(rows) / r["core_s"] if r["group"] == "bulk" and r["core_s"] else None
        )
        print(
            f"{r['group']:<13} {r['case']:<26} {r.get('layout', ''):<10} "
            f"{('on' if r.get('deletion_vectors') else 'off') if 'deletion_vectors' in r else '':<3} "
            f"{r['wall_s']:>8.1f} {r['core_s']:>8.1f} {r['rows_per_core_s'] or 0:>12,} "
            f"{format(versus_doc, '.1f') + 'x' if versus_doc else '':>7} "
            f"{ceiling / r['rows_per_core_s']:>6.2f}x "
            f"{_opt(r.get('find_s')):>7} {_opt(r.get('write_s')):>7} {_opt(r.get('purge_core_s')):>13}"
        )
    print(f"document DELETE ... WHERE EXISTS: {report['document_delete']}")
    scale = rows / DOCUMENT_ROWS
    for r in report["results"]:
        if (
            r["case"] == "gdpr_erase"
            and r.get("layout") == "as loaded"
            and r["group"] == "bulk"
            and r["deletion_vectors"]
        ):
            logical, purged = r["core_s"], r["core_s"] + r.get("purge_core_s", 0)
            for label, value, target in (
                ("logical erasure", logical, TARGET_LOGICAL_CORE_S * scale),
                ("with REORG PURGE", purged, TARGET_PURGED_CORE_S * scale),
            ):
                verdict = "met" if value <= target else "MISSED"
                scaled = (
                    "" if rows == DOCUMENT_ROWS else f" (the 65M target scaled to {rows:,} rows)"
                )
                print(f"target, {label}: {value:.1f} core-s <= {target:.1f}{scaled}: {verdict}")


def _opt(value) -> str:
    return "" if value is None else f"{value:.1f}"


def _chart(report: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    bulk = [r for r in report["results"] if r["group"] == "bulk"]
    requests = [r for r in report["results"] if r["group"].startswith("request")]
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [3, 2]}
    )
    labels = [
        f"{r['case']}, {r['layout'].replace('gdpr.', '')}, DV {'on' if r['deletion_vectors'] else 'off'}"
        for r in bulk
    ]
    logical = [r["core_s"] for r in bulk]
    purge = [r.get("purge_core_s", 0) for r in bulk]
    positions = range(len(bulk))
    left.barh(positions, logical, color="#2b6cb0", label="erasure (logical)")
    left.barh(positions, purge, left=logical, color="#90cdf4", label="+ REORG PURGE (physical)")
    left.axvline(
        _document_core_s(rows), color="#c53030", linestyle="--", label="document's best, per core"
    )
    left.axvline(
        TARGET_LOGICAL_CORE_S * rows / DOCUMENT_ROWS,
        color="#2f855a",
        linestyle=":",
        label="target (logical)",
    )
    left.axvline(
        TARGET_PURGED_CORE_S * rows / DOCUMENT_ROWS,
        color="#2f855a",
        linestyle="--",
        label="target (with REORG PURGE)",
    )
    ceiling = next(r for r in report["results"] if r["case"] == "rewrite all columns")
    left.axvline(
        ceiling["core_s"], color="#718096", linestyle="-.", label="ceiling: rewrite the table"
    )
    left.set_yticks(list(positions), labels, fontsize=8)
    left.invert_yaxis()
    left.set_xlabel("core-seconds (lower is better)")
    left.set_title(f"Erase 10% of {rows:,} customers")
    left.legend(fontsize=8, loc="lower right")
    sizes = sorted({int(r["group"].split()[1]) for r in requests})
    cases = sorted({(r["case"], r["layout"]) for r in requests})
    width = 0.8 / max(1, len(cases))
    for index, case in enumerate(cases):
        values = [
            next(
                (
                    r["core_s"]
                    for r in requests
                    if (r["case"], r["layout"]) == case and r["group"] == f"request {s}"
                ),
                0,
            )
            for s in sizes
        ]
        right.bar(
            [i + index * width for i in range(len(sizes))], values, width, label=", ".join(case)
        )
    right.set_xticks(
        [i + 0.4 - width / 2 for i in range(len(sizes))], [f"{s:,} key(s)" for s in sizes]
    )
    right.set_ylabel("core-seconds")
    right.set_title("Realistic requests (deletion vectors on)")
    right.legend(fontsize=7)
    machine = report["machine"]
    figure.suptitle(
        f"gdpr_lakehouse erasure benchmark: {machine['cores']} cores, {machine['memory_gib']} GiB, "
        f"median of {report['runs']} run(s), {report['ran_at'][:10]}",
        fontsize=11,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


if __name__ == "__main__":
    sys.exit(main())
