"""Var k_anonymity, checked where it is read (plain Jinja: no JVM). The aggregates that
use it run end to end in tests/functional/test_aggregates.py."""

from __future__ import annotations

import pytest

from python_jobs.macros import Macros


def _macros(**declared: object) -> Macros:
    return Macros({"var": lambda name, default=None: declared.get(name, default)})


@pytest.mark.parametrize(
    ("declared", "k"), [({}, 5), ({"k_anonymity": 2}, 2), ({"k_anonymity": 1000}, 1000)]
)
def test_a_number_of_people_is_accepted(declared: dict, k: int) -> None:
    assert _macros(**declared).k_anonymity() == k
    assert _macros(**declared).validate_k_anonymity() == ""


@pytest.mark.parametrize("value", [1, 0, -5, 1001, 4.5, "5", True, None, [5]])
def test_anything_else_is_refused_with_what_is_allowed(value: object) -> None:
    with pytest.raises(Macros.CompilerError, match="whole number of data subjects from 2 to 1000"):
        _macros(k_anonymity=value).validate_k_anonymity()


def _bronze(held: list[str], incremental: bool = True) -> Macros:
    from types import SimpleNamespace

    adapter = SimpleNamespace(
        quote=lambda name: f"`{name}`",
        get_columns_in_relation=lambda relation: [SimpleNamespace(name=n) for n in held],
    )
    macros = Macros(
        {
            "adapter": adapter,
            "execute": True,
            "is_incremental": lambda: incremental,
            "this": "bronze.encounters",
        }
    )
    adapter.dispatch = macros._dispatch
    return macros


def test_a_table_an_older_version_kept_in_clear_is_refused_with_the_rebuild() -> None:
    """bronze.encounters now encrypts the diagnosis and the cost: an incremental run
    over a table that still holds them in clear would merge rows without them."""
    fix = "dbt build --full-refresh --select bronze_encounters+"
    with pytest.raises(
        Macros.CompilerError,
        match=r"kept diagnosis_code, cost in clear; rebuild it with: dbt build",
    ):
        _bronze(["encounter_id", "Diagnosis_Code", "cost"]).refuse_clear_columns(
            ["diagnosis_code", "cost"], fix
        )
    assert (
        _bronze(["encounter_id", "diagnosis_code_enc"]).refuse_clear_columns(
            ["diagnosis_code"], fix
        )
        == ""
    )
    # a first run or a full refresh builds the table anew
    assert (
        _bronze(["diagnosis_code"], incremental=False).refuse_clear_columns(["diagnosis_code"], fix)
        == ""
    )
