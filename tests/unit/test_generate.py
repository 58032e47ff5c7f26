"""The landing generator: deterministic, synthetic, and in the shape the sources declare."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from python_jobs import generate
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
    sources = yaml.safe_load((ROOT / "models/landing/_landing__sources.yml").read_text())
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
