"""Schema history: every schema and table-property change of every declared relation.

Run by ``python -m python_jobs.audit_stream`` (``--once`` after the Change Data Feed
catch-up, ``--follow`` at every interval) into ``audit.schema_changes``; alone:

    python -m python_jobs.schema_history          # record what is new, print it

A Delta table's schema and properties live in the ``metaData`` action of the commit
that changed them (a CREATE, a CREATE OR REPLACE that dbt runs for a table model, an
``ALTER TABLE ... ADD COLUMNS`` from ``on_schema_change``, ``SET TBLPROPERTIES``).
Each commit that carries one is compared with the metaData before it, and every
difference becomes one row: ``column_added`` / ``column_dropped`` (with the type),
``column_renamed`` (tables with column mapping: same field id, new name),
``column_retyped``, ``column_nullability``, ``property_set`` / ``property_changed`` /
``property_unset`` (before -> after), ``partitioning_changed``. A table's first commit
adds every column and property it was made with. Who and why come from the commit's
tag (actor, tool, purpose), as in ``audit.change_log``; a tag that is free text is kept
as its length only. Column comments are not recorded (dbt's persist_docs rewrites them).

Read from the log files, without Spark: the JSON commits still in the log, from the
newest checkpoint before the oldest of them when Delta's log cleanup has removed the
first ones. Idempotent: a commit already in the table (relation, version, timestamp) is
not written again, so a crash or a second run loses and doubles nothing. Tables on a
local file system only (laptop, loopback cluster); elsewhere the relation is named and
skipped.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from python_jobs.delta_files import commit_files
from python_jobs.project import ProjectError, commit_tag, prog, run_job
from python_jobs.relations import DeltaRelation, delta_relations, local_path, table_location

SINK_MODEL = "audit_schema_changes"
TOOL = "python_jobs.schema_history"
COLUMNS = (
    "relation",
    "node",
    "commit_version",
    "commit_timestamp",
    "change",
    "name",
    "before",
    "after",
    "operation",
    "user_metadata",
    "actor",
    "tool",
    "purpose",
    "audited_at",
)
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(\.\d+\.\d+)?\.parquet$")
_MAPPING_ID = "delta.columnMapping.id"
ECHO_ROWS = 20  # rows a run prints (a first run records every relation's creation)


@dataclass(frozen=True)
class Change:
    change: str
    name: str
    before: str | None
    after: str | None


# --- pure: the difference between two metaData actions ------------------------------


def _type(field: dict) -> str:
    kind = field.get("type")
    return (
        kind if isinstance(kind, str) else json.dumps(kind, sort_keys=True, separators=(",", ":"))
    )


def _fields(metadata: dict | None) -> list[dict]:
    if not metadata:
        return []
    return list(json.loads(metadata.get("schemaString") or '{"fields": []}').get("fields") or [])


def schema_changes(before: dict | None, after: dict) -> list[Change]:
    """What ``after`` (a metaData action) changed from ``before`` (None: a new table)."""
    changes: list[Change] = []
    old_fields, new_fields = _fields(before), _fields(after)

    def key(field: dict) -> Any:
        mapped = (field.get("metadata") or {}).get(_MAPPING_ID)
        return ("id", mapped) if mapped is not None else ("name", field["name"].lower())

    old = {key(field): field for field in old_fields}
    new = {key(field): field for field in new_fields}
    for field in old_fields:
        if key(field) not in new:
            changes.append(Change("column_dropped", field["name"], _type(field), None))
    for field in new_fields:
        was = old.get(key(field))
        if was is None:
            changes.append(Change("column_added", field["name"], None, _type(field)))
            continue
        if was["name"] != field["name"]:
            changes.append(Change("column_renamed", field["name"], was["name"], field["name"]))
        if _type(was) != _type(field):
            changes.append(Change("column_retyped", field["name"], _type(was), _type(field)))
        if bool(was.get("nullable", True)) != bool(field.get("nullable", True)):
            changes.append(
                Change(
                    "column_nullability",
                    field["name"],
                    "nullable" if was.get("nullable", True) else "not null",
                    "nullable" if field.get("nullable", True) else "not null",
                )
            )
    old_props = dict((before or {}).get("configuration") or {})
    new_props = dict(after.get("configuration") or {})
    for name in sorted(old_props.keys() | new_props.keys()):
        was, now = old_props.get(name), new_props.get(name)
        if was == now:
            continue
        kind = "property_set" if was is None else "property_unset" if now is None else None
        changes.append(Change(kind or "property_changed", name, was, now))
    old_parts = list((before or {}).get("partitionColumns") or [])
    new_parts = list(after.get("partitionColumns") or [])
    if old_parts != new_parts and (before is not None or new_parts):
        changes.append(
            Change("partitioning_changed", "", ", ".join(old_parts) or None, ", ".join(new_parts))
        )
    return changes


def tag_columns(user_metadata: str | None) -> dict[str, str | None]:
    """The commit's tag as the audit log keeps it: JSON whole, free text as its length."""
    if user_metadata is None:
        return {"user_metadata": None, "actor": None, "tool": None, "purpose": None}
    try:
        tag = json.loads(user_metadata) if user_metadata.startswith("{") else None
    except ValueError:
        tag = None
    if not isinstance(tag, dict):
        return {
            "user_metadata": f"(free text of {len(user_metadata)} characters, not kept)",
            "actor": None,
            "tool": None,
            "purpose": None,
        }
    return {
        "user_metadata": user_metadata,
        **{
            name: (str(tag[name]) if tag.get(name) is not None else None)
            for name in ("actor", "tool", "purpose")
        },
    }


# --- reading a table's log -------------------------------------------------------------


def _commit_actions(path: Path) -> tuple[dict | None, dict]:
    """(metaData, commitInfo) of one JSON commit; only those lines are parsed."""
    metadata, info = None, {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.startswith('{"metaData"'):
                metadata = json.loads(line)["metaData"]
            elif line.startswith('{"commitInfo"'):
                info = json.loads(line)["commitInfo"]
    return metadata, info


def _checkpoint_metadata(log: Path, below: int) -> dict | None:
    """The metaData of the newest checkpoint before version ``below``."""
    found: dict[int, list[Path]] = {}
    for path in log.iterdir():
        match = _CHECKPOINT.match(path.name)
        if match and int(match.group(1)) < below:
            found.setdefault(int(match.group(1)), []).append(path)
    if not found:
        return None
    for part in sorted(found[max(found)]):
        table = pq.read_table(part, columns=["metaData"])
        for value in table.column("metaData").to_pylist():
            if value:
                value["configuration"] = dict(value.get("configuration") or [])
                return value
    return None


def log_changes(location: Path) -> Iterator[tuple[int, dict, list[Change]]]:
    """(version, commitInfo, changes) of every commit in the log that changed schema,
    properties or partitioning."""
    commits = commit_files(location)
    if not commits:
        return
    first = min(commits)
    before = _checkpoint_metadata(location / "_delta_log", first) if first > 0 else None
    known = first == 0 or before is not None
    for version in sorted(commits):
        metadata, info = _commit_actions(commits[version])
        if metadata is None:
            continue
        if known:
            changes = schema_changes(before, metadata)
            if changes:
                yield version, info, changes
        else:  # said, never skipped silently
            print(
                f"  schema history: {location.name}: the log starts at v{first} and no "
                f"checkpoint holds the schema before it; v{version}'s schema is taken as "
                "the starting point and what that commit changed is unknown",
                file=sys.stderr,
            )
        before, known = metadata, True


def relation_rows(relation: DeltaRelation, location: Path) -> list[dict]:
    """The table's changes as rows (commit time in epoch milliseconds: commit_ms)."""
    rows = []
    for version, info, changes in log_changes(location):
        tag = tag_columns(info.get("userMetadata"))
        for change in changes:
            rows.append(
                {
                    "relation": f"{relation.schema}.{relation.identifier}",
                    "node": relation.unique_id,
                    "commit_version": version,
                    "commit_ms": info.get("timestamp"),
                    "change": change.change,
                    "name": change.name,
                    "before": change.before,
                    "after": change.after,
                    "operation": info.get("operation"),
                    **tag,
                }
            )
    return rows


# --- the job -----------------------------------------------------------------------------


def record(spark: Any, relations: list[DeltaRelation] | None = None, echo: bool = False) -> int:
    """Append every change not yet in the schema history; the number of rows written."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    relations = relations if relations is not None else delta_relations()
    sinks = [relation for relation in relations if relation.name == SINK_MODEL]
    if not sinks:
        raise ProjectError(f"the manifest has no {SINK_MODEL} model; run `dbt parse` first")
    sink = table_location(spark, sinks[0])
    # a commit is known by relation, version and time: a table dropped and made again
    # counts its versions from 0 anew
    seen = {
        (row[0], row[1], row[2])
        for row in spark.read.format("delta")
        .load(sink)
        .select("relation", "commit_version", F.expr("unix_millis(commit_timestamp)"))
        .distinct()
        .collect()
    }
    new: list[dict] = []
    for relation in relations:
        try:
            location = table_location(spark, relation)
        except PySparkException:  # not built yet: nothing to record
            continue
        try:
            folder = local_path(location, f"{relation.schema}.{relation.identifier}")
        except ProjectError as error:
            print(f"  schema history: {relation.schema}.{relation.identifier} skipped: {error}")
            continue
        new += [
            row
            for row in relation_rows(relation, folder)
            if (row["relation"], row["commit_version"], row["commit_ms"]) not in seen
        ]
    if new:
        fields = [name for name in COLUMNS if name not in ("commit_timestamp", "audited_at")]
        schema = StructType(
            [StructField("commit_ms", LongType())]
            + [
                StructField(name, LongType() if name == "commit_version" else StringType())
                for name in fields
            ]
        )
        frame = spark.createDataFrame(
            [(row["commit_ms"], *(row[name] for name in fields)) for row in new], schema
        )
        frame = frame.withColumn("commit_timestamp", F.expr("timestamp_millis(commit_ms)"))
        frame = frame.withColumn("audited_at", F.current_timestamp()).select(*COLUMNS)
        (
            frame.write.format("delta")
            .mode("append")
            .option("userMetadata", commit_tag(TOOL, "audit"))
            .save(sink)
        )
    if echo:
        for row in new[:ECHO_ROWS]:
            detail = " -> ".join(str(v) for v in (row["before"], row["after"]) if v is not None)
            why = f"{row['actor'] or 'untagged'}: {row['purpose'] or row['operation']}"
            print(
                f"  {row['relation']:26} v{row['commit_version']:<4} {row['change']:18} "
                f"{row['name'] or '-':24} {detail:18} ({why})"
            )
        if len(new) > ECHO_ROWS:
            print(f"  ... and {len(new) - ECHO_ROWS} more (select * from the schema history)")
    return len(new)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.schema_history"), description=__doc__.split("\n\n")[0]
    )
    parser.parse_args(argv)
    from python_jobs.spark import get_spark

    spark = spark or get_spark(TOOL, shared_metastore=False)
    written = record(spark, echo=True)
    print(f"Recorded {written} schema or property change(s).")
    return 0


if __name__ == "__main__":
    run_job(main, "schema_history")
