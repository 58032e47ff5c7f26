"""A read a node repeats is asked once per node (macro _node_memo), and no more widely.

The engine's macros in plain Jinja (python_jobs.macros) with a fake warehouse that
records each statement. Two reads are kept per node's context: the tombstone key check
(_require_tombstone_key, before every tombstone filter) and this build's landing files
(landing_batch_predicate, one query for every entity). Each is asked again by another
node, on every call outside a node (an operation or a hook, which write between their
reads), and on every call of the node that writes what was read; a check that failed
is never remembered, and a path the batch holds that SQL cannot take is refused on
every call.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from python_jobs.macros import Macros, _Relation

KEYS = _Relation("privacy", "system_keys")
BATCH = _Relation("bronze", "landing_batch")
WRAPPED = 60  # a wrapped key's length: the suite's lakehouses wrap their keys


class _Answer:
    """A run_query result: rows by position, and columns[0].values()."""

    def __init__(self, rows: list[tuple]) -> None:
        self.rows = rows
        self.columns = [SimpleNamespace(values=lambda: [row[0] for row in rows])]

    def __iter__(self):
        return iter(self.rows)


class Warehouse:
    def __init__(self, keys: tuple[int, int] = (1, 0), files: list[tuple] | None = None) -> None:
        self.keys = keys  # (tombstone keys, of them not in this lakehouse's mode)
        self.files = files or []  # (entity, path) of the batch
        self.statements: list[str] = []

    def run_query(self, sql: str) -> _Answer:
        self.statements.append(sql)
        if "from privacy.system_keys" in sql:
            return _Answer([self.keys])
        if sql.startswith("select entity, file_path"):
            return _Answer(sorted(self.files))
        entity = sql.split("entity = '")[1].split("'")[0]
        return _Answer(sorted((path,) for kind, path in self.files if kind == entity))

    def macros(self, model: dict | None) -> Macros:
        adapter = SimpleNamespace(
            quote=lambda name: f"`{name}`",
            get_relation=lambda database=None, schema=None, identifier=None: _Relation(
                schema, identifier, database
            ),
        )
        context: dict[str, Any] = {
            "adapter": adapter,
            "execute": True,
            "flags": SimpleNamespace(WHICH="build"),
            "run_query": self.run_query,
            "ref": lambda name: {"bronze_landing_batch": BATCH}.get(name, _Relation("x", name)),
        }
        if model is not None:
            context["model"] = model
        macros = Macros(context)
        adapter.dispatch = macros._dispatch
        # the key mode as the vault records it (read once per invocation elsewhere)
        macros._macros["key_envelope"] = lambda: True
        return macros

    def key_checks(self) -> int:
        return sum("from privacy.system_keys" in sql for sql in self.statements)


def _node(name: str, schema: str = "bronze", kind: str = "model") -> dict:
    return {
        "resource_type": kind,
        "unique_id": f"{kind}.gdpr_lakehouse.{name}",
        "alias": name,
        "schema": schema,
    }


def test_a_node_checks_the_tombstone_key_once_and_the_next_node_again() -> None:
    warehouse = Warehouse()
    for node in (_node("cdc_deletes"), _node("patients", "silver"), _node("x", "y", "test")):
        macros = warehouse.macros(node)
        for _ in range(4):
            macros._require_tombstone_key(KEYS)
    assert warehouse.key_checks() == 3


@pytest.mark.parametrize(
    "model",
    [
        None,  # no node: an operation or a hook
        {"resource_type": "macro", "unique_id": "macro.gdpr_lakehouse.gdpr_erase"},
        {"resource_type": "operation", "unique_id": "operation.gdpr_lakehouse.on-run-start-4"},
        _node("system_keys", "privacy"),  # the node that writes the key
    ],
    ids=["no node", "operation", "hook", "the key's own model"],
)
def test_outside_a_node_or_in_the_key_s_own_model_every_call_checks(model: dict | None) -> None:
    warehouse = Warehouse()
    macros = warehouse.macros(model)
    for _ in range(3):
        macros._require_tombstone_key(KEYS)
    assert warehouse.key_checks() == 3


@pytest.mark.parametrize(
    ("keys", "error"),
    [((0, 0), "holds 0 tombstone keys"), ((2, 0), "holds 2 tombstone keys"), ((1, 1), "unwrapped")],
)
def test_a_failed_key_check_is_never_remembered(keys: tuple[int, int], error: str) -> None:
    warehouse = Warehouse(keys)
    macros = warehouse.macros(_node("cdc_deletes"))
    for attempt in (1, 2):
        with pytest.raises(Macros.CompilerError, match=error):
            macros._require_tombstone_key(KEYS)
        assert warehouse.key_checks() == attempt


FILES = [
    ("patients", "file:/lake/landing/patients/b.parquet"),
    ("patients", "file:/lake/landing/patients/a.parquet"),
    ("users", "file:/lake/landing/users/a.parquet"),
]


def test_a_node_reads_every_entity_s_batch_files_in_one_query() -> None:
    warehouse = Warehouse(files=FILES)
    macros = warehouse.macros(_node("subject_keys", "privacy"))
    predicates = {
        entity: macros.landing_batch_predicate(entity)
        for entity in ("patients", "users", "encounters", "clicks", "orders")
    }
    assert predicates == {
        "patients": "_metadata.file_path in ('file:/lake/landing/patients/a.parquet', "
        "'file:/lake/landing/patients/b.parquet')",
        "users": "_metadata.file_path in ('file:/lake/landing/users/a.parquet')",
        "encounters": "false",
        "clicks": "false",
        "orders": "false",
    }
    assert len(warehouse.statements) == 1
    # the next node asks again, and so does a call outside a node, each call
    warehouse.macros(_node("cdc_deletes")).landing_batch_predicate("users", "events")
    outside = warehouse.macros(None)
    for entity in ("patients", "users"):
        assert outside.landing_batch_predicate(entity) == predicates[entity]
    assert len(warehouse.statements) == 4
    # and so does the node that writes the batch
    batch_node = warehouse.macros(_node("landing_batch"))
    for _ in range(2):
        batch_node.landing_batch_predicate("patients")
    assert len(warehouse.statements) == 6


def test_a_path_the_batch_holds_that_sql_cannot_take_is_refused_on_every_call() -> None:
    warehouse = Warehouse(files=[*FILES, ("users", "file:/lake/landing/users/it's.parquet")])
    macros = warehouse.macros(_node("subject_keys", "privacy"))
    assert macros.landing_batch_predicate("patients").startswith("_metadata.file_path in (")
    for _ in range(2):
        with pytest.raises(Macros.CompilerError, match="characters outside the allowed set"):
            macros.landing_batch_predicate("users")
    assert len(warehouse.statements) == 1
