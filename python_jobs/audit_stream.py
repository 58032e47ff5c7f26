"""Audit every change: the Change Data Feed of every CDF relation -> audit.change_log.

    python -m python_jobs.audit_stream [--once]    # catch up and exit (CI, cron)
    python -m python_jobs.audit_stream --follow    # keep auditing until stopped (Ctrl-C)

Then the schema history (python_jobs.schema_history): every schema or table-property
change of every declared relation, from its Delta log, into audit.schema_changes
(``--follow``: once per interval).

The relations are the dbt manifest's Delta tables that declare
``delta.enableChangeDataFeed`` (never a list). Each one is read as Spark Structured
Streaming (``readChangeFeed``, by path, so the job can run while dbt runs) and every
micro-batch appends one row per (commit version, change type) with the row count and
the commit's operation, parameters and userMetadata tag from the table history.
Commits that change no row (VACUUM, OPTIMIZE, REORG, property changes) are audited too,
as one row with no change type: each batch covers the exact version range its
checkpointed offsets say it consumed, and audits every commit in it.

Exactly once: each batch is one Delta append made idempotent by ``txnAppId`` /
``txnVersion`` (the checkpoint's batch id), so a run killed at any point and started
again writes every version once. A relation without a checkpoint starts after the
last version the audit log already holds.

No personal data: only the feed's ``_change_type`` and ``_commit_version`` columns are
read (never a column value, never a pre/post image); in the commit's predicates only
column names, qualifiers, function names and SQL words survive and every value becomes
``?`` (``UPDATE ... WHERE patient_id = 'P0000123'`` typed by hand -> ``(patient_id =
?)``); a userMetadata that is not a JSON tag (free text could name anyone) is kept as
its length only.

What a stream cannot read is caught up before it starts (``AuditStream.prepare``):

- a stream cannot cross a commit that gives the table a new identity (every
  ``CREATE OR REPLACE`` of a dbt table model, and RESTORE; Delta raises
  DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE), so the versions before the newest
  one are audited from a batch read of the same feed and the stream starts there;
- when VACUUM has already deleted the change files of versions not yet audited, those
  are audited from the history (counts from operationMetrics, ``count_source =
  history``).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException, StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from python_jobs.macros import engine_macros
from python_jobs.project import (
    ProjectError,
    commit_tag,
    interval_hours,
    private_folder,
    prog,
    run_job,
    state_dir,
)
from python_jobs.relations import DeltaRelation, delta_relations, is_built, table_location

SINK_MODEL = "audit_change_log"
TOOL = "python_jobs.audit_stream"


@dataclass(frozen=True)
class Target:
    """One audited relation: where it lives and where its stream keeps its checkpoints."""

    relation: DeltaRelation
    location: str
    checkpoints: Path

    @property
    def name(self) -> str:
        return f"{self.relation.schema}.{self.relation.identifier}"


# --- pure transforms ---------------------------------------------------------------


def change_counts(changes: DataFrame) -> DataFrame:
    """Rows per (commit version, change type) of a Change Data Feed batch."""
    return changes.groupBy(
        F.col("_commit_version").alias("commit_version"),
        F.col("_change_type").alias("change_type"),
    ).agg(F.count(F.lit(1)).alias("row_count"))


def commit_columns(history: DataFrame, *keep: str) -> DataFrame:
    """The commit's own columns as the audit log keeps them (history from read_history)."""
    tag = F.col("userMetadata")
    is_json = tag.startswith("{") & F.get_json_object(tag, "$").isNotNull()
    return history.select(
        F.col("version").alias("commit_version"),
        F.col("timestamp").alias("commit_timestamp"),
        F.col("operation"),
        F.col("operationParameters").alias("operation_parameters"),
        F.when(is_json | tag.isNull(), tag)
        .otherwise(F.format_string("(free text of %d characters, not kept)", F.length(tag)))
        .alias("user_metadata"),
        F.when(is_json, F.get_json_object(tag, "$.actor")).alias("actor"),
        F.when(is_json, F.get_json_object(tag, "$.tool")).alias("tool"),
        F.when(is_json, F.get_json_object(tag, "$.purpose")).alias("purpose"),
        *keep,
    )


def audit_records(
    history: DataFrame,
    counts: DataFrame,
    target: Target,
    first: int,
    last: int,
    counted: list[int] | None = None,
) -> DataFrame:
    """Audit rows of one batch: every commit in [first, last] and every counted version
    (`counted`: the versions in counts, when the caller has collected them).

    A commit with changed rows gets one row per change type; one without gets a single
    row with no change type and a count of 0.
    """
    if counted is None:
        counted = [row[0] for row in counts.select("commit_version").distinct().collect()]
    commits = commit_columns(
        history.where(F.col("version").between(first, last) | F.col("version").isin(counted))
    )
    rows = commits.join(counts, "commit_version", "left")
    return audit_columns(
        rows,
        target,
        F.col("change_type"),
        F.coalesce(F.col("row_count"), F.lit(0)).cast("bigint"),
        "change_data_feed",
    )


def audit_columns(
    commits: DataFrame, target: Target, change_type: F.Column, row_count: F.Column, source: str
) -> DataFrame:
    """The audit log's columns, in its order, from commit_columns() plus the counts."""
    return commits.select(
        F.lit(target.name).alias("relation"),
        F.lit(target.relation.unique_id).alias("node"),
        "commit_version",
        "commit_timestamp",
        change_type.alias("change_type"),
        row_count.alias("row_count"),
        "operation",
        "operation_parameters",
        "user_metadata",
        "actor",
        "tool",
        "purpose",
        F.lit(source).alias("count_source"),
        F.current_timestamp().alias("audited_at"),
    )


def history_records(history: DataFrame, target: Target, first: int, last: int) -> DataFrame:
    """Audit rows for [first, last] from the history alone (the feed's files are gone).

    Counts come from operationMetrics; a commit that changed rows it does not count
    (RESTORE) gets one row with a null count.
    """
    metric = F.col("operationMetrics")
    # which metric counts which change, per operation: declared once (macro _row_metrics)
    rows = engine_macros()._row_metrics()

    def by_operation(mapping: dict[str, str]) -> F.Column:
        column = F.lit(None).cast("bigint")
        for operation, name in mapping.items():
            column = F.when(F.col("operation") == operation, metric[name].cast("bigint")).otherwise(
                column
            )
        return column

    counts = F.array(
        *[
            F.struct(F.lit(change).alias("change_type"), by_operation(mapping).alias("row_count"))
            for change, mapping in (
                ("insert", rows["insert"]),
                ("update_preimage", rows["update"]),
                ("update_postimage", rows["update"]),
                ("delete", rows["delete"]),
            )
        ]
    )
    counted = F.filter(counts, lambda c: c["row_count"] > 0)
    none = F.struct(
        F.lit(None).cast("string").alias("change_type"),
        F.when(F.col("operation").isin(*rows["uncounted"]), F.lit(None).cast("bigint"))
        .otherwise(F.lit(0).cast("bigint"))
        .alias("row_count"),
    )
    commits = history.where(F.col("version").between(first, last)).withColumn(
        "change", F.explode(F.when(F.size(counted) > 0, counted).otherwise(F.array(none)))
    )
    return audit_columns(
        commit_columns(commits, "change"),
        target,
        F.col("change.change_type"),
        F.col("change.row_count"),
        "history",
    )


# --- Delta history -----------------------------------------------------------------


def delta_path(location: str) -> str:
    return "delta.`" + location.replace("`", "``") + "`"


_TOKENS = re.compile(r"'(?:[^'\\]|\\.|'')*'|`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?")
_SQL_WORDS = frozenset(
    {
        *("and", "or", "not", "in", "is", "null", "true", "false", "like", "ilike", "rlike"),
        *("between", "case", "when", "then", "else", "end", "cast", "as", "exists", "distinct"),
        # the JSON of MERGE clauses: [{"actionType": "update", "predicate": "..."}]
        *("actiontype", "predicate", "update", "delete", "insert", "updateall", "insertall"),
    }
)
_HISTORY_COLUMNS = ("version", "timestamp", "operation", "operationParameters", "operationMetrics", "userMetadata")  # fmt: skip


def redact_predicate(text: str, columns: frozenset[str]) -> str:
    """Keep a predicate's shape, drop its values: every token that is not a column of
    the table, a qualifier (``target.``), a function name or an SQL word becomes ?.

    An allow-list, because Delta records some predicates with their literals unquoted
    (an UPDATE's ``(patient_id#1234 = P0000001)``), which no pattern for literals sees.
    """
    text = re.sub(r"#\d+", "", text)  # Catalyst expression ids

    def keep(match: re.Match) -> str:
        token = match.group(0)
        if token[0] in "'0123456789":
            return "?"
        name = token.strip("`").replace("``", "`").lower()
        following = text[match.end() : match.end() + 1]
        if name in columns or name in _SQL_WORDS or following in ".(":
            return token
        return "?"

    return _TOKENS.sub(keep, text)


def latest_version(spark: SparkSession, location: str) -> int:
    return spark.sql(f"describe history {delta_path(location)} limit 1").first()["version"]


def read_history(spark: SparkSession, location: str) -> DataFrame:
    """DESCRIBE HISTORY with the predicates' values redacted (redact_predicate)."""
    history = spark.sql(f"describe history {delta_path(location)}").select(*_HISTORY_COLUMNS)
    columns = frozenset(name.lower() for name in spark.read.format("delta").load(location).columns)
    rows = []
    for row in history.collect():
        parameters = {
            key: redact_predicate(value, columns)
            if value and ("predicate" in key.lower() or "condition" in key.lower())
            else value
            for key, value in (row["operationParameters"] or {}).items()
        }
        rows.append((*row[:3], parameters, *row[4:]))
    return spark.createDataFrame(rows, history.schema)


# Operations that give a table a new identity (Delta metadata id): a Structured
# Streaming read cannot cross them, a batch read of the feed can.
_NEW_IDENTITY = (
    "CREATE TABLE",
    "CREATE TABLE AS SELECT",
    "CREATE OR REPLACE TABLE",
    "CREATE OR REPLACE TABLE AS SELECT",
    "REPLACE TABLE",
    "REPLACE TABLE AS SELECT",
    "RESTORE",
)


def stream_from(commits: list[dict]) -> int:
    """The first version a stream can read: the newest commit that gave a new identity."""
    versions = [c["version"] for c in commits if c["operation"] in _NEW_IDENTITY]
    return max(versions, default=min((c["version"] for c in commits), default=0))


def cdf_readable_from(commits: list[dict]) -> int:
    """The first version whose Change Data Feed is still readable.

    A VACUUM deletes files that left the table before its cutoff (its start minus the
    retention it ran with), change files among them, so no commit older than the newest
    cutoff can be read from the feed any more. The rule is the dbt macro
    _cdf_readable_from_history's (incremental models that consume a feed read it),
    rendered here, so both agree.
    """
    history = [
        {
            "version": commit["version"],
            "timestamp": commit["timestamp"],
            "operation": commit["operation"],
            "parameters": json.dumps(commit.get("operationParameters") or {}),
        }
        for commit in commits
    ]
    return int(engine_macros()._cdf_readable_from_history(history))


def time_travel_floor(commits: list[dict], retention: timedelta, now: datetime) -> int:
    """The oldest version Delta still lets a reader start from (delta-io/delta#5022).

    From Delta 4.1 a change feed (like SELECT ... AS OF, RESTORE and CLONE) cannot start
    at a version committed before now minus the table's delta.deletedFileRetentionDuration;
    the newest version is always allowed. The rule is the dbt macro _time_travel_floor_of's
    (restore_version and table_history read it), rendered here, so both agree.
    """
    hours = retention.total_seconds() / 3600
    return int(engine_macros()._time_travel_floor_of(commits, hours, now)["version"])


def deleted_file_retention(spark: SparkSession, location: str) -> timedelta:
    """The table's delta.deletedFileRetentionDuration (Delta's default: 1 week)."""
    rows = spark.sql(f"show tblproperties {delta_path(location)}").collect()
    text = {row[0]: row[1] for row in rows}.get("delta.deletedFileRetentionDuration")
    return timedelta(hours=interval_hours(text) if text else 168)


# --- checkpoints and offsets ---------------------------------------------------------


def _generations(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(
        int(child.name.removeprefix("from-v"))
        for child in folder.iterdir()
        if child.is_dir() and re.fullmatch(r"from-v\d+", child.name)
    )


def _offset(path: Path) -> tuple[int, int]:
    """(reservoirVersion, index) of a checkpointed Delta source offset.

    The index is the position of the last file the batch read in that version (>= 0),
    or below 0 when it read none of the version's files: -1, Delta's base index (the
    batch ended before the version; Delta writes it when a batch read a version to its
    end, as (version + 1, -1)), -20/-19 (a schema change in the version).
    """
    offset = json.loads(path.read_text().splitlines()[-1])
    return int(offset["reservoirVersion"]), int(offset["index"])


def _consumed(version: int, index: int) -> int:
    """The last version a batch ending at this offset read: the offset's own version
    when it read some of its files, else the one before it."""
    return version if index >= 0 else version - 1


def consumed_through(checkpoint: Path, batch_id: int) -> int | None:
    """The last version a batch read, from its checkpointed offset (None: no offset).

    An offset (R, i >= 0) read files of R, so R is counted in that batch; the next
    batch starts after R. (When a batch stops inside R, maxFilesPerTrigger, the rest
    of R is counted where it is read: audit_records keeps every counted version.)
    """
    path = checkpoint / "offsets" / str(batch_id)
    if not path.is_file():
        return None
    return _consumed(*_offset(path))


def checkpoint_position(checkpoint: Path) -> int:
    """The first version a checkpointed stream may still need to read (0 when it has
    no offset yet): the version of its last offset, which it may have read only in part
    (so the feed must still hold it for the stream to go on)."""
    offsets = checkpoint / "offsets"
    batches = (
        [int(p.name) for p in offsets.iterdir() if p.name.isdigit()] if offsets.is_dir() else []
    )
    if not batches:
        return 0
    return _offset(offsets / str(max(batches)))[0]


def read_through(checkpoint: Path) -> int | None:
    """The last version a checkpointed stream has read all of, once no batch is pending.

    None: it has read nothing yet. -2 (below any version): a batch is pending (an
    offset written, its commit not), or the offset cannot be read. An offset at version
    R with a file index (index >= 0) has read R: after a completed availableNow run
    that is all of R, which no later commit changes (a version is immutable); index -1
    has read nothing of R yet.
    """
    offsets, commits = checkpoint / "offsets", checkpoint / "commits"
    batches = (
        sorted(int(p.name) for p in offsets.iterdir() if p.name.isdigit())
        if offsets.is_dir()
        else []
    )
    if not batches:
        return None
    done = (
        {int(p.name) for p in commits.iterdir() if p.name.isdigit()} if commits.is_dir() else set()
    )
    if batches[-1] not in done:
        return -2
    try:
        return _consumed(*_offset(offsets / str(batches[-1])))
    except (ValueError, KeyError, IndexError):
        return -2


def _app_id(target: Target, kind: str) -> str:
    """The idempotent-write id of one kind of append to the audit log, per relation.

    Delta skips an append whose txnVersion is not above the last one committed under
    its txnAppId: stream batches use the checkpoint's batch id (per generation),
    catch-ups and history gaps their last version (which only grows).
    """
    return f"gdpr_lakehouse.audit_stream:{target.name}:{kind}"


def append(records: DataFrame, sink: str, app_id: str, txn_version: int) -> None:
    """One idempotent append: Delta skips it when (app_id, txn_version) already committed."""
    (
        records.write.format("delta")
        .mode("append")
        .option("txnAppId", app_id)
        .option("txnVersion", txn_version)
        .option("userMetadata", commit_tag(TOOL, "audit"))
        .save(sink)
    )


# --- the job -----------------------------------------------------------------------


class AuditStream:
    """The audit of one lakehouse: its targets, its sink, their streams."""

    def __init__(
        self,
        spark: SparkSession,
        checkpoint_root: Path,
        max_files_per_trigger: int | None = None,
    ) -> None:
        self.spark = spark
        self.checkpoint_root = checkpoint_root
        self.max_files = max_files_per_trigger
        # the version resolve() just read, per relation, for the up_to_date() that
        # follows it in the same run (a JVM's first read of a table costs ~0.2 s)
        self._resolved: dict[str, int] = {}
        # the history prepare() just read, per relation, with its newest commit: the
        # stream's start and its first batch use it while it covers what they need
        self._prepared: dict[str, tuple[DataFrame, dict]] = {}
        relations = delta_relations()
        sinks = [relation for relation in relations if relation.name == SINK_MODEL]
        if not sinks:
            raise ProjectError(f"the manifest has no {SINK_MODEL} model; run `dbt parse` first")
        self.sink_relation = sinks[0]
        try:
            self.sink = table_location(spark, self.sink_relation)
            latest_version(spark, self.sink)
        except PySparkException as error:
            raise ProjectError(
                f"the audit log {self.sink_relation.qualified_name} does not exist yet; "
                "run `dbt build` (or `dbt run --select audit_change_log`) first"
            ) from error
        self.targets = []
        audited = [
            relation
            for relation in relations
            if relation.change_data_feed and relation.privacy.get("role") != "audit"
        ]
        # four at a time: a JVM's first read of a table is mostly driver work that two
        # cores share (a fresh JVM, 34 tables: ~6.5 s one by one)
        with ThreadPoolExecutor(max_workers=4) as pool:
            resolved = list(pool.map(self.resolve, audited))
        for relation, target in zip(audited, resolved, strict=True):
            if target is None:
                print(f"  {relation.schema}.{relation.identifier}: not built yet, skipped")
            else:
                self.targets.append(target)

    def resolve(self, relation: DeltaRelation) -> Target | None:
        """Where the relation's table is now, and which table it is (None: not built).
        Only a table that does not exist is skipped: one that exists and cannot be read
        (a damaged log, a storage error) stops the run, never passes as not built."""
        try:
            if not is_built(self.spark, relation):
                return None
            location = table_location(self.spark, relation)
            version = latest_version(self.spark, location)
        except (PySparkException, Py4JJavaError) as error:  # the catalog's own read too
            # a Py4J error's first line names only the call ("calling o103.tableExists"):
            # the Java exception names the cause
            text = (
                str(error.java_exception.toString())
                if isinstance(error, Py4JJavaError)
                else str(error)
            ).strip()
            first = text.splitlines()[0][:300] if text else ""
            raise ProjectError(
                f"{relation.qualified_name} exists but its history cannot be read ({first}); "
                "nothing was audited. Repair or restore the table, then run the audit again"
            ) from error
        folder = self.checkpoint_root / f"{relation.schema}.{relation.identifier}"
        target = Target(relation, location, folder)
        self._resolved[target.name] = version
        return target

    def audited_through(self) -> dict[str, int]:
        """The last version audited per relation."""
        rows = (
            self.spark.read.format("delta")
            .load(self.sink)
            .groupBy("relation")
            .agg(F.max("commit_version").alias("version"))
            .collect()
        )
        return {row["relation"]: int(row["version"]) for row in rows}

    def up_to_date(self, target: Target, audited: int | None) -> bool:
        """Nothing to audit: the log holds the table's latest version and the newest
        stream generation has read through it, with no batch left pending. Then `--once`
        starts no stream for it: a stream's start, even with nothing to read, costs
        seconds per relation. Anything it cannot tell starts the stream, as before.
        The latest version is the one resolve() read moments before, used once; any
        later call reads it again.
        """
        latest = self._resolved.pop(target.name, None)
        if audited is None:
            return False
        if latest is None:
            latest = latest_version(self.spark, target.location)
        if audited != latest:
            return False
        generations = _generations(target.checkpoints)
        if not generations:
            return False
        newest = generations[-1]
        read = read_through(target.checkpoints / f"from-v{newest}")
        return (newest - 1 if read is None else read) >= audited

    def prepare(self, target: Target, audited: int | None) -> int:
        """The checkpoint generation to stream from, after catching up what a stream can't.

        A generation is a checkpoint folder ``from-v<N>`` whose stream started at
        version N. The newest goes on from its checkpoint while a stream can still
        read its position: the feed's files are still there (VACUUM), and no commit
        since gave the table a new identity (a REPLACE, which every dbt build of a
        table model makes, or a RESTORE: a stream cannot cross one,
        DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE). Otherwise the versions before
        that point are audited now, from a batch read of the feed (or, where VACUUM
        deleted it, from the history), and a new generation starts after them.
        """
        history = read_history(self.spark, target.location)
        commits = [row.asDict() for row in history.collect()]
        self._prepared.pop(target.name, None)
        if commits:
            self._prepared[target.name] = (history, max(commits, key=lambda c: c["version"]))
        oldest = min((c["version"] for c in commits), default=0)
        next_version = (audited + 1) if audited is not None else 0
        if next_version < oldest:
            self.record_expired(target, next_version, oldest - 1)
            next_version = oldest
        now = self.spark.sql("select current_timestamp() as now").first()["now"]
        readable = max(
            cdf_readable_from(commits),
            time_travel_floor(commits, deleted_file_retention(self.spark, target.location), now),
        )
        identity = stream_from(commits)
        floor = max(readable, identity)
        generations = _generations(target.checkpoints)
        # a generation that started before the newest identity change can never pass it
        if generations and generations[-1] >= identity:
            position = checkpoint_position(target.checkpoints / f"from-v{generations[-1]}")
            if max(position, generations[-1]) >= readable:
                return generations[-1]
        if next_version < readable:
            gap = history_records(history, target, next_version, readable - 1)
            append(gap, self.sink, _app_id(target, "history"), readable - 1)
            print(
                f"  {target.name}: the change feed of versions {next_version}-{readable - 1} "
                "can no longer be read (VACUUM deleted it, or it is older than the table's "
                "delta.deletedFileRetentionDuration); audited them from the history",
                flush=True,
            )
            next_version = readable
        if next_version < floor:
            self.catch_up(target, history, next_version, floor - 1)
            next_version = floor
        return next_version

    def _prepared_history(self, target: Target, through: int) -> DataFrame | None:
        """The history prepare() read, once, when it holds every version through
        `through` and the table's newest commit is still the one it ends with (same
        version, time and operation: a table dropped and made again since counts its
        versions from 0 anew). Else None: read it again. Later batches read anew."""
        prepared = self._prepared.pop(target.name, None)
        if prepared is None or prepared[1]["version"] < through:
            return None
        newest = self.spark.sql(f"describe history {delta_path(target.location)} limit 1").first()
        if newest is None or any(
            newest[key] != prepared[1][key] for key in ("version", "timestamp", "operation")
        ):
            return None
        return prepared[0]

    def record_expired(self, target: Target, first: int, last: int) -> None:
        """Versions [first, last] left the Delta log (log retention) before they were
        audited: nothing of them can be read any more. Never skipped silently: each gets
        one row, operation LOG EXPIRED, count_source expired, so the audit log says
        what it cannot hold and the completeness test sees no hole."""
        expired = self.spark.range(first, last + 1).select(
            F.col("id").alias("version"),
            F.lit(None).cast("timestamp").alias("timestamp"),
            F.lit("LOG EXPIRED").alias("operation"),
            F.lit(None).cast("map<string,string>").alias("operationParameters"),
            F.lit(None).cast("string").alias("userMetadata"),
        )
        append(
            audit_columns(
                commit_columns(expired),
                target,
                F.lit(None).cast("string"),
                F.lit(None).cast("bigint"),
                "expired",
            ),
            self.sink,
            _app_id(target, "expired"),
            last,
        )
        print(
            f"  {target.name}: versions {first}-{last} left the Delta log before they were "
            "audited (log retention); recorded as LOG EXPIRED",
            flush=True,
        )

    def catch_up(self, target: Target, history: DataFrame, first: int, last: int) -> None:
        """Audit [first, last] from a batch read of the feed (it crosses REPLACEs)."""
        try:
            changes = (
                self.spark.read.format("delta")
                .option("readChangeFeed", "true")
                .option("startingVersion", first)
                .option("endingVersion", last)
                .load(target.location)
                .select("_change_type", "_commit_version")
            )
            records = audit_records(history, change_counts(changes), target, first, last)
            append(records, self.sink, _app_id(target, "catch-up"), last)
        except PySparkException as error:  # e.g. an incompatible schema change in between
            reason = (str(error).strip().splitlines() or ["?"])[0][:200]
            print(
                f"  {target.name}: versions {first}-{last} from the history ({reason})", flush=True
            )
            append(
                history_records(history, target, first, last),
                self.sink,
                _app_id(target, "history"),
                last,
            )

    def start(self, target: Target, generation: int, trigger: dict) -> object:
        checkpoint = target.checkpoints / f"from-v{generation}"
        private_folder(checkpoint)  # Spark writes its files there with umask 077 too
        # A stream cannot start after the latest version (VersionNotFoundException), so a
        # generation whose first version is not committed yet starts at the latest one
        # and skips it: the folder name, not the start, says where auditing begins.
        prepared = self._prepared.get(target.name)
        latest = prepared[1]["version"] if prepared else latest_version(self.spark, target.location)
        reader = (
            self.spark.readStream.format("delta")
            .option("readChangeFeed", "true")
            .option("startingVersion", min(generation, latest))
        )
        if self.max_files:
            reader = reader.option("maxFilesPerTrigger", self.max_files)
        changes = reader.load(target.location).select("_change_type", "_commit_version")
        app_id = _app_id(target, f"stream:from-v{generation}")

        def on_batch(batch: DataFrame, batch_id: int) -> None:
            last = consumed_through(checkpoint, batch_id)
            previous = consumed_through(checkpoint, batch_id - 1) if batch_id > 0 else None
            first = max((previous + 1) if previous is not None else generation, generation)
            if last is None:
                last = first - 1
            counts = change_counts(batch.where(F.col("_commit_version") >= generation)).cache()
            try:
                if first > last and counts.isEmpty():
                    return  # a new generation's first batch: only the version before it
                counted = [row[0] for row in counts.select("commit_version").distinct().collect()]
                history = self._prepared_history(target, max([last, *counted]))
                if history is None:
                    history = read_history(self.spark, target.location)
                records = audit_records(history, counts, target, first, last, counted)
                append(records, self.sink, app_id, batch_id)
            finally:
                counts.unpersist()

        return (
            changes.writeStream.queryName(f"audit {target.name}")
            .foreachBatch(on_batch)
            .option("checkpointLocation", str(checkpoint))
            .trigger(**trigger)
            .start()
        )


@contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """One audit_stream per checkpoint folder at a time (a second would race the first)."""
    private_folder(folder)
    lock = os.fdopen(os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600), "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        raise ProjectError(
            f"another audit_stream is running on {folder} (pid {lock.read().strip() or '?'}); "
            "stop it first, or give this one its own --checkpoint-dir"
        ) from None
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))
    lock.flush()
    try:
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


def _summary(before: dict[str, int], after: dict[str, int], targets: list[Target]) -> int:
    new = 0
    for target in targets:
        old, now = before.get(target.name), after.get(target.name)
        if now is not None and now != old:
            first = 0 if old is None else old + 1
            new += now - first + 1
            print(f"  {target.name:34} versions {first}-{now} audited", flush=True)
    return new


def run_once(job: AuditStream, retries: int = 2) -> int:
    """Catch every relation up to its latest version (availableNow) and return."""
    before = job.audited_through()
    pending = list(job.targets)
    failures: dict[str, str] = {}
    started = False
    for attempt in range(retries + 1):
        if attempt:  # a table dropped and created again is a new table: resolve it anew
            pending = [job.resolve(target.relation) or target for target in pending]
        audited = job.audited_through() if attempt else before
        queries = [
            (
                target,
                job.start(
                    target, job.prepare(target, audited.get(target.name)), {"availableNow": True}
                ),
            )
            for target in pending
            if not job.up_to_date(target, audited.get(target.name))
        ]
        started = started or bool(queries)
        pending, failures = [], {}
        for target, query in queries:
            with contextlib.suppress(StreamingQueryException):
                query.awaitTermination()
            if query.exception() is not None:
                # a schema change or a vacuumed feed: prepare again and restart it
                pending.append(target)
                failures[target.name] = (str(query.exception()).strip().splitlines() or ["?"])[0]
        if not pending:
            break
    # nothing started, nothing written: prepare() appends only for a stream it starts
    after = job.audited_through() if started else before
    versions = _summary(before, after, job.targets)
    print(
        f"Audited {versions} new version(s) of {len(job.targets)} relation(s) into {job.sink_relation.schema}.{job.sink_relation.identifier}."
    )
    for name, message in failures.items():
        print(f"audit_stream: {name} failed: {message[:300]}", file=sys.stderr)
    return 1 if failures else 0


def run_follow(job: AuditStream, interval: float, stop_after: float | None = None) -> int:
    """Audit continuously (processing-time trigger) until SIGINT/SIGTERM."""
    stopping = {"now": False}

    def stop(signum: int, _frame: object) -> None:
        stopping["now"] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    trigger = {"processingTime": f"{interval:g} seconds"}
    audited = job.audited_through()
    queries = {
        target.name: (
            target,
            job.start(target, job.prepare(target, audited.get(target.name)), trigger),
        )
        for target in job.targets
    }
    print(
        f"Following {len(queries)} relation(s) every {interval:g} s into "
        f"{job.sink_relation.schema}.{job.sink_relation.identifier}; Ctrl-C to stop.",
        flush=True,
    )
    started = time.monotonic()
    restarts: dict[str, int] = {}  # failures in a row without progress, per relation
    reached: dict[str, int | None] = {}
    schema_due = started
    while not stopping["now"] and (stop_after is None or time.monotonic() - started < stop_after):
        time.sleep(1)
        if time.monotonic() >= schema_due:  # the schema history, once per interval
            record_schema_history(job.spark)
            schema_due = time.monotonic() + interval
        for name, (target, query) in list(queries.items()):
            if query.isActive:
                continue
            error = query.exception()
            message = (str(error).strip().splitlines() or ["?"])[0] if error else "stopped"
            audited = job.audited_through()
            if audited.get(name) != reached.get(name):  # it got further: a routine restart
                restarts[name], reached[name] = 0, audited.get(name)
            restarts[name] = restarts.get(name, 0) + 1
            if restarts[name] > 5:
                print(f"audit_stream: {name} keeps failing: {message[:300]}", file=sys.stderr)
                stopping["now"] = True
                break
            print(f"  {name}: stream stopped ({message[:200]}); restarting", flush=True)
            target = job.resolve(target.relation) or target  # dropped and created again?
            queries[name] = (
                target,
                job.start(target, job.prepare(target, audited.get(target.name)), trigger),
            )
    for _target, query in queries.values():
        query.stop()
    print("Stopped.", flush=True)
    return 1 if any(count > 5 for count in restarts.values()) else 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.audit_stream"), description=__doc__.split("\n\n")[0]
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--once", action="store_true", help="catch up (availableNow trigger) and exit (the default)"
    )
    mode.add_argument(
        "--follow", action="store_true", help="run until stopped (processing-time trigger)"
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=10.0,
        help="--follow: seconds between micro-batches (default 10)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        type=Path,
        help="where the streams keep their checkpoints (default <LAKEHOUSE_DIR>/checkpoints/audit_stream)",
    )
    parser.add_argument(
        "--max-files-per-trigger",
        type=int,
        help="at most this many files per micro-batch (default: Delta's 1000)",
    )
    parser.add_argument(
        "--shared-metastore",
        action="store_true",
        help="use dbt's metastore (tables by name) instead of paths; not while dbt runs locally",
    )
    parser.add_argument("--stop-after", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.once = not args.follow
    if not 0.5 <= args.interval <= 3600:
        parser.error(f"--interval must be from 0.5 to 3600 seconds, got {args.interval:g}")
    if args.max_files_per_trigger is not None and not 1 <= args.max_files_per_trigger <= 100000:
        parser.error("--max-files-per-trigger must be from 1 to 100000")
    return args


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    args = parse_args(argv)
    from python_jobs.spark import get_spark

    checkpoint_root = (
        args.checkpoint_dir or state_dir() / "checkpoints" / "audit_stream"
    ).resolve()
    with exclusive(checkpoint_root):
        spark = spark or get_spark(TOOL, shared_metastore=args.shared_metastore)
        job = AuditStream(spark, checkpoint_root, args.max_files_per_trigger)
        if args.once:
            status = run_once(job)
            return max(status, record_schema_history(spark, say_none=True))
        return run_follow(job, args.interval, args.stop_after)


def record_schema_history(spark: SparkSession, say_none: bool = False) -> int:
    """The schema history's catch-up (python_jobs.schema_history): 0, or 1 when it failed."""
    from python_jobs import schema_history

    try:
        written = schema_history.record(spark)
    except (PySparkException, ProjectError, OSError, ValueError) as error:
        message = (str(error).strip().splitlines() or ["?"])[0]
        print(f"audit_stream: the schema history failed: {message[:300]}", file=sys.stderr)
        return 1
    if written or say_none:
        print(f"Recorded {written} schema or property change(s) into the schema history.")
    return 0


if __name__ == "__main__":
    run_job(main, "audit_stream")
