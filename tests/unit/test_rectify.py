"""The rectification job's rules that need no Spark: which landing table a change goes
to, which columns may change, the values' types, and bad input refused by name."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime
from pathlib import Path

import pytest

from python_jobs import rectify
from python_jobs.project import ProjectError
from python_jobs.rectify import RectificationError
from python_jobs.relations import DeltaRelation

COLUMNS = {
    "patients": {
        "patient_id": "string",
        "full_name": "string",
        "email": "string",
        "birth_date": "date",
        "city": "string",
        "_op": "string",
        "_source_ts": "timestamp",
    },
    "users": {
        "user_id": "string",
        "email": "string",
        "preferences": "map<string,string>",
        "_op": "string",
        "_source_ts": "timestamp",
    },
    "encounters": {"encounter_id": "string", "patient_id": "string", "_op": "string"},
}

# what the demo's landing yml declares valid (meta valid), as the silver checks accept
VALID = {
    "email": {"required": True, "pattern": "^[^@ ]+@[^@ ]+[.][a-z]{2,}$"},
    "birth_date": {"required": True, "not_future": True},
}


def _graph() -> tuple[dict, list[DeltaRelation]]:
    def source(name: str, key: str, pii: list[str], landing_format: str = "parquet") -> dict:
        return {
            "schema": "landing",
            "name": name,
            "identifier": name,
            "meta": {
                "landing_format": landing_format,
                "privacy": {"subject_key": key, "on_erasure": "delete", "pii_columns": pii},
            },
            "columns": {
                c: {"data_type": t, "config": {"meta": {"valid": VALID[c]}} if c in VALID else {}}
                for c, t in COLUMNS[name].items()
            },
        }

    sources = {
        "source.p.landing.patients": source(
            "patients", "patient_id", ["full_name", "email", "birth_date"]
        ),
        "source.p.landing.users": source("users", "user_id", ["email", "preferences"]),
        "source.p.landing.encounters": source("encounters", "patient_id", []),
    }
    relations = [
        DeltaRelation(
            f"model.p.bronze_{name}",
            f"bronze_{name}",
            "bronze",
            name,
            "model",
            privacy={"subject_key": key, "subject_type": kind},
        )
        for name, key, kind in (
            ("patients", "patient_id", "patient"),
            ("users", "user_id", "user"),
            ("encounters", "patient_id", "patient"),
        )
    ]
    nodes = {
        r.unique_id: {"depends_on": {"nodes": [f"source.p.landing.{r.identifier}"]}}
        for r in relations
    }
    return {"nodes": nodes, "sources": sources}, relations


def _tables() -> list[rectify.LandingTable]:
    graph, relations = _graph()
    return rectify.landing_tables(graph, relations)


def test_the_landing_tables_are_those_declaring_personal_columns_with_one_reader() -> None:
    tables = {t.name: t for t in _tables()}
    assert set(tables) == {"landing.patients", "landing.users"}
    assert tables["landing.patients"].reader.name == "bronze_patients"
    assert tables["landing.patients"].reader_name == "bronze.patients"
    assert tables["landing.users"].key == "user_id"
    assert tables["landing.patients"].format == "parquet"
    # JSON and CSV too (the formats create_landing_tables registers), nothing else
    graph, relations = _graph()
    graph["sources"]["source.p.landing.users"]["meta"]["landing_format"] = "json"
    tables = {t.name: t for t in rectify.landing_tables(graph, relations)}
    assert tables["landing.users"].format == "json"
    assert rectify.event_file(tables["landing.users"], "rec-1") == "rectify-rec-1.json"
    graph["sources"]["source.p.landing.users"]["meta"]["landing_format"] = "avro"
    assert {t.name for t in rectify.landing_tables(graph, relations)} == {"landing.patients"}


def test_a_csv_landing_table_with_a_map_column_gets_no_event(tmp_path: Path) -> None:
    graph, relations = _graph()
    graph["sources"]["source.p.landing.users"]["meta"]["landing_format"] = "csv"
    [users] = [t for t in rectify.landing_tables(graph, relations) if t.identifier == "users"]
    with pytest.raises(rectify.RectificationError, match=r"is CSV, which cannot hold preferences"):
        rectify.land_event(tmp_path, "rec-1", None, users)
    assert list(tmp_path.iterdir()) == []


def test_a_change_goes_to_the_subjects_table_as_its_types() -> None:
    table, values = rectify.resolve(
        _tables(), "patient", {"email": "ada@example.org", "birth_date": "1980-02-29"}
    )
    assert table.name == "landing.patients"
    assert values == {"email": "ada@example.org", "birth_date": date(1980, 2, 29)}
    # the same column name of a user goes to the users' table
    table, _ = rectify.resolve(_tables(), "user", {"email": "u@example.org"})
    assert table.name == "landing.users"
    # null clears a value the contract does not require
    assert rectify.resolve(_tables(), "patient", {"full_name": None})[1] == {"full_name": None}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"email": "ada.example.org"}, "does not match its pattern"),
        ({"email": "ada@example"}, "does not match its pattern"),
        ({"email": None}, r"landing\.patients\.email is required"),
        ({"birth_date": None}, "is required"),
        ({"birth_date": "2999-01-01"}, "is in the future"),
    ],
)
def test_a_value_the_silver_checks_would_quarantine_is_refused(changes: dict, message: str) -> None:
    with pytest.raises(RectificationError, match=message) as raised:
        rectify.resolve(_tables(), "patient", changes)
    assert "would quarantine the subject" in str(raised.value)
    # the value itself is personal data: never in the message
    value = next(iter(changes.values()))
    assert value is None or str(value) not in str(raised.value)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"city": "Bern"}, "column city is not declared personal data"),
        ({"patient_id": "P1"}, "column patient_id is the subject key"),
        ({"_source_ts": "2026-01-01"}, "column _source_ts is an event column"),
        ({"shoe_size": "42"}, "column shoe_size is not a column of the subject's landing tables"),
        ({"birth_date": "1980-02-30"}, r"landing.patients.birth_date \(date\): allowed is a date"),
        ({"email": "a\nb"}, "allowed is one line of text"),
        ({"email": "x" * 1001}, "1000 characters at most"),
        ({"email": 42}, "allowed is one line of text"),
    ],
)
def test_bad_changes_are_refused_by_name(changes: dict, message: str) -> None:
    with pytest.raises(RectificationError, match=message) as raised:
        rectify.resolve(_tables(), "patient", changes)
    if "allowed:" in str(raised.value):
        assert str(raised.value).endswith("allowed: birth_date, email, full_name")


def test_a_type_the_job_cannot_write_and_changes_spanning_tables_are_refused() -> None:
    with pytest.raises(RectificationError, match="cannot be rectified by this job"):
        rectify.resolve(_tables(), "user", {"preferences": "{}"})
    # two landing tables of the subject's type: one request may not span them
    patients = next(t for t in _tables() if t.identifier == "patients")
    contacts = dataclasses.replace(
        patients,
        unique_id="source.p.landing.contacts",
        identifier="contacts",
        pii_columns=("email",),
    )
    with pytest.raises(
        RectificationError, match=r"span landing tables landing\.contacts, landing\.patients"
    ):
        rectify.resolve([patients, contacts], "patient", {"email": "a@example.org"})
    # a subject the vault does not know: no table (the job refuses it), names still checked
    assert rectify.resolve(_tables(), None, {"email": "a@example.org"}) == (
        None,
        {"email": "a@example.org"},
    )
    with pytest.raises(RectificationError, match="shoe_size is not a column"):
        rectify.resolve(_tables(), None, {"shoe_size": "42"})


def test_values_of_every_supported_type() -> None:
    table = rectify.LandingTable(
        "s",
        "landing",
        "t",
        "id",
        ("a", "b", "c", "d"),
        {"a": "timestamp", "b": "bigint", "c": "double", "d": "int"},
        DeltaRelation("m", "m", "bronze", "t", "model"),
    )
    assert rectify._typed(table, "a", "2026-02-10T09:30") == datetime(2026, 2, 10, 9, 30)
    assert rectify._typed(table, "b", "12") == 12
    assert rectify._typed(table, "c", "1.5") == 1.5
    for column, value in (("b", "1.5"), ("b", True), ("c", "abc"), ("a", "yesterday")):
        with pytest.raises(RectificationError, match="allowed is"):
            rectify._typed(table, column, value)


def test_the_changes_come_from_set_and_a_json_file(tmp_path: Path) -> None:
    changes = tmp_path / "changes.json"
    changes.write_text(json.dumps({"email": "ada@example.org", "phone": None}))
    assert rectify.parse_changes(["full_name=Ada L"], changes) == {
        "email": "ada@example.org",
        "phone": None,
        "full_name": "Ada L",
    }
    assert rectify.parse_changes(["email=a=b"], None) == {"email": "a=b"}
    for pairs, path, message in (
        ([], None, "nothing to rectify"),
        (["email"], None, "allowed is column=value"),
        (["email="], None, "allowed is column=value with a value"),
        (["email=a", "email=b"], None, "changed twice"),
        (["Email=a"], None, "allowed are column names"),
        (["email=a"], changes, "changed twice"),
    ):
        with pytest.raises(RectificationError, match=message):
            rectify.parse_changes(pairs, path)
    changes.write_text("[1, 2]")
    with pytest.raises(RectificationError, match="one JSON object"):
        rectify.parse_changes([], changes)
    changes.write_text("{not json")
    with pytest.raises(RectificationError, match="not a readable JSON object"):
        rectify.parse_changes([], changes)


def test_bad_arguments_stop_before_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused before a session starts: the job is given none and must not make one."""
    monkeypatch.setattr(
        "python_jobs.spark.get_spark", lambda *a, **k: pytest.fail("a Spark session started")
    )
    for argv, message in (
        (["--set", "email=a"], "give them with --subject-id"),
        (["--subject-id", "P1; drop table x"], "is not a subject id"),
        (["--subject-id", "P0000010"], "nothing to rectify"),
        (["--subject-id", "P0000010", "--set", "email=a", "--received-at", "2999-01-01"], "future"),
        (
            ["--subject-id", "P0000010", "--set", "email=a", "--requested-by", "a\nb"],
            "one line of printable text",
        ),
    ):
        with pytest.raises(ProjectError, match=message):
            rectify.main(argv)
