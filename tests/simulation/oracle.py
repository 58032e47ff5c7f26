"""The state bronze must hold, computed from the landing files alone (pure Python).

    python -m tests.simulation.oracle patients patient_id      # expected keys and ops

An independent statement of bronze's apply order (macros/landing/cdc/),
for tests and for rehearsing a landing zone before a build: per key, the newest valid
event wins, where newer means a later ``_source_ts``, then delete > update > insert,
then the later file name, then the later row of the file. A key whose newest event is
a delete is absent. Invalid events (no key, no time, an unknown ``_op``) are returned
with the rule they break, as ``bronze.rejected_events`` lists them. Reads every
Parquet file of the folder that Spark would read (names not starting with ``.`` or
``_``).

It reads no code and no table of the project: the simulation (tests/simulation/) and
the ingestion suite hold the lakehouse to it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq

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
    return latest(events(folder, key))


def rejected(folder: Path, key: str) -> list[tuple[str, int, str]]:
    """(file, row, rule) of every event bronze cannot apply."""
    return [(e.file, e.row, e.issue) for e in events(folder, key) if e.issue is not None]


def latest(events_: Iterator[Event]) -> dict[str, Event]:
    """Per key, the newest valid event of `events_` (keys deleted last: absent)."""
    newest: dict[str, Event] = {}
    for event in events_:
        if event.issue is None:
            held = newest.get(event.key)
            if held is None or event.sequence > held.sequence:
                newest[event.key] = event
    return {k: e for k, e in newest.items() if e.op != "delete"}


@dataclass
class Landed:
    """A landing file as the simulation wrote it: its rows, or unreadable bytes."""

    rows: list[dict]
    readable: bool = True


@dataclass
class Lakehouse:
    """What the lakehouse must hold for the subjects of one simulated history, fed the
    same operations as the real one, from nothing but those operations.

    `bronze` and `silver` are the states a build leaves (silver: bronze's clean rows;
    the simulation's values are all clean), `versions` what silver held at each
    version a step recorded, so a restore knows what it brings back. An erased
    subject is out of every state for good, whatever lands later."""

    key: str = "patient_id"
    files: dict[str, Landed] = field(default_factory=dict)
    erased: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)  # under a legal hold
    waiting: set[str] = field(default_factory=set)  # asked to be erased, held meanwhile
    bronze: dict[str, Event] = field(default_factory=dict)
    silver: dict[str, Event] = field(default_factory=dict)
    built: bool = False

    def land(self, name: str, rows: list[dict], readable: bool = True) -> None:
        self.files[name] = Landed([dict(r) for r in rows], readable)

    def repair(self, name: str) -> None:
        self.files[name].readable = True

    def events(self) -> Iterator[Event]:
        for name in sorted(self.files):
            landed = self.files[name]
            if not landed.readable:
                continue
            for row, values in enumerate(landed.rows):
                op = values.get("_op")
                yield Event(
                    key=values.get(self.key),
                    op=OPS.get(op.strip(" ").lower()) if isinstance(op, str) else None,
                    ts=values.get("_source_ts"),
                    file=name,
                    row=row,
                    values=values,
                )

    def build(self) -> None:
        """Every readable file is read: per key the newest event, but the erased."""
        state = latest(e for e in self.events() if e.key not in self.erased)
        self.bronze = state
        self.silver = dict(state)
        self.built = True

    def erase(self, subject_id: str) -> None:
        """gdpr_erase after a request for `subject_id`: every open request is erased
        but those of subjects under a legal hold, which wait for its release."""
        self.waiting.add(subject_id)
        self.run_erasure()

    def run_erasure(self) -> None:
        """gdpr_erase: every open request of a subject not under a legal hold."""
        for subject in sorted(self.waiting - self.held):
            self.waiting.discard(subject)
            self.erased.add(subject)
            self.bronze.pop(subject, None)
            self.silver.pop(subject, None)

    def hold(self, subject_id: str) -> None:
        if subject_id not in self.erased:  # too late for an erased subject: nothing kept
            self.held.add(subject_id)

    def release(self, subject_id: str) -> None:
        self.held.discard(subject_id)

    def restore_bronze(self, state: dict[str, Event]) -> None:
        """bronze as it was at a recorded version, every erasure applied again (the
        next build reads the files applied since, and is back at the newest events)."""
        self.bronze = {k: e for k, e in state.items() if k not in self.erased}

    def restore_silver(self, state: dict[str, Event]) -> None:
        """silver as it was at a recorded version, every erasure applied again."""
        self.silver = {k: e for k, e in state.items() if k not in self.erased}

    def purge(self) -> None:
        """The landing zone loses every event of an erased subject (a file may be left
        with no row)."""
        for landed in self.files.values():
            if landed.readable:
                landed.rows = [r for r in landed.rows if r.get(self.key) not in self.erased]

    def rejected(self) -> list[tuple[str, str]]:
        """(file, rule) of every event a build must list as rejected, once each:
        invalid, in a readable file, of no erased subject."""
        return sorted(
            (e.file, e.issue)
            for e in self.events()
            if e.issue is not None and e.key not in self.erased
        )

    def unreadable(self) -> set[str]:
        return {name for name, landed in self.files.items() if not landed.readable}

    def subjects(self) -> set[str]:
        """Every subject id an event has named."""
        return {
            r[self.key] for landed in self.files.values() for r in landed.rows if r.get(self.key)
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.simulation.oracle",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("entity", help="landing table, e.g. patients")
    parser.add_argument("key", help="its record key column, e.g. patient_id")
    parser.add_argument("--landing", type=Path, help="landing folder (default <state>/landing)")
    args = parser.parse_args(argv)
    state = Path(os.environ.get("LAKEHOUSE_DIR", ".lakehouse"))
    folder = (args.landing or state / "landing") / args.entity
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
