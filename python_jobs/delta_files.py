"""Read a Delta table's files the way a forensic examiner must: without Spark.

The transaction log (``_delta_log``: JSON commits and Parquet checkpoints) says which
data files the current version references and which rows of each a deletion vector
marks deleted; everything else under the table folder is history (files removed by a
later commit, change data) that time travel can still read until VACUUM deletes it.

Only the Delta protocol's public formats are read (PROTOCOL.md: actions, checkpoints,
deletion vector descriptors, the RoaringBitmapArray format); nothing is written.
"""

from __future__ import annotations

import json
import re
import struct
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import pyarrow.parquet as pq
from pyroaring import BitMap64

DV_MAGIC = 1681511377
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_VALUE = {char: index for index, char in enumerate(_Z85)}
_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(\.\d+\.\d+|\.[0-9a-f-]{36})?\.parquet$")


class DeltaLogError(RuntimeError):
    """The table's log cannot be read as the Delta protocol describes it."""


@dataclass
class Snapshot:
    """The latest version of a table: its live data files and their deletion vectors."""

    location: Path
    version: int
    # absolute path of each live data file -> its deletion vector descriptor (or None)
    files: dict[Path, dict | None] = field(default_factory=dict)

    def deleted_rows(self, path: Path) -> BitMap64 | None:
        """Row indexes of a live file its deletion vector marks deleted (None: no DV)."""
        descriptor = self.files.get(path)
        if not descriptor:
            return None
        return read_deletion_vector(self.location, descriptor)


def z85_decode(text: str) -> bytes:
    """Delta's Base85 (the Z85 alphabet), 5 characters to 4 bytes, big-endian."""
    if len(text) % 5:
        raise DeltaLogError(f"a Base85 string of {len(text)} characters is not a multiple of 5")
    out = bytearray()
    for start in range(0, len(text), 5):
        value = 0
        for char in text[start : start + 5]:
            if char not in _Z85_VALUE:
                raise DeltaLogError(f"{char!r} is not a Base85 character")
            value = value * 85 + _Z85_VALUE[char]
        out += value.to_bytes(4, "big")
    return bytes(out)


def deletion_vector_path(location: Path, descriptor: dict) -> Path | None:
    """The file a deletion vector is stored in (None when it is inline in the log)."""
    kind, where = descriptor.get("storageType"), descriptor.get("pathOrInlineDv", "")
    if kind == "u":
        prefix, encoded = where[:-20], where[-20:]
        name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(encoded))}.bin"
        return location / prefix / name if prefix else location / name
    if kind == "p":
        return data_path(location, where)
    return None


def read_deletion_vector(location: Path, descriptor: dict) -> BitMap64:
    """The row indexes a deletion vector marks deleted."""
    size = int(descriptor["sizeInBytes"])
    if descriptor.get("storageType") == "i":
        data = z85_decode(descriptor["pathOrInlineDv"])[:size]
    else:
        path = deletion_vector_path(location, descriptor)
        with path.open("rb") as handle:
            handle.seek(int(descriptor.get("offset") or 1))
            (stored,) = struct.unpack(">i", handle.read(4))
            if stored != size:
                raise DeltaLogError(
                    f"{path}: deletion vector of {stored} bytes, the log says {size}"
                )
            data = handle.read(size)
    (magic,) = struct.unpack("<i", data[:4])
    if magic != DV_MAGIC:
        raise DeltaLogError(f"deletion vector with magic number {magic}, not {DV_MAGIC}")
    return BitMap64.deserialize(data[4:])


def data_path(location: Path, path: str) -> Path:
    """An add/remove action's path: URL-encoded, relative to the table or absolute."""
    parsed = urlparse(path)
    if parsed.scheme in ("file", "") and parsed.path.startswith("/"):
        return Path(unquote(parsed.path))
    if parsed.scheme not in ("", "file"):
        raise DeltaLogError(f"{path}: only local tables can be read")
    return location / unquote(path)


def commit_files(location: Path) -> dict[int, Path]:
    log = location / "_delta_log"
    found = {}
    for path in log.iterdir() if log.is_dir() else []:
        match = _COMMIT.match(path.name)
        if match:
            found[int(match.group(1))] = path
    return found


def read_snapshot(location: Path) -> Snapshot | None:
    """The latest version's live files: the newest checkpoint, then the commits after it.
    None when the folder is not a Delta table."""
    log = location / "_delta_log"
    if not log.is_dir():
        return None
    checkpoints: dict[int, list[Path]] = {}
    for path in log.iterdir():
        match = _CHECKPOINT.match(path.name)
        if match:
            checkpoints.setdefault(int(match.group(1)), []).append(path)
    commits = commit_files(location)
    live: dict[tuple[Path, str | None], dict | None] = {}
    version = start = -1
    if checkpoints:
        start = version = max(checkpoints)
        for part in checkpoints[start]:
            for action in _checkpoint_actions(location, part):
                _apply(live, location, action)
    for number in sorted(v for v in commits if v > start):
        if version >= 0 and number != version + 1:
            raise DeltaLogError(f"{log}: commit {version + 1} is missing")
        with commits[number].open() as handle:
            for line in handle:
                if line.strip():
                    _apply(live, location, json.loads(line))
        version = number
    if version < 0:
        return None
    return Snapshot(location, version, {path: dv for (path, _), dv in live.items()})


def _dv_id(descriptor: dict | None) -> str | None:
    """A deletion vector's identity: a file is (path, DV), so one commit may remove
    (path, none) and add (path, DV), in either order (PROTOCOL.md, reconciliation)."""
    if not descriptor:
        return None
    return f"{descriptor.get('storageType')}{descriptor.get('pathOrInlineDv')}@{descriptor.get('offset')}"


def _apply(live: dict[tuple[Path, str | None], dict | None], location: Path, action: dict) -> None:
    for kind in ("add", "remove"):
        if action.get(kind):
            entry = action[kind]
            key = (data_path(location, entry["path"]), _dv_id(entry.get("deletionVector")))
            if kind == "add":
                live[key] = entry.get("deletionVector")
            else:
                live.pop(key, None)


def _checkpoint_actions(location: Path, part: Path) -> list[dict]:
    """The add actions of a checkpoint part (and of its v2 sidecars)."""
    table = pq.read_table(part)
    actions = []
    names = table.column_names
    if "add" in names:
        actions += [{"add": add} for add in table.column("add").to_pylist() if add]
    if "sidecar" in names:
        for sidecar in table.column("sidecar").to_pylist():
            if sidecar:
                path = location / "_delta_log" / "_sidecars" / unquote(sidecar["path"])
                actions += _checkpoint_actions(location, path)
    return actions
