"""Access and portability (GDPR Art. 15 and 20) on real dbt + Spark + Delta.

`python -m python_jobs.subject_access` on the suite's lakehouse: the export of a
patient is checked against queries of every relation the manifest declares, written
here (not the job's), and its decrypted values against the vault's key opened with
Python's own AES-GCM; the package's files are private and match their digests; an
unknown subject gets "no data held", a subject whose erasure is open is refused, bad
input changes nothing; a request left pending by a crash is resumed; the purge's
expiry deletes an export past its retention and nothing outside the exports folder;
requests recorded by `dbt run-operation request_access` are answered by the job. And
restriction (Art. 18): a restricted or held subject is kept but not published. And
rectification (Art. 16): one update event landed, applied by the build everywhere.
(The life of an export through an erasure and a purge is in test_scan.py.)
"""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs import certificate, rectify, report, subject_access
from python_jobs.forensic_scan import _decrypt
from python_jobs.project import ProjectError, manifest
from python_jobs.relations import delta_relations
from tests.dbt_harness import DbtProject, opened_key

pytestmark = pytest.mark.functional


@pytest.fixture(scope="module")
def built(dbt: DbtProject, spark: SparkSession) -> None:
    if not spark.catalog.tableExists("silver.patients"):
        generate.main(["--patients", "120", "--batch", "1"])
        dbt.invoke("build")
    else:
        dbt.invoke("parse")


def _subject(spark: SparkSession, kind: str, offset: int) -> str:
    """A subject of this type in the vault with no erasure request and no access request."""
    return spark.sql(
        "select k.subject_id from privacy.subject_keys k "
        f"where k.subject_type = '{kind}' "
        "and k.subject_id not in (select subject_id from privacy.erasure_requests where subject_id is not null) "
        "and k.subject_id not in (select subject_id from privacy.access_requests where subject_id is not null) "
        f"order by k.subject_id limit 1 offset {offset}"
    ).first()[0]


def _requests(spark: SparkSession, subject_id: str) -> list:
    return spark.sql(
        "select request_id, status, status_reason, export_path, package_sha256, rows_exported, "
        "relations_exported, received_at, deadline from privacy.access_requests "
        f"where subject_id = '{subject_id}' order by request_id"
    ).collect()


def _expected_rows(spark: SparkSession, subject_id: str) -> dict[str, int]:
    """Per declared relation with a subject key, the subject's rows: by id or pseudonym."""
    pseudonym = spark.sql(
        f"select subject_pseudonym from privacy.subject_keys where subject_id = '{subject_id}'"
    ).first()[0]
    counts = {}
    for node in manifest()["nodes"].values():
        privacy = ((node.get("config") or {}).get("meta") or {}).get("privacy") or {}
        materialized = (node.get("config") or {}).get("materialized")
        if not privacy.get("subject_key") or materialized in ("view", "ephemeral"):
            continue
        if node["name"] == "privacy_access_requests":
            continue
        value = pseudonym if privacy.get("subject_key_kind") == "pseudonym" else subject_id
        table = f"{node['schema']}.{node.get('alias') or node['name']}"
        if not spark.catalog.tableExists(table):
            continue
        found = spark.sql(
            f"select count(*) from {table} where `{privacy['subject_key']}` = '{value}'"
        ).first()[0]
        if found:
            counts[table] = found
    return counts


def test_a_patients_export_holds_every_row_of_theirs_decrypted_and_private(
    built: None, spark: SparkSession, lakehouse_dir: Path
) -> None:
    subject_id = _subject(spark, "patient", 3)
    assert (
        subject_access.main(
            ["--subject-id", subject_id, "--received-at", "2026-01-31", "--requested-by", "dpo"],
            spark,
        )
        == 0
    )
    [request] = _requests(spark, subject_id)
    assert request["status"] == "exported" and request["status_reason"] is None
    # one calendar month from 31 January: the end of February's last day
    assert str(request["deadline"]) == "2026-02-28 23:59:59"
    folder = Path(request["export_path"])
    assert folder == lakehouse_dir / "exports" / request["request_id"]
    package = json.loads((folder / "manifest.json").read_text())

    expected = _expected_rows(spark, subject_id)
    exported = {item["relation"]: item["rows"] for item in package["relations"]}
    assert exported == expected
    assert {"bronze.patients", "bronze.encounters", "silver.patients"} <= set(exported)
    assert request["rows_exported"] == sum(expected.values()) == package["rows"]
    assert request["relations_exported"] == len(expected)

    # decrypted values are the ones the vault's key opens (Python's AES-GCM, not Spark)
    key, email_enc, name_enc, pseudonym = spark.sql(
        "select k.data_key, p.email_enc, p.full_name_enc, k.subject_pseudonym from privacy.subject_keys k "
        f"join bronze.patients p on p.patient_pseudonym = k.subject_pseudonym where k.subject_id = '{subject_id}'"
    ).first()
    [patient] = json.loads((folder / "bronze.patients.json").read_text())
    key = opened_key(key, pseudonym)
    assert (
        patient["email"]
        == _decrypt(key, bytes(email_enc), f"{pseudonym}/email_enc".encode()).decode()
    )
    assert (
        patient["full_name"]
        == _decrypt(key, bytes(name_enc), f"{pseudonym}/full_name_enc".encode()).decode()
    )
    assert "email_enc" not in patient and patient["patient_pseudonym"] == pseudonym
    bronze = next(item for item in package["relations"] if item["relation"] == "bronze.patients")
    assert "email" in bronze["decrypted_columns"] and bronze["undecryptable_values"] == 0
    # the vault's row, without the key
    [vault_row] = json.loads((folder / "privacy.subject_keys.json").read_text())
    assert "data_key" not in vault_row and vault_row["subject_id"] == subject_id

    # private files whose digests the manifest lists; the request records the manifest's
    assert folder.stat().st_mode & 0o777 == 0o700
    for path in folder.iterdir():
        assert path.stat().st_mode & 0o777 == 0o600, path
    for item in package["relations"]:
        for name, digest in item["sha256"].items():
            assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest
        with (folder / f"{item['relation']}.csv").open() as handle:
            assert sum(1 for _ in csv.reader(handle)) == item["rows"] + 1
    assert (
        hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()
        == request["package_sha256"]
    )
    summary = (folder / "summary.md").read_text()
    assert subject_id in summary and "bronze.encounters" in summary
    # no clear value in any table: the log row holds counts and a path, not the data
    assert patient["email"] not in " ".join(str(value) for value in request)


def test_an_export_holds_the_subjects_own_data_not_other_peoples(
    built: None, dbt: DbtProject, spark: SparkSession
) -> None:
    """Seam: the Art. 15 export copied every column of every relation
    keyed by the subject, control tables included: the name of the member of staff
    who placed a legal hold on them, and the hold's confidential reason. Guarantee
    (Art. 15(4)): the columns a contract lists in withheld_from_access (other people's
    data, the operator's confidential reasons) are not exported, and the package says
    which were withheld."""
    # far down the list: the suites after this one pick subjects by their rank in it
    subject_id = _subject(spark, "patient", 60)
    staff, reason = "Dr Imogen Staffmember", "litigation case 2026-77 (confidential)"
    dbt.operation("legal_hold", {"subject_ids": [subject_id], "reason": reason, "placed_by": staff})
    try:
        assert (
            subject_access.main(["--subject-id", subject_id, "--requested-by", "dpo"], spark) == 0
        )
    finally:
        dbt.operation("legal_hold", {"subject_ids": [subject_id], "release": True})
    [request] = _requests(spark, subject_id)
    folder = Path(request["export_path"])
    package = json.loads((folder / "manifest.json").read_text())
    holds = next(i for i in package["relations"] if i["relation"] == "privacy.legal_holds")
    assert {"placed_by", "reason"} <= set(holds["withheld_columns"]), holds
    for path in folder.iterdir():
        text = path.read_text()
        assert staff not in text and reason not in text, path.name
    [hold] = json.loads((folder / "privacy.legal_holds.json").read_text())
    assert hold["subject_id"] == subject_id and "placed_by" not in hold


def test_no_data_held_refused_and_bad_input(
    built: None, spark: SparkSession, lakehouse_dir: Path
) -> None:
    # unknown to the lakehouse: still a recorded request, answered "no data held"
    assert subject_access.main(["--subject-id", "P9999990"], spark) == 0
    [unknown] = _requests(spark, "P9999990")
    assert unknown["status"] == "no_data" and "no data held" in unknown["status_reason"]
    assert unknown["export_path"] is None

    # an erasure under way: refused, naming the request
    subject_id = _subject(spark, "patient", 5)
    request_id = "req-20261101T000000-00000access"
    spark.sql(
        "insert into privacy.erasure_requests (request_id, subject_id, status, received_at, deadline, updated_at) "
        f"values ('{request_id}', '{subject_id}', 'pending', current_timestamp(), "
        "current_timestamp() + interval 30 days, current_timestamp())"
    )
    try:
        assert subject_access.main(["--subject-id", subject_id], spark) == 0
    finally:
        spark.sql(f"delete from privacy.erasure_requests where request_id = '{request_id}'")
    [refused] = _requests(spark, subject_id)
    assert refused["status"] == "refused" and request_id in refused["status_reason"]
    assert refused["export_path"] is None

    # bad input: a clear error, nothing recorded
    before = spark.sql("select count(*) from privacy.access_requests").first()[0]
    tomorrow = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%d")
    for argv, says in [
        (["--subject-id", "P1' or '1'='1"], "not a subject id"),
        (["--subject-id", "__system"], "not a subject id"),
        (["--subject-id", "P0000001", "--received-at", tomorrow], "in the future"),
        (["--subject-id", "P0000001", "--received-at", "2026-02-30"], "not a real date"),
        (["--subject-id", "P0000001", "--received-at", "last week"], "allowed is a date"),
        (["--subject-id", "P0000001", "--requested-by", "a\nb"], "one line of printable"),
    ]:
        with pytest.raises(ProjectError, match=says):
            subject_access.main(argv, spark)
    assert spark.sql("select count(*) from privacy.access_requests").first()[0] == before


def test_a_crashed_request_resumes_and_the_purge_expires_exports(
    built: None, spark: SparkSession, lakehouse_dir: Path, tmp_path: Path
) -> None:
    subject_id = _subject(spark, "user", 2)
    request_id = "acc-20261101T000000-0123456789"
    # what a crash after recording leaves: a pending request (and a half package)
    spark.sql(
        "insert into privacy.access_requests (request_id, subject_id, received_at, deadline, status, updated_at) "
        f"values ('{request_id}', '{subject_id}', timestamp'2026-11-01 00:00:00', "
        "timestamp'2026-12-01 23:59:59', 'pending', current_timestamp())"
    )
    partial = lakehouse_dir / "exports" / f"{request_id}.partial"
    partial.mkdir(parents=True)
    (partial / "stale.json").write_text("{}")
    assert subject_access.main(["--subject-id", subject_id], spark) == 0
    [request] = _requests(spark, subject_id)
    assert request["request_id"] == request_id and request["status"] == "exported"
    folder = Path(request["export_path"])
    assert folder.name == request_id and not partial.exists()
    assert not (folder / "stale.json").exists()
    exported = {
        item["relation"] for item in json.loads((folder / "manifest.json").read_text())["relations"]
    }
    assert {"bronze.users", "silver.users"} <= exported
    assert not [name for name in exported if "patient" in name]  # a user's, not a patient's

    # a log row naming a folder outside the exports folder is never deleted
    outside = tmp_path / "acc-20261101T000000-aaaaaaaaaa"
    outside.mkdir()
    spark.sql(
        "insert into privacy.access_requests (request_id, subject_id, status, completed_at, export_path, updated_at) "
        f"values ('{outside.name}', 'U9999990', 'exported', timestamp'2020-01-01 00:00:00', "
        f"'{outside}', current_timestamp())"
    )
    spark.sql(
        "update privacy.access_requests set completed_at = current_timestamp() - interval 31 days "
        f"where request_id = '{request_id}'"
    )
    relations = delta_relations(manifest())
    now = datetime.now(UTC).replace(tzinfo=None)
    assert subject_access.expire_exports(spark, relations, now, 30) == 1
    assert not folder.exists() and outside.exists()
    deleted = spark.sql(
        f"select export_deleted_at from privacy.access_requests where request_id = '{request_id}'"
    ).first()[0]
    assert deleted is not None
    assert subject_access.expire_exports(spark, relations, now, 30) == 0  # idempotent
    spark.sql(f"delete from privacy.access_requests where request_id = '{outside.name}'")


def test_requests_recorded_by_dbt_are_answered_by_the_job(
    built: None, dbt: DbtProject, spark: SparkSession, tmp_path: Path
) -> None:
    """`dbt run-operation request_access` records (idempotent while pending, bad input
    refused by name); extend_deadline gives a pending one longer (not an answered one);
    the job without --subject-id answers every pending request; the answer's certificate
    names no one and verifies against the log."""
    patient = _subject(spark, "patient", 9)
    args = {"subject_ids": [patient, "P9999991"], "received_at": "2026-02-10"}
    dbt.operation("request_access", args)
    dbt.operation("request_access", args)  # nothing new while they are pending
    pending = spark.sql(
        "select subject_id, cast(deadline as string) from privacy.access_requests "
        f"where status = 'pending' and subject_id in ('{patient}', 'P9999991')"
    ).collect()
    assert sorted(row[0] for row in pending) == sorted([patient, "P9999991"])
    assert {row[1] for row in pending} == {"2026-03-10 23:59:59"}
    # Art. 12(3): two further months, the subject told within the first
    request_id = _requests(spark, patient)[0]["request_id"]
    extension = {
        "request_id": request_id,
        "by": 2,
        "reason": "records from three hospitals",
        "subject_informed_on": "2026-03-01",
    }
    ok, errors = dbt.operation(
        "extend_deadline", {**extension, "subject_informed_on": "2026-03-11"}, expect_success=False
    )
    assert not ok and "is not within the original period" in errors
    dbt.operation("extend_deadline", extension)
    extended = spark.sql(
        "select cast(deadline as string), deadline_extension, cast(subject_informed_on as string) "
        f"from privacy.access_requests where request_id = '{request_id}'"
    ).first()
    assert tuple(extended) == ("2026-05-10 23:59:59", 2, "2026-03-01")
    ok, errors = dbt.operation(
        "request_access", {"subject_ids": ["P1'; drop table x"]}, expect_success=False
    )
    assert not ok and "subject" in errors
    assert subject_access.main([], spark) == 0
    answered = dict(
        spark.sql(
            "select subject_id, status from privacy.access_requests "
            f"where subject_id in ('{patient}', 'P9999991')"
        ).collect()
    )
    assert answered == {patient: "exported", "P9999991": "no_data"}
    with pytest.raises(ProjectError, match="give them with --subject-id"):
        subject_access.main(["--received-at", "2026-02-10"], spark)
    ok, errors = dbt.operation("extend_deadline", {**extension, "by": 1}, expect_success=False)
    assert not ok and "is exported; only an unfinished request (pending)" in errors
    _certified(request_id, tmp_path, patient, deadline_extension=2, status="exported")


def _certified(request_id: str, folder: Path, subject_id: str, **expected: object) -> dict:
    """The request's certificate, issued by the job, naming no one, verified against the
    request log."""
    assert certificate.main(["--request-id", request_id, "--output-dir", str(folder)]) == 0
    issued_json = folder / f"{request_id}.json"
    issued = json.loads(issued_json.read_text())
    for field, value in expected.items():
        assert issued["request"][field] == value, field
    for written in (issued_json, folder / f"{request_id}.html"):
        assert subject_id not in written.read_text()
    assert certificate.main(["--verify", str(issued_json)]) == 0
    return issued


def test_a_restricted_or_held_subject_is_kept_but_not_published(
    built: None, dbt: DbtProject, spark: SparkSession
) -> None:
    """GDPR Art. 18: restrict_processing, and a legal hold, take the subject out of the
    per-subject gold table at once and out of the consumers' masked view, keep them in
    silver, keep them out at the next build; the compliance test fails on a published
    row of a restricted subject; lifted, the next build publishes them again."""
    restricted, held = [
        row[0]
        for row in spark.sql(
            "select k.subject_id from privacy.subject_keys k "
            "join gold.patient_summary g on g.patient_pseudonym = k.subject_pseudonym "
            "where k.subject_id not in (select subject_id from privacy.erasure_requests where subject_id is not null) "
            "and k.subject_id not in (select subject_id from privacy.legal_holds where subject_id is not null) "
            "order by k.subject_id limit 2 offset 12"
        ).collect()
    ]
    pseudonyms = dict(
        spark.sql(
            "select subject_id, subject_pseudonym from privacy.subject_keys "
            f"where subject_id in ('{restricted}', '{held}')"
        ).collect()
    )
    listed = "', '".join(pseudonyms.values())

    def published(relation: str) -> set[str]:
        rows = spark.sql(
            f"select patient_pseudonym from {relation} where patient_pseudonym in ('{listed}')"
        ).collect()
        return {row[0] for row in rows}

    everyone = set(pseudonyms.values())
    assert published("gold.patient_summary") == published("privacy.patients_masked") == everyone
    before = spark.sql("describe history gold.patient_summary limit 1").first()["version"]
    dbt.operation(
        "restrict_processing",
        {"subject_ids": [restricted], "reason": "accuracy contested (Art. 18(1)(a))"},
    )
    dbt.operation("legal_hold", {"subject_ids": [held], "reason": "case 2026-99"})
    try:
        assert published("gold.patient_summary") == published("privacy.patients_masked") == set()
        assert published("silver.patients") == everyone  # kept
        dbt.invoke("build", "--select", "gold_patient_summary", "no_restricted_subject_published")
        assert published("gold.patient_summary") == set()
        # a published table that lets one back in (as a model without the filter would)
        spark.sql(
            "insert into gold.patient_summary select * from gold.patient_summary "
            f"version as of {before} where patient_pseudonym = '{pseudonyms[restricted]}'"
        )
        result = dbt.invoke(
            "test", "--select", "no_restricted_subject_published", expect_success=False
        )
        [checked] = [r for r in result.result.results if r.node.unique_id.startswith("test.")]
        assert not result.success and checked.failures == 1
    finally:
        dbt.operation("restrict_processing", {"subject_ids": [restricted], "lift": True})
        dbt.operation("legal_hold", {"subject_ids": [held], "release": True})
    assert published("privacy.patients_masked") == everyone  # the view at once
    dbt.invoke("run", "--select", "gold_patient_summary")
    assert published("gold.patient_summary") == everyone
    lifted = spark.sql(
        f"select lifted_at, lifted_by from privacy.restrictions where subject_id = '{restricted}'"
    ).first()
    assert lifted["lifted_at"] is not None and lifted["lifted_by"] == "pytest"


def test_a_hold_is_reviewed_and_the_refused_subject_told_why(
    built: None, dbt: DbtProject, spark: SparkSession, tmp_path: Path, capsys
) -> None:
    """A legal hold has a review date (default var legal_hold_review_days) and records
    the day the subject was told why their erasure was refused (Art. 12(4)): the report
    alerts on a held request past its deadline without that notice, and on a hold past
    its review date, until they are recorded."""
    subject_id = _subject(spark, "patient", 16)
    request_id = "req-20260105T000000-00000012p4"
    spark.sql(
        "insert into privacy.erasure_requests (request_id, subject_id, status, status_reason, "
        "received_at, deadline, updated_at) values "
        f"('{request_id}', '{subject_id}', 'held', 'legal hold: case 2026-12', "
        "timestamp'2026-01-05 09:00:00', timestamp'2026-02-05 23:59:59', current_timestamp())"
    )
    out = tmp_path / "report"
    notice, review = "Art. 12(4)", "past their review date"
    try:
        dbt.operation("legal_hold", {"subject_ids": [subject_id], "reason": "case 2026-12"})
        hold = spark.sql(
            "select datediff(review_on, current_date()) as days, subject_notified_on "
            f"from privacy.legal_holds where subject_id = '{subject_id}' and released_at is null"
        ).first()
        assert hold["days"] == 365 and hold["subject_notified_on"] is None
        report.main(["--output-dir", str(out)], spark)
        err = capsys.readouterr().err
        assert notice in err and request_id in err and review not in err

        today = datetime.now(UTC).strftime("%Y-%m-%d")
        dbt.operation("legal_hold", {"subject_ids": [subject_id], "notified_on": today})
        hold = spark.sql(
            "select cast(subject_notified_on as string) as told, reason "
            f"from privacy.legal_holds where subject_id = '{subject_id}' and released_at is null"
        ).first()
        assert (hold["told"], hold["reason"]) == (today, "case 2026-12")
        report.main(["--output-dir", str(out)], spark)
        assert notice not in capsys.readouterr().err
        # a year and a day on, the hold is due for review
        later = (datetime.now(UTC) + timedelta(days=367)).strftime("%Y-%m-%dT%H:%M")
        assert report.main(["--output-dir", str(out), "--as-of", later], spark) == 1
        assert f"1 active legal hold(s) {review}" in capsys.readouterr().err
        # updating a hold the subject does not have changes nothing
        ok, errors = dbt.operation(
            "legal_hold", {"subject_ids": ["P9999996"], "notified_on": today}, expect_success=False
        )
        assert not ok and "no active hold of P9999996" in errors
        # placed again with a review date: still one hold, its reason kept, the date taken
        dbt.operation(
            "legal_hold",
            {
                "subject_ids": [subject_id],
                "reason": "case 2026-12 (appeal)",
                "review_on": "2099-01-31",
            },
        )
        holds = spark.sql(
            "select reason, cast(review_on as string) as review_on, cast(subject_notified_on as string) as told "
            f"from privacy.legal_holds where subject_id = '{subject_id}' and released_at is null"
        ).collect()
        assert [tuple(hold) for hold in holds] == [("case 2026-12", "2099-01-31", today)]
    finally:
        dbt.operation("legal_hold", {"subject_ids": [subject_id], "release": True})
        spark.sql(f"delete from privacy.erasure_requests where request_id = '{request_id}'")


def test_the_record_retention_redacts_answered_requests_and_lifted_restrictions(
    built: None, spark: SparkSession
) -> None:
    """After var erasure_record_retention_days an answered access request, an applied
    rectification and a lifted restriction lose the subject id and free text; an open
    request and an active restriction keep theirs; a second run redacts nothing."""
    spark.sql(
        "insert into privacy.access_requests (request_id, subject_id, requested_by, status, "
        "status_reason, completed_at, updated_at, extension_reason) values "
        "('acc-20200101T000000-00000000aa', 'P9999992', 'dpo', 'no_data', 'no data held', "
        "timestamp'2020-01-01 00:00:00', current_timestamp(), 'Ms P. asked for her scans too'), "
        "('acc-20200101T000000-00000000bb', 'P9999993', 'dpo', 'pending', null, null, current_timestamp(), "
        "'three sites')"
    )
    spark.sql(
        "insert into privacy.restrictions (subject_id, reason, placed_by, placed_at, lifted_by, lifted_at) values "
        "('P9999992', 'objection (Art. 21)', 'dpo', timestamp'2019-06-01 00:00:00', 'dpo', timestamp'2020-01-01 00:00:00'), "
        "('P9999993', 'accuracy contested', 'dpo', timestamp'2019-06-01 00:00:00', null, null)"
    )
    spark.sql(
        "insert into privacy.rectification_requests (request_id, subject_id, requested_by, status, "
        "status_reason, completed_at, updated_at) values "
        "('rec-20200101T000000-00000000aa', 'P9999994', 'dpo', 'applied', 'applied by bronze.patients', "
        "timestamp'2020-01-01 00:00:00', current_timestamp()), "
        "('rec-20200101T000000-00000000bb', 'P9999995', 'dpo', 'landed', null, null, current_timestamp())"
    )
    relations = delta_relations(manifest())
    now = datetime.now(UTC).replace(tzinfo=None)
    try:
        assert subject_access.expire_access_records(spark, relations, 1095, now) == 3
        rectifications = {
            row[0]: (row[1], row[2], row[3])
            for row in spark.sql(
                "select request_id, subject_id, requested_by, status_reason from privacy.rectification_requests "
                "where request_id like 'rec-20200101T000000-%'"
            ).collect()
        }
        assert rectifications == {
            "rec-20200101T000000-00000000aa": (None, None, None),
            "rec-20200101T000000-00000000bb": ("P9999995", "dpo", None),
        }
        access = {
            row[0]: (row[1], row[2], row[3], row[4])
            for row in spark.sql(
                "select request_id, subject_id, requested_by, status_reason, extension_reason "
                "from privacy.access_requests where request_id like 'acc-20200101T000000-%'"
            ).collect()
        }
        assert access == {
            "acc-20200101T000000-00000000aa": (None, None, None, None),
            "acc-20200101T000000-00000000bb": ("P9999993", "dpo", None, "three sites"),
        }
        restrictions = spark.sql(
            "select subject_id, reason, placed_by, lifted_by from privacy.restrictions "
            "where placed_at = timestamp'2019-06-01 00:00:00' order by subject_id nulls first"
        ).collect()
        assert [tuple(row) for row in restrictions] == [
            (None, None, None, None),
            ("P9999993", "accuracy contested", "dpo", None),
        ]
        assert subject_access.expire_access_records(spark, relations, 1095, now) == 0
    finally:
        spark.sql(
            "delete from privacy.access_requests where request_id like 'acc-20200101T000000-%'"
        )
        spark.sql(
            "delete from privacy.restrictions where placed_at = timestamp'2019-06-01 00:00:00'"
        )
        spark.sql(
            "delete from privacy.rectification_requests where request_id like 'rec-20200101T000000-%'"
        )


def _rectifications(spark: SparkSession, subject_id: str) -> list:
    return spark.sql(
        "select * from privacy.rectification_requests "
        f"where subject_id = '{subject_id}' order by request_id"
    ).collect()


def test_a_rectification_lands_one_event_the_build_applies_everywhere(
    built: None, dbt: DbtProject, spark: SparkSession, lakehouse_dir: Path, tmp_path: Path
) -> None:
    """Art. 16: the corrected e-mail lands as one update event; the build applies it to
    bronze, silver and the snapshot (checked with Python's AES-GCM and the vault's key),
    every other value stays; the request log holds column names, never the value. Bad
    columns and unknown, erased or erasing subjects change nothing but a refused row."""
    subject_id = _subject(spark, "patient", 12)
    read = (
        "select k.data_key, p.email_enc, p.full_name_enc, p.phone_enc, p.city_enc, k.subject_pseudonym "
        "from privacy.subject_keys k "
        f"join bronze.patients p on p.patient_pseudonym = k.subject_pseudonym where k.subject_id = '{subject_id}'"
    )
    key, email_enc, name_enc, phone_enc, city_enc, owner = spark.sql(read).first()
    key = opened_key(key, owner)

    def opened(cipher: bytes, column: str) -> str:
        return _decrypt(key, bytes(cipher), f"{owner}/{column}".encode()).decode()

    city = opened(city_enc, "city_enc")
    before = {
        "email": opened(email_enc, "email_enc"),
        "full_name": opened(name_enc, "full_name_enc"),
        "phone": opened(phone_enc, "phone_enc"),
    }
    corrected = f"rectified.{subject_id.lower()}@example.org"
    assert corrected != before["email"]

    # bad input is refused by name and records nothing
    for argv, message in (
        (["--set", "patient_id=P1"], "patient_id is the subject key"),
        (["--set", "shoe_size=42"], "shoe_size is not a column"),
        (["--set", "birth_date=1980-02-30"], "allowed is a date"),
        (["--set", "email=ada.example.org"], "would quarantine the subject"),
    ):
        with pytest.raises(ProjectError, match=message):
            rectify.main(["--subject-id", subject_id, *argv], spark)
    assert _rectifications(spark, subject_id) == []

    changes = tmp_path / "changes.json"
    changes.write_text(json.dumps({"email": corrected}))
    argv = ["--subject-id", subject_id, "--changes-file", str(changes)]
    assert rectify.main([*argv, "--received-at", "2026-02-10"], spark) == 0
    [request] = _rectifications(spark, subject_id)
    assert request["status"] == "landed" and request["columns_changed"] == "email"
    assert str(request["deadline"]) == "2026-03-10 23:59:59"
    assert request["landing_table"] == "landing.patients"
    assert corrected not in " ".join(str(value) for value in request)
    # a landed request can still be given longer (Art. 12(3))
    dbt.operation(
        "extend_deadline",
        {
            "request_id": request["request_id"],
            "by": 1,
            "reason": "the source system confirms first",
            "subject_informed_on": "2026-02-20",
        },
    )
    assert str(_rectifications(spark, subject_id)[0]["deadline"]) == "2026-04-10 23:59:59"
    event_file = lakehouse_dir / "landing" / "patients" / request["landing_file"]
    assert event_file.stat().st_mode & 0o777 == 0o600
    [event] = pq.read_table(event_file).to_pylist()
    assert event["_op"] == "update" and event["patient_id"] == subject_id
    assert (event["email"], event["full_name"], event["phone"], event["city"]) == (
        corrected,
        before["full_name"],
        before["phone"],
        city,
    )

    # a second correction before the build would undo the first (an event built from
    # bronze, newer than it): refused, nothing recorded
    with pytest.raises(ProjectError, match=r"1 event\(s\) of .* newer than bronze\.patients"):
        rectify.main(["--subject-id", subject_id, "--set", "phone=+41 79 000 00 00"], spark)
    assert len(_rectifications(spark, subject_id)) == 1

    # not applied before a build; the build applies it, the job confirms it
    assert rectify.main([], spark) == 0
    assert _rectifications(spark, subject_id)[0]["status"] == "landed"
    dbt.invoke("build", "--select", "+bronze_patients+", "--exclude-resource-type", "test")
    assert rectify.main([], spark) == 0
    [request] = _rectifications(spark, subject_id)
    assert request["status"] == "applied" and request["applied_in"] == "bronze.patients"
    assert request["completed_at"] is not None
    issued = _certified(
        request["request_id"],
        tmp_path / "certificates",
        subject_id,
        status="applied",
        columns_changed="email",
        applied_in="bronze.patients",
        deadline_extension=1,
    )
    assert corrected not in json.dumps(issued)

    key, email_enc, name_enc, phone_enc, city_enc, owner = spark.sql(read).first()
    key = opened_key(key, owner)
    assert opened(email_enc, "email_enc") == corrected
    assert opened(name_enc, "full_name_enc") == before["full_name"]
    assert opened(phone_enc, "phone_enc") == before["phone"]
    assert opened(city_enc, "city_enc") == city
    pseudonym = spark.sql(
        f"select subject_pseudonym from privacy.subject_keys where subject_id = '{subject_id}'"
    ).first()[0]
    for table, current in (
        ("silver.patients", "true"),
        ("snapshots.patients", "dbt_valid_to is null"),
    ):
        [row] = spark.sql(
            f"select email_enc from {table} where patient_pseudonym = '{pseudonym}' and {current}"
        ).collect()
        assert opened(row[0], "email_enc") == corrected, table

    # refused, recorded, nothing landed: unknown, and erasing
    landed = set((lakehouse_dir / "landing" / "patients").glob("rectify-*.parquet"))
    assert rectify.main(["--subject-id", "P9999992", "--set", "email=a@example.org"], spark) == 0
    [unknown] = _rectifications(spark, "P9999992")
    assert unknown["status"] == "refused" and "not known" in unknown["status_reason"]
    other = _subject(spark, "patient", 13)
    request_id = "req-20261101T000000-000rectify"
    spark.sql(
        "insert into privacy.erasure_requests (request_id, subject_id, status, received_at, deadline, updated_at) "
        f"values ('{request_id}', '{other}', 'erasing', current_timestamp(), "
        "current_timestamp() + interval 30 days, current_timestamp())"
    )
    try:
        assert rectify.main(["--subject-id", other, "--set", "email=b@example.org"], spark) == 0
    finally:
        spark.sql(f"delete from privacy.erasure_requests where request_id = '{request_id}'")
    [erasing] = _rectifications(spark, other)
    assert erasing["status"] == "refused" and request_id in erasing["status_reason"]
    assert set((lakehouse_dir / "landing" / "patients").glob("rectify-*.parquet")) == landed

    # a landed row the job did not write (no event time) is named, never taken as applied
    broken = "rec-20261101T000000-00000b0ken"
    spark.sql(
        "insert into privacy.rectification_requests (request_id, subject_id, status, landing_table, "
        f"received_at, deadline, updated_at) values ('{broken}', '{other}', 'landed', 'landing.patients', "
        "current_timestamp(), current_timestamp() + interval 30 days, current_timestamp())"
    )
    try:
        with pytest.raises(
            ProjectError, match=f"lack a subject id, landing file or event source time.*{broken}"
        ):
            rectify.main([], spark)
        statuses = [r["status"] for r in _rectifications(spark, other) if r["request_id"] == broken]
        assert statuses == ["landed"]
    finally:
        spark.sql(f"delete from privacy.rectification_requests where request_id = '{broken}'")


@pytest.mark.parametrize("landing_format", ["json", "csv"])
def test_a_json_or_csv_landing_table_reads_the_event_as_written(
    spark: SparkSession, tmp_path: Path, landing_format: str
) -> None:
    """A rectification event lands in its landing table's own format, one private file,
    and the table (declared as create_landing_tables declares it: a CSV without header)
    reads back exactly what was written, a value with a comma and quotes included."""
    columns = {
        "patient_id": "string",
        "email": "string",
        "birth_date": "date",
        "_op": "string",
        "_source_ts": "timestamp",
    }
    table = rectify.LandingTable(
        "source.t.landing.people",
        "default",
        f"rectify_{landing_format}",
        "patient_id",
        ("email",),
        columns,
        None,  # type: ignore[arg-type]  (no bronze reader: written and read back only)
        format=landing_format,
    )
    folder = tmp_path / table.identifier
    folder.mkdir()
    written = (
        "P0000001",
        'ada "the first", lovelace@example.org',
        datetime(1980, 2, 29).date(),
        "update",
        datetime(2026, 11, 27, 12, 0, 0, 123000),
    )
    frame = spark.createDataFrame([written], schema=rectify.landing_schema(table))
    path = rectify.land_event(folder, "rec-20261127T120000-0123456789", frame, table)
    assert path.name == f"rectify-rec-20261127T120000-0123456789.{landing_format}"
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
    spark.sql(f"drop table if exists default.{table.identifier}")
    spark.sql(
        f"create table default.{table.identifier} ({rectify.landing_schema(table)}) "
        f"using {landing_format} location '{folder}'"
    )
    try:
        assert [tuple(row) for row in spark.table(f"default.{table.identifier}").collect()] == [
            written
        ]
        assert rectify.event_source_ts(spark, table, path) == written[-1]
    finally:
        spark.sql(f"drop table if exists default.{table.identifier}")


def test_a_rectification_lands_where_the_catalog_reads_the_landing_table(
    built: None, spark: SparkSession, lakehouse_dir: Path, tmp_path: Path
) -> None:
    """Seam: rectify wrote its event under the landing path of dbt_project.yml,
    while a lakehouse built with `--vars '{landing_path: ...}'` registered its landing
    tables elsewhere: the build never read the correction. Guarantee: the event lands in
    the folder the catalog registered the landing table at (the one purge rewrites)."""
    subject_id = _subject(spark, "patient", 21)
    default = lakehouse_dir / "landing" / "patients"
    moved = tmp_path / "elsewhere" / "patients"
    moved.mkdir(parents=True)
    location = next(
        row[1]
        for row in spark.sql("describe table extended landing.patients").collect()
        if row[0] == "Location"
    )
    spark.sql(f"alter table landing.patients set location '{moved}'")
    try:
        assert rectify.main(["--subject-id", subject_id, "--set", "city=Westhaven"], spark) == 0
        [request] = _rectifications(spark, subject_id)
        assert request["status"] == "landed", request
        assert (moved / request["landing_file"]).is_file()
        assert not (default / request["landing_file"]).exists()
    finally:
        spark.sql(f"alter table landing.patients set location '{location}'")
        spark.sql(f"delete from privacy.rectification_requests where subject_id = '{subject_id}'")
