"""Schema history (python_jobs.schema_history): the difference between two metaData
actions of a Delta log, and a log read from its files, checkpoint included."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from python_jobs.schema_history import Change, log_changes, schema_changes, tag_columns


def _field(name: str, kind: object = "string", nullable: bool = True, mapped: int | None = None):
    metadata = {"delta.columnMapping.id": mapped} if mapped is not None else {}
    return {"name": name, "type": kind, "nullable": nullable, "metadata": metadata}


def _metadata(*fields: dict, properties: dict | None = None, partitions: list | None = None):
    return {
        "id": "t",
        "schemaString": json.dumps({"type": "struct", "fields": list(fields)}),
        "partitionColumns": partitions or [],
        "configuration": properties or {},
    }


def test_a_new_table_adds_every_column_and_property() -> None:
    after = _metadata(_field("id"), _field("cost", "decimal(12,2)"), properties={"p": "1"})
    assert schema_changes(None, after) == [
        Change("column_added", "id", None, "string"),
        Change("column_added", "cost", None, "decimal(12,2)"),
        Change("property_set", "p", None, "1"),
    ]


def test_columns_added_dropped_retyped_and_made_not_null() -> None:
    before = _metadata(_field("id"), _field("n", "integer"), _field("old"))
    after = _metadata(_field("ID", nullable=False), _field("n", "long"), _field("new", "date"))
    assert schema_changes(before, after) == [
        Change("column_dropped", "old", "string", None),
        Change("column_renamed", "ID", "id", "ID"),
        Change("column_nullability", "ID", "nullable", "not null"),
        Change("column_retyped", "n", "integer", "long"),
        Change("column_added", "new", None, "date"),
    ]


def test_a_rename_under_column_mapping_is_one_change_not_a_drop_and_an_add() -> None:
    before = _metadata(_field("city", mapped=3), _field("zip", mapped=4))
    after = _metadata(_field("town", mapped=3), _field("zip", mapped=4))
    assert schema_changes(before, after) == [Change("column_renamed", "town", "city", "town")]


def test_a_nested_type_change_is_a_retype_with_both_types() -> None:
    inner = {"type": "struct", "fields": [_field("a")]}
    wider = {"type": "struct", "fields": [_field("a"), _field("b")]}
    [change] = schema_changes(_metadata(_field("s", inner)), _metadata(_field("s", wider)))
    assert (
        change.change == "column_retyped" and '"b"' in change.after and '"b"' not in change.before
    )


def test_properties_set_changed_unset_and_partitioning() -> None:
    before = _metadata(_field("d"), properties={"keep": "1", "change": "a", "drop": "x"})
    after = _metadata(
        _field("d"), properties={"keep": "1", "change": "b", "add": "y"}, partitions=["d"]
    )
    assert schema_changes(before, after) == [
        Change("property_set", "add", None, "y"),
        Change("property_changed", "change", "a", "b"),
        Change("property_unset", "drop", "x", None),
        Change("partitioning_changed", "", None, "d"),
    ]
    assert schema_changes(after, after) == []


def test_a_free_text_tag_is_kept_as_its_length_only() -> None:
    assert tag_columns("fixing P0000012 by hand") == {
        "user_metadata": "(free text of 23 characters, not kept)",
        "actor": None,
        "tool": None,
        "purpose": None,
    }
    tag = '{"actor": "ana", "tool": "dbt", "purpose": "build"}'
    assert tag_columns(tag) == {
        "user_metadata": tag,
        "actor": "ana",
        "tool": "dbt",
        "purpose": "build",
    }


def _commit(log: Path, version: int, *actions: dict) -> None:
    lines = [json.dumps(action) for action in actions]
    (log / f"{version:020d}.json").write_text("\n".join(lines) + "\n")


def test_the_log_is_read_from_its_commits_and_a_checkpoint_stands_for_removed_ones(
    tmp_path: Path,
) -> None:
    """Delta's log cleanup removed commits 0-1; the checkpoint at 1 holds the schema
    they made, so commit 2's change is told against it, not taken for a new table."""
    log = tmp_path / "_delta_log"
    log.mkdir()
    info = {"timestamp": 1, "operation": "ADD COLUMNS", "userMetadata": '{"purpose": "build"}'}
    checkpoint = {
        "id": "t",
        "schemaString": json.dumps({"type": "struct", "fields": [_field("id")]}),
        "partitionColumns": [],
        "configuration": [("p", "1")],
    }
    table = pa.table({"metaData": [checkpoint, None]})
    pq.write_table(table, log / f"{1:020d}.checkpoint.parquet")
    _commit(
        log,
        2,
        {"commitInfo": info},
        {"metaData": _metadata(_field("id"), _field("extra"), properties={"p": "1"})},
    )
    _commit(log, 3, {"commitInfo": {"timestamp": 2, "operation": "WRITE"}}, {"add": {"path": "x"}})
    assert list(log_changes(tmp_path)) == [
        (2, info, [Change("column_added", "extra", None, "string")])
    ]


def test_a_log_whose_start_is_gone_without_a_checkpoint_records_no_false_creation(
    tmp_path: Path, capsys
) -> None:
    log = tmp_path / "_delta_log"
    log.mkdir()
    _commit(log, 5, {"commitInfo": {}}, {"metaData": _metadata(_field("id"))})
    _commit(
        log, 6, {"commitInfo": {"timestamp": 9}}, {"metaData": _metadata(_field("id"), _field("n"))}
    )
    assert [(v, c) for v, _, c in log_changes(tmp_path)] == [
        (6, [Change("column_added", "n", None, "string")])
    ]
    assert "the log starts at v5 and no checkpoint holds the schema" in capsys.readouterr().err
