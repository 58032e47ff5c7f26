"""Every operation refuses hostile input before it issues a single statement (no JVM).

The project's real macros are rendered in plain Jinja (python_jobs/macros.py
namespace) with a fake warehouse: `run_query` records each statement instead of
running it, `adapter.get_relation` finds every relation, and `graph` is the project's
own, parsed by dbt. Each case of the hostile input catalogue must raise an error that
says what was wrong, with no statement recorded. Cases whose answer depends on the
lakehouse's state (versions, times) are checked on real Spark by
tests/functional/test_hostile_input.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from python_jobs import macros as engine_macros
from tests.dbt_harness import DbtProject
from tests.hostile_catalogue import CATALOGUE, ID, NEEDS_STATE


class _Table:
    """What run_query returns when nothing is there: no rows."""

    rows: ClassVar[list] = []
    columns: ClassVar[list] = []

    def __len__(self) -> int:
        return 0


class FakeWarehouse:
    def __init__(self, graph: dict[str, Any]) -> None:
        self.statements: list[str] = []
        self.graph = graph

    def run_query(self, sql: str) -> _Table:
        self.statements.append(str(sql))
        return _Table()

    def columns(self, relation: Any) -> list[SimpleNamespace]:
        """A relation's columns as its model declares them (the tables as built)."""
        for node in self.graph["nodes"].values():
            if (node.get("schema"), node.get("alias") or node.get("name")) == (
                relation.schema,
                relation.identifier,
            ):
                return [SimpleNamespace(name=name) for name in node.get("columns") or {}]
        return []

    def context(self) -> dict[str, Any]:
        def get_relation(database: Any = None, schema: Any = None, identifier: Any = None) -> Any:
            return engine_macros._Relation(schema, identifier, database)

        return {
            "execute": True,
            "graph": self.graph,
            "run_query": self.run_query,
            "var": lambda name, default=None: default,
            "env_var": lambda name, default="": default,
            "flags": SimpleNamespace(WHICH="run-operation"),
            "run_started_at": datetime(2026, 11, 25, tzinfo=UTC),
            "local_md5": lambda text: hashlib.md5(text.encode()).hexdigest(),
            "log": lambda *args, **kwargs: "",
            "print": lambda *args, **kwargs: "",
            "project_name": "gdpr_lakehouse",
            "fromjson": json.loads,
            "tojson": json.dumps,
            "adapter": SimpleNamespace(
                dispatch=lambda name, namespace=None: self.macros._dispatch(name, namespace),
                get_relation=get_relation,
                get_columns_in_relation=lambda relation: self.columns(relation),
            ),
        }


@pytest.fixture(scope="module")
def graph(dbt: DbtProject) -> dict[str, Any]:
    dbt.invoke("parse")
    manifest = dbt.manifest()
    return {"nodes": manifest["nodes"], "sources": manifest["sources"]}


@pytest.fixture(scope="module")
def rendered(graph: dict[str, Any]) -> FakeWarehouse:
    fake = FakeWarehouse(graph)
    fake.macros = engine_macros.Macros(fake.context())
    return fake


@pytest.fixture()
def warehouse(rendered: FakeWarehouse) -> FakeWarehouse:
    rendered.statements.clear()
    return rendered


FAST = [case for case in CATALOGUE if case not in NEEDS_STATE]


@pytest.mark.parametrize(
    ("macro", "args", "message"),
    FAST,
    ids=[f"{i:02d}-{case[0]}" for i, case in enumerate(FAST)],
)
def test_hostile_input_is_refused_before_any_statement(
    warehouse: FakeWarehouse, macro: str, args: dict, message: str
) -> None:
    with pytest.raises(engine_macros.Macros.CompilerError) as refused:
        getattr(warehouse.macros, macro)(**args)
    assert message in str(refused.value)
    assert warehouse.statements == [], f"{macro} {args} issued SQL before refusing"


@pytest.mark.parametrize(
    ("macro", "args", "sent"),
    [
        ("request_erasure", {"subject_ids": [ID], "reason": "the patient's letter"}, ID),
        ("legal_hold", {"subject_ids": [ID], "reason": "litigation 2026-17"}, ID),
        ("request_access", {"subject_ids": [ID]}, ID),
        ("restrict_processing", {"subject_ids": [ID], "reason": "accuracy contested"}, ID),
        # first the key mode the vault records (fail closed on a mismatch)
        ("gdpr_erase", {"subject_ids": [ID]}, "show tblproperties privacy.subject_keys"),
        ("restore_version", {"model": "silver_patients", "version": 1}, "show tblproperties"),
    ],
)
def test_the_fake_warehouse_sees_what_valid_input_runs(
    warehouse: FakeWarehouse, macro: str, args: dict, sent: str
) -> None:
    # the control for the test above: a valid call reaches the warehouse
    # the fake answers no query; what matters is that one was sent
    with contextlib.suppress(Exception):
        getattr(warehouse.macros, macro)(**args)
    assert sent in "\n".join(warehouse.statements), warehouse.statements


@pytest.mark.parametrize(
    ("macro", "args", "column"),
    [
        ("legal_hold", {"subject_ids": [ID], "reason": "case"}, "review_on"),
        ("restrict_processing", {"subject_ids": [ID], "reason": "contested"}, "review_on"),
    ],
)
def test_a_control_table_built_by_an_older_version_is_refused_until_rebuilt(
    warehouse: FakeWarehouse, monkeypatch: pytest.MonkeyPatch, macro: str, args: dict, column: str
) -> None:
    """A column this version added and the table has not got yet: a clear error naming
    the model to run, before any write (not Delta's unresolved-expression error)."""
    declared = warehouse.columns
    monkeypatch.setattr(
        warehouse,
        "columns",
        lambda relation: [c for c in declared(relation) if c.name != column],
    )
    with pytest.raises(Exception, match=f"has no column {column} yet"):
        getattr(warehouse.macros, macro)(**args)
    assert not [
        s
        for s in warehouse.statements
        if s.lstrip().lower().startswith(("merge", "update", "insert"))
    ]


def test_the_catalogue_covers_every_operation() -> None:
    assert len(CATALOGUE) >= 30
    assert {case[0] for case in FAST} == {
        "request_erasure",
        "extend_deadline",
        "gdpr_erase",
        "legal_hold",
        "restore_version",
        "savepoint",
        "release_savepoint",
        "table_history",
        "request_access",
        "restrict_processing",
    }
