"""Access and portability (GDPR Art. 15 and 20): a subject's data, exported for them.

    python -m python_jobs.subject_access --subject-id P0000010
    python -m python_jobs.subject_access --subject-id P0000010 --received-at 2026-11-20 \\
        --requested-by "dpo office"
    dbt run-operation request_access --args '{subject_ids: [P0000010]}'   # record now,
    python -m python_jobs.subject_access                                   # answer later

Records an access request in privacy.access_requests (received, deadline one calendar
month later, var request_deadline), or takes the pending ones `request_access`
recorded, then for each reads every relation the privacy contract
says holds the subject's rows (meta.privacy subject_key: by source id or by
pseudonym), at one Delta version each, decrypts its encrypted columns with the
subject's key inside the query, and writes one package:

    <LAKEHOUSE_DIR>/exports/<request_id>/
        manifest.json     the request, and per relation its Delta version, rows,
                          columns, decrypted columns and each file's SHA-256
        <relation>.json   the rows (machine-readable: Art. 20), <relation>.csv likewise
        summary.md        what is held, in words

The folder is mode 700 and every file 600; clear values never reach a table, a log or
the job's output. The request row ends `exported` with the package's SHA-256 (of
manifest.json), `no_data` (nothing held, or the subject erased: the reason names the
erasure request and its certificate) or `refused` (an erasure of the subject is under
way: it will answer "no data held" once done). A crash leaves the request `pending`;
the next run for the subject resumes it. The vault's keys are never exported.
`python -m python_jobs.purge` deletes an export after var access_export_retention_days
(30), or at its first run after the subject is erased. Exit 0 when answered, 2 for bad input.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from python_jobs.macros import Macros, engine_macros
from python_jobs.project import (
    ProjectError,
    commit_tag,
    id_path,
    manifest,
    open_private,
    prog,
    run_job,
    state_dir,
    whole_days_var,
)
from python_jobs.relations import DeltaRelation, delta_relations, table_ref
from python_jobs.relations import control_relation as _control
from python_jobs.request_states import (
    is_subject_id,
    new_request_id,
    request_id_pattern,
    request_states,
)

ACCESS_LOG = "privacy_access_requests"
ERASURE_LOG = "privacy_erasure_requests"
EXPORT_RETENTION_DAYS = 30
# a relation the manifest declares that `dbt build` has not made yet
NOT_BUILT = (
    "TABLE_OR_VIEW_NOT_FOUND",
    "DELTA_TABLE_NOT_FOUND",
    "DELTA_MISSING_DELTA_TABLE",
    "PATH_NOT_FOUND",
)
# what a request ends as; `pending` until then
ANSWERED = ("exported", "no_data", "refused")
# printable text of one line, as the operations accept for requested_by
TEXT = re.compile(r"^[^\x00-\x1f\x7f]{1,128}$")


def sql_literal(value: Any) -> str:
    """A Python value as a Spark SQL literal: text quoted as the operations quote it."""
    if value is None:
        return "null"
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"no SQL literal for {type(value).__name__}")
    if isinstance(value, int):
        return str(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _sql(spark: SparkSession, query: str, **values: Any) -> Any:
    """spark.sql with :name markers replaced by quoted literals of `values`. (Spark's own
    named parameters stay unbound behind Delta's SQL extension: UNBOUND_SQL_PARAMETER.)"""

    def literal(match: re.Match[str]) -> str:
        name = match.group(1)
        return sql_literal(values[name]) if name in values else match.group(0)

    return spark.sql(re.sub(r"(?<![:\w]):([a-z_][a-z0-9_]*)\b", literal, query))


class AccessError(ProjectError):
    """Bad input or a lakehouse the export cannot be made from."""


def exports_dir() -> Path:
    return state_dir() / "exports"


def export_retention_days(configured: object = None) -> int:
    """Var access_export_retention_days (dbt_project.yml): whole days, 1 to 3650."""
    return whole_days_var(
        "access_export_retention_days",
        EXPORT_RETENTION_DAYS,
        3650,
        "how long an access export is kept",
        configured,
    )


def parse_received(text: str | None, now: datetime) -> datetime:
    """--received-at: a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDTHH:MM[:SS]), not in
    the future; default now."""
    if text is None:
        return now
    if not re.match(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?)?$", text):
        raise AccessError(
            f"--received-at {text[:40]!r}: allowed is a date (2026-02-10) or a UTC time "
            "(2026-02-10T09:30), the day the controller received the request"
        )
    try:
        received = datetime.fromisoformat(text.replace(" ", "T"))
    except ValueError as error:
        raise AccessError(f"--received-at {text[:40]!r} is not a real date ({error})") from None
    if received > now:
        raise AccessError(f"--received-at {text} is in the future (now {now:%Y-%m-%d %H:%M} UTC)")
    return received


def deadline_of(received: datetime, macros: Macros | None = None) -> str:
    """The request's deadline, as the erasure requests' (macro request_deadline)."""
    try:
        return str((macros or engine_macros()).request_deadline(received)).strip()
    except Macros.CompilerError as error:
        raise AccessError(str(error)) from None


@dataclass(frozen=True)
class Source:
    """A relation holding the subject's rows: how to find them and what to decrypt."""

    relation: DeltaRelation
    key: str
    by_pseudonym: bool

    @property
    def name(self) -> str:
        return f"{self.relation.schema}.{self.relation.identifier}"


def sources(relations: list[DeltaRelation], subject_type: str | None) -> list[Source]:
    """Every relation of the contract with a subject key (the vault too, without its
    keys), but the access log itself; one of another subject type is left out."""
    found = []
    for relation in relations:
        privacy = relation.privacy
        key = privacy.get("subject_key")
        if not key or relation.name == ACCESS_LOG:
            continue
        declared_type = privacy.get("subject_type")
        if declared_type and subject_type and declared_type != subject_type:
            continue
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$", str(key)):
            raise AccessError(f"{relation.unique_id} declares subject_key {str(key)[:64]!r}")
        found.append(Source(relation, str(key), privacy.get("subject_key_kind") == "pseudonym"))
    return found


def _vault(relations: list[DeltaRelation]) -> DeltaRelation:
    vaults = [r for r in relations if r.privacy.get("role") == "vault"]
    if len(vaults) != 1:
        raise AccessError(f"the manifest declares {len(vaults)} vaults (meta.privacy role: vault)")
    return vaults[0]


def properties_of(spark: SparkSession, ref: str) -> dict[str, str]:
    return {row["key"]: row["value"] for row in spark.sql(f"show tblproperties {ref}").collect()}


def key_envelope_of(spark: SparkSession, vault_ref: str) -> bool:
    """The lakehouse's key mode, as every command reads it: the vault's recorded
    property, else told by its keys' length (32 bytes plain, 60 wrapped)."""
    recorded = properties_of(spark, vault_ref).get("gdpr_lakehouse.key_envelope")
    if recorded is None:
        lengths = {
            row[0]
            for row in spark.sql(
                f"select distinct length(data_key) from {vault_ref} where left(subject_id, 2) != '__'"
            ).collect()
        }
        if lengths - {32, 60} or len(lengths) > 1:
            raise AccessError(
                f"{vault_ref} holds keys of {sorted(lengths)} bytes: the key mode cannot be told"
            )
        recorded = "true" if lengths == {60} else "false"
    if recorded not in ("true", "false"):
        raise AccessError(f"{vault_ref} records gdpr_lakehouse.key_envelope = {recorded[:20]!r}")
    return recorded == "true"


def keyed_macros(spark: SparkSession, vault_ref: str) -> Macros:
    """The engine's macros rendered in the lakehouse's recorded key mode, for SQL that
    uses a stored key (decrypt_pii, tombstone_key, source_seq), which the engine opens
    inside the statement: rendered with the var alone, a lakehouse with plain keys
    would be read as wrapped. A lakehouse whose keys and ciphertexts are not bound yet
    is refused, as every dbt command refuses it (macro assert_key_envelope)."""
    from python_jobs.project import engine_root, project_vars

    envelope = key_envelope_of(spark, vault_ref)
    declared = {**project_vars(), "key_envelope": envelope}
    macros = Macros({"var": lambda name, default=None: declared.get(name, default)}, engine_root())
    bound = properties_of(spark, vault_ref).get("gdpr_lakehouse.ciphertext_binding")
    expected = str(macros._ciphertext_binding_version()).strip()
    vault_keys = f"select count(*) from {vault_ref} where left(subject_id, 2) != '__'"
    if bound != expected and (bound is not None or spark.sql(vault_keys).first()[0] > 0):
        raise AccessError(
            f"{vault_ref} records gdpr_lakehouse.ciphertext_binding = {str(bound)[:40]}, not "
            f"{expected}: this lakehouse's keys and ciphertexts are not bound to their subjects "
            "and columns as this version reads them (a lakehouse made before bindings): bind "
            "them once with `dbt run-operation bind_ciphertexts`. Nothing was read or written"
        )
    return macros


# -- reading ------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A Spark value as JSON: times ISO 8601, decimals as text, bytes base64."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _latest_version(spark: SparkSession, ref: str) -> int:
    return int(spark.sql(f"describe history {ref} limit 1").first()["version"])


def read_source(
    spark: SparkSession,
    source: Source,
    vault_ref: str,
    subject_id: str,
    macros: Macros,
) -> dict[str, Any]:
    """The subject's rows of one relation at its latest version, decrypted in the query;
    None when the relation is not built (a model added since the last `dbt build`)."""
    try:
        ref = table_ref(spark, source.relation)
        version = _latest_version(spark, ref)
    except PySparkException as error:
        if error.getCondition() in NOT_BUILT:
            return None
        raise
    fields = spark.sql(f"select * from {ref} version as of {version}").schema.fields
    pii = set(source.relation.privacy.get("pii_columns") or [])
    is_vault = source.relation.privacy.get("role") == "vault"
    # Art. 15(4): other people's data (who placed a hold) and the operator's confidential
    # reasons are not the subject's to receive; the contract lists them
    withheld = {str(c).lower() for c in source.relation.privacy.get("withheld_from_access") or []}
    selected, decrypted, columns, left_out = [], [], [], []
    for column in fields:
        name = column.name
        quoted = f"`{name}`"
        if is_vault and name == "data_key":
            continue  # a key is never exported
        if name.lower() in withheld:
            left_out.append(name)
            continue
        if column.dataType.typeName() == "binary" and (name in pii or name.endswith("_enc")):
            plain = name.removesuffix("_enc")
            decrypt = str(
                macros.decrypt_pii(f"rows.{quoted}", "subject_key", "vault.subject_pseudonym", name)
            ).strip()
            selected.append(f"{decrypt} as `{plain}`")
            selected.append(
                f"rows.{quoted} is not null and {decrypt} is null as `{plain}__unreadable`"
            )
            decrypted.append(name)
            columns.append(plain)
        else:
            selected.append(f"rows.{quoted}")
            columns.append(name)
    match = "vault.subject_pseudonym" if source.by_pseudonym else ":subject_id"
    query = f"""
        select {", ".join(selected)}
        from {ref} version as of {version} as rows
        left join (
            select subject_pseudonym, vault.data_key as subject_key
            from {vault_ref} as vault
            where vault.subject_id = :subject_id
        ) as vault on true
        where rows.`{source.key}` = {match}
    """
    rows, unreadable = [], 0
    for row in _sql(spark, query, subject_id=subject_id).collect():
        record = row.asDict(recursive=True)
        for name in decrypted:
            unreadable += bool(record.pop(f"{name.removesuffix('_enc')}__unreadable"))
        rows.append({name: _plain(record[name]) for name in columns})
    return {
        "relation": source.name,
        "node": source.relation.unique_id,
        "version": version,
        "rows": rows,
        "columns": columns,
        "decrypted_columns": [name.removesuffix("_enc") for name in decrypted],
        "withheld_columns": left_out,
        "undecryptable_values": unreadable,
    }


# -- the package --------------------------------------------------------------------


def _write_private(path: Path, text: str) -> str:
    data = text.encode()
    with open_private(path) as handle:
        handle.write(data)
    return hashlib.sha256(data).hexdigest()


def _csv(columns: list[str], rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(
            [
                json.dumps(row[c], sort_keys=True) if isinstance(row[c], dict | list) else row[c]
                for c in columns
            ]
        )
    return buffer.getvalue()


def summary_markdown(package: dict[str, Any]) -> str:
    request = package["request"]
    lines = [
        f"# Your data held in the lakehouse ({request['request_id']})",
        "",
        f"- Subject: {request['subject_id']} ({request['subject_type'] or 'unknown type'})",
        f"- Request received: {request['received_at']}; answered: {package['generated_at']}",
        f"- Relations holding your data: {len(package['relations'])}; rows: {package['rows']}",
        "",
        "| relation | Delta version | rows | decrypted for you | files |",
        "|---|---:|---:|---|---|",
    ]
    for item in package["relations"]:
        lines.append(
            f"| {item['relation']} | {item['version']} | {item['rows']} | "
            f"{', '.join(item['decrypted_columns']) or '-'} | {', '.join(item['files'])} |"
        )
    lines += [
        "",
        "Each relation's rows are in its `.json` file (machine-readable, GDPR Art. 20) and",
        "its `.csv` file. `manifest.json` lists every file's SHA-256.",
        "",
    ]
    withheld = [
        f"{item['relation']} ({', '.join(item['withheld_columns'])})"
        for item in package["relations"]
        if item.get("withheld_columns")
    ]
    if withheld:
        lines += [
            "Withheld because they are other people's data or confidential (GDPR Art. 15(4)): "
            + "; ".join(withheld)
            + ".",
            "",
        ]
    return "\n".join(lines)


def write_package(folder: Path, request: dict[str, Any], extracts: list[dict[str, Any]]) -> str:
    """Write the export into `folder` (made anew, mode 700); returns manifest.json's SHA-256.

    Written beside it as <folder>.partial and renamed at the end, so a crash never
    leaves a half package under the request's name."""
    partial = folder.with_name(folder.name + ".partial")
    for leftover in (partial, folder):
        if leftover.exists():
            shutil.rmtree(leftover)
    folder.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(folder.parent, 0o700)
    partial.mkdir(mode=0o700)
    listed = []
    for extract in extracts:
        if not extract["rows"]:
            continue
        files = {}
        stem = extract["relation"]
        files[f"{stem}.json"] = _write_private(
            partial / f"{stem}.json", json.dumps(extract["rows"], indent=2, sort_keys=True) + "\n"
        )
        files[f"{stem}.csv"] = _write_private(
            partial / f"{stem}.csv", _csv(extract["columns"], extract["rows"])
        )
        listed.append(
            {
                "relation": extract["relation"],
                "node": extract["node"],
                "version": extract["version"],
                "rows": len(extract["rows"]),
                "columns": extract["columns"],
                "decrypted_columns": extract["decrypted_columns"],
                "withheld_columns": extract["withheld_columns"],
                "undecryptable_values": extract["undecryptable_values"],
                "files": sorted(files),
                "sha256": files,
            }
        )
    package = {
        "format": "gdpr_lakehouse subject access export",
        "version": 1,
        "request": request,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "relations": listed,
        "rows": sum(item["rows"] for item in listed),
        "searched": sorted(extract["relation"] for extract in extracts),
    }
    _write_private(partial / "summary.md", summary_markdown(package))
    digest = _write_private(
        partial / "manifest.json", json.dumps(package, indent=2, sort_keys=True) + "\n"
    )
    partial.rename(folder)
    return digest


# -- the request log ----------------------------------------------------------------


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def open_request(
    spark: SparkSession,
    log: str,
    subject_id: str,
    requested_by: str,
    received: datetime,
    deadline: str,
    now: datetime,
) -> dict[str, Any]:
    """The subject's pending access request (resumed), else a new one, recorded."""
    pending = _sql(
        spark,
        f"select request_id, cast(received_at as string) as received_at, cast(deadline as string) as deadline "
        f"from {log} where subject_id = :subject_id and status = 'pending' order by request_id limit 1",
        **{"subject_id": subject_id},
    ).first()
    if pending is not None:
        if pending["received_at"] is None or pending["deadline"] is None:
            raise AccessError(
                f"access request {pending['request_id']} is pending without a received time or "
                "deadline (not written by request_access or this job); fix or remove it first"
            )
        print(f"subject_access: answering the pending request {pending['request_id']}")
        return {
            "request_id": pending["request_id"],
            "received_at": pending["received_at"][:19],
            "deadline": pending["deadline"][:19],
            "resumed": True,
        }
    request_id = new_request_id("access", now)
    _sql(
        spark,
        f"""
        insert into {log} (request_id, subject_id, subject_type, requested_by, received_at, deadline,
            status, status_reason, relations_exported, rows_exported, export_path, package_sha256,
            completed_at, export_deleted_at, updated_at)
        values (:request_id, :subject_id, null, :requested_by, to_timestamp(:received),
            to_timestamp(:deadline), 'pending', null, null, null, null, null, null, null,
            current_timestamp())
        """,
        **{
            "request_id": request_id,
            "subject_id": subject_id,
            "requested_by": requested_by,
            "received": _stamp(received),
            "deadline": deadline,
        },
    ).collect()
    return {
        "request_id": request_id,
        "received_at": _stamp(received),
        "deadline": deadline,
        "resumed": False,
    }


def close_request(spark: SparkSession, log: str, request_id: str, **values: Any) -> None:
    _sql(
        spark,
        f"""
        update {log} set
            subject_type = :subject_type, status = :status, status_reason = :status_reason,
            relations_exported = :relations, rows_exported = :rows, export_path = :export_path,
            package_sha256 = :sha256, completed_at = current_timestamp(), updated_at = current_timestamp()
        where request_id = :request_id and status = 'pending'
        """,
        **{"request_id": request_id, **values},
    ).collect()


def erasure_state(
    spark: SparkSession, relations: list[DeltaRelation], subject_id: str
) -> tuple[str, str] | None:
    """('refused' | 'no_data', why) when an erasure request decides the answer."""
    log = table_ref(spark, _control(relations, ERASURE_LOG))
    states = request_states()
    rows = _sql(
        spark,
        f"select request_id, status from {log} where subject_id = :subject_id order by request_id",
        **{"subject_id": subject_id},
    ).collect()
    for row in rows:
        if row["status"] in states["open"]:
            return (
                "refused",
                f"the subject's erasure request {row['request_id']} is {row['status']}: "
                "its data is being erased; a request made once it is done is answered "
                "with no data held",
            )
    for row in rows:
        if row["status"] in states["fulfilled"]:
            from python_jobs.certificate import certificates_dir

            certificate = id_path(certificates_dir(), row["request_id"], ".json")
            return (
                "no_data",
                f"no data held: the subject was erased by request {row['request_id']} ("
                + (
                    f"certificate {certificate.name}"
                    if certificate.exists()
                    else "its certificate follows the purge"
                )
                + ")",
            )
    return None


# -- the job ------------------------------------------------------------------------


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    """--received-at and --requested-by, as every request job takes them."""
    parser.add_argument(
        "--received-at",
        help="when the controller received the request: a date or UTC time (default now)",
    )
    parser.add_argument(
        "--requested-by", help="who records it (default LAKEHOUSE_ACTOR or the OS user)"
    )


def request_arguments(subject_id: str | None, requested_by: str | None) -> str:
    """--subject-id (when given) checked, and who records the request: --requested-by,
    else LAKEHOUSE_ACTOR or the OS user, one line of printable text. (Every request job.)"""
    if subject_id is not None and not is_subject_id(subject_id):
        raise AccessError(
            f"--subject-id {subject_id[:80]!r} is not a subject id: allowed are the ids "
            "var subject_id_pattern admits (letters, digits, - _ . : @ by default)"
        )
    actor = requested_by or os.environ.get("LAKEHOUSE_ACTOR") or os.environ.get("USER") or "unknown"
    if not TEXT.match(actor):
        raise AccessError(
            "--requested-by: allowed is one line of printable text, 128 characters at most"
        )
    return actor


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.subject_access"),
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--subject-id",
        help="the subject's source id (e.g. P0000010); without it, every pending request "
        "(dbt run-operation request_access) is answered",
    )
    add_request_arguments(parser)
    parser.add_argument(
        "--output-dir",
        type=Path,
        help="where the export folder goes (default <LAKEHOUSE_DIR>/exports; the purge "
        "deletes expired exports only there)",
    )
    return parser.parse_args(argv)


@dataclass(frozen=True)
class Lakehouse:
    """What answering a request reads and writes, resolved once per run."""

    spark: SparkSession
    relations: list[DeltaRelation]
    log: str
    vault: str
    macros: Macros
    output_dir: Path


def answer(
    lakehouse: Lakehouse,
    subject_id: str,
    requested_by: str,
    received: datetime,
    deadline: str,
    now: datetime,
) -> None:
    """Record (or resume) the subject's access request and answer it."""
    spark, log, vault_ref = lakehouse.spark, lakehouse.log, lakehouse.vault
    request = open_request(spark, log, subject_id, requested_by, received, deadline, now)
    request_id = request["request_id"]
    known = _sql(
        spark,
        f"select subject_type from {vault_ref} where subject_id = :subject_id",
        subject_id=subject_id,
    ).first()
    subject_type = known["subject_type"] if known else None
    closing = {
        "subject_type": subject_type,
        "relations": None,
        "rows": None,
        "export_path": None,
        "sha256": None,
    }
    decided = erasure_state(spark, lakehouse.relations, subject_id)
    if decided is not None:
        status, reason = decided
        close_request(spark, log, request_id, status=status, status_reason=reason, **closing)
        print(f"subject_access {request_id}: {status}: {reason}")
        return
    keyed = keyed_macros(spark, vault_ref)
    ordered = sorted(sources(lakehouse.relations, subject_type), key=lambda s: s.name)
    read = [read_source(spark, source, vault_ref, subject_id, keyed) for source in ordered]
    extracts = [extract for extract in read if extract is not None]
    # a declared relation not built yet holds no row, but the answer says it was not read
    missing = [
        source.name for source, extract in zip(ordered, read, strict=True) if extract is None
    ]
    unread = f" (not built, so not read: {', '.join(missing)}; run `dbt build`)" if missing else ""
    if missing:
        print(f"subject_access: {len(missing)} declared relation(s){unread}")
    held = [extract for extract in extracts if extract["rows"]]
    if not held:
        reason = (
            "no data held: no relation of the privacy contract has a row of this subject" + unread
        )
        close_request(spark, log, request_id, status="no_data", status_reason=reason, **closing)
        print(f"subject_access {request_id}: no_data: {reason}")
        return
    folder = id_path(lakehouse.output_dir, request_id)
    described = {
        "request_id": request_id,
        "subject_id": subject_id,
        "subject_type": subject_type,
        "received_at": request["received_at"],
        "deadline": request["deadline"],
        "requested_by": requested_by,
        "not_built": missing,
    }
    digest = write_package(folder, described, extracts)
    rows = sum(len(extract["rows"]) for extract in held)
    close_request(
        spark,
        log,
        request_id,
        status="exported",
        status_reason=None,
        **{
            **closing,
            "relations": len(held),
            "rows": rows,
            "export_path": str(folder),
            "sha256": digest,
        },
    )
    print(
        f"subject_access {request_id}: exported {rows} row(s) of {len(held)} relation(s) "
        f"(searched {len(extracts)}), deadline {request['deadline']} UTC"
    )
    for extract in held:
        decrypted = extract["decrypted_columns"]
        print(
            f"  {extract['relation']:34} version {extract['version']:>4}  {len(extract['rows']):>4} row(s)"
            + (f"  decrypted: {', '.join(decrypted)}" if decrypted else "")
        )
    print(f"  {folder}  (manifest.json SHA-256 {digest[:16]}...)")


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    args = parse_args(argv)
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    if args.subject_id is None and (args.received_at or args.requested_by):
        raise AccessError(
            "--received-at and --requested-by describe one request: give them with "
            "--subject-id (pending requests keep what request_access recorded)"
        )
    requested_by = request_arguments(args.subject_id, args.requested_by)
    received = parse_received(args.received_at, now)
    macros = engine_macros()
    deadline = deadline_of(received, macros)
    relations = delta_relations(manifest())
    log_relation = _control(relations, ACCESS_LOG)
    vault = _vault(relations)
    from python_jobs.spark import get_spark

    spark = spark or get_spark("gdpr_lakehouse.subject_access")
    lakehouse = Lakehouse(
        spark,
        relations,
        table_ref(spark, log_relation),
        table_ref(spark, vault),
        macros,
        (args.output_dir or exports_dir()).resolve(),
    )
    if args.subject_id is not None:
        subjects = [args.subject_id]
    else:
        subjects = [
            row[0]
            for row in spark.sql(
                f"select distinct subject_id from {lakehouse.log} "
                "where status = 'pending' and subject_id is not null order by subject_id"
            ).collect()
        ]
        if not subjects:
            print("subject_access: no pending access request (dbt run-operation request_access)")
            return 0
    spark.conf.set(
        "spark.databricks.delta.commitInfo.userMetadata",
        commit_tag("python_jobs.subject_access", "subject_access"),
    )
    try:
        for subject_id in subjects:
            if not is_subject_id(subject_id):  # a row written by hand, not by request_access
                raise AccessError(
                    f"privacy.access_requests holds {subject_id[:80]!r}: not a subject id"
                )
            answer(lakehouse, subject_id, requested_by, received, deadline, now)
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    return 0


# -- expiry (run by python_jobs.purge) ------------------------------------------------


def expire_exports(
    spark: SparkSession, relations: list[DeltaRelation], now: datetime, days: int
) -> int:
    """Delete the export folders of requests answered more than `days` before `now`, and
    of subjects erased since; record export_deleted_at. Returns how many. Idempotent: a
    folder already gone is recorded as deleted. Only folders under the exports directory
    are ever deleted (a path the log names elsewhere is refused)."""
    names = {relation.name for relation in relations}
    if ACCESS_LOG not in names:
        return 0
    log = table_ref(spark, _control(relations, ACCESS_LOG))
    erasures = table_ref(spark, _control(relations, ERASURE_LOG))
    fulfilled = "('" + "', '".join(request_states()["fulfilled"]) + "')"
    due = _sql(
        spark,
        f"""
        select request_id, export_path from {log} as access
        where status = 'exported' and export_deleted_at is null
            and (completed_at <= to_timestamp(:cutoff)
                 or exists (select 1 from {erasures} as erasure
                            where erasure.subject_id = access.subject_id and erasure.status in {fulfilled}))
        """,
        **{"cutoff": _stamp(now - timedelta(days=days))},
    ).collect()
    root = exports_dir().resolve()
    deleted = []
    for row in due:
        folder = Path(row["export_path"] or "").resolve()
        if not request_id_pattern("access").match(folder.name) or folder.parent != root:
            print(
                f"  exports: {row['request_id']} names {str(folder)[:120]}, outside {root}: not deleted"
            )
            continue
        if folder.exists():
            shutil.rmtree(folder)
        deleted.append(row["request_id"])
    if deleted:
        _sql(
            spark,
            f"update {log} set export_deleted_at = current_timestamp(), updated_at = current_timestamp() "
            f"where request_id in ({', '.join(f':r{i}' for i in range(len(deleted)))})",
            **{f"r{i}": request_id for i, request_id in enumerate(deleted)},
        ).collect()
    return len(deleted)


# What an answered access request and a lifted restriction keep that names a person;
# kept as the record for var erasure_record_retention_days, like the erasure log.
REDACTED_ACCESS_COLUMNS = ("subject_id", "requested_by", "status_reason", "extension_reason")
REDACTED_RESTRICTION_COLUMNS = ("subject_id", "reason", "placed_by", "lifted_by")


def expire_access_records(
    spark: SparkSession, relations: list[DeltaRelation], days: int, ran_at: datetime
) -> int:
    """Redact access and rectification requests completed, and restrictions lifted, more
    than `days` before `ran_at` (var erasure_record_retention_days): their subject id,
    free text and who recorded them become null. An open request and an active
    restriction stay.
    Returns how many rows. Idempotent: a row with nothing left is not counted again."""
    names = {relation.name for relation in relations}
    cutoff = f"timestamp'{ran_at:%Y-%m-%d %H:%M:%S}' - make_interval(0, 0, 0, {int(days)})"
    redacted = 0
    for model, ended, columns in (
        (ACCESS_LOG, "completed_at", REDACTED_ACCESS_COLUMNS),
        ("privacy_rectification_requests", "completed_at", REDACTED_ACCESS_COLUMNS),
        ("privacy_restrictions", "lifted_at", REDACTED_RESTRICTION_COLUMNS),
    ):
        if model not in names:
            continue
        table = table_ref(spark, _control(relations, model))
        # a log an older version built has no extension_reason until its model runs
        present = {c.lower() for c in spark.table(table).columns}
        columns = [c for c in columns if c in present]
        due = (
            f"{ended} is not null and {ended} < {cutoff} "
            f"and ({' or '.join(f'{c} is not null' for c in columns)})"
        )
        count = spark.sql(f"select count(*) from {table} where {due}").first()[0]
        if count:
            touched = (
                ", updated_at = current_timestamp()" if model != "privacy_restrictions" else ""
            )
            spark.sql(
                f"update {table} set {', '.join(f'{c} = null' for c in columns)}{touched} where {due}"
            ).collect()
        redacted += count
    return redacted


if __name__ == "__main__":
    run_job(main, "subject_access")
