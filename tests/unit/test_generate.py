"""The landing generator: deterministic, synthetic, and in the shape the sources declare."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from demo import generate
from tests.dbt_harness import ROOT


def _run(tmp_path: Path, *args: str) -> dict[str, list[dict]]:
    assert generate.main(["--landing", str(tmp_path), *args]) == 0
    return {
        entity: pq.read_table(next((tmp_path / entity).glob("batch-*.parquet"))).to_pylist()
        for entity in generate.SCHEMAS
    }


def test_same_seed_same_events(tmp_path: Path) -> None:
    first = _run(tmp_path / "a", "--patients", "60", "--seed", "7")
    again = _run(tmp_path / "b", "--patients", "60", "--seed", "7")
    other = _run(tmp_path / "c", "--patients", "60", "--seed", "8")
    assert first == again
    assert first["patients"] != other["patients"]


def test_batch_one_is_a_cdc_feed_with_defects(tmp_path: Path) -> None:
    events = _run(tmp_path, "--patients", "500")
    patients = events["patients"]
    ops = {op: sum(1 for e in patients if e["_op"] == op) for op in ("insert", "update", "delete")}
    assert ops == {"insert": 500, "update": 50, "delete": 5}
    assert all(e["_source_ts"] is not None for e in patients)
    assert all(
        e["email"].endswith("@example.org")
        for e in patients
        if e["_op"] == "insert" and "@" in (e["email"] or "")
    )
    assert any(" at " in (e["email"] or "") for e in patients), "no invalid e-mail to quarantine"
    assert len(events["users"]) > 0 and len(events["encounters"]) > 0
    assert all(
        ip.split(".")[0] in {"192", "198", "203"}
        for ip in (c["ip_address"] for c in events["clicks"])
    )


def test_later_batches_update_delete_and_add(tmp_path: Path) -> None:
    _run(tmp_path, "--patients", "200")
    generate.main(["--landing", str(tmp_path), "--patients", "200", "--batch", "2"])
    second = pq.read_table(tmp_path / "patients" / "batch-0002.parquet").to_pylist()
    ops = {e["_op"] for e in second}
    assert ops == {"insert", "update", "delete"}
    new_ids = {e["patient_id"] for e in second if e["_op"] == "insert"}
    assert min(new_ids) == "P0000201"


def test_schema_matches_the_declared_sources() -> None:
    sources = yaml.safe_load((ROOT / "models/demo/landing/_landing__sources.yml").read_text())
    declared = {
        t["name"]: [c["name"] for c in t["columns"]] for t in sources["sources"][0]["tables"]
    }
    assert declared == {entity: schema.names for entity, schema in generate.SCHEMAS.items()}


@pytest.mark.parametrize(
    "args", [["--patients", "0"], ["--batch", "0"], ["--clicks-per-user", "-1"]]
)
def test_bad_arguments_are_refused(tmp_path: Path, args: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        generate.main(["--landing", str(tmp_path), *args])
    assert exit_info.value.code == 2
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_late_events_are_dated_back_and_the_oracle_applies_only_newer_ones(
    tmp_path: Path,
) -> None:
    """--late-fraction dates updates back into earlier batches' days; the oracle keeps,
    per key, the newest event whatever file it came in."""
    from tests.simulation import oracle as cdc_oracle

    for batch in ("1", "2", "3"):
        args = ["--landing", str(tmp_path), "--patients", "200", "--batch", batch]
        assert generate.main([*args, "--late-fraction", "0.5" if batch == "3" else "0"]) == 0
    folder = tmp_path / "patients"
    events = list(cdc_oracle.events(folder, "patient_id"))
    earlier = max(e.ts for e in events if e.file != "batch-0003.parquet" and e.ts)
    late = [e for e in events if e.file == "batch-0003.parquet" and e.op == "update"]
    dated_back = [e for e in late if e.ts < earlier]
    assert 0.3 * len(late) < len(dated_back) < 0.7 * len(late)

    state = cdc_oracle.expected_state(folder, "patient_id")
    for event in late:
        newest = max(
            (e for e in events if e.key == event.key and e.issue is None),
            key=lambda e: e.sequence,
        )
        if newest.op == "delete":
            assert event.key not in state
        else:
            assert state[event.key] == newest
    # a late update older than the key's state is not what the key holds
    stale = [e for e in dated_back if state.get(e.key) not in (None, e)]
    assert stale, "some late updates should be older than their key's state"


def test_the_oracle_orders_ties_and_rejects_what_bronze_rejects(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from tests.simulation import oracle as cdc_oracle

    when = datetime(2026, 1, 5, tzinfo=UTC)
    folder = tmp_path / "patients"
    folder.mkdir()

    def land(name: str, rows: list[tuple]) -> None:
        table = [
            dict.fromkeys(generate.SCHEMAS["patients"].names)
            | {"patient_id": key, "city": city, "_op": op, "_source_ts": ts}
            for key, city, op, ts in rows
        ]
        pq.write_table(
            generate.pa.Table.from_pylist(table, schema=generate.SCHEMAS["patients"]),
            folder / name,
        )

    land("b.parquet", [("P1", "B", "U", when), ("P2", "x", "insert", when)])
    land(
        "a.parquet", [("P1", "A", "update", when), ("P2", None, " d", when), (None, "n", "c", when)]
    )
    land(".hidden.parquet", [("P3", "h", "insert", when)])
    land("c.parquet", [("P4", "t", "merge", when), ("P5", "t", "r", None)])
    state = cdc_oracle.expected_state(folder, "patient_id")
    assert {k: e.values["city"] for k, e in state.items()} == {"P1": "B"}
    assert cdc_oracle.rejected(folder, "patient_id") == [
        ("a.parquet", 2, "missing key"),
        ("c.parquet", 0, cdc_oracle.UNKNOWN_OP),
        ("c.parquet", 1, "missing source time"),
    ]


def test_malformed_events_and_split_files_are_what_the_oracle_rejects(tmp_path: Path) -> None:
    """--malformed-fraction breaks a share of the events in three ways, --files splits a
    batch over several files; splitting changes no key's expected state."""
    from tests.simulation import oracle as cdc_oracle

    whole, split = tmp_path / "whole", tmp_path / "split"
    args = ["--patients", "300", "--seed", "3"]
    assert generate.main(["--landing", str(whole), *args]) == 0
    assert generate.main(["--landing", str(split), *args, "--files", "4"]) == 0
    names = sorted(p.name for p in (split / "patients").glob("*.parquet"))
    assert names == [f"batch-0001-{k:02d}.parquet" for k in range(1, 5)]
    assert {
        key: event.values
        for key, event in cdc_oracle.expected_state(whole / "patients", "patient_id").items()
    } == {
        key: event.values
        for key, event in cdc_oracle.expected_state(split / "patients", "patient_id").items()
    }

    broken = tmp_path / "broken"
    assert generate.main(["--landing", str(broken), *args, "--malformed-fraction", "0.2"]) == 0
    rules = [rule for _, _, rule in cdc_oracle.rejected(broken / "patients", "patient_id")]
    total = pq.read_metadata(next((broken / "patients").glob("*.parquet"))).num_rows
    assert 0.1 * total < len(rules) < 0.3 * total
    assert set(rules) == {"missing key", "missing source time", cdc_oracle.UNKNOWN_OP}


@pytest.mark.parametrize("args", [["--malformed-fraction", "1.5"], ["--files", "0"]])
def test_bad_fault_options_are_refused(tmp_path: Path, args: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        generate.main(["--landing", str(tmp_path), *args])
    assert exit_info.value.code == 2


def test_the_landing_files_are_their_owners_only(tmp_path: Path) -> None:
    """Attack: another local account reads the landing zone, where the demo's source
    records hold names, e-mails and phone numbers in clear. Guarantee: the generator
    makes the landing folders 700 and each file 600, whatever the process umask, and
    an older file left readable by its crashed run is narrowed when written again."""
    landing = tmp_path / "lakehouse" / "landing"
    old = os.umask(0o022)
    try:
        assert generate.main(["--landing", str(landing), "--patients", "20"]) == 0
        (landing / "patients" / ".batch-0002.parquet.tmp").write_bytes(b"half")
        os.chmod(landing / "patients" / ".batch-0002.parquet.tmp", 0o644)
        assert generate.main(["--landing", str(landing), "--patients", "20", "--batch", "2"]) == 0
    finally:
        os.umask(old)
    found = sorted(landing.rglob("*"))
    assert any(p.suffix == ".parquet" for p in found)
    modes = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode) for p in found}
    modes["lakehouse/landing"] = stat.S_IMODE(landing.stat().st_mode)
    assert {path: mode for path, mode in modes.items() if mode & 0o077} == {}
