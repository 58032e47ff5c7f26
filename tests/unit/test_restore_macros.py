"""Unit layer for restore_version: how far back RESTORE reaches (from a history), the
re-erasure statement, argument checks. Rendered in plain Jinja (tests/jinja_harness.py),
no dbt, no warehouse connection, no JVM.
"""

from __future__ import annotations

import pytest

from tests.jinja_harness import Jinja

# A history (newest first) as delta_history() returns it; minutes after 10:00.
HISTORY = """
{%- set t = modules.datetime.datetime(2026, 11, 21, 10, 0, 0) -%}
{%- set m = modules.datetime.timedelta(minutes=1) -%}
{%- set history = [] -%}
{%- for version, minute, operation, metrics, parameters in ROWS -%}
    {%- do history.insert(0, {'version': version, 'timestamp': t + m * minute, 'operation': operation,
        'metrics': metrics, 'parameters': parameters, 'tag': {}}) -%}
{%- endfor -%}
"""


def _oldest(jinja: Jinja, rows: str) -> int:
    sql = HISTORY.replace("ROWS", rows) + "{{ gdpr_lakehouse._oldest_restorable(history) }}"
    return int(jinja.compile_inline(sql))


def test_nothing_vacuumed_reaches_the_first_version(jinja: Jinja) -> None:
    rows = "[(0, 0, 'WRITE', {'numOutputRows': 5}, '{mode: Append}'), (1, 5, 'MERGE', {'numTargetFilesRemoved': 1}, '')]"
    assert _oldest(jinja, rows) == 0


def test_vacuum_cuts_off_versions_before_the_last_file_removal_past_its_retention(
    jinja: Jinja,
) -> None:
    # files removed at v2 (10:10) and v4 (10:40); VACUUM at 11:00 keeping 30 minutes:
    # only v2's removed files are gone, so v2 is the oldest restorable version
    rows = (
        "[(0, 0, 'WRITE', {'numOutputRows': 5}, '{mode: Append}'),"
        " (1, 5, 'WRITE', {'numOutputRows': 5}, '{mode: Append}'),"
        " (2, 10, 'DELETE', {'numRemovedFiles': 1, 'numDeletedRows': 2}, ''),"
        " (3, 20, 'WRITE', {'numOutputRows': 5}, '{mode: Append}'),"
        " (4, 40, 'MERGE', {'numTargetFilesRemoved': 2}, ''),"
        " (5, 60, 'VACUUM START', {}, '{specifiedRetentionMillis: 1800000, defaultRetentionMillis: 604800000}'),"
        " (6, 60, 'VACUUM END', {'numDeletedFiles': 1}, '{status: COMPLETED}')]"
    )
    assert _oldest(jinja, rows) == 2


def test_zero_hour_vacuum_after_reorg_leaves_only_the_reorg_onwards(jinja: Jinja) -> None:
    rows = (
        "[(0, 0, 'WRITE', {'numOutputRows': 5}, '{mode: Append}'),"
        " (1, 1, 'MERGE', {'numTargetDeletionVectorsAdded': 1}, ''),"
        " (2, 2, 'REORG', {'numRemovedFiles': 1, 'numAddedFiles': 1}, ''),"
        " (3, 3, 'VACUUM START', {}, '{specifiedRetentionMillis: 0, defaultRetentionMillis: 604800000}'),"
        " (4, 3, 'VACUUM END', {'numDeletedFiles': 1}, '')]"
    )
    assert _oldest(jinja, rows) == 2


def test_default_retention_keeps_recent_versions(jinja: Jinja) -> None:
    rows = (
        "[(0, 0, 'CREATE OR REPLACE TABLE AS SELECT', {'numOutputRows': 5}, ''),"
        " (1, 1, 'CREATE OR REPLACE TABLE AS SELECT', {'numOutputRows': 5}, ''),"
        " (2, 2, 'VACUUM START', {}, '{defaultRetentionMillis: 604800000}')]"
    )
    assert _oldest(jinja, rows) == 0


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-11-21 10:00:00", True),
        ("2026-11-21T10:00:00.123Z", True),
        ("2026-11-21", True),
        ("2026-11-21 10:00+01:00", True),
        ("yesterday", False),
        ("2026-11-21 10:00:00'; drop table x", False),
        ("21/11/2026", False),
    ],
)
def test_timestamp_text_is_checked_before_any_sql(jinja: Jinja, value: str, ok: bool) -> None:
    success, errors = jinja.compile_errors(
        "{{ gdpr_lakehouse._validate_timestamp_text(" + repr(value) + ") }}",
    )
    assert success == ok
    if not ok:
        assert "is not a timestamp" in errors


def test_reerasure_matches_every_tombstone_in_the_relations_key(jinja: Jinja) -> None:
    sql = jinja.compile_inline(
        "{% set ctx = {'tombstones': 'privacy.erasure_tombstones', 'requests': 'privacy.erasure_requests',"
        " 'vault': 'privacy.subject_keys', 'system_keys': 'privacy.system_keys'} %}"
        "{% for s in gdpr_lakehouse.erasure_plan(savepoints=false) if s.relation_name in ('bronze.patients', 'silver.patients') %}"
        "{{ gdpr_lakehouse._erase_merge_sql(s, gdpr_lakehouse._erased_keys_sql(s, ctx)) }}@@{% endfor %}"
    )
    bronze, silver = (part.strip() for part in sql.split("@@") if part.strip())
    # source ids: the requests whose keyed hash is tombstoned
    assert bronze.startswith("merge into bronze.patients as target")
    assert "inner join privacy.erasure_tombstones" in bronze and "gdpr_keyed_hash(" in bronze
    assert "when matched then delete" in bronze
    # pseudonyms: the keyed hash of each row's pseudonym against the tombstones' (they
    # never hold the pseudonym itself)
    assert "on tombstones.pseudonym_hash" in silver and "gdpr_keyed_hash(" in silver
    assert "subject_pseudonym" not in silver
    assert "on target.`patient_pseudonym` = erase.erase_key" in silver


def test_change_feed_reach_after_a_vacuum(jinja: Jinja) -> None:
    """A zero-hour VACUUM at 10:03 deletes the change files of every commit before it:
    a Change Data Feed consumer must start from the VACUUM on (or recount)."""
    rows = (
        "[(0, 0, 'WRITE', {'numOutputRows': 5}, '{mode: Append}'),"
        " (1, 1, 'MERGE', {'numTargetRowsDeleted': 1}, ''),"
        " (2, 2, 'MERGE', {'numTargetRowsDeleted': 1}, ''),"
        " (3, 3, 'VACUUM START', {}, '{specifiedRetentionMillis: 0, defaultRetentionMillis: 604800000}'),"
        " (4, 3, 'VACUUM END', {'numDeletedFiles': 2}, '')]"
    )
    sql = HISTORY.replace("ROWS", rows) + "{{ gdpr_lakehouse._cdf_readable_from_history(history) }}"
    assert int(jinja.compile_inline(sql)) == 3
    # a 7-day VACUUM deletes nothing this recent
    week = rows.replace("specifiedRetentionMillis: 0, ", "")
    sql = HISTORY.replace("ROWS", week) + "{{ gdpr_lakehouse._cdf_readable_from_history(history) }}"
    assert int(jinja.compile_inline(sql)) == 0


def _floor(jinja: Jinja, rows: str, hours: float, now_minute: int) -> str:
    sql = (
        HISTORY.replace("ROWS", rows)
        + "{%- set f = gdpr_lakehouse._time_travel_floor_of(history, "
        + str(hours)
        + ", t + m * "
        + str(now_minute)
        + ") -%}{{ f.version }}/{{ f.hours }}"
    )
    return jinja.compile_inline(sql).strip()


FOUR_VERSIONS = (
    "[(0, 0, 'WRITE', {}, ''), (1, 60, 'MERGE', {}, ''),"
    " (2, 120, 'MERGE', {}, ''), (3, 180, 'MERGE', {}, '')]"
)


def test_time_travel_reaches_only_inside_the_deleted_file_retention(jinja: Jinja) -> None:
    # Delta 4.1+ refuses versions committed before now - deletedFileRetentionDuration:
    # at 13:30 with 2 h retention, v0 (10:00) and v1 (11:00) are out, v2 (12:00) is in
    assert _floor(jinja, FOUR_VERSIONS, 2, 210) == "2/2"
    # the newest version is always reachable, however old
    assert _floor(jinja, FOUR_VERSIONS, 1, 600) == "3/1"
    # a week's retention reaches everything
    assert _floor(jinja, FOUR_VERSIONS, 168, 210) == "0/168"


def test_a_version_about_to_leave_the_window_counts_as_gone(jinja: Jinja) -> None:
    # v1 (11:00) leaves a 2 h window at 13:00; at 12:55 a restore planned on it could
    # fail halfway, so it is out already
    assert _floor(jinja, FOUR_VERSIONS, 2, 175) == "2/2"
    assert _floor(jinja, FOUR_VERSIONS, 2, 165) == "1/2"
