"""The state bronze must hold, computed from the landing files alone (pure Python).

    python -m python_jobs.cdc_oracle patients patient_id      # expected keys and ops

An independent statement of bronze's apply order (macros/landing/cdc/),
for tests and for rehearsing a landing zone before a build: per key, the newest valid
event wins, where newer means a later ``_source_ts``, then delete > update > insert,
then the later file name, then the later row of the file. A key whose newest event is
a delete is absent. Invalid events (no key, no time, an unknown ``_op``) are returned
with the rule they break, as ``bronze.rejected_events`` lists them. Reads every
Parquet file of the folder that Spark would read (names not starting with ``.`` or
``_``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq

from python_jobs.project import landing_dir, prog

OPS = {
    "insert": "insert",
    "c": "insert",
    "r": "insert",
    "update": "update",
    "u": "update",
    "delete": "delete",
    "d": "delete",
}
RANK = {"insert": 0, "update": 1, "delete": 2}
UNKNOWN_OP = "unknown _op (allowed: insert, update, delete; Debezium c, r, u, d)"


@dataclass(frozen=True)
class Event:
    key: str | None
    op: str | None
    ts: datetime | None
    file: str
    row: int
    values: dict = field(compare=False, repr=False)

    @property
    def issue(self) -> str | None:
        if self.key is None:
            return "missing key"
        if self.ts is None:
            return "missing source time"
        if self.op is None:
            return UNKNOWN_OP
        return None

    @property
    def sequence(self) -> tuple:
        return (self.ts, RANK[self.op], self.file, self.row)


def landing_files(folder: Path) -> list[Path]:
    """Every Parquet file anywhere under `folder`, but where a name on its way starts
    with . or _ (Spark's hidden files and folders)."""
    return sorted(
        path
        for path in folder.rglob("*.parquet")
        if path.is_file()
        and not any(part.startswith((".", "_")) for part in path.relative_to(folder).parts)
    )


def events(folder: Path, key: str) -> Iterator[Event]:
    for path in landing_files(folder):
        for row, values in enumerate(pq.read_table(path).to_pylist()):
            op = values.get("_op")
            yield Event(
                key=values.get(key),
                op=OPS.get(op.strip(" ").lower()) if isinstance(op, str) else None,
                ts=values.get("_source_ts"),
                # as bronze records it: the path under the source's folder
                file=path.relative_to(folder).as_posix(),
                row=row,
                values=values,
            )


def expected_state(folder: Path, key: str) -> dict[str, Event]:
    """Per key, the event bronze's row must come from (keys deleted last: absent)."""
    newest: dict[str, Event] = {}
    for event in events(folder, key):
        if event.issue is None:
            held = newest.get(event.key)
            if held is None or event.sequence > held.sequence:
                newest[event.key] = event
    return {k: e for k, e in newest.items() if e.op != "delete"}


def rejected(folder: Path, key: str) -> list[tuple[str, int, str]]:
    """(file, row, rule) of every event bronze cannot apply."""
    return [(e.file, e.row, e.issue) for e in events(folder, key) if e.issue is not None]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.cdc_oracle"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("entity", help="landing table, e.g. patients")
    parser.add_argument("key", help="its record key column, e.g. patient_id")
    parser.add_argument("--landing", type=Path, help="landing folder (default <state>/landing)")
    args = parser.parse_args(argv)
    folder = (args.landing or landing_dir()) / args.entity
    if not folder.is_dir():
        parser.error(f"no landing folder {folder}")
    state = expected_state(folder, args.key)
    ops: dict[str, int] = {}
    for event in state.values():
        ops[event.op] = ops.get(event.op, 0) + 1
    print(f"{folder}: {len(state)} key(s) expected in bronze, by last event: {ops}")
    for file, row, rule in rejected(folder, args.key):
        print(f"  rejected {file} row {row}: {rule}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
