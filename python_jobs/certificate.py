"""Certificates of erasure: one document per completed request, naming no one.

    python -m python_jobs.certificate                          # every completed request without one
    python -m python_jobs.certificate --request-id req-...     # one request (issued again)
    python -m python_jobs.certificate --verify <file>.json     # check one against the evidence

Access (acc-...) and rectification (rec-...) requests get theirs too, from their
request log (python_jobs.request_certificate); what follows is the erasure's.

A request is complete once its old files are gone: status `purged` (`dbt run-operation
gdpr_erase`, then `python -m python_jobs.purge`). Its certificate is written under
<LAKEHOUSE_DIR>/reports/certificates/ as <request_id>.json (the record) and
<request_id>.html (the same, to read, print or send). It holds the request id, the
subject's type, when the request was received, its deadline and any extension, when
it was erased, when the subject's key was destroyed and when the purge was done; per
relation the action, the Delta versions before and after, the rows expected and
removed, and when the history was purged; the verdict of the forensic scan of every
physical file, run while issuing; and a SHA-256 digest of the evidence rows. Never
the subject id, the pseudonym, the reason or who asked: a certificate may be sent to
the data subject, an auditor or a regulator as it is.

The evidence digest: the request's rows of the evidence relation
(privacy.erasure_evidence) other than re-applications (action `reapply`, which a later
restore_version adds), each the JSON object of the columns the certificate lists
(keys sorted, timestamps ISO 8601 in UTC, no spaces), one per line, the lines sorted,
joined by a newline and hashed with SHA-256. `--verify` reads the relation again,
recomputes the digest and the per-relation figures, and compares them with the file:
exit 0 when they agree, 1 when they do not (and what differs), 2 for bad input.

Reads the Delta files directly (no Spark), like the forensic scan, so it runs beside
dbt and the jobs, where the files are.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from python_jobs import request_certificate
from python_jobs.forensic_scan import (
    AREAS,
    VERDICTS,
    Witness,
    _relation,
    live_rows,
    looked_for,
    read_witness,
    savepoint_copies,
    scan,
    warehouse_dir,
)
from python_jobs.project import (
    ProjectError,
    id_path,
    landing_dir,
    manifest,
    private_folder,
    prog,
    run_job,
    state_dir,
)
from python_jobs.relations import DeltaRelation, delta_relations
from python_jobs.request_states import request_id_pattern

FORMAT = "gdpr_lakehouse erasure certificate"
VERSION = 1
# what a relation's line of the certificate shows, from its evidence row
RELATION_FIELDS = (
    "relation",
    "action",
    "status",
    "version_before",
    "version_after",
    "rows_expected",
    "rows_affected",
    "erased_at",
    "reorg_at",
    "purged_at",
)
REQUEST_FIELDS = (*request_certificate.REQUEST_BASE, "erased_at", "shredded_at", "purged_at")


class CertificateError(ProjectError):
    """Bad input, or a request that cannot be certified, stated for a user."""


# -- the record -----------------------------------------------------------------------


def _value(value: Any) -> Any:
    """A cell as JSON holds it: times in ISO 8601 UTC, everything else as is."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo is None else value.astimezone(UTC).replace(tzinfo=None)
        return moment.isoformat(timespec="microseconds") + "Z"
    if isinstance(value, date):
        return value.isoformat()
    return value


def evidence_digest(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """SHA-256 of the rows' canonical lines (see the module's doc); order-free."""
    lines = sorted(
        json.dumps(
            {column: _value(row.get(column)) for column in columns},
            sort_keys=True,
            separators=(",", ":"),
        )
        for row in rows
    )
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _rows(relation: DeltaRelation, warehouse: Path) -> list[dict[str, Any]]:
    table = live_rows(relation.path(warehouse))
    if table is None:
        raise CertificateError(
            f"{relation.schema}.{relation.identifier} is not built yet; run `dbt build` first"
        )
    return table.to_pylist()


def _request(request_id: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    found = [row for row in requests if row.get("request_id") == request_id]
    if not found:
        raise CertificateError(f"no erasure request {request_id} in the request log")
    return found[0]


def _evidence(request_id: str, evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        row
        for row in evidence
        if row.get("request_id") == request_id and row.get("action") != "reapply"
    ]


def _figures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The relations' lines of the certificate, in a stable order."""
    lines = [{field: _value(row.get(field)) for field in RELATION_FIELDS} for row in rows]
    return sorted(lines, key=lambda line: (str(line["relation"]), str(line["action"])))


def _scan_verdict(
    request: dict[str, Any],
    relations: list[DeltaRelation],
    warehouse: Path,
    witness: Witness | None = None,
    skip: frozenset[Path] = frozenset(),
) -> dict[str, Any]:
    """The forensic scan of every area for the request's subject: counts, never what.
    With a witness (captured before erasure) it also looks for the pseudonym, the key
    and the PII values, and tells ciphertext from plaintext."""
    subject_id = request.get("subject_id")
    if witness is not None and subject_id and witness.subject_id != subject_id:
        raise CertificateError(f"the witness file is not of the subject of {request['request_id']}")
    if witness is None and not subject_id:
        return {
            "performed": False,
            "why": "the request log no longer names the subject (var erasure_record_retention_days); "
            "give --witness",
        }
    witness = witness or Witness(subject_id)
    # the kept savepoints' copies too, as the scan reads them (one it cannot see stops it)
    scanned = relations + savepoint_copies(relations, warehouse)
    residues, stats = scan(witness, scanned, warehouse, landing_dir(), AREAS, skip)
    counts = {verdict: 0 for verdict in VERDICTS}
    for residue in residues:
        counts[residue.verdict] += 1
    return {
        "performed": True,
        "at": _value(datetime.now(UTC)),
        "clean": counts["readable"] == 0,
        "residues": counts,
        "files": stats["files"],
        "relations": stats["relations"],
        # what was scanned, and what was looked for and not there: never claimed scanned
        "areas": ["relations", *stats["area_names"]],
        "not_scanned": stats["not_scanned"],
        # the landing tables' folders: those builds read (the ledger); where the catalog
        # holds them now is asked only by python -m python_jobs.forensic_scan
        "landing_catalog_asked": stats["catalog_asked"],
        "looked_for": looked_for(witness.needles()),
    }


def build(
    request_id: str,
    relations: list[DeltaRelation],
    warehouse: Path,
    *,
    with_scan: bool = True,
    witness: Witness | None = None,
    skip: frozenset[Path] = frozenset(),
) -> dict[str, Any]:
    """The certificate of one purged request, as a JSON-ready dict."""
    requests = _rows(_relation(relations, "privacy_erasure_requests"), warehouse)
    request = _request(request_id, requests)
    if request.get("status") != "purged":
        raise CertificateError(
            f"request {request_id} is {request.get('status')}, not purged: a certificate is "
            "issued once its old files are gone (gdpr_erase, then python -m python_jobs.purge)"
        )
    evidence_relation = _relation(relations, "privacy_erasure_evidence")
    evidence = _evidence(request_id, _rows(evidence_relation, warehouse))
    if not evidence:
        raise CertificateError(
            f"request {request_id} is purged but has no evidence rows: nothing to certify; "
            "look at privacy.erasure_evidence before anything else"
        )
    columns = sorted(evidence[0])
    deadline = request.get("deadline")
    erased = request.get("erased_at")
    return {
        "format": FORMAT,
        "version": VERSION,
        "issued_at": _value(datetime.now(UTC)),
        "request": {field: _value(request.get(field)) for field in REQUEST_FIELDS},
        "completed_on_time": bool(erased and deadline and erased <= deadline),
        "relations": _figures(evidence),
        "rows_removed": sum(int(row.get("rows_affected") or 0) for row in evidence),
        "evidence": {
            "relation": f"{evidence_relation.schema}.{evidence_relation.identifier}",
            "rows": len(evidence),
            "columns": columns,
            "excluded": "action reapply (re-applications by a later restore_version)",
            "sha256": evidence_digest(evidence, columns),
        },
        "forensic_scan": _scan_verdict(request, relations, warehouse, witness, skip)
        if with_scan
        else {"performed": False, "why": "not asked for (--no-scan)"},
    }


def verify(
    certificate: dict[str, Any], relations: list[DeltaRelation], warehouse: Path
) -> list[str]:
    """What differs between a certificate and the evidence relation now ([] when nothing)."""
    if certificate.get("format") != FORMAT or certificate.get("version") != VERSION:
        raise CertificateError(f"not a {FORMAT} of version {VERSION}")
    request_id = str((certificate.get("request") or {}).get("request_id", ""))
    if not request_id_pattern("erasure").match(request_id):
        raise CertificateError(f"the certificate names no valid request id ({request_id[:60]!r})")
    claimed = certificate.get("evidence") or {}
    columns = claimed.get("columns")
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise CertificateError("the certificate lists no evidence columns")
    evidence = _evidence(
        request_id, _rows(_relation(relations, "privacy_erasure_evidence"), warehouse)
    )
    problems = []
    if len(evidence) != claimed.get("rows"):
        problems.append(
            f"the evidence holds {len(evidence)} row(s) of {request_id}; the certificate says {claimed.get('rows')}"
        )
    if evidence_digest(evidence, columns) != claimed.get("sha256"):
        problems.append(
            "the evidence rows' SHA-256 is not the certificate's: a row was changed, added or removed"
        )
    if _figures(evidence) != certificate.get("relations"):
        problems.append("the certificate's per-relation figures are not what the evidence says")
    total = sum(int(row.get("rows_affected") or 0) for row in evidence)
    if total != certificate.get("rows_removed"):
        problems.append(
            f"rows removed: the evidence says {total}, the certificate {certificate.get('rows_removed')}"
        )
    return problems


def build_any(request_id: str, relations: list[DeltaRelation], warehouse: Path) -> dict[str, Any]:
    """The certificate of an access or rectification request, or of an erasure (without
    the forensic scan: main() runs it for erasures)."""
    if request_certificate.request_type(request_id) is not None:
        return request_certificate.build(request_id, relations, warehouse)
    return build(request_id, relations, warehouse, with_scan=False)


def verify_any(
    certificate: dict[str, Any], relations: list[DeltaRelation], warehouse: Path
) -> list[str]:
    """verify() for whichever kind of certificate this is."""
    if certificate.get("format") == request_certificate.FORMAT:
        return request_certificate.verify(certificate, relations, warehouse)
    return verify(certificate, relations, warehouse)


# -- output ---------------------------------------------------------------------------


def render_html(certificate: dict[str, Any]) -> str:
    """The certificate as a self-contained page; every value escaped."""
    e = lambda value: html.escape("" if value is None else str(value))  # noqa: E731
    request = certificate["request"]
    scanned = certificate["forensic_scan"]
    rows = "".join(
        "<tr>" + "".join(f"<td>{e(line[field])}</td>" for field in RELATION_FIELDS) + "</tr>"
        for line in certificate["relations"]
    )
    facts = "".join(
        f"<tr><th>{e(field.replace('_', ' '))}</th><td>{e(request[field])}</td></tr>"
        for field in REQUEST_FIELDS
    )
    if scanned["performed"]:
        verdict = (
            f"{'clean' if scanned['clean'] else 'NOT CLEAN'}: {scanned['residues']['readable']} readable, "
            f"{scanned['residues'].get('unlinkable', 0)} unlinkable (pseudonym, nothing maps it back), "
            f"{scanned['residues']['unreadable']} unreadable (key destroyed), "
            f"{scanned['residues']['retained']} retained by contract; {scanned['files']} files of "
            f"{scanned['relations']} relations and {', '.join(scanned['areas'])} scanned at {scanned['at']}"
            + (
                f"; NOT scanned: {', '.join(scanned['not_scanned'])}"
                if scanned.get("not_scanned")
                else ""
            )
        )
    else:
        verdict = f"not performed: {scanned['why']}"
    evidence = certificate["evidence"]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Certificate of erasure {e(request["request_id"])}</title>
<style>body{{font-family:sans-serif;max-width:72em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #999;padding:.2em .5em;text-align:left}}</style></head><body>
<h1>Certificate of erasure</h1>
<p>Request {e(request["request_id"])} ({e(request["subject_type"])}) was completed
{"on time" if certificate["completed_on_time"] else "LATE or without a recorded deadline"}:
{e(certificate["rows_removed"])} row(s) removed from {len(certificate["relations"])} relation(s),
the subject's key destroyed at {e(request["shredded_at"])}, the history purged at {e(request["purged_at"])}.
Issued {e(certificate["issued_at"])}. It names no one.</p>
<h2>The request</h2><table>{facts}</table>
<h2>Per relation</h2><table><tr>{"".join(f"<th>{e(f.replace('_', ' '))}</th>" for f in RELATION_FIELDS)}</tr>{rows}</table>
<h2>Forensic scan of every physical file</h2><p>{e(verdict)}</p>
<h2>Evidence digest</h2><p>SHA-256 <code>{e(evidence["sha256"])}</code> over {e(evidence["rows"])} row(s) of
{e(evidence["relation"])} (excluded: {e(evidence["excluded"])}), columns {e(", ".join(evidence["columns"]))}.
Check it with <code>python -m python_jobs.certificate --verify {e(request["request_id"])}.json</code>.</p>
</body></html>
"""


def write(certificate: dict[str, Any], folder: Path) -> list[Path]:
    name = certificate["request"]["request_id"]
    paths = [id_path(folder, name, ".json"), id_path(folder, name, ".html")]
    folder.mkdir(parents=True, exist_ok=True)
    paths[0].write_text(json.dumps(certificate, indent=2, sort_keys=True) + "\n")
    page = (
        request_certificate.render_html(certificate)
        if certificate.get("format") == request_certificate.FORMAT
        else render_html(certificate)
    )
    paths[1].write_text(page)
    return paths


def certificates_dir() -> Path:
    return state_dir() / "reports" / "certificates"


# -- the job --------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.certificate"), description=__doc__.split("\n\n")[0]
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--request-id", help="issue (again) the certificate of this purged request")
    what.add_argument("--verify", type=Path, help="check a certificate file against the evidence")
    parser.add_argument(
        "--output-dir",
        type=Path,
        help="where to write (default <LAKEHOUSE_DIR>/reports/certificates)",
    )
    parser.add_argument(
        "--witness",
        type=Path,
        help="the witness file forensic_scan captured before erasure (with --request-id): the "
        "scan then also looks for the pseudonym, the key and the PII values",
    )
    parser.add_argument(
        "--no-scan",
        action="store_true",
        help="skip the forensic scan (the certificate then says it was not performed)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if (
        args.request_id is not None
        and not request_id_pattern("erasure").match(args.request_id)
        and request_certificate.request_type(args.request_id) is None
    ):
        raise CertificateError(
            f"--request-id {args.request_id[:80]!r} is not a request id (req-, acc- or "
            "rec-<yyyymmddThhmmss>-<10 hex>: erasure, access, rectification)"
        )
    if args.witness is not None and (
        args.request_id is None
        or args.no_scan
        or request_certificate.request_type(args.request_id) is not None
    ):
        raise CertificateError(
            "--witness is of one subject: give it with the --request-id of an erasure, and "
            "without --no-scan"
        )
    witness = read_witness(args.witness) if args.witness is not None else None
    relations = delta_relations(manifest())
    warehouse = warehouse_dir()
    if args.verify is not None:
        try:
            certificate = json.loads(args.verify.read_text())
        except (OSError, ValueError) as error:
            raise CertificateError(
                f"--verify {args.verify}: not a readable JSON file ({error})"
            ) from error
        if not isinstance(certificate, dict):
            raise CertificateError(f"--verify {args.verify}: not a {FORMAT}")
        problems = verify_any(certificate, relations, warehouse)
        request_id = certificate["request"]["request_id"]
        if problems:
            print(f"certificate of {request_id}: DOES NOT MATCH the evidence", file=sys.stderr)
            for problem in problems:
                print(f"  {problem}", file=sys.stderr)
            return 1
        print(
            f"certificate of {request_id}: matches the evidence "
            f"({certificate['evidence']['rows']} evidence rows, SHA-256 {certificate['evidence']['sha256'][:16]}...)"
        )
        return 0
    if args.output_dir is None:
        private_folder(certificates_dir().parent)  # the lakehouse's reports: its owner's only
    folder = (args.output_dir or certificates_dir()).resolve()
    if args.request_id is not None:
        wanted = [args.request_id]
    else:
        requests = _rows(_relation(relations, "privacy_erasure_requests"), warehouse)
        wanted = sorted(
            row["request_id"]
            for row in requests
            if row.get("status") == "purged"
            and row.get("request_id")
            and not id_path(folder, row["request_id"], ".json").exists()
        )
        for kind in request_certificate.TYPES:
            try:
                rows = _rows(request_certificate._log(relations, kind), warehouse)
            except ProjectError as error:  # a log this lakehouse has not built yet
                print(f"certificate: {kind} requests skipped: {error}")
                continue
            wanted += [
                request_id
                for request_id in request_certificate.completed(rows, kind)
                if not id_path(folder, request_id, ".json").exists()
            ]
    if not wanted:
        print(f"certificate: every completed request has its certificate in {folder}")
        return 0
    unclean = 0
    for request_id in wanted:
        if request_certificate.request_type(request_id) is not None:
            issued = build_any(request_id, relations, warehouse)
            paths = write(issued, folder)
            print(
                f"certificate of {request_id} ({issued['type']}, {issued['request']['status']}), "
                f"evidence SHA-256 {issued['evidence']['sha256'][:16]}...\n  {paths[0]}\n  {paths[1]}"
            )
            continue
        certificate = build(
            request_id,
            relations,
            warehouse,
            with_scan=not args.no_scan,
            witness=witness,
            skip=frozenset({args.witness.resolve()} if args.witness else set()),
        )
        paths = write(certificate, folder)
        scanned = certificate["forensic_scan"]
        verdict = (
            (
                "clean"
                if scanned["clean"]
                else f"{scanned['residues']['readable']} READABLE residue(s)"
            )
            if scanned["performed"]
            else "not scanned"
        )
        unclean += scanned["performed"] and not scanned["clean"]
        print(
            f"certificate of {request_id}: {certificate['rows_removed']} row(s) in "
            f"{len(certificate['relations'])} relation(s), scan {verdict}, evidence SHA-256 "
            f"{certificate['evidence']['sha256'][:16]}...\n  {paths[0]}\n  {paths[1]}"
        )
    # a certificate whose scan found readable residue is written (it says so), and the
    # run fails, for cron and CI
    return 1 if unclean else 0


if __name__ == "__main__":
    run_job(main, "certificate")
