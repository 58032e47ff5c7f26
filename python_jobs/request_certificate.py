"""Certificates of access and rectification requests: one document per completed
request, naming no one (the erasure certificate's twins; python -m python_jobs.certificate
issues and verifies all three).

A request is complete when its log row says so: an access request (privacy.access_requests)
`exported`, `no_data` or `refused`; a rectification (privacy.rectification_requests)
`applied`, `refused` or `cancelled`. The certificate holds the request's id, type, the
subject's type, when it was received, its deadline, when it was completed and whether
on time, and what was done: for access the relations and rows exported and the SHA-256
of the package's manifest (the export itself stays private, and is deleted after its
retention); for rectification the landing table, the names of the corrected columns,
the event's file and source time, and the relation and Delta version that applied it.
Never the subject id, who asked or the free-text reason: a certificate may be sent as
it is. Its evidence digest is the SHA-256 of the request row's certified columns (the
erasure certificate's canonical lines), so `--verify` recomputes it from the log; the
log's record retention (purge) nulls only columns the certificate leaves out.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from python_jobs.relations import DeltaRelation
from python_jobs.request_states import request_id_pattern

FORMAT = "gdpr_lakehouse request certificate"
VERSION = 1
# what every certificate shows of its request, erasure's too (python_jobs.certificate)
REQUEST_BASE = (
    "request_id",
    "subject_type",
    "status",
    "received_at",
    "deadline",
    "deadline_extension",
)
# and an access or rectification request's
COMMON = (*REQUEST_BASE, "completed_at")
# request type -> (its id, its log model, completed statuses, the columns certified)
TYPES: dict[str, dict[str, Any]] = {
    "access": {
        "log": "privacy_access_requests",
        "completed": ("exported", "no_data", "refused"),
        "fields": (
            *COMMON,
            "relations_exported",
            "rows_exported",
            "package_sha256",
            "export_deleted_at",
        ),
        "title": "Certificate of a subject access request",
    },
    "rectification": {
        "log": "privacy_rectification_requests",
        "completed": ("applied", "refused", "cancelled"),
        "fields": (
            *COMMON,
            "landing_table",
            "columns_changed",
            "landing_file",
            "event_source_ts",
            "applied_in",
            "applied_version",
        ),
        "title": "Certificate of a rectification request",
    },
}
# the fields whose value changes after completion without changing what was done: the
# export's deletion is recorded later (purge); it is shown, not digested
MUTABLE = ("export_deleted_at",)


def request_type(request_id: str) -> str | None:
    """'access' or 'rectification' for an id of that kind, else None."""
    for kind in TYPES:
        if request_id_pattern(kind).match(request_id):
            return kind
    return None


def _log(relations: list[DeltaRelation], kind: str) -> DeltaRelation:
    from python_jobs.forensic_scan import _relation

    return _relation(relations, TYPES[kind]["log"])


def _row(request_id: str, kind: str, relations: list[DeltaRelation], warehouse: Path) -> dict:
    from python_jobs.certificate import CertificateError, _rows

    found = [
        row
        for row in _rows(_log(relations, kind), warehouse)
        if row.get("request_id") == request_id
    ]
    if not found:
        raise CertificateError(f"no {kind} request {request_id} in the request log")
    return found[0]


def digested(kind: str) -> list[str]:
    return sorted(f for f in TYPES[kind]["fields"] if f not in MUTABLE)


def completed(rows: list[dict[str, Any]], kind: str) -> list[str]:
    """The ids of the log's completed requests of this type."""
    return sorted(
        row["request_id"]
        for row in rows
        if row.get("request_id") and row.get("status") in TYPES[kind]["completed"]
    )


def build(request_id: str, relations: list[DeltaRelation], warehouse: Path) -> dict[str, Any]:
    """The certificate of one completed access or rectification request."""
    from python_jobs.certificate import CertificateError, _value, evidence_digest

    kind = request_type(request_id)
    if kind is None:
        raise CertificateError(f"{request_id[:80]!r} is not an access or rectification request id")
    spec = TYPES[kind]
    row = _row(request_id, kind, relations, warehouse)
    if row.get("status") not in spec["completed"]:
        raise CertificateError(
            f"{kind} request {request_id} is {row.get('status')}: a certificate is issued once "
            f"it is completed ({', '.join(spec['completed'])})"
        )
    log = _log(relations, kind)
    columns = digested(kind)
    done, deadline = row.get("completed_at"), row.get("deadline")
    return {
        "format": FORMAT,
        "version": VERSION,
        "type": kind,
        "issued_at": _value(datetime.now(UTC)),
        "request": {field: _value(row.get(field)) for field in spec["fields"]},
        "completed_on_time": bool(done and deadline and done <= deadline),
        "evidence": {
            "relation": f"{log.schema}.{log.identifier}",
            "rows": 1,
            "columns": columns,
            "sha256": evidence_digest([row], columns),
        },
    }


def verify(
    certificate: dict[str, Any], relations: list[DeltaRelation], warehouse: Path
) -> list[str]:
    """What differs between the certificate and the request log now ([] when nothing)."""
    from python_jobs.certificate import CertificateError, _value, evidence_digest

    if certificate.get("format") != FORMAT or certificate.get("version") != VERSION:
        raise CertificateError(f"not a {FORMAT} of version {VERSION}")
    request_id = str((certificate.get("request") or {}).get("request_id", ""))
    kind = request_type(request_id)
    if kind is None or certificate.get("type") != kind:
        raise CertificateError(f"the certificate names no valid request id ({request_id[:60]!r})")
    row = _row(request_id, kind, relations, warehouse)
    claimed = certificate.get("evidence") or {}
    # the columns it was issued over (an older certificate may digest fewer): each one
    # this type certifies, and at least the request's id, status and times
    columns = claimed.get("columns")
    if (
        not isinstance(columns, list)
        or not set(columns) <= set(digested(kind))
        or not {"request_id", "status", "received_at", "completed_at"} <= set(columns)
    ):
        raise CertificateError(
            f"the certificate's evidence columns are not those of a {kind} certificate"
        )
    problems = []
    if evidence_digest([row], columns) != claimed.get("sha256"):
        problems.append(
            "the request row's SHA-256 is not the certificate's: the row was changed since"
        )
    for field in columns:
        if _value(row.get(field)) != (certificate.get("request") or {}).get(field):
            problems.append(
                f"{field}: the log says {_value(row.get(field))}, the certificate another value"
            )
    return problems


def render_html(certificate: dict[str, Any]) -> str:
    """The certificate as a self-contained page; every value escaped."""
    e = lambda value: html.escape("" if value is None else str(value))  # noqa: E731
    request, evidence = certificate["request"], certificate["evidence"]
    title = TYPES[certificate["type"]]["title"]
    facts = "".join(
        f"<tr><th>{e(field.replace('_', ' '))}</th><td>{e(value)}</td></tr>"
        for field, value in request.items()
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{e(title)} {e(request["request_id"])}</title>
<style>body{{font-family:sans-serif;max-width:72em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #999;padding:.2em .5em;text-align:left}}</style></head><body>
<h1>{e(title)}</h1>
<p>Request {e(request["request_id"])} ({e(request["subject_type"])}) was {e(request["status"])}
at {e(request["completed_at"])},
{"on time" if certificate["completed_on_time"] else "LATE or without a recorded deadline"}.
Issued {e(certificate["issued_at"])}. It names no one.</p>
<h2>The request</h2><table>{facts}</table>
<h2>Evidence digest</h2><p>SHA-256 <code>{e(evidence["sha256"])}</code> over the request's row of
{e(evidence["relation"])}, columns {e(", ".join(evidence["columns"]))}.
Check it with <code>python -m python_jobs.certificate --verify {e(request["request_id"])}.json</code>.</p>
</body></html>
"""
