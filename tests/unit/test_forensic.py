"""The forensic scanner's readers, on hand-made files (no JVM): Delta's Base85, deletion
vector framing, log reconciliation, and the needle search in bytes and in Parquet."""

from __future__ import annotations

import gzip
import json
import struct
import uuid
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap64

from python_jobs import forensic_scan
from python_jobs.delta_files import (
    DV_MAGIC,
    DeltaLogError,
    deletion_vector_path,
    read_deletion_vector,
    read_snapshot,
    z85_decode,
)
from python_jobs.forensic_scan import Needle, SubjectKey, scan_bytes, scan_log, scan_parquet
from python_jobs.project import ProjectError
from python_jobs.relations import DeltaRelation

Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _z85_encode(data: bytes) -> str:
    out = []
    for start in range(0, len(data), 4):
        value = int.from_bytes(data[start : start + 4], "big")
        chars = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            chars.append(Z85[digit])
        out.append("".join(reversed(chars)))
    return "".join(out)


def test_z85_decodes_the_spec_vector_and_rejects_garbage() -> None:
    assert z85_decode("HelloWorld") == bytes.fromhex("864FD26FB559F75B")
    with pytest.raises(DeltaLogError, match="multiple of 5"):
        z85_decode("Hell")
    with pytest.raises(DeltaLogError, match="not a Base85 character"):
        z85_decode("Hell~")


def _dv_file(table: Path, rows: list[int]) -> dict:
    """A deletion vector file as Delta writes it, and its descriptor."""
    bitmap = struct.pack("<i", DV_MAGIC) + BitMap64(rows).serialize()
    name = uuid.uuid4()
    body = struct.pack(">i", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap))
    (table / f"deletion_vector_{name}.bin").write_bytes(b"\x01" + body)
    return {
        "storageType": "u",
        "pathOrInlineDv": _z85_encode(name.bytes),
        "offset": 1,
        "sizeInBytes": len(bitmap),
        "cardinality": len(rows),
    }


def test_deletion_vectors_on_disk_and_inline_are_read(tmp_path: Path) -> None:
    descriptor = _dv_file(tmp_path, [0, 5, 70_000])
    assert deletion_vector_path(tmp_path, descriptor).is_file()
    assert list(read_deletion_vector(tmp_path, descriptor)) == [0, 5, 70_000]
    inline = struct.pack("<i", DV_MAGIC) + BitMap64([3]).serialize()
    padded = inline + b"\x00" * (-len(inline) % 4)
    descriptor = {
        "storageType": "i",
        "pathOrInlineDv": _z85_encode(padded),
        "sizeInBytes": len(inline),
    }
    assert list(read_deletion_vector(tmp_path, descriptor)) == [3]


def _commit(table: Path, version: int, *actions: dict) -> None:
    log = table / "_delta_log"
    log.mkdir(exist_ok=True)
    (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in actions) + "\n")


def test_the_log_is_reconciled_by_path_and_deletion_vector(tmp_path: Path) -> None:
    dv = _dv_file(tmp_path, [1])
    _commit(tmp_path, 0, {"add": {"path": "a.parquet"}}, {"add": {"path": "b%20c.parquet"}})
    # one commit adds (a, DV) before removing (a, none): a stays live, with the DV
    _commit(
        tmp_path,
        1,
        {"add": {"path": "a.parquet", "deletionVector": dv}},
        {"remove": {"path": "a.parquet"}},
        {"remove": {"path": "b%20c.parquet"}},
    )
    snapshot = read_snapshot(tmp_path)
    assert snapshot.version == 1
    assert list(snapshot.files) == [tmp_path / "a.parquet"]
    assert list(snapshot.deleted_rows(tmp_path / "a.parquet")) == [1]
    assert read_snapshot(tmp_path / "nothing") is None
    (tmp_path / "_delta_log" / f"{1:020d}.json").rename(tmp_path / "_delta_log" / f"{2:020d}.json")
    with pytest.raises(DeltaLogError, match="commit 1 is missing"):
        read_snapshot(tmp_path)


def test_bytes_are_found_across_chunk_boundaries_and_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forensic_scan, "_CHUNK", 7)
    path = tmp_path / "dbt.log"
    path.write_bytes(b"xxxxxP0000006yyyyP0000006\nkey " + bytes(range(32)).hex().encode())
    needles = [
        Needle("subject_id", "subject id", b"P0000006"),
        Needle("key", "data key", bytes(range(32))),
    ]
    found = {hit.needle.label: len(hit.rows) for hit in scan_bytes(path, needles)}
    assert found == {"subject id": 2, "data key": 1}


def test_log_lines_say_which_action_holds_the_value(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000003.json"
    path.write_text(
        json.dumps({"commitInfo": {"operationParameters": {"predicate": "id = 'P0000006'"}}})
        + "\n"
        + json.dumps({"add": {"path": "x", "stats": '{"minValues":{"id":"P0000006"}}'}})
        + "\n"
    )
    found = {hit.where for hit in scan_log(path, [Needle("subject_id", "subject id", b"P0000006")])}
    assert found == {"commitInfo (operation parameters)", "add (statistics)"}


def test_parquet_is_decoded_through_maps_lists_and_dates(tmp_path: Path) -> None:
    import datetime

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = bytes(range(32))
    # bound to its subject and column (macro encrypt_pii), as the lakehouse writes it
    cipher = b"\x00" * 12 + AESGCM(key).encrypt(b"\x00" * 12, b"Ada Abbot", b"ps1/name_enc")
    table = pa.table(
        {
            "id": ["A", "P0000006", "B"],
            "prefs": pa.array(
                [[("theme", "dark")], [("mail", "ada@example.org")], None],
                pa.map_(pa.string(), pa.string()),
            ),
            "tags": [["x"], None, ["ada@example.org"]],
            "born": [datetime.date(1990, 1, 1), datetime.date(1983, 1, 23), None],
            "name_enc": [b"other", cipher, None],
            # a copy under another name: the scan tries every declared encrypted column
            "copied": [None, cipher, None],
        }
    )
    path = tmp_path / "part-0.parquet"
    pq.write_table(table, path)
    needles = [
        Needle("subject_id", "subject id", b"P0000006"),
        Needle("pii", "patients.email", b"ada@example.org"),
        Needle("pii", "patients.birth_date", b"1983-01-23"),
    ]
    found, ciphertext = scan_parquet(path, needles, SubjectKey(key, "ps1", ("name_enc",)))
    where = {(hit.where, hit.needle.label): sorted(hit.rows) for hit in found}
    assert where == {
        ("id", "subject id"): [1],
        ("prefs.value", "patients.email"): [1],
        ("tags[]", "patients.email"): [2],
        ("born", "patients.birth_date"): [1],
    }
    assert [(hit.where, sorted(hit.rows)) for hit in ciphertext] == [("copied, name_enc", [1])]
    # another key opens nothing
    assert scan_parquet(path, needles, SubjectKey(bytes(32), "ps1", ("name_enc",)))[1] == []


def test_a_witness_file_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text("{not json")
    with pytest.raises(forensic_scan.ScanError, match="not a witness JSON file"):
        forensic_scan.read_witness(path)
    path.write_text(json.dumps({"version": 1, "subject_id": "P1' or 1=1"}))
    with pytest.raises(forensic_scan.ScanError, match="subject_id is missing or malformed"):
        forensic_scan.read_witness(path)
    witness = forensic_scan.Witness(
        "P0000006", "patient", "ab" * 32, bytes(32), [{"column": "c", "value": "v@x.org"}]
    )
    forensic_scan.write_witness(witness, path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert forensic_scan.read_witness(path) == witness


def test_the_landing_zone_is_rewritten_without_erased_subjects(tmp_path: Path) -> None:
    from python_jobs.purge import purge_landing_file

    path = tmp_path / "batch-0001.parquet"
    pq.write_table(pa.table({"patient_id": ["P1", "P2", "P1", None], "city": list("abcd")}), path)
    assert purge_landing_file(path, "patient_id", ["P1"]) == 2
    assert pq.read_table(path).to_pydict() == {"patient_id": ["P2", None], "city": ["b", "d"]}
    assert purge_landing_file(path, "patient_id", ["P1"]) == 0  # a rerun has nothing to do
    assert [p.name for p in tmp_path.iterdir()] == ["batch-0001.parquet"]


def test_kept_landing_events_are_anonymized_not_removed(tmp_path: Path) -> None:
    from python_jobs.purge import purge_landing_file

    path = tmp_path / "batch-0001.parquet"
    table = {"order_id": ["o1", "o2", "o3"], "user_id": ["U1", "U2", "U1"], "note": list("abc")}
    pq.write_table(pa.table(table), path)
    assert purge_landing_file(path, "user_id", ["U1"], anonymize=("note",)) == 2
    assert pq.read_table(path).to_pydict() == {
        "order_id": ["o1", "o2", "o3"],
        "user_id": [None, "U2", None],
        "note": [None, "b", None],
    }
    assert purge_landing_file(path, "user_id", ["U1"], anonymize=("note",)) == 0


def test_dbt_output_is_redacted_whole_ids_only(tmp_path: Path) -> None:
    from python_jobs.purge import redact_tool_output

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "dbt.log").write_text("args {subject_ids: [P0000006]} P00000061 xP0000006\n")
    (logs / "dbt.log.1").write_text("old: P0000006\n")
    (logs / "image.png").write_bytes(b"P0000006")
    assert redact_tool_output([logs, tmp_path / "absent"], ["P0000006"]) == 2
    assert (logs / "dbt.log").read_text() == "args {subject_ids: [[erased]]} P00000061 xP0000006\n"
    assert (logs / "dbt.log.1").read_text() == "old: [erased]\n"
    assert (logs / "image.png").read_bytes() == b"P0000006"
    # a redacted file is written private, whatever the process's umask
    assert (logs / "dbt.log").stat().st_mode & 0o077 == 0


def test_a_declared_relation_with_no_table_is_refused_not_reported_clean(tmp_path: Path) -> None:
    """A manifest parsed without the lake_root the tables were built with points the scan
    at empty folders: it must say so, not find nothing and report the subject gone."""
    built = tmp_path / "lake" / "silver" / "patients"
    (built / "_delta_log").mkdir(parents=True)
    relation = DeltaRelation(
        "model.gdpr_lakehouse.silver_patients", "silver_patients", "silver", "patients", "model"
    )
    witness = forensic_scan.Witness(subject_id="P0000001")
    # only the relations area: the session's dbt logs hold this id from other tests' builds
    only = {"selected": ("relations",)}
    with pytest.raises(
        forensic_scan.ScanError,
        match=r"1 declared relation\(s\) have no Delta table where the manifest puts them: silver\.patients .*the same lake_root",
    ):
        forensic_scan.scan(witness, [relation], tmp_path / "w", tmp_path / "l", **only)
    external = DeltaRelation(
        "model.gdpr_lakehouse.silver_patients",
        "silver_patients",
        "silver",
        "patients",
        "model",
        location_root=str(built.parent),
    )
    residues, stats = forensic_scan.scan(
        witness, [external], tmp_path / "w", tmp_path / "l", **only
    )
    assert (residues, stats["relations"]) == ([], 1)


def test_a_witness_keeps_the_subjects_record_ids(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    witness = forensic_scan.Witness(
        "P0000006", "patient", "ab" * 32, bytes(32), [], [{"column": "e.id", "value": "E1"}]
    )
    forensic_scan.write_witness(witness, path)
    assert forensic_scan.read_witness(path) == witness
    assert ("record_id", b"E1") in {(n.kind, n.value) for n in witness.needles()}
    path.write_text(json.dumps({"version": 1, "subject_id": "P0000006", "records": ["E1"]}))
    with pytest.raises(forensic_scan.ScanError, match="records must be a list"):
        forensic_scan.read_witness(path)


def _table(warehouse: Path, relation: DeltaRelation, rows: list[dict]) -> None:
    """A one-file Delta table of `relation` holding `rows`."""
    location = relation.path(warehouse)
    location.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), location / "part-0.parquet")
    _commit(location, 0, {"add": {"path": "part-0.parquet"}})


def _lakehouse(tmp_path: Path, key_bytes: int, record_id: str | None) -> list[DeltaRelation]:
    """bronze.encounters (named by pseudonym) after an erasure, with the system keys."""
    encounters = DeltaRelation(
        "model.p.bronze_encounters",
        "bronze_encounters",
        "bronze",
        "encounters",
        "model",
        privacy={"subject_key": "patient_pseudonym", "subject_key_kind": "pseudonym"},
    )
    keys = DeltaRelation(
        "model.p.privacy_system_keys",
        "privacy_system_keys",
        "privacy",
        "system_keys",
        "model",
        privacy={"role": "system"},
    )
    warehouse = tmp_path / "w"
    row = {"encounter_ref": record_id or "anon-" + "0" * 64, "patient_pseudonym": "ab" * 32}
    _table(warehouse, encounters, [row])
    _table(warehouse, keys, [{"key_name": "tombstone", "key_value": bytes(key_bytes)}])
    return [encounters, keys]


@pytest.mark.parametrize(
    ("key_bytes", "record_id", "verdict", "linked_by"),
    [
        (60, None, "unlinkable", []),
        # the tombstone key plain: a reader hashes ids with it
        (32, None, "readable", ["the tombstone key, stored plain"]),
        # a source record id beside the pseudonym: looked up at the source, it names them
        (60, "E1", "readable", ["bronze.encounters: encounters.encounter_id"]),
    ],
)
def test_a_pseudonym_is_unlinkable_only_when_nothing_maps_it_back(
    tmp_path: Path, key_bytes: int, record_id: str | None, verdict: str, linked_by: list[str]
) -> None:
    relations = _lakehouse(tmp_path, key_bytes, record_id)
    witness = forensic_scan.Witness(
        "P0000006",
        "patient",
        "ab" * 32,
        bytes([7]) * 32,  # the subject's key, shredded: in no file
        [],
        [{"column": "encounters.encounter_id", "value": "E1"}],
    )
    residues, stats = forensic_scan.scan(
        witness, relations, tmp_path / "w", tmp_path / "l", selected=("relations",)
    )
    pseudonym = [r.verdict for r in residues if r.needle_kind == "pseudonym"]
    assert pseudonym == [verdict]
    assert [
        link[: len(want)]
        for link, want in zip(stats["pseudonym_linked_by"], linked_by, strict=True)
    ] == linked_by


def test_a_certificate_counts_unlinkable_residues(tmp_path: Path) -> None:
    """A certificate issued before the purge, with the envelope on: its scan finds the
    pseudonym unlinkable (it stopped with a KeyError: it counted three verdicts only)."""
    from python_jobs import certificate

    relations = _lakehouse(tmp_path, 60, None)
    witness = forensic_scan.Witness("P0000006", "patient", "ab" * 32, bytes([7]) * 32)
    scanned = certificate._scan_verdict(
        {"request_id": "req-x", "subject_id": "P0000006"}, relations, tmp_path / "w", witness
    )
    assert scanned["residues"]["unlinkable"] == 1 and scanned["clean"]


def test_a_pseudonym_is_not_called_unlinkable_on_what_the_scan_did_not_see(
    tmp_path: Path,
) -> None:
    """Fail closed: without the witness's key the scan cannot tell the key is gone, and
    with the declared relations left out (--areas) it cannot tell no table holds the id:
    in neither case is the pseudonym unlinkable."""
    relations = _lakehouse(tmp_path, 60, None)
    keyless = forensic_scan.Witness("P0000006", "patient", "ab" * 32)
    residues, stats = forensic_scan.scan(
        keyless, relations, tmp_path / "w", tmp_path / "l", selected=("relations",)
    )
    assert [r.verdict for r in residues if r.needle_kind == "pseudonym"] == ["readable"]
    assert any("no witness key" in link for link in stats["pseudonym_linked_by"])
    # the same table, found as an undeclared one of the warehouse
    witness = forensic_scan.Witness("P0000006", "patient", "ab" * 32, bytes([7]) * 32)
    residues, stats = forensic_scan.scan(
        witness, relations[1:], tmp_path / "w", tmp_path / "l", selected=("warehouse",)
    )
    assert [r.verdict for r in residues if r.needle_kind == "pseudonym"] == ["readable"]
    assert any("not scanned" in link for link in stats["pseudonym_linked_by"])


def test_an_exact_event_time_is_captured_and_found_wherever_it_is_kept(tmp_path: Path) -> None:
    """The witness keeps the subject's exact event times (landing meta.privacy
    event_times), but not one on a whole hour (a generalized column holds those for
    everyone) nor one another subject shares; the scan finds such a time in a
    timestamp cell, in text, and in a Delta log's statistics (milliseconds), and not in
    the hour or the day the lakehouse keeps in clear."""
    import datetime

    utc = datetime.UTC
    mine = datetime.datetime(2026, 1, 5, 14, 32, 17, 123456, tzinfo=utc)
    shared = datetime.datetime(2026, 1, 6, 9, 15, 0, tzinfo=utc)
    on_the_hour = datetime.datetime(2026, 1, 7, 8, 0, 0, tzinfo=utc)
    landing = tmp_path / "landing" / "clicks"
    landing.mkdir(parents=True)
    pq.write_table(
        pa.table(
            {
                "user_id": ["U1", "U1", "U1", "U2"],
                "clicked_at": pa.array(
                    [mine, shared, on_the_hour, shared], pa.timestamp("us", "UTC")
                ),
            }
        ),
        landing / "batch-1.parquet",
    )
    vault = DeltaRelation(
        "model.p.privacy_subject_keys",
        "privacy_subject_keys",
        "privacy",
        "subject_keys",
        "model",
        privacy={"role": "vault"},
    )
    _table(
        tmp_path / "w",
        vault,
        [
            {
                "subject_id": "U1",
                "subject_type": "user",
                "subject_pseudonym": "p1",
                "data_key": bytes(32),
            }
        ],
    )
    graph = {
        "sources": {
            "source.p.landing.clicks": {
                "name": "clicks",
                "identifier": "clicks",
                "meta": {"privacy": {"subject_key": "user_id", "event_times": ["clicked_at"]}},
            }
        }
    }
    witness = forensic_scan.capture_witness(
        "U1", [vault], tmp_path / "w", tmp_path / "landing", graph
    )
    assert witness.times == [{"column": "clicks.clicked_at", "value": "2026-01-05 14:32:17.123456"}]
    path = tmp_path / "w.json"
    forensic_scan.write_witness(witness, path)
    assert forensic_scan.read_witness(path) == witness
    (needle,) = [n for n in witness.needles() if n.kind == "event_time"]

    table = pa.table(
        {
            "clicked_at": pa.array([mine, None], pa.timestamp("us", "UTC")),
            "clicked_hour": pa.array(
                [mine.replace(minute=0, second=0, microsecond=0)] * 2, pa.timestamp("us", "UTC")
            ),
            "clicked_on": [mine.date(), mine.date()],
            "note": [None, "clicked 2026-01-05T14:32:17.123456Z"],
        }
    )
    data = tmp_path / "part-0.parquet"
    pq.write_table(table, data)
    found, _ = scan_parquet(data, [needle], None)
    assert {(hit.where, tuple(sorted(hit.rows))) for hit in found} == {
        ("clicked_at", (0,)),
        ("note", (1,)),
    }
    # Delta's statistics: the minimum to the millisecond, the maximum rounded up
    log = tmp_path / "00000000000000000001.json"
    for stat in ("2026-01-05T14:32:17.123Z", "2026-01-05T14:32:17.124Z"):
        log.write_text(
            json.dumps({"add": {"stats": json.dumps({"minValues": {"t": stat}})}}) + "\n"
        )
        assert [hit.where for hit in scan_log(log, [needle])] == ["add (statistics)"]
    log.write_text(
        json.dumps({"add": {"stats": json.dumps({"minValues": {"t": "2026-01-05T14:00:00.000Z"}})}})
        + "\n"
    )
    assert scan_log(log, [needle]) == []

    path.write_text(
        json.dumps(
            {"version": 1, "subject_id": "U1", "times": [{"column": "c", "value": "yesterday"}]}
        )
    )
    with pytest.raises(forensic_scan.ScanError, match="times must be a list"):
        forensic_scan.read_witness(path)


def _holds(folder: Path, subject: str) -> list[str]:
    """Files under `folder` (hidden ones too) whose bytes or Parquet values hold `subject`."""
    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        values = str(pq.read_table(path).to_pylist()) if data[:4] == b"PAR1" else ""
        if subject.encode() in data or subject in values:
            found.append(str(path.relative_to(folder)))
    return found


def test_every_format_and_folder_of_the_landing_zone_is_purged(tmp_path: Path) -> None:
    """Seam: the landing purge rewrote only *.parquet directly in each
    source folder. JSON and CSV sources (supported, and what rectify writes), a
    date-partitioned subfolder and a crashed rectify's hidden staging folder kept the
    erased subject, and the purge still said purged. Guarantee: every file anywhere
    under a landing source is rewritten by its format; the check after it
    (landing_residue) decodes every file on its own and names what is left."""
    from python_jobs.landing_residue import landing_residue
    from python_jobs.purge import purge_landing

    landing = tmp_path / "landing"
    profiles = landing / "profiles"
    (profiles / "2026" / "12" / "04").mkdir(parents=True)
    (profiles / ".rectify-r1.tmp").mkdir()
    lines = [
        {"user_id": "U1", "email": "u1@example.org", "note": "a"},
        {"user_id": "U2", "email": "u2@example.org", "note": "b"},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (profiles / "batch-1.json").write_text(text)
    (profiles / "2026" / "12" / "04" / "part-0.json").write_text(text)
    (profiles / ".rectify-r1.tmp" / "part-00000.json").write_text(json.dumps(lines[0]) + "\n")
    nested = profiles / "2026" / "12" / "04" / "part-1.parquet"
    pq.write_table(pa.Table.from_pylist(lines), nested)
    orders = landing / "orders"
    (orders / "dt=2026-12-04").mkdir(parents=True)
    (orders / "dt=2026-12-04" / "part-0.csv").write_text(
        'o1,U1,"1 Quay Lane, Eastmoor",12.5\no2,U2,"2 High St",3\no3,U1,plain,1\n'
    )
    graph = {
        "sources": {
            "source.p.landing.profiles": {
                "source_name": "landing",
                "name": "profiles",
                "identifier": "profiles",
                "schema": "landing",
                "meta": {
                    "landing_format": "json",
                    "privacy": {"subject_key": "user_id", "on_erasure": "delete"},
                },
                "columns": {"user_id": {}, "email": {}, "note": {}},
            },
            "source.p.landing.orders": {
                "source_name": "landing",
                "name": "orders",
                "identifier": "orders",
                "schema": "landing",
                "meta": {
                    "landing_format": "csv",
                    "privacy": {
                        "subject_key": "user_id",
                        "on_erasure": "anonymize",
                        "pii_columns": ["address"],
                    },
                },
                "columns": {"order_id": {}, "user_id": {}, "address": {}, "amount": {}},
            },
        }
    }
    assert _holds(landing, "U1")
    purge_landing(graph, landing, ["U1"])
    assert _holds(landing, "U1") == []
    assert _holds(landing, "U2")  # the others' events stay, unchanged
    assert (profiles / "batch-1.json").read_text() == json.dumps(lines[1]) + "\n"
    # kept orders: the key and the PII fields empty, every other field as it was
    assert (orders / "dt=2026-12-04" / "part-0.csv").read_text() == (
        'o1,,,12.5\no2,U2,"2 High St",3\no3,,,1\n'
    )
    assert landing_residue([landing], ["U1"]) == []
    # the check is its own: what the rewrite cannot read is named, never passed
    (profiles / "2026" / "late.parquet").write_bytes(b"PAR1 a partial U1 write")
    (landing / "stray.ndjson.gz").write_bytes(gzip.compress(b'{"user_id": "U1"}\n'))
    findings = landing_residue([landing, tmp_path / "elsewhere"], ["U1"])
    assert len(findings) == 3, findings
    assert "late.parquet: cannot be decoded" in findings[0]
    assert "stray.ndjson.gz: an erased subject's id is still there" in findings[1]
    assert "elsewhere: not a folder here" in findings[2]


def test_the_scan_stops_when_savepoint_copies_exist_without_their_registry(
    tmp_path: Path,
) -> None:
    """Seam: the forensic scan read a missing savepoint registry as "no
    copies" while the savepoint schema held tables, and passed without scanning them.
    Guarantee: copies nothing registers stop the scan, as kept_savepoints stops purge."""
    copy = tmp_path / "savepoints.db" / "before_migration__silver__patients" / "_delta_log"
    copy.mkdir(parents=True)
    with pytest.raises(ProjectError, match=r"savepoint registry .* does not exist"):
        forensic_scan.savepoint_copies([], tmp_path)
    copy.parent.rename(tmp_path / "savepoints.db" / "not_a_table")
    (tmp_path / "savepoints.db" / "not_a_table" / "_delta_log").rename(
        tmp_path / "savepoints.db" / "not_a_table" / "data"
    )
    assert forensic_scan.savepoint_copies([], tmp_path) == []


def test_a_certificate_lists_only_the_areas_it_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seam: an area that does not exist where the scan looks (a landing
    path given by --vars, a remote landing zone) was skipped without a word, and the
    certificate still listed every area as scanned. Guarantee: the certificate lists
    what was scanned, and names what was not, with where it was looked for."""
    from python_jobs import certificate

    relations = _lakehouse(tmp_path, 60, None)
    elsewhere = tmp_path / "landing-given-by-vars"
    monkeypatch.setattr(certificate, "landing_dir", lambda: elsewhere)
    witness = forensic_scan.Witness("P0000006", "patient", "ab" * 32, bytes([7]) * 32)
    scanned = certificate._scan_verdict(
        {"request_id": "req-x", "subject_id": "P0000006"}, relations, tmp_path / "w", witness
    )
    assert "landing" not in scanned["areas"]
    assert f"landing zone ({elsewhere}: not there)" in scanned["not_scanned"]


def test_landing_folders_read_elsewhere_are_each_scanned_never_their_common_parent(
    tmp_path: Path,
) -> None:
    """The ledger records reads from landing tables moved to far-apart folders (one
    moved twice, one read in date subfolders), and one on remote storage: each local folder is an area
    of its own (not their common parent, which could be the root), a subfolder is
    inside its table's folder, and the remote one is named as not scanned."""
    ledger = DeltaRelation(
        "model.p.bronze_landing_ledger",
        "bronze_landing_ledger",
        "bronze",
        "landing_ledger",
        "model",
    )
    warehouse, landing = tmp_path / "w", tmp_path / "landing"
    first, second = tmp_path / "a" / "patients", tmp_path / "b" / "c" / "orders"
    moved_again = tmp_path / "z" / "patients"
    rows = [
        {"entity": "patients", "file_path": (moved_again / "5.parquet").as_uri()},
        {"entity": "patients", "file_path": (landing / "patients" / "0.parquet").as_uri()},
        {"entity": "patients", "file_path": (first / "1.parquet").as_uri()},
        {"entity": "patients", "file_path": (first / "2026" / "12" / "2.parquet").as_uri()},
        {"entity": "orders", "file_path": (second / "3.parquet").as_uri()},
        {
            "entity": "clicks",
            "file_path": "abfss://lake@acct.dfs.core.windows.net/clicks/4.parquet",
        },
    ]
    _table(warehouse, ledger, rows)
    missing: list[str] = []
    found = forensic_scan.landing_read_elsewhere([ledger], warehouse, landing, missing)
    assert found == [
        (first, f"landing table patients ({first})"),
        (second, f"landing table orders ({second})"),
        (moved_again, f"landing table patients ({moved_again})"),
    ]
    assert missing == [
        "landing table clicks (abfss://lake@acct.dfs.core.windows.net/clicks/4.parquet: "
        "not on this machine)"
    ]
