"""Attack class: a command run in a different key mode than the lakehouse was made in.

Whether data keys are stored wrapped by a key-encryption key (the envelope) is a
property of the lakehouse, recorded on the vault when it is created. A command that
forgets the flag, or passes the opposite one, used to compute keys and tombstone
hashes from the wrong bytes without failing.

Guarantees held here:
- the mode is recorded on the vault (table property gdpr_lakehouse.key_envelope) and
  every command reads it there;
- a command whose --vars key_envelope disagrees with the record refuses before any
  write, whatever the command (build, gdpr_erase, restore_version);
- a flag given as text ("false", "no") is refused, never read as truthy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.dbt_harness import DbtProject, latest_versions

pytestmark = pytest.mark.functional


def test_the_mode_is_recorded_on_the_vault(tables: list[Path], spark: SparkSession) -> None:
    """Guarantee: the vault says which mode its keys are in, and its keys agree. A
    lakehouse made without the var wraps its keys (the default), the tombstone key too."""
    rows = spark.sql("show tblproperties privacy.subject_keys").collect()
    recorded = {row["key"]: row["value"] for row in rows}.get("gdpr_lakehouse.key_envelope")
    assert recorded == "true"
    lengths = spark.sql("select distinct length(data_key) from privacy.subject_keys").collect()
    assert [row[0] for row in lengths] == [60]
    system = spark.sql("select distinct length(key_value) from privacy.system_keys").collect()
    assert [row[0] for row in system] == [60]


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--select", "bronze_patients"),
        ("run-operation", "gdpr_erase", "--args", json.dumps({"subject_ids": ["P0000002"]})),
        (
            "run-operation",
            "restore_version",
            "--args",
            json.dumps({"model": "silver_patients", "version": 0}),
        ),
    ],
    ids=["build", "gdpr_erase", "restore_version"],
)
def test_a_command_whose_mode_disagrees_refuses_before_any_write(
    tables: list[Path], dbt: DbtProject, command: tuple[str, ...]
) -> None:
    """Attack: run a command with --vars '{key_envelope: false}' on a lakehouse whose
    vault was made with the envelope. Guarantee: refused, naming the recorded mode,
    and no table changed (no request claimed, no tombstone hashed with a wrong key)."""
    before = latest_versions(tables)
    success, errors = dbt.invoke_errors(*command, "--vars", json.dumps({"key_envelope": False}))
    assert not success, f"dbt {command[0]} ran in the wrong key mode"
    assert "key_envelope" in errors and "recorded" in errors, errors
    assert latest_versions(tables) == before


@pytest.mark.parametrize(
    ("name", "value"),
    [("key_envelope", "false"), ("vacuum_on_build", "no"), ("vacuum_allow_short_retention", 0)],
)
def test_a_flag_given_as_text_is_refused(
    tables: list[Path], dbt: DbtProject, name: str, value: object
) -> None:
    """Attack: --vars '{vacuum_on_build: "false"}' (a quoted false is truthy in Jinja).
    Guarantee: refused with what is allowed; nothing built."""
    before = latest_versions(tables)
    success, errors = dbt.invoke_errors(
        "run", "--select", "bronze_patients", "--vars", json.dumps({name: value})
    )
    assert not success, f"{name}={value!r} was accepted"
    assert name in errors and "true or false" in errors, errors
    assert latest_versions(tables) == before
