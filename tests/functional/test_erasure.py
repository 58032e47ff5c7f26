"""The right to be forgotten, end to end, on real dbt + Spark + Delta.

One patient and one web-shop user are erased through the commands a user runs
(`request_erasure`, `gdpr_erase`), after a dry run and a rejected injection attempt;
then the module checks every declared relation and snapshot, the vault, the
ciphertext, other subjects' checksums, evidence and commit tags; re-ingestion,
a crash-resume, a legal hold and the physical purge follow.
"""

from __future__ import annotations

import calendar
import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs import purge
from python_jobs.project import landing_dir
from python_jobs.relations import DeltaRelation, delta_relations
from tests.dbt_harness import DbtProject, build_once, decrypted, record_ref

pytestmark = pytest.mark.functional

PATIENTS = 120


def _plan(relations: list[DeltaRelation]) -> list[DeltaRelation]:
    return [
        r
        for r in relations
        if r.privacy.get("subject_key") and r.privacy.get("on_erasure") in ("delete", "anonymize")
    ]


def _key_value(relation: DeltaRelation, subject: dict) -> str | None:
    if relation.privacy.get("subject_type") not in (None, subject["type"]):
        return None
    if relation.privacy.get("subject_key_kind") == "pseudonym":
        return subject["pseudonym"]
    return subject["id"]


def _count(spark: SparkSession, relation: DeltaRelation, value: str) -> int:
    key = relation.privacy["subject_key"]
    return spark.sql(
        f"select count(*) from {relation.qualified_name} where `{key}` = '{value}'"
    ).first()[0]


def _versions(spark: SparkSession, relations: list[DeltaRelation]) -> dict[str, int]:
    return {
        r.name: spark.sql(f"describe history {r.qualified_name} limit 1").first()["version"]
        for r in relations
    }


def _checksums(
    spark: SparkSession, relations: list[DeltaRelation], excluded: list[str]
) -> dict[str, tuple]:
    """Row count and an order-free hash of every row whose subject is not excluded."""
    sums = {}
    quoted = ", ".join(f"'{value}'" for value in excluded)
    for r in relations:
        key = r.privacy["subject_key"]
        columns = [
            # maps cannot be hashed; their JSON can
            f"to_json(`{f.name}`)" if f.dataType.typeName() == "map" else f"`{f.name}`"
            for f in spark.table(r.qualified_name).schema
            # what anonymization or a rebuild legitimately changes
            if f.name
            not in ("ingested_at", "dbt_updated_at", "dbt_valid_from", "dbt_scd_id", "created_at")
        ]
        row = spark.sql(
            f"select count(*), sum(hash({', '.join(columns)})) "
            f"from {r.qualified_name} where `{key}` is not null and `{key}` not in ({quoted})"
        ).first()
        sums[r.name] = (row[0], row[1])
    return sums


def _subject(spark: SparkSession, subject_id: str) -> dict:
    row = spark.sql(
        f"select subject_type, subject_pseudonym, data_key from privacy.subject_keys where subject_id = '{subject_id}'"
    ).first()
    return {"id": subject_id, "type": row[0], "pseudonym": row[1], "key": bytes(row[2])}


class _Stream:
    """A Structured Streaming reader of bronze.patients, run to catch up (availableNow)."""

    def __init__(self, spark: SparkSession, folder: Path) -> None:
        self.spark, self.folder, self.rows = spark, folder, 0

    def catch_up(self) -> int:
        # by path: readStream.table() on a metastore Delta table that dbt created fails
        # with DELTA_UNSUPPORTED_SCHEMA_DURING_READ (the catalog passes its schema)
        location = self.spark.sql("describe detail bronze.patients").first()["location"]
        query = (
            self.spark.readStream.format("delta")
            .option("skipChangeCommits", "true")
            .load(location)
            .writeStream.format("parquet")
            .option("checkpointLocation", str(self.folder / "checkpoint"))
            .option("path", str(self.folder / "out"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        if query.exception() is not None:
            raise AssertionError(f"the stream failed: {query.exception()}")
        return self.spark.read.parquet(str(self.folder / "out")).count()


@pytest.fixture(scope="module")
def lakehouse(dbt: DbtProject, spark: SparkSession) -> dict:
    build_once(dbt, spark, PATIENTS)
    relations = delta_relations(dbt.manifest())
    return {"relations": relations, "plan": _plan(relations)}


@pytest.fixture(scope="module")
def erased(
    lakehouse: dict,
    dbt: DbtProject,
    spark: SparkSession,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict:
    plan = lakehouse["plan"]
    # a patient with encounters who made it to silver (so to the snapshot and gold too)
    patient_id = spark.sql(
        "select k.subject_id from bronze.encounters e "
        "join privacy.subject_keys k on k.subject_pseudonym = e.patient_pseudonym "
        "join silver.patients s on s.patient_pseudonym = k.subject_pseudonym "
        "group by k.subject_id order by count(*) desc, k.subject_id limit 1"
    ).first()[0]
    user_id = spark.sql(
        "select k.subject_id from bronze.orders o join bronze.clicks c using (user_pseudonym) "
        "join bronze.users u using (user_pseudonym) "
        "join privacy.subject_keys k on k.subject_pseudonym = o.user_pseudonym "
        "group by k.subject_id order by count(*) desc, k.subject_id limit 1"
    ).first()[0]
    subjects = [_subject(spark, patient_id), _subject(spark, user_id)]
    keys = [s["id"] for s in subjects] + [s["pseudonym"] for s in subjects]
    before = {
        "counts": {
            (r.name, s["id"]): _count(spark, r, _key_value(r, s))
            for r in plan
            for s in subjects
            if _key_value(r, s)
        },
        "checksums": _checksums(spark, plan, keys),
        "bronze_version": spark.sql("describe history bronze.patients limit 1").first()["version"],
        # orders an earlier suite's erasure left anonymized (test_aggregates erases a user)
        "anonymized_orders": spark.sql(
            "select count(*) from bronze.orders where user_pseudonym is null"
        ).first()[0],
    }
    stream = _Stream(spark, tmp_path_factory.mktemp("erasure_stream"))
    stream.catch_up()  # a stream reading bronze.patients, checkpointed before erasure
    watched = lakehouse["relations"]
    versions = _versions(spark, watched)
    dry = dbt.operation("gdpr_erase", {"dry_run": True, "subject_ids": [patient_id, user_id]})
    after_dry = _versions(spark, watched)
    injection = dbt.operation(
        "gdpr_erase", {"subject_ids": ["P1' OR '1'='1"]}, expect_success=False
    )
    after_injection = _versions(spark, watched)
    dbt.operation(
        "request_erasure",
        {
            "subject_ids": [patient_id, user_id],
            "reason": "patient's Art. 17 request; by letter",
            "requested_by": "dpo@example.org",
        },
    )
    dbt.operation("gdpr_erase")
    stream_rows_after = stream.catch_up()
    return {
        "stream_rows_after": stream_rows_after,
        "subjects": subjects,
        "before": before,
        "versions": (versions, after_dry, after_injection),
        "dry": dry,
        "injection": injection,
    }


def test_dry_run_and_injection_change_nothing(erased: dict) -> None:
    versions, after_dry, after_injection = erased["versions"]
    assert erased["dry"][0]
    assert after_dry == versions
    success, errors = erased["injection"]
    assert not success
    assert "is not a subject id" in errors
    assert after_injection == versions


def test_a_streaming_reader_keeps_working_through_erasure(erased: dict) -> None:
    # skipChangeCommits: the erasure commits (deletes) are skipped, not an error
    assert erased["stream_rows_after"] > 0


def test_erased_subjects_have_no_rows_anywhere(
    erased: dict, lakehouse: dict, spark: SparkSession
) -> None:
    for subject in erased["subjects"]:
        for relation in lakehouse["plan"]:
            value = _key_value(relation, subject)
            if value:
                assert _count(spark, relation, value) == 0, (relation.name, subject["id"])
    # and they were there before: the test erased something real
    assert erased["before"]["counts"][("bronze_encounters", erased["subjects"][0]["id"])] > 0
    assert erased["before"]["counts"][("snapshots_patients", erased["subjects"][0]["id"])] > 0
    assert erased["before"]["counts"][("bronze_clicks", erased["subjects"][1]["id"])] > 0
    # the batch gdpr_erase cached (ids and pseudonyms, in memory) left with the run
    views = [row[1] for row in spark.sql("show views in default").collect()]
    assert not [view for view in views if view.startswith("gdpr_erase_batch_")], views
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()


def test_orders_are_kept_anonymized(erased: dict, spark: SparkSession) -> None:
    user = erased["subjects"][1]
    kept = spark.sql("select count(*) from bronze.orders where user_pseudonym is null").first()[0]
    orders = erased["before"]["counts"][("bronze_orders", user["id"])]
    assert orders > 0 and kept == erased["before"]["anonymized_orders"] + orders
    # under anonymous ids (the web shop's order ids, linked to the user there, hashed
    # under the tombstone key), without the user
    found = spark.sql(
        "select count(*), count(user_pseudonym) from bronze.orders where order_ref in "
        f"(select {record_ref('order_id')} from landing.orders where user_id = '{user['id']}')"
    ).first()
    assert tuple(found) == (orders, 0)


def test_key_is_shredded_and_ciphertext_unreadable(
    erased: dict, spark: SparkSession, lakehouse_dir: Path
) -> None:
    patient = erased["subjects"][0]
    assert (
        spark.sql(
            f"select count(*) from privacy.subject_keys where subject_id = '{patient['id']}'"
        ).first()[0]
        == 0
    )
    version = erased["before"]["bronze_version"]
    old = spark.sql(
        f"select full_name_enc from bronze.patients version as of {version} "
        f"where patient_pseudonym = '{patient['pseudonym']}'"
    ).first()
    assert old is not None and old[0] is not None  # history still holds the ciphertext ...
    readable = spark.sql(
        f"select count(*) from bronze.patients version as of {version} as p "
        "cross join privacy.subject_keys as k "
        f"where p.patient_pseudonym = '{patient['pseudonym']}' "
        f"and {decrypted('p.full_name_enc', 'k.data_key')} is not null"
    ).first()[0]
    assert readable == 0  # ... but no key opens it
    vault_dir = lakehouse_dir / "warehouse" / "privacy.db" / "subject_keys"
    for file in (f for f in vault_dir.rglob("*.parquet") if "_delta_log" not in f.parts):
        keys = pq.read_table(file, columns=["data_key"]).column("data_key").to_pylist()
        assert patient["key"] not in keys, f"the shredded key is still in {file.name}"


def test_other_subjects_are_untouched(erased: dict, lakehouse: dict, spark: SparkSession) -> None:
    keys = [s["id"] for s in erased["subjects"]] + [s["pseudonym"] for s in erased["subjects"]]
    assert _checksums(spark, lakehouse["plan"], keys) == erased["before"]["checksums"]


def test_evidence_is_complete(erased: dict, lakehouse: dict, spark: SparkSession) -> None:
    requests = {
        row["subject_id"]: row
        for row in spark.sql(
            "select * from privacy.erasure_requests where status = 'erased'"
        ).collect()
    }
    for subject in erased["subjects"]:
        request = requests[subject["id"]]
        assert request["shredded_at"] is not None and request["erased_at"] is not None
        assert request["subject_pseudonym"] is None
        assert request["subject_type"] == subject["type"]
        # one calendar month after the day received, to its end (Art. 12(3)): 30 days
        # only in some months, so the test computes it rather than trusting a count
        received = request["received_at"].date()
        month = received.month % 12 + 1
        year = received.year + (received.month == 12)
        last = calendar.monthrange(year, month)[1]
        due = received.replace(year=year, month=month, day=min(received.day, last))
        assert request["deadline"] == datetime.combine(due, time(23, 59, 59)), request["deadline"]
        assert request["requested_by"] == "dpo@example.org"
        assert request["reason"] == "patient's Art. 17 request; by letter"
        evidence = {
            row["relation"]: row
            for row in spark.sql(
                f"select * from privacy.erasure_evidence where request_id = '{request['request_id']}'"
            ).collect()
        }
        for relation in lakehouse["plan"]:
            name = relation.qualified_name.replace("`", "")
            if not _key_value(relation, subject) and relation.privacy.get("role") != "vault":
                continue
            row = evidence[name]
            assert row["status"] == "erased", name
            expected = (
                1
                if relation.privacy.get("role") == "vault"
                else erased["before"]["counts"][(relation.name, subject["id"])]
            )
            assert row["rows_affected"] == expected, name
            if expected and relation.privacy.get("role") != "vault":
                assert row["version_after"] > row["version_before"], name
        assert evidence["privacy.subject_keys"]["purged_at"] is not None


def test_erasure_commits_name_the_requests(erased: dict, spark: SparkSession) -> None:
    request_ids = {
        row[0]
        for row in spark.sql(
            "select request_id from privacy.erasure_requests where status = 'erased'"
        ).collect()
    }
    tags = [
        json.loads(row["userMetadata"])
        for row in spark.sql("describe history bronze.encounters limit 20").collect()
        if row["operation"] in ("MERGE", "DELETE")
        and row["userMetadata"]
        and '"erase"' in row["userMetadata"]
    ]
    assert tags, "no erasure commit on bronze.encounters"
    assert tags[0]["purpose"] == "erase" and tags[0]["actor"] == "pytest"
    assert set(tags[0]["request_ids"]) <= request_ids


def test_a_small_batch_erases_by_pruning_naming_four_hex_digits(
    erased: dict, spark: SparkSession
) -> None:
    """Erasure by pruning (issue 23), end to end: the batch's DELETE on a relation keyed
    by pseudonym (issue 25; a MERGE before) carries the subjects' pseudonym prefixes (4
    hex digits) for Delta's file skipping; the log holds those, never a whole pseudonym
    (test_evidence_is_complete counts what it erased)."""
    patient = erased["subjects"][0]
    deletes = [
        row["operationParameters"]["predicate"]
        for row in spark.sql("describe history silver.patients limit 30").collect()
        if row["operation"] == "DELETE" and '"erase"' in (row["userMetadata"] or "")
    ]
    assert deletes, "no erasure DELETE on silver.patients"
    assert any(
        "StartsWith(patient_pseudonym#" in m and f", {patient['pseudonym'][:4]})" in m
        for m in deletes
    ), deletes
    assert not [m for m in deletes if patient["pseudonym"] in m]


def test_the_sweep_counts_a_relation_only_if_written_since_its_erasure(
    erased: dict, lakehouse: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """gdpr_erase's sweep skips a relation whose newest commit is the batch's erasure,
    made from the version just before it; one more commit of any kind and it counts."""

    def untouched(relation: DeltaRelation, versions: list[int]) -> bool:
        step = f"{{'relation': api.Relation.create(schema='{relation.schema}', identifier='{relation.identifier}')}}"
        rendered = dbt.compile_inline(
            f"{{{{ gdpr_lakehouse._untouched_since_erasure({{'step': {step}, 'versions': {versions}}}) }}}}"
        )
        assert rendered in ("True", "False"), rendered
        return rendered == "True"

    candidates = []
    for relation in lakehouse["plan"]:  # delete and anonymize relations, not the vault
        newest = spark.sql(f"describe history {relation.qualified_name} limit 1").first()
        tag = json.loads(newest["userMetadata"] or "{}")
        if tag.get("purpose") == "erase" and newest["readVersion"] == newest["version"] - 1:
            candidates.append((relation, newest["version"]))
    assert candidates, "no relation's newest commit is the erasure"
    relation, version = candidates[0]
    assert untouched(relation, [version])
    assert not untouched(relation, [version - 1])  # a commit not of this batch
    name, tag = relation.qualified_name, {"actor": "pytest", "tool": "pytest", "purpose": "probe"}
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", json.dumps(tag))
    try:  # a commit that changes no row still counts as a write since the erasure
        spark.sql(f"alter table {name} set tblproperties ('gdpr_lakehouse.sweep_probe' = 'x')")
        spark.sql(f"alter table {name} unset tblproperties ('gdpr_lakehouse.sweep_probe')")
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    assert not untouched(relation, [version])


def test_no_resurrection_after_reingest_full_refresh_and_snapshot(
    erased: dict, lakehouse: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    patient = erased["subjects"][0]
    # the landing zone still holds the patient's events; a new batch adds more of them
    generate.main(["--patients", str(PATIENTS), "--batch", "3"])
    # every model, seed, snapshot and singular (compliance) test; the column-level
    # generic tests are test_build's (an --exclude replaces the default selector, so it
    # names the audit completeness test too)
    dbt.invoke("build", "--exclude", "test_type:generic", "tag:audit_completeness")
    dbt.invoke(
        "run",
        "--full-refresh",
        "--select",
        "bronze_patients",
        "bronze_encounters",
        "silver_patients",
    )
    dbt.invoke("snapshot")
    assert (
        spark.sql(
            f"select count(*) from landing.patients where patient_id = '{patient['id']}'"
        ).first()[0]
        > 0
    )
    for relation in lakehouse["plan"]:
        value = _key_value(relation, patient)
        if value:
            assert _count(spark, relation, value) == 0, relation.name
    assert (
        spark.sql(
            f"select count(*) from privacy.subject_keys where subject_id = '{patient['id']}'"
        ).first()[0]
        == 0
    )


def test_a_rerun_resumes_an_interrupted_batch_and_counts_once(
    erased: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """State of a run killed after its first relation: the rerun finishes it."""
    subject_id, pseudonym, rows = spark.sql(
        "select k.subject_id, k.subject_pseudonym, count(*) from bronze.encounters e "
        "join privacy.subject_keys k on k.subject_pseudonym = e.patient_pseudonym "
        "group by k.subject_id, k.subject_pseudonym order by count(*) desc, k.subject_id limit 1"
    ).first()
    dbt.operation("request_erasure", {"subject_ids": [subject_id]})
    spark.sql(
        "merge into privacy.erasure_requests r using privacy.subject_keys k on r.subject_id = k.subject_id "
        f"and r.subject_id = '{subject_id}' and r.status = 'pending' when matched then update set "
        "status = 'erasing', batch_id = 'crashed-batch', subject_type = k.subject_type, "
        "subject_pseudonym = k.subject_pseudonym"
    )
    spark.conf.set(
        "spark.databricks.delta.commitInfo.userMetadata",
        json.dumps({"purpose": "erase", "batch_id": "crashed-batch", "actor": "pytest"}),
    )
    spark.sql(f"delete from bronze.encounters where patient_pseudonym = '{pseudonym}'")
    spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")

    # resumed with pruning off: the MERGE that reads every file, same evidence
    success, errors = dbt.invoke_errors(
        "run-operation", "gdpr_erase", "--vars", json.dumps({"erasure_pruning_max_prefixes": 0})
    )
    assert success, errors
    request = spark.sql(
        f"select * from privacy.erasure_requests where subject_id = '{subject_id}'"
    ).first()
    assert request["status"] == "erased" and request["batch_id"] == "crashed-batch"
    merge = next(
        row["operationParameters"]["predicate"]
        for row in spark.sql("describe history silver.encounters limit 10").collect()
        if row["operation"] == "MERGE" and "crashed-batch" in (row["userMetadata"] or "")
    )
    assert "StartsWith" not in merge and "erase_key" in merge, merge
    evidence = spark.sql(
        f"select rows_affected, status from privacy.erasure_evidence where request_id = '{request['request_id']}' "
        "and relation = 'bronze.encounters'"
    ).first()
    assert evidence["status"] == "erased" and evidence["rows_affected"] == rows

    # nothing pending: a second run changes nothing and recounts nothing
    before = spark.sql("select sum(rows_affected) from privacy.erasure_evidence").first()[0]
    dbt.operation("gdpr_erase")
    assert spark.sql("select sum(rows_affected) from privacy.erasure_evidence").first()[0] == before


def _one_month_after(received: date, extension: int) -> datetime:
    """What Art. 12(3) and Regulation 1182/71 give, computed here independently of the
    engine: the same day number 1 + extension months later, or that month's last day."""
    month = received.month + 1 + extension
    year, month = received.year + (month - 1) // 12, (month - 1) % 12 + 1
    day = min(received.day, calendar.monthrange(year, month)[1])
    return datetime(year, month, day, 23, 59, 59)


def test_legal_hold_keeps_the_subject_until_released(
    erased: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    subject_id, pseudonym = spark.sql(
        "select k.subject_id, k.subject_pseudonym from bronze.patients b "
        "join privacy.subject_keys k on k.subject_pseudonym = b.patient_pseudonym "
        "order by k.subject_id desc limit 1"
    ).first()
    # received ten days ago at 09:30 in Paris, recorded today: the clock runs from receipt
    received = datetime.now(UTC) - timedelta(days=10)
    given = received.strftime("%Y-%m-%d") + " 09:30:00+01:00"
    dbt.operation(
        "request_erasure",
        {"subject_ids": [subject_id], "reason": "letter of the patient", "received_at": given},
    )
    dbt.operation("legal_hold", {"subject_ids": [subject_id], "reason": "malpractice case 2026-17"})
    dbt.operation("gdpr_erase", {"subject_ids": [subject_id]})
    request = spark.sql(
        f"select * from privacy.erasure_requests where subject_id = '{subject_id}'"
    ).first()
    assert request["status"] == "held" and "malpractice case 2026-17" in request["status_reason"]
    assert request["received_at"] == received.replace(
        hour=8, minute=30, second=0, microsecond=0, tzinfo=None
    )
    assert request["deadline"] == _one_month_after(received.date(), 0)

    # held (Art. 17(3)) and complex: two further months, the subject told today
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    extension = {
        "request_id": request["request_id"],
        "by": 2,
        "reason": "court asked for the records",
        "subject_informed_on": today,
    }
    # a subject told before the request was received: not within its first month
    early = dict(extension, subject_informed_on=(received - timedelta(days=1)).strftime("%Y-%m-%d"))
    success, errors = dbt.operation("extend_deadline", early, expect_success=False)
    assert not success and "within one month of receipt" in errors
    dbt.operation("extend_deadline", extension)
    extended = spark.sql(
        f"select * from privacy.erasure_requests where subject_id = '{subject_id}'"
    ).first()
    assert extended["deadline"] == _one_month_after(received.date(), 2)
    assert extended["deadline_extension"] == 2
    assert extended["extension_reason"] == "court asked for the records"
    assert str(extended["subject_informed_on"]) == today
    # no third month
    late = dict(extension, by=1)
    success, errors = dbt.operation("extend_deadline", late, expect_success=False)
    assert not success and "past the 2 further months the law allows" in errors
    assert (
        spark.sql(
            f"select deadline from privacy.erasure_requests where subject_id = '{subject_id}'"
        ).first()[0]
        == extended["deadline"]
    )
    assert (
        spark.sql(
            f"select count(*) from bronze.patients where patient_pseudonym = '{pseudonym}'"
        ).first()[0]
        == 1
    )

    dbt.operation("legal_hold", {"subject_ids": [subject_id], "release": True})
    dbt.operation("gdpr_erase")
    assert (
        spark.sql(
            f"select status from privacy.erasure_requests where subject_id = '{subject_id}'"
        ).first()[0]
        == "erased"
    )
    assert (
        spark.sql(
            f"select count(*) from bronze.patients where patient_pseudonym = '{pseudonym}'"
        ).first()[0]
        == 0
    )


def test_purge_removes_every_file_holding_the_subject(
    erased: dict,
    lakehouse: dict,
    spark: SparkSession,
    lakehouse_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    patient = erased["subjects"][0]
    # a landing file nothing can decode: the purge cannot show the zone clean, so it
    # fails (a scheduler sees it) and the requests stay `erased`
    # (the patient's request alone: the run after it has less left to do)
    request_id, status = spark.sql(
        "select request_id, status from privacy.erasure_requests "
        f"where subject_id = '{patient['id']}'"
    ).first()
    assert status == "erased"
    unreadable = landing_dir() / "patients" / "broken-upload.parquet"
    unreadable.write_bytes(b"PAR1 half an upload")
    try:
        code = purge.main(
            ["--request-id", request_id, "--retain-hours", "0", "--allow-short-retention"],
            spark=spark,
        )
        assert code == 1, f"the purge exited {code} with an undecodable landing file"
        assert capsys.readouterr().out.count("landing zone: ALERT") == 1
        status = spark.sql(
            f"select status from privacy.erasure_requests where request_id = '{request_id}'"
        ).first()[0]
        assert status == "erased"
    finally:
        unreadable.unlink()
    code = purge.main(["--retain-hours", "0", "--allow-short-retention"], spark=spark)
    assert code == 0
    statuses = {
        row[0]: row[1]
        for row in spark.sql("select subject_id, status from privacy.erasure_requests").collect()
    }
    assert statuses[patient["id"]] == "purged"
    # no Parquet file left under bronze.patients (data, _change_data) holds the patient
    # (named there by pseudonym only)
    table_dir = lakehouse_dir / "warehouse" / "bronze.db" / "patients"
    files = [f for f in table_dir.rglob("*.parquet") if "_delta_log" not in f.parts]
    assert files
    for file in files:
        ids = pq.read_table(file, columns=["patient_pseudonym"]).column("patient_pseudonym")
        assert patient["pseudonym"] not in ids.to_pylist(), (
            f"{file.relative_to(table_dir)} still holds the erased patient"
        )
