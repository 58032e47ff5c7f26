"""Functional layer: real dbt, in-process, against real local Spark + Delta.

One JVM for the whole module: the `spark` fixture starts it and dbt-spark's session
method reuses it. The warehouse and metastore are the suite's throw-away folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dbt_common.invocation import get_invocation_id
from pyspark.sql import SparkSession

from python_jobs.relations import DeltaRelation, delta_relations, table_ref
from tests.dbt_harness import BASELINE, ROOT, DbtProject

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def built(dbt: DbtProject, spark: SparkSession) -> dict:
    """Two `dbt build`s: the first creates everything, the second is incremental."""
    runs, invocations = [], []
    for _ in range(2):
        runs.append(dbt.invoke("build").result)
        invocations.append(get_invocation_id())
    return {
        "runs": runs,
        "invocations": invocations,
        "relations": delta_relations(dbt.manifest()),
    }


def _history(spark: SparkSession, relation: DeltaRelation) -> list:
    return spark.sql(f"describe history {relation.qualified_name}").orderBy("version").collect()


def test_build_passes_every_node(built: dict) -> None:
    for run in built["runs"]:
        statuses = {r.node.unique_id: str(r.status) for r in run.results}
        assert statuses, "dbt build selected nothing"
        assert set(statuses.values()) <= {"success", "pass"}, statuses
    assert len(built["relations"]) == 4


def test_tables_are_delta_with_cdf_and_deletion_vectors(built: dict, spark: SparkSession) -> None:
    for relation in built["relations"]:
        detail = spark.sql(f"describe detail {relation.qualified_name}").first()
        assert detail["format"] == "delta", relation.name
        props = {
            row["key"]: row["value"]
            for row in spark.sql(f"show tblproperties {relation.qualified_name}").collect()
        }
        for key, value in BASELINE.items():
            assert props.get(key) == value, (relation.name, key, props.get(key))
        assert "deletionVectors" in detail["tableFeatures"], relation.name
        assert "changeDataFeed" in detail["tableFeatures"], relation.name


def test_warehouse_is_the_throw_away_one(
    built: dict, spark: SparkSession, lakehouse_dir: Path
) -> None:
    for relation in built["relations"]:
        location = spark.sql(f"describe detail {relation.qualified_name}").first()["location"]
        assert location == f"file:{relation.path(lakehouse_dir / 'warehouse')}"
    assert (lakehouse_dir / "metastore_db").is_dir()
    assert not (ROOT / "spark-warehouse").exists()


def test_history_shows_every_commit_tagged(
    built: dict, spark: SparkSession, dbt: DbtProject
) -> None:
    invocations = set(built["invocations"])
    assert len(invocations) == 2
    bronze = next(r for r in built["relations"] if r.name == "bronze_departments")
    history = _history(spark, bronze)
    # Build 1 creates the table; build 2 merges into it.
    assert [h["operation"] for h in history][-1] == "MERGE"
    assert len(history) >= 2
    for relation in built["relations"]:
        for commit in _history(spark, relation):
            tag = json.loads(commit["userMetadata"])
            assert tag["tool"] == "dbt"
            assert tag["actor"] == "pytest"
            assert tag["command"] == "build"
            assert tag["invocation_id"] in invocations
            assert tag["node"] == relation.unique_id
    # Nothing outlives the hook that set it.
    assert spark.conf.get("spark.databricks.delta.commitInfo.userMetadata", None) is None


def test_incremental_rerun_duplicates_nothing(built: dict, spark: SparkSession) -> None:
    counts = {r.name: spark.table(r.qualified_name).count() for r in built["relations"]}
    assert counts == {
        "departments": 10,
        "bronze_departments": 10,
        "silver_departments": 10,
        "gold_departments_by_site": 3,
    }
    bronze = next(r for r in built["relations"] if r.name == "bronze_departments")
    merge = _history(spark, bronze)[-1]["operationMetrics"]
    assert merge["numTargetRowsInserted"] == "0"
    assert merge["numTargetRowsUpdated"] == "10"


def test_change_data_feed_records_the_merge(built: dict, spark: SparkSession) -> None:
    bronze = next(r for r in built["relations"] if r.name == "bronze_departments")
    changes = spark.sql(
        "select _change_type, count(*) as n "
        f"from table_changes('{bronze.schema}.{bronze.identifier}', 0) group by _change_type"
    )
    by_type = {row["_change_type"]: row["n"] for row in changes.collect()}
    assert by_type.get("insert") == 10
    assert by_type.get("update_preimage") == 10
    assert by_type.get("update_postimage") == 10


def test_a_job_reads_tables_by_path_while_this_jvm_holds_the_metastore(
    built: dict, spark: SparkSession, dbt: DbtProject, lakehouse_dir: Path
) -> None:
    """The audit-stream design: a second JVM (a python job) runs beside dbt's.

    This process's JVM has booted the embedded Derby metastore, exactly as a running
    `dbt build` would. A job started with shared_metastore=False reads the Change Data
    Feed of a dbt table by the path resolved from the manifest.
    """
    silver = next(r for r in built["relations"] if r.name == "silver_departments")
    path = silver.path(lakehouse_dir / "warehouse")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "python_jobs.spark",
            "--no-shared-metastore",
            "--sql",
            f"select count(*) as changed_rows from table_changes_by_path('{path}', 0)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "|changed_rows|" in completed.stdout.replace(" ", "")
    rows = [line for line in completed.stdout.splitlines() if line.strip("|+- ").isdigit()]
    expected = spark.sql(
        f"select count(*) from table_changes('{silver.schema}.{silver.identifier}', 0)"
    ).first()[0]
    assert rows and int(rows[0].strip("| ")) == expected > 0
    # The same resolver names the relation by path in a path-mode session.
    assert table_ref(spark, silver) == silver.qualified_name


def test_bad_retention_var_stops_the_run_and_changes_nothing(
    built: dict, spark: SparkSession, dbt: DbtProject, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {r.name: len(_history(spark, r)) for r in built["relations"]}
    result = dbt.invoke(
        "run",
        "--vars",
        '{delta_log_retention: "interval 30 days\') --"}',
        expect_success=False,
    )
    assert not result.success
    output = capsys.readouterr().out
    assert "var delta_log_retention" in output
    assert "use 'interval <n> hours|days|weeks'" in output
    after = {r.name: len(_history(spark, r)) for r in built["relations"]}
    assert after == before
