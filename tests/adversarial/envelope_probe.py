"""A lakehouse made with the envelope on, probed the way a table user would.

Run as ``python -m tests.adversarial.envelope_probe`` in its own process: the
envelope needs its own vault, so its own warehouse, metastore and JVM. The caller
sets LAKEHOUSE_DIR, DBT_TARGET_PATH, DBT_LOG_PATH, LAKEHOUSE_KEK and SPARK_USER.
Prints one line ``PROBE <json>``: what each probe returned.
"""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import redirect_stdout
from pathlib import Path

from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession

from demo import generate
from python_jobs import forensic_scan
from tests.dbt_harness import ROOT

PROJECT = ["--project-dir", str(ROOT), "--profiles-dir", str(ROOT)]


def main() -> int:
    generate.main(["--patients", "12"])
    variables = json.dumps({"key_envelope": True, "pii_readers": [os.environ["SPARK_USER"]]})
    # every command with the same vars: dbt parses the whole project again (~15 s here)
    # whenever a command's vars differ from the last one's
    project = [*PROJECT, "--vars", variables]
    # every model, seed, snapshot and singular test (the compliance tests, whose SQL
    # reads keys); not the generic ones (not_null, unique, accepted_values on plain
    # columns): no key or KEK reaches their SQL, and both lanes' builds run them. An
    # --exclude replaces the default selector (selectors.yml), so it names the audit
    # completeness test too, as the default leaves it out
    run = dbtRunner().invoke(
        [
            "build",
            "--exclude",
            "test_type:generic",
            "tag:audit_completeness",
            *project,
        ]
    )
    if not run.success:
        failed = [
            f"{result.node.name}: {result.message}"
            for result in (run.result.results if run.result else [])
            if str(result.status) in ("error", "fail")
        ]
        print("PROBE " + json.dumps({"error": f"dbt build failed: {run.exception or failed}"}))
        return 1
    spark = SparkSession.builder.getOrCreate()
    subject = "P0000001"
    # an erasure, a restore of bronze to before it and the compliance test that looks
    # for erased subjects, in this mode: each hashes ids under the tombstone key
    pseudonym = spark.sql(
        f"select subject_pseudonym from privacy.subject_keys where subject_id = '{subject}'"
    ).first()[0]
    witness = Path(os.environ["LAKEHOUSE_DIR"]) / "witness.json"
    forensic_scan.main(["--subject-id", subject, "--capture-witness", str(witness)])
    erase = dbtRunner().invoke(
        [
            "run-operation",
            "gdpr_erase",
            "--args",
            json.dumps({"subject_ids": [subject], "reason": "envelope probe"}),
            *project,
        ]
    )
    # the scan right after the erasure, before any purge
    out = io.StringIO()
    with redirect_stdout(out):
        scan_code = forensic_scan.main(["--witness", str(witness), "--json"])
    report = json.loads(out.getvalue())
    scanned = {
        "code": scan_code,
        "witness_records": len(json.loads(witness.read_text())["records"]),
        "readable_in_delta": report["scanned"]["readable_in_delta"],
        "key_gone": report["scanned"]["key_gone"],
        "linked_by": report["scanned"]["pseudonym_linked_by"],
        "residues": sorted(
            {(r["area"], r["location"], r["needle_kind"], r["verdict"]) for r in report["residues"]}
        ),
    }
    before = spark.sql(
        "select min(version_before) from privacy.erasure_evidence "
        "where relation = 'bronze.encounters' and action != 'reapply'"
    ).first()[0]
    restore = dbtRunner().invoke(
        [
            "run-operation",
            "restore_version",
            "--args",
            json.dumps({"model": "bronze_encounters", "version": before}),
            *project,
        ]
    )
    left = spark.sql(
        f"select count(*) from bronze.encounters where patient_pseudonym = '{pseudonym}'"
    ).first()[0]
    check = dbtRunner().invoke(["test", "--select", "no_erased_subject_present", *project])
    erasure = {
        "erased": erase.success,
        "restored": restore.success,
        "rows_after_restore": left,
        "compliance": [
            str(r.status)
            for r in (check.result.results if check.result else [])
            if r.node.resource_type == "test"
        ],
    }
    # the tombstone key as a table reader finds it, and the hash of the erased id the
    # pipeline computes with it (the tombstone holds it)
    hashed = dbtRunner().invoke(
        [
            "show",
            "--inline",
            "select {{ gdpr_lakehouse.tombstone_hash(\"'" + subject + "'\") }} as h",
            *project,
        ]
    )
    if not hashed.success:
        print("PROBE " + json.dumps({"error": f"dbt show failed: {hashed.exception}"}))
        return 1
    tombstone = _tombstone_key(spark, subject)
    # a lakehouse an older version made: its tombstone key stored plain; the next build
    # wraps it, and it is still the same key
    _unwrap_system_keys(spark)
    unwrapped = _tombstone_key(spark, subject)
    rebuilt = dbtRunner().invoke(["run", "--select", "privacy_system_keys", *project])
    migrated = _tombstone_key(spark, subject) if rebuilt.success else {}
    # a table user's query through dbt, against the pipeline's own session
    show = dbtRunner().invoke(
        ["show", "--inline", "select '${env:LAKEHOUSE_KEK}' as probe", *project]
    )
    shown = (
        [] if not show.success else [list(row) for row in show.result.results[0].agate_table.rows]
    )
    # dbt's own session (the JVM's default one; dbt ran it on another thread)
    view_text = {
        view: "\n".join(row[0] for row in spark.sql(f"show create table {view}").collect())
        for view in ("privacy.patients_masked", "privacy.users_masked")
    }
    counts = spark.sql(
        "select count(*), count(full_name), count(email) from privacy.patients_masked"
    ).first()
    tombstones = [
        row[0] for row in spark.sql("select subject_hash from privacy.erasure_tombstones").collect()
    ]
    # left as an older version left it (the tombstone key plain), for the caller's
    # test of a command given another KEK: nothing in privacy.system_keys to try it on
    _unwrap_system_keys(spark)
    print(
        "PROBE "
        + json.dumps(
            {
                "show": shown,
                "view_text": view_text,
                "patients": counts[0],
                "names_revealed": counts[1],
                "emails_revealed": counts[2],
                "pipeline_hash": hashed.result.results[0].agate_table.rows[0][0],
                "tombstone_key": tombstone,
                "tombstone_key_left_plain": unwrapped,
                "tombstone_key_after_build": migrated,
                "tombstones": tombstones,
                "erasure": erasure,
                "scan": scanned,
            }
        )
    )
    return 0


def _unwrap_system_keys(spark: SparkSession) -> None:
    """Store the system keys plain, as a version before their wrapping did (opened in
    Python: no statement returns an unwrapped key)."""
    for name, stored in spark.sql("select key_name, key_value from privacy.system_keys").collect():
        plain = _opened(bytes(stored))
        if plain is not None:  # hex and a key name: no quote in either
            assert name.isidentifier(), name
            spark.sql(
                f"update privacy.system_keys set key_value = unhex('{plain.hex()}') "
                f"where key_name = '{name}'"
            )


def _opened(stored: bytes) -> bytes | None:
    """A stored key opened with the probe's key-encryption key; None for a plain one."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if len(stored) != 60:
        return None
    try:
        return AESGCM(bytes.fromhex(os.environ["LAKEHOUSE_KEK"])).decrypt(
            stored[:12], stored[12:], None
        )
    except InvalidTag:
        return None


def _tombstone_key(spark: SparkSession, subject: str) -> dict:
    """The stored tombstone key as a reader of privacy.system_keys sees it: its length,
    the hash a reader computes with it as if it were the key, and (with the KEK the
    probe holds) the key it wraps."""
    row = spark.sql(
        "select length(key_value) as bytes, "
        f"sha2(concat(key_value, encode('{subject}', 'utf-8')), 256) as reader_hash, "
        "key_value from privacy.system_keys where key_name = 'tombstone'"
    ).first()
    stored = bytes(row["key_value"])
    return {
        "bytes": row["bytes"],
        "reader_hash": row["reader_hash"],
        "key": (_opened(stored) or stored).hex().upper(),
    }


if __name__ == "__main__":
    sys.exit(main())
