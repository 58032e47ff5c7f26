"""Attack class: linking an erased person to the pseudonym that still keys their history.

Silver, gold and the snapshot know a subject by a pseudonym; older versions of them
hold it until the purge has run. The erasure's own records used to hand over the map:
privacy.erasure_requests (raw subject id, request id) joined with
privacy.erasure_tombstones (request id, the pseudonym in clear) on request_id, for
good, and the forensic scan reported that map as `retained`.

Guarantees held here:
- once a request is complete, no row of any control table (requests, tombstones,
  evidence, restore log, legal holds) holds the subject's pseudonym;
- the request log, which names the subject by id, never held it in any file, current
  or historical: the tombstone (which names the subject by a hash under the tombstone
  key) holds it, encrypted under the tombstone key, while the erasure runs (its
  files never hold it in clear either), then keeps only a hash of it, and a restore
  re-erases by hashing each row's key (tests/functional/test_restore.py proves the
  re-erasure);
- the purge job rewrites and vacuums the control tables' history too, so the
  pseudonym a request held while it was being erased does not outlive the data;
- the forensic scan reports a subject's pseudonym found in a control table as
  `readable` (a map from id to history), only the subject id as `retained`;
- the request log keeps the subject id only for var erasure_record_retention_days
  after the purge: then the purge nulls it, and the tombstone still keeps them out.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from python_jobs import forensic_scan, purge
from python_jobs.relations import delta_relations
from tests.dbt_harness import (
    DbtProject,
    assert_history_names_by_pseudonym_only,
    decrypted,
    version_before_erasure,
)

pytestmark = pytest.mark.functional

CONTROL = (
    "privacy.erasure_requests",
    "privacy.erasure_tombstones",
    "privacy.erasure_evidence",
    "privacy.restore_log",
    "privacy.legal_holds",
    "privacy.access_requests",
    "privacy.rectification_requests",
    "privacy.restrictions",
    "privacy.savepoints",
)


@pytest.fixture(scope="module")
def erased(tables: list[Path], dbt: DbtProject, spark: SparkSession) -> tuple[str, str]:
    """(patient id, pseudonym) of a patient erased here, its pseudonym read before."""
    row = spark.sql(
        "select vault.subject_id, vault.subject_pseudonym from privacy.subject_keys as vault "
        "inner join silver.patients as patients on patients.patient_pseudonym = vault.subject_pseudonym "
        "where vault.subject_id not in (select subject_id from privacy.erasure_requests where subject_id is not null) "
        "and vault.subject_pseudonym in (select patient_pseudonym from silver.encounters) "
        "order by vault.subject_id limit 1"
    ).first()
    assert row is not None, "no patient left to erase"
    dbt.operation("gdpr_erase", {"subject_ids": [row[0]], "reason": "adversarial: linkability"})
    status = spark.sql(
        f"select status from privacy.erasure_requests where subject_id = '{row[0]}'"
    ).first()[0]
    assert status == "erased"
    return row[0], row[1]


def test_no_control_table_maps_the_erased_id_to_its_pseudonym(
    erased: tuple[str, str], spark: SparkSession
) -> None:
    """Attack: join the request log with the tombstones on request_id (or read any
    control table) for the erased id's pseudonym. Guarantee: no row holds it."""
    _, pseudonym = erased
    for table in CONTROL:
        columns = [f"coalesce(cast(`{c}` as string), '')" for c in spark.table(table).columns]
        found = spark.sql(
            f"select count(*) from {table} where concat_ws('|', {', '.join(columns)}) like '%{pseudonym}%'"
        ).first()[0]
        assert found == 0, f"{table} maps the erased subject to its pseudonym"


# Where each layer keeps an encounter's health data (GDPR Art. 9), encrypted under the
# patient's key: (relation, the column naming the patient, its ciphertext columns).
HEALTH = {
    "bronze.encounters": (
        "patient_pseudonym",
        ("diagnosis_code_enc", "department_id_enc", "cost_enc"),
    ),
    "silver.encounters": (
        "patient_pseudonym",
        ("diagnosis_code_enc", "diagnosis_category_enc", "department_id_enc", "cost_enc"),
    ),
}


@pytest.mark.parametrize("relation", sorted(HEALTH))
def test_history_keeps_no_readable_health_data_of_the_erased(
    erased: tuple[str, str], spark: SparkSession, relation: str
) -> None:
    """Attack: time-travel bronze.encounters (or silver.encounters) to the version
    before the erasure and read the erased patient's encounters (or their delete
    pre-images in the Change Data Feed). Guarantee, before any purge: every
    special-category value there (diagnosis, its ICD-10 category, the admitting
    department, which says what the patient is treated for, cost) is ciphertext
    under the patient's key, which is gone: none reads as the value the hospital sent,
    none opens with a key left in the vault."""
    subject_id, pseudonym = erased
    subject, ciphers = HEALTH[relation]
    who = pseudonym  # every layer names the patient by pseudonym
    version = version_before_erasure(spark, relation, subject_id)
    sent = spark.sql(
        "select upper(diagnosis_code) as code, department_id, cost from landing.encounters "
        f"where patient_id = '{subject_id}'"
    ).collect()
    codes = {row["code"] for row in sent} | {row["code"][:3] for row in sent}
    costs = {round(float(row["cost"]), 2) for row in sent}
    departments = {row["department_id"] for row in sent}
    assert codes, "the erased patient sent no encounter"
    history = spark.sql(
        f"select * from {relation} version as of {version} where {subject} = '{who}'"
    )
    deleted = spark.sql(
        f"select * from table_changes('{relation}', {version + 1}) "
        f"where {subject} = '{who}' and _change_type = 'delete'"
    )
    for frame in (history, deleted):
        rows = frame.collect()
        assert rows, f"the erased patient's encounters are not in the history of {relation}"
        for row in rows:
            for column, value in row.asDict().items():
                assert str(value).upper() not in codes, (
                    f"{column} of {relation} holds {value!r} in clear"
                )
                assert str(value) not in departments, (
                    f"{column} of {relation} holds the department {value!r} in clear"
                )
                if isinstance(value, float | Decimal):
                    assert round(float(value), 2) not in costs, (
                        f"{column} of {relation} holds the cost {value!r} in clear"
                    )
        clear = {"diagnosis_code", "diagnosis_category", "department_id", "cost", "cost_amount"}
        assert not clear & set(frame.columns), f"{relation} keeps {clear & set(frame.columns)}"
    for column in ciphers:
        opened = spark.sql(
            f"select count(*) from (select `{column}` from {relation} version as of {version} "
            f"where {subject} = '{who}') as old cross join privacy.subject_keys as vault "
            f"where {decrypted(f'old.`{column}`', 'vault.data_key')} is not null"
        ).first()[0]
        assert opened == 0, f"{column} of {relation} opens with a key left in the vault"


# Relations that hold a patient's rows from bronze on: each names the patient only by
# the pseudonym (the vault alone maps it to the source id, until the key is destroyed).
# (relation, the column naming the patient)
BY_PSEUDONYM = {
    "bronze.encounters": "patient_pseudonym",
    "bronze.patients": "patient_pseudonym",
    "silver.encounters": "patient_pseudonym",
    "silver.patients": "patient_pseudonym",
}


@pytest.mark.parametrize("relation", sorted(BY_PSEUDONYM))
def test_history_never_names_the_erased_patient_by_the_source_id(
    erased: tuple[str, str], spark: SparkSession, relation: str
) -> None:
    """Attack: take the patient id the hospital uses, time-travel a relation to the
    version before the erasure (and read the erasure's delete pre-images in the Change
    Data Feed), and look for it. Guarantee, before any purge: no value of any column is
    the source id; the patient's rows were there, under the pseudonym only, which
    nothing maps back once the key is gone."""
    subject_id, pseudonym = erased
    assert_history_names_by_pseudonym_only(
        spark, relation, BY_PSEUDONYM[relation], subject_id, pseudonym
    )


def test_no_file_of_the_markers_or_the_rejected_events_holds_a_source_id(
    tables: list[Path], spark: SparkSession
) -> None:
    """Attack: read every Parquet file of bronze.cdc_deletes and bronze.rejected_events
    (live, removed, change data) and look up each value in the source systems.
    Guarantee: no value is an id the sources use, of a subject (patient, user) or of a
    record (encounter, click, order): they name a subject by pseudonym and a record by
    its id hashed under the tombstone key."""
    ids = {
        row[0]
        for row in spark.sql(
            "select patient_id from landing.patients union select patient_id from landing.encounters "
            "union select encounter_id from landing.encounters union select user_id from landing.users "
            "union select user_id from landing.clicks union select click_id from landing.clicks "
            "union select user_id from landing.orders union select order_id from landing.orders"
        ).collect()
        if row[0]
    }
    rows = {}
    for name in ("cdc_deletes", "rejected_events"):
        folder = next(path for path in tables if path.name == name)
        rows[name] = 0
        for path in folder.rglob("*.parquet"):
            table = pq.read_table(path)
            rows[name] += table.num_rows
            for column in table.column_names:
                found = ids & {str(v) for v in table.column(column).to_pylist()}
                assert not found, f"bronze.{name} {path.name}: {column} holds {sorted(found)[:3]}"
    # the first batch deletes records; rejected events exist once a later batch (or
    # another suite) lands a bad one
    assert rows["cdc_deletes"], "bronze.cdc_deletes holds no row: the attack proves nothing"


@pytest.mark.parametrize("name", ["erasure_requests", "erasure_tombstones"])
def test_no_file_of_the_request_log_or_the_tombstones_held_the_pseudonym(
    erased: tuple[str, str], tables: list[Path], name: str
) -> None:
    """Attack: read the Parquet files of the request log (each row names the subject by
    id) and of the tombstones (each row names the request), old versions and change
    data included, and join them on request_id. Guarantee: the pseudonym is in clear
    in none of them, before any purge (the erasure reads it from the tombstone, which
    holds it encrypted under the tombstone key while the erasure runs)."""
    _, pseudonym = erased
    folder = next(path for path in tables if path.name == name)
    files = list(folder.rglob("*.parquet"))
    assert files
    for path in files:
        table = pq.read_table(path)
        for column in table.column_names:
            values = table.column(column).to_pylist()
            assert pseudonym not in [str(v) for v in values], f"{name} {path.name}: {column}"


def test_the_purge_rewrites_the_control_tables_history(dbt: DbtProject) -> None:
    """Guarantee: the purge job's relations include every control table, so what a
    request held while it was being erased goes with the data's history."""
    targets = {relation.name for relation in purge.pii_relations(delta_relations(dbt.manifest()))}
    assert {
        "privacy_erasure_requests",
        "privacy_erasure_tombstones",
        "privacy_erasure_evidence",
        "privacy_legal_holds",
    } <= targets


def test_the_scan_reports_a_pseudonym_in_a_control_table_as_readable(dbt: DbtProject) -> None:
    """Attack on the proof: a control table that maps an id to a pseudonym reported as
    `retained` (or `unlinkable`) reads as lawful. Guarantee: only the subject id itself
    is retained, and a pseudonym is unlinkable only in a Delta table that names the
    subject by pseudonym alone, when nothing in the tables maps it back."""
    requests = next(
        r for r in delta_relations(dbt.manifest()) if r.name == "privacy_erasure_requests"
    )
    place = forensic_scan.Area("warehouse", Path("."), "privacy.erasure_requests", requests)
    subject_id = forensic_scan.Needle("subject_id", "subject id", b"P0000001")
    pseudonym = forensic_scan.Needle("pseudonym", "pseudonym", b"ab" * 32)
    assert forensic_scan._verdict(place, subject_id, key_found=False) == "retained"
    assert forensic_scan._verdict(place, pseudonym, key_found=False) == "readable"
    # even when nothing else links it: the row names the subject by id
    assert forensic_scan._verdict(place, pseudonym, key_found=False, linked=False) == "readable"
    # a relation naming the subject by pseudonym only: unlinkable once nothing maps it back
    bronze = next(r for r in delta_relations(dbt.manifest()) if r.name == "bronze_encounters")
    history = forensic_scan.Area("relations", Path("."), "bronze.encounters", bronze)
    assert forensic_scan._verdict(history, pseudonym, key_found=False, linked=False) == (
        "unlinkable"
    )
    assert forensic_scan._verdict(history, pseudonym, key_found=False, linked=True) == "readable"
    # outside the Delta tables (a log, a report) it may sit beside the id: readable
    logs = forensic_scan.Area("dbt", Path("."), "dbt logs/")
    assert forensic_scan._verdict(logs, pseudonym, key_found=False, linked=False) == "readable"


def test_the_request_log_forgets_the_id_when_its_retention_ends(
    erased: tuple[str, str], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: keep reading the request log for years. Guarantee: a request purged
    longer ago than var erasure_record_retention_days loses its subject id, its free
    text and its requester at the next purge, and so does a released legal hold of its
    subject (the tombstone stays); a younger one keeps them; a bad var is refused."""
    subject_id, _ = erased
    relations = delta_relations(dbt.manifest())
    request_id = spark.sql(
        f"select request_id from privacy.erasure_requests where subject_id = '{subject_id}'"
    ).first()[0]
    given = spark.sql(
        f"select reason, requested_by from privacy.erasure_requests where request_id = '{request_id}'"
    ).first()
    assert given["reason"] == "adversarial: linkability" and given["requested_by"]
    # a hold placed and released before the erasure: its row names the subject too
    spark.sql(
        "insert into privacy.legal_holds (subject_id, reason, placed_by, placed_at, released_by, released_at) values "
        f"('{subject_id}', 'case 2023-9 of Dr Roe', 'legal team', current_timestamp() - interval 1200 days, "
        "'legal team', current_timestamp() - interval 1150 days)"
    )
    # time passes: the request was purged 1,096 days ago
    spark.sql(
        "update privacy.erasure_requests set status = 'purged', "
        "purged_at = current_timestamp() - interval 1096 days "
        f"where request_id = '{request_id}'"
    )
    kept = spark.sql(
        "select count(*) from privacy.erasure_requests where subject_id is not null"
    ).first()[0]
    now = datetime.now(UTC).replace(tzinfo=None)
    assert purge.expire_records(spark, relations, 1097, now) == 0
    assert purge.expire_records(spark, relations, purge.record_retention_days(), now) == 1
    assert purge.expire_records(spark, relations, 1095, now) == 0  # idempotent
    row = spark.sql(
        f"select * from privacy.erasure_requests where request_id = '{request_id}'"
    ).first()
    assert row["subject_id"] is None and row["status"] == "purged"
    assert row["reason"] is None and row["requested_by"] is None
    assert row["status_reason"] is None and row["received_at"] is not None
    assert (
        spark.sql(
            "select count(*) from privacy.legal_holds "
            f"where subject_id = '{subject_id}' or reason = 'case 2023-9 of Dr Roe'"
        ).first()[0]
        == 0
    )
    assert (
        spark.sql(
            "select count(*) from privacy.erasure_requests where subject_id is not null"
        ).first()[0]
        == kept - 1
    )
    tombstones = spark.sql(
        f"select count(*) from privacy.erasure_tombstones where request_id = '{request_id}'"
    ).first()[0]
    assert tombstones == 1
    for bad in ("false", 0, -5, "3 years", 40000, True):
        with pytest.raises(purge.ProjectError, match="erasure_record_retention_days"):
            purge.record_retention_days(bad)


def test_no_published_per_subject_table_holds_an_exact_event_time(
    tables: list[Path], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: a consumer of gold who saw someone click, order or be admitted at a
    known moment looks that moment up in a per-subject gold table and finds their row
    (their pseudonym, so every other row of theirs). Guarantee: no column of a gold
    relation keyed by a subject is a timestamp; times are published as days or months."""
    per_subject = [
        node
        for node in dbt.manifest()["nodes"].values()
        if node["resource_type"] == "model"
        and "gold" in node["fqn"][1:-1]
        and ((node["config"].get("meta") or {}).get("privacy") or {}).get("subject_key")
    ]
    assert len(per_subject) >= 3, [node["name"] for node in per_subject]
    exact = {
        f"{node['schema']}.{node['alias']}.{field.name}"
        for node in per_subject
        for field in spark.table(f"{node['schema']}.{node['alias']}").schema
        if field.dataType.typeName() in ("timestamp", "timestamp_ntz")
    }
    assert exact == set()


# When the lakehouse wrote the row, not when the person acted: the time of the commit,
# which the Delta log (commitInfo) and the Change Data Feed (_commit_timestamp) record
# for every row it changed anyway.
WRITE_TIMES = {
    "ingested_at",
    "detected_at",
    "quarantined_at",
    "recorded_at",
    "dbt_updated_at",
    "dbt_valid_from",
    "dbt_valid_to",
}


def test_no_relation_keyed_by_a_subject_holds_an_exact_event_time(
    tables: list[Path], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: someone who saw a person be admitted, click or order at a known moment
    (the hospital's or the shop's own records give the second), and who reads every
    version of bronze, silver or the snapshot, finds the row stamped with that moment:
    its pseudonym, so every other row of that person. In the demo the source time of a
    change is the event's own time, so the CDC order column gave it away too.
    Guarantee: in every relation keyed by a subject, every timestamp other than the
    commit's own is at most the hour (the exact times are encrypted under the subject's
    key, the apply order kept as a keyed number, source_seq)."""
    keyed = [
        node
        for node in dbt.manifest()["nodes"].values()
        if node["resource_type"] in ("model", "snapshot")
        and node["config"].get("materialized") != "ephemeral"
        and node["schema"] in ("bronze", "silver", "gold", "snapshots")
        and ((node["config"].get("meta") or {}).get("privacy") or {}).get("subject_key")
    ]
    assert len(keyed) >= 12, [node["name"] for node in keyed]
    checked, exact = [], {}
    for node in keyed:
        relation = f"{node['schema']}.{node['alias']}"
        for field in spark.table(relation).schema:
            if field.name in WRITE_TIMES or field.dataType.typeName() not in (
                "timestamp",
                "timestamp_ntz",
            ):
                continue
            checked.append(f"{relation}.{field.name}")
            finer = spark.sql(
                f"select count_if(`{field.name}` != date_trunc('hour', `{field.name}`)) "
                f"from {relation}"
            ).first()[0]
            if finer:
                exact[f"{relation}.{field.name}"] = finer
    assert exact == {}
    # the hour of a click is the finest time kept in clear, and it is checked
    assert "bronze.clicks.clicked_hour" in checked, checked
    assert not any(name.endswith(("_at", "updated_at")) for name in checked), checked
