"""The check after a landing purge: does any file under the landing zone still hold an
erased subject's id? Independent of the code that rewrote the files
(python_jobs.purge): it knows no source, format setting or folder layout, and reads
every file anywhere under the given folders, hidden ones and subfolders included, by
what the file is:

- Parquet (magic number ``PAR1``): every value of every column, nested ones too, and
  the raw bytes (an uncompressed page or a footer statistic);
- gzip: decompressed, then read again by what it holds;
- anything else: its bytes as text (JSON, CSV, a log line).

An id counts when it stands whole (P0000006 is not found in P00000061). A file that
cannot be decoded as what it claims to be (a damaged Parquet file) cannot be shown
clean, so it is a finding too: fail closed.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def _pattern(subjects: Iterable[str]) -> re.Pattern[bytes]:
    return re.compile(
        rb"(?<![A-Za-z0-9_-])(?:"
        + b"|".join(re.escape(s.encode()) for s in sorted(subjects, key=len, reverse=True))
        + rb")(?![A-Za-z0-9_-])"
    )


def _values(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _values(item)


def _decode(data: bytes, pattern: re.Pattern[bytes], depth: int = 0) -> str | None:
    """What in `data` holds an erased id ('' for nothing), or None when it cannot be
    decoded as what it claims to be."""
    if data[:2] == b"\x1f\x8b" and depth < 3:
        try:
            return _decode(gzip.decompress(data), pattern, depth + 1)
        except (OSError, EOFError):
            return None
    if data[:4] == b"PAR1":
        try:
            table = pq.read_table(pa.BufferReader(data))
        except (pa.ArrowException, OSError):
            return None
        for column in table.column_names:
            for value in _values(table.column(column).to_pylist()):
                if pattern.search(value.encode()):
                    return f"column {column}"
    return "bytes" if pattern.search(data) else ""


def landing_residue(folders: Iterable[Path], subjects: Iterable[str]) -> list[str]:
    """One line per file under `folders` that still holds an id of `subjects`, or that
    cannot be decoded (so cannot be shown clean), and per folder that is not there."""
    subjects = [s for s in subjects if s]
    if not subjects:
        return []
    pattern = _pattern(subjects)
    findings, seen = [], set()
    for folder in folders:
        if not folder.is_dir():
            findings.append(f"{folder}: not a folder here, so not checked")
            continue
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.resolve() in seen:
                continue
            seen.add(path.resolve())
            found = _decode(path.read_bytes(), pattern)
            if found is None:
                findings.append(f"{path}: cannot be decoded, so cannot be shown clean")
            elif found:
                findings.append(f"{path}: an erased subject's id is still there ({found})")
    return findings
