"""How we prove erasure: the life of a residue, on real dbt + Spark + Delta files.

One patient: witness captured -> their data exported for them (subject_access) ->
erased (gdpr_erase) -> scanned (nothing a query can reach, ciphertext in history
unreadable, the key gone; the export still there) -> asks again (no data held, the
erasure named) -> purged (REORG + VACUUM at 0 h, the landing zone, dbt's output, the
export) -> scanned again (no residue anywhere but the identifiers the request logs
keep by contract). A positive control plants
values in every kind of Delta file and proves the scanner finds each, so a clean
scan means something.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs import certificate, forensic_scan, purge, subject_access
from python_jobs.forensic_scan import Witness, scan
from python_jobs.project import manifest
from python_jobs.relations import delta_relations
from tests.dbt_harness import DbtProject

pytestmark = pytest.mark.functional


def _scan(*args: str) -> tuple[int, dict]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = forensic_scan.main([*args, "--json"])
    return code, json.loads(out.getvalue())


def _files(lakehouse_dir: Path) -> dict[str, int]:
    """Every file under the state folder with its modification time (read-only check)."""
    found = {}
    for folder, _, names in os.walk(lakehouse_dir):
        for name in names:
            path = Path(folder) / name
            found[str(path)] = path.stat().st_mtime_ns
    return found


@pytest.fixture(scope="module")
def life(
    dbt: DbtProject,
    spark: SparkSession,
    lakehouse_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict:
    if not spark.catalog.tableExists("silver.patients"):
        generate.main(["--patients", "120", "--batch", "1"])
        dbt.invoke("build")
    else:
        dbt.invoke("parse")
    # a patient every layer holds (bronze, silver, snapshot, gold), still in the vault,
    # and not in a copy another suite made by hand (the scan would rightly flag it)
    copied = (
        "and k.subject_id not in (select patient_id from scratch.plain_patients) "
        if spark.catalog.tableExists("scratch.plain_patients")
        else ""
    )
    subject_id = spark.sql(
        "select k.subject_id from privacy.subject_keys k "
        "join silver.patients s on s.patient_pseudonym = k.subject_pseudonym "
        "join bronze.encounters e on e.patient_pseudonym = k.subject_pseudonym "
        f"where k.subject_type = 'patient' {copied}"
        "group by k.subject_id order by k.subject_id limit 1 offset 7"
    ).first()[0]
    witness_file = tmp_path_factory.mktemp("witness") / f"{subject_id}.json"
    captured = forensic_scan.main(
        ["--subject-id", subject_id, "--capture-witness", str(witness_file)]
    )
    assert subject_access.main(["--subject-id", subject_id], spark) == 0
    before_files = _files(lakehouse_dir)
    before = _scan("--witness", str(witness_file))
    read_only = _files(lakehouse_dir) == before_files

    dbt.operation("gdpr_erase", {"subject_ids": [subject_id], "reason": "forensic suite"})
    request_id = spark.sql(
        f"select request_id from privacy.erasure_requests where subject_id = '{subject_id}'"
    ).first()[0]
    erased = _scan("--witness", str(witness_file))
    assert subject_access.main(["--subject-id", subject_id], spark) == 0
    answers = spark.sql(
        "select status, status_reason, export_path from privacy.access_requests "
        f"where subject_id = '{subject_id}' order by request_id"
    ).collect()
    assert (
        purge.main(
            ["--request-id", request_id, "--retain-hours", "0", "--allow-short-retention"], spark
        )
        == 0
    )
    purged = _scan("--request-id", request_id, "--witness", str(witness_file))
    return {
        "subject_id": subject_id,
        "request_id": request_id,
        "witness_file": witness_file,
        "witness": json.loads(witness_file.read_text()),
        "witness_mode": witness_file.stat().st_mode & 0o777,
        "captured": captured,
        "before": before,
        "read_only": read_only,
        "erased": erased,
        "purged": purged,
        "answers": answers,
        "exports_after_purge": [
            row[0]
            for row in spark.sql(
                "select export_deleted_at from privacy.access_requests "
                f"where subject_id = '{subject_id}' and status = 'exported'"
            ).collect()
        ],
    }


def test_the_witness_holds_what_to_look_for(life: dict) -> None:
    witness = life["witness"]
    assert life["captured"] == 0
    assert witness["subject_id"] == life["subject_id"] and witness["subject_type"] == "patient"
    # the key as the vault's files hold it: wrapped by the key-encryption key (the
    # default), IV + key + tag
    assert len(bytes.fromhex(witness["key_hex"])) == 60 and len(witness["pseudonym"]) == 64
    columns = {value["column"] for value in witness["values"]}
    assert {"patients.email", "patients.national_id", "patients.phone"} <= columns
    # the ids the hospital gave the patient's encounters: it links them to the patient
    assert {record["column"] for record in witness["records"]} == {"encounters.encounter_id"}
    assert {"encounters.admitted_at", "patients._source_ts"} <= {
        t["column"] for t in witness["times"]
    }
    assert life["witness_mode"] == 0o600


def test_before_erasure_the_scan_finds_the_subject_everywhere(life: dict) -> None:
    code, report = life["before"]
    assert code == 1 and not report["clean"]
    live = {(r["location"], r["needle_kind"]) for r in report["residues"] if r["reachable"]}
    assert ("bronze.patients", "pseudonym") in live
    assert ("bronze.patients", "ciphertext") in live
    assert ("silver.patients", "pseudonym") in live
    assert ("privacy.subject_keys", "key") in live
    landing = {r["needle_kind"] for r in report["residues"] if r["location"] == "landing zone"}
    assert landing == {"subject_id", "record_id", "pii", "event_time"}
    # the exact times of their events are in the landing zone, and even before the
    # erasure in no Delta table, version or log: bronze keeps them encrypted,
    # generalized (month, hour, day) or keyed (source_seq)
    assert not [
        (r["location"], r["file_kind"], r["where"])
        for r in report["residues"]
        if r["needle_kind"] == "event_time" and r["area"] in ("relations", "warehouse")
    ]
    # their own export holds their data in clear: the scan sees it too
    exported = {r["needle_kind"] for r in report["residues"] if r["area"] == "exports"}
    assert {"subject_id", "pii"} <= exported
    assert life["read_only"], "the scan changed a file"


def test_after_erasure_nothing_is_reachable_and_history_is_ciphertext_without_key(
    life: dict,
) -> None:
    code, report = life["erased"]
    residues = report["residues"]
    assert report["scanned"]["key_gone"]
    assert not [r for r in residues if r["reachable"] and r["verdict"] == "readable"]
    ciphertext = [r for r in residues if r["needle_kind"] == "ciphertext"]
    assert ciphertext and {r["verdict"] for r in ciphertext} == {"unreadable"}
    # no PII value in plaintext in any relation: bronze and below hold it encrypted
    assert not [r for r in residues if r["area"] == "relations" and r["needle_kind"] == "pii"]
    assert not [r for r in residues if r["needle_kind"] == "key"]
    # no Delta table names the patient by id (but the request log, by contract) or by
    # an encounter id the hospital sent
    assert not [
        r
        for r in residues
        if r["area"] == "relations"
        and r["needle_kind"] in ("subject_id", "record_id")
        and r["verdict"] == "readable"
    ]
    # the tombstone key is stored wrapped (key_envelope, the default): nothing maps the
    # pseudonym back to the patient
    assert report["scanned"]["pseudonym_linked_by"] == []
    # before the purge no Delta table or log holds anything readable: history keeps the
    # pseudonym, unlinkable, and ciphertext; the landing zone and dbt's logs name the
    # patient until the purge, so not clean yet
    readable = {r["area"] for r in residues if r["verdict"] == "readable"}
    assert readable and not readable & {"relations", "warehouse"}, readable
    history = {
        r["file_kind"]
        for r in residues
        if r["area"] == "relations" and r["verdict"] == "unlinkable"
    }
    assert history & {"data (removed)", "change data", "data (row deleted by DV)"}
    assert code == 1


def test_after_purge_no_residue_is_left_but_what_the_contract_retains(life: dict) -> None:
    code, report = life["purged"]
    residues = report["residues"]
    in_relations = [r for r in residues if r["area"] == "relations"]
    assert {r["verdict"] for r in in_relations} <= {"retained"}, [
        (r["location"], r["file_kind"], r["needle_kind"], r["verdict"], r["file"])
        for r in in_relations
        if r["verdict"] != "retained"
    ]
    retained = {r["location"] for r in in_relations}
    assert retained <= {
        "privacy.erasure_requests",
        "privacy.erasure_tombstones",
        "privacy.access_requests",
    }
    assert {r["needle_kind"] for r in in_relations} <= {"subject_id", "pseudonym"}
    assert not [r for r in residues if r["area"] == "landing"], (
        "the landing zone still has the subject"
    )
    assert not [r for r in residues if r["area"] == "dbt"], "dbt's output still names the subject"
    assert not [r for r in residues if r["area"] == "exports"], "the access export is still there"
    assert code == 0 and report["clean"], [r for r in residues if r["verdict"] == "readable"]


def test_the_purged_request_gets_a_certificate_naming_no_one_that_verifies(
    life: dict, spark: SparkSession, lakehouse_dir: Path
) -> None:
    """python -m python_jobs.certificate on the request purged above: its figures are the
    evidence relation's (read here through Spark, independently of the job's file
    reader), its scan is clean, it names no one, and --verify catches a changed
    evidence row until it is changed back."""
    request_id = life["request_id"]
    witness = str(life["witness_file"])
    assert certificate.main(["--request-id", request_id, "--witness", witness]) == 0
    issued_file = lakehouse_dir / "reports" / "certificates" / f"{request_id}.json"
    issued = json.loads(issued_file.read_text())
    # the certificate names the request: the lakehouse's reports folder is its owner's only
    assert (lakehouse_dir / "reports").stat().st_mode & 0o777 == 0o700
    evidence = spark.sql(
        "select relation, action, rows_affected, version_after from privacy.erasure_evidence "
        f"where request_id = '{request_id}' and action != 'reapply'"
    ).collect()
    assert sorted((r[0], r[1], r[2], r[3]) for r in evidence) == sorted(
        (line["relation"], line["action"], line["rows_affected"], line["version_after"])
        for line in issued["relations"]
    )
    assert issued["rows_removed"] == sum(r[2] or 0 for r in evidence) > 0
    assert issued["request"]["status"] == "purged" and issued["request"]["shredded_at"]
    scanned = issued["forensic_scan"]
    assert scanned["performed"] and scanned["clean"] and scanned["residues"]["readable"] == 0
    assert {"subject id", "pseudonym", "data key", "PII values"} <= set(scanned["looked_for"])
    for path in issued_file.parent.glob(f"{request_id}.*"):
        text = path.read_text()
        assert life["subject_id"] not in text and life["witness"]["pseudonym"] not in text
        assert "forensic suite" not in text  # the request's reason
    assert certificate.main(["--verify", str(issued_file)]) == 0
    changed = f"where request_id = '{request_id}' and relation = 'bronze.patients' and action != 'reapply'"
    spark.sql(f"update privacy.erasure_evidence set rows_affected = rows_affected + 1 {changed}")
    try:
        assert certificate.main(["--verify", str(issued_file)]) == 1
    finally:
        spark.sql(
            f"update privacy.erasure_evidence set rows_affected = rows_affected - 1 {changed}"
        )
    assert certificate.main(["--verify", str(issued_file)]) == 0


def test_bad_input_is_refused(life: dict, tmp_path: Path) -> None:
    with pytest.raises(forensic_scan.ScanError, match="is not a subject id"):
        forensic_scan.main(["--subject-id", "P1' or '1'='1"])
    with pytest.raises(forensic_scan.ScanError, match="is not a request id"):
        forensic_scan.main(["--request-id", "req-../../etc"])
    with pytest.raises(forensic_scan.ScanError, match="choose from"):
        forensic_scan.main(["--subject-id", "P0000001", "--areas", "relations,moon"])
    with pytest.raises(forensic_scan.ScanError, match="does not exist"):
        forensic_scan.main(["--witness", str(tmp_path / "nope.json")])
    with pytest.raises(forensic_scan.ScanError, match="has no key in the vault"):
        forensic_scan.main(
            ["--subject-id", life["subject_id"], "--capture-witness", str(tmp_path / "w.json")]
        )
    assert not (tmp_path / "w.json").exists()


def test_positive_control_finds_planted_values_in_every_kind_of_file(
    life: dict, spark: SparkSession, lakehouse_dir: Path
) -> None:
    """A subject planted in a Delta table nobody declared: live row, a row deleted by a
    deletion vector, change data, log statistics, operation parameters, a checkpoint,
    a deletion-vector file; and ciphertext under a key that still exists."""
    key = secrets.token_bytes(32)
    planted = Witness(
        subject_id="Z0000001",
        key=key,
        values=[{"column": "planted.email", "value": "planted.person@example.net"}],
    )
    spark.sql("create schema if not exists scratch")
    spark.sql("drop table if exists scratch.planted")
    spark.sql(
        "create table scratch.planted (subject_id string, email string, secret binary) using delta "
        "tblproperties ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'true', "
        "'delta.checkpointInterval' = '3')"
    )
    spark.sql(
        # one file, so the delete below marks a row with a deletion vector
        "insert into scratch.planted select /*+ COALESCE(1) */ * from values "
        "('Z0000001', 'planted.person@example.net', "
        f"aes_encrypt(encode('secret', 'utf-8'), x'{key.hex()}', 'GCM')), "
        "('A0000001', 'someone@example.net', null), ('A0000002', 'other@example.net', null) "
        "as t(subject_id, email, secret)"
    )
    spark.sql(
        "update scratch.planted set email = email where subject_id = 'Z0000001'"
    )  # change data
    spark.sql(
        "insert into scratch.planted values ('Z0000001', 'second row', null)"
    )  # checkpoint (v3)
    spark.sql("create table if not exists scratch.planted_keys (k binary) using delta")
    spark.sql(f"insert into scratch.planted_keys values (x'{key.hex()}')")  # the key, not shredded
    spark.sql(
        "delete from scratch.planted where email = 'planted.person@example.net'"
    )  # DV, predicate
    table = Path(
        spark.sql("describe detail scratch.planted").first()["location"].removeprefix("file:")
    )
    vectors = list(table.glob("deletion_vector_*.bin"))
    assert vectors, "the delete wrote no deletion vector"
    with vectors[0].open("ab") as handle:  # a value where no reader looks
        handle.write(b"Z0000001")

    residues, stats = scan(
        planted,
        delta_relations(manifest()),
        lakehouse_dir / "warehouse",
        lakehouse_dir / "landing",
        ("warehouse",),
    )
    mine = [r for r in residues if r.file.startswith("scratch.db/planted/")]
    kinds = {r.file_kind for r in mine}
    assert {
        "data (row deleted by DV)",
        "data (removed)",
        "change data",
        "log",
        "checkpoint",
        "deletion vector",
    } <= kinds, kinds
    where = {r.where for r in mine if r.file_kind == "log"}
    assert "add (statistics)" in where and "commitInfo (operation parameters)" in where
    live = [r for r in mine if r.reachable]
    assert live and {r.needle_kind for r in live} == {"subject_id"}  # the second row
    ciphertext = [r for r in mine if r.needle_kind == "ciphertext"]
    assert ciphertext and {r.verdict for r in ciphertext} == {"readable"}, "the key still exists"
    assert [
        r
        for r in residues
        if r.file.startswith("scratch.db/planted_keys/") and r.needle_kind == "key"
    ]
    assert not stats["key_gone"]
    spark.sql("drop table scratch.planted")
    spark.sql("drop table scratch.planted_keys")


def test_an_erased_subject_asking_for_their_data_is_told_none_is_held(life: dict) -> None:
    """Access before erasure exported; asked again once erased: no data held, naming the
    erasure request; the purge deleted the export (recorded)."""
    (first_status, _, first_path), (status, reason, path) = life["answers"]
    assert first_status == "exported" and first_path
    assert status == "no_data" and path is None
    assert life["request_id"] in reason and "erased" in reason
    assert life["exports_after_purge"] and all(life["exports_after_purge"])
    assert not Path(first_path).exists()


def test_a_savepoint_copy_the_scan_cannot_see_stops_it(
    life: dict, dbt: DbtProject, spark: SparkSession, tmp_path: Path
) -> None:
    """A kept savepoint's copy that is not where the scan reads the savepoint schema (its
    table moved with ALTER TABLE ... SET LOCATION, a schema made with a LOCATION of its
    own) holds the subject as of its version; a scan that does not see it proves
    nothing. The scan stops and names it, instead of reporting the lakehouse clean."""
    name = "scan_elsewhere"
    dbt.operation("savepoint", {"model": "silver_patients", "name": name})
    copy = f"savepoints.silver__patients__{name}"
    home = Path(
        next(
            row[1]
            for row in spark.sql(f"describe table extended {copy}").collect()
            if row[0] == "Location"
        ).removeprefix("file:")
    )
    elsewhere = tmp_path / "elsewhere"
    try:
        shutil.copytree(home, elsewhere)
        spark.sql(f"alter table {copy} set location '{elsewhere.as_uri()}'")
        shutil.rmtree(home)
        assert spark.table(copy).count() > 0  # the catalog reads it there
        with pytest.raises(forensic_scan.ScanError, match=f"silver__patients__{name}"):
            forensic_scan.main(["--subject-id", life["subject_id"], "--json"])
    finally:
        dbt.operation("release_savepoint", {"model": "silver_patients", "name": name})
        # the registry as this test found it: later suites list every savepoint it holds
        spark.sql(f"delete from privacy.savepoints where savepoint_name = '{name}'")


def test_a_landing_folder_the_catalog_registered_elsewhere_is_scanned(
    life: dict, spark: SparkSession, tmp_path: Path
) -> None:
    """A landing table registered outside the landing path (a build with `--vars
    landing_path`, ALTER TABLE ... SET LOCATION) holds files the build read from there,
    as the landing ledger records. Before, the scan looked only under the landing path
    and called the landing zone scanned and clean. Now every folder the ledger
    records a read in is scanned, and the subject's file there is found."""
    moved = tmp_path / "elsewhere" / "patients"
    moved.mkdir(parents=True)
    planted = moved / "part-0.parquet"
    pq.write_table(pa.table({"patient_id": [life["subject_id"]], "city": ["Westhaven"]}), planted)
    ledger = "bronze.landing_ledger"
    uri = planted.as_uri()  # a pytest folder: no quote in it
    spark.sql(
        f"insert into {ledger} (entity, file_path, file_size, file_modified_at, rows_read, "
        f"status, recorded_at) values ('patients', '{uri}', {planted.stat().st_size}, "
        "current_timestamp(), 1, 'ingested', current_timestamp())"
    )
    try:
        code, report = _scan("--witness", str(life["witness_file"]))
    finally:
        spark.sql(f"delete from {ledger} where file_path = '{uri}'")
    assert code == 1, report
    found = [r for r in report["residues"] if r["area"] == "landing"]
    assert {r["file"] for r in found} == {"part-0.parquet"}, found
    assert any(str(moved) in area for area in report["scanned"]["areas"]), report["scanned"]


def test_a_landing_table_moved_in_the_catalog_since_the_last_build_is_scanned(
    life: dict, spark: SparkSession, tmp_path: Path
) -> None:
    """A landing table whose catalog location changed after the last build (ALTER
    TABLE ... SET LOCATION, a sink's new folder) holds files no build has read, so the
    landing ledger does not know the folder. Before, the scan called the landing zone
    scanned and clean. Now the scan asks the catalog where each landing table is, and
    the subject's file there is found."""
    table = "landing.patients"
    before = next(
        row[1]
        for row in spark.sql(f"describe table extended {table}").collect()
        if row[0] == "Location"
    )
    moved = tmp_path / "sink" / "patients"
    moved.mkdir(parents=True)
    pq.write_table(
        pa.table({"patient_id": [life["subject_id"]], "city": ["Westhaven"]}),
        moved / "part-0.parquet",
    )
    spark.sql(f"alter table {table} set location '{moved.as_uri()}'")
    try:
        code, report = _scan("--witness", str(life["witness_file"]))
    finally:
        spark.sql(f"alter table {table} set location '{before}'")
    found = [r for r in report["residues"] if r["area"] == "landing"]
    assert {r["file"] for r in found} == {"part-0.parquet"}, found
    assert any(str(moved) in area for area in report["scanned"]["areas"]), report["scanned"]
    assert code == 1, report
