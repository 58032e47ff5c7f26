"""Audit stream benchmark: `--once` catch-up throughput and `--follow` steady-state lag.

    python bench/audit.py                           # 100 commits, 1M changed rows
    python bench/audit.py --commits 20 --rows 200000 --follow-commits 5

Same JVM, same run. A small lakehouse is built (dbt build) and audited once. Then:
  1. idle      `audit_stream --once` with nothing new: the fixed cost of starting and
               finishing one availableNow query per CDF relation;
  2. catch-up  --commits appends to bronze.clicks totalling --rows changed rows, then
               `audit_stream --once` timed: seconds and rows/s; checked: every version
               audited once with its exact row count;
  3. floor     a plain batch read of the same versions' Change Data Feed, grouped by
               (version, change type): what the counting alone costs;
  4. follow    `python -m python_jobs.audit_stream --follow --interval I` in its own JVM
               (as users run it) while --follow-commits commits land one every few
               seconds; lag = audited (seen in the log) - committed, per commit.
Wall seconds and JVM core-seconds are printed side by side.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-audit, apart from `make run`'s data.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, Clock, bench_state, dbt_invoker

SINK = "audit.change_log"


def _latest(spark, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def _append_clicks(spark, rows: int, commit: int) -> None:
    """One commit of `rows` synthetic clicks shaped like bronze.clicks (no person)."""
    fields = spark.table("bronze.clicks").schema
    expressions = []
    for field in fields:
        if field.name == "click_id":
            expressions.append(f"concat('B{commit:04d}-', cast(id as string)) as click_id")
        else:
            expressions.append(f"template.{field.name}")
    spark.sql(
        f"insert into bronze.clicks select {', '.join(expressions)} from range({rows}) "
        "cross join (select * from bronze.clicks limit 1) as template"
    )


def _quiet(function, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--rows", type=int, default=1_000_000, help="changed rows over all commits")
    parser.add_argument("--follow-commits", type=int, default=10)
    parser.add_argument("--follow-interval", type=float, default=2.0)
    parser.add_argument(
        "--follow-gap", type=float, default=5.0, help="seconds between follow commits"
    )
    args = parser.parse_args()
    state = bench_state("bench-audit")
    # the jobs (in process and --follow's own JVM) read the bench's manifest, not target/
    os.environ["DBT_TARGET_PATH"] = str(state / "target")
    from demo import generate
    from python_jobs import audit_stream
    from python_jobs.project import manifest
    from python_jobs.relations import delta_relations
    from python_jobs.spark import get_spark

    spark = get_spark("bench_audit")
    dbt = dbt_invoker(state)
    if not spark.catalog.tableExists(SINK):
        generate.main(["--patients", "50", "--batch", "1"])
        dbt("build", "--exclude", "resource_type:test")
    else:
        dbt("parse")
    _quiet(audit_stream.main, ["--once"], spark)
    audited_relations = [
        r
        for r in delta_relations(manifest())
        if r.change_data_feed and r.privacy.get("role") != "audit"
    ]

    with Clock(spark) as idle:
        _quiet(audit_stream.main, ["--once"], spark)

    per_commit = args.rows // args.commits
    first = _latest(spark, "bronze.clicks") + 1
    print(
        f"appending {args.commits} commits x {per_commit:,} rows to bronze.clicks ...", flush=True
    )
    for commit in range(args.commits):
        _append_clicks(spark, per_commit, commit)
    last = _latest(spark, "bronze.clicks")

    with Clock(spark) as catch_up:
        _quiet(audit_stream.main, ["--once"], spark)
    audited = spark.sql(
        f"select count(distinct commit_version), sum(row_count), max(count_source) from {SINK} "
        f"where relation = 'bronze.clicks' and commit_version between {first} and {last}"
    ).first()
    assert audited[0] == last - first + 1 and audited[1] == per_commit * args.commits, audited

    location = spark.sql("describe detail bronze.clicks").first()["location"]
    with Clock(spark) as floor:
        (
            spark.read.format("delta")
            .option("readChangeFeed", "true")
            .option("startingVersion", first)
            .option("endingVersion", last)
            .load(location)
            .groupBy("_commit_version", "_change_type")
            .count()
            .collect()
        )

    # --follow in its own JVM, as users run it; this JVM commits and watches the log
    log = state / "follow.log"
    env = dict(os.environ)
    follow = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "python_jobs.audit_stream",
            "--follow",
            "--interval",
            f"{args.follow_interval:g}",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    lags = []
    try:
        started = time.monotonic()
        while "Following" not in log.read_text():
            if follow.poll() is not None or time.monotonic() - started > 300:
                raise SystemExit(f"--follow did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
        time.sleep(args.follow_interval * 2)
        for commit in range(args.follow_commits):
            _append_clicks(spark, 1000, 10_000 + commit)
            committed = time.monotonic()
            version = _latest(spark, "bronze.clicks")
            while not spark.sql(
                f"select count(*) from {SINK} where relation = 'bronze.clicks' and commit_version = {version}"
            ).first()[0]:
                if time.monotonic() - committed > 120:
                    raise SystemExit(f"version {version} not audited after 120 s")
                time.sleep(0.1)
            lags.append(time.monotonic() - committed)
            time.sleep(max(0.0, args.follow_gap - lags[-1]))
    finally:
        follow.terminate()
        follow.wait(120)

    rows = per_commit * args.commits
    print()
    print(
        f"audit_stream, bronze.clicks: {args.commits} commits, {rows:,} changed rows (this machine)"
    )
    print(f"{'step':42} {'wall s':>8} {'JVM core-s':>11} {'rows/s':>12}")
    idle_label = f"--once, nothing new ({len(audited_relations)} relations)"
    print(f"{idle_label:42} {idle.wall:8.2f} {idle.cpu:11.2f} {'':>12}")
    print(
        f"{'--once, catch-up':42} {catch_up.wall:8.2f} {catch_up.cpu:11.2f} {rows / catch_up.wall:12,.0f}"
    )
    print(f"{'  of which beyond the idle cost':42} {catch_up.wall - idle.wall:8.2f} {'':>11} "
          f"{rows / max(0.01, catch_up.wall - idle.wall):12,.0f}")  # fmt: skip
    print(
        f"{'floor: batch CDF read + group by':42} {floor.wall:8.2f} {floor.cpu:11.2f} {rows / floor.wall:12,.0f}"
    )
    print(
        f"--follow (interval {args.follow_interval:g} s), lag commit -> audited over {len(lags)} commits: "
        f"median {statistics.median(lags):.1f} s, max {max(lags):.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
