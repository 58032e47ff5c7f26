"""Erasure by pruning (issue 23): a small batch reads only the files that can hold it.

    make bench-pruning                                            # 2M rows, 200 files
    python bench/pruning.py --rows 20000000 --files 1000 --sizes 1 10 100 1000 --runs 1

One Delta table of --rows rows keyed by a SHA-256 pseudonym (two rows a subject, and
payload columns), deletion vectors on, the key's statistics cut to 4 characters as the
build keeps them, in two layouts: as loaded (arrival order: every file holds every key
range) and Z-ordered by the key as cluster_by_subject lays a relation out (its
statements, rendered from the macro: Delta's curve settings for one evenly spread key,
then OPTIMIZE ZORDER BY; the file size chosen for --files files). For each request
size (--sizes subjects, spread over the key space), on a fresh SHALLOW CLONE of each
layout, side by side in one JVM:

  MERGE, every file   gdpr_erase's MERGE as it runs without pruning (a large batch)
  MERGE, pruned       the same with the batch's 4-hex-digit pseudonym prefixes in its
                      ON clause (what gdpr_erase adds to a batch of at most var
                      erasure_pruning_max_prefixes prefixes): Delta skips every file
                      whose key range holds none of them
  DELETE, pruned      what gdpr_erase runs for such a batch where rows are deleted (not
                      anonymized): one DELETE whose keys are a script's array variable,
                      with the same prefixes (_erase_delete_sql)
  DELETE ... IN       a literal DELETE ... WHERE key IN (...), as a reference only (it
                      puts every key into the SQL text and the Delta log)

The MERGEs and the pruned DELETE are rendered from the macros by dbt, and every case runs
with Parquet's string-predicate pushdown off, as gdpr_erase runs a pruned batch. Each
run is checked (Delta's rows deleted == the rows those keys hold). Files and bytes
read: the files whose key range (their Parquet min/max, which Delta's statistics
repeat, cut to 4 characters) holds a prefix (pruned) or every file (MERGE); for
DELETE ... IN the files that can hold a key (Delta itself skips by the list's overall
range only; Parquet's statistics skip the row groups of the others). That Delta reads only
those, and not a model of it, is tested: tests/functional/test_erasure_pruning.py runs
the pruned MERGE with every other file removed from disk. Core-seconds are the Spark
JVM's CPU time (/proc); the median of --runs runs is reported. Writes
pruning_<rows>.json and .png to --out (default <LAKEHOUSE_DIR>/bench-pruning/reports);
--replot JSON redraws a past run's chart.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow.parquet as pq

from bench._common import Clock, bench_state, dbt_invoker
from python_jobs.delta_files import read_snapshot

SOURCE = {"as loaded": "pruning.subjects", "Z-ordered": "pruning.subjects_zorder"}
TARGET = "pruning.erase_target"
KEYS = "pruning.erase_keys"
PREFIX_CHARS = 4
MAX_PREFIXES = 1024  # the highest var erasure_pruning_max_prefixes allows


def pseudonym(subject: int) -> str:
    return hashlib.sha256(str(subject).encode()).hexdigest()


def batch(rows: int, size: int) -> list[str]:
    """`size` subjects spread over the table (two rows each)."""
    subjects = rows // 2
    return [pseudonym(i * subjects // size) for i in range(size)]


def render(
    state: Path, sizes: list[int], rows: int
) -> tuple[dict[tuple[int, bool], str], list[str]]:
    """Every MERGE and pruned DELETE of the bench, rendered from gdpr_erase's macros, and the statements
    that Z-order the second layout, from cluster_by_subject's (_cluster_statements:
    its session settings, the OPTIMIZE), by one dbt compile."""
    step = f"{{'relation': '{TARGET}', 'key': 'subject_pseudonym', 'action': 'delete', 'pii_columns': []}}"
    keys = f"select subject_pseudonym as erase_key from {KEYS}"
    cases, parts = [], []
    for size in sizes:
        prefixes = sorted({key[:PREFIX_CHARS] for key in batch(rows, size)})
        for pruned in (False, True):
            if pruned and len(prefixes) > MAX_PREFIXES:
                continue
            cases.append((size, pruned))
            arg = json.dumps(prefixes) if pruned else "none"
            parts.append(
                f'{{{{ gdpr_lakehouse._erase_merge_sql({step}, "{keys}", prefixes={arg}) }}}}'
            )
            if pruned:  # what gdpr_erase runs for a pruned batch of a deleting relation
                cases.append((size, "delete"))
                parts.append(
                    f'{{{{ gdpr_lakehouse._erase_delete_sql({step}, "{keys}", prefixes={arg}) }}}}'
                )
    layout = (
        f"{{'relation': '{SOURCE['Z-ordered']}', 'key': 'subject_pseudonym', 'layout': 'zorder'}}"
    )
    parts.append(f"{{{{ tojson(gdpr_lakehouse._cluster_statements({layout}, {{}})) }}}}")
    with contextlib.redirect_stdout(io.StringIO()):  # dbt prints what it compiled
        result = dbt_invoker(state)(
            "compile", "--no-populate-cache", "--inline", "\n@@\n".join(parts)
        )
    *compiled, clustering = result.result.results[0].node.compiled_code.split("\n@@\n")
    merges = {case: sql.strip() for case, sql in zip(cases, compiled, strict=True)}
    return merges, json.loads(clustering)


class Files:
    """A table's live files with their key range, from the Parquet footers."""

    def __init__(self, spark, table: str) -> None:
        location = spark.sql(f"describe detail {table}").first()["location"]
        self.ranges = []
        for path in read_snapshot(Path(location.removeprefix("file:"))).files:
            parquet = pq.ParquetFile(path)
            column = parquet.schema_arrow.get_field_index("subject_pseudonym")
            meta = parquet.metadata
            stats = [
                meta.row_group(g).column(column).statistics for g in range(meta.num_row_groups)
            ]
            self.ranges.append(
                (min(s.min for s in stats), max(s.max for s in stats), Path(path).stat().st_size)
            )

    def holding(self, needles: list[str] | None) -> tuple[int, int]:
        """(files, bytes) whose key range can hold one of the needles (prefixes or
        keys); every file for None."""
        hit = [
            size
            for low, high, size in self.ranges
            if needles is None or any(low[: len(n)] <= n <= high[: len(n)] for n in needles)
        ]
        return len(hit), sum(hit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows (default 2M)")
    parser.add_argument("--files", type=int, default=200, help="files of the Z-ordered layout")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 10, 100, 1000])
    parser.add_argument("--runs", type=int, default=3, help="runs per case, median reported")
    parser.add_argument("--out", type=Path, help="folder for the JSON report and chart")
    parser.add_argument(
        "--replot", type=Path, metavar="JSON", help="redraw the chart of a past run"
    )
    args = parser.parse_args(argv)
    if args.replot:
        if not args.replot.is_file():
            parser.error(f"--replot: no such file {args.replot}")
        report = json.loads(args.replot.read_text())
        _ratios(report["results"])
        folder = args.out or args.replot.parent
        print(f"wrote {_chart(report, folder / args.replot.with_suffix('.png').name)}")
        return 0
    if not 10_000 <= args.rows <= 2_000_000_000:
        parser.error(f"--rows must be between 10,000 and 2,000,000,000 (got {args.rows})")
    if not 2 <= args.files <= 100_000:
        parser.error(f"--files must be between 2 and 100,000 (got {args.files})")
    if not 1 <= args.runs <= 9:
        parser.error(f"--runs must be between 1 and 9 (got {args.runs})")
    if not args.sizes or any(not 1 <= size <= args.rows // 20 for size in args.sizes):
        parser.error(f"--sizes must be between 1 and --rows / 20 ({args.rows // 20})")

    state = bench_state("bench-pruning")
    out = (args.out or state / "reports").resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    statements, clustering = render(state, args.sizes, args.rows)  # before Spark starts

    from python_jobs.spark import get_spark

    spark = get_spark("gdpr_lakehouse.bench_pruning")
    # as gdpr_erase runs a pruned batch (_pruning_session), every case alike
    spark.conf.set("spark.sql.parquet.filterPushdown.stringPredicate", "false")
    sql = spark.sql
    # a fresh schema: an interrupted run may leave a table's folder without its table
    sql("drop schema if exists pruning cascade")
    shutil.rmtree(state / "warehouse" / "pruning.db", ignore_errors=True)
    sql("create schema pruning")
    payload = ", ".join(
        f"concat('{name}-', cast(id * {n + 7} % 1000003 as string)) as {name}"
        for n, name in enumerate(("full_name", "email", "address", "city", "phone", "insurer"))
    )
    layouts = []
    with Clock(spark) as clock:
        sql(
            f"create table {SOURCE['as loaded']} using delta "
            "tblproperties ('delta.enableDeletionVectors' = 'true', "
            # the key's statistics as the build keeps them (tblproperties_clause)
            "'delta.dataSkippingStatsColumns' = 'subject_pseudonym', "
            f"'delta.dataSkippingStringPrefixLength' = '{PREFIX_CHARS}') as "
            f"select /*+ REPARTITION({args.files}) */ sha2(cast(id div 2 as string), 256) "
            f"as subject_pseudonym, {payload} from range({args.rows})"
        )
    layouts.append(("copy, as loaded", clock))
    table_bytes = sql(f"describe detail {SOURCE['as loaded']}").first()["sizeInBytes"]
    spark.conf.set(
        "spark.databricks.delta.optimize.maxFileSize", str(max(1, table_bytes // args.files))
    )
    with Clock(spark) as clock:
        sql(f"create table {SOURCE['Z-ordered']} shallow clone {SOURCE['as loaded']}")
        for statement in clustering:  # as cluster_by_subject lays a relation out
            sql(statement)
    layouts.append(("OPTIMIZE ZORDER BY", clock))
    files = {layout: Files(spark, table) for layout, table in SOURCE.items()}
    print(
        f"{args.rows:,} rows, {table_bytes / 1e6:,.0f} MB; files: "
        + ", ".join(f"{layout} {len(f.ranges)}" for layout, f in files.items())
        + "; "
        + ", ".join(f"{name} {c.wall:.0f} s" for name, c in layouts),
        flush=True,
    )

    # warm the JVM on a throwaway erasure so the first case is fair
    sql(
        f"create table {KEYS} using delta as select pseudonym as subject_pseudonym from values ('0') as t(pseudonym)"
    )
    sql(f"create table {TARGET} shallow clone {SOURCE['as loaded']}")
    sql(statements[(args.sizes[0], False)])

    results = []
    for size in args.sizes:
        keys = batch(args.rows, size)
        prefixes = sorted({key[:PREFIX_CHARS] for key in keys})
        sql(f"drop table if exists {KEYS}")
        values = ", ".join(f"('{key}')" for key in keys)  # hex digests only
        sql(
            f"create table {KEYS} using delta as select * from values {values} as t(subject_pseudonym)"
        )
        expected = 2 * size
        cases = [("MERGE, every file", statements[(size, False)], None)]
        if (size, True) in statements:
            cases.append(("MERGE, pruned", statements[(size, True)], prefixes))
            cases.append(("DELETE, pruned", statements[(size, "delete")], prefixes))
        cases.append(
            (
                "DELETE ... IN",
                f"delete from {TARGET} where subject_pseudonym in ({', '.join(repr(k) for k in keys)})",
                keys,
            )
        )
        print(f"\n{size:,} subject(s), {len(prefixes):,} prefixes", flush=True)
        for layout, source in SOURCE.items():
            for case, statement, needles in cases:
                runs = []
                for _ in range(args.runs):
                    sql(f"drop table if exists {TARGET}")
                    sql(f"create table {TARGET} shallow clone {source}")
                    with Clock(spark) as clock:
                        sql(statement).collect()
                    metrics = sql(f"describe history {TARGET} limit 1").first()["operationMetrics"]
                    deleted = int(
                        metrics.get("numTargetRowsDeleted", metrics.get("numDeletedRows", -1))
                    )
                    if deleted != expected:
                        raise SystemExit(
                            f"{case} ({layout}, {size}): Delta deleted {deleted}, expected {expected}"
                        )
                    runs.append(clock)
                clock = sorted(runs, key=lambda c: c.cpu)[len(runs) // 2]
                read, read_bytes = files[layout].holding(needles)
                entry = {
                    "subjects": size,
                    "layout": layout,
                    "case": case,
                    "files": len(files[layout].ranges),
                    "files_read": read,
                    "bytes_read": read_bytes,
                    "wall_s": round(clock.wall, 2),
                    "core_s": round(clock.cpu, 2),
                    "runs_core_s": [round(c.cpu, 2) for c in runs],
                }
                results.append(entry)
                print(
                    f"  {layout:<10} {case:<18} files read {read:>6,}/{entry['files']:<6,} "
                    f"({100 * read / entry['files']:5.1f}%) {read_bytes / 1e6:8.1f} MB "
                    f"{clock.wall:7.2f} s {clock.cpu:7.2f} core-s",
                    flush=True,
                )
    _ratios(results)
    report = {
        "rows": args.rows,
        "bytes": table_bytes,
        "runs": args.runs,
        "prefix_chars": PREFIX_CHARS,
        "ran_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - started),
        "results": results,
    }
    path = out / f"pruning_{args.rows}.json"
    path.write_text(json.dumps(report, indent=2))
    chart = _chart(report, path.with_suffix(".png"))
    print(f"\nwrote {path} and {chart} ({report['seconds']} s in all)")
    return 0


def _chart(report: dict, path: Path) -> Path:
    """Core-seconds by batch size, one bar per layout and strategy, files read on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report["results"]
    sizes = sorted({r["subjects"] for r in results})
    cases = list(dict.fromkeys((r["layout"], r["case"]) for r in results))
    figure, axis = plt.subplots(figsize=(12, 6))
    width = 0.8 / max(1, len(cases))
    for index, (layout, case) in enumerate(cases):
        for position, size in enumerate(sizes):
            entry = next(
                (
                    r
                    for r in results
                    if (r["layout"], r["case"], r["subjects"]) == (layout, case, size)
                ),
                None,
            )
            if entry is None:
                continue
            x = position + index * width
            axis.bar(
                x,
                entry["core_s"],
                width,
                color=f"C{index}",
                label=f"{layout}, {case}" if position == 0 else None,
            )
            share = 100 * entry["files_read"] / entry["files"]
            axis.annotate(
                f"{share:.0f}%", (x, entry["core_s"]), ha="center", va="bottom", fontsize=6
            )
    axis.set_xticks(
        [p + 0.4 - width / 2 for p in range(len(sizes))], [f"{s:,} subject(s)" for s in sizes]
    )
    axis.set_ylabel("core-seconds (lower is better); % of the files read on each bar")
    axis.set_title(
        f"Erasure by pruning: {report['rows']:,} rows, median of {report['runs']} run(s), {report['ran_at'][:10]}"
    )
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _ratios(results: list[dict]) -> None:
    print("\npruned / every file, same layout and size (core-s, files read):")
    for entry in results:
        if entry["case"] not in ("MERGE, pruned", "DELETE, pruned"):
            continue
        full = next(
            r
            for r in results
            if r["case"] == "MERGE, every file"
            and (r["subjects"], r["layout"]) == (entry["subjects"], entry["layout"])
        )
        print(
            f"  {entry['subjects']:>7,} subject(s) {entry['layout']:<10} {entry['case']:<15} "
            f"core-s {entry['core_s'] / full['core_s']:.2f}x, files {entry['files_read'] / full['files_read']:.3f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
