"""Attack class: unsafe settings and free text that reach SQL.

Guarantees held here:
- a deleted-file retention under Delta's 7-day floor is refused unless the run opts in
  with var vacuum_allow_short_retention (it would make every post-build VACUUM a short
  one);
- var lake_root reaches DDL only as an absolute path or a storage URI without quotes;
- free text (reason, requested_by, placed_by) that holds `${` is refused: Spark
  substitutes `${env:NAME}` and `${spark.conf}` in SQL text, so such text would store
  (and print) a secret of the engine's environment.
Each refusal changes no table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.dbt_harness import DbtProject, latest_versions

pytestmark = pytest.mark.functional


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"delta_deleted_file_retention": "interval 1 hours"}, "vacuum_allow_short_retention"),
        ({"delta_deleted_file_retention": "interval 6 days"}, "vacuum_allow_short_retention"),
        ({"delta_log_retention": "interval 2 hours"}, "delta_log_retention"),
        ({"lake_root": "/tmp/x'; drop table bronze.patients; --"}, "lake_root"),
        ({"lake_root": "relative/path"}, "lake_root"),
    ],
    ids=["retention-1h", "retention-6d", "log-2h", "lake-root-quote", "lake-root-relative"],
)
def test_unsafe_settings_are_refused_before_any_write(
    tables: list[Path], dbt: DbtProject, variables: dict, message: str
) -> None:
    """Attack: a run with a setting that weakens erasure or reaches DDL unchecked.
    Guarantee: refused at the start of the run, nothing built."""
    before = latest_versions(tables)
    success, errors = dbt.invoke_errors(
        "run", "--select", "bronze_patients", "--vars", json.dumps(variables)
    )
    assert not success, f"{variables} was accepted"
    assert message in errors, errors
    assert latest_versions(tables) == before


@pytest.mark.parametrize(
    ("macro", "args"),
    [
        ("request_erasure", {"subject_ids": ["P0000003"], "reason": "${env:LAKEHOUSE_KEK}"}),
        ("request_erasure", {"subject_ids": ["P0000003"], "requested_by": "${spark.app.name}"}),
        ("gdpr_erase", {"subject_ids": ["P0000003"], "reason": "see ${env:HOME}"}),
        ("legal_hold", {"subject_ids": ["P0000003"], "reason": "case", "placed_by": "${env:USER}"}),
        ("restore_version", {"model": "silver_patients", "version": 0, "reason": "${x}"}),
    ],
    ids=["reason", "requested_by", "erase-reason", "placed_by", "restore-reason"],
)
def test_free_text_cannot_reach_spark_substitution(
    tables: list[Path], dbt: DbtProject, macro: str, args: dict
) -> None:
    """Attack: free text holding `${env:...}` (Spark would put the environment variable's
    value into the stored row and the printed table). Guarantee: refused, nothing written."""
    before = latest_versions(tables)
    success, errors = dbt.operation(macro, args, expect_success=False)
    assert not success, f"{macro} accepted {args}"
    assert "${" in errors, errors
    assert latest_versions(tables) == before


def _retention(spark: SparkSession, table: str) -> str | None:
    rows = spark.sql(f"show tblproperties {table}").collect()
    return {row["key"]: row["value"] for row in rows}.get("delta.logRetentionDuration")


def test_a_retention_change_reaches_the_tables_that_already_exist(
    tables: list[Path], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: the policy is tightened after the lakehouse was built (log retention 30
    -> 14 days): dbt-spark sets tblproperties only when it creates a table, so every
    incremental table and snapshot would keep the old, longer history for ever.
    Guarantee: the next run of a model or snapshot sets the policy on its existing
    table (a tagged commit), and a run back on the default sets it back."""
    tightened = json.dumps({"delta_log_retention": "interval 14 days"})
    dbt.invoke("run", "--select", "bronze_patients", "--vars", tightened)
    dbt.invoke("snapshot", "--vars", tightened)
    for table in ("bronze.patients", "snapshots.patients"):
        assert _retention(spark, table) == "interval 14 days", table
        tag = spark.sql(f"describe history {table} limit 5").collect()
        altered = [c for c in tag if c["operation"] == "SET TBLPROPERTIES"]
        assert altered and json.loads(altered[0]["userMetadata"])["purpose"] in (
            "build",
            "snapshot",
        )
    dbt.invoke("run", "--select", "bronze_patients")
    dbt.invoke("snapshot")
    for table in ("bronze.patients", "snapshots.patients"):
        assert _retention(spark, table) == "interval 30 days", table
