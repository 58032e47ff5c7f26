"""The subject access job's rules that need no Spark: input, the deadline, which
relations it reads, how values reach SQL and the package's files."""

from __future__ import annotations

import csv
import io
import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from python_jobs import subject_access
from python_jobs.project import ProjectError
from python_jobs.relations import DeltaRelation
from python_jobs.subject_access import AccessError, parse_received, sql_literal

NOW = datetime(2026, 11, 27, 12, 0, 0)


def test_text_reaches_sql_only_quoted() -> None:
    assert sql_literal("P0000010") == "'P0000010'"
    assert sql_literal("O'Brien") == "'O\\'Brien'"
    assert sql_literal("a\\'; drop table x; --") == "'a\\\\\\'; drop table x; --'"
    assert sql_literal(None) == "null" and sql_literal(3) == "3"
    with pytest.raises(TypeError):
        sql_literal(True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, NOW),
        ("2026-02-10", datetime(2026, 2, 10)),
        ("2026-02-10T09:30", datetime(2026, 2, 10, 9, 30)),
        ("2026-02-10 09:30:15", datetime(2026, 2, 10, 9, 30, 15)),
    ],
)
def test_received_at_is_a_date_or_a_utc_time(text: str | None, expected: datetime) -> None:
    assert parse_received(text, NOW) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("2026-11-28", "in the future"),
        ("2026-02-30", "not a real date"),
        ("2026-13-01", "not a real date"),
        ("yesterday", "allowed is a date"),
        ("2026-02-10T09:30+02:00", "allowed is a date"),
        ("${env:LAKEHOUSE_KEK}", "allowed is a date"),
    ],
)
def test_a_bad_received_at_says_what_is_allowed(text: str, says: str) -> None:
    with pytest.raises(AccessError, match=says):
        parse_received(text, NOW)


@pytest.mark.parametrize(
    ("received", "due"),
    [
        (datetime(2026, 2, 10), "2026-03-10 23:59:59"),
        (datetime(2026, 1, 31), "2026-02-28 23:59:59"),
        (datetime(2028, 1, 31), "2028-02-29 23:59:59"),  # leap year
        (datetime(2026, 12, 5, 23, 59), "2027-01-05 23:59:59"),
    ],
)
def test_the_deadline_is_the_erasure_requests_one_calendar_month(
    received: datetime, due: str
) -> None:
    assert subject_access.deadline_of(received) == due


def _relation(name: str, **privacy: object) -> DeltaRelation:
    schema, _, table = name.partition("_")
    return DeltaRelation(f"model.p.{name}", name, schema, table, "model", privacy=dict(privacy))


def test_it_reads_every_relation_with_a_subject_key_of_the_subjects_type() -> None:
    relations = [
        _relation("bronze_patients", subject_key="patient_id", subject_type="patient"),
        _relation(
            "silver_patients",
            subject_key="patient_pseudonym",
            subject_key_kind="pseudonym",
            subject_type="patient",
        ),
        _relation("bronze_users", subject_key="user_id", subject_type="user"),
        _relation(
            "silver_quarantine", subject_key="subject_pseudonym", subject_key_kind="pseudonym"
        ),
        _relation("privacy_subject_keys", subject_key="subject_id", role="vault"),
        _relation("privacy_access_requests", subject_key="subject_id", role="control"),
        _relation("gold_by_city", on_erasure="retain"),
    ]
    found = {s.relation.name: s.by_pseudonym for s in subject_access.sources(relations, "patient")}
    assert found == {
        "bronze_patients": False,
        "silver_patients": True,
        "silver_quarantine": True,
        "privacy_subject_keys": False,
    }
    # a subject the vault does not know: every relation keyed by subject
    assert "bronze_users" in {s.relation.name for s in subject_access.sources(relations, None)}
    with pytest.raises(AccessError, match="subject_key"):
        subject_access.sources([_relation("x_y", subject_key="id; drop")], None)


def test_the_package_is_private_and_lists_each_files_digest(tmp_path: Path) -> None:
    folder = tmp_path / "exports" / "acc-20261127T120000-0123456789"
    extracts = [
        {
            "relation": "bronze.patients",
            "node": "model.p.bronze_patients",
            "version": 4,
            "rows": [{"patient_id": "P1", "email": "a@b", "prefs": {"k": "v"}}],
            "columns": ["patient_id", "email", "prefs"],
            "decrypted_columns": ["email"],
            "withheld_columns": [],
            "undecryptable_values": 0,
        },
        {
            "relation": "gold.none",
            "node": "n",
            "version": 1,
            "rows": [],
            "columns": [],
            "decrypted_columns": [],
            "withheld_columns": ["placed_by"],
            "undecryptable_values": 0,
        },
    ]
    request = {
        "request_id": folder.name,
        "subject_id": "P1",
        "subject_type": "patient",
        "received_at": "2026-11-27 12:00:00",
    }
    digest = subject_access.write_package(folder, request, extracts)
    assert sorted(p.name for p in folder.iterdir()) == [
        "bronze.patients.csv",
        "bronze.patients.json",
        "manifest.json",
        "summary.md",
    ]
    assert {oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {"0o600"}
    assert folder.stat().st_mode & 0o777 == 0o700
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["rows"] == 1 and manifest["searched"] == ["bronze.patients", "gold.none"]
    rows = list(csv.reader(io.StringIO((folder / "bronze.patients.csv").read_text())))
    assert rows == [["patient_id", "email", "prefs"], ["P1", "a@b", '{"k": "v"}']]
    import hashlib

    assert hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest() == digest
    # made again from scratch (a resumed request): nothing of the first package is left
    (folder / "extra").write_text("x")
    subject_access.write_package(folder, request, extracts)
    assert not (folder / "extra").exists()
    assert not folder.with_name(folder.name + ".partial").exists()
    assert os.access(folder, os.R_OK)


@pytest.mark.parametrize("value", [0, 3651, "30 days", -1, True])
def test_a_bad_export_retention_is_refused(value: object) -> None:
    with pytest.raises(ProjectError, match="access_export_retention_days"):
        subject_access.export_retention_days(value)
    assert subject_access.export_retention_days("30") == 30


def test_the_report_alerts_on_an_access_request_pending_past_its_deadline() -> None:
    from python_jobs import report

    def access(request_id: str, status: str, days_left: float | None) -> dict:
        return {
            "request_id": request_id,
            "status": status,
            "days_left": days_left,
            "received_at": None,
            "deadline": None,
            "export_deleted_at": None,
        }

    late = [access("acc-1", "pending", -2.5), access("acc-2", "pending", None)]
    fine = [access("acc-3", "pending", 4.0), access("acc-4", "exported", None)]
    built = report.Report("day", NOW, [], [], [], [], {}, access=late + fine)
    assert [r["request_id"] for r in built.access_overdue] == ["acc-1", "acc-2"]
    [line] = report.alert_lines(built)
    assert line.startswith("ALERT: 2 access request(s) past their deadline")
    assert "acc-2, with no deadline" in line  # fail closed: no deadline is the worst
    assert report.alert_lines(report.Report("day", NOW, [], [], [], [], {}, access=fine)) == []


def test_the_report_counts_completed_requests_with_and_without_a_certificate() -> None:
    """Answered access and applied rectification requests are counted by whether
    python -m python_jobs.certificate has written theirs; pending ones are not counted."""
    from python_jobs import report

    def row(request_id: str, status: str) -> dict:
        return {
            "request_id": request_id,
            "status": status,
            "days_left": 3.0,
            "received_at": None,
            "deadline": None,
            "export_deleted_at": None,
        }

    built = report.Report(
        "day",
        NOW,
        [],
        [],
        [],
        [],
        dict.fromkeys(
            ("commits", "relations", "first_commit", "last_commit", "untagged", "expired")
        ),
        certified=frozenset({"acc-1", "rec-1"}),
        access=[row("acc-1", "exported"), row("acc-2", "no_data"), row("acc-3", "pending")],
        rectification=[row("rec-1", "applied"), row("rec-2", "landed")],
    )
    [summary] = [part for kind, part in report.sections(built) if kind == "table"][:1]
    counts = {label: count for label, count in summary[1:]}
    assert counts["access and rectification requests completed, certificate issued"] == "2"
    assert counts["completed, no certificate yet (python -m python_jobs.certificate)"] == "1"
