"""Attack class: the system key that tombstone hashes depend on is lost, duplicated or
impersonated.

Every ingestion, rebuild and the vault itself recognise an erased subject only by the
keyed hash in privacy.erasure_tombstones, and that hash is keyed by the lakehouse's
tombstone key. If the key is gone and a check quietly compared against NULL, every
erased subject still in the landing zone would be ingested again.

Guarantees held here:
- the tombstone key lives apart from subject keys (privacy.system_keys): never erased,
  never shredded, never rebuilt, with history to recover it;
- a missing or duplicated system key stops every build (fail closed), and bronze keeps
  no erased subject's rows, incremental or --full-refresh;
- the key is recovered with Delta's RESTORE of privacy.system_keys, and the erased
  subject stays out;
- reserved ids (the system's own, `__...`) are refused as subject ids whatever
  var subject_id_pattern says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.dbt_harness import (
    DbtProject,
    bronze_encounter_counts,
    latest_versions,
    record_ref,
)

pytestmark = pytest.mark.functional


def _count(spark: SparkSession, table: str, column: str, value: str) -> int:
    return spark.sql(f"select count(*) from {table} where {column} = '{value}'").first()[0]


def _encounters(spark: SparkSession, refs: list[str]) -> int:
    """The patient's encounters in bronze, found by the ids the hospital sent as bronze
    stores them (hashed under the tombstone key: computed while the key was there)."""
    listed = ", ".join(f"'{ref}'" for ref in refs)
    return spark.sql(
        f"select count(*) from bronze.encounters where encounter_ref in ({listed})"
    ).first()[0]


@pytest.fixture(scope="module")
def erased_patient(tables: list[Path], dbt: DbtProject, spark: SparkSession) -> list[str]:
    """A patient with encounters in bronze, erased (its events stay in landing: no purge):
    their encounters' ids as bronze stores them."""
    patient_id = spark.sql(
        f"select patient_id from ({bronze_encounter_counts()}) "
        "order by encounters desc, patient_id desc limit 1"
    ).first()[0]
    refs = [
        row[0]
        for row in spark.sql(
            f"select {record_ref('encounter_id')} from landing.encounters "
            f"where patient_id = '{patient_id}'"
        ).collect()
    ]
    assert refs and _encounters(spark, refs) > 0
    dbt.operation("gdpr_erase", {"subject_ids": [patient_id], "reason": "adversarial suite"})
    assert _encounters(spark, refs) == 0
    return refs


def _system_key_table(spark: SparkSession) -> str:
    assert spark.catalog.tableExists("privacy.system_keys"), (
        "the tombstone key must live in privacy.system_keys, apart from subject keys"
    )
    return "privacy.system_keys"


def _version(spark: SparkSession, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def test_a_lost_tombstone_key_stops_every_build_and_resurrects_no_one(
    erased_patient: list[str], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: delete the tombstone key (an operator's slip, or on purpose), then build,
    incrementally and with --full-refresh. Guarantee: both stop with an error that names
    the missing key; the erased patient's encounters, still in landing, stay out of
    bronze; RESTORE of privacy.system_keys brings the key back and builds pass again."""
    # wherever it lives: the vault's reserved row (the old layout), the system key table
    spark.sql("delete from privacy.subject_keys where subject_id = '__tombstone__'")
    table = "privacy.system_keys"
    before = _version(spark, table) if spark.catalog.tableExists(table) else None
    if before is not None:
        spark.sql(f"delete from {table}")
    # nothing new landed: an empty batch, which Spark prunes the ingestion filter (and
    # the key it reads) away for; the build must stop all the same
    dbt.invoke("run", "--select", "bronze_landing_batch")
    try:
        for args in (("run",), ("run", "--full-refresh")):
            success, errors = dbt.invoke_errors(*args, "--select", "bronze_encounters")
            assert _encounters(spark, erased_patient) == 0, (
                f"dbt {' '.join(args)} without the tombstone key brought the erased patient back"
            )
            assert not success, f"dbt {' '.join(args)} passed without the tombstone key"
            assert "system_keys" in errors and "tombstone" in errors, errors
    finally:
        if before is not None:
            spark.sql(f"restore table {table} to version as of {before}")
    dbt.invoke("run", "--select", "bronze_encounters")
    assert _encounters(spark, erased_patient) == 0


def test_a_duplicated_system_key_stops_the_build(
    erased_patient: list[str], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: plant a second tombstone key (a subquery that returns two keys must not
    pick one). Guarantee: the build stops; nothing is ingested under either key."""
    table = _system_key_table(spark)
    before = _version(spark, table)
    spark.sql(
        f"insert into {table} select key_name, unhex(sha2(key_name, 256)), created_at from {table}"
    )
    dbt.invoke("run", "--select", "bronze_landing_batch")  # an empty batch, as above
    try:
        success, errors = dbt.invoke_errors("run", "--select", "bronze_encounters")
        assert not success, "dbt run passed with two tombstone keys"
        assert "system_keys" in errors, errors
        assert _encounters(spark, erased_patient) == 0
    finally:
        spark.sql(f"restore table {table} to version as of {before}")


def test_the_system_key_survives_erasure_purge_and_full_refresh(
    erased_patient: list[str], dbt: DbtProject, spark: SparkSession
) -> None:
    """Guarantee: the system key table is never rebuilt and is no subject's: a
    --full-refresh of it and an erasure leave its one key as it was."""
    table = _system_key_table(spark)
    key = spark.sql(f"select hex(key_value) from {table} where key_name = 'tombstone'").collect()
    assert len(key) == 1
    dbt.invoke("run", "--full-refresh", "--select", "privacy_system_keys")
    again = spark.sql(f"select hex(key_value) from {table} where key_name = 'tombstone'").collect()
    assert again == key
    graph = dbt.manifest()["nodes"]["model.gdpr_lakehouse.privacy_system_keys"]
    assert graph["config"]["full_refresh"] is False
    assert graph["config"]["meta"]["privacy"]["role"] == "system"


@pytest.mark.parametrize("reserved", ["__tombstone__", "__anything"])
def test_reserved_ids_are_refused_whatever_the_vars_say(
    tables: list[Path], dbt: DbtProject, reserved: str
) -> None:
    """Attack: widen var subject_id_pattern so the system's own id passes, and ask to
    erase it (erasing the system key would unkey every tombstone). Guarantee: refused
    with a clear error, no table changed."""
    before = latest_versions(tables)
    for macro in ("request_erasure", "gdpr_erase"):
        success, errors = dbt.invoke_errors(
            "run-operation",
            macro,
            "--args",
            json.dumps({"subject_ids": [reserved]}),
            "--vars",
            json.dumps({"subject_id_pattern": "^.{1,64}$"}),
        )
        assert not success, f"{macro} accepted the reserved id {reserved}"
        assert "reserved" in errors, errors
    assert latest_versions(tables) == before
