"""The compliance checks, each proven against a known-bad fixture.

`dbt test --select tag:compliance` runs every check over the whole graph (test_build
proves they pass on the built lakehouse); here each check's macro is pointed at a
scratch relation built to break it, and must report exactly what is wrong. A check
that cannot fail proves nothing.
"""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from demo import generate
from tests.dbt_harness import DbtProject, decrypted

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def scratch(dbt: DbtProject, spark: SparkSession) -> None:
    if not spark.catalog.tableExists("privacy.erasure_requests"):
        generate.main(["--patients", "120", "--batch", "1"])
        dbt.invoke("build")
    spark.sql("create schema if not exists scratch")
    yield
    for table in ("bad_retention", "bad_stats", "listed_stats", "requests"):
        spark.sql(f"drop table if exists scratch.{table}")
    spark.sql("drop view if exists scratch.unmasked_patients")


def _show(dbt: DbtProject, jinja: str) -> list[tuple]:
    result = dbt.invoke("show", "--inline", jinja, "--limit", "100")
    return sorted(tuple(row) for row in result.result.results[0].agate_table.rows)


def _relation(name: str) -> str:
    return f"api.Relation.create(schema='scratch', identifier='{name}')"


def test_retention_longer_than_the_deadline_or_unset_is_caught(
    scratch: None, dbt: DbtProject, spark: SparkSession
) -> None:
    # Delta 4.1+ refuses deletedFileRetentionDuration above logRetentionDuration
    # (delta-io/delta#5025), so "too long" and "unset" are two tables
    spark.sql(
        "create or replace table scratch.bad_retention (id string) using delta "
        "tblproperties ('delta.logRetentionDuration' = 'interval 120 days', "
        "'delta.deletedFileRetentionDuration' = 'interval 90 days')"
    )
    spark.sql("create or replace table scratch.unset_retention (id string) using delta")
    rows = _show(
        dbt,
        "{{ gdpr_lakehouse.problems_as_rows(gdpr_lakehouse.retention_problems(["
        + _relation("bad_retention")
        + ", "
        + _relation("unset_retention")
        + "]), ['relation_name', 'property', 'problem']) }}",
    )
    assert rows == [
        (
            "scratch.bad_retention",
            "delta.deletedFileRetentionDuration",
            "interval 90 days is longer than the erasure deadline of 30 days",
        ),
        (
            "scratch.bad_retention",
            "delta.logRetentionDuration",
            "interval 120 days is longer than the erasure deadline of 30 days",
        ),
        (
            "scratch.unset_retention",
            "delta.deletedFileRetentionDuration",
            "is not set (the policy needs it explicit)",
        ),
        (
            "scratch.unset_retention",
            "delta.logRetentionDuration",
            "is not set (the policy needs it explicit)",
        ),
    ]


def test_pii_in_delta_statistics_is_caught(
    scratch: None, dbt: DbtProject, spark: SparkSession
) -> None:
    spark.sql("create or replace table scratch.bad_stats (id string, email string) using delta")
    spark.sql(
        "create or replace table scratch.listed_stats (id string, email string) using delta "
        "tblproperties ('delta.dataSkippingStatsColumns' = 'id,email')"
    )
    rows = _show(
        dbt,
        "{{ gdpr_lakehouse.problems_as_rows(gdpr_lakehouse.statistics_problems(["
        f"{{'relation': {_relation('bad_stats')}, 'pii_columns': ['email']}}, "
        f"{{'relation': {_relation('listed_stats')}, 'pii_columns': ['email']}}"
        "]), ['relation_name', 'column_name', 'problem']) }}",
    )
    assert rows == [
        (
            "scratch.bad_stats",
            "email",
            "may be in the statistics: set delta.dataSkippingStatsColumns without it",
        ),
        ("scratch.listed_stats", "email", "is in delta.dataSkippingStatsColumns"),
    ]


def _requests(spark: SparkSession, rows: dict[str, dict[str, str]]) -> None:
    """scratch.requests, shaped like the request log, holding these requests (each a
    status and SQL expressions by column; received 32 days ago, subject P9999999)."""
    spark.sql(
        "create or replace table scratch.requests using delta as "
        "select * from privacy.erasure_requests where false"
    )
    columns = [f.name for f in spark.table("scratch.requests").schema]
    for request_id, given in rows.items():
        values = {
            "request_id": f"'{request_id}'",
            "subject_id": "'P9999999'",
            "received_at": "current_timestamp() - interval 32 days",
            **{k: (f"'{v}'" if k == "status" else v) for k, v in given.items()},
        }
        spark.sql(
            f"insert into scratch.requests ({', '.join(columns)}) select "
            + ", ".join(values.get(c, "null") for c in columns)
        )


def test_an_open_request_past_its_deadline_is_caught_and_a_held_one_is_not(
    scratch: None, dbt: DbtProject, spark: SparkSession
) -> None:
    _requests(
        spark,
        {
            "req-overdue": {
                "status": "pending",
                "deadline": "current_timestamp() - interval 2 days",
            },
            "req-held": {"status": "held", "deadline": "current_timestamp() - interval 40 days"},
            "req-fresh": {
                "status": "pending",
                "deadline": "current_timestamp() + interval 29 days",
            },
            "req-done": {"status": "erased", "deadline": "current_timestamp() - interval 5 days"},
        },
    )
    found = _show(dbt, "{{ gdpr_lakehouse.overdue_requests_sql('scratch.requests') }}")
    assert [(row[0], row[1], row[4]) for row in found] == [("req-overdue", "pending", 2)]


def test_an_erased_request_past_its_purge_deadline_is_caught(
    scratch: None, dbt: DbtProject, spark: SparkSession
) -> None:
    """erased_at + var purge_deadline_days (8): an erased request whose old files should
    be gone by now is reported; a purged one, or one inside its deadline, is not; an
    erased request with no erasure time is reported (fail closed)."""
    _requests(
        spark,
        {
            "req-unpurged": {
                "status": "erased",
                "erased_at": "current_timestamp() - interval 10 days",
            },
            "req-no-time": {"status": "erased"},
            "req-inside": {
                "status": "erased",
                "erased_at": "current_timestamp() - interval 7 days",
            },
            "req-purged": {
                "status": "purged",
                "erased_at": "current_timestamp() - interval 30 days",
            },
            "req-pending": {"status": "pending"},
        },
    )
    found = _show(dbt, "{{ gdpr_lakehouse.unpurged_requests_sql('scratch.requests') }}")
    assert [(row[0], row[4]) for row in found] == [("req-no-time", None), ("req-unpurged", 2)]


def test_a_view_that_shows_pii_to_a_non_reader_is_caught(
    scratch: None, dbt: DbtProject, spark: SparkSession
) -> None:
    # decrypts for everyone: the mistake the masked views exist to prevent
    spark.sql(
        "create or replace view scratch.unmasked_patients as "
        f"select p.patient_pseudonym, {decrypted('p.email_enc', 'k.data_key')} as email, "
        "'***' as full_name "
        "from silver.patients p join privacy.subject_keys k on k.subject_pseudonym = p.patient_pseudonym"
    )
    patients = spark.sql(
        "select count(*) from scratch.unmasked_patients where email is not null"
    ).first()[0]
    rows = _show(
        dbt,
        "{{ gdpr_lakehouse.unmasked_pii_sql([{'relation': "
        + _relation("unmasked_patients")
        + ", 'pii_columns': ['full_name', 'email']}]) }}",
    )
    assert patients > 0 and rows == [("scratch.unmasked_patients", "email", patients)]
    # and the real masked views pass for this (non-reader) principal
    assert (
        _show(
            dbt, "{{ gdpr_lakehouse.unmasked_pii_sql(gdpr_lakehouse.masked_views_from_graph()) }}"
        )
        == []
    )
