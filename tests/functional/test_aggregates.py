"""Gold's anonymous aggregates: exact, k-anonymous, and blind to erasure.

gold_encounters_monthly publishes, per admission month, ICD-10 chapter and department,
only cells where at least var k_anonymity (5) distinct patients are counted, and keeps
counting an erased patient's encounters without any version of the table showing the
erasure. The table starts as the previous version of the model left it (an upgrade).
Hand-made landing events in admission months of 2001 (no other suite uses them) drive
it through a cell too small to publish, a corrected encounter (moved to its new group),
a source delete (subtracted), an encounter whose patient lands one batch later (counted
when it passes quality, which publishes its cell), an erasure (nothing changes), a
restore of silver to before that erasure (re-erased, nothing changes) and a source
delete that takes a cell below k (withdrawn). After each build the aggregate equals a
count made here from the events, retained_aggregates_cover_their_upstream passes (it fails
while silver holds a cell of k patients gold has not published), and so does
retained_aggregates_k_anonymous over every version the table's history holds.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs.project import landing_dir
from tests.dbt_harness import DbtProject, build_once, decrypted

pytestmark = pytest.mark.functional

PREFIX = "aggregate-"
JANUARY = datetime(2001, 1, 10, 8, 0, tzinfo=UTC)
FEBRUARY = datetime(2001, 2, 10, 8, 0, tzinfo=UTC)
BASELINE = (
    "delta.enableChangeDataFeed",
    "delta.enableDeletionVectors",
    "delta.logRetentionDuration",
    "delta.deletedFileRetentionDuration",
)
BUILD = (
    "run",
    "--select",
    "+gold_encounters_monthly",
    "+gold_clicks_hourly",
    "+gold_patients_by_city",
)
# once nothing new has landed, what an erasure or a restore asks for (the compliance
# tests' meta.fix): the aggregates alone, as a user catches them up
GOLD = ("run", "--select", "gold_encounters_monthly", "gold_clicks_hourly", "gold_patients_by_city")


def _patient(number: int, ts: datetime) -> dict:
    return {
        "patient_id": f"P{number:07d}",
        "full_name": "Test Person",
        "email": f"p{number}@example.org",
        "phone": "+44 7700 900000",
        "national_id": f"ZZ{number}X",
        "birth_date": None,
        "address": "1 Quay Lane",
        "city": "Eastmoor",
        "insurer": "Civic Care",
        "_op": "insert",
        "_source_ts": ts,
    }


def _encounter(
    number: int, patient: int, op: str, ts: datetime, month: datetime, dept: str, cost: float
) -> dict:
    return {
        "encounter_id": f"E81{number:07d}",
        "patient_id": f"P{patient:07d}",
        "admitted_at": month,
        "diagnosis_code": "I21.9",
        "department_id": dept,
        "cost": cost,
        "_op": op,
        "_source_ts": ts,
    }


def _land(entity: str, name: str, rows: list[dict]) -> None:
    table = pa.Table.from_pylist(rows, schema=generate.SCHEMAS[entity])
    pq.write_table(table, landing_dir() / entity / f"{PREFIX}{name}.parquet")


def _gold(spark: SparkSession) -> dict[tuple, tuple]:
    rows = spark.sql(
        "select date_format(admitted_month, 'yyyy-MM') as month, department_id, "
        "encounter_count, total_cost, subject_count from gold.encounters_monthly "
        "where year(admitted_month) = 2001"
    ).collect()
    return {
        (r["month"], r["department_id"]): (
            r["encounter_count"],
            float(r["total_cost"]),
            r["subject_count"],
        )
        for r in rows
    }


def _clicks(spark: SparkSession) -> list[tuple]:
    rows = spark.sql(
        "select clicked_hour, device, click_count, subject_count from gold.clicks_hourly"
    ).collect()
    assert rows, "no hour and device of k users published"
    return sorted(tuple(row) for row in rows)


def _cities(spark: SparkSession) -> list[tuple]:
    rows = spark.sql(
        "select city, patient_count, subject_count from gold.patients_by_city"
    ).collect()
    assert rows, "no city of k patients published"
    return sorted(tuple(row) for row in rows)


def _as_an_older_version_left_it(spark: SparkSession) -> None:
    """gold.encounters_monthly as the version before this one left it: a high-water
    mark column, no erased counts, every count off by one."""
    table = "gold.encounters_monthly"
    kept = ", ".join(
        f"'{row['key']}' = '{row['value']}'"
        for row in spark.sql(f"show tblproperties {table}").collect()
        if row["key"] in BASELINE
    )
    rows = spark.sql(
        "select admitted_month, icd10_chapter, department_id, encounter_count + 1, total_cost, "
        f"timestamp'2000-01-01 00:00:00' from {table}"
    ).collect()
    schema = (
        "admitted_month timestamp, icd10_chapter string, department_id string, "
        "encounter_count bigint, total_cost decimal(22,2), last_ingested_at timestamp"
    )
    spark.sql(f"create or replace table {table} ({schema}) using delta tblproperties ({kept})")
    spark.createDataFrame(rows, schema).writeTo(table).append()


COVER, K_ANONYMOUS = "retained_aggregates_cover_their_upstream", "retained_aggregates_k_anonymous"


def _checks(dbt: DbtProject, *tests: str) -> dict[str, bool]:
    """Each test passed or failed, from one `dbt test` of them all (an error is neither)."""
    result = dbt.invoke("test", "--select", *tests, expect_success=False)
    statuses = {
        r.node.name: str(r.status) for r in result.result.results if r.node.resource_type == "test"
    }
    assert sorted(statuses) == sorted(tests), statuses
    assert set(statuses.values()) <= {"pass", "fail"}, statuses
    return {test: status == "pass" for test, status in statuses.items()}


def _passes(dbt: DbtProject, test: str) -> bool:
    return _checks(dbt, test)[test]


@pytest.fixture(scope="module")
def t0(dbt: DbtProject, spark: SparkSession) -> datetime:
    build_once(dbt, spark)
    for entity in ("patients", "encounters"):
        for stale in (landing_dir() / entity).glob(f"{PREFIX}*"):
            stale.unlink()
    return datetime.now(UTC) - timedelta(days=1)


def test_anonymous_aggregates_are_k_anonymous_exact_and_blind_to_erasure(
    t0: datetime, dbt: DbtProject, spark: SparkSession
) -> None:
    second = timedelta(seconds=1)
    # an upgrade: the first build starts over from silver's live cells
    _as_an_older_version_left_it(spark)
    _land("patients", "1", [_patient(8100000 + n, t0) for n in range(1, 12)])
    _land(
        "encounters",
        "1",
        [_encounter(n, 8100000 + n, "insert", t0, JANUARY, "CARD", 100.0) for n in range(1, 7)]
        + [_encounter(7, 8100002, "insert", t0, JANUARY, "CARD", 50.0)]
        # four patients: too few to publish
        + [_encounter(n, 8100000 + n, "insert", t0, FEBRUARY, "ONCO", 200.0) for n in range(8, 12)]
        # its patient lands in the next batch: quarantined until then
        + [_encounter(12, 8100012, "insert", t0, FEBRUARY, "ONCO", 200.0)],
    )
    dbt.invoke(*BUILD)
    assert _gold(spark) == {("2001-01", "CARD"): (7, 650.0, 6)}
    # the versions the older model wrote published cells of any size, until purged
    assert _checks(dbt, COVER, K_ANONYMOUS) == {COVER: True, K_ANONYMOUS: False}
    spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = false")
    spark.sql("vacuum gold.encounters_monthly retain 0 hours")
    spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = true")
    assert _passes(dbt, K_ANONYMOUS)

    _land("patients", "2", [_patient(8100012, t0 + second)])
    _land(
        "encounters",
        "2",
        [
            # corrected: another department and cost; moved to its own group (one
            # patient: not published)
            _encounter(1, 8100001, "update", t0 + second, JANUARY, "NEUR", 150.0),
            # deleted at the source: no longer counted
            _encounter(7, 8100002, "delete", t0 + second, JANUARY, "CARD", 50.0),
        ],
    )
    # silver has the changes, gold not yet: February's cell has five patients now
    dbt.invoke("run", "--select", "+silver_encounters")
    assert not _passes(dbt, COVER)
    dbt.invoke(*GOLD)
    counts = {("2001-01", "CARD"): (5, 500.0, 5), ("2001-02", "ONCO"): (5, 1000.0, 5)}
    assert _gold(spark) == counts
    assert _passes(dbt, COVER)

    # an erased patient's encounters leave silver and stay counted, and so do an erased
    # user's clicks: no version of either aggregate shows the erasure
    user, pseudonym = spark.sql(
        "select vault.subject_id, vault.subject_pseudonym from privacy.subject_keys as vault "
        "inner join silver.clicks as clicks on clicks.user_pseudonym = vault.subject_pseudonym "
        "inner join gold.clicks_hourly as hourly on hourly.clicked_hour = clicks.clicked_hour "
        "and hourly.device = coalesce(clicks.device, 'unknown') "
        "order by vault.subject_id limit 1"
    ).first()
    hourly = _clicks(spark)
    cities = _cities(spark)
    before = spark.sql("describe history silver.encounters limit 1").first()["version"]
    # a build while the erasure is under way (its rows gone from silver and bronze, the
    # keys not yet shredded) shows nothing either: the aggregates count over subjects
    # without a tombstone, written before any row goes
    dbt.operation(
        "request_erasure", {"subject_ids": ["P8100003", user], "reason": "aggregate suite"}
    )
    success, errors = dbt.invoke_errors(
        "run-operation",
        "gdpr_erase",
        "--vars",
        json.dumps({"erasure_crash_after": "silver.encounters"}),
    )
    assert not success and "crash injected after step silver.encounters" in errors, errors
    assert (
        spark.sql(
            "select count(*) from privacy.subject_keys where subject_id = 'P8100003'"
        ).first()[0]
        == 1
    )
    dbt.invoke(*GOLD)
    assert _gold(spark) == counts
    assert _clicks(spark) == hourly
    assert _cities(spark) == cities
    dbt.operation("gdpr_erase")
    assert (
        spark.sql(
            "select count(*) from silver.encounters as e "
            "inner join privacy.subject_keys as k on k.subject_pseudonym = e.patient_pseudonym "
            "where year(e.admitted_month) = 2001 "
            f"and {decrypted('e.department_id_enc', 'k.data_key')} = 'CARD'"
        ).first()[0]
        == 4
    )
    assert (
        spark.sql(
            f"select count(*) from silver.clicks where user_pseudonym = '{pseudonym}'"
        ).first()[0]
        == 0
    )
    dbt.invoke(*GOLD)
    assert _gold(spark) == counts
    assert _clicks(spark) == hourly
    assert _cities(spark) == cities  # no "-1 in city X"
    assert _checks(dbt, COVER, K_ANONYMOUS) == {COVER: True, K_ANONYMOUS: True}

    # silver restored to before the erasure: restore_version erases the patient again;
    # nothing changes here either
    dbt.operation("restore_version", {"model": "silver_encounters", "version": before})
    dbt.invoke(*GOLD)
    assert _gold(spark) == counts
    assert _passes(dbt, COVER)

    # a source delete takes January below five patients (four live and the erased
    # one): the cell is withdrawn
    _land(
        "encounters",
        "3",
        [_encounter(4, 8100004, "delete", t0 + 2 * second, JANUARY, "CARD", 100.0)],
    )
    dbt.invoke(*BUILD)
    assert _gold(spark) == {("2001-02", "ONCO"): (5, 1000.0, 5)}
    assert _checks(dbt, COVER, K_ANONYMOUS) == {COVER: True, K_ANONYMOUS: True}


def test_an_upgrade_that_renamed_an_upstream_column_fails_nothing_and_drops_no_cell(
    t0: datetime, dbt: DbtProject, spark: SparkSession
) -> None:
    """An upgrade rebuilt silver.encounters with other columns (the department stored
    encrypted, department_id_enc, where the version before kept department_id in
    clear): the version of silver the aggregate counted last lacks a column its cells
    now name, so the run cannot recount it. It must not fail (the upgrade would stop
    at gold) nor drop a published cell: each keeps the greater of its counts and
    silver's now, as when that version's files are gone."""
    dbt.invoke(*GOLD)
    published = _all_cells(spark)
    assert published, "no cell of k patients published"
    # silver as the version before this one left it, then counted last by the aggregate
    kept = ", ".join(
        f"'{row['key']}' = '{row['value']}'"
        for row in spark.sql("show tblproperties silver.encounters").collect()
        if row["key"] in BASELINE
    )
    columns = [c for c in spark.table("silver.encounters").columns if c != "department_id_enc"]
    spark.sql(
        f"create or replace table silver.encounters using delta tblproperties ({kept}) as "
        f"select {', '.join(columns)}, 'CARD' as department_id from silver.encounters"
    )
    old = spark.sql("describe history silver.encounters limit 1").first()["version"]
    spark.sql(f"update gold.encounters_monthly set source_version = {old}")
    dbt.invoke("run", "--select", "silver_encounters")
    success, errors = dbt.invoke_errors("run", "--select", "gold_encounters_monthly")
    assert success, errors
    assert _all_cells(spark) == published
    assert _passes(dbt, K_ANONYMOUS)


def _all_cells(spark: SparkSession) -> list[tuple]:
    return sorted(
        tuple(row)
        for row in spark.sql(
            "select admitted_month, icd10_chapter, department_id, encounter_count, total_cost, "
            "subject_count from gold.encounters_monthly"
        ).collect()
    )
