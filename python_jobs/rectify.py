"""Rectification (GDPR Art. 16): a subject's inaccurate personal data corrected.

    python -m python_jobs.rectify --subject-id P0000010 --changes-file changes.json
    python -m python_jobs.rectify --subject-id P0000010 --set email=ada@example.org
    dbt build                          # applies it: bronze, silver, gold, the snapshot
    python -m python_jobs.rectify      # confirms what the build applied

Records the request in privacy.rectification_requests (received, deadline one
calendar month later, as every request), then lands ONE update event for the subject
in the landing table of its master data (the source whose meta.privacy names the
subject key and lists the changed columns in pii_columns; Parquet, JSON or CSV, the
event is written in the table's format): the subject's current row,
read from the bronze model that reads that table and decrypted with the subject's key
inside the query, with the changed columns replaced. Its source time is now (or just
after the row's last event when that is later), so it is the newest event of the key.
The event then takes the path every source change takes: the next `dbt build` merges
it into bronze (encrypted under the subject's key), and silver, gold and the snapshot
follow. Run without --subject-id, the job marks landed requests `applied` once bronze
holds the event (or a newer source event), and `cancelled` when the subject was erased
first.

Only a column the contract declares personal (pii_columns) can be changed: an unknown
column, the subject key or a column that is not declared personal is refused by name,
and so is a value that is not of the column's type, or that the silver checks would
quarantine (the column's meta `valid`: required, pattern, not_future). An unknown subject, an erased one
or one whose erasure is under way is refused (recorded, nothing landed). While the
landing table holds an event of the subject that bronze has not applied yet (a source
change or an earlier rectification waiting for a build), the job stops and records
nothing: an event built from bronze then would undo it. The values
never reach a table other than the landing event, a log, SQL text or the job's output;
the request row keeps the names of the changed columns only. Prefer --changes-file
(a JSON object; null clears a value) to --set, whose values a process listing shows.
Exit 0 when recorded or confirmed, 2 for bad input.

A source system that still holds the old value sends it again with its next change of
the row: correct the source too (the event is a correction of the lakehouse's copy).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from python_jobs.macros import Macros, engine_macros
from python_jobs.project import (
    ProjectError,
    commit_tag,
    landing_dir,
    manifest,
    prog,
    run_job,
)
from python_jobs.relations import DeltaRelation, delta_relations, registered_folder, table_ref
from python_jobs.relations import control_relation as _control
from python_jobs.request_states import new_request_id
from python_jobs.subject_access import (
    _sql,
    _stamp,
    _vault,
    add_request_arguments,
    deadline_of,
    erasure_state,
    keyed_macros,
    parse_received,
    request_arguments,
)

RECTIFICATION_LOG = "privacy_rectification_requests"
DELETE_MARKERS = "bronze_cdc_deletes"
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,127}$")
MAX_VALUE = 1000
# the event columns every landing table has (macro cdc_event_columns reads them)
EVENT_COLUMNS = ("_op", "_source_ts")


# the formats create_landing_tables registers a landing table in
LANDING_FORMATS = ("parquet", "json", "csv")


class RectificationError(ProjectError):
    """Bad input, or a change the contract does not allow."""


@dataclass(frozen=True)
class LandingTable:
    """A landing source holding a subject's master data, and the bronze model reading it."""

    unique_id: str
    schema: str
    identifier: str
    key: str
    pii_columns: tuple[str, ...]
    columns: dict[str, str]  # name -> data_type, in the declared order
    reader: DeltaRelation
    # name -> the column's meta `valid` (required, pattern, not_future): what the
    # silver checks accept (macro landing_column_pattern reads the same pattern)
    valid: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the landing table's format (source meta landing_format): the event is written in it
    format: str = "parquet"

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.identifier}"

    @property
    def reader_name(self) -> str:
        return f"{self.reader.schema}.{self.reader.identifier}"

    def held_by(self, alias: str, vault_ref: str) -> str:
        """SQL predicate on the reader's rows (as `alias`): the row of :subject_id. A
        reader keyed by pseudonym (meta.privacy subject_key_kind) never stores the
        source id: its row is found by the pseudonym the vault gives the subject."""
        column = f"{alias}.`{self.reader.privacy['subject_key']}`"
        if self.reader.privacy.get("subject_key_kind") != "pseudonym":
            return f"{column} = :subject_id"
        return (
            f"{column} = (select held.subject_pseudonym from {vault_ref} as held "
            "where held.subject_id = :subject_id)"
        )


def landing_tables(graph: dict[str, Any], relations: list[DeltaRelation]) -> list[LandingTable]:
    """The landing sources (meta landing_format: parquet, json or csv, the formats
    create_landing_tables registers) whose meta.privacy names a subject key and lists
    pii_columns, each with the one table model that reads it by that key."""
    readers: dict[str, list[DeltaRelation]] = {}
    nodes = graph.get("nodes") or {}
    for relation in relations:
        node = nodes.get(relation.unique_id) or {}
        for parent in (node.get("depends_on") or {}).get("nodes") or []:
            readers.setdefault(parent, []).append(relation)
    found = []
    for unique_id, source in sorted((graph.get("sources") or {}).items()):
        meta = source.get("meta") or {}
        privacy = meta.get("privacy") or {}
        if not privacy.get("subject_key") or not privacy.get("pii_columns"):
            continue
        if meta.get("landing_format") not in LANDING_FORMATS:
            continue
        key = str(privacy["subject_key"])
        # the model that applies the source's events by its key: by the key itself, or
        # by the pseudonym of it (a model storing the subject's personal data)
        reading = [
            r
            for r in readers.get(unique_id, [])
            if r.privacy.get("subject_key") == key
            or (r.privacy.get("subject_key_kind") == "pseudonym" and r.privacy.get("pii_columns"))
        ]
        if len(reading) != 1:
            continue
        columns = {
            name: str(column.get("data_type") or "").lower()
            for name, column in (source.get("columns") or {}).items()
        }
        valid = {}
        for name, column in (source.get("columns") or {}).items():
            column_meta = column.get("meta") or (column.get("config") or {}).get("meta") or {}
            if column_meta.get("valid"):
                valid[name] = dict(column_meta["valid"])
        found.append(
            LandingTable(
                unique_id,
                source["schema"],
                source.get("identifier") or source["name"],
                key,
                tuple(str(c) for c in privacy["pii_columns"]),
                columns,
                reading[0],
                valid,
                str(meta["landing_format"]),
            )
        )
    return found


# -- the changes ----------------------------------------------------------------------


def parse_changes(pairs: list[str], changes_file: Path | None) -> dict[str, Any]:
    """--set column=value (repeatable) and --changes-file (a JSON object of column: value
    or null): one mapping, at least one column, every name an identifier."""
    changes: dict[str, Any] = {}
    if changes_file is not None:
        try:
            loaded = json.loads(changes_file.read_text())
        except (OSError, ValueError) as error:
            raise RectificationError(
                f"--changes-file {str(changes_file)[:120]}: not a readable JSON object ({error})"
            ) from None
        if not isinstance(loaded, dict):
            raise RectificationError(
                "--changes-file: allowed is one JSON object of column: value (null clears a value)"
            )
        changes.update(loaded)
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not value:
            raise RectificationError(
                f"--set {name[:40]!r}: allowed is column=value with a value (to clear a value, "
                "give null in --changes-file)"
            )
        if name in changes:
            raise RectificationError(f"column {name[:40]!r} is changed twice")
        changes[name] = value
    if not changes:
        raise RectificationError(
            "nothing to rectify: give --set column=value or --changes-file with the corrected values"
        )
    for name in changes:
        if not isinstance(name, str) or not IDENTIFIER.match(name):
            raise RectificationError(
                f"column {str(name)[:40]!r}: allowed are column names (lower-case letters, digits, _)"
            )
    return changes


def _typed(table: LandingTable, name: str, value: Any) -> Any:
    """The value as the column's declared type, and valid as the column's meta `valid`
    says (what the silver checks accept); a clear error naming the rule otherwise. The
    value itself is never in the message: it is personal data."""
    typed = _as_type(table, name, value)
    rules = table.valid.get(name) or {}
    where = f"{table.name}.{name}"
    consequence = "the silver checks would quarantine the subject"
    if typed is None:
        if rules.get("required"):
            raise RectificationError(f"{where} is required (meta valid.required): {consequence}")
        return None
    pattern = rules.get("pattern")
    if pattern and not re.search(str(pattern), str(typed)):
        raise RectificationError(
            f"the value given for {where} does not match its pattern {pattern} "
            f"(meta valid.pattern): {consequence}"
        )
    now = datetime.now(UTC).replace(tzinfo=None)
    if rules.get("not_future") and (
        typed > now
        if isinstance(typed, datetime)
        else isinstance(typed, date) and typed > now.date()
    ):
        raise RectificationError(
            f"the value given for {where} is in the future (meta valid.not_future): {consequence}"
        )
    return typed


def _as_type(table: LandingTable, name: str, value: Any) -> Any:
    """The value as the column's declared type; a clear error when it is not one."""
    data_type = table.columns[name]
    if value is None:
        return None
    where = f"{table.name}.{name} ({data_type})"
    if data_type == "string":
        if (
            not isinstance(value, str)
            or len(value) > MAX_VALUE
            or re.search(r"[\x00-\x1f\x7f]", value)
        ):
            raise RectificationError(
                f"{where}: allowed is one line of text, {MAX_VALUE} characters at most"
            )
        return value
    if data_type == "date":
        try:
            return date.fromisoformat(str(value))
        except ValueError:
            raise RectificationError(f"{where}: allowed is a date such as 1980-02-29") from None
    if data_type == "timestamp":
        try:
            return datetime.fromisoformat(str(value))
        except ValueError:
            raise RectificationError(
                f"{where}: allowed is a time such as 2026-02-10T09:30"
            ) from None
    if data_type in ("int", "bigint", "integer", "long"):
        if isinstance(value, bool) or not re.match(r"^-?[0-9]{1,18}$", str(value)):
            raise RectificationError(f"{where}: allowed is a whole number")
        return int(value)
    if data_type in ("double", "float"):
        try:
            return float(str(value))
        except ValueError:
            raise RectificationError(f"{where}: allowed is a number") from None
    raise RectificationError(
        f"{where}: a column of this type cannot be rectified by this job "
        "(allowed types: string, date, timestamp, int, bigint, double)"
    )


def resolve(
    tables: list[LandingTable], subject_type: str | None, changes: dict[str, Any]
) -> tuple[LandingTable | None, dict[str, Any]]:
    """The one landing table the changes belong to, and the values as its types. Unknown
    columns, the key and columns not declared personal are refused by name. A subject
    the vault does not know (subject_type None) has no table: the names and values are
    checked against every landing table, and None is returned for the table."""
    candidates = [
        t
        for t in tables
        if subject_type is None or t.reader.privacy.get("subject_type") in (None, subject_type)
    ]
    allowed = sorted({c for t in candidates for c in t.pii_columns if c in t.columns})
    owners: dict[str, list[LandingTable]] = {}
    for name in changes:
        owning = [t for t in candidates if name in t.pii_columns and name in t.columns]
        if owning:
            owners[name] = owning
            continue
        keys = {t.key for t in candidates}
        known = {c for t in candidates for c in t.columns}
        if name in keys:
            why = "is the subject key (a changed id is a new subject, not a rectification)"
        elif name in EVENT_COLUMNS:
            why = "is an event column the job writes itself"
        elif name in known:
            why = "is not declared personal data (meta.privacy pii_columns)"
        else:
            why = "is not a column of the subject's landing tables"
        raise RectificationError(
            f"column {name} {why}; allowed: {', '.join(allowed) or 'none (no landing table declares pii_columns)'}"
        )
    tables_hit = {t.unique_id: t for owning in owners.values() for t in owning}
    if subject_type is None:  # not in the vault: checked, refused by the caller
        return None, {
            name: _typed(owning[0], name, changes[name]) for name, owning in owners.items()
        }
    if len(tables_hit) != 1:
        raise RectificationError(
            "the changes span landing tables "
            + ", ".join(sorted(t.name for t in tables_hit.values()))
            + ": one request per table"
        )
    table = next(iter(tables_hit.values()))
    return table, {name: _typed(table, name, value) for name, value in changes.items()}


# -- the request --------------------------------------------------------------------


def open_request(
    spark: SparkSession,
    log: str,
    subject_id: str,
    table: LandingTable | None,
    changed: list[str],
    requested_by: str,
    received: datetime,
    deadline: str,
    now: datetime,
) -> dict[str, Any]:
    """The subject's pending rectification of these columns (resumed after a crash),
    else a new one, recorded."""
    columns = ",".join(sorted(changed))
    pending = _sql(
        spark,
        f"select request_id, cast(received_at as string) as received_at, "
        f"cast(deadline as string) as deadline from {log} "
        "where subject_id = :subject_id and status = 'pending' and landing_table <=> :landing_table "
        "and columns_changed = :columns order by request_id limit 1",
        subject_id=subject_id,
        landing_table=table.name if table else None,
        columns=columns,
    ).first()
    if pending is not None:
        if pending["received_at"] is None or pending["deadline"] is None:
            raise RectificationError(
                f"rectification request {pending['request_id']} is pending without a received "
                "time or deadline (not written by this job); fix or remove it first"
            )
        print(f"rectify: resuming the pending request {pending['request_id']}")
        return {"request_id": pending["request_id"], "deadline": pending["deadline"][:19]}
    request_id = new_request_id("rectification", now)
    _sql(
        spark,
        f"""
        insert into {log} (request_id, subject_id, subject_type, requested_by, received_at,
            deadline, status, status_reason, landing_table, columns_changed, landing_file,
            event_source_ts, applied_in, applied_version, completed_at, updated_at)
        values (:request_id, :subject_id, null, :requested_by, to_timestamp(:received),
            to_timestamp(:deadline), 'pending', null, :landing_table, :columns, null, null,
            null, null, null, current_timestamp())
        """,
        request_id=request_id,
        subject_id=subject_id,
        requested_by=requested_by,
        received=_stamp(received),
        deadline=deadline,
        landing_table=table.name if table else None,
        columns=columns,
    ).collect()
    return {"request_id": request_id, "deadline": deadline}


def _update(spark: SparkSession, log: str, request_id: str, status: str, **values: Any) -> None:
    """Moves a pending or landed request on; the values are set as given (a time as text)."""
    assignments = "".join(
        f", {name} = to_timestamp(:{name})" if name.endswith("_ts") else f", {name} = :{name}"
        for name in values
    )
    done = (
        ", completed_at = current_timestamp()"
        if status in ("applied", "refused", "cancelled")
        else ""
    )
    _sql(
        spark,
        f"update {log} set status = :status{assignments}{done}, updated_at = current_timestamp() "
        "where request_id = :request_id and status in ('pending', 'landed')",
        request_id=request_id,
        status=status,
        **values,
    ).collect()


# -- the event ------------------------------------------------------------------------


def source_time_sql(spark: SparkSession, relations: list[DeltaRelation], vault_ref: str) -> str:
    """SQL for the source time of the bronze row aliased `rows` of the subject bound as
    :subject_id. Bronze keeps it keyed (source_seq, macro source_seq): the offset its
    record's reference derives from the tombstone key is taken away inside the
    statement (macro source_seq_time), the key opened there, never in Python."""
    system = [r for r in relations if r.privacy.get("role") == "system"]
    if len(system) != 1:
        raise RectificationError(
            f"the manifest declares {len(system)} system key tables (meta.privacy role: "
            "system); exactly one holds the tombstone key the source order is keyed with"
        )
    keys = table_ref(spark, system[0])
    macros = keyed_macros(spark, vault_ref)
    record = str(macros.anonymized_record_id(":subject_id", keys=keys)).strip()
    return str(macros.source_seq_time("rows.source_seq", record, keys=keys)).strip()


def record_key_sql(spark: SparkSession, relations: list[DeltaRelation], vault_ref: str) -> str:
    """SQL for :subject_id's record key as bronze and its delete markers store it (macro
    anonymized_record_id: hashed under the tombstone key inside the statement)."""
    keys = table_ref(spark, next(r for r in relations if r.privacy.get("role") == "system"))
    return str(
        keyed_macros(spark, vault_ref).anonymized_record_id(":subject_id", keys=keys)
    ).strip()


def _event_frame(
    spark: SparkSession,
    table: LandingTable,
    vault_ref: str,
    subject_id: str,
    values: dict[str, Any],
    macros: Macros,
    source_time: str,
) -> Any:
    """The update event: the subject's bronze row decrypted in the query, the changed
    columns replaced (as literals of the frame, never SQL text); None when bronze holds
    no row of the subject."""
    ref = table_ref(spark, table.reader)
    present = {field.name for field in spark.sql(f"select * from {ref}").schema.fields}
    selected = []
    for name, data_type in table.columns.items():
        if name in EVENT_COLUMNS:
            continue
        if name == table.key:
            selected.append(f"cast(:subject_id as {data_type}) as `{name}`")
        elif name in present:
            selected.append(f"cast(rows.`{name}` as {data_type}) as `{name}`")
        elif f"{name}_enc" in present:
            plain = str(
                macros.decrypt_pii(
                    f"rows.`{name}_enc`",
                    "vault.subject_key",
                    "vault.subject_pseudonym",
                    f"{name}_enc",
                )
            ).strip()
            selected.append(f"cast({plain} as {data_type}) as `{name}`")
        elif name in values:
            selected.append(f"cast(null as {data_type}) as `{name}`")
        else:
            raise RectificationError(
                f"{table.reader.unique_id} holds neither {name} nor {name}_enc: the subject's "
                f"current {name} cannot be carried into the event"
            )
    if "source_seq" not in present:
        raise RectificationError(f"{table.reader.unique_id} has no source_seq column")
    frame = _sql(
        spark,
        f"""
        select {", ".join(selected)},
            'update' as _op,
            greatest(cast(date_trunc('millisecond', current_timestamp()) as timestamp),
                     {source_time} + interval 1 millisecond) as _source_ts
        from {ref} as rows
        left join (
            select vault.data_key as subject_key, vault.subject_pseudonym from {vault_ref} as vault
            where vault.subject_id = :subject_id
        ) as vault on true
        where {table.held_by("rows", vault_ref)}
        """,
        subject_id=subject_id,
    )
    if frame.limit(1).count() == 0:
        return None
    for name, value in values.items():
        frame = frame.withColumn(name, F.lit(value).cast(table.columns[name]))
    order = [name for name in table.columns]
    return frame.select(*order)


def unapplied_events(
    spark: SparkSession,
    table: LandingTable,
    vault_ref: str,
    subject_id: str,
    source_time: str,
    markers: tuple[str, str] | None = None,
) -> int:
    """The subject's events in the landing table newer than the row bronze holds: landed
    but not applied yet (a source change, or a rectification, waiting for a build). An
    event built from bronze now would be newer than them and undo them. When bronze
    holds no row (the source deleted the record), the newest delete bronze applied
    stands for it (`markers`: bronze.cdc_deletes and the SQL of the subject's record
    key there, the same keyed source order): the events up to it were applied."""
    ref = table_ref(spark, table.reader)
    spark.sql(f"refresh table {table.name}")
    deleted = ""
    if markers is not None:
        deleted = f"""
              (select max(marked.source_time) from (
                  select {source_time} as source_time from {markers[0]} as rows
                  where rows.entity = :entity and rows.record_key = {markers[1]}) as marked),"""
    return _sql(
        spark,
        f"""
        select count(*) as events from {table.name} as events
        where events.`{table.key}` = :subject_id
          and events._source_ts > coalesce(
              (select max(held.source_time) from (
                  select {source_time} as source_time from {ref} as rows
                  where {table.held_by("rows", vault_ref)}) as held),{deleted}
              timestamp'0001-01-01 00:00:00')
        """,
        subject_id=subject_id,
        **({"entity": table.unique_id.rsplit(".", 1)[-1]} if markers is not None else {}),
    ).first()["events"]


def event_file(table: LandingTable, request_id: str) -> str:
    """The event's file name in the landing table's folder."""
    return f"rectify-{request_id}.{table.format}"


def landing_schema(table: LandingTable) -> str:
    """The landing table's declared columns as a DDL schema."""
    return ", ".join(f"`{name}` {data_type}" for name, data_type in table.columns.items())


def event_source_ts(spark: SparkSession, table: LandingTable, path: Path) -> datetime:
    """The landed event's _source_ts, read as the landing table reads the file (its
    declared schema; a CSV file has no header)."""
    frame = spark.read.schema(landing_schema(table)).format(table.format).load(str(path))
    ts = frame.agg(F.max("_source_ts").alias("ts")).first()["ts"]
    if ts is None:  # unreadable as the table reads it: never record a landed event without it
        raise RectificationError(
            f"{path.name} in {table.name} holds no readable _source_ts as the table reads it; "
            "remove the file and run the request again"
        )
    return ts


def land_event(folder: Path, request_id: str, frame: Any, table: LandingTable) -> Path:
    """The event as one file of the landing table's format, landing/<table>/rectify-
    <request_id>.<format>: written beside it in a hidden folder (never listed), then
    moved in by one rename. CSV as the landing table reads it: no header, the declared
    column order."""
    if table.format == "csv":
        nested = [n for n, t in table.columns.items() if any(k in t for k in ("<", "struct"))]
        if nested:
            raise RectificationError(
                f"{table.name} is CSV, which cannot hold {', '.join(nested)} "
                f"({', '.join(table.columns[n] for n in nested)}): no event can be written"
            )
    target = folder / event_file(table, request_id)
    staging = folder / f".rectify-{request_id}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    writer = frame.coalesce(1).write.mode("overwrite").format(table.format)
    if table.format == "csv":
        writer = writer.option("header", "false")
    writer.save(str(staging))
    parts = sorted(staging.glob(f"part-*.{table.format}"))
    if len(parts) != 1:
        raise RectificationError(f"the event was written as {len(parts)} files, not one")
    os.chmod(parts[0], 0o600)
    parts[0].replace(target)
    shutil.rmtree(staging, ignore_errors=True)
    return target


# -- the job ------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.rectify"),
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--subject-id",
        help="the subject's source id (e.g. P0000010); without it, landed requests the "
        "build has applied are confirmed",
    )
    parser.add_argument(
        "--set",
        dest="pairs",
        action="append",
        default=[],
        metavar="COLUMN=VALUE",
        help="a corrected value (repeatable); a process listing shows it, prefer --changes-file",
    )
    parser.add_argument(
        "--changes-file", type=Path, help="a JSON object of column: corrected value (null clears)"
    )
    add_request_arguments(parser)
    return parser.parse_args(argv)


def rectify(
    spark: SparkSession,
    graph: dict[str, Any],
    relations: list[DeltaRelation],
    subject_id: str,
    changes: dict[str, Any],
    requested_by: str,
    received: datetime,
    now: datetime,
) -> str:
    """Record the request and land its event; the request's final status."""
    macros = engine_macros()
    deadline = deadline_of(received, macros)
    log = table_ref(spark, _control(relations, RECTIFICATION_LOG))
    vault_ref = table_ref(spark, _vault(relations))
    known = _sql(
        spark,
        f"select subject_type from {vault_ref} where subject_id = :subject_id",
        subject_id=subject_id,
    ).first()
    subject_type = known["subject_type"] if known else None
    # the columns are checked before anything is recorded: bad input changes nothing
    table, values = resolve(landing_tables(graph, relations), subject_type, changes)
    source_time = source_time_sql(spark, relations, vault_ref)
    # the delete markers (a demo model: a project without it has none)
    markers = [
        (table_ref(spark, r), record_key_sql(spark, relations, vault_ref))
        for r in relations
        if r.name == DELETE_MARKERS
    ]
    waiting = (
        unapplied_events(spark, table, vault_ref, subject_id, source_time, *markers[:1])
        if table is not None
        else 0
    )
    if waiting:
        raise RectificationError(
            f"{table.name} holds {waiting} event(s) of {subject_id} newer than "
            f"{table.reader_name} (landed, not applied yet): a correction made now would undo "
            "them. Run `dbt build`, then this command again; nothing was recorded"
        )
    request = open_request(
        spark, log, subject_id, table, list(values), requested_by, received, deadline, now
    )
    request_id = request["request_id"]
    decided = erasure_state(spark, relations, subject_id)
    if decided is not None or table is None:
        reason = (
            "nothing to rectify: the subject is not known to the lakehouse (no key in the vault)"
            if decided is None
            else decided[1]
            if decided[0] == "refused"
            else decided[1].replace("no data held", "nothing to rectify", 1)
        )
        _update(spark, log, request_id, "refused", subject_type=subject_type, status_reason=reason)
        print(f"rectify {request_id}: refused: {reason}")
        return "refused"
    # where the build reads the table (a lakehouse built with --vars landing_path has
    # it there), else where dbt will register it
    folder = registered_folder(spark, table.schema, table.identifier) or (
        landing_dir() / table.identifier
    )
    target = folder / event_file(table, request_id)
    if target.exists():  # a crash after the event landed: the same event, not a second one
        print(f"rectify {request_id}: its event had landed already ({target.name})")
    else:
        frame = _event_frame(
            spark, table, vault_ref, subject_id, values, keyed_macros(spark, vault_ref), source_time
        )
        if frame is None:
            reason = f"nothing to rectify: {table.reader_name} holds no row of this subject"
            _update(
                spark, log, request_id, "refused", subject_type=subject_type, status_reason=reason
            )
            print(f"rectify {request_id}: refused: {reason}")
            return "refused"
        land_event(folder, request_id, frame, table)
    event_ts = event_source_ts(spark, table, target)
    _update(
        spark,
        log,
        request_id,
        "landed",
        subject_type=subject_type,
        landing_file=target.name,
        event_source_ts=event_ts.isoformat(sep=" "),
    )
    print(
        f"rectify {request_id}: landed an update of {', '.join(sorted(values))} in {table.name} "
        f"({target.name}); the next `dbt build` applies it; deadline {request['deadline']} UTC"
    )
    return "landed"


def confirm(
    spark: SparkSession, graph: dict[str, Any], relations: list[DeltaRelation]
) -> list[tuple[str, str]]:
    """Landed requests: `applied` once their table's bronze model holds the event (or a
    newer source event), `cancelled` once the subject is erased. (request_id, status)."""
    log = table_ref(spark, _control(relations, RECTIFICATION_LOG))
    vault_ref = table_ref(spark, _vault(relations))
    source_time = source_time_sql(spark, relations, vault_ref)
    tables = {t.name: t for t in landing_tables(graph, relations)}
    done = []
    landed = spark.sql(
        f"select request_id, subject_id, landing_table, landing_file, event_source_ts from {log} "
        "where status = 'landed' order by request_id"
    ).collect()
    broken = []
    for row in landed:
        request_id = row["request_id"]
        if row["subject_id"] is None or not row["landing_file"] or row["event_source_ts"] is None:
            broken.append(request_id)  # not written by this job: never guess it applied
            continue
        decided = erasure_state(spark, relations, row["subject_id"])
        if decided is not None and decided[0] == "no_data":
            _update(spark, log, request_id, "cancelled", status_reason=decided[1])
            done.append((request_id, "cancelled"))
            continue
        table = tables.get(row["landing_table"])
        if table is None:
            raise RectificationError(
                f"rectification request {request_id} landed in {row['landing_table']}, which the "
                "manifest no longer declares a rectifiable landing table"
            )
        ref = table_ref(spark, table.reader)
        version = int(spark.sql(f"describe history {ref} limit 1").first()["version"])
        held = _sql(
            spark,
            f"select rows.source_file, {source_time} as source_time from {ref} "
            f"version as of {version} "
            f"as rows where {table.held_by('rows', vault_ref)}",
            subject_id=row["subject_id"],
        ).first()
        if held is None:
            continue  # not yet ingested (or the row deleted by the source: the build decides)
        if held["source_file"] == row["landing_file"]:
            why = f"applied by {table.reader_name} version {version}"
        elif held["source_time"] > row["event_source_ts"]:
            why = f"superseded by a newer source event (in {table.reader_name} version {version})"
        else:
            continue
        _update(
            spark,
            log,
            request_id,
            "applied",
            status_reason=why,
            applied_in=table.reader_name,
            applied_version=version,
        )
        done.append((request_id, "applied"))
        print(f"rectify {request_id}: {why}")
    if not landed:
        print("rectify: no landed rectification waits for a build")
    if broken:
        raise RectificationError(
            f"{len(broken)} landed rectification request(s) lack a subject id, landing file or "
            f"event source time (not written by this job): {', '.join(broken[:5])}; fix or "
            f"remove them in {log}. The others were confirmed"
        )
    return done


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    args = parse_args(argv)
    now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    if args.subject_id is None and (
        args.pairs or args.changes_file or args.received_at or args.requested_by
    ):
        raise RectificationError(
            "--set, --changes-file, --received-at and --requested-by describe one request: "
            "give them with --subject-id"
        )
    requested_by = request_arguments(args.subject_id, args.requested_by)
    changes = parse_changes(args.pairs, args.changes_file) if args.subject_id else {}
    received = parse_received(args.received_at, now)
    graph = manifest()
    relations = delta_relations(graph)
    from python_jobs.spark import get_spark

    spark = spark or get_spark("gdpr_lakehouse.rectify")
    spark.conf.set(
        "spark.databricks.delta.commitInfo.userMetadata",
        commit_tag("python_jobs.rectify", "rectify"),
    )
    try:
        if args.subject_id is None:
            confirm(spark, graph, relations)
            return 0
        rectify(spark, graph, relations, args.subject_id, changes, requested_by, received, now)
        return 0
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")


if __name__ == "__main__":
    run_job(main, "rectify")
