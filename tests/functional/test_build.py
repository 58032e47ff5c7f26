"""Functional layer: real dbt, in-process, against real local Spark + Delta.

One JVM for the whole session: the `spark` fixture starts it and dbt-spark's session
method reuses it. Warehouse, metastore and landing zone are the suite's throw-away
folder. The module builds twice: batch 1 (initial load), then batch 2 (updates,
deletes, new subjects), as `make run` and a next day's run would.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from dbt_common.invocation import get_invocation_id
from pyspark.sql import SparkSession

from demo import generate
from python_jobs.macros import Macros
from python_jobs.relations import DeltaRelation, delta_relations, table_ref
from tests.dbt_harness import (
    BASELINE,
    ROOT,
    DbtProject,
    decrypted,
    landed_encounters_of,
    opened_key,
    tombstone_hash,
)

pytestmark = pytest.mark.functional

PATIENTS = 120


@pytest.fixture(scope="module")
def built(dbt: DbtProject, spark: SparkSession, lakehouse_dir: Path) -> dict:
    runs, invocations = [], []
    for batch in (1, 2):
        generate.main(["--patients", str(PATIENTS), "--batch", str(batch)])
        runs.append(dbt.invoke("build").result)
        invocations.append(get_invocation_id())
    relations = {r.name: r for r in delta_relations(dbt.manifest())}
    return {"runs": runs, "invocations": invocations, "relations": relations}


def _history(spark: SparkSession, relation: DeltaRelation) -> list:
    return spark.sql(f"describe history {relation.qualified_name}").orderBy("version").collect()


def _properties(spark: SparkSession, relation: DeltaRelation) -> dict[str, str]:
    """From the Delta log (DESCRIBE DETAIL): SHOW TBLPROPERTIES redacts a value matching
    spark.sql.redaction.options.regex, e.g. a statistics column list naming `url`."""
    detail = spark.sql(f"describe detail {relation.qualified_name}").first()
    return dict(detail["properties"])


def test_both_builds_pass_every_node(built: dict) -> None:
    for run in built["runs"]:
        statuses = {r.node.unique_id: str(r.status) for r in run.results}
        assert len(statuses) > 60, "dbt build selected too little"
        bad = {uid: s for uid, s in statuses.items() if s not in {"success", "pass", "warn"}}
        assert not bad
    assert len(built["relations"]) == 38


def test_tables_are_delta_with_the_baseline(built: dict, spark: SparkSession) -> None:
    for relation in built["relations"].values():
        detail = spark.sql(f"describe detail {relation.qualified_name}").first()
        assert detail["format"] == "delta", relation.name
        props = _properties(spark, relation)
        if relation.privacy.get("role") == "vault":
            assert props["delta.enableChangeDataFeed"] == "false"
            assert props["delta.enableDeletionVectors"] == "false"
            assert props["delta.deletedFileRetentionDuration"] == "interval 1 hours"
            assert "data_key" not in props["delta.dataSkippingStatsColumns"].split(",")
            continue
        if relation.privacy.get("role") == "system":
            assert props["delta.enableChangeDataFeed"] == "false"
            assert props["delta.enableDeletionVectors"] == "false"
            assert props["delta.deletedFileRetentionDuration"] == "interval 30 days"
            continue
        if relation.privacy.get("role") == "audit":
            assert props["delta.enableChangeDataFeed"] == "false"
            assert props["delta.appendOnly"] == "true"
            continue
        for key, value in BASELINE.items():
            assert props.get(key) == value, (relation.name, key, props.get(key))
        assert "deletionVectors" in detail["tableFeatures"], relation.name
        assert "changeDataFeed" in detail["tableFeatures"], relation.name


def test_pii_and_subject_keys_are_kept_out_of_delta_statistics(
    built: dict, spark: SparkSession
) -> None:
    """The log's min/max of a PII column, a raw subject id or a pseudonym would outlive
    the erasure (and the purge, for the log's retention). On a 20-patient lakehouse
    built by the previous version, 19 such columns of 17 relations had statistics
    (bronze ids, the request log, legal holds, the vault, silver and gold pseudonyms).
    Nor does any column the contract classes direct_identifier (a source record id such
    as bronze.encounters' encounter_ref, the hospital's id hashed under the tombstone key) or
    special_category (its diagnosis_code and cost)."""
    checked = pruned = 0
    for relation in built["relations"].values():
        private = set(relation.privacy.get("pii_columns") or [])
        key = relation.privacy.get("subject_key")
        if key:
            private.add(key)
        for kind in ("direct_identifier", "special_category"):
            private.update((relation.privacy.get("classes") or {}).get(kind) or [])
        if not private:
            continue
        properties = _properties(spark, relation)
        stats = properties["delta.dataSkippingStatsColumns"].split(",")
        # erasure by pruning (issue 23): a pseudonym key keeps 4 characters of its
        # statistics, every string statistic of the table cut alike
        if relation.privacy.get("subject_key_kind") == "pseudonym" and key in stats:
            assert properties["delta.dataSkippingStringPrefixLength"] == "4", relation.name
            stats.remove(key)
            private.discard(key)
            pruned += 1
        assert stats and not set(stats) & private, (relation.name, set(stats) & private)
        assert not [c for c in stats if c.endswith("pseudonym")], relation.name
        # real column names, not a mask
        assert set(stats) <= set(spark.table(relation.qualified_name).columns), stats
        checked += 1
    assert checked >= 15 and pruned >= 8, (checked, pruned)


def test_the_second_build_finds_every_property_already_set(
    built: dict, spark: SparkSession
) -> None:
    """Spark's SHOW TBLPROPERTIES printed bronze.clicks' statistics list (it names
    `url`) as `*********(redacted)`: the build took it for a different value and
    altered the table again on every run, and the statistics check read the mask."""
    second = built["invocations"][1]
    for relation in built["relations"].values():
        altered = [
            commit["version"]
            for commit in _history(spark, relation)
            if commit["operation"] == "SET TBLPROPERTIES"
            and json.loads(commit["userMetadata"] or "{}").get("invocation_id") == second
        ]
        assert not altered, (relation.name, altered)


def test_warehouse_is_the_throw_away_one(
    built: dict, spark: SparkSession, lakehouse_dir: Path
) -> None:
    for relation in built["relations"].values():
        location = spark.sql(f"describe detail {relation.qualified_name}").first()["location"]
        assert location == f"file:{relation.path(lakehouse_dir / 'warehouse')}"
    assert (lakehouse_dir / "metastore_db").is_dir()
    assert not (ROOT / "spark-warehouse").exists()


def test_no_other_local_account_can_read_the_lakehouse(built: dict, lakehouse_dir: Path) -> None:
    """Attack: another account of the machine reads the lakehouse's files: the landing
    zone's source records (names, e-mails in clear), the warehouse's Parquet and logs
    (health data beside pseudonyms), the vault, the metastore. Guarantee: after two
    builds every file and folder under it is its owner's only (the generator writes
    600/700, Spark and Delta with the local target's umask 077, Derby with its
    restrictive file permissions)."""
    assert (lakehouse_dir / "landing").is_dir() and (lakehouse_dir / "warehouse").is_dir()
    open_to_others = [
        f"{oct(stat.S_IMODE(path.lstat().st_mode))} {path.relative_to(lakehouse_dir)}"
        for path in [lakehouse_dir, *lakehouse_dir.rglob("*")]
        if not path.is_symlink() and path.lstat().st_mode & 0o077
    ]
    assert open_to_others == []


def test_history_shows_every_commit_tagged(built: dict, spark: SparkSession) -> None:
    invocations = set(built["invocations"])
    assert len(invocations) == 2
    for relation in built["relations"].values():
        for commit in _history(spark, relation):
            tag = json.loads(commit["userMetadata"])
            assert tag["tool"] == "dbt"
            assert tag["actor"] == "pytest"
            assert tag["command"] == "build"
            assert tag["invocation_id"] in invocations
            assert tag["node"] == relation.unique_id
    # Nothing outlives the hook that set it.
    assert spark.conf.get("spark.databricks.delta.commitInfo.userMetadata", None) is None


def test_bronze_applies_inserts_updates_and_deletes(built: dict, spark: SparkSession) -> None:
    bronze = built["relations"]["bronze_patients"]
    history = _history(spark, bronze)
    # the vacuum post-hook skipped the table: its whole history is younger than its
    # 7-day deleted-file retention, so no file could be old enough to delete
    assert not [c for c in history if c["operation"].startswith("VACUUM")]
    merge = history[-1]
    assert merge["operation"] == "MERGE"
    metrics = merge["operationMetrics"]
    # Batch 2: 5% new, 10% updated, 1% deleted of the first batch's patients.
    assert metrics["numTargetRowsInserted"] == str(PATIENTS // 20)
    assert metrics["numTargetRowsUpdated"] == str(PATIENTS // 10)
    assert metrics["numTargetRowsDeleted"] == str(PATIENTS // 100)
    changes = spark.sql(
        f"select _change_type, count(*) as n from table_changes('bronze.patients', {merge['version']}, {merge['version']}) "
        "group by _change_type"
    ).collect()
    assert {row["_change_type"]: row["n"] for row in changes} == {
        "insert": PATIENTS // 20,
        "update_preimage": PATIENTS // 10,
        "update_postimage": PATIENTS // 10,
        "delete": PATIENTS // 100,
    }
    landing = spark.sql(
        "select count(distinct patient_id) from landing.patients where patient_id not in "
        "(select patient_id from landing.patients where _op = 'delete')"
    ).first()[0]
    assert spark.table("bronze.patients").count() == landing


def test_identifiers_are_encrypted_with_the_subjects_key(built: dict, spark: SparkSession) -> None:
    row = spark.sql(
        f"""
        select
            typeof(b.email_enc) as stored_type,
            cast(b.email_enc as string) as stored_text,
            {decrypted("b.email_enc", "k.data_key")} as opened,
            l.email as plaintext,
            {decrypted("b.email_enc", "other.key_value", "k.subject_pseudonym")} as opened_with_other_key
        from bronze.patients b
        join privacy.subject_keys k on k.subject_pseudonym = b.patient_pseudonym
        join privacy.system_keys other on other.key_name = 'tombstone'
        join landing.patients l on l.patient_id = k.subject_id and l._op = 'insert'
        where k.subject_id = 'P0000003'
        """
    ).first()
    assert row["stored_type"] == "binary"
    assert row["opened"] == row["plaintext"]
    assert row["plaintext"] not in row["stored_text"]
    assert row["opened_with_other_key"] is None
    # stored wrapped by the key-encryption key (IV + key + tag: 60 bytes), 32 unwrapped
    rows = spark.sql("select data_key, subject_pseudonym from privacy.subject_keys").collect()
    stored = [bytes(row[0]) for row in rows]
    assert len(set(stored)) == len(stored)
    assert {len(key) for key in stored} == {60}
    assert {len(opened_key(bytes(key), pseudonym)) for key, pseudonym in rows} == {32}


def test_silver_is_pseudonymous_and_quarantine_loses_nothing(
    built: dict, spark: SparkSession
) -> None:
    for relation in ("bronze.patients", "bronze.encounters", "silver.patients"):
        columns = set(spark.table(relation).columns)
        assert "patient_id" not in columns, f"{relation} stores the source id"
        assert "patient_pseudonym" in columns, relation
    bronze = spark.table("bronze.patients").count()
    clean = spark.table("silver.patients").count()
    quarantined = spark.sql(
        "select count(*) from silver.quarantine where entity = 'patients'"
    ).first()[0]
    assert quarantined > 0 and clean + quarantined == bronze
    reasons = {
        row[0]
        for row in spark.sql("select distinct quality_issue from silver.quarantine").collect()
    }
    assert {"invalid email", "unknown patient"} <= reasons
    # No personal data in quarantine: the raw ids of the landing zone never appear.
    leaked = spark.sql(
        "select count(*) from silver.quarantine q join landing.patients l "
        "on q.record_id = l.patient_id or q.subject_pseudonym = l.patient_id"
    ).first()[0]
    assert leaked == 0


def test_a_model_stops_on_health_data_it_cannot_open(spark: SparkSession) -> None:
    """The gold models decrypt silver's diagnosis and cost with decrypt_pii_or_fail:
    a ciphertext whose key is missing from the vault (or wrong) stops the query
    instead of counting as NULL (a lost key must not shrink a published total)."""
    key, other = os.urandom(32).hex(), os.urandom(32).hex()
    opened = Macros({}).decrypt_pii_or_fail("c", "k", "p", "cost_enc", "gold_x.total_cost")

    def read(cipher_key: str, key_sql: str, column: str = "cost_enc", owner: str = "p1") -> object:
        return spark.sql(
            f"select {opened} as v from (select aes_encrypt(encode('12.50', 'utf-8'), "
            f"unhex('{cipher_key}'), 'GCM', 'DEFAULT', x'', encode('p1/{column}', 'utf-8')) as c, "
            f"{key_sql} as k, '{owner}' as p)"
        ).first()[0]

    # keys as the vault stores them: wrapped by the key-encryption key (the default),
    # bound to their subject
    def stored(hex_key: str, owner: str = "p1") -> str:
        return f"gdpr_wrap_key(unhex('{hex_key}'), encode('subject/{owner}', 'utf-8'), 'LAKEHOUSE_KEK')"

    assert read(key, stored(key)) == "12.50"
    assert (
        spark.sql(
            f"select {opened} from (select cast(null as binary) as c, cast(null as binary) as k, "
            "'p1' as p)"
        ).first()[0]
        is None
    )
    # no key, another key, a value of another column
    for key_sql, column in (
        ("cast(null as binary)", "cost_enc"),
        (stored(other), "cost_enc"),
        (stored(key), "city_enc"),
    ):
        with pytest.raises(Exception, match=r"gold_x\.total_cost: a ciphertext does not open"):
            read(key, key_sql, column)
    # the subject's key moved to another subject's row does not even open
    with pytest.raises(Exception, match="does not open a stored key with the binding"):
        read(key, stored(key, "p2"))
    with pytest.raises(Macros.CompilerError, match="it must be a plain name"):
        Macros({}).decrypt_pii_or_fail("c", "k", "p", "cost_enc", "x'); drop table y; --")


def test_anonymous_and_per_subject_gold(built: dict, spark: SparkSession) -> None:
    # k-anonymous and exact: a cell is published where silver has at least 5 (var
    # k_anonymity) patients, with silver's counts (nobody is erased yet). The encounters
    # of patients batch 2 deleted at the source (quarantined as 'unknown patient') were
    # counted after batch 1 and are subtracted: a source delete is, an erasure is not.
    of_deleted_patients = spark.sql(
        "select count(*) from silver.quarantine q join bronze.encounters e "
        "on q.record_id = e.encounter_ref where q.quality_issue = 'unknown patient' "
        "and e.patient_pseudonym in (select k.subject_pseudonym from privacy.subject_keys k "
        "join landing.patients p on p.patient_id = k.subject_id where p._op = 'delete')"
    ).first()[0]
    assert of_deleted_patients > 0
    assert spark.sql("select count(*) from privacy.erasure_requests").first()[0] == 0
    cells = (
        "select cast(e.admitted_month as timestamp) as admitted_month, "
        "coalesce(c.chapter, 'unknown') as icd10_chapter, "
        f"{decrypted('e.department_id_enc', 'k.data_key')} as department_id, "
        "count(*) as encounter_count, "
        f"sum(cast({decrypted('e.cost_enc', 'k.data_key')} as decimal(12, 2))) "
        "as total_cost, count(distinct e.patient_pseudonym) as subject_count "
        "from silver.encounters e join privacy.subject_keys k "
        "on k.subject_pseudonym = e.patient_pseudonym "
        "left join reference.icd10_chapters c "
        f"on {decrypted('e.diagnosis_category_enc', 'k.data_key')} "
        "between c.first_category and c.last_category group by 1, 2, 3"
    )
    # silver holds the health data only encrypted, every row under a key in the vault
    assert not {"diagnosis_code", "diagnosis_category", "department_id", "cost_amount"} & set(
        spark.table("silver.encounters").columns
    )
    assert (
        spark.sql(
            "select count(*) from silver.encounters e left anti join privacy.subject_keys k "
            "on k.subject_pseudonym = e.patient_pseudonym"
        ).first()[0]
        == 0
    )
    expected = sorted(
        tuple(r) for r in spark.sql(f"select * from ({cells}) where subject_count >= 5").collect()
    )
    published = sorted(
        tuple(r)
        for r in spark.sql(
            "select admitted_month, icd10_chapter, department_id, encounter_count, total_cost, "
            "subject_count from gold.encounters_monthly"
        ).collect()
    )
    assert published and published == expected
    assert spark.sql(f"select count(*) from ({cells}) where subject_count < 5").first()[0] > 0
    summary = spark.table("gold.patient_summary").count()
    assert summary == spark.table("silver.patients").count()
    segments = {
        row[0]
        for row in spark.sql(
            "select distinct engagement_segment from gold.user_engagement_segments"
        ).collect()
    }
    assert segments <= {"champion", "customer", "browser", "dormant"} and segments


def test_the_patient_summary_names_a_city_or_an_insurer_only_beside_k_patients(
    built: dict, spark: SparkSession
) -> None:
    """gold.patient_summary is published per patient: in every version its history
    holds, a city appears only in rows of at least k (5) patients, an insurer only in
    rows of at least k patients of that city, and admissions by month only. Silver,
    bronze and the snapshot keep the city and the insurer encrypted, and the summary
    decrypts them (it publishes some, the demo's 120 patients in 6 cities x 4 insurers
    leave others out)."""
    versions = [
        row["version"] for row in spark.sql("describe history gold.patient_summary").collect()
    ]
    assert len(versions) >= 2  # one per build
    for version in versions:
        rows = f"(select * from gold.patient_summary version as of {version})"
        small = spark.sql(
            f"select city, count(*) from {rows} where city is not null group by city "
            "having count(*) < 5 union all "
            f"select concat(city, ' / ', insurer), count(*) from {rows} "
            "where insurer is not null group by city, insurer having count(*) < 5 union all "
            f"select 'an insurer without its city', count(*) from {rows} "
            "where insurer is not null and city is null having count(*) > 0"
        ).collect()
        assert small == [], f"version {version}: {small}"
    cities, insurers, withheld, exact = spark.sql(
        "select count(city), count(insurer), count_if(insurer is null), "
        "count_if(first_admitted_month != date_trunc('month', first_admitted_month)) "
        "from gold.patient_summary"
    ).first()
    assert cities > 0 and insurers > 0 and withheld > 0 and exact == 0
    clear = [
        f"{table}.{column}"
        for table in ("bronze.patients", "silver.patients", "snapshots.patients")
        for column in spark.table(table).columns
        if column in ("city", "insurer")
    ]
    assert clear == []


def test_snapshot_keeps_scd2_history(built: dict, spark: SparkSession) -> None:
    closed = spark.sql(
        "select count(*) from snapshots.patients where dbt_valid_to is not null"
    ).first()[0]
    current = spark.sql(
        "select count(*) from snapshots.patients where dbt_valid_to is null"
    ).first()[0]
    assert closed > 0
    assert current >= spark.table("silver.patients").count()


def test_compliance_tests_pass(built: dict) -> None:
    """Every compliance test, as the second build ran it on the lakehouse it left (the
    tests before this one only read; test_compliance.py runs them with `dbt test
    --select tag:compliance`). audit_log_complete holds after `audit_stream --once`
    (test_audit.py runs it), so a build leaves it out (selectors.yml)."""
    names = {
        r.node.name: str(r.status)
        for r in built["runs"][1].results
        if r.node.resource_type == "test" and "compliance" in r.node.tags
    }
    assert names == {
        "privacy_contract_coverage": "pass",
        "cdf_on_every_delta_table": "pass",
        "bronze_pii_unreadable_without_key": "pass",
        "silver_pii_unreadable_without_key": "pass",
        "retained_aggregates_cover_their_upstream": "pass",
        "retained_aggregates_k_anonymous": "pass",
        "quarantine_loses_no_rows": "pass",
        "bronze_applies_every_landing_event": "pass",
        "no_erased_subject_present": "pass",
        "retention_within_policy": "pass",
        "pii_not_in_statistics": "pass",
        "no_overdue_erasure_request": "pass",
        "no_overdue_purge": "pass",
        "masked_views_hide_pii": "pass",
        "no_restricted_subject_published": "pass",
        "no_clone_outside_the_plan": "pass",
        "every_landing_file_under_a_landing_table": "pass",
    }


def _show(dbt: DbtProject, sql: str) -> list:
    result = dbt.invoke("show", "--inline", sql, "--limit", "100")
    return list(result.result.results[0].agate_table.rows)


def test_compliance_checks_catch_known_bad_tables(
    built: dict, spark: SparkSession, dbt: DbtProject
) -> None:
    spark.sql("create schema if not exists scratch")
    spark.sql(
        "create or replace table scratch.plain_patients using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'false') as "
        "select patient_id, cast(email as binary) as email_enc from landing.patients "
        "where _op = 'insert' limit 5"
    )
    bad_pii = _show(
        dbt,
        "{{ gdpr_lakehouse.bronze_pii_problems_sql([{'relation': 'scratch.plain_patients', "
        "'subject_key': 'patient_id', 'pii_columns': ['email_enc']}]) }}",
    )
    assert [tuple(row) for row in bad_pii] == [("scratch.plain_patients", "email_enc", 5)]
    # keyed by pseudonym, as silver and the snapshots are: a clear quasi-identifier
    # (the birth year silver kept until it was encrypted) is caught too
    spark.sql(
        "create or replace table scratch.plain_silver using delta as "
        "select patient_pseudonym, birth_year_enc, year(current_date()) - 40 as birth_year "
        "from silver.patients limit 5"
    )
    bad_silver = _show(
        dbt,
        "{{ gdpr_lakehouse.bronze_pii_problems_sql([{'relation': 'scratch.plain_silver', "
        "'subject_key': 'patient_pseudonym', 'key_column': 'subject_pseudonym', "
        "'pii_columns': ['birth_year_enc', 'birth_year']}]) }}",
    )
    assert [tuple(row) for row in bad_silver] == [("scratch.plain_silver", "birth_year", 5)]
    # ciphertext under the tombstone key is caught whether or not its subject has a key;
    # under some other key, only where the subject has one (silver may hold a shredded
    # subject's ciphertext until its rebuild)
    tombstone = "(select key_value from privacy.system_keys where key_name = 'tombstone')"
    other = "unhex(sha2('not a key of this lakehouse', 256))"
    spark.sql(
        "create or replace table scratch.tombstoned_silver using delta as "
        "select pseudonym as patient_pseudonym, "
        f"gdpr_encrypt(encode('x', 'utf-8'), {tombstone}, encode('system/tombstone', 'utf-8'), "
        "encode(concat(pseudonym, '/under_tombstone'), 'utf-8'), 'LAKEHOUSE_KEK') as under_tombstone, "
        f"aes_encrypt('x', {other}, 'GCM') as under_other from ("
        "(select patient_pseudonym as pseudonym from silver.patients limit 3) "
        "union all select 'a pseudonym without a key' as pseudonym)"
    )
    bad_keys = _show(
        dbt,
        "{{ gdpr_lakehouse.bronze_pii_problems_sql([{'relation': 'scratch.tombstoned_silver', "
        "'subject_key': 'patient_pseudonym', 'key_column': 'subject_pseudonym', "
        "'require_key': false, 'pii_columns': ['under_tombstone', 'under_other']}]) }}",
    )
    assert sorted(tuple(row) for row in bad_keys) == [
        ("scratch.tombstoned_silver", "under_other", 3),
        ("scratch.tombstoned_silver", "under_tombstone", 4),
    ]
    bad_cdf = _show(
        dbt,
        "{{ gdpr_lakehouse.problems_as_rows(gdpr_lakehouse.cdf_problems("
        "[api.Relation.create(schema='scratch', identifier='plain_patients')]), "
        "['relation_name', 'problem']) }}",
    )
    assert [tuple(row) for row in bad_cdf] == [
        ("scratch.plain_patients", "delta.enableChangeDataFeed is false")
    ]


def test_masked_view_shows_pii_only_to_readers(
    built: dict, spark: SparkSession, dbt: DbtProject
) -> None:
    masked = spark.sql("select full_name, email from privacy.patients_masked limit 5").collect()
    assert all(r["full_name"] == "***" and r["email"].startswith("***@") for r in masked)
    me = spark.sql("select current_user()").first()[0]
    dbt.invoke("run", "--select", "privacy_patients_masked", "--vars", f"{{pii_readers: [{me}]}}")
    try:
        opened = spark.sql("select full_name, email from privacy.patients_masked limit 5").collect()
        assert all(r["full_name"] != "***" and "@example.org" in r["email"] for r in opened)
    finally:
        dbt.invoke("run", "--select", "privacy_patients_masked")


def test_tombstoned_subject_is_never_reingested(
    built: dict, spark: SparkSession, dbt: DbtProject
) -> None:
    """What gdpr_erase leaves behind (tombstone, no key, no rows) survives a full refresh.
    Silver is rebuilt from bronze in the same run, as gdpr_erase would leave it: a
    silver row whose key is gone stops every model that decrypts it (fail closed)."""
    subject = "P0000007"
    # hashed as the pipeline hashes it (the tombstone key unwrapped: a hash of the
    # stored, wrapped bytes would match nothing, and the test would prove nothing)
    spark.sql(
        "insert into privacy.erasure_tombstones (subject_hash, request_id, erased_at, subject_type) "
        f"select {tombstone_hash(repr(subject))}, 'TEST-1', current_timestamp(), 'patient'"
    )
    pseudonym = spark.sql(
        f"select subject_pseudonym from privacy.subject_keys where subject_id = '{subject}'"
    ).first()[0]
    spark.sql(f"delete from privacy.subject_keys where subject_id = '{subject}'")
    spark.sql(f"delete from bronze.patients where patient_pseudonym = '{pseudonym}'")
    spark.sql(f"delete from bronze.encounters where patient_pseudonym = '{pseudonym}'")
    dbt.invoke(
        "run",
        "--full-refresh",
        "--select",
        "privacy_subject_keys",
        "bronze_patients",
        "bronze_encounters",
        "silver_patients",
        "silver_encounters",
    )
    assert (
        spark.sql(f"select count(*) from landing.patients where patient_id = '{subject}'").first()[
            0
        ]
        > 0
    )
    for table, where in [
        ("privacy.subject_keys", f"subject_id = '{subject}'"),
        ("bronze.patients", f"patient_pseudonym = '{pseudonym}'"),
        ("bronze.encounters", landed_encounters_of(subject)),
        ("silver.patients", f"patient_pseudonym = '{pseudonym}'"),
        ("silver.encounters", f"patient_pseudonym = '{pseudonym}'"),
    ]:
        found = spark.sql(f"select count(*) from {table} where {where}").first()[0]
        assert found == 0, table
    # let in again, the patient would have a new key and pseudonym: every bronze patient
    # has a key in the vault, and the vault has none for them
    unkeyed = spark.sql(
        "select count(*) from bronze.patients b left anti join privacy.subject_keys k "
        "on k.subject_pseudonym = b.patient_pseudonym"
    ).first()[0]
    assert unkeyed == 0
    assert spark.table("bronze.patients").count() > 0


def test_a_job_reads_tables_by_path_while_this_jvm_holds_the_metastore(
    built: dict, spark: SparkSession, lakehouse_dir: Path
) -> None:
    """The audit-stream design: a second JVM (a python job) runs beside dbt's.

    This process's JVM has booted the embedded Derby metastore, exactly as a running
    `dbt build` would. A job started with shared_metastore=False reads the Change Data
    Feed of a dbt table by the path resolved from the manifest.
    """
    bronze = built["relations"]["bronze_orders"]
    path = bronze.path(lakehouse_dir / "warehouse")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "python_jobs.spark",
            "--no-shared-metastore",
            "--sql",
            f"select count(*) as changed_rows from table_changes_by_path('{path}', 0)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    rows = [line for line in completed.stdout.splitlines() if line.strip("|+- ").isdigit()]
    expected = spark.sql("select count(*) from table_changes('bronze.orders', 0)").first()[0]
    assert rows and int(rows[0].strip("| ")) == expected > 0
    assert table_ref(spark, bronze) == bronze.qualified_name


def test_bad_retention_var_stops_the_run_and_changes_nothing(
    built: dict, spark: SparkSession, dbt: DbtProject, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {name: len(_history(spark, r)) for name, r in built["relations"].items()}
    result = dbt.invoke(
        "run",
        "--vars",
        '{delta_log_retention: "interval 30 days\') --"}',
        expect_success=False,
    )
    assert not result.success
    output = capsys.readouterr().out
    assert "var delta_log_retention" in output
    assert "use 'interval <n> hours|days|weeks'" in output
    after = {name: len(_history(spark, r)) for name, r in built["relations"].items()}
    assert after == before
