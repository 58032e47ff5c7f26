"""The key mode is read from the vault once per dbt invocation (no JVM).

Every encrypt, unwrap and tombstone hash asks for the lakehouse's key mode
(macro key_envelope). It was read from the vault every time: a single-subject
`gdpr_erase` issued 147 `show tblproperties privacy.subject_keys`, a third of its
statements (bench/erasure.py, dbt.log). The project's real macros are rendered in plain
Jinja with a fake warehouse that records each statement and answers the vault's
properties.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from python_jobs import macros as engine_macros
from tests.dbt_harness import DbtProject


class Vault:
    """A warehouse whose vault records `mode` (None: records nothing, holds no key)."""

    def __init__(self, mode: str | None) -> None:
        self.mode = mode
        self.statements: list[str] = []

    def run_query(self, sql: str) -> Any:
        self.statements.append(str(sql))
        if str(sql).startswith("show tblproperties"):
            return [("gdpr_lakehouse.key_envelope", self.mode)] if self.mode else []
        return SimpleNamespace(columns=[SimpleNamespace(values=lambda: [])])


@pytest.fixture(scope="module")
def graph(dbt: DbtProject) -> dict[str, Any]:
    dbt.invoke("parse")
    manifest = dbt.manifest()
    return {"nodes": manifest["nodes"], "sources": manifest["sources"]}


def _render(graph: dict, vault: Vault, invocation: str, asked: bool | None = None) -> Any:
    def get_relation(database: Any = None, schema: Any = None, identifier: Any = None) -> Any:
        return engine_macros._Relation(schema, identifier, database)

    macros = engine_macros.Macros(
        {
            "execute": True,
            "graph": graph,
            "invocation_id": invocation,
            "run_query": vault.run_query,
            "flags": SimpleNamespace(WHICH="run-operation"),
            "var": lambda name, default=None: asked if name == "key_envelope" else default,
            "adapter": SimpleNamespace(
                dispatch=lambda name, namespace=None: macros._dispatch(name, namespace),
                get_relation=get_relation,
                quote=lambda name: f"`{name}`",
            ),
        }
    )
    return macros


def _reads(vault: Vault) -> int:
    return sum(s.startswith("show tblproperties") for s in vault.statements)


def test_the_mode_is_read_once_per_invocation(graph: dict) -> None:
    vault = Vault("true")
    macros = _render(graph, vault, "invocation-1")
    assert [macros.key_envelope() for _ in range(5)] == [True] * 5
    assert _reads(vault) == 1
    # the next command (another invocation) reads the vault again
    vault.mode = "false"
    assert _render(graph, vault, "invocation-2").key_envelope() is False
    assert _reads(vault) == 2


def test_a_var_that_disagrees_is_refused_on_every_call(graph: dict) -> None:
    vault = Vault("false")
    macros = _render(graph, vault, "invocation-3", asked=True)
    for _ in range(2):  # the recorded mode kept for the invocation is still compared
        with pytest.raises(engine_macros.Macros.CompilerError, match="recorded"):
            macros.key_envelope()
    assert _reads(vault) == 1


def test_no_recorded_mode_is_not_kept(graph: dict) -> None:
    """A vault with no mode yet (a first build, before its post-hook records it) is read
    again at the next call, so the build sees the mode once it is recorded."""
    vault = Vault(None)
    macros = _render(graph, vault, "invocation-4")
    assert macros.key_envelope() is True  # a new lakehouse wraps its keys by default
    vault.mode = "false"
    assert macros.key_envelope() is False
    assert _reads(vault) == 2
