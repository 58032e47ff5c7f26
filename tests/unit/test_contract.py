"""The privacy contract check, proven on known-bad fixtures (rendered in plain Jinja, no dbt, no JVM)."""

from __future__ import annotations

import json

from tests.jinja_harness import Jinja


def _problems(jinja: Jinja, nodes: list[dict], columns: dict) -> list[list[str]]:
    call = (
        "{{ tojson(gdpr_lakehouse.privacy_contract_problems("
        + json.dumps(nodes)
        + ", "
        + json.dumps(columns)
        + ")) }}"
    )
    return json.loads(jinja.compile_inline(call))


def _node(uid: str, privacy: dict | None) -> dict:
    return {"unique_id": uid, "config": {"meta": {"privacy": privacy} if privacy else {}}}


def test_clean_nodes_have_no_problems(jinja: Jinja) -> None:
    nodes = [
        _node(
            "model.x.ok",
            {
                "subject_key": "patient_id",
                "on_erasure": "delete",
                "pii_columns": ["email_enc", "birth_year"],
            },
        ),
        _node("model.x.agg", {"on_erasure": "retain", "pii_columns": []}),
    ]
    columns = {
        "model.x.ok": ["patient_id", "email_enc", "birth_year", "department_name"],
        "model.x.agg": ["city", "patient_count"],
    }
    assert _problems(jinja, nodes, columns) == []


def test_known_bad_nodes_are_caught(jinja: Jinja) -> None:
    nodes = [
        _node("model.x.undeclared", None),
        _node("model.x.bad_action", {"on_erasure": "forget", "pii_columns": []}),
        _node("model.x.no_key", {"on_erasure": "delete", "pii_columns": []}),
        _node(
            "model.x.leaky",
            {"subject_key": "user_id", "on_erasure": "delete", "pii_columns": ["email"]},
        ),
    ]
    columns = {
        "model.x.leaky": [
            "user_id",
            "email",
            "Phone_Number",
            "ip",
            "home_address",
            "date_of_birth",
            "national_id",
            "username",
            "url",
        ]
    }
    problems = _problems(jinja, nodes, columns)
    by_node: dict[str, list] = {}
    for uid, column, problem in problems:
        by_node.setdefault(uid, []).append((column, problem))
    assert by_node["model.x.undeclared"] == [("", "declares no meta.privacy")]
    assert by_node["model.x.bad_action"] == [("", "on_erasure must be delete, anonymize or retain")]
    assert by_node["model.x.no_key"] == [("", "on_erasure delete needs a subject_key")]
    leaked = {column for column, _ in by_node["model.x.leaky"]}
    assert leaked == {
        "phone_number",
        "ip",
        "home_address",
        "date_of_birth",
        "national_id",
        "username",
    }
