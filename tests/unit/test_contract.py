"""The privacy contract check, proven on known-bad fixtures (rendered in plain Jinja, no dbt, no JVM)."""

from __future__ import annotations

import json

import pytest

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
                "classes": {
                    "direct_identifier": ["patient_id", "email_enc"],
                    "quasi_identifier": ["birth_year"],
                    "non_personal": ["department_name"],
                },
            },
        ),
        _node(
            "model.x.agg",
            {
                "on_erasure": "retain",
                "pii_columns": [],
                "classes": {"quasi_identifier": ["City"], "non_personal": ["patient_count"]},
            },
        ),
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
    problems = [p for p in _problems(jinja, nodes, columns) if "meta.privacy.classes" not in p[2]]
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


def test_every_column_needs_exactly_one_known_class(jinja: Jinja) -> None:
    """The column classes, proven on a known-bad node: a column with no class, one in
    two, an unknown class, a class naming a column the node lacks, and personal data
    (the subject key, a pseudonym, a pii_columns entry, a name that looks like PII)
    classed non_personal are each named."""
    nodes = [
        _node(
            "model.x.bad",
            {
                "subject_key": "patient_id",
                "on_erasure": "delete",
                "pii_columns": ["email_enc"],
                "classes": {
                    "direct_identifier": ["encounter_id"],
                    "quasi_identifier": ["city", "Encounter_Id"],
                    "special_category": ["missing_column"],
                    "non_personal": [
                        "patient_id",
                        "other_pseudonym",
                        "email_enc",
                        "phone",
                        "cost",
                    ],
                    "health": ["diagnosis_code"],
                },
            },
        ),
        _node("model.x.flat", {"on_erasure": "retain", "pii_columns": [], "classes": ["city"]}),
        _node(
            "model.x.unlisted",
            {"on_erasure": "retain", "pii_columns": [], "classes": {"non_personal": "city"}},
        ),
    ]
    columns = {
        "model.x.bad": [
            "encounter_id",
            "patient_id",
            "other_pseudonym",
            "email_enc",
            "phone",
            "city",
            "cost",
            "diagnosis_code",
            "admitted_at",
        ],
        "model.x.flat": ["city"],
        "model.x.unlisted": ["city"],
    }
    allowed = "direct_identifier, quasi_identifier, special_category, non_personal"
    found = {tuple(p) for p in _problems(jinja, nodes, columns)}
    assert found == {
        (
            "model.x.bad",
            "",
            f"meta.privacy.classes has an unknown class health (allowed: {allowed})",
        ),
        (
            "model.x.bad",
            "encounter_id",
            "is in two classes: direct_identifier and quasi_identifier",
        ),
        (
            "model.x.bad",
            "missing_column",
            "is classed special_category but the node has no such column",
        ),
        ("model.x.bad", "patient_id", "is the subject key but classed non_personal"),
        ("model.x.bad", "other_pseudonym", "is a pseudonym but classed non_personal"),
        ("model.x.bad", "email_enc", "is in pii_columns but classed non_personal"),
        ("model.x.bad", "phone", "looks like personal data but is not in pii_columns"),
        ("model.x.bad", "phone", "looks like personal data but is classed non_personal"),
        ("model.x.bad", "diagnosis_code", f"has no class in meta.privacy.classes ({allowed})"),
        ("model.x.bad", "admitted_at", f"has no class in meta.privacy.classes ({allowed})"),
        (
            "model.x.flat",
            "",
            f"meta.privacy.classes must map a class ({allowed}) to a list of columns",
        ),
        ("model.x.flat", "city", f"has no class in meta.privacy.classes ({allowed})"),
        (
            "model.x.unlisted",
            "",
            "meta.privacy.classes.non_personal must be a list of column names",
        ),
        ("model.x.unlisted", "city", f"has no class in meta.privacy.classes ({allowed})"),
    }


def test_a_node_without_classes_names_each_unclassed_column(jinja: Jinja) -> None:
    """An adopter's model from before the classes: each column is named, so the fix is
    clear, and nothing passes because the map is absent."""
    nodes = [_node("model.x.old", {"on_erasure": "retain", "pii_columns": []})]
    found = _problems(jinja, nodes, {"model.x.old": ["city", "patient_count"]})
    assert [column for _, column, _ in found] == ["city", "patient_count"]


def test_an_unbuilt_node_is_not_told_its_classed_columns_are_missing(jinja: Jinja) -> None:
    """A first `dbt build` runs the coverage test before the models exist: an adopter's
    yml documents few columns, so the classes name columns only the built table will
    show. Once built, a class naming a column the table lacks is reported."""
    node = _node(
        "model.crm.tickets",
        {
            "on_erasure": "retain",
            "pii_columns": [],
            "classes": {"quasi_identifier": ["channel"], "non_personal": ["tickets"]},
        },
    )
    call = (
        "{{ tojson(gdpr_lakehouse.privacy_contract_problems("
        + json.dumps([node])
        + ", "
        + json.dumps({"model.crm.tickets": ["channel"]})
        + ", %s)) }}"
    )
    assert json.loads(jinja.compile_inline(call % '["model.crm.tickets"]')) == []
    assert json.loads(jinja.compile_inline(call % "[]")) == [
        ["model.crm.tickets", "tickets", "is classed non_personal but the node has no such column"]
    ]


def test_a_retired_column_an_upgraded_table_keeps_needs_no_class(jinja: Jinja) -> None:
    """An upgraded table keeps a column an older version of the model built (macro
    retired_columns); meta.privacy.retired_columns names it. Any other unclassed column
    is still reported, and a retired one that looks like personal data too."""
    privacy = {
        "on_erasure": "retain",
        "pii_columns": [],
        "classes": {"non_personal": ["encounter_count"]},
        "retired_columns": ["last_ingested_at", "email"],
    }
    found = _problems(
        jinja,
        [_node("model.x.gold", privacy)],
        {"model.x.gold": ["encounter_count", "last_ingested_at", "email", "extra"]},
    )
    assert sorted(column for _, column, _ in found) == ["email", "email", "extra"]


def test_a_subject_type_no_feed_keys_is_a_contract_problem(jinja: Jinja) -> None:
    """Seam: a model whose subject_type matches no subject feed (a plural,
    a rename) was silently exempt from erasure: gdpr_erase erases a relation only for
    requests of its type, and no request is ever of a type the vault does not key.
    Guarantee: the contract check names it, with the types the feeds key."""
    privacy = {
        "subject_key": "patient_pseudonym",
        "subject_key_kind": "pseudonym",
        "on_erasure": "delete",
        "pii_columns": [],
        "classes": {"direct_identifier": ["patient_pseudonym"]},
    }
    nodes = [
        _node("model.x.known", privacy | {"subject_type": "patient"}),
        _node("model.x.plural", privacy | {"subject_type": "patients"}),
        _node("model.x.any", privacy),
    ]
    columns = {
        uid: ["patient_pseudonym"] for uid in ("model.x.known", "model.x.plural", "model.x.any")
    }
    call = (
        "{{ tojson(gdpr_lakehouse.privacy_contract_problems("
        + json.dumps(nodes)
        + ", "
        + json.dumps(columns)
        + ", subject_types=['patient', 'user'])) }}"
    )
    assert json.loads(jinja.compile_inline(call)) == [
        [
            "model.x.plural",
            "",
            "subject_type patients matches no subject feed (the vault keys: patient, user): "
            "no erasure request is ever of that type, so its rows would never be erased",
        ]
    ]


def test_gdpr_erase_refuses_a_plan_with_a_subject_type_no_feed_keys(jinja: Jinja) -> None:
    """The same seam at the operation: gdpr_erase stops before any write while a
    relation of its plan declares a type the vault keys no subject of."""
    from types import SimpleNamespace

    from python_jobs.macros import Macros

    def source(source_name: str, table: str) -> SimpleNamespace:
        return SimpleNamespace(schema=source_name, identifier=table)

    macros = jinja.macros({"source": source})
    assert macros.subject_types() == ["patient", "user"]
    plan = [
        {"relation_name": "silver.patients", "subject_type": "patient"},
        {"relation_name": "privacy.subject_keys", "subject_type": None},
    ]
    assert str(macros.assert_known_subject_types(plan, "gdpr_erase")).strip() == ""
    plan.append({"relation_name": "gold.patient_visits", "subject_type": "patients"})
    with pytest.raises(
        Macros.CompilerError, match=r"gold\.patient_visits declares subject_type patients"
    ):
        macros.assert_known_subject_types(plan, "gdpr_erase")


def test_a_withheld_column_the_node_does_not_have_is_a_contract_problem(jinja: Jinja) -> None:
    """A typo in withheld_from_access would export the column it meant to withhold."""
    privacy = {
        "subject_key": "subject_id",
        "on_erasure": "retain",
        "pii_columns": [],
        "withheld_from_access": ["placed_by", "placd_by"],
        "classes": {"direct_identifier": ["subject_id", "placed_by"]},
    }
    problems = _problems(
        jinja, [_node("model.x.holds", privacy)], {"model.x.holds": ["subject_id", "placed_by"]}
    )
    assert problems == [
        [
            "model.x.holds",
            "placd_by",
            "is in withheld_from_access but is no column of the node: it would be exported",
        ]
    ]
