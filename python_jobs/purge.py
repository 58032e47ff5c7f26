"""Physical erasure: REORG TABLE ... APPLY (PURGE), then VACUUM, on every PII relation.

    python -m python_jobs.purge                      # every relation that holds subjects' data
    python -m python_jobs.purge --request-id req-... # only the relations that request touched
    python -m python_jobs.purge --dry-run            # what would run, and what it would settle
    python -m python_jobs.purge --retain-hours 0 --allow-short-retention   # tests, demos

Why both: erasure deletes rows by deletion vectors (the rows stay in their Parquet
files, only marked), so REORG rewrites the files that carry deletion vectors; VACUUM
then deletes every file the table no longer references once it is older than the
retention window. Only then are the erased rows physically gone.

The job records it: each evidence row (request x relation) gets ``reorg_at`` when a
REORG ran after the erasure, and ``purged_at`` when a VACUUM ran at least one
retention window after both the erasure and the REORG (so the files holding the rows
were old enough to go). A request becomes ``purged`` when all its relations are.

The landing zone too: every Parquet file of a landing source whose meta.privacy has a
subject_key is rewritten without the events of erased subjects (written beside it as
a hidden file, then renamed over it: a crash leaves the old file or the new one, and
a rerun finds nothing left to remove). Local landing folders only. And dbt's own
output: the ids `run-operation --args` and gdpr_erase's summary wrote into logs/ and
target/ are replaced by "[erased]" (same write-then-rename). A check that is not the
rewrite's then reads every landing file (python_jobs.landing_residue); when one still
holds an erased id, or cannot be decoded, or the landing zone is not on this machine,
no request becomes ``purged`` and the job exits 1 (a scheduler sees the failure).

And the request log's own retention: a request purged more than var
``erasure_record_retention_days`` ago (default 1095, three years) loses its subject id,
the free text given with it (reason, status and extension reasons) and who recorded
it (set to null), and so do the released legal holds of its subject. The request id,
type, dates and evidence stay as the record that a request was fulfilled; the
tombstone keeps the subject out; nothing readable names the person any more. The expiry is written before the VACUUMs, so a run with a short
retention removes the old files that still held the id.

The relations come from the dbt manifest (meta.privacy: a subject_key and on_erasure
delete or anonymize), never from a list, with the copies of the savepoints kept
(privacy.savepoints), each purged like the relation it copies. Below Delta's 7-day safety check only with
``--allow-short-retention``: a shorter window can break a reader or writer running at
the same time, and shortens how far RESTORE reaches back.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from python_jobs.delta_files import read_snapshot
from python_jobs.landing_residue import landing_residue
from python_jobs.macros import Macros, OperationError, engine_macros, on_session
from python_jobs.project import (
    ProjectError,
    commit_tag,
    dbt_output_dirs,
    interval_hours,
    landing_dir,
    manifest,
    open_private,
    prog,
    run_job,
    whole_days_var,
)
from python_jobs.relations import (
    DeltaRelation,
    delta_relations,
    kept_savepoints,
    registered_folder,
    table_ref,
)
from python_jobs.relations import control_relation as _control
from python_jobs.reorg import quoted, reorg_in_local_app
from python_jobs.request_states import request_id_pattern, status_in
from python_jobs.subject_access import (
    expire_access_records,
    expire_exports,
    export_retention_days,
)

SAFETY_HOURS = 168
RECORD_RETENTION_DAYS = 1095


@dataclass(frozen=True)
class PurgeResult:
    relation: str
    retain_hours: float
    reorg_files: int
    vacuumed_files: int
    seconds: float


def pii_relations(relations: list[DeltaRelation]) -> list[DeltaRelation]:
    """The relations that hold subjects' data (the vault too: its purge is idempotent),
    and the privacy control tables: a request held the subject's pseudonym while it was
    being erased, and their history must not outlive the data's."""
    return [
        relation
        for relation in relations
        if (
            relation.privacy.get("subject_key")
            and relation.privacy.get("on_erasure") in ("delete", "anonymize")
        )
        or relation.privacy.get("role") == "control"
    ]


def table_retention_hours(spark: SparkSession, ref: str) -> float:
    properties = {row[0]: row[1] for row in spark.sql(f"show tblproperties {ref}").collect()}
    return interval_hours(properties.get("delta.deletedFileRetentionDuration", "interval 7 days"))


def reorg_purge_supported(spark: SparkSession) -> bool:
    """REORG ... APPLY (PURGE) works where the executors are the driver's JVM.

    Open-source Delta (4.0.1 through 4.4.0) asks for the active SparkSession inside an
    executor task (ReorgTableHelper.filterParquetFilesOnExecutors, delta-io/delta#5697),
    so on a cluster REORG PURGE fails ("No active or default Spark session found");
    there reorg_purge runs it in a local application of its own (python_jobs.reorg),
    which rewrites only the files with deletion vectors."""
    if spark.conf.get("spark.databricks.clusterUsageTags.clusterId", None):
        return True  # Databricks' own Delta
    return bool(engine_macros()._reorg_purge_runs_on(spark.conf.get("spark.master", "local")))


def _has_deletion_vectors(location: str) -> bool:
    """Whether a live file carries a deletion vector (read from the Delta log; True when
    the location is not a local folder this process can read)."""
    if not location.startswith("file:"):
        return True
    snapshot = read_snapshot(Path(location.removeprefix("file:")))
    return snapshot is None or any(snapshot.files.values())


def reorg_purge(spark: SparkSession, ref: str) -> int:
    """REORG TABLE ... APPLY (PURGE) of one table; the files rewritten (reorg_purge_all)."""
    return reorg_purge_all(spark, [ref])[ref]


def reorg_purge_all(spark: SparkSession, refs: list[str]) -> dict[str, int]:
    """REORG TABLE ... APPLY (PURGE) of each table, by the macro purge_deletion_vectors
    (the project's one REORG, its clustering detour included): every file with a
    deletion vector rewritten, so the rows it marks are physically gone; {ref: files
    rewritten}.

    On a cluster (reorg_purge_supported) the macro runs in one local application for
    every table that carries a deletion vector (python_jobs.reorg): one JVM start per
    purge, not one per table, and only the marked files rewritten."""
    if reorg_purge_supported(spark):
        macros = on_session(spark)
        return {ref: _reorged(macros, ref) for ref in refs}
    rewritten: dict[str, int] = {}
    elsewhere = []
    for ref in refs:
        location = spark.sql(f"describe detail {ref}").first()["location"]
        if _has_deletion_vectors(location) or _detour_pending(spark, ref):
            elsewhere.append(ref)
        else:
            rewritten[ref] = 0  # nothing marked: nothing to start an application for
    if elsewhere:
        tag = spark.conf.get("spark.databricks.delta.commitInfo.userMetadata", None)
        tag = tag or commit_tag("python_jobs.purge", "purge")
        print(
            f"  REORG PURGE of {len(elsewhere)} relation(s) in one local application "
            "(Delta cannot purge on a cluster's executors, delta-io/delta#5697)",
            flush=True,
        )
        done = reorg_in_local_app(elsewhere, tag)
        rewritten.update({ref: done[quoted(ref)] for ref in elsewhere})
    return rewritten


def _reorged(macros: Macros, ref: str) -> int:
    try:
        return int(macros.purge_deletion_vectors(ref))
    except OperationError as error:
        raise ProjectError(str(error)) from None


def _detour_pending(spark: SparkSession, ref: str) -> bool:
    """A clustering detour a crash interrupted (the macro finishes it)."""
    detail = spark.sql(f"describe detail {ref}").first().asDict()
    return "gdpr_lakehouse.purge.clusterBy" in (detail.get("properties") or {})


def purge_relation(
    spark: SparkSession,
    relation: DeltaRelation,
    retain_hours: int | None,
    reorg_files: int | None = None,
) -> PurgeResult:
    """REORG PURGE (unless the caller did, reorg_files) then VACUUM one relation, by the
    macro vacuum_relation (the project's one VACUUM) on this session; the caller has
    validated retain_hours (a short one is the user's explicit opt-in)."""
    ref = table_ref(spark, relation)
    started = time.perf_counter()
    if reorg_files is None:
        reorg_files = reorg_purge(spark, ref)
    effective = retain_hours if retain_hours is not None else table_retention_hours(spark, ref)
    try:
        macros = on_session(spark, vacuum_allow_short_retention=True)
        vacuumed = int(macros.vacuum_relation(ref, retain_hours))
    except OperationError as error:
        raise ProjectError(str(error)) from None
    return PurgeResult(
        relation.qualified_name, effective, reorg_files, vacuumed, time.perf_counter() - started
    )


@dataclass(frozen=True)
class LandingResult:
    source: str
    files: int
    events: int
    anonymized: bool = False


def erased_subjects(
    spark: SparkSession, relations: list[DeltaRelation], request_id: str | None
) -> list[str]:
    """Subject ids of erased (or purged) requests: the request log keeps them."""
    requests = table_ref(spark, _control(relations, "privacy_erasure_requests"))
    only = f" and request_id = '{request_id}'" if request_id else ""
    return [
        row[0]
        for row in spark.sql(
            f"select distinct subject_id from {requests} where status in {status_in('fulfilled')}{only}"
        ).collect()
    ]


@dataclass(frozen=True)
class LandingSource:
    name: str
    key: str
    folder: Path
    # on_erasure anonymize: the events are kept without the subject (key and PII
    # columns null), because the law keeps what they describe (orders)
    anonymize: tuple[str, ...] | None
    # meta landing_format (parquet, json, csv) and the declared columns, in order (a
    # CSV file has no header: the landing table reads its fields by position)
    format: str = "parquet"
    columns: tuple[str, ...] = ()


def landing_sources(
    graph: dict, landing: Path, spark: SparkSession | None = None
) -> list[LandingSource]:
    """Every landing source holding subjects, with what erasure does to its events.

    With a session, each folder is where dbt registered the source's table (its
    catalog location: a run with --vars landing_path put it there), else
    <landing>/<identifier>."""
    found = []
    for source in graph.get("sources", {}).values():
        meta = source.get("meta") or {}
        privacy = meta.get("privacy") or {}
        if privacy.get("subject_key") and privacy.get("on_erasure") in ("delete", "anonymize"):
            found.append(
                LandingSource(
                    f"{source['source_name']}.{source['name']}",
                    privacy["subject_key"],
                    (spark and registered_folder(spark, source["schema"], source["identifier"]))
                    or landing / source["identifier"],
                    tuple(privacy.get("pii_columns") or ())
                    if privacy["on_erasure"] == "anonymize"
                    else None,
                    str(meta.get("landing_format") or "parquet"),
                    tuple(source.get("columns") or ()),
                )
            )
    return found


def purge_landing_file(
    path: Path, key: str, subjects: list[str], anonymize: tuple[str, ...] | None = None
) -> int:
    """Rewrite one Parquet file without the subjects' events, or with them anonymized
    (key and the given PII columns null) when `anonymize` is not None; returns the
    events removed or anonymized. Atomic and idempotent."""
    table = pq.read_table(path)
    hit = pc.fill_null(
        pc.is_in(table.column(key), value_set=pa.array(subjects, pa.string())), False
    )
    changed = pc.sum(hit).as_py() or 0
    if not changed:
        return 0
    if anonymize is None:
        rewritten = table.filter(pc.invert(hit))
    else:
        rewritten = table
        for column in (key, *anonymize):
            index = rewritten.schema.get_field_index(column)
            blank = pa.nulls(len(rewritten), rewritten.schema.field(index).type)
            rewritten = rewritten.set_column(
                index,
                rewritten.schema.field(index),
                pc.if_else(hit, blank, rewritten.column(index)),
            )
    temporary = path.with_name(f".{path.name}.purge-tmp")  # hidden: Spark never reads it
    pq.write_table(rewritten, temporary, compression="snappy")
    os.replace(temporary, path)
    return changed


def _rewrite_lines(
    path: Path, keep: Callable[[bytes], bytes | None], changed: Callable[[], int]
) -> int:
    """Rewrite a text file line by line: each line as `keep` returns it (None: dropped).
    Atomic; untouched when nothing changed."""
    lines = path.read_bytes().splitlines(keepends=True)
    rewritten = [line for line in (keep(line) for line in lines) if line is not None]
    count = changed()
    if count:
        temporary = path.with_name(f".{path.name}.purge-tmp")
        with open_private(temporary) as handle:
            handle.write(b"".join(rewritten))
        os.replace(temporary, path)
    return count


def _purge_json_file(
    path: Path, key: str, subjects: set[str], anonymize: tuple[str, ...] | None
) -> int:
    """JSON lines (Spark's json source and writer): a line whose key is a subject's is
    dropped, or written again with the key and the PII columns null."""
    hits = []

    def keep(line: bytes) -> bytes | None:
        try:
            event = json.loads(line)
        except ValueError:
            return line  # not an event Spark reads; the check after the purge decides
        if not isinstance(event, dict) or event.get(key) not in subjects:
            return line
        hits.append(1)
        if anonymize is None:
            return None
        event.update({column: None for column in (key, *anonymize)})
        return json.dumps(event).encode() + (b"\n" if line.endswith(b"\n") else b"")

    return _rewrite_lines(path, keep, lambda: len(hits))


def _purge_csv_file(
    path: Path,
    key: str,
    subjects: set[str],
    anonymize: tuple[str, ...] | None,
    columns: tuple[str, ...],
) -> int:
    """CSV as the landing table reads it (no header, one record a line, the declared
    column order, Spark's backslash escape): a record whose key is a subject's is dropped,
    or written again with the key and the PII fields empty (Spark reads them as null)."""
    if key not in columns:
        raise ProjectError(f"{path}: the CSV source declares no column {key}")
    position = columns.index(key)
    blank = [columns.index(c) for c in (key, *(anonymize or ())) if c in columns]
    hits = []

    def keep(line: bytes) -> bytes | None:
        text = line.decode("utf-8", "replace")
        [fields] = list(csv.reader([text.rstrip("\r\n")], escapechar="\\")) or [[]]
        if len(fields) <= position or fields[position] not in subjects:
            return line
        hits.append(1)
        if anonymize is None:
            return None
        for index in blank:
            if index < len(fields):
                fields[index] = ""
        out = io.StringIO()
        csv.writer(out, escapechar="\\", lineterminator="").writerow(fields)
        return out.getvalue().encode() + line[len(line.rstrip(b"\r\n")) :]

    return _rewrite_lines(path, keep, lambda: len(hits))


def purge_landing(
    graph: dict, landing: Path, subjects: list[str], spark: SparkSession | None = None
) -> list[LandingResult]:
    """Rewrite every file anywhere under each landing source's folder (subfolders, a
    crashed rectify's hidden staging folder) without the subjects' events, by the file's
    format: Parquet (by its magic number, whatever the source's format), else the
    source's JSON lines or CSV. A file that is neither is left for the check after the
    purge (python_jobs.landing_residue), which decodes every file on its own."""
    results = []
    wanted = set(subjects)
    for source in landing_sources(graph, landing, spark):
        files = events = 0
        for stale in source.folder.rglob(".*.purge-tmp"):  # a crashed rewrite's leftover
            stale.unlink()
        for path in sorted(source.folder.rglob("*")):
            if not path.is_file() or path.name.endswith(".crc"):  # checksums: no data
                continue
            with path.open("rb") as handle:
                magic = handle.read(4)
            if magic == b"PAR1":
                try:
                    changed = purge_landing_file(path, source.key, subjects, source.anonymize)
                except (pa.ArrowException, KeyError):
                    continue  # unreadable, or without the key: the check decides
            elif source.format == "json":
                changed = _purge_json_file(path, source.key, wanted, source.anonymize)
            elif source.format == "csv":
                changed = _purge_csv_file(
                    path, source.key, wanted, source.anonymize, source.columns
                )
            else:
                continue
            files, events = files + (changed > 0), events + changed
        results.append(LandingResult(source.name, files, events, source.anonymize is not None))
    return results


def _purge_outside_delta(spark: SparkSession, subjects: list[str]) -> bool:
    """Rewrite the landing zone without (or anonymizing) the subjects' events, verify
    that a second pass finds none left, redact dbt's output. False when the landing
    zone could not be rewritten and verified here."""
    if not subjects:
        return True
    clean = True
    graph = manifest()
    try:
        results = purge_landing(graph, landing_dir(), subjects, spark)
        folders = [landing_dir(), *(s.folder for s in landing_sources(graph, landing_dir(), spark))]
    except ProjectError as error:  # a landing folder that is not on this machine
        print(f"  landing zone: {error}; its files were not rewritten")
        results, folders, clean = [], [], False
    for result in results:
        done = "anonymizing" if result.anonymized else "without"
        print(
            f"  landing {result.source:24} rewrote {result.files} file(s) {done} "
            f"{result.events} event(s) of erased subjects"
        )
    # the check is not the rewrite's: every file under the landing zone, decoded on its own
    # (a folder that is not here holds nothing to rewrite: named, not a finding)
    for folder in [f for f in folders if not f.is_dir()]:
        print(f"  landing zone: {folder} is not here; nothing in it to rewrite or check")
    for finding in landing_residue([f for f in folders if f.is_dir()], subjects):
        print(f"  landing zone: ALERT {finding}")
        clean = False
    count = redact_tool_output(list(dbt_output_dirs().values()), subjects)
    print(f"  dbt logs/ and target/: erased subjects' ids redacted in {count} file(s)")
    return clean


def redact_tool_output(folders: list[Path], subjects: list[str]) -> int:
    """Replace the subjects' ids in dbt's text output (logs, run results); returns the
    files rewritten. An id is matched whole (P0000006 never hits P00000061)."""
    pattern = re.compile(
        rb"(?<![A-Za-z0-9_-])(?:"
        + b"|".join(re.escape(s.encode()) for s in sorted(subjects, key=len, reverse=True))
        + rb")(?![A-Za-z0-9_-])"
    )
    rewritten = 0
    for folder in folders:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            text = path.suffix in (".log", ".json", ".sql", ".txt", ".csv") or path.name.startswith(
                "dbt.log"
            )
            if not path.is_file() or not text:  # dbt.log.1 ...: dbt's rotated logs
                continue
            data = path.read_bytes()
            redacted = pattern.sub(b"[erased]", data)
            if redacted != data:
                temporary = path.with_name(f".{path.name}.purge-tmp")
                with open_private(temporary) as handle:  # no wider than the file it replaces
                    handle.write(redacted)
                os.replace(temporary, path)
                rewritten += 1
    return rewritten


def record(
    spark: SparkSession,
    relations: list[DeltaRelation],
    results: list[PurgeResult],
    ran_at: datetime,
) -> int:
    """Settle evidence and requests; returns how many requests became purged."""
    evidence = table_ref(spark, _control(relations, "privacy_erasure_evidence"))
    requests = table_ref(spark, _control(relations, "privacy_erasure_requests"))
    if not results:
        return 0
    at = ran_at.strftime("%Y-%m-%d %H:%M:%S.%f")
    rows = ", ".join(
        f"('{result.relation.replace('`', '')}', {result.retain_hours * 3600:.0f})"
        for result in results
    )
    spark.sql(
        f"""
        merge into {evidence} as evidence
        using (select * from values {rows} as purged (relation, retain_seconds)) as purged
        on evidence.relation = purged.relation and evidence.status in ('erased', 'purged')
        when matched then update set
            reorg_at = coalesce(evidence.reorg_at, case when evidence.erased_at <= timestamp'{at}' then timestamp'{at}' end),
            purged_at = coalesce(evidence.purged_at,
                case when timestampadd(second, purged.retain_seconds, greatest(evidence.erased_at, coalesce(evidence.reorg_at, timestamp'{at}')))
                          <= timestamp'{at}' then timestamp'{at}' end),
            status = case when coalesce(evidence.purged_at,
                case when timestampadd(second, purged.retain_seconds, greatest(evidence.erased_at, coalesce(evidence.reorg_at, timestamp'{at}')))
                          <= timestamp'{at}' then timestamp'{at}' end) is not null then 'purged' else evidence.status end
        """
    ).collect()
    before = spark.sql(f"select count(*) from {requests} where status = 'purged'").first()[0]
    spark.sql(
        f"""
        merge into {requests} as requests
        using (
            select request_id, max(purged_at) as purged_at
            from {evidence}
            where status != 'absent'
            group by request_id
            having count_if(purged_at is null) = 0
        ) as done
        on requests.request_id = done.request_id and requests.status = 'erased'
        when matched then update set status = 'purged', purged_at = done.purged_at, updated_at = current_timestamp()
        """
    ).collect()
    return spark.sql(f"select count(*) from {requests} where status = 'purged'").first()[0] - before


def record_retention_days(configured: object = None) -> int:
    """Var erasure_record_retention_days (dbt_project.yml): whole days, 1 to 36500."""
    return whole_days_var(
        "erasure_record_retention_days",
        RECORD_RETENTION_DAYS,
        36500,
        "how long a purged request keeps its subject id",
        configured,
    )


# What a request (and a released legal hold of its subject) keeps that names a person:
# the subject, the free text given with it (a letter's summary, a case name) and who
# recorded it. Kept as proof for var erasure_record_retention_days after the purge.
REDACTED_REQUEST_COLUMNS = (
    "subject_id",
    "reason",
    "requested_by",
    "status_reason",
    "extension_reason",
)
REDACTED_HOLD_COLUMNS = ("subject_id", "reason", "placed_by", "released_by")


def expire_records(
    spark: SparkSession, relations: list[DeltaRelation], days: int, ran_at: datetime
) -> int:
    """Redact requests purged more than `days` before `ran_at`: their subject id, reason,
    requester and status or extension reason become null, and so do the released legal
    holds of their subjects (id, reason, who placed and released them; an active hold
    is the law's and stays). Returns how many requests. Idempotent and resumable: the
    holds go first, found through the requests' ids, then the requests; a request with
    nothing left to redact is not counted again."""
    requests = table_ref(spark, _control(relations, "privacy_erasure_requests"))
    holds = table_ref(spark, _control(relations, "privacy_legal_holds"))
    at = ran_at.strftime("%Y-%m-%d %H:%M:%S.%f")
    present = {c.lower() for c in spark.table(requests).columns}
    columns = [c for c in REDACTED_REQUEST_COLUMNS if c in present]
    due = (
        f"status = 'purged' and purged_at < timestamp'{at}' - make_interval(0, 0, 0, {int(days)}) "
        f"and ({' or '.join(f'{c} is not null' for c in columns)})"
    )
    count = spark.sql(f"select count(*) from {requests} where {due}").first()[0]
    if count:
        # Delta's UPDATE takes no subquery: a MERGE with the due subjects as its source
        spark.sql(
            f"merge into {holds} as holds using (select distinct subject_id from {requests} "
            f"where {due} and subject_id is not null) as due "
            "on holds.subject_id = due.subject_id and holds.released_at is not null "
            "when matched then update set "
            f"{', '.join(f'holds.{c} = null' for c in REDACTED_HOLD_COLUMNS)}"
        ).collect()
        spark.sql(
            f"update {requests} set {', '.join(f'{c} = null' for c in columns)}, "
            f"updated_at = current_timestamp() where {due}"
        ).collect()
    return count


def relations_of_request(
    spark: SparkSession, relations: list[DeltaRelation], request_id: str
) -> list[DeltaRelation]:
    evidence = table_ref(spark, _control(relations, "privacy_erasure_evidence"))
    touched = {
        row[0]
        for row in spark.sql(
            f"select relation from {evidence} where request_id = '{request_id}' and status != 'absent'"
        ).collect()
    }
    if not touched:
        raise ProjectError(
            f"request {request_id} has no erasure evidence: is it erased yet (dbt run-operation gdpr_erase)?"
        )
    return [
        relation for relation in relations if relation.qualified_name.replace("`", "") in touched
    ]


def _whole_hours(text: str) -> int:
    """--retain-hours: whole hours, 0 to 87600, as the macro vacuum_relation takes them."""
    if not re.fullmatch(r"[0-9]{1,5}", text.strip()) or int(text) > 87600:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of hours from 0 to 87600; got {text[:20]!r}"
        )
    return int(text)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.purge"), description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--request-id",
        help="purge only the relations this erasure request touched, and the control tables (they held its pseudonym)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would run and change nothing"
    )
    parser.add_argument(
        "--retain-hours",
        type=_whole_hours,
        help="VACUUM retention in whole hours, 0 to 87600 (default: each table's "
        "delta.deletedFileRetentionDuration)",
    )
    parser.add_argument(
        "--allow-short-retention",
        action="store_true",
        help=f"opt in to a retention below Delta's {SAFETY_HOURS} h safety check (no reader/writer may be running)",
    )
    args = parser.parse_args(argv)
    if args.request_id is not None and not request_id_pattern("erasure").match(args.request_id):
        parser.error(
            f"--request-id {args.request_id[:60]!r} is not a request id (req-<UTC time>-<10 hex>)"
        )
    if (
        args.retain_hours is not None
        and args.retain_hours < SAFETY_HOURS
        and not args.allow_short_retention
    ):
        parser.error(
            f"--retain-hours {args.retain_hours} is below Delta's {SAFETY_HOURS} h safety check; "
            "add --allow-short-retention if no reader or writer can be running"
        )
    return args


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    args = parse_args(argv)
    retention_days = record_retention_days()  # a bad var stops the job before any write
    export_days = export_retention_days()
    from python_jobs.spark import get_spark

    spark = spark or get_spark("gdpr_lakehouse.purge")
    relations = delta_relations()
    # savepoints' copies hold subjects' data like the relations they copy
    targets = pii_relations(relations + kept_savepoints(spark, relations))
    if args.request_id:
        # the relations it erased from, and the control tables: they held its pseudonym
        touched = relations_of_request(spark, targets, args.request_id)
        targets = [
            relation
            for relation in targets
            if relation in touched or relation.privacy.get("role") == "control"
        ]
    if args.dry_run:
        print(f"Dry run: would REORG ... APPLY (PURGE) then VACUUM {len(targets)} relation(s):")
        for relation in targets:
            ref = table_ref(spark, relation)
            hours = (
                args.retain_hours
                if args.retain_hours is not None
                else table_retention_hours(spark, ref)
            )
            print(f"  {relation.qualified_name.replace('`', ''):32} retain {hours:g} h")
        subjects = erased_subjects(spark, relations, args.request_id)
        print(
            f"and rewrite the landing zone ({landing_dir()}) without the events of "
            f"{len(subjects)} erased subject(s), and redact their ids in dbt's logs/ and target/."
        )
        print(
            f"Requests purged more than {retention_days} day(s) ago would lose their subject id, "
            "reason and requester, and their subjects' released legal holds likewise "
            "(var erasure_record_retention_days). Subject access exports older than "
            f"{export_days} day(s), or of an erased subject, would be deleted."
        )
        return 0
    ran_at = datetime.now(UTC).replace(tzinfo=None)
    spark.conf.set(
        "spark.databricks.delta.commitInfo.userMetadata",
        commit_tag("python_jobs.purge", "purge", request_id=args.request_id),
    )
    results = []
    try:
        expired = expire_records(spark, relations, retention_days, ran_at)
        print(
            f"  request log: {expired} request(s) purged more than {retention_days} day(s) ago "
            "lost their subject id, reason and requester (var erasure_record_retention_days)"
        )
        access = expire_access_records(spark, relations, retention_days, ran_at)
        print(
            f"  access requests and restrictions: {access} answered or lifted more than "
            f"{retention_days} day(s) ago lost their subject id and free text"
        )
        exports = expire_exports(spark, relations, ran_at, export_days)
        print(
            f"  exports: deleted {exports} subject access export(s) older than {export_days} "
            "day(s) or of a subject since erased (var access_export_retention_days)"
        )
        refs = {relation.name: table_ref(spark, relation) for relation in targets}
        # every REORG first: on a cluster they run in one local application
        reorged = reorg_purge_all(spark, list(refs.values()))
        for relation in targets:
            result = purge_relation(
                spark, relation, args.retain_hours, reorged[refs[relation.name]]
            )
            results.append(result)
            print(
                f"  {result.relation.replace('`', ''):32} retain {result.retain_hours:g} h  "
                f"REORG rewrote {result.reorg_files} file(s), VACUUM deleted {result.vacuumed_files}  "
                f"({result.seconds:.1f} s)",
                flush=True,
            )
        # the landing zone and dbt's output first: a request is purged only once its
        # events are gone from every landing source (checked by a second pass)
        landing_clean = _purge_outside_delta(
            spark, erased_subjects(spark, relations, args.request_id)
        )
        purged = record(spark, relations, results, ran_at) if landing_clean else 0
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    print(f"Purged {len(results)} relation(s); {purged} request(s) now purged.")
    if not landing_clean:
        print(
            "  requests stay `erased`: the landing zone could not be shown clean (see above); "
            "fix or remove the file named, then run the purge again"
        )
        return 1
    return 0


if __name__ == "__main__":
    run_job(main, "purge")
