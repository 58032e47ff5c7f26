"""restore_version end to end, on real dbt + Spark + Delta: rollback that never
resurrects an erased person.

A new ingestion batch gives every relation fresh history; a patient and a web-shop
user are erased; then, through the commands a user runs: an accidental DELETE is
undone (shared reference 000), bronze_patients is restored with cascade to before
the erasure (the patient stays at 0 rows everywhere, the Change Data Feed shows the
re-erasure, the evidence records it), bronze_orders by timestamp (the user's orders
are anonymized again), a dry run changes nothing, two interrupted restores are
healed (by gdpr_erase and by restore_version), and bad input changes nothing.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs.relations import delta_relations
from tests.dbt_harness import DbtProject

pytestmark = pytest.mark.functional

PATIENTS = 120


def _latest(spark: SparkSession, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def _versions(spark: SparkSession, tables: list[str]) -> dict[str, int]:
    return {table: _latest(spark, table) for table in tables}


def _rows(spark: SparkSession, query: str) -> list[str]:
    """Every row of a query as sorted JSON: an exact multiset to compare."""
    return sorted(
        row[0] for row in spark.sql(f"select to_json(struct(*)) from ({query}) as q").collect()
    )


def _count(spark: SparkSession, table: str, key: str, value: str) -> int:
    return spark.sql(f"select count(*) from {table} where `{key}` = '{value}'").first()[0]


@pytest.fixture(scope="module")
def history(dbt: DbtProject, spark: SparkSession) -> dict:
    """Fresh history: a new batch built, then versions recorded, then one patient and
    one user erased."""
    if not spark.catalog.tableExists("privacy.restore_log"):
        generate.main(["--patients", str(PATIENTS), "--batch", "1"])
        dbt.invoke("build")
    generate.main(["--patients", str(PATIENTS), "--batch", "2"])
    dbt.invoke("build", "--exclude", "resource_type:test")
    relations = {r.name: r for r in delta_relations(dbt.manifest())}
    patient_id, pseudonym = spark.sql(
        "select k.subject_id, k.subject_pseudonym from privacy.subject_keys k "
        "join bronze.patients b on b.patient_pseudonym = k.subject_pseudonym "
        "join bronze.encounters e on e.patient_pseudonym = k.subject_pseudonym "
        "join silver.patients s on s.patient_pseudonym = k.subject_pseudonym "
        "join snapshots.patients n on n.patient_pseudonym = k.subject_pseudonym "
        "group by k.subject_id, k.subject_pseudonym order by count(*) desc, k.subject_id limit 1"
    ).first()
    user_id, user_pseudonym = spark.sql(
        "select k.subject_id, k.subject_pseudonym from bronze.orders o "
        "join bronze.users u using (user_pseudonym) "
        "join privacy.subject_keys k on k.subject_pseudonym = o.user_pseudonym "
        "group by k.subject_id, k.subject_pseudonym order by count(*) desc, k.subject_id limit 1"
    ).first()
    tables = ["bronze.patients", "silver.patients", "bronze.orders", "snapshots.patients"]
    before = _versions(spark, tables)
    time.sleep(2)
    # the moment before erasure, as a user would note it (UTC, whole seconds)
    moment = (datetime.now(UTC) - timedelta(seconds=1)).strftime("%Y-%m-%d %H:%M:%S")
    time.sleep(2)
    dbt.operation("gdpr_erase", {"subject_ids": [patient_id, user_id]})
    requests = {
        row[0]: row[1]
        for row in spark.sql(
            f"select subject_id, request_id from privacy.erasure_requests "
            f"where subject_id in ('{patient_id}', '{user_id}') and status = 'erased'"
        ).collect()
    }
    return {
        "relations": relations,
        "patient": patient_id,
        "pseudonym": pseudonym,
        "user": user_id,
        "user_pseudonym": user_pseudonym,
        "before": before,
        "moment": moment,
        "requests": requests,
        "tables": tables,
    }


def test_accidental_delete_is_undone(history: dict, dbt: DbtProject, spark: SparkSession) -> None:
    """Shared reference 000: a DELETE by mistake, then restore_version to version N."""
    good = _latest(spark, "bronze.patients")
    wanted = _rows(spark, f"select * from bronze.patients version as of {good}")
    deleted = spark.sql("delete from bronze.patients where patient_pseudonym < '8'")
    assert deleted is not None
    assert spark.table("bronze.patients").count() < len(wanted)
    dbt.operation(
        "restore_version",
        {"model": "bronze_patients", "version": good, "reason": "undo DELETE"},
    )
    assert _rows(spark, "select * from bronze.patients") == wanted
    commit = spark.sql("describe history bronze.patients limit 5").collect()
    restore = next(row for row in commit if row["operation"] == "RESTORE")
    tag = json.loads(restore["userMetadata"])
    assert tag["purpose"] == "restore" and tag["reason"] == "undo DELETE"
    assert tag["actor"] == "pytest" and tag["restore_id"].startswith("rst-")


def test_dry_run_changes_nothing(
    history: dict, dbt: DbtProject, spark: SparkSession, capfd
) -> None:
    watched = [*history["tables"], "privacy.restore_log", "privacy.erasure_evidence"]
    versions = _versions(spark, watched)
    capfd.readouterr()
    dbt.operation(
        "restore_version",
        {
            "model": "bronze_patients",
            "version": history["before"]["bronze.patients"],
            "dry_run": True,
            "cascade": True,
        },
    )
    out = capfd.readouterr().out
    assert _versions(spark, watched) == versions
    assert "nothing was changed" in out
    line = next(line for line in out.splitlines() if line.strip().startswith("bronze.patients"))
    # the target version still holds the erased patient: 1 row would be erased again
    assert line.split()[-1] == "1"


@pytest.fixture(scope="module")
def cascaded(history: dict, dbt: DbtProject, spark: SparkSession) -> dict:
    """bronze_patients restored with cascade to its version before the erasure."""
    version = history["before"]["bronze.patients"]
    old = _rows(
        spark,
        f"select * from bronze.patients version as of {version} "
        f"where patient_pseudonym != '{history['pseudonym']}'",
    )
    dbt.operation(
        "restore_version",
        {"model": "bronze_patients", "version": version, "cascade": True, "reason": "cascade test"},
    )
    restore_id = spark.sql(
        "select restore_id from privacy.restore_log where relation = 'bronze.patients' "
        "order by started_at desc limit 1"
    ).first()[0]
    return {"old": old, "version": version, "restore_id": restore_id}


def test_restore_to_before_erasure_keeps_the_subject_erased(
    history: dict, cascaded: dict, spark: SparkSession
) -> None:
    assert _rows(spark, "select * from bronze.patients") == cascaded["old"]
    pseudonym = history["pseudonym"]
    assert _count(spark, "bronze.patients", "patient_pseudonym", pseudonym) == 0
    assert _count(spark, "bronze.encounters", "patient_pseudonym", pseudonym) == 0
    for table in ["silver.patients", "snapshots.patients", "gold.patient_summary"]:
        assert _count(spark, table, "patient_pseudonym", pseudonym) == 0, table


def test_cascade_restores_downstream_to_the_same_point(
    history: dict, cascaded: dict, spark: SparkSession
) -> None:
    log = {
        row["relation"]: row
        for row in spark.sql(
            f"select * from privacy.restore_log where restore_id = '{cascaded['restore_id']}'"
        ).collect()
    }
    assert {"bronze.patients", "silver.patients", "snapshots.patients"} <= set(log)
    assert all(row["status"] == "reapplied" for row in log.values())
    # silver.patients went back to the version it had before the erasure
    silver = log["silver.patients"]
    assert silver["target_version"] == history["before"]["silver.patients"]
    assert silver["reason"] == "cascade test"
    for relation in ["bronze.patients", "silver.patients", "snapshots.patients"]:
        row = log[relation]
        assert row["restore_commit_version"] == row["version_before"] + 1
        assert row["rows_reerased"] >= 1
        assert row["reapply_commit_version"] == row["restore_commit_version"] + 1


def test_change_data_feed_shows_the_reerasure(
    history: dict, cascaded: dict, spark: SparkSession
) -> None:
    row = spark.sql(
        f"select reapply_commit_version from privacy.restore_log "
        f"where restore_id = '{cascaded['restore_id']}' and relation = 'bronze.patients'"
    ).first()
    version = row[0]
    changes = spark.sql(
        f"select patient_pseudonym, _change_type from table_changes('bronze.patients', {version}, {version})"
    ).collect()
    assert [(r[0], r[1]) for r in changes] == [(history["pseudonym"], "delete")]
    commit = spark.sql("describe history bronze.patients limit 10").collect()
    tags = {r["version"]: json.loads(r["userMetadata"] or "{}") for r in commit}
    assert tags[version]["purpose"] == "reapply_erasure"
    assert tags[version]["restore_id"] == cascaded["restore_id"]
    assert tags[version - 1]["purpose"] == "restore"


def test_evidence_records_the_reerasure(history: dict, cascaded: dict, spark: SparkSession) -> None:
    request_id = history["requests"][history["patient"]]
    rows = spark.sql(
        f"select relation, rows_affected, status, detail from privacy.erasure_evidence "
        f"where request_id = '{request_id}' and action = 'reapply'"
    ).collect()
    by_relation = {r["relation"]: r for r in rows}
    assert by_relation["bronze.patients"]["rows_affected"] == 1
    assert by_relation["silver.patients"]["rows_affected"] == 1
    assert cascaded["restore_id"] in by_relation["bronze.patients"]["detail"]
    assert all(r["status"] == "erased" for r in rows)
    # the original evidence rows are untouched
    original = spark.sql(
        f"select count(*) from privacy.erasure_evidence where request_id = '{request_id}' "
        f"and action in ('delete', 'anonymize', 'shred')"
    ).first()[0]
    assert original >= 7


def test_restore_by_timestamp_anonymizes_again(
    history: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    version = history["before"]["bronze.orders"]
    user = history["user_pseudonym"]
    expected = _rows(
        spark,
        # re-anonymized: no user (an order is stored under its anonymous id throughout)
        f"select order_ref, case when user_pseudonym = '{user}' then null else user_pseudonym end "
        "as user_pseudonym, amount "
        f"from bronze.orders version as of {version}",
    )
    assert _count(spark, f"bronze.orders version as of {version}", "user_pseudonym", user) > 0
    # the storage account copied or restored from a backup: every file of the table's
    # log modified now. Delta dated a commit by its file's modification time, so every
    # version looked later than the moment; In-Commit Timestamps date it from the log
    location = spark.sql("describe detail bronze.orders").first()["location"]
    now = time.time()
    for path in (Path(location.removeprefix("file:")) / "_delta_log").rglob("*"):
        os.utime(path, (now, now))
    dbt.operation("restore_version", {"model": "bronze_orders", "timestamp": history["moment"]})
    assert _count(spark, "bronze.orders", "user_pseudonym", user) == 0
    assert _rows(spark, "select order_ref, user_pseudonym, amount from bronze.orders") == expected
    log = spark.sql(
        "select target_version, status from privacy.restore_log where relation = 'bronze.orders' "
        "order by started_at desc limit 1"
    ).first()
    assert log["target_version"] == version and log["status"] == "reapplied"


def test_interrupted_restore_is_healed_by_gdpr_erase(
    history: dict, cascaded: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    pseudonym = history["pseudonym"]
    dbt_args = ["--vars", json.dumps({"gdpr_lakehouse_fault": "after_restore"})]
    success, errors = dbt.invoke_errors(
        "run-operation",
        "restore_version",
        "--args",
        json.dumps(
            {"model": "snapshots_patients", "version": history["before"]["snapshots.patients"]}
        ),
        *dbt_args,
    )
    assert not success and "fault injected" in errors
    # the crash state: the RESTORE committed, the erased patient is back, the log says so
    assert _count(spark, "snapshots.patients", "patient_pseudonym", pseudonym) > 0
    assert (
        spark.sql("select count(*) from privacy.restore_log where status = 'restoring'").first()[0]
        == 1
    )
    dbt.operation("gdpr_erase")
    assert _count(spark, "snapshots.patients", "patient_pseudonym", pseudonym) == 0
    assert (
        spark.sql("select count(*) from privacy.restore_log where status = 'restoring'").first()[0]
        == 0
    )


def test_interrupted_restore_is_healed_by_restore_version(
    history: dict, cascaded: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    pseudonym = history["pseudonym"]
    success, errors = dbt.invoke_errors(
        "run-operation",
        "restore_version",
        "--args",
        json.dumps({"model": "silver_patients", "version": history["before"]["silver.patients"]}),
        "--vars",
        json.dumps({"gdpr_lakehouse_fault": "after_restore"}),
    )
    assert not success and "fault injected" in errors
    assert _count(spark, "silver.patients", "patient_pseudonym", pseudonym) == 1
    # any next restore_version heals first (here a dry run of another table would not:
    # a dry run changes nothing, so a real one)
    dbt.operation(
        "restore_version",
        {"model": "bronze_patients", "version": _latest(spark, "bronze.patients")},
    )
    assert _count(spark, "silver.patients", "patient_pseudonym", pseudonym) == 0
    healed = spark.sql(
        "select status, detail from privacy.restore_log where relation = 'silver.patients' "
        "order by started_at desc limit 1"
    ).first()
    assert healed["status"] == "reapplied" and "again in commit" in healed["detail"]


def test_vacuumed_version_is_refused_with_the_oldest_restorable(
    history: dict, cascaded: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """bronze.users lost the erased user by deletion vector; REORG PURGE + VACUUM 0 h
    delete the old files, so versions before the REORG cannot come back."""
    old = _latest(spark, "bronze.users") - 1
    spark.sql("reorg table bronze.users apply (purge)")
    reorg = _latest(spark, "bronze.users")
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        spark.sql("vacuum bronze.users retain 0 hours")
    finally:
        spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "true")
    versions = _versions(spark, ["bronze.users", "privacy.restore_log"])
    success, errors = dbt.operation(
        "restore_version", {"model": "bronze_users", "version": old}, expect_success=False
    )
    assert not success
    assert f"the files of version {old} of bronze.users were vacuumed" in errors
    assert f"the oldest restorable version is {reorg}" in errors
    assert _versions(spark, ["bronze.users", "privacy.restore_log"]) == versions


def test_table_history_explains_every_version(
    history: dict, cascaded: dict, dbt: DbtProject, capfd
) -> None:
    capfd.readouterr()
    dbt.operation("table_history", {"model": "bronze_patients", "limit": 200})
    out = capfd.readouterr().out
    assert "restore_version reaches back to version" in out
    assert f"reapply_erasure {cascaded['restore_id']}" in out
    assert "restore rst-" in out and "erase req-" in out
    success, errors = dbt.operation("table_history", {"model": "nope"}, expect_success=False)
    assert not success and "is not a model, snapshot or seed" in errors


def test_compliance_catches_a_bare_restore_and_restore_version_mends_it(
    history: dict, cascaded: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """A RESTORE typed by hand brings the erased patient back; the compliance test
    says so; a restore_version to the same state re-applies the erasures."""
    current = _latest(spark, "silver.patients")
    spark.sql(
        f"restore table silver.patients to version as of {history['before']['silver.patients']}"
    )
    assert _count(spark, "silver.patients", "patient_pseudonym", history["pseudonym"]) == 1
    result = dbt.invoke("test", "--select", "no_erased_subject_present", expect_success=False)
    assert _test_statuses(result) == ["fail"]
    dbt.operation("restore_version", {"model": "silver_patients", "version": current})
    assert _count(spark, "silver.patients", "patient_pseudonym", history["pseudonym"]) == 0
    result = dbt.invoke("test", "--select", "no_erased_subject_present")
    assert _test_statuses(result) == ["pass"]


def test_a_resurrection_made_outside_the_engine_is_repaired_and_never_reported_erased(
    history: dict, cascaded: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """Seam: a rollback made outside the engine (a RESTORE TABLE typed by
    hand, a backup copied in) brings an erased patient back, and the compliance test
    says so; but erasing the patient again erased nothing keyed by pseudonym (the
    tombstone keeps only a keyed hash of it once the erasure is done) and reported
    `erased`. Guarantee: gdpr_erase of a subject erased before re-applies every
    tombstone to every relation of the plan, and so does reapply_erasures, the
    operation the compliance test names as its fix (dry run first: it counts, changes
    nothing); a second run finds nothing to do."""
    pseudonym = history["pseudonym"]
    spark.sql(
        f"restore table silver.patients to version as of {history['before']['silver.patients']}"
    )
    assert _count(spark, "silver.patients", "patient_pseudonym", pseudonym) == 1
    # erased again, as a user would first try: the patient must not be left behind
    dbt.operation("gdpr_erase", {"subject_ids": [history["patient"]], "reason": "again"})
    assert _count(spark, "silver.patients", "patient_pseudonym", pseudonym) == 0
    # the same rollback again, repaired by the operation the compliance test names
    again = _latest(spark, "silver.patients")
    spark.sql(
        f"restore table silver.patients to version as of {history['before']['silver.patients']}"
    )
    result = dbt.invoke("test", "--select", "no_erased_subject_present", expect_success=False)
    assert _test_statuses(result) == ["fail"]
    [test] = [r for r in result.result.results if r.node.resource_type == "test"]
    assert test.node.config.meta["fix"] == "dbt run-operation reapply_erasures"
    dbt.operation("reapply_erasures", {"dry_run": True})
    assert _count(spark, "silver.patients", "patient_pseudonym", pseudonym) == 1
    dbt.operation("reapply_erasures")
    assert _count(spark, "silver.patients", "patient_pseudonym", pseudonym) == 0
    result = dbt.invoke("test", "--select", "no_erased_subject_present")
    assert _test_statuses(result) == ["pass"]
    written = _latest(spark, "silver.patients")
    dbt.operation("reapply_erasures")
    assert _latest(spark, "silver.patients") == written > again


def test_a_clone_outside_the_plan_stops_every_erasure_until_dropped(
    history: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """Seam: a shallow clone of a relation of the plan (`dbt clone` into
    another schema, CREATE TABLE ... SHALLOW CLONE) keeps reading the files its source
    held when it was made: gdpr_erase erased the source and reported the subject erased
    while the clone still showed the patient. Guarantee: gdpr_erase and
    reapply_erasures refuse while such a clone exists, naming it and the statement that
    clears it, and change nothing; the compliance test no_clone_outside_the_plan fails
    until it is dropped, by name or by path."""
    subject, pseudonym = spark.sql(
        "select k.subject_id, k.subject_pseudonym from privacy.subject_keys k "
        "join silver.patients s on s.patient_pseudonym = k.subject_pseudonym "
        "order by k.subject_id limit 1"
    ).first()
    spark.sql("create schema if not exists sandbox")
    location = spark.sql("describe detail silver.patients").first()["location"]
    clones = {
        "sandbox.patients_copy": "shallow clone silver.patients",
        "sandbox.patients_by_path": f"shallow clone delta.`{location}`",
    }
    try:
        for clone, made in clones.items():
            spark.sql(f"create table {clone} {made}")
        assert _count(spark, "sandbox.patients_copy", "patient_pseudonym", pseudonym) == 1
        requests = spark.sql("select count(*) from privacy.erasure_requests").first()[0]
        silver = _latest(spark, "silver.patients")
        for operation, args in (
            ("gdpr_erase", {"subject_ids": [subject]}),
            ("reapply_erasures", {}),
        ):
            success, errors = dbt.invoke_errors(
                "run-operation", operation, "--args", json.dumps(args)
            )
            assert not success, operation
            for clone in clones:
                assert f"DROP TABLE {clone}" in errors, errors
            assert "Nothing was changed" in errors
        assert spark.sql("select count(*) from privacy.erasure_requests").first()[0] == requests
        assert _latest(spark, "silver.patients") == silver
        result = dbt.invoke("test", "--select", "no_clone_outside_the_plan", expect_success=False)
        assert _test_statuses(result) == ["fail"]
    finally:
        for clone in clones:
            spark.sql(f"drop table if exists {clone}")
    assert _test_statuses(dbt.invoke("test", "--select", "no_clone_outside_the_plan")) == ["pass"]


def _test_statuses(result) -> list[str]:
    """The statuses of the tests a `dbt test` ran (not its hooks)."""
    return [str(r.status) for r in result.result.results if r.node.resource_type == "test"]
