"""Physical erasure of a liquid-clustered table (python_jobs.purge.reorg_purge, which runs
the macro purge_deletion_vectors).

Delta's REORG TABLE ... APPLY (PURGE) (4.0.1-4.4.0) skips files OPTIMIZE has clustered: the
rows a deletion vector marks stay in the Parquet files and the command reports
success. The benchmark found it (bench/run.py, liquid layout); purge takes a detour
(unclustered, purged, clustered again), and a detour a crash interrupted is finished
by the next run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from python_jobs.delta_files import read_snapshot
from python_jobs.purge import reorg_purge

pytestmark = pytest.mark.functional

# where the macro purge_deletion_vectors keeps the columns while it is unclustered
CLUSTER_BY_PROPERTY = "gdpr_lakehouse.purge.clusterBy"

SCHEMA = "purge_clustered_test"


@pytest.fixture()
def clustered(spark) -> Iterator:
    """Two clustered tables of 20,000 rows, 10% deleted by deletion vectors."""

    def make(name: str) -> str:
        table = f"{SCHEMA}.{name}"
        spark.sql(f"drop table if exists {table}")
        spark.sql(
            f"create table {table} (id bigint, email string) using delta cluster by (id) "
            "tblproperties ('delta.enableDeletionVectors' = 'true')"
        )
        spark.sql(
            f"insert into {table} select /*+ REPARTITION(2) */ id, "
            "concat('person', id, '@example.com') from range(20000)"
        )
        spark.sql(f"optimize {table}")
        spark.sql(f"delete from {table} where id % 10 = 3")
        return table

    spark.sql(f"create schema if not exists {SCHEMA}")
    yield make
    spark.sql(f"drop schema if exists {SCHEMA} cascade")


def _files(spark, table: str) -> tuple[int, list[int]]:
    """(live files with a deletion vector, every id physically in the live files)."""
    location = spark.sql(f"describe detail {table}").first()["location"]
    snapshot = read_snapshot(Path(location.removeprefix("file:")))
    ids = [
        i for path in snapshot.files for i in pq.read_table(path, columns=["id"])["id"].to_pylist()
    ]
    return sum(1 for vector in snapshot.files.values() if vector), ids


def test_delta_alone_leaves_the_rows_and_purge_removes_them(spark, clustered) -> None:
    plain, purged = clustered("plain"), clustered("purged")
    # Delta's own REORG on a clustered table: the erased rows are still in the files
    spark.sql(f"reorg table {plain} apply (purge)")
    marked, ids = _files(spark, plain)
    assert marked > 0 and sum(1 for i in ids if i % 10 == 3) == 2000

    assert reorg_purge(spark, purged) > 0
    marked, ids = _files(spark, purged)
    assert marked == 0 and len(ids) == 18000 and not [i for i in ids if i % 10 == 3]
    detail = spark.sql(f"describe detail {purged}").first()
    assert list(detail["clusteringColumns"]) == ["id"]
    assert CLUSTER_BY_PROPERTY not in (detail["properties"] or {})
    assert spark.sql(f"select count(*) from {purged}").first()[0] == 18000


def test_a_detour_a_crash_interrupted_is_finished(spark, clustered) -> None:
    table = clustered("interrupted")
    # the state a purge killed right after unclustering leaves behind
    spark.sql(f"alter table {table} set tblproperties ('{CLUSTER_BY_PROPERTY}' = 'id')")
    spark.sql(f"alter table {table} cluster by none")
    assert not list(spark.sql(f"describe detail {table}").first()["clusteringColumns"])

    reorg_purge(spark, table)
    marked, ids = _files(spark, table)
    assert marked == 0 and len(ids) == 18000
    detail = spark.sql(f"describe detail {table}").first()
    assert list(detail["clusteringColumns"]) == ["id"]
    assert CLUSTER_BY_PROPERTY not in (detail["properties"] or {})
    # idempotent: a second run finds nothing to purge and changes nothing it should not
    reorg_purge(spark, table)
    assert _files(spark, table) == (0, ids)
    assert list(spark.sql(f"describe detail {table}").first()["clusteringColumns"]) == ["id"]
