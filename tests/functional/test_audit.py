"""The audit stream, commit tags and the GDPR report, end to end on real dbt + Spark + Delta.

The suite runs last in its lane (conftest orders it): it audits the lakehouse the
suites before it ingested into, crashed, raced, erased from, restored and purged
(`make test`: the reliability, restore and scan suites'), and adds its own erase -> restore ->
purge (retention 0, so VACUUM deletes change files before they are audited) and a
change typed by hand that names a subject. Then: `--once` audits every version exactly
once (the dbt compliance test says so), rewrites are audited as what they are, no
generated PII value is anywhere in the audit log, a run killed mid-way resumes without
a gap or a duplicate, `--follow` audits dbt's commits while dbt runs, and the report
says what is overdue.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs import audit_stream, purge, report
from python_jobs.project import ProjectError, state_dir
from python_jobs.relations import delta_relations
from tests.dbt_harness import ROOT, DbtProject

pytestmark = pytest.mark.functional

PATIENTS = 120
SINK = "audit.change_log"


def _latest(spark: SparkSession, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def _audited(spark: SparkSession, relation: str) -> list[tuple]:
    return [
        tuple(row)
        for row in spark.sql(
            f"select commit_version, change_type, row_count, operation, purpose, count_source "
            f"from {SINK} where relation = '{relation}' order by commit_version, change_type"
        ).collect()
    ]


def _completeness(dbt: DbtProject) -> tuple[bool, str]:
    """The dbt compliance test, run the way a user runs it; (passed, its messages)."""
    return dbt.invoke_errors("test", "--select", "tag:audit_completeness")


def _duplicates(spark: SparkSession) -> list[tuple]:
    return [
        tuple(row)
        for row in spark.sql(
            f"select relation, commit_version, change_type, count(*) from {SINK} "
            "group by all having count(*) > 1"
        ).collect()
    ]


def _stale_empty_rows(spark: SparkSession) -> list[tuple]:
    """Versions audited both with changed rows and as a commit that changed none: a
    batch that re-recorded the previous batch's last version, with nothing counted."""
    return [
        tuple(row)
        for row in spark.sql(
            f"select relation, commit_version from {SINK} group by relation, commit_version "
            "having count_if(change_type is null) > 0 and count_if(change_type is not null) > 0"
        ).collect()
    ]


def _sink_commits(spark: SparkSession) -> int:
    return _latest(spark, SINK)


def _job(*args: str, log: Path) -> subprocess.Popen:
    """The job as a user starts it: its own JVM, tables by path (dbt holds the metastore)."""
    return subprocess.Popen(
        [sys.executable, "-m", "python_jobs.audit_stream", *args],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


def _wait(condition, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.5)
    return time.monotonic() - started


@pytest.fixture(scope="module")
def sequence(dbt: DbtProject, spark: SparkSession) -> dict:
    """ingest (if nothing ran before) -> erase -> restore -> purge -> a hand change."""
    if not spark.catalog.tableExists("privacy.restore_log"):
        generate.main(["--patients", str(PATIENTS), "--batch", "1"])
        dbt.invoke("build")
    else:
        dbt.invoke("run", "--select", "audit_change_log", "audit_schema_changes")
    cdf = [r for r in delta_relations(dbt.manifest()) if r.change_data_feed]
    before = {f"{r.schema}.{r.identifier}": _latest(spark, r.qualified_name) for r in cdf}
    patient_id, pseudonym = spark.sql(
        "select k.subject_id, k.subject_pseudonym from privacy.subject_keys k "
        "join silver.patients s on s.patient_pseudonym = k.subject_pseudonym "
        "order by k.subject_id desc limit 1"
    ).first()
    silver_before = _latest(spark, "silver.patients")
    dbt.operation("request_erasure", {"subject_ids": [patient_id], "reason": "audit suite"})
    dbt.operation("gdpr_erase")
    request_id = spark.sql(
        f"select request_id from privacy.erasure_requests where subject_id = '{patient_id}'"
    ).first()[0]
    dbt.operation(
        "restore_version",
        {"model": "silver_patients", "version": silver_before, "reason": "audit suite rollback"},
    )
    purge.main(
        ["--request-id", request_id, "--retain-hours", "0", "--allow-short-retention"], spark
    )
    # a change typed by hand: its predicate and its free-text tag name a subject
    other = spark.sql(
        f"select patient_pseudonym from bronze.patients where patient_pseudonym != '{pseudonym}' "
        "limit 1"
    ).first()[0]
    spark.sql(f"set spark.databricks.delta.commitInfo.userMetadata=fixing {other} by hand")
    try:
        spark.sql(
            f"update bronze.patients set city_enc = city_enc where patient_pseudonym = '{other}'"
        )
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    hand_version = _latest(spark, "bronze.patients")
    rc = audit_stream.main(["--once"], spark)
    return {
        "rc": rc,
        "patient_id": patient_id,
        "pseudonym": pseudonym,
        "other": other,
        "request_id": request_id,
        "hand_version": hand_version,
        "before": before,
    }


def test_once_audits_every_version_of_every_cdf_relation_exactly_once(
    sequence: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    assert sequence["rc"] == 0
    passed, messages = _completeness(dbt)
    assert passed, messages
    assert _duplicates(spark) == []
    assert _stale_empty_rows(spark) == []
    relations = [r for r in delta_relations(dbt.manifest()) if r.change_data_feed]
    audited = {row[0] for row in spark.sql(f"select distinct relation from {SINK}").collect()}
    assert audited == {f"{r.schema}.{r.identifier}" for r in relations}
    assert "privacy.subject_keys" not in audited and SINK not in audited
    # the streams' checkpoints, like the rest of the lakehouse, are their owner's only
    checkpoints = state_dir() / "checkpoints"
    assert any(checkpoints.rglob("offsets"))
    open_to_others = [
        f"{oct(stat.S_IMODE(path.lstat().st_mode))} {path.relative_to(checkpoints)}"
        for path in [checkpoints, *checkpoints.rglob("*")]
        if not path.is_symlink() and path.lstat().st_mode & 0o077
    ]
    assert open_to_others == []


def test_once_with_nothing_new_starts_no_stream_and_writes_nothing(
    sequence: dict, spark: SparkSession, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Every relation is audited through its latest version: a second `--once` reads
    where each stands and starts no stream (each start costs seconds per relation)."""
    assert audit_stream.main(["--once"], spark) == 0
    sink_before = _sink_commits(spark)
    started: list[str] = []
    real_start = audit_stream.AuditStream.start

    def counting_start(self, target, generation, trigger):
        started.append(target.name)
        return real_start(self, target, generation, trigger)

    monkeypatch.setattr(audit_stream.AuditStream, "start", counting_start)
    # and reads each table's version once, the audit log's progress once: a JVM's
    # first read of a table costs ~0.2 s, the audit log's ~1 s (34 tables)
    reads: list[str] = []
    real_latest, real_through = (
        audit_stream.latest_version,
        audit_stream.AuditStream.audited_through,
    )

    def counting_latest(session, location):
        reads.append(location)
        return real_latest(session, location)

    def counting_through(self):
        reads.append("audited_through")
        return real_through(self)

    monkeypatch.setattr(audit_stream, "latest_version", counting_latest)
    monkeypatch.setattr(audit_stream.AuditStream, "audited_through", counting_through)
    capsys.readouterr()
    assert audit_stream.main(["--once"], spark) == 0
    assert started == []
    assert reads.count("audited_through") == 1, reads
    assert len(reads) == len(set(reads)), reads
    assert _sink_commits(spark) == sink_before
    assert "Audited 0 new version(s)" in capsys.readouterr().out
    # one new commit: only its relation's stream starts, and audits it
    spark.sql(
        "set spark.databricks.delta.commitInfo.userMetadata="
        '{"actor": "pytest", "tool": "pytest", "purpose": "audit fast path test"}'
    )
    try:
        spark.sql(
            "alter table reference.departments set tblproperties ('gdpr_lakehouse.probe' = 'n')"
        )
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    assert audit_stream.main(["--once"], spark) == 0
    assert started == ["reference.departments"]
    assert _stale_empty_rows(spark) == []
    assert _audited(spark, "reference.departments")[-1][:4] == (
        _latest(spark, "reference.departments"),
        None,
        0,
        "SET TBLPROPERTIES",
    )


def test_once_stops_on_a_table_it_cannot_read_never_calls_it_not_built(
    sequence: dict, spark: SparkSession, capsys
) -> None:
    """Seam: `--once` turned any read error into "not built yet, skipped"
    and exited 0, so a table whose history could not be read (a damaged commit, a
    storage error) went unaudited with every check green. Guarantee: only a table that
    does not exist is skipped; one that exists and cannot be read stops the run, naming
    it, and nothing is audited."""
    table = "reference.departments"
    location = spark.sql(f"describe detail {table}").first()["location"]
    log = Path(location.removeprefix("file:")) / "_delta_log"
    damaged = log / f"{_latest(spark, table) + 1:020d}.json"
    damaged.write_text('{"commitInfo": this is not JSON\n')
    sink_before = _sink_commits(spark)
    capsys.readouterr()
    try:
        with pytest.raises(
            ProjectError,
            match=r"`?reference`?\.`?departments`?.* exists but its history cannot be read",
        ):
            audit_stream.main(["--once"], spark)
        assert "not built yet" not in capsys.readouterr().out
        assert _sink_commits(spark) == sink_before
    finally:
        damaged.unlink()
    assert audit_stream.main(["--once"], spark) == 0


def test_the_report_never_says_no_savepoint_kept_beside_copies_nothing_registers(
    sequence: dict, spark: SparkSession, tmp_path: Path
) -> None:
    """Seam: the report read the registry alone, so a copy in the
    savepoint schema that no kept savepoint holds (whose data nothing knows) was not
    named, and without the registry the report said "no savepoint kept". Guarantee:
    it stops, as purge does, naming the copy."""
    spark.sql("create schema if not exists savepoints")
    spark.sql("create table savepoints.stray__silver__patients (patient_id string) using delta")
    try:
        with pytest.raises(ProjectError, match=r"stray__silver__patients .*no kept savepoint"):
            report.main(["--output-dir", str(tmp_path / "report")], spark)
    finally:
        spark.sql("drop table savepoints.stray__silver__patients")


def _schema_changes(spark: SparkSession, relation: str, since: int) -> set[tuple]:
    return {
        tuple(row)
        for row in spark.sql(
            "select change, name, before, after, actor, tool, purpose from audit.schema_changes "
            f"where relation = '{relation}' and commit_version > {since}"
        ).collect()
    }


def test_a_history_read_to_prepare_a_stream_serves_its_batch_only_while_it_is_current(
    sequence: dict, spark: SparkSession, tmp_path: Path
) -> None:
    """prepare() reads a table's history; the stream's first batch uses it, once, and
    only while the table's newest commit is still the one it ends with. A commit since
    (or a table dropped and made again, whose versions restart at 0) and the batch
    reads the history again: never another commit's tag in the audit log."""
    job = audit_stream.AuditStream(spark, tmp_path / "checkpoints")
    target = next(t for t in job.targets if t.name == "reference.departments")
    latest = _latest(spark, "reference.departments")
    job.prepare(target, latest)  # audited through its latest: nothing to catch up
    served = job._prepared_history(target, latest)
    assert served is not None and served.agg({"version": "max"}).first()[0] == latest
    assert job._prepared_history(target, latest) is None  # once
    job.prepare(target, latest)
    assert job._prepared_history(target, latest + 1) is None  # it does not reach that far
    job.prepare(target, latest)
    spark.sql(
        "set spark.databricks.delta.commitInfo.userMetadata="
        '{"actor": "pytest", "tool": "pytest", "purpose": "audit history reuse test"}'
    )
    try:
        spark.sql(
            "alter table reference.departments set tblproperties ('gdpr_lakehouse.reuse' = 'y')"
        )
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    assert job._prepared_history(target, latest) is None  # a commit since: read again
    assert audit_stream.main(["--once"], spark) == 0  # and the audit log catches up


def test_schema_changes_are_recorded_and_an_unclassified_column_fails_the_contract(
    sequence: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """A column added to a table and a property set, by hand with a tag, then a build
    that replaces the table. Guarantee: audit.schema_changes holds each change with its
    type or values before -> after and the tag's who and why; the privacy contract's
    coverage test fails while the unclassified column is there and passes once the
    build has dropped it; a second run records nothing twice."""
    relation = "gold.patient_summary"
    coverage = ("test", "--select", "privacy_contract_coverage")
    assert dbt.invoke_errors(*coverage)[0], "the contract failed before the change"
    since = _latest(spark, relation)
    spark.sql(
        "set spark.databricks.delta.commitInfo.userMetadata="
        '{"actor": "pytest", "tool": "spark-sql", "purpose": "schema history test"}'
    )
    try:
        spark.sql(f"alter table {relation} add columns (bed_count int)")
        spark.sql(f"alter table {relation} set tblproperties ('gdpr_lakehouse.owner' = 'ward 7')")
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    assert audit_stream.main(["--once"], spark) == 0
    # actor pytest, as every tagged commit of the suite (test_every_commit_says_who_and_why)
    by_hand = ("pytest", "spark-sql", "schema history test")
    recorded = _schema_changes(spark, relation, since)
    assert ("column_added", "bed_count", None, "integer", *by_hand) in recorded, recorded
    assert ("property_set", "gdpr_lakehouse.owner", None, "ward 7", *by_hand) in recorded
    assert not dbt.invoke_errors(*coverage)[0], "the contract passed with a column no class names"

    rebuilt_from = _latest(spark, relation)
    dbt.invoke("run", "--select", "gold_patient_summary")
    assert audit_stream.main(["--once"], spark) == 0
    dropped = {row[:4] + row[5:] for row in _schema_changes(spark, relation, rebuilt_from)}
    assert ("column_dropped", "bed_count", "integer", None, "dbt", "build") in dropped, dropped
    assert dbt.invoke_errors(*coverage)[0], "the contract still fails after the rebuild"
    # idempotent: nothing new, nothing written twice
    total = spark.sql("select count(*) from audit.schema_changes").first()[0]
    assert audit_stream.main(["--once"], spark) == 0
    assert spark.sql("select count(*) from audit.schema_changes").first()[0] == total
    assert not spark.sql(
        "select relation, commit_version, change, name from audit.schema_changes "
        "group by all having count(*) > 1"
    ).collect()
    # every declared relation has its creation recorded: its columns were added
    created = {
        row[0]
        for row in spark.sql(
            "select distinct relation from audit.schema_changes where change = 'column_added'"
        ).collect()
    }
    assert {"silver.patients", "privacy.subject_keys", "audit.change_log"} <= created


def test_rewrites_are_audited_as_what_they_are(sequence: dict, spark: SparkSession) -> None:
    rows = _audited(spark, "silver.patients")
    by_operation = {(row[3], row[4]) for row in rows}
    # the erasure DELETE, the RESTORE, its re-erasure, the purge's REORG and VACUUM
    for expected in (
        ("DELETE", "erase"),
        ("RESTORE", "restore"),
        ("REORG", "purge"),
        ("VACUUM START", "purge"),
        ("VACUUM END", "purge"),
        ("CREATE OR REPLACE TABLE AS SELECT", "build"),
    ):
        assert expected in by_operation, (expected, sorted(by_operation))
    # commits that change no row: one row, no change type, 0 rows
    for version, change_type, count, operation, _purpose, _source in rows:
        if operation in ("VACUUM START", "VACUUM END", "REORG"):
            assert (change_type, count) == (None, 0), (version, operation)
    # the purge (retention 0) deleted change files no audit had read yet: those versions
    # come from the history, with the counts their commits recorded
    sources = {row[5] for row in rows}
    assert "history" in sources
    erasure = [row for row in rows if row[3] == "DELETE" and row[4] == "erase"]
    assert sum(row[2] for row in erasure if row[1] == "delete") >= 1


def test_every_commit_says_who_and_why(sequence: dict, spark: SparkSession) -> None:
    """Every commit the sequence made through the project's commands carries a tag;
    the one change typed by hand is the only untagged one, and it stands out."""
    window = " or ".join(
        f"(relation = '{name}' and commit_version > {version})"
        for name, version in sequence["before"].items()
    )
    rows = spark.sql(
        f"select relation, commit_version, operation, actor, tool, purpose from {SINK} where {window}"
    ).collect()
    untagged = {(r[0], r[1], r[2]) for r in rows if r[3] is None}
    assert untagged == {("bronze.patients", sequence["hand_version"], "UPDATE")}
    assert all(r[3] == "pytest" and r[4] and r[5] for r in rows if r[3] is not None)
    purposes = {(r[4], r[5]) for r in rows}
    for expected in (
        ("dbt", "request_erasure"),
        ("dbt", "erase"),
        ("dbt", "restore"),
        ("dbt", "reapply_erasure"),
        ("python_jobs.purge", "purge"),
    ):
        assert expected in purposes, (expected, sorted(purposes, key=str))
    # the audit log's own commits are tagged too: dbt's (it owns the table) and the job's
    sink_tags = [
        row["userMetadata"] or "" for row in spark.sql(f"describe history {SINK}").collect()
    ]
    assert all('"tool": ' in tag for tag in sink_tags), sink_tags
    assert any('"tool": "python_jobs.audit_stream"' in tag for tag in sink_tags)


def test_a_change_typed_by_hand_is_audited_without_what_it_named(
    sequence: dict, spark: SparkSession
) -> None:
    row = spark.sql(
        f"select operation_parameters['predicate'], user_metadata, change_type, row_count "
        f"from {SINK} where relation = 'bronze.patients' and commit_version = {sequence['hand_version']} "
        "order by change_type"
    ).collect()
    assert [(r[2], r[3]) for r in row] == [("update_postimage", 1), ("update_preimage", 1)]
    predicate, tag = row[0][0], row[0][1]
    assert sequence["other"] not in predicate and "?" in predicate, predicate
    assert tag.startswith("(free text of ") and sequence["other"] not in tag


def test_no_generated_personal_data_is_in_the_audit_log(
    sequence: dict, dbt: DbtProject, spark: SparkSession, lakehouse_dir: Path
) -> None:
    # every subject id and PII value the landing zone ever held, by the sources' privacy meta
    values: set[str] = set()
    for source in dbt.manifest()["sources"].values():
        privacy = (source.get("meta") or {}).get("privacy") or {}
        columns = [privacy["subject_key"], *privacy.get("pii_columns", [])] if privacy else []
        for path in (lakehouse_dir / "landing" / source["name"]).glob("batch-*.parquet"):
            table = pq.read_table(path, columns=columns)
            for column in columns:
                values.update(str(v) for v in table.column(column).to_pylist() if v)
    values.update(
        row[0]
        for row in spark.sql("select subject_pseudonym from privacy.erasure_tombstones").collect()
        if row[0]
    )
    assert len(values) > 500
    text = "\n".join(
        row[0]
        for row in spark.sql(
            f"select concat_ws('|', relation, node, change_type, operation, "
            f"array_join(map_values(operation_parameters), '|'), user_metadata, actor, tool, purpose) "
            f"from {SINK}"
        ).collect()
    )
    assert len(text) > 10000
    assert sorted(value for value in values if value in text) == []


def test_the_completeness_test_fails_on_a_version_not_audited(
    sequence: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    spark.sql("alter table gold.clicks_hourly set tblproperties ('gdpr_lakehouse.probe' = '1')")
    version = _latest(spark, "gold.clicks_hourly")
    passed, messages = _completeness(dbt)
    assert not passed
    assert "Got 1 result" in messages, messages
    assert audit_stream.main(["--once"], spark) == 0
    assert _audited(spark, "gold.clicks_hourly")[-1][:4] == (version, None, 0, "SET TBLPROPERTIES")
    assert _completeness(dbt)[0]


def test_versions_that_left_the_log_unaudited_are_recorded_not_skipped(
    sequence: dict, dbt: DbtProject, spark: SparkSession, tmp_path: Path
) -> None:
    """Attack: the audit stream does not run for longer than the log retention, and
    Delta's log cleanup deletes commits it never audited. Guarantee: the next run
    records each lost version as LOG EXPIRED (count_source expired), never skips it
    silently, and the completeness test passes only with those rows in the log."""
    table = "reference.departments"
    assert audit_stream.main(["--once"], spark) == 0
    audited = _latest(spark, table)
    for _ in range(22):
        spark.sql("update reference.departments set department_name = department_name")
    # what Delta's log cleanup does once their retention has passed: every commit file
    # older than the newest checkpoint goes
    location = spark.sql(f"describe detail {table}").first()["location"]
    log = Path(location.removeprefix("file:")) / "_delta_log"
    checkpoint = max(int(p.name[:20]) for p in log.glob("*.checkpoint.parquet"))
    assert checkpoint > audited + 1
    for path in log.iterdir():
        if path.name[:20].isdigit() and int(path.name[:20]) < checkpoint:
            path.unlink()
    assert spark.sql(f"describe history {table}").agg({"version": "min"}).first()[0] == checkpoint
    assert audit_stream.main(["--once"], spark) == 0
    rows = [row for row in _audited(spark, table) if audited < row[0] < checkpoint]
    assert [row[0] for row in rows] == list(range(audited + 1, checkpoint))
    assert {(row[1], row[2], row[3], row[5]) for row in rows} == {
        (None, None, "LOG EXPIRED", "expired")
    }
    assert {row[0] for row in _audited(spark, table)} >= set(
        range(checkpoint, _latest(spark, table) + 1)
    )
    assert _duplicates(spark) == []
    assert _completeness(dbt)[0]
    # the report says so, and its per-day chart is not thrown by versions with no time
    out = tmp_path / "report"
    assert report.main(["--output-dir", str(out)], spark) == 0
    changes = (out / "changes.csv").read_text().splitlines()
    assert any(line.startswith("(log expired),") and ",LOG EXPIRED," in line for line in changes)
    assert (
        "left the Delta log before they were audited (LOG EXPIRED)"
        in (out / "gdpr_report.md").read_text()
    )


def test_a_run_killed_mid_way_resumes_with_no_gap_and_no_duplicate(
    sequence: dict, dbt: DbtProject, spark: SparkSession, tmp_path: Path
) -> None:
    spark.sql(
        "set spark.databricks.delta.commitInfo.userMetadata="
        '{"actor": "pytest", "tool": "pytest", "purpose": "audit kill test"}'
    )
    try:
        for _ in range(12):
            spark.sql("update reference.departments set department_name = department_name")
    finally:
        spark.conf.unset("spark.databricks.delta.commitInfo.userMetadata")
    latest = _latest(spark, "reference.departments")
    start = _sink_commits(spark)
    job = _job("--once", "--max-files-per-trigger", "1", log=tmp_path / "killed.log")
    try:
        _wait(lambda: _sink_commits(spark) >= start + 2, 240, "two audited batches")
    finally:
        job.send_signal(signal.SIGKILL)
        job.wait(30)
    audited = {row[0] for row in _audited(spark, "reference.departments")}
    assert latest not in audited, "the job finished before it was killed: nothing to resume"
    assert audit_stream.main(["--once"], spark) == 0
    rows = _audited(spark, "reference.departments")
    assert {row[0] for row in rows} >= set(range(latest - 11, latest + 1))
    assert _duplicates(spark) == []
    assert _stale_empty_rows(spark) == []
    assert _completeness(dbt)[0]
    counts = [row[2] for row in rows if row[0] > latest - 12 and row[1] == "update_postimage"]
    departments = spark.sql("select count(*) from reference.departments").first()[0]
    assert counts == [departments] * 12


def test_follow_audits_dbt_commits_while_dbt_runs(
    sequence: dict, dbt: DbtProject, spark: SparkSession, tmp_path: Path
) -> None:
    log = tmp_path / "follow.log"
    job = _job("--follow", "--interval", "1", log=log)
    try:
        _wait(lambda: "Following" in log.read_text(), 240, "the stream to start")
        dbt.invoke("run", "--select", "silver_users")
        latest = _latest(spark, "silver.users")
        lag = _wait(
            lambda: max(row[0] for row in _audited(spark, "silver.users")) >= latest,
            120,
            "dbt's commits in the audit log",
        )
        print(f"follow: dbt's last commit audited {lag:.1f} s after dbt returned")
    finally:
        job.send_signal(signal.SIGTERM)
        code = job.wait(120)
    assert code == 0, log.read_text()[-2000:]
    assert "Stopped." in log.read_text()
    assert _duplicates(spark) == []
    assert _completeness(dbt)[0]


def test_report_lists_changes_and_alerts_on_overdue_requests(
    sequence: dict, dbt: DbtProject, spark: SparkSession, tmp_path: Path, capsys
) -> None:
    user_id = spark.sql(
        "select subject_id from privacy.subject_keys where subject_type = 'user' "
        "and subject_id not in (select subject_id from privacy.erasure_requests where subject_id is not null) limit 1"
    ).first()[0]
    dbt.operation("request_erasure", {"subject_ids": [user_id], "reason": "report test"})
    out = tmp_path / "report"
    assert report.main(["--output-dir", str(out)], spark) == 0
    # one second past the deadline is past it (the report once rounded days_left to 0.1
    # day, so a request up to 72 minutes late raised no alert)
    [deadline] = spark.sql(
        f"select deadline from privacy.erasure_requests where subject_id = '{user_id}'"
    ).first()
    later = (deadline + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S")
    assert report.main(["--output-dir", str(out), "--as-of", later], spark) == 1
    err = capsys.readouterr().err
    assert "erasure request(s) past their deadline" in err
    page = (out / "gdpr_report.md").read_text()
    assert "ALERT:" in page and "![Rows changed per day" in page
    for name in ("changes_per_day.png", "request_age.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "gdpr_report.html").read_text()
    assert html.count("data:image/png;base64,") == 2
    changes = (out / "changes.csv").read_text().splitlines()
    assert changes[0] == ",".join(report.CHANGE_COLUMNS)
    assert any(",restore,RESTORE," in line for line in changes)
    assert any(",erase,MERGE," in line for line in changes)
    requests = (out / "requests.csv").read_text()
    assert sequence["request_id"] in requests
    # an erased request whose old files were not purged: alerted once its purge
    # deadline (erased_at + var purge_deadline_days, 8) has passed, not before
    purged = spark.sql(
        "select status, purged_at from privacy.erasure_requests "
        f"where request_id = '{sequence['request_id']}'"
    ).first()
    assert purged["status"] == "purged"
    spark.sql(
        "update privacy.erasure_requests set status = 'erased', purged_at = null "
        f"where request_id = '{sequence['request_id']}'"
    )
    try:
        week = (datetime.now(UTC) + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M")
        assert report.main(["--output-dir", str(out), "--as-of", week], spark) == 0
        capsys.readouterr()
        assert report.main(["--output-dir", str(out), "--as-of", later], spark) == 1
        err = capsys.readouterr().err
        assert "past their purge deadline" in err and sequence["request_id"] in err
        assert "python -m python_jobs.purge" in err
    finally:
        spark.sql(
            "update privacy.erasure_requests set status = 'purged', "
            f"purged_at = timestamp'{purged['purged_at']}' "
            f"where request_id = '{sequence['request_id']}'"
        )
    # no subject id in the report files
    for path in out.glob("*.csv"):
        text = path.read_text()
        assert user_id not in text and sequence["patient_id"] not in text, path.name


def test_the_completeness_test_fails_on_a_hole_in_the_audited_versions(
    sequence: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """Known-bad fixture for the hole check: a version audited past versions that are
    neither audited nor recorded as LOG EXPIRED. Last in the module: the audit log is
    append-only, so the planted row stays."""
    assert audit_stream.main(["--once"], spark) == 0
    assert _completeness(dbt)[0]
    table = "reference.departments"
    planted = _latest(spark, table) + 3
    spark.sql(
        f"insert into {SINK} (relation, commit_version, operation, count_source) "
        f"values ('{table}', {planted}, 'WRITE', 'history')"
    )
    passed, messages = _completeness(dbt)
    assert not passed
    assert "Got 1 result" in messages, messages
