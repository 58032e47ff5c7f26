"""What Delta 4.1+ changed under the project, on real Spark + Delta, and how each change
is handled (delta-io/delta#5028, #5022, #5025).

- VACUUM ignores RETAIN n HOURS unless n is 0 and uses the table's
  delta.deletedFileRetentionDuration instead: purge --retain-hours and the dbt macro
  vacuum_relation must still keep what they say they keep.
- Time travel (SELECT ... VERSION AS OF, RESTORE, a change feed's start) to a version
  committed before now minus delta.deletedFileRetentionDuration is refused:
  restore_version must refuse first, with the reason, changing nothing; table_history
  must not call such a version restorable.
- deletedFileRetentionDuration longer than logRetentionDuration is refused: the
  project's retention vars must not set one.

A table keeping removed files 0 hours tells "RETAIN honoured" from "RETAIN ignored"
at once: honoured, a RETAIN 200 HOURS VACUUM keeps the file just removed; ignored, it
deletes it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from python_jobs.purge import purge_relation
from python_jobs.relations import DeltaRelation
from tests.dbt_harness import DbtProject, build_once

pytestmark = pytest.mark.functional

SCHEMA = "stack_check"


def _scratch(spark: SparkSession, name: str, retention: str = "interval 0 hours") -> str:
    """A table whose first data file was just removed by an overwrite."""
    spark.sql(f"create schema if not exists {SCHEMA}")
    table = f"{SCHEMA}.{name}"
    spark.sql(
        f"create or replace table {table} (id int) using delta tblproperties ("
        f"'delta.deletedFileRetentionDuration' = '{retention}', "
        "'delta.enableDeletionVectors' = 'false')"
    )
    spark.sql(f"insert into {table} values (1)")
    spark.sql(f"insert overwrite {table} values (2)")
    return table


def _data_files(spark: SparkSession, table: str) -> int:
    location = spark.sql(f"describe detail {table}").first()["location"]
    return len(list(Path(location.removeprefix("file:")).glob("*.parquet")))


def _retention_asked(spark: SparkSession, table: str) -> str | None:
    for row in spark.sql(f"describe history {table} limit 5").collect():
        if row["operation"] == "VACUUM START":
            return (row["operationParameters"] or {}).get("specifiedRetentionMillis")
    return None


def test_delta_itself_ignores_a_nonzero_retain(spark: SparkSession) -> None:
    """The behaviour inherited: without the project's handling the removed file goes."""
    table = _scratch(spark, "plain")
    listed = spark.sql(f"vacuum {table} retain 200 hours dry run").count()
    assert listed == 1, "Delta honoured RETAIN on its own: the handling may be dropped"


def test_purge_retain_hours_keeps_what_it_says(spark: SparkSession) -> None:
    table = _scratch(spark, "purged")
    relation = DeltaRelation(f"model.x.{SCHEMA}_purged", "purged", SCHEMA, "purged", "model")
    assert _data_files(spark, table) == 2
    result = purge_relation(spark, relation, 200)
    assert (result.retain_hours, result.vacuumed_files) == (200, 0)
    assert _data_files(spark, table) == 2
    assert _retention_asked(spark, table) == str(200 * 3_600_000)
    # the session is left as it was: a later plain VACUUM follows the table again
    assert spark.conf.get("spark.databricks.delta.vacuum.retentionWindowIgnore.enabled") in (
        "true",
        None,
    )
    result = purge_relation(spark, relation, 0)
    assert result.vacuumed_files == 1 and _data_files(spark, table) == 1


def test_vacuum_relation_retain_hours_keeps_what_it_says(
    dbt: DbtProject, spark: SparkSession
) -> None:
    table = _scratch(spark, "vacuumed")
    deleted = dbt.compile_inline(
        "{{ gdpr_lakehouse.vacuum_relation(api.Relation.create(schema='"
        + SCHEMA
        + "', identifier='vacuumed'), 200) }}"
    )
    assert deleted == "0"
    assert _data_files(spark, table) == 2
    assert _retention_asked(spark, table) == str(200 * 3_600_000)


def test_one_vacuum_for_the_job_and_the_post_hook_below_the_tables_own_retention(
    dbt: DbtProject, spark: SparkSession
) -> None:
    """200 h on a table that keeps removed files 300 h: Delta's safety check compares
    with the table's own retention, not with 168 h. The purge and the macro run the
    same VACUUM (python_jobs.macros.on_session), and both keep what they say."""
    relation = DeltaRelation(f"model.x.{SCHEMA}_long", "long", SCHEMA, "long", "model")
    table = _scratch(spark, "long", "interval 300 hours")
    result = purge_relation(spark, relation, 200)
    assert (result.retain_hours, result.vacuumed_files) == (200, 0)
    assert _retention_asked(spark, table) == str(200 * 3_600_000)
    table = _scratch(spark, "long_hook", "interval 300 hours")
    deleted = dbt.compile_inline(
        "{{ gdpr_lakehouse.vacuum_relation(api.Relation.create(schema='"
        + SCHEMA
        + "', identifier='long_hook'), 200) }}"
    )
    assert deleted == "0" and _data_files(spark, table) == 2
    assert _retention_asked(spark, table) == str(200 * 3_600_000)


def test_the_post_build_vacuum_tells_a_young_table_on_real_spark(
    dbt: DbtProject, spark: SparkSession
) -> None:
    """The skip rule of vacuum_after_build on what this driver really hands over
    (timestamps, properties): a table minutes old keeping removed files 7 days has no
    file a VACUUM could delete; keeping them 0 hours, it may."""
    table = _scratch(spark, "young")
    check = (
        "{{ gdpr_lakehouse._vacuum_cannot_delete_yet(api.Relation.create(schema='"
        + SCHEMA
        + "', identifier='young')) }}"
    )
    assert dbt.compile_inline(check) == "False"
    spark.sql(
        f"alter table {table} set tblproperties ('delta.deletedFileRetentionDuration' = 'interval 7 days')"
    )
    assert dbt.compile_inline(check) == "True"


def test_a_version_older_than_the_deleted_file_retention_is_refused(
    dbt: DbtProject, spark: SparkSession, capfd: pytest.CaptureFixture[str]
) -> None:
    """bronze.users keeping removed files 1 second: Delta refuses every version but the
    newest, and restore_version says why before it changes anything."""
    build_once(dbt, spark)
    table = "bronze.users"
    key = "delta.deletedFileRetentionDuration"
    before = {row[0]: row[1] for row in spark.sql(f"show tblproperties {table}").collect()}
    spark.sql(f"alter table {table} set tblproperties ('{key}' = 'interval 1 seconds')")
    try:
        latest = spark.sql(f"describe history {table} limit 1").first()["version"]
        time.sleep(2)
        with pytest.raises(Exception, match="TIME_TRAVEL_BEYOND_DELETED_FILE_RETENTION"):
            spark.sql(f"select count(*) from {table} version as of {latest - 1}").collect()
        log = spark.sql("describe history privacy.restore_log limit 1").first()["version"]
        success, errors = dbt.operation(
            "restore_version", {"model": "bronze_users", "version": latest - 1}, False
        )
        assert not success
        assert (
            f"version {latest - 1} of bronze.users is older than its {key} (interval 1 seconds)"
            in errors
        )
        assert f"the oldest restorable version is {latest}" in errors
        assert spark.sql(f"describe history {table} limit 1").first()["version"] == latest
        assert spark.sql("describe history privacy.restore_log limit 1").first()["version"] == log
        capfd.readouterr()
        dbt.operation("table_history", {"model": "bronze_users", "limit": 3})
        out = capfd.readouterr().out
        assert f"restore_version reaches back to version {latest}" in out
        assert "no (past file retention)" in out
    finally:
        if key in before:
            spark.sql(f"alter table {table} set tblproperties ('{key}' = '{before[key]}')")
        else:
            spark.sql(f"alter table {table} unset tblproperties ('{key}')")


def test_deleted_file_retention_longer_than_the_log_is_refused(spark: SparkSession) -> None:
    """Delta 4.1+ refuses it; the project's defaults (7 days of files, 30 days of log)
    stay inside it."""
    table = _scratch(spark, "retention")
    with pytest.raises(Exception, match=r"(?i)logRetentionDuration|deletedFileRetention"):
        spark.sql(
            f"alter table {table} set tblproperties ("
            "'delta.logRetentionDuration' = 'interval 1 days', "
            "'delta.deletedFileRetentionDuration' = 'interval 2 days')"
        )
