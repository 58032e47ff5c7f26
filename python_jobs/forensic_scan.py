"""Forensic residue scan: is an erased subject really gone from every physical file?

    # before erasure: capture what to look for (keep the file safe, it is personal data)
    python -m python_jobs.forensic_scan --subject-id P0000123 --capture-witness w.json
    # after erasure, after purge
    python -m python_jobs.forensic_scan --witness w.json
    python -m python_jobs.forensic_scan --request-id req-... --witness w.json --json
    python -m python_jobs.forensic_scan --subject-id P0000123 --value "Ada Abbot"

What it looks for (the needles): the subject's id; its pseudonym; its data key (as
stored in the vault: raw, hex, base64); the ids the source systems gave its records
(an encounter, click or order id: each landing source's meta.privacy record_key),
which the source links to the person; its personal data values (the PII and
special-category columns the landing sources declare, captured into the witness file
before erasure, or given with --value). Ciphertext: every binary cell of a row that names the subject is tried
against the witness key (AES-GCM, as Spark's aes_encrypt); it is readable only while
that key still exists somewhere.

Where: every file under every declared Delta relation's folder (live and removed data
files, deletion-vector files, ``_change_data/``, ``_delta_log/`` JSON with its
statistics and operation parameters, checkpoints), so the vault, the audit log,
snapshots and quarantine too; the rest of the warehouse (tables nobody declared);
the landing zone, and every landing table's folder outside it, where builds read it
(the landing ledger) and where the catalog holds it now (asked in a Spark session: the
warm engine's when it is up); streaming checkpoints; reports; subject access exports; and dbt's
target/ and logs/.
Parquet is decoded with pyarrow column by column (values, map keys and values, nested
fields); everything else is searched as bytes and as text.

Each residue says where (area, relation, file, file kind), what (which needle, which
column or log action, how many rows), and a verdict:
    readable     plaintext, an identifier, the key, or ciphertext whose key still exists
    unlinkable   the pseudonym, in a Delta relation, once nothing maps it back to the
                 person: the key is gone, no Delta relation holds the subject id or a
                 source record id of theirs where it could be read, and the tombstone
                 key is stored wrapped (key_envelope: with it plain, a reader of
                 privacy.system_keys can hash an id and find the tombstone that names
                 the pseudonym's hash); never without the witness's key or with the
                 declared relations left out of --areas: the scan cannot tell
    unreadable   ciphertext whose key is gone (crypto-shredded)
    retained     the subject id kept on purpose by a privacy control table (the record
                 of the request); its pseudonym there is readable (it links the id to
                 the subject's history)
and, for rows of live data files, whether a query can still reach them (a deletion
vector may mark a row deleted in a file the table still references).

Exit status 1 when any readable residue remains, 0 otherwise, 2 for bad input. Right
after gdpr_erase and before the purge, the landing zone and dbt's target/ and logs/
still hold the subject id (the summary counts them apart): python -m python_jobs.purge
removes them.
Read-only: files are opened for reading and nothing else; no Spark, so it runs
beside dbt and the jobs.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from python_jobs.delta_files import DeltaLogError, Snapshot, read_snapshot
from python_jobs.project import (
    ProjectError,
    dbt_output_dirs,
    landing_dir,
    manifest,
    open_private,
    prog,
    project_vars,
    run_job,
    spark_parameters,
    state_dir,
)
from python_jobs.relations import (
    DeltaRelation,
    delta_relations,
    local_path,
    registered_copies,
    registered_folder,
    savepoint_schema,
)
from python_jobs.request_states import is_subject_id, request_id_pattern, subject_id_pattern
from python_jobs.spark import get_spark

VERDICTS = ("readable", "unlinkable", "unreadable", "retained")
# areas that hold Delta tables: what gdpr_erase answers for before any purge
DELTA_AREAS = ("relations", "warehouse")
AREAS = ("relations", "warehouse", "landing", "checkpoints", "reports", "exports", "dbt")
MIN_VALUE_LENGTH = 4
WITNESS_VERSION = 1
_CHUNK = 8 << 20


class ScanError(ProjectError):
    """Bad input to the scan, stated for a user."""


@dataclass(frozen=True)
class Needle:
    """One thing to look for. ``label`` names it; the value itself is never printed."""

    kind: str  # subject_id | pseudonym | record_id | key | pii | event_time
    label: str
    value: bytes

    def forms(self) -> list[bytes]:
        """The byte strings a text or binary file may hold it as."""
        if self.kind == "key":
            forms = [self.value, self.value.hex().encode(), self.value.hex().upper().encode()]
            return [*forms, base64.b64encode(self.value)]
        if self.kind == "event_time":
            return event_time_forms(self.value.decode())
        forms = [self.value]
        escaped = json.dumps(self.value.decode("utf-8"))[1:-1].encode()
        return forms + ([escaped] if escaped != self.value else [])


@dataclass
class Witness:
    subject_id: str
    subject_type: str | None = None
    pseudonym: str | None = None
    key: bytes | None = None
    values: list[dict[str, str]] = field(default_factory=list)
    # the ids the source systems gave the subject's records: {column, value}
    records: list[dict[str, str]] = field(default_factory=list)
    # the exact times of the subject's events (EVENT_TIME_FORMAT, UTC): {column, value}
    times: list[dict[str, str]] = field(default_factory=list)

    def needles(self) -> list[Needle]:
        needles = [Needle("subject_id", "subject id", self.subject_id.encode())]
        if self.pseudonym:
            needles.append(Needle("pseudonym", "pseudonym", self.pseudonym.encode()))
        for item in self.records:
            needles.append(Needle("record_id", item["column"], item["value"].encode()))
        if self.key:
            needles.append(Needle("key", "data key", self.key))
        for item in self.values:
            needles.append(Needle("pii", item["column"], item["value"].encode()))
        for item in self.times:
            needles.append(Needle("event_time", item["column"], item["value"].encode()))
        return needles


# an event time as Parquet's timestamps read as text (pyarrow: microseconds, UTC)
EVENT_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def event_time_forms(value: str) -> list[bytes]:
    """Where an exact time shows: a timestamp cell read as text, a value written as
    text, and the Delta log's statistics (ISO 8601 to the millisecond: the minimum
    truncated, the maximum rounded up)."""
    moment = datetime.strptime(value, EVENT_TIME_FORMAT)
    floor = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    ceiling = floor + timedelta(milliseconds=1) if floor != moment else floor
    forms = [value, moment.isoformat(sep="T")]
    forms += [f"{at:%Y-%m-%dT%H:%M:%S}.{at.microsecond // 1000:03d}" for at in (floor, ceiling)]
    return [form.encode() for form in dict.fromkeys(forms)]


def event_time(value: Any) -> str | None:
    """A landing event time as the witness keeps it, or None: none, or one on a whole
    hour, which is what a generalized column (clicked_hour, admitted_month) may hold
    for everyone and so proves nothing."""
    if not isinstance(value, datetime):
        return None
    moment = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    if (moment.minute, moment.second, moment.microsecond) == (0, 0, 0):
        return None
    return moment.strftime(EVENT_TIME_FORMAT)


@dataclass
class Residue:
    area: str
    location: str  # the relation, or the folder the area is
    file: str  # relative to the location
    file_kind: str
    needle: str  # the needle's label
    needle_kind: str
    where: str  # column, log action, or "bytes"
    rows: int  # rows (Parquet) or occurrences (other files)
    reachable: bool  # a query on the current version returns it
    verdict: str  # readable | unlinkable | unreadable | retained


@dataclass
class Area:
    name: str
    root: Path
    location: str
    relation: DeltaRelation | None = None


# -- what to look for ---------------------------------------------------------------


def warehouse_dir() -> Path:
    return Path(spark_parameters()["spark.sql.warehouse.dir"].removeprefix("file:"))


def live_rows(location: Path, columns: list[str] | None = None) -> pa.Table | None:
    """The rows of a Delta table's current version, read from its files (no Spark)."""
    snapshot = read_snapshot(location)
    if snapshot is None:
        return None
    parts = []
    for path in sorted(snapshot.files):
        table = pq.read_table(path, columns=columns)
        deleted = snapshot.deleted_rows(path)
        if deleted:
            keep = [index not in deleted for index in range(table.num_rows)]
            table = table.filter(pa.array(keep))
        parts.append(table)
    return pa.concat_tables(parts, promote_options="permissive") if parts else None


def savepoint_copies(relations: list[DeltaRelation], warehouse: Path) -> list[DeltaRelation]:
    """The copies of the savepoints not released (privacy.savepoints, read from its
    files), scanned as declared relations with the privacy of what they copy. A copy
    not made yet (a savepoint being created) has nothing to scan; a kept one that is not
    in the savepoint schema's folder stops the scan (ScanError)."""
    registry = next((r for r in relations if r.name == "privacy_savepoints"), None)
    table = live_rows(registry.path(warehouse)) if registry is not None else None
    folder = warehouse / f"{savepoint_schema()}.db"
    held = sorted(path.name.lower() for path in folder.glob("*") if (path / "_delta_log").is_dir())
    rows = (
        None
        if table is None
        else [row for row in table.to_pylist() if row.get("status") in ("creating", "kept")]
    )
    copies = registered_copies(relations, held, rows)
    kept = {
        str(row.get("savepoint_relation") or "").lower()
        for row in rows or []
        if row.get("status") == "kept"
    }
    unseen = [
        copy
        for copy in copies
        if f"{copy.schema}.{copy.identifier}".lower() in kept
        and not (copy.path(warehouse) / "_delta_log").is_dir()
    ]
    if unseen:  # a kept copy elsewhere holds its version's subjects: fail closed
        raise ScanError(
            f"the kept savepoint copy {unseen[0].schema}.{unseen[0].identifier} (and "
            f"{len(unseen) - 1} other(s)) is not at {unseen[0].path(warehouse)}, where the scan "
            "reads the savepoint schema: the catalog keeps it elsewhere (ALTER TABLE ... SET "
            "LOCATION, a schema with a LOCATION of its own), so the scan cannot see it and "
            "would prove nothing. Move it back, or release it "
            "(dbt run-operation release_savepoint); nothing was scanned"
        )
    # a copy being created (status creating) may not exist yet: nothing to scan
    return [copy for copy in copies if (copy.path(warehouse) / "_delta_log").is_dir()]


def _relation(relations: list[DeltaRelation], name: str) -> DeltaRelation:
    for relation in relations:
        if relation.name == name:
            return relation
    raise ScanError(f"the manifest has no {name}; run `dbt build` first")


def subject_of_request(request_id: str, relations: list[DeltaRelation], warehouse: Path) -> str:
    requests = _relation(relations, "privacy_erasure_requests")
    table = live_rows(requests.path(warehouse), ["request_id", "subject_id"])
    if table is not None:
        for row in table.to_pylist():
            if row["request_id"] == request_id and row["subject_id"] is None:
                raise ScanError(
                    f"request {request_id} no longer names its subject (the request log's "
                    "retention, var erasure_record_retention_days, has ended): scan with "
                    "--witness, which holds the subject id"
                )
            if row["request_id"] == request_id:
                return row["subject_id"]
    raise ScanError(f"no erasure request {request_id} in {requests.schema}.{requests.identifier}")


def capture_witness(
    subject_id: str, relations: list[DeltaRelation], warehouse: Path, landing: Path, graph: dict
) -> Witness:
    """The subject's pseudonym and stored key from the vault, and from the landing
    sources (the columns their meta.privacy declares) its PII and special-category
    values, its records' source ids and its events' exact times (event_times), before
    erasure."""
    vault = next((r for r in relations if r.privacy.get("role") == "vault"), None)
    if vault is None:
        raise ScanError("the manifest declares no vault (meta.privacy role: vault)")
    keys = live_rows(vault.path(warehouse))
    found = [] if keys is None else [r for r in keys.to_pylist() if r["subject_id"] == subject_id]
    if not found:
        raise ScanError(
            f"{subject_id} has no key in the vault ({vault.schema}.{vault.identifier}): "
            "capture the witness before erasure, of a subject the lakehouse holds"
        )
    witness = Witness(
        subject_id=subject_id,
        subject_type=found[0].get("subject_type"),
        pseudonym=found[0].get("subject_pseudonym"),
        key=bytes(found[0]["data_key"]),
    )
    seen: set[tuple[str, str]] = set()
    for source in graph.get("sources", {}).values():
        privacy = (source.get("meta") or {}).get("privacy") or {}
        key = privacy.get("subject_key")
        pii = [*(privacy.get("pii_columns") or []), *(privacy.get("special_category") or [])]
        record = privacy.get("record_key")
        times = list(privacy.get("event_times") or [])
        folder = landing / source["identifier"]
        if not key or not (pii or record or times) or not folder.is_dir():
            continue
        table = pq.read_table(
            folder, columns=list(dict.fromkeys([key, *pii, *times, *([record] if record else [])]))
        )
        mine = table.filter(pc.equal(table.column(key), subject_id))
        others = table.filter(pc.not_equal(table.column(key), subject_id))
        if record:
            ids = {_text(v) for v in mine.column(record).to_pylist() if v is not None}
            witness.records += [
                {"column": f"{source['name']}.{record}", "value": value}
                for value in sorted(ids - {None})
            ]
        for column in pii:
            taken = {_text(v) for v in others.column(column).to_pylist() if v is not None}
            for value in mine.column(column).to_pylist():
                text = _text(value)
                # a value another subject shares (a common birth date) proves nothing
                fresh = text and len(text) >= MIN_VALUE_LENGTH and text not in taken
                if fresh and (column, text) not in seen:
                    seen.add((column, text))
                    witness.values.append({"column": f"{source['name']}.{column}", "value": text})
        for column in times:
            taken = {event_time(v) for v in others.column(column).to_pylist()}
            for text in sorted({event_time(v) for v in mine.column(column).to_pylist()} - {None}):
                if text not in taken and (column, text) not in seen:
                    seen.add((column, text))
                    witness.times.append({"column": f"{source['name']}.{column}", "value": text})
    return witness


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def write_witness(witness: Witness, path: Path) -> None:
    data = {
        "version": WITNESS_VERSION,
        "captured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "subject_id": witness.subject_id,
        "subject_type": witness.subject_type,
        "pseudonym": witness.pseudonym,
        "key_hex": witness.key.hex() if witness.key else None,
        "values": witness.values,
        "records": witness.records,
        "times": witness.times,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    # personal data and a key: readable by its owner only
    with open_private(path, "w") as handle:
        json.dump(data, handle, indent=2)


def read_witness(path: Path) -> Witness:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ScanError(f"witness file {path} does not exist") from None
    except (OSError, ValueError) as error:
        raise ScanError(f"witness file {path} is not a witness JSON file: {error}") from None
    if not isinstance(data, dict) or data.get("version") != WITNESS_VERSION:
        raise ScanError(f"witness file {path} is not a version {WITNESS_VERSION} witness file")
    subject_id = data.get("subject_id")
    if not is_subject_id(subject_id):
        raise ScanError(f"witness file {path}: subject_id is missing or malformed")
    values = data.get("values") or []
    if not isinstance(values, list) or not all(
        isinstance(v, dict) and isinstance(v.get("value"), str) and isinstance(v.get("column"), str)
        for v in values
    ):
        raise ScanError(f"witness file {path}: values must be a list of {{column, value}}")
    # a witness captured before record ids were: none to look for
    records = data.get("records") or []
    if not isinstance(records, list) or not all(
        isinstance(r, dict) and isinstance(r.get("value"), str) and isinstance(r.get("column"), str)
        for r in records
    ):
        raise ScanError(f"witness file {path}: records must be a list of {{column, value}}")
    # a witness captured before event times were: none to look for
    times = data.get("times") or []
    if not isinstance(times, list) or not all(
        isinstance(t, dict) and isinstance(t.get("column"), str) and _is_event_time(t.get("value"))
        for t in times
    ):
        raise ScanError(
            f"witness file {path}: times must be a list of {{column, value}}, each value a "
            "time like 2026-01-05 14:32:17.123456"
        )
    try:
        key = bytes.fromhex(data["key_hex"]) if data.get("key_hex") else None
    except ValueError:
        raise ScanError(f"witness file {path}: key_hex is not hex") from None
    return Witness(
        subject_id, data.get("subject_type"), data.get("pseudonym"), key, values, records, times
    )


def looked_for(needles: list[Needle]) -> list[str]:
    """What a scan looked for, by label: the values grouped by kind, never shown."""
    grouped = {"pii": "PII values", "event_time": "event times"}
    return sorted({grouped.get(n.kind, n.label) for n in needles})


def _is_event_time(value: Any) -> bool:
    try:
        datetime.strptime(value, EVENT_TIME_FORMAT)
    except (TypeError, ValueError):
        return False
    return True


def data_key(stored: bytes | None, pseudonym: str | None) -> bytes | None:
    """The AES key to try ciphertext with: the vault's stored key, unwrapped with the
    key-encryption key from the environment when the envelope is on (bound to the
    subject's pseudonym, macro key_binding; or unbound, as a lakehouse made before
    bindings stored it)."""
    if stored is None or len(stored) == 32:
        return stored
    kek = os.environ.get(str(project_vars().get("kek_env_var", "LAKEHOUSE_KEK")), "")
    if len(stored) == 60 and re.fullmatch(r"[0-9a-fA-F]{64}", kek):
        for binding in (f"subject/{pseudonym}".encode(), b""):
            try:
                return _decrypt(bytes.fromhex(kek), stored, binding)
            except (ValueError, InvalidTag):  # not this key-encryption key or binding
                continue
    return None


def _decrypt(key: bytes, cipher: bytes, aad: bytes = b"") -> bytes:
    """Spark's aes_encrypt(..., 'GCM', 'DEFAULT', iv, aad): 12-byte IV, ciphertext,
    16-byte tag; aad the binding (macro encrypt_pii: owner '/' column)."""
    if len(cipher) < 28:
        raise ValueError("too short for AES-GCM")
    return AESGCM(key).decrypt(cipher[:12], cipher[12:], aad or None)


@dataclass(frozen=True)
class SubjectKey:
    """The subject's key and what its ciphertexts can be bound to: the pseudonym and a
    column (the file's own column, or any encrypted column a relation declares: a copy
    may rename it), or nothing (a value written before bindings)."""

    key: bytes
    pseudonym: str
    columns: tuple[str, ...]

    def opens(self, value: bytes, column: str) -> bool:
        leaf = column.rsplit(".", 1)[-1].lower()
        for name in dict.fromkeys((leaf, *self.columns)):
            try:
                _decrypt(self.key, value, f"{self.pseudonym}/{name}".encode())
                return True
            except (ValueError, InvalidTag):
                continue
        return _opens(self.key, value)


# -- where to look ------------------------------------------------------------------


def areas(
    relations: list[DeltaRelation],
    warehouse: Path,
    landing: Path,
    selected: tuple[str, ...],
    missing: list[str] | None = None,
    registered: list[tuple[Path, str]] = (),
) -> list[Area]:
    """The areas to scan; each selected one that is not there is added to `missing` as
    "<label> (<where it was looked for>: not there)": never scanned, never called scanned.
    registered: the landing tables' folders the catalog holds outside `landing`
    (landing_in_catalog)."""
    found: list[Area] = []
    if "relations" in selected:
        for relation in relations:
            found.append(
                Area(
                    "relations",
                    relation.path(warehouse),
                    f"{relation.schema}.{relation.identifier}",
                    relation,
                )
            )
    state = state_dir()
    dbt = dbt_output_dirs()
    places = {
        "warehouse": [(warehouse, "warehouse (undeclared)")],
        "landing": [(landing, "landing zone")]
        + (
            _outermost(
                [*landing_read_elsewhere(relations, warehouse, landing, missing), *registered]
            )
            if "landing" in selected
            else []
        ),
        "checkpoints": [(state / "checkpoints", "streaming checkpoints")],
        "reports": [(state / "reports", "reports")],
        "exports": [(state / "exports", "subject access exports")],
        "dbt": [(dbt["target"], "dbt target/"), (dbt["logs"], "dbt logs/")],
    }
    for name in AREAS[1:]:
        if name in selected:
            for root, label in places[name]:
                if root.exists():
                    found.append(Area(name, root, label))
                elif missing is not None:
                    missing.append(f"{label} ({root}: not there)")
    return found


def landing_read_elsewhere(
    relations: list[DeltaRelation],
    warehouse: Path,
    landing: Path,
    missing: list[str] | None = None,
) -> list[tuple[Path, str]]:
    """The folders outside `landing` that builds read landing files from, as the landing
    ledger (bronze_landing_ledger) records each file it read: a landing table the
    catalog registered elsewhere (`--vars landing_path`, ALTER TABLE ... SET LOCATION).
    Each folder holding such a file, less those inside another (never a common parent
    of two far-apart folders, which could be the root). A location not on this
    machine's file system is added to `missing`, never called scanned."""
    ledger = next((r for r in relations if r.name == "bronze_landing_ledger"), None)
    table = live_rows(ledger.path(warehouse), ["entity", "file_path"]) if ledger else None
    if table is None:
        return []
    folders: dict[Path, str] = {}
    remote: dict[str, str] = {}
    for row in table.to_pylist():
        entity, uri = str(row["entity"]), row["file_path"]
        if not uri:
            continue
        try:
            path = local_path(str(uri), f"landing table {entity}")
        except ProjectError:
            remote.setdefault(entity, str(uri))
            continue
        if landing != path and landing not in path.parents:
            folders.setdefault(path.parent, entity)
    if missing is not None:
        missing += [
            f"landing table {entity} ({uri[:200]}: not on this machine)"
            for entity, uri in sorted(remote.items())
        ]
    return [
        (folder, f"landing table {entity} ({folder})")
        for folder, entity in sorted(folders.items())
        if not any(other in folder.parents for other in folders)
    ]


def landing_in_catalog(
    graph: dict, spark: Any, landing: Path, missing: list[str] | None = None
) -> list[tuple[Path, str]]:
    """Where the catalog holds each landing table (every source with meta
    landing_format) outside `landing`, asked now: a table moved since the last build
    (ALTER TABLE ... SET LOCATION) holds files no build has read, which the ledger does
    not know. A location not on this machine is added to `missing`."""
    found = []
    for source in graph.get("sources", {}).values():
        if not (source.get("meta") or {}).get("landing_format"):
            continue
        name = f"landing table {source['identifier']}"
        try:
            folder = registered_folder(spark, source["schema"], source["identifier"])
        except ProjectError as error:
            if missing is not None:
                missing.append(f"{name} ({str(error)[:200]}: not on this machine)")
            continue
        if folder is not None and folder != landing and landing not in folder.parents:
            found.append((folder, f"{name} ({folder})"))
    return found


def _outermost(folders: list[tuple[Path, str]]) -> list[tuple[Path, str]]:
    """Each folder once, less those inside another of the list."""
    unique = dict(folders)
    return [
        (folder, label)
        for folder, label in sorted(unique.items())
        if not any(other in folder.parents for other in unique)
    ]


def files_of(area: Area, claimed: set[Path]) -> Iterator[Path]:
    """Every file under the area's folder; the warehouse area skips declared relations."""
    if not area.root.exists():
        return
    for folder, dirs, names in os.walk(area.root):
        path = Path(folder)
        if area.name == "warehouse":
            dirs[:] = [d for d in dirs if (path / d) not in claimed]
        for name in names:
            yield path / name


def _table_root(path: Path, top: Path) -> Path | None:
    """The nearest folder above the file (up to top) that is a Delta table."""
    for folder in path.parents:
        if (folder / "_delta_log").is_dir():
            return folder
        if folder == top or top not in folder.parents:
            return None
    return None


def file_kind(path: Path, root: Path, snapshot: Snapshot | None) -> str:
    parts = path.relative_to(root).parts
    name = path.name
    if "_delta_log" in parts:
        if name.endswith(".json"):
            return "log"
        if ".checkpoint" in name or "_sidecars" in parts:
            return "checkpoint"
        return "log metadata"
    if "_change_data" in parts:
        return "change data"
    if name.startswith("deletion_vector_") and name.endswith(".bin"):
        return "deletion vector"
    if name.endswith(".parquet"):
        if snapshot is None:
            return "parquet"
        return "data (live)" if path in snapshot.files else "data (removed)"
    return "file"


# -- looking ------------------------------------------------------------------------


def _leaves(array: pa.Array, name: str, rows: pa.Array) -> Iterator[tuple[str, pa.Array, pa.Array]]:
    """(column path, leaf values, row index of each value) through structs, lists, maps."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    kind = array.type
    if pa.types.is_struct(kind):
        for index in range(kind.num_fields):
            child = array.field(index)
            yield from _leaves(child, f"{name}.{kind.field(index).name}", rows)
    elif pa.types.is_map(kind):
        parents, start, end = _children(array, rows)
        yield from _leaves(array.keys.slice(start, end - start), f"{name}.key", parents)
        yield from _leaves(array.items.slice(start, end - start), f"{name}.value", parents)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        parents, start, end = _children(array, rows)
        yield from _leaves(array.values.slice(start, end - start), f"{name}[]", parents)
    else:
        yield name, array, rows


def _children(array: pa.Array, rows: pa.Array) -> tuple[pa.Array, int, int]:
    """The row of each child value of a list or map array, and the children's range."""
    offsets = array.offsets.to_numpy()
    parents = np.repeat(rows.to_numpy(), np.diff(offsets))
    return pa.array(parents, pa.int64()), int(offsets[0]), int(offsets[-1])


def _matches(values: pa.Array, needle: Needle) -> pa.Array | None:
    """Positions of values holding the needle (a boolean mask), or None."""
    kind = values.type
    if needle.kind == "key":
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
            return pc.equal(values, pa.scalar(needle.value, kind))
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            hexes = [form.decode() for form in needle.forms()[1:]]
            return pc.is_in(pc.utf8_lower(values), pa.array([h.lower() for h in hexes]))
        return None
    text = needle.value.decode()
    if needle.kind == "event_time" and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        masks = [pc.match_substring(values, form.decode()) for form in needle.forms()]
        return functools.reduce(pc.or_, masks)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
        return pc.match_substring(values, text)
    if pa.types.is_large_binary(kind):
        return pc.match_substring(values, text)
    if pa.types.is_date(kind) or pa.types.is_timestamp(kind):
        return pc.match_substring(pc.cast(values, pa.string()), text)
    return None


@dataclass
class _Found:
    where: str
    needle: Needle
    rows: set[int]


def scan_parquet(
    path: Path, needles: list[Needle], key: SubjectKey | None
) -> tuple[list[_Found], list[_Found]]:
    """(residues, ciphertexts): decoded column by column; rows naming the subject have
    their binary cells tried against the key."""
    found: dict[tuple[str, Needle], set[int]] = {}
    cipher: dict[str, set[int]] = {}
    identities = [n for n in needles if n.kind in ("subject_id", "pseudonym", "record_id")]
    parquet = pq.ParquetFile(path)
    offset = 0
    for batch in parquet.iter_batches(batch_size=65_536):
        rows = pa.array(range(offset, offset + batch.num_rows), pa.int64())
        subject_rows: set[int] = set()
        binaries: list[tuple[str, pa.Array, pa.Array]] = []
        for index, name in enumerate(batch.schema.names):
            for column, values, positions in _leaves(batch.column(index), name, rows):
                for needle in needles:
                    mask = _matches(values, needle)
                    if mask is None:
                        continue
                    hits = pc.filter(positions, pc.fill_null(mask, False)).to_pylist()
                    if hits:
                        found.setdefault((column, needle), set()).update(hits)
                        if needle in identities:
                            subject_rows.update(hits)
                if pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
                    binaries.append((column, values, positions))
        if key and subject_rows:
            for column, values, positions in binaries:
                for value, row in zip(values.to_pylist(), positions.to_pylist(), strict=True):
                    if (
                        row in subject_rows
                        and value is not None
                        and key.opens(bytes(value), column)
                    ):
                        cipher.setdefault(column, set()).add(row)
        offset += batch.num_rows
    residues = [_Found(column, needle, rows) for (column, needle), rows in found.items()]
    if not cipher:
        return residues, []
    columns = ", ".join(sorted(cipher))
    return residues, [_Found(columns, _CIPHER, set().union(*cipher.values()))]


_CIPHER = Needle("ciphertext", "ciphertext (subject key)", b"")


def _opens(key: bytes, value: bytes) -> bool:
    try:
        _decrypt(key, bytes(value))
    except (ValueError, InvalidTag):  # not ciphertext under this key
        return False
    return True


def scan_bytes(path: Path, needles: list[Needle]) -> list[_Found]:
    """Occurrences in any file, read in chunks (overlapping by the longest needle)."""
    forms = [(needle, form) for needle in needles for form in needle.forms() if form]
    if not forms:
        return []
    overlap = max(len(form) for _, form in forms) - 1
    counts: dict[Needle, int] = {}
    tail = b""
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            data = tail + chunk
            for needle, form in forms:
                # count only matches that end in the new chunk (none is counted twice)
                start = 0
                while (at := data.find(form, start)) >= 0:
                    if at + len(form) > len(tail):
                        counts[needle] = counts.get(needle, 0) + 1
                    start = at + 1
            tail = data[-overlap:] if overlap else b""
    return [_Found("bytes", needle, set(range(count))) for needle, count in counts.items()]


def scan_log(path: Path, needles: list[Needle]) -> list[_Found]:
    """A Delta commit: which action holds the needle (commitInfo's operation
    parameters, an add's statistics, metaData ...)."""
    counts: dict[tuple[str, Needle], int] = {}
    with path.open("rb") as handle:
        for line in handle:
            for needle in needles:
                if any(form in line for form in needle.forms()):
                    try:
                        action = next(iter(json.loads(line)))
                    except (ValueError, StopIteration):
                        action = "line"
                    where = {
                        "add": "add (statistics)",
                        "commitInfo": "commitInfo (operation parameters)",
                    }
                    label = where.get(action, action)
                    counts[(label, needle)] = counts.get((label, needle), 0) + 1
    return [_Found(where, needle, set(range(count))) for (where, needle), count in counts.items()]


def scan(
    witness: Witness,
    relations: list[DeltaRelation],
    warehouse: Path,
    landing: Path,
    selected: tuple[str, ...] = AREAS,
    skip: frozenset[Path] = frozenset(),
    registered: list[tuple[Path, str]] | None = None,
) -> tuple[list[Residue], dict[str, Any]]:
    """registered: the landing tables' folders the catalog holds (landing_in_catalog),
    or None where no Spark session asked it: the scan then knows the folders builds
    read (the ledger) and says the catalog was not asked (stats catalog_asked)."""
    needles = witness.needles()
    opened = data_key(witness.key, witness.pseudonym)
    encrypted = {str(c).lower() for r in relations for c in (r.privacy.get("pii_columns") or [])}
    key = (
        SubjectKey(opened, str(witness.pseudonym), tuple(sorted(encrypted)))
        if opened is not None
        else None
    )
    started = time.perf_counter()
    stats: dict[str, Any] = {
        "files": 0,
        "bytes": 0,
        "relations": 0,
        "areas": [],
        "area_names": [],
        "not_scanned": [],
    }
    pending: list[tuple[Area, Path, str, _Found, bool]] = []
    stats["catalog_asked"] = registered is not None
    places = areas(relations, warehouse, landing, selected, stats["not_scanned"], registered or [])
    absent = [
        f"{place.location} ({place.root})"
        for place in places
        if place.relation is not None and not (place.root / "_delta_log").is_dir()
    ]
    if absent:  # no files there proves nothing: refuse rather than report clean
        raise ScanError(
            f"{len(absent)} declared relation(s) have no Delta table where the manifest puts "
            f"them: {', '.join(absent[:5])}{' ...' if len(absent) > 5 else ''}. Build them "
            "(dbt build), or parse with the vars they were built with (the same lake_root)"
        )
    claimed = {place.root for place in places if place.relation is not None}
    claimed |= {relation.path(warehouse) for relation in relations}
    snapshots: dict[Path, Snapshot | None] = {}
    for place in places:
        if place.relation is not None:
            stats["relations"] += 1
        elif place.location not in stats["areas"]:
            stats["areas"].append(place.location)
            if place.name not in stats["area_names"]:
                stats["area_names"].append(place.name)
        for path in files_of(place, claimed):
            if path.resolve() in skip:  # the witness file itself, wherever it was kept
                continue
            stats["files"] += 1
            stats["bytes"] += path.stat().st_size
            # the Delta table the file belongs to: the relation, or one nobody declared
            table = place.root if place.relation is not None else _table_root(path, place.root)
            if table is not None and table not in snapshots:
                try:
                    snapshots[table] = read_snapshot(table)
                except DeltaLogError as error:
                    raise ScanError(f"{place.location}: {table}: {error}") from None
            snapshot = snapshots.get(table) if table is not None else None
            kind = file_kind(path, table or place.root, snapshot)
            ciphers: list[_Found] = []
            if path.name.endswith(".parquet"):
                try:
                    hits, ciphers = scan_parquet(path, needles, key)
                except (pa.ArrowException, OSError):
                    hits = scan_bytes(path, needles)  # not readable as Parquet: bytes
            elif kind == "log":
                hits = scan_log(path, needles)
            else:
                hits = scan_bytes(path, needles)
            deleted = snapshot.deleted_rows(path) if kind == "data (live)" and snapshot else None
            for hit in hits + ciphers:
                reachable_rows = {r for r in hit.rows if not deleted or r not in deleted}
                if kind == "data (live)" and not reachable_rows:
                    pending.append((place, path, "data (row deleted by DV)", hit, False))
                else:
                    pending.append((place, path, kind, hit, kind == "data (live)"))
    key_found = any(hit.needle.kind == "key" for _, _, _, hit, _ in pending)
    # what could map the pseudonym back to the person, from the tables alone
    links = [
        f"{place.location}: {hit.needle.label}"
        for place, _, _, hit, _ in pending
        if place.name in DELTA_AREAS
        and hit.needle.kind in ("subject_id", "record_id", "event_time")
        and _verdict(place, hit.needle, key_found) == "readable"
    ]
    if key_found:
        links.append("the subject's key")
    # what the scan did not see cannot prove anything gone (fail closed)
    if witness.key is None:
        links.append("no witness key: whether the subject's key still exists is unknown")
    if "relations" not in selected:
        links.append("the declared relations were not scanned (--areas)")
    if tombstone_key_plain(relations, warehouse):
        links.append("the tombstone key, stored plain in privacy.system_keys (key_envelope off)")
    stats["pseudonym_linked_by"] = sorted(set(links))
    residues = []
    for place, path, kind, hit, reachable in pending:
        residues.append(
            Residue(
                area=place.name,
                location=place.location,
                file=str(path.relative_to(place.root)),
                file_kind=kind,
                needle=hit.needle.label,
                needle_kind=hit.needle.kind,
                where=hit.where,
                rows=len(hit.rows),
                reachable=reachable,
                verdict=_verdict(place, hit.needle, key_found, linked=bool(links)),
            )
        )
    stats["seconds"] = round(time.perf_counter() - started, 2)
    stats["key_gone"] = bool(witness.key) and not key_found
    return residues, stats


def _verdict(place: Area, needle: Needle, key_found: bool, linked: bool = True) -> str:
    if needle.kind == "ciphertext":
        return "readable" if key_found else "unreadable"
    privacy = place.relation.privacy if place.relation else {}
    # a control table keeps the subject id as the record of the request (accountability);
    # the pseudonym there would map that id to the subject's history: readable
    if needle.kind == "subject_id" and privacy.get("role") == "control":
        return "retained"
    # the pseudonym in a Delta table that does not name the subject by id, once nothing
    # left in the tables maps it back (scan: the key, an id, a record id, a plain
    # tombstone key): a random token
    names_by_id = privacy.get("subject_key") and privacy.get("subject_key_kind", "id") == "id"
    if needle.kind == "pseudonym" and place.name in DELTA_AREAS and not names_by_id and not linked:
        return "unlinkable"
    return "readable"


def tombstone_key_plain(relations: list[DeltaRelation], warehouse: Path) -> bool:
    """True unless privacy.system_keys (meta.privacy role: system) holds exactly one
    tombstone key, wrapped by the key-encryption key (60 bytes: IV, key, tag). Plain,
    anyone who reads the table can hash a source id and find its tombstone, which
    names the pseudonym's hash; missing or unreadable, nothing proves otherwise."""
    system = next((r for r in relations if r.privacy.get("role") == "system"), None)
    rows = live_rows(system.path(warehouse)) if system is not None else None
    if rows is None or "key_name" not in rows.column_names:
        return True
    keys = [r["key_value"] for r in rows.to_pylist() if r["key_name"] == "tombstone"]
    return len(keys) != 1 or keys[0] is None or len(keys[0]) != 60


# -- the command --------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.forensic_scan"),
        description="Look for an erased subject's data in every physical file (read-only).",
    )
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--subject-id", help="the subject's id (e.g. P0000123)")
    who.add_argument("--request-id", help="an erasure request; its subject is scanned for")
    parser.add_argument("--witness", type=Path, help="witness file captured before erasure")
    parser.add_argument(
        "--capture-witness",
        type=Path,
        metavar="FILE",
        help="write the subject's witness (pseudonym, key, PII values, record ids, event times) "
        "to FILE and stop",
    )
    parser.add_argument(
        "--value", action="append", default=[], help="a PII value to look for (repeatable)"
    )
    parser.add_argument(
        "--areas",
        default=",".join(AREAS),
        help=f"where to look, comma-separated (default all: {','.join(AREAS)})",
    )
    parser.add_argument("--landing-path", help="the landing zone (default: var landing_path)")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    return parser.parse_args(argv)


def _subject(args: argparse.Namespace, relations: list[DeltaRelation], warehouse: Path) -> str:
    if args.request_id is not None:
        if not request_id_pattern("erasure").match(args.request_id):
            raise ScanError(
                f"--request-id {args.request_id[:80]!r} is not a request id (req-<yyyymmddThhmmss>-<10 hex>)"
            )
        return subject_of_request(args.request_id, relations, warehouse)
    if args.subject_id is not None:
        if not is_subject_id(args.subject_id):
            raise ScanError(
                f"--subject-id {args.subject_id[:80]!r} is not a subject id (var subject_id_pattern: "
                f"{subject_id_pattern().pattern})"
            )
        return args.subject_id
    raise ScanError("say whose data to look for: --subject-id, --request-id or --witness")


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    """spark: the session to ask the catalog where the landing tables are (the warm
    engine's, or the process's own); without one, the job starts one."""
    args = parse_args(argv)
    selected = tuple(a.strip() for a in args.areas.split(",") if a.strip())
    unknown = [a for a in selected if a not in AREAS]
    if unknown or not selected:
        raise ScanError(f"--areas {args.areas[:80]!r}: choose from {', '.join(AREAS)}")
    for value in args.value:
        if len(value) < MIN_VALUE_LENGTH or len(value) > 1000:
            raise ScanError(
                f"--value must be {MIN_VALUE_LENGTH} to 1000 characters (shorter values match anything)"
            )
    graph = manifest()
    warehouse = warehouse_dir()
    relations = delta_relations(graph)
    relations += savepoint_copies(relations, warehouse)
    landing = Path(args.landing_path) if args.landing_path else landing_dir()
    if args.capture_witness is not None:
        if args.witness is not None:
            raise ScanError("--capture-witness writes a witness; do not also give --witness")
        subject = _subject(args, relations, warehouse)
        witness = capture_witness(subject, relations, warehouse, landing, graph)
        write_witness(witness, args.capture_witness)
        print(
            f"forensic_scan: witness of {subject} ({witness.subject_type}) written to "
            f"{args.capture_witness} (mode 600): pseudonym, data key, {len(witness.records)} source "
            f"record id(s), {len(witness.values)} PII value(s), "
            f"{len(witness.times)} event time(s). "
            "It is personal data: keep it safe, delete it after the final scan."
        )
        return 0
    if args.witness is not None:
        witness = read_witness(args.witness)
        given = args.subject_id or (args.request_id and _subject(args, relations, warehouse))
        if given and given != witness.subject_id:
            raise ScanError(f"the witness file is of {witness.subject_id}, not {given}")
    else:
        witness = Witness(_subject(args, relations, warehouse))
    witness.values += [{"column": "--value", "value": value} for value in args.value]
    skip = frozenset({args.witness.resolve()} if args.witness else set())
    registered = None
    if "landing" in selected:
        remote: list[str] = []
        registered = landing_in_catalog(graph, spark or get_spark("forensic_scan"), landing, remote)
    residues, stats = scan(witness, relations, warehouse, landing, selected, skip, registered)
    if registered is not None:
        stats["not_scanned"] += [entry for entry in remote if entry not in stats["not_scanned"]]
    readable = [r for r in residues if r.verdict == "readable"]
    stats["readable_in_delta"] = sum(1 for r in readable if r.area in DELTA_AREAS)
    if args.json:
        print(
            json.dumps(
                {
                    "subject_id": witness.subject_id,
                    "needles": [{"kind": n.kind, "label": n.label} for n in witness.needles()],
                    "scanned": stats,
                    "residues": [asdict(r) for r in residues],
                    "readable": len(readable),
                    "clean": not readable,
                },
                indent=2,
            )
        )
    else:
        print_report(witness, residues, stats)
    return 1 if readable else 0


def print_report(witness: Witness, residues: list[Residue], stats: dict[str, Any]) -> None:
    needles = witness.needles()
    what = ", ".join(looked_for(needles))
    pii = sum(1 for n in needles if n.kind == "pii")
    times = sum(1 for n in needles if n.kind == "event_time")
    print(
        f"forensic_scan: {witness.subject_id}: looked for {what} ({pii} PII value(s), "
        f"{times} event time(s)) in "
        f"{stats['files']:,} files ({stats['bytes'] / 1e6:.1f} MB) of {stats['relations']} relations"
        f"{' and ' + ', '.join(stats['areas']) if stats['areas'] else ''} in {stats['seconds']} s"
    )
    for place in stats.get("not_scanned", []):
        print(f"  NOT scanned: {place}")
    if witness.key is None:
        print(
            "  no witness key: ciphertext cannot be recognised (capture a witness before erasure)"
        )
    else:
        print(
            f"  the subject's key: {'gone from every file' if stats['key_gone'] else 'STILL PRESENT'}"
        )
    if not residues:
        print("No residue: nothing of the subject is left in any file scanned.")
        return
    header = ("verdict", "reach", "location", "file kind", "file", "found", "in", "rows")
    lines = [
        (
            r.verdict,
            "query" if r.reachable else "-",
            r.location,
            r.file_kind,
            _short(r.file),
            r.needle,
            _short(r.where, 36),
            str(r.rows),
        )
        for r in sorted(
            residues,
            key=lambda r: (VERDICTS.index(r.verdict), r.area, r.location, r.file_kind, r.file),
        )
    ]
    widths = [max(len(str(line[i])) for line in [header, *lines]) for i in range(len(header))]
    for line in [header, *lines]:
        print(
            "  "
            + "  ".join(
                str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)
            ).rstrip()
        )
    counts: dict[str, int] = {}
    for r in residues:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    reachable = sum(1 for r in residues if r.reachable and r.verdict == "readable")
    in_delta = stats.get("readable_in_delta", 0)
    print(
        f"Summary: {counts.get('readable', 0)} readable ({reachable} reachable by a query; "
        f"{in_delta} in Delta tables and their logs, {counts.get('readable', 0) - in_delta} in "
        "the landing zone, dbt target/ and logs/ and the other areas: python -m python_jobs.purge "
        f"removes those), {counts.get('unlinkable', 0)} unlinkable (pseudonym, nothing maps it back), "
        f"{counts.get('unreadable', 0)} unreadable (ciphertext, key gone), "
        f"{counts.get('retained', 0)} retained by contract."
    )
    if counts.get("unlinkable", 0) == 0 and stats.get("pseudonym_linked_by"):
        print(f"  the pseudonym is linkable by: {'; '.join(stats['pseudonym_linked_by'])}")


def _short(name: str, width: int = 48) -> str:
    return (
        name if len(name) <= width else name[: width // 2 - 2] + "..." + name[-(width // 2 - 1) :]
    )


if __name__ == "__main__":
    run_job(lambda: main(sys.argv[1:]), "forensic_scan")
