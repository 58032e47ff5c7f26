"""Business time (issue 26, shared reference 004's G-SCD): a dimension read as of a
business day, from the Delta version that closed it, with no SCD2 columns and no copy
per day.

Three business days are loaded into silver.patients, each by a `dbt run` with var
business_date (hand-made landing events of patients no other suite uses: inserts, a
correction, a source delete). Each day read back with as_of_business_date equals the
table as that day's build left it; a day between two builds reads the earlier one; a
day before any closed period is refused. One of the patients is then erased: the
version that closed their day still holds their row (time travel), and
`gdpr_lakehouse.as_of` in a model leaves it out, so reading the past never brings an
erased person back. Once VACUUM has deleted the files a day's version needs, that day
is refused.

Runs last (tests/conftest.py): its business days lie after the run's own day, and the
suites before it assert counts these patients would change.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs.project import ProjectError, landing_dir
from tests.dbt_harness import DbtProject, build_once, decrypted

pytestmark = pytest.mark.functional

PREFIX = "business-"
TODAY = datetime.now(UTC).date()
# after the day the earlier builds of the run closed, at most a week ahead
DAYS = [(TODAY + timedelta(days=n)).isoformat() for n in (1, 2, 4)]
BETWEEN = (TODAY + timedelta(days=3)).isoformat()


def _patient(number: int, op: str, ts: datetime, city: str = "Eastmoor") -> dict:
    return {
        "patient_id": f"P{number:07d}",
        "full_name": "Business Day",
        "email": f"b{number}@example.org",
        "phone": "+44 7700 900001",
        "national_id": f"BD{number}X",
        "birth_date": date(1980, 1, 1),
        "address": "2 Quay Lane",
        "city": city,
        "insurer": "Civic Care",
        "_op": op,
        "_source_ts": ts,
    }


def _land(name: str, rows: list[dict]) -> None:
    table = pa.Table.from_pylist(rows, schema=generate.SCHEMAS["patients"])
    pq.write_table(table, landing_dir() / "patients" / f"{PREFIX}{name}.parquet")


def _rows(spark: SparkSession, sql: str) -> list[tuple]:
    return sorted(tuple(row) for row in spark.sql(sql).collect())


def _versions_printed(dbt: DbtProject, day: str) -> int:
    """The version as_of_business_date names, read from its return value by a
    rendering (run-operation prints it; the harness keeps only errors)."""
    sql = dbt.compile_inline(
        f"{{{{ gdpr_lakehouse.as_of_business_date(model='silver_patients', date='{day}') }}}}"
    )
    return int(sql)


@pytest.fixture(scope="module")
def days(dbt: DbtProject, spark: SparkSession) -> dict[str, list[tuple]]:
    build_once(dbt, spark)
    for stale in (landing_dir() / "patients").glob(f"{PREFIX}*"):
        stale.unlink()
    t0 = datetime.now(UTC)
    loads = [
        [_patient(8300000 + n, "insert", t0) for n in (1, 2, 3)],
        # a correction (another city) and a new patient
        [
            _patient(8300001, "update", t0 + timedelta(seconds=1), city="Northfield"),
            _patient(8300004, "insert", t0 + timedelta(seconds=1)),
        ],
        # deleted at the source
        [_patient(8300002, "delete", t0 + timedelta(seconds=2))],
    ]
    states = {}
    for n, (day, rows) in enumerate(zip(DAYS, loads, strict=True)):
        _land(str(n + 1), rows)
        dbt.invoke(
            "run", "--select", "+silver_patients", "--vars", json.dumps({"business_date": day})
        )
        states[day] = _rows(spark, "select * from silver.patients")
    return states


def test_a_dimension_read_as_of_each_business_day_is_the_state_loaded_that_day(
    days: dict[str, list[tuple]], dbt: DbtProject, spark: SparkSession
) -> None:
    versions = {}
    for day, state in days.items():
        versions[day] = _versions_printed(dbt, day)
        assert _rows(spark, f"select * from silver.patients version as of {versions[day]}") == state
    assert len(set(versions.values())) == 3 and sorted(versions.values()) == list(versions.values())
    # what each day loaded, by patient: the inserts, the correction, the source delete
    loaded = {}
    for day, version in versions.items():
        rows = spark.sql(
            f"select vault.subject_id, {decrypted('p.city_enc', 'vault.data_key')} "
            f"from silver.patients version as of {version} as p "
            "inner join privacy.subject_keys as vault on vault.subject_pseudonym = p.patient_pseudonym "
            "where vault.subject_id like 'P83%'"
        ).collect()
        loaded[day] = dict(sorted((row[0], row[1]) for row in rows))
    assert loaded == {
        DAYS[0]: {"P8300001": "Eastmoor", "P8300002": "Eastmoor", "P8300003": "Eastmoor"},
        DAYS[1]: {
            "P8300001": "Northfield",
            "P8300002": "Eastmoor",
            "P8300003": "Eastmoor",
            "P8300004": "Eastmoor",
        },
        DAYS[2]: {"P8300001": "Northfield", "P8300003": "Eastmoor", "P8300004": "Eastmoor"},
    }
    # a day no build closed reads the day before it
    assert _versions_printed(dbt, BETWEEN) == versions[DAYS[1]]
    success, errors = dbt.run_operation(
        "as_of_business_date", json.dumps({"model": "silver_patients", "date": "2000-01-03"})
    )
    assert not success and "no business day closed on or before 2000-01-03" in errors, errors
    history = spark.sql("describe history silver.patients").collect()
    tagged = {
        json.loads(row["userMetadata"]).get("business_date")
        for row in history
        if row["version"] in versions.values()
    }
    assert tagged == set(DAYS)


COPIES = {
    "day_one": "savepoints.silver__patients__day_one",
    "day_two": "savepoints.silver__patients__day_two",
}


def _pseudonym(spark: SparkSession, subject: str) -> str:
    return spark.sql(
        f"select subject_pseudonym from privacy.subject_keys where subject_id = '{subject}'"
    ).first()[0]


def _registry(spark: SparkSession) -> dict[str, dict]:
    return {
        row["savepoint_name"]: row.asDict()
        for row in spark.sql("select * from privacy.savepoints").collect()
    }


def test_a_savepoint_keeps_a_business_day_as_it_was_loaded(
    days: dict[str, list[tuple]], dbt: DbtProject, spark: SparkSession
) -> None:
    # refused with the lakehouse's state, nothing made: a day no build closed, a
    # savepoint that does not exist
    for macro, args, message in (
        (
            "savepoint",
            {"model": "silver_patients", "name": "early", "business_date": "2000-01-03"},
            "no business day closed on or before 2000-01-03",
        ),
        (
            "restore_version",
            {"model": "silver_patients", "savepoint": "day_one"},
            "has no savepoint day_one",
        ),
    ):
        success, errors = dbt.operation(macro, args, expect_success=False)
        assert not success and message in errors, errors
    assert not spark.catalog.tableExists("savepoints.silver__patients__early")

    for name, day in (("day_one", DAYS[0]), ("day_two", DAYS[1])):
        dbt.operation(
            "savepoint",
            {"model": "silver_patients", "name": name, "business_date": day, "reason": "month end"},
        )
        assert _rows(spark, f"select * from {COPIES[name]}") == days[day]
    kept = _registry(spark)
    assert {name: (row["status"], row["business_date"]) for name, row in kept.items()} == {
        "day_one": ("kept", DAYS[0]),
        "day_two": ("kept", DAYS[1]),
    }
    assert kept["day_two"]["source_version"] == _versions_printed(dbt, DAYS[1])
    assert kept["day_two"]["savepoint_relation"] == COPIES["day_two"]
    # the copy keeps statistics only where its relation does, and its change feed
    properties = {
        row[0]: row[1] for row in spark.sql(f"show tblproperties {COPIES['day_two']}").collect()
    }
    source = {row[0]: row[1] for row in spark.sql("show tblproperties silver.patients").collect()}
    for key in (
        "delta.dataSkippingStatsColumns",
        "delta.dataSkippingNumIndexedCols",
        "delta.enableChangeDataFeed",
        "delta.enableDeletionVectors",
        "delta.enableInCommitTimestamps",
    ):
        assert properties.get(key) == source.get(key)
    # its commits are dated from its own log, from its first version
    assert properties.get("delta.enableInCommitTimestamps") == "true"
    assert properties.get("delta.inCommitTimestampEnablementVersion") in (None, "0")
    # a name is kept once per model
    success, errors = dbt.operation(
        "savepoint", {"model": "silver_patients", "name": "day_two"}, expect_success=False
    )
    assert not success and "already has a savepoint day_two" in errors, errors
    listed = dbt.compile_inline("{{ gdpr_lakehouse.savepoints(model='silver_patients') }}")
    assert "day_one" in listed and "day_two" in listed
    # kept aside for the restore test below: the row of the patient the next test erases
    spark.sql("create schema if not exists scratch")
    spark.sql(
        "create or replace table scratch.business_erased_row using delta as "
        "select * from silver.patients "
        f"where patient_pseudonym = '{_pseudonym(spark, 'P8300004')}'"
    )


def test_reading_the_past_never_brings_an_erased_person_back(
    days: dict[str, list[tuple]], dbt: DbtProject, spark: SparkSession
) -> None:
    pseudonym = spark.sql(
        "select subject_pseudonym from privacy.subject_keys where subject_id = 'P8300004'"
    ).first()[0]
    dbt.operation("request_erasure", {"subject_ids": ["P8300004"], "reason": "business time"})
    dbt.operation("gdpr_erase")
    version = _versions_printed(dbt, DAYS[1])
    # time travel still holds the row (ciphertext whose key is gone, under a pseudonym)
    held = spark.sql(
        f"select count(*) from silver.patients version as of {version} "
        f"where patient_pseudonym = '{pseudonym}'"
    ).first()[0]
    assert held == 1
    sql = dbt.compile_inline(
        f"select * from {{{{ gdpr_lakehouse.as_of(ref('silver_patients'), '{DAYS[1]}') }}}} as p"
    )
    assert f"version as of {version}" in sql
    read = _rows(spark, sql)
    assert read == [row for row in days[DAYS[1]] if pseudonym not in row]
    assert len(read) == len(days[DAYS[1]]) - 1

    # once VACUUM has deleted the files an old day needs, that day is refused, never
    # read from what is left (as a purge of the erasure does, with a zero retention)
    spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = false")
    spark.sql("vacuum silver.patients retain 0 hours")
    spark.sql("set spark.databricks.delta.retentionDurationCheck.enabled = true")
    success, errors = dbt.run_operation(
        "as_of_business_date", json.dumps({"model": "silver_patients", "date": DAYS[0]})
    )
    assert not success and "VACUUM deleted the files older versions need" in errors, errors


def test_a_savepoint_outlives_vacuum_forgets_the_erased_and_restores_without_them(
    days: dict[str, list[tuple]], dbt: DbtProject, spark: SparkSession, capsys
) -> None:
    """After the test above: P8300004 erased, silver.patients vacuumed to its newest
    version, so the version that closed DAYS[0] is gone from time travel."""
    gone = spark.sql("select * from scratch.business_erased_row").collect()
    assert len(gone) == 1
    erased = gone[0]["patient_pseudonym"]
    # gdpr_erase erased the person from the copy too, with evidence
    assert _rows(spark, f"select * from {COPIES['day_two']}") == [
        row for row in days[DAYS[1]] if erased not in row
    ]
    evidence = spark.sql(
        "select action, rows_affected from privacy.erasure_evidence "
        f"where relation = '{COPIES['day_two']}'"
    ).collect()
    assert [(row[0], row[1]) for row in evidence] == [("delete", 1)]
    # purge and the forensic scan reach the copies as relations of their own
    from python_jobs import forensic_scan, purge
    from python_jobs.relations import delta_relations

    request = spark.sql(
        "select request_id from privacy.erasure_requests where subject_id = 'P8300004'"
    ).first()[0]
    purge.main(["--dry-run", "--request-id", request], spark=spark)
    assert COPIES["day_two"] in capsys.readouterr().out
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    copies = forensic_scan.savepoint_copies(delta_relations(dbt.manifest()), warehouse)
    assert {f"{c.schema}.{c.identifier}" for c in copies} == set(COPIES.values())

    # a batch of two requests: each copy's evidence split per request (from its feed)
    both = {subject: _pseudonym(spark, subject) for subject in ("P8300001", "P8300003")}
    before = spark.sql("describe history silver.patients limit 1").first()["version"]
    dbt.operation("gdpr_erase", {"subject_ids": sorted(both), "reason": "savepoints"})
    for copy in COPIES.values():
        split = spark.sql(
            "select requests.subject_id, evidence.rows_affected "
            "from privacy.erasure_evidence as evidence inner join privacy.erasure_requests as requests "
            f"on evidence.request_id = requests.request_id where evidence.relation = '{copy}' "
            "and requests.subject_id in ('P8300001', 'P8300003')"
        ).collect()
        assert sorted((row[0], row[1]) for row in split) == [("P8300001", 1), ("P8300003", 1)]
        left = spark.sql(
            f"select count(*) from {copy} where patient_pseudonym in "
            f"('{both['P8300001']}', '{both['P8300003']}')"
        ).first()[0]
        assert left == 0

    # a savepoint of the version before that erasure, killed right after its copy: the
    # copy holds both, the registry says `creating`, and gdpr_erase erases from it all
    # the same; the next command heals it (re-erased, kept)
    success, errors = dbt.invoke_errors(
        "run-operation",
        "savepoint",
        "--args",
        json.dumps({"model": "silver_patients", "name": "interrupted", "version": before}),
        "--vars",
        json.dumps({"gdpr_lakehouse_fault": "after_savepoint_copy"}),
    )
    assert not success and "fault injected" in errors, errors
    interrupted = "savepoints.silver__patients__interrupted"
    assert _registry(spark)["interrupted"]["status"] == "creating"
    held = (
        f"select count(*) from {interrupted} where patient_pseudonym in "
        f"('{both['P8300001']}', '{both['P8300003']}')"
    )
    assert spark.sql(held).first()[0] == 2
    dbt.operation("gdpr_erase")
    assert _registry(spark)["interrupted"]["status"] == "kept"
    assert spark.sql(held).first()[0] == 0
    dbt.operation("release_savepoint", {"model": "silver_patients", "name": "interrupted"})

    # a copy that holds an erased person (one an older version made, or written by
    # hand): restoring from it erases them again. The version it keeps is past VACUUM.
    spark.sql(f"insert into {COPIES['day_one']} select * from scratch.business_erased_row")
    success, errors = dbt.run_operation(
        "restore_version", json.dumps({"model": "silver_patients", "version": 0})
    )
    assert not success and ("vacuumed" in errors or "retention" in errors), errors
    dbt.operation(
        "restore_version",
        {"model": "silver_patients", "savepoint": "day_one", "reason": "back to day one"},
    )
    assert _rows(spark, "select * from silver.patients") == [
        row for row in days[DAYS[0]] if not any(p in row for p in both.values())
    ]
    log = spark.sql(
        "select status, rows_reerased, target_version from privacy.restore_log "
        "where relation = 'silver.patients' order by started_at desc limit 1"
    ).first()
    assert (log["status"], log["rows_reerased"]) == ("reapplied", 1)
    assert log["target_version"] == _registry(spark)["day_one"]["source_version"]

    # a table in the savepoint schema no savepoint accounts for stops every command
    # that must erase from it, rather than leave it out
    spark.sql("create table savepoints.stray using delta as select 1 as x")
    try:
        success, errors = dbt.operation("gdpr_erase", {"dry_run": True}, expect_success=False)
        assert not success and "no savepoint" in errors and "savepoints.stray" in errors, errors
        # and purge, which would leave it unpurged
        with pytest.raises(ProjectError, match=r"savepoints\.stray .*no kept savepoint holds it"):
            purge.main(["--dry-run"], spark=spark)
    finally:
        spark.sql("drop table savepoints.stray")

    # released: the copy is dropped, the registry says who and when, a restore from it
    # is refused
    dbt.operation("release_savepoint", {"model": "silver_patients", "name": "day_one"})
    assert not spark.catalog.tableExists(COPIES["day_one"])
    released = _registry(spark)["day_one"]
    assert released["status"] == "released" and released["released_at"] is not None
    # what was erased from it is purged with it: no request waits on a dropped copy
    settled = spark.sql(
        "select status, purged_at from privacy.erasure_evidence "
        f"where relation = '{COPIES['day_one']}'"
    ).collect()
    assert settled and all(row[0] == "purged" and row[1] is not None for row in settled)
    success, errors = dbt.operation(
        "restore_version",
        {"model": "silver_patients", "savepoint": "day_one"},
        expect_success=False,
    )
    assert not success and "has no savepoint day_one" in errors, errors
    dbt.operation("release_savepoint", {"model": "silver_patients", "name": "day_two"})


def test_an_erasure_reads_which_copies_exist_only_after_its_tombstone(
    days: dict[str, list[tuple]], dbt: DbtProject, spark: SparkSession
) -> None:
    """Seam: gdpr_erase read the savepoint registry (its plan) before it
    wrote its tombstone. A savepoint registered in between was missed by the erasure,
    and its own re-erasure, reading the tombstones before they were written, kept the
    subject too: a copy holding an erased person that nothing repairs. Guarantee: the
    erasure's plan, copies included, is read after its tombstone is written; a
    savepoint registers before it copies and reads the tombstones after (so either the
    erasure sees the copy or the copy's re-erasure sees the tombstone)."""
    from dbt.cli.main import dbtRunner

    queries: list[str] = []

    def collect(event) -> None:
        if event.info.name == "SQLQuery":  # dbt's query comment first, then the statement
            text = re.sub(r"^\s*/\*.*?\*/", "", event.data.sql, flags=re.S)
            queries.append(" ".join(text.split()).lower())

    dbt.operation("savepoint", {"model": "silver_patients", "name": "race_guard"})
    try:
        result = dbt._run(
            dbtRunner(callbacks=[collect]),
            ("run-operation", "gdpr_erase", "--args", json.dumps({"subject_ids": ["P8300002"]})),
        )
        assert result.success, result.exception
    finally:
        dbt.operation("release_savepoint", {"model": "silver_patients", "name": "race_guard"})
    # a write may run inside a retry block (begin ... merge into ... end): searched
    tombstone = next(
        i
        for i, q in enumerate(queries)
        if re.search(r"(merge|insert) into \S*erasure_tombstones\b", q)
    )
    # a small batch's DELETE, or a MERGE
    writes = [
        i
        for i, q in enumerate(queries)
        if re.search(r"(merge into|delete from) \S*race_guard\b", q)
    ]
    assert writes, [q[:160] for q in queries if "race_guard" in q]
    copy_erased = writes[0]
    registry_reads = [
        i
        for i, q in enumerate(queries[:copy_erased])
        if re.search(r"from privacy\.savepoints\b", q)
    ]
    assert registry_reads, "the erasure never read the savepoint registry"
    assert tombstone < registry_reads[-1] < copy_erased, (tombstone, registry_reads, copy_erased)
