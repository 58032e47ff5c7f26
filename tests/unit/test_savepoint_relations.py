"""The savepoints' copies as the jobs see them (purge, forensic_scan): relations of their
own with the privacy of what they copy; a registry row savepoint did not write, or one
copying a node the manifest no longer declares, stops the job (no JVM)."""

from __future__ import annotations

import pytest

from python_jobs.project import ProjectError
from python_jobs.relations import DeltaRelation, savepoint_relations

SILVER = DeltaRelation(
    unique_id="model.gdpr_lakehouse.silver_patients",
    name="silver_patients",
    schema="silver",
    identifier="patients",
    resource_type="model",
    privacy={"subject_key": "patient_pseudonym", "on_erasure": "delete"},
)


def _row(**changes: str) -> dict:
    row = {
        "savepoint_name": "month_end",
        "node": SILVER.unique_id,
        "savepoint_relation": "savepoints.silver__patients__month_end",
    }
    row.update(changes)
    return row


def test_a_copy_is_a_relation_with_the_privacy_of_what_it_copies() -> None:
    (copy,) = savepoint_relations([SILVER], [_row()])
    assert (copy.schema, copy.identifier, copy.resource_type) == (
        "savepoints",
        "silver__patients__month_end",
        "savepoint",
    )
    assert copy.privacy == SILVER.privacy
    assert copy.unique_id != SILVER.unique_id


@pytest.mark.parametrize(
    "row",
    [
        _row(savepoint_name="Month End"),
        _row(savepoint_relation="savepoints.x; drop table y"),
        _row(savepoint_relation="no_schema"),
    ],
)
def test_a_row_savepoint_did_not_write_stops_the_job(row: dict) -> None:
    with pytest.raises(ProjectError, match="did not write"):
        savepoint_relations([SILVER], [row])


def test_a_copy_of_a_node_no_longer_declared_stops_the_job() -> None:
    with pytest.raises(ProjectError) as raised:
        savepoint_relations([SILVER], [_row(node="model.gdpr_lakehouse.gone")])
    assert "release_savepoint --args '{model: gone, name: month_end}'" in str(raised.value)
