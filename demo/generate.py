"""Deterministic synthetic change events for the landing zone: a CDC feed, no real person.

    python -m demo.generate                         # default sample, batch 1
    python -m demo.generate --patients 1000000      # scale
    python -m demo.generate --batch 2               # the next day's changes

Writes one Parquet file per entity and batch, ``<landing>/<entity>/batch-NNNN.parquet``,
each row an event with ``_op`` (insert | update | delete) and ``_source_ts`` (UTC), as a
hospital EHR and a web shop would emit them. Batch 1 is the initial load (with some
same-day updates and deletes); batch k > 1 updates ~10% of patients and users, deletes
~1%, adds ~5% new ones, and appends new encounters, clicks and orders.
``--late-fraction F`` dates a share F of a batch's updates 1 to 3 days back, as a
source system that delivers late does (bronze applies each only where it is newer
than the key's state: python -m tests.simulation.oracle says what to expect).
``--malformed-fraction F`` breaks a share F of the events (no key, no source time or an
unknown _op, in turn), ``--files N`` splits each entity's batch over N files. Batches
landed out of order (``--batch 3`` before ``--batch 2``), a replay (copy a file under a
new name) and a backfill (a low ``--batch`` number landed last) need no option.

The same (seed, batch, sizes) always writes the same bytes of data, so a rerun is a
no-op for the lakehouse. Names, e-mails (example.* domains), phone numbers (drama
ranges) and national ids (an invented format) are synthetic by construction. A fixed
1-2% of rows carry a deliberate quality defect (bad e-mail, missing timestamp, unknown
patient, negative amount) for silver's quarantine.
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from python_jobs.project import landing_dir, open_private, private_folder, prog

EPOCH = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)

FIRST = [
    "Ada",
    "Bram",
    "Chloe",
    "Dario",
    "Elin",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kaia",
    "Luca",
    "Mira",
    "Nils",
    "Olga",
    "Pavel",
    "Rosa",
    "Sami",
    "Tove",
    "Ugo",
]
LAST = [
    "Abbot",
    "Brandt",
    "Castell",
    "Dorsey",
    "Engel",
    "Falk",
    "Gruber",
    "Holm",
    "Ivers",
    "Jansen",
    "Keller",
    "Lind",
    "Moreau",
    "Novak",
    "Ortiz",
    "Pirelli",
    "Quist",
    "Rask",
]
STREETS = ["Elm Row", "Quay Lane", "Mill Road", "Harbour Way", "Chapel Walk", "Orchard Close"]
CITIES = ["Northbridge", "Eastmoor", "Southfield", "Westhaven", "Lakeside", "Hillcrest"]
INSURERS = ["Aurora Health", "BlueRiver Mutual", "Civic Care", "Public Scheme"]
DEPARTMENTS = ["CARD", "ONCO", "ORTH", "NEUR", "PAED", "EMER", "GSUR", "OBGY", "PSYC", "RADI"]
ICD10 = [
    "I21.9",
    "I10",
    "C34.9",
    "C50.9",
    "S72.0",
    "M17.1",
    "G40.9",
    "G43.9",
    "J18.9",
    "J45.9",
    "E11.9",
    "K35.8",
    "O80",
    "F32.9",
    "R07.4",
    "N39.0",
    "A09",
    "Z00.0",
]
URLS = ["/", "/search", "/product/{n}", "/cart", "/checkout", "/account", "/help"]
DEVICES = ["desktop", "mobile", "tablet"]
THEMES = ["light", "dark"]
LANGS = ["en", "de", "fr", "sv", "it"]

TS = pa.timestamp("us", tz="UTC")
EVENT = [("_op", pa.string()), ("_source_ts", TS)]
SCHEMAS = {
    "patients": pa.schema(
        [
            ("patient_id", pa.string()),
            ("full_name", pa.string()),
            ("email", pa.string()),
            ("phone", pa.string()),
            ("national_id", pa.string()),
            ("birth_date", pa.date32()),
            ("address", pa.string()),
            ("city", pa.string()),
            ("insurer", pa.string()),
            *EVENT,
        ]
    ),
    "encounters": pa.schema(
        [
            ("encounter_id", pa.string()),
            ("patient_id", pa.string()),
            ("admitted_at", TS),
            ("diagnosis_code", pa.string()),
            ("department_id", pa.string()),
            ("cost", pa.float64()),
            *EVENT,
        ]
    ),
    "users": pa.schema(
        [
            ("user_id", pa.string()),
            ("username", pa.string()),
            ("email", pa.string()),
            ("registered_on", pa.date32()),
            ("preferences", pa.map_(pa.string(), pa.string())),
            *EVENT,
        ]
    ),
    "clicks": pa.schema(
        [
            ("click_id", pa.string()),
            ("user_id", pa.string()),
            ("url", pa.string()),
            ("clicked_at", TS),
            ("device", pa.string()),
            ("ip_address", pa.string()),
            *EVENT,
        ]
    ),
    "orders": pa.schema(
        [
            ("order_id", pa.string()),
            ("user_id", pa.string()),
            ("amount", pa.float64()),
            ("ordered_at", TS),
            *EVENT,
        ]
    ),
}


def _patient(rng: random.Random, n: int, defect: bool) -> dict:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    email = f"{first}.{last}.{n}@example.org".lower()
    return {
        "patient_id": f"P{n:07d}",
        "full_name": f"{first} {last}",
        "email": email.replace("@", " at ") if defect else email,
        "phone": f"+44 7700 9{rng.randrange(100000):05d}",
        "national_id": f"ZZ{n:07d}{rng.choice('ABCDEFGH')}",
        "birth_date": date(1930, 1, 1) + timedelta(days=rng.randrange(33000)),
        "address": f"{rng.randrange(1, 200)} {rng.choice(STREETS)}",
        "city": rng.choice(CITIES),
        "insurer": rng.choice(INSURERS),
    }


def _user(rng: random.Random, n: int, defect: bool) -> dict:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    email = f"{first[0]}{last}{n}@example.com".lower()
    return {
        "user_id": f"U{n:07d}",
        "username": f"{first.lower()}_{n}",
        "email": email.replace("@", "") if defect else email,
        "registered_on": date(2024, 1, 1) + timedelta(days=rng.randrange(700)),
        "preferences": [("theme", rng.choice(THEMES)), ("lang", rng.choice(LANGS))],
    }


def _ip(rng: random.Random) -> str:
    # Documentation ranges (RFC 5737): never a real host.
    return f"{rng.choice(['192.0.2', '198.51.100', '203.0.113'])}.{rng.randrange(1, 255)}"


class Batch:
    """The events of one batch, entity by entity, in a deterministic order."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(f"{args.seed}:{args.batch}")
        self.day = EPOCH + timedelta(days=args.batch - 1)
        self.events: dict[str, list[dict]] = {name: [] for name in SCHEMAS}

    def ts(self, hours: float = 20.0) -> datetime:
        return self.day + timedelta(seconds=self.rng.randrange(int(hours * 3600)))

    def emit(self, entity: str, op: str, row: dict, ts: datetime | None) -> None:
        self.events[entity].append({**row, "_op": op, "_source_ts": ts})

    def subjects(self, total: int) -> tuple[range, list[int], list[int]]:
        """(new subject numbers, numbers to update, numbers to delete) for this batch."""
        batch = self.args.batch
        grown = total + (batch - 1) * max(1, total // 20)
        first_new = 1 if batch == 1 else total + (batch - 2) * max(1, total // 20) + 1
        existing = range(1, first_new)
        new = range(first_new, grown + 1)
        pool = existing if batch > 1 else new
        k_update = len(pool) // 10
        k_delete = max(1, len(pool) // 100) if len(pool) >= 50 else 0
        chosen = self.rng.sample(pool, min(len(pool), k_update + k_delete)) if pool else []
        return new, chosen[:k_update], chosen[k_update:]

    def people(self, entity: str, total: int, make) -> list[int]:
        new, updated, deleted = self.subjects(total)
        for n in new:
            self.emit(entity, "insert", make(self.rng, n, n % 50 == 17), self.ts(8))
        for n in updated:
            row = make(random.Random(f"{self.args.seed}:{entity}:{n}"), n, False)
            if entity == "patients":
                row.update(
                    address=f"{self.rng.randrange(1, 200)} {self.rng.choice(STREETS)}",
                    city=self.rng.choice(CITIES),
                    insurer=self.rng.choice(INSURERS),
                )
            else:
                row.update(
                    preferences=[
                        ("theme", self.rng.choice(THEMES)),
                        ("lang", self.rng.choice(LANGS)),
                    ]
                )
            when = self.ts(8) + timedelta(hours=10)
            if self.args.late_fraction and self.rng.random() < self.args.late_fraction:
                # a late event: it happened 1 to 3 days before this batch
                when -= timedelta(days=self.rng.randint(1, 3))
            self.emit(entity, "update", row, when)
        key = "patient_id" if entity == "patients" else "user_id"
        prefix = "P" if entity == "patients" else "U"
        for n in deleted:
            tombstone = dict.fromkeys(SCHEMAS[entity].names[:-2])
            tombstone[key] = f"{prefix}{n:07d}"
            self.emit(entity, "delete", tombstone, self.ts(8) + timedelta(hours=11))
        gone = set(deleted)
        return [n for n in [*new, *updated] if n not in gone]

    def build(self) -> None:
        a = self.args
        patients = self.people("patients", a.patients, _patient)
        users = self.people("users", a.users, _user)
        for i, n in enumerate(p for p in patients for _ in range(a.encounters_per_patient)):
            defect = self.rng.random()
            self.emit(
                "encounters",
                "insert",
                {
                    "encounter_id": f"E{a.batch:03d}{i:09d}",
                    "patient_id": "P9999999" if defect < 0.01 else f"P{n:07d}",
                    "admitted_at": None if defect > 0.99 else self.ts(),
                    "diagnosis_code": self.rng.choice(ICD10),
                    "department_id": self.rng.choice(DEPARTMENTS),
                    "cost": round(self.rng.uniform(80, 12000), 2),
                },
                self.ts(23),
            )
        for i, n in enumerate(u for u in users for _ in range(a.clicks_per_user)):
            url = self.rng.choice(URLS).format(n=self.rng.randrange(1, 500))
            clicked = self.ts()
            self.emit(
                "clicks",
                "insert",
                {
                    "click_id": f"C{a.batch:03d}{i:010d}",
                    "user_id": f"U{n:07d}",
                    "url": url,
                    "clicked_at": None if i % 100 == 13 else clicked,
                    "device": self.rng.choice(DEVICES),
                    "ip_address": _ip(self.rng),
                },
                clicked,
            )
        for i, n in enumerate(u for u in users for _ in range(a.orders_per_user)):
            amount = round(self.rng.uniform(5, 400), 2)
            ordered = self.ts()
            self.emit(
                "orders",
                "insert",
                {
                    "order_id": f"O{a.batch:03d}{i:09d}",
                    "user_id": f"U{n:07d}",
                    "amount": -amount if i % 100 == 55 else amount,
                    "ordered_at": ordered,
                },
                ordered,
            )

    def malform(self) -> None:
        """--malformed-fraction: a share of the events loses its key, its source time
        or its operation (in turn); bronze must list each in bronze.rejected_events."""
        fraction = self.args.malformed_fraction
        if not fraction:
            return
        rng = random.Random(f"{self.args.seed}:{self.args.batch}:malformed")
        for rows in self.events.values():
            for i, row in enumerate(rows):
                if rng.random() < fraction:
                    broken = dict(row)
                    fault = i % 3
                    if fault == 0:
                        broken[next(iter(row))] = None  # the record key
                    elif fault == 1:
                        broken["_source_ts"] = None
                    else:
                        broken["_op"] = "upsert"
                    rows[i] = broken

    def write(self, landing: Path) -> dict[str, int]:
        self.malform()
        counts = {}
        parts = self.args.files
        for entity, rows in self.events.items():
            # the source records hold names, e-mails and phone numbers in clear: the
            # landing zone's folders and files are their owner's only
            folder = private_folder(landing / entity)
            size = -(-len(rows) // parts) if rows else 0
            for part in range(parts):
                chunk = rows[part * size : (part + 1) * size] if size else []
                if parts > 1 and not chunk:
                    continue
                table = pa.Table.from_pylist(chunk, schema=SCHEMAS[entity])
                suffix = f"-{part + 1:02d}" if parts > 1 else ""
                target = folder / f"batch-{self.args.batch:04d}{suffix}.parquet"
                partial = folder / f".{target.name}.tmp"
                with open_private(partial) as out:
                    pq.write_table(table, out, compression="snappy")
                partial.replace(target)  # atomic: a reader never sees half a batch
            counts[entity] = len(rows)
        return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m demo.generate"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--patients", type=int, default=200, help="patients (default 200)")
    parser.add_argument("--users", type=int, help="web-shop users (default: patients / 2)")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    parser.add_argument("--batch", type=int, default=1, help="batch number, 1 = initial load")
    parser.add_argument("--encounters-per-patient", type=int, default=3)
    parser.add_argument("--clicks-per-user", type=int, default=8)
    parser.add_argument("--orders-per-user", type=int, default=2)
    parser.add_argument(
        "--late-fraction",
        type=float,
        default=0.0,
        help="share of this batch's updates that arrive late: their source time is 1 to 3 "
        "days before the batch (default 0)",
    )
    parser.add_argument(
        "--malformed-fraction",
        type=float,
        default=0.0,
        help="share of this batch's events written without key, without source time or "
        "with an unknown _op, in turn: bronze lists them in bronze.rejected_events (default 0)",
    )
    parser.add_argument(
        "--files",
        type=int,
        default=1,
        help="write each entity's batch as this many files, batch-NNNN-KK.parquet, in event "
        "order: the events of one second may be split over two files (default 1)",
    )
    parser.add_argument("--landing", type=Path, help="landing folder (default <state>/landing)")
    args = parser.parse_args(argv)
    for name in ("late_fraction", "malformed_fraction"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            parser.error(
                f"--{name.replace('_', '-')} must be between 0 and 1, got {getattr(args, name)}"
            )
    if not 1 <= args.files <= 100:
        parser.error(f"--files must be between 1 and 100, got {args.files}")
    if args.users is None:
        args.users = max(1, args.patients // 2)
    for name in ("patients", "users", "batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a whole number >= 1, got {getattr(args, name)}")
    for name in ("encounters_per_patient", "clicks_per_user", "orders_per_user"):
        if not 0 <= getattr(args, name) <= 1000:
            parser.error(f"--{name.replace('_', '-')} must be between 0 and 1000")
    landing = args.landing or landing_dir()
    batch = Batch(args)
    batch.build()
    counts = batch.write(landing)
    print(
        f"landing {landing} batch {args.batch}: "
        + ", ".join(f"{entity} {n}" for entity, n in counts.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
