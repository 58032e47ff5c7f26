"""Attack class: a command runs inside the window a crash left open.

A restore_version that dies between its RESTORE and the re-erasure leaves the erased
subject back in the restored table, with the restore log saying `restoring`. Only the
next restore_version or gdpr_erase healed that; a `dbt snapshot` or `dbt build` in
between copied the resurrected subject into snapshots.patients, which the heal never
touched.

Guarantee held here: every dbt command that runs models, snapshots, seeds or tests heals
an unsettled restore first (on-run-start), and the heal sweeps every relation of the
erasure plan, not only the restored one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.dbt_harness import DbtProject, bronze_encounter_counts, landed_encounters_of

pytestmark = pytest.mark.functional


def _count(spark: SparkSession, table: str, pseudonym: str) -> int:
    return spark.sql(
        f"select count(*) from {table} where patient_pseudonym = '{pseudonym}'"
    ).first()[0]


def _unsettled(spark: SparkSession) -> int:
    return spark.sql("select count(*) from privacy.restore_log where status = 'restoring'").first()[
        0
    ]


@pytest.fixture(scope="module")
def crashed_restore(tables: list[Path], dbt: DbtProject, spark: SparkSession) -> str:
    """A patient in silver, erased; then a restore of silver.patients to before the
    erasure that crashed right after its RESTORE. Returns the patient's pseudonym."""
    row = spark.sql(
        "select s.patient_pseudonym, k.subject_id from silver.patients s "
        "join privacy.subject_keys k on k.subject_pseudonym = s.patient_pseudonym "
        "order by k.subject_id desc limit 1"
    ).first()
    pseudonym, patient_id = row[0], row[1]
    before = spark.sql("describe history silver.patients limit 1").first()["version"]
    dbt.operation("gdpr_erase", {"subject_ids": [patient_id], "reason": "adversarial suite"})
    success, errors = dbt.invoke_errors(
        "run-operation",
        "restore_version",
        "--args",
        json.dumps({"model": "silver_patients", "version": before}),
        "--vars",
        json.dumps({"gdpr_lakehouse_fault": "after_restore"}),
    )
    assert not success and "fault injected" in errors
    assert _count(spark, "silver.patients", pseudonym) == 1, "the crash state"
    assert _unsettled(spark) == 1
    return pseudonym


def test_a_snapshot_inside_the_window_heals_first_and_copies_no_one(
    crashed_restore: str, dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: `dbt snapshot` while the restore is unsettled. Guarantee: the run heals
    first; the erased patient is neither in silver.patients nor in the snapshot, and
    the restore log is settled."""
    dbt.invoke("snapshot")
    assert _count(spark, "silver.patients", crashed_restore) == 0
    assert _count(spark, "snapshots.patients", crashed_restore) == 0
    assert _unsettled(spark) == 0


def test_a_hold_placed_on_a_crashed_batch_is_reported_and_the_erasure_finished(
    tables: list[Path], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: gdpr_erase crashes right after writing the tombstone; a legal hold is
    placed on the subject; gdpr_erase runs again. Guarantee: never a silent `held` over
    a half-done erasure: the hold is reported as too late and the batch is finished
    (the subject's rows gone, the request erased)."""
    patient_id = spark.sql(
        f"select patient_id from ({bronze_encounter_counts()}) "
        "order by encounters desc, patient_id limit 1 offset 3"
    ).first()[0]
    success, errors = dbt.invoke_errors(
        "run-operation",
        "gdpr_erase",
        "--args",
        json.dumps({"subject_ids": [patient_id]}),
        "--vars",
        json.dumps({"erasure_crash_after": "tombstone"}),
    )
    assert not success and "crash injected" in errors
    dbt.operation("legal_hold", {"subject_ids": [patient_id], "reason": "case 2026-17"})
    dbt.operation("gdpr_erase")
    status = spark.sql(
        f"select status from privacy.erasure_requests where subject_id = '{patient_id}'"
    ).collect()
    assert [row[0] for row in status] == ["erased"]
    assert (
        spark.sql(
            f"select count(*) from bronze.encounters where {landed_encounters_of(patient_id)}"
        ).first()[0]
        == 0
    )
    dbt.operation("legal_hold", {"subject_ids": [patient_id], "release": True})
