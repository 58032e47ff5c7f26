"""python_jobs.certificate on hand-made Delta tables (no JVM): what a certificate holds,
that it names no one, and that --verify catches a changed evidence row or a changed
certificate. The whole flow on real Spark + Delta is tests/functional/test_scan.py's."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from python_jobs import certificate
from python_jobs.relations import DeltaRelation

REQUEST = "req-20261101T090000-0123456789"
SUBJECT = "P0000042"
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def _table(warehouse: Path, name: str, rows: list[dict], version: int = 0) -> None:
    """Delta table privacy.<name>: one data file per version, replacing the last one."""
    folder = warehouse / "privacy.db" / name
    (folder / "_delta_log").mkdir(parents=True, exist_ok=True)
    data = f"part-{version:05d}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), folder / data)
    actions = [{"add": {"path": data}}]
    if version:
        actions.append({"remove": {"path": f"part-{version - 1:05d}.parquet"}})
    (folder / "_delta_log" / f"{version:020d}.json").write_text(
        "\n".join(json.dumps(action) for action in actions) + "\n"
    )


def _relations() -> list[DeltaRelation]:
    return [
        DeltaRelation(f"model.x.{name}", name, "privacy", name.removeprefix("privacy_"), "model")
        for name in ("privacy_erasure_requests", "privacy_erasure_evidence")
    ]


def _evidence(rows_affected: int = 3) -> list[dict]:
    common = {"request_id": REQUEST, "attempts": 1, "status": "done", "detail": None}
    return [
        common
        | {
            "relation": "bronze.patients",
            "node": "model.x.bronze_patients",
            "action": "delete",
            "version_before": 4,
            "version_after": 5,
            "rows_expected": rows_affected,
            "rows_affected": rows_affected,
            "started_at": T0 + timedelta(days=1),
            "erased_at": T0 + timedelta(days=1, seconds=5),
            "reorg_at": T0 + timedelta(days=2),
            "purged_at": T0 + timedelta(days=2, seconds=9),
        },
        common
        | {
            "relation": "privacy.subject_keys",
            "node": "model.x.privacy_subject_keys",
            "action": "shred",
            "version_before": 7,
            "version_after": 8,
            "rows_expected": 1,
            "rows_affected": 1,
            "started_at": T0 + timedelta(days=1),
            "erased_at": T0 + timedelta(days=1, seconds=6),
            "reorg_at": None,
            "purged_at": T0 + timedelta(days=2, seconds=9),
        },
        # a later restore_version's re-application: not part of the certificate
        common
        | {
            "relation": "bronze.patients",
            "node": "model.x.bronze_patients",
            "action": "reapply",
            "version_before": 9,
            "version_after": 10,
            "rows_expected": 1,
            "rows_affected": 1,
            "started_at": T0 + timedelta(days=20),
            "erased_at": T0 + timedelta(days=20),
            "reorg_at": None,
            "purged_at": None,
        },
    ]


def _request(status: str = "purged") -> dict:
    return {
        "request_id": REQUEST,
        "subject_id": SUBJECT,
        "subject_type": "patient",
        "subject_pseudonym": None,
        "reason": "Dr Roe asked on the phone",
        "requested_by": "jane.doe",
        "received_at": T0,
        "deadline": T0 + timedelta(days=30),
        "status": status,
        "erased_at": T0 + timedelta(days=1, seconds=7),
        "shredded_at": T0 + timedelta(days=1, seconds=6),
        "purged_at": T0 + timedelta(days=2, seconds=10),
        "deadline_extension": None,
    }


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    _table(tmp_path, "erasure_requests", [_request()])
    _table(tmp_path, "erasure_evidence", _evidence())
    return tmp_path


def test_a_certificate_holds_the_figures_and_names_no_one(warehouse: Path) -> None:
    issued = certificate.build(REQUEST, _relations(), warehouse, with_scan=False)
    assert issued["request"]["request_id"] == REQUEST and issued["completed_on_time"]
    assert issued["request"]["shredded_at"] == "2026-11-02T09:00:06.000000Z"
    assert [(r["relation"], r["action"]) for r in issued["relations"]] == [
        ("bronze.patients", "delete"),
        ("privacy.subject_keys", "shred"),
    ]
    assert issued["rows_removed"] == 4 and issued["evidence"]["rows"] == 2
    assert issued["forensic_scan"] == {"performed": False, "why": "not asked for (--no-scan)"}
    paths = certificate.write(issued, warehouse / "certificates")
    for path in paths:
        text = path.read_text()
        for personal in (SUBJECT, "Dr Roe", "jane.doe"):
            assert personal not in text, (path.name, personal)
    assert json.loads(paths[0].read_text()) == issued
    assert "<h1>Certificate of erasure</h1>" in paths[1].read_text()


def test_the_digest_is_order_free_and_changes_with_any_value() -> None:
    rows = _evidence()[:2]
    columns = sorted(rows[0])
    digest = certificate.evidence_digest(rows, columns)
    assert certificate.evidence_digest(list(reversed(rows)), columns) == digest
    naive = [row | {"started_at": row["started_at"].replace(tzinfo=None)} for row in rows]
    assert certificate.evidence_digest(naive, columns) == digest  # the same instant, UTC
    changed = [rows[0] | {"rows_affected": 2}, rows[1]]
    assert certificate.evidence_digest(changed, columns) != digest
    assert certificate.evidence_digest(rows[:1], columns) != digest


def test_verify_agrees_then_catches_a_changed_row_and_a_changed_certificate(
    warehouse: Path,
) -> None:
    issued = json.loads(
        json.dumps(certificate.build(REQUEST, _relations(), warehouse, with_scan=False))
    )
    assert certificate.verify(issued, _relations(), warehouse) == []
    # a later re-application does not change what was certified
    _table(warehouse, "erasure_evidence", [*_evidence(), _evidence()[2] | {"version_after": 11}], 1)
    assert certificate.verify(issued, _relations(), warehouse) == []
    # an evidence row changed after the certificate: found
    _table(warehouse, "erasure_evidence", _evidence(rows_affected=2), 2)
    problems = certificate.verify(issued, _relations(), warehouse)
    assert any("SHA-256" in p for p in problems) and any("rows removed" in p for p in problems)
    # the certificate changed instead: found
    _table(warehouse, "erasure_evidence", _evidence(), 3)
    forged = issued | {"rows_removed": 40}
    assert certificate.verify(forged, _relations(), warehouse) == [
        "rows removed: the evidence says 4, the certificate 40"
    ]


@pytest.mark.parametrize(
    ("status", "message"),
    [("erased", "is erased, not purged"), ("pending", "is pending, not purged")],
)
def test_only_a_purged_request_is_certified(warehouse: Path, status: str, message: str) -> None:
    _table(warehouse, "erasure_requests", [_request(status)], 1)
    with pytest.raises(certificate.CertificateError, match=message):
        certificate.build(REQUEST, _relations(), warehouse, with_scan=False)


def test_an_unknown_request_and_a_foreign_file_are_refused(warehouse: Path) -> None:
    with pytest.raises(certificate.CertificateError, match="no erasure request req-"):
        certificate.build(
            "req-20261101T090000-ffffffffff", _relations(), warehouse, with_scan=False
        )
    with pytest.raises(
        certificate.CertificateError, match="not a gdpr_lakehouse erasure certificate"
    ):
        certificate.verify({"format": "x"}, _relations(), warehouse)
    with pytest.raises(certificate.CertificateError, match="is not a request id"):
        certificate.main(["--request-id", "req-1' or '1'='1"])


ACCESS = "acc-20261101T090000-0123456789"
RECTIFICATION = "rec-20261101T090000-0123456789"


def _request_logs(warehouse: Path, version: int = 0, **changed: object) -> None:
    common = {
        "subject_id": SUBJECT,
        "subject_type": "patient",
        "requested_by": "jane.doe",
        "received_at": T0,
        "deadline": T0 + timedelta(days=30),
        "completed_at": T0 + timedelta(days=3),
        "updated_at": T0 + timedelta(days=3),
    }
    _table(
        warehouse,
        "access_requests",
        [
            common
            | {
                "request_id": ACCESS,
                "status": "exported",
                "status_reason": None,
                "relations_exported": 7,
                "rows_exported": 11,
                "export_path": f"/lake/exports/{ACCESS}",
                "package_sha256": "ab" * 32,
                "export_deleted_at": None,
            }
            | changed
        ],
        version,
    )
    _table(
        warehouse,
        "rectification_requests",
        [
            common
            | {
                "request_id": RECTIFICATION,
                "status": "applied",
                "status_reason": "Dr Roe's new address, said on the phone",
                "landing_table": "landing.patients",
                "columns_changed": "email",
                "landing_file": f"rectify-{RECTIFICATION}.parquet",
                "event_source_ts": T0 + timedelta(days=1),
                "applied_in": "bronze.patients",
                "applied_version": 5,
            }
        ],
        version,
    )


def _all_relations() -> list[DeltaRelation]:
    return [
        *_relations(),
        *(
            DeltaRelation(
                f"model.x.{name}", name, "privacy", name.removeprefix("privacy_"), "model"
            )
            for name in ("privacy_access_requests", "privacy_rectification_requests")
        ),
    ]


@pytest.mark.parametrize(
    ("request_id", "kind", "fact"),
    [
        (ACCESS, "access", ("rows_exported", 11)),
        (RECTIFICATION, "rectification", ("applied_version", 5)),
    ],
)
def test_access_and_rectification_requests_get_a_certificate_naming_no_one(
    warehouse: Path, request_id: str, kind: str, fact: tuple
) -> None:
    _request_logs(warehouse)
    issued = json.loads(json.dumps(certificate.build_any(request_id, _all_relations(), warehouse)))
    assert issued["type"] == kind and issued["completed_on_time"]
    assert issued["request"][fact[0]] == fact[1]
    assert issued["request"]["completed_at"] == "2026-11-04T09:00:00.000000Z"
    for personal in ("subject_id", "requested_by", "status_reason", "export_path"):
        assert personal not in issued["request"] and personal not in issued["evidence"]["columns"]
    paths = certificate.write(issued, warehouse / "certificates")
    for path in paths:
        text = path.read_text()
        for personal in (SUBJECT, "jane.doe", "Dr Roe", "/lake/exports"):
            assert personal not in text, (path.name, personal)
    assert "It names no one" in paths[1].read_text()
    assert certificate.verify_any(issued, _all_relations(), warehouse) == []


def test_a_request_certificate_verifies_until_its_row_changes(warehouse: Path) -> None:
    _request_logs(warehouse)
    issued = json.loads(json.dumps(certificate.build_any(ACCESS, _all_relations(), warehouse)))
    # the export deleted later (purge), the subject id redacted (record retention): still true
    _request_logs(warehouse, 1, export_deleted_at=T0 + timedelta(days=40), subject_id=None)
    assert certificate.verify_any(issued, _all_relations(), warehouse) == []
    # what was done changed after the certificate: found
    _request_logs(warehouse, 2, rows_exported=12)
    problems = certificate.verify_any(issued, _all_relations(), warehouse)
    assert any("SHA-256" in p for p in problems) and any(
        p.startswith("rows_exported") for p in problems
    )


def test_an_open_or_unknown_request_gets_no_certificate(warehouse: Path) -> None:
    _request_logs(warehouse, status="pending", completed_at=None)
    with pytest.raises(
        certificate.CertificateError, match="is pending: a certificate is issued once"
    ):
        certificate.build_any(ACCESS, _all_relations(), warehouse)
    with pytest.raises(certificate.CertificateError, match="no access request acc-"):
        certificate.build_any("acc-20261101T090000-ffffffffff", _all_relations(), warehouse)
    with pytest.raises(certificate.CertificateError, match="acc- or rec-"):
        certificate.main(["--request-id", "acc-1' or '1'='1"])
    with pytest.raises(certificate.CertificateError, match="--request-id of an erasure"):
        certificate.main(["--request-id", ACCESS, "--witness", "w.json"])


def test_a_request_id_read_back_from_a_log_never_names_a_file_outside_its_folder(
    tmp_path: Path,
) -> None:
    """Seam: request ids read back from the request logs (tables any
    writer of the lakehouse can insert into) became file names unchecked: a certificate
    of `../../x` was written outside the certificates folder. Guarantee: an id that is
    not one the project writes names no file, and nothing is written."""
    from python_jobs import certificate
    from python_jobs.project import ProjectError

    folder = tmp_path / "reports" / "certificates"
    forged = {"request": {"request_id": "../../escaped"}, "format": "x"}
    with pytest.raises(ProjectError, match="names no file"):
        certificate.write(forged, folder)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []
