"""Attack class: a ciphertext or a wrapped key moved to where it does not belong.

Every value is encrypted under its subject's own key, and every key is stored wrapped by
the key-encryption key. Without a binding, a value copied into another column of the same
subject (the national id into the phone) read as that column's value, and a subject's
wrapped key copied into another row (with their values) kept the subject readable under
another identity after their erasure. Guarantees held here:
- a value is bound to its subject's pseudonym and its column (additional authenticated
  data): moved to another column or row, it does not open, and a model that publishes it
  stops (decrypt_pii_or_fail);
- a wrapped key is bound to its subject: copied to another row, it does not open there;
- a lakehouse made before bindings is refused by every command, which names
  `dbt run-operation bind_ciphertexts`; that operation binds every key and value, and a
  second run changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pyspark.sql import SparkSession

from tests.dbt_harness import DbtProject

pytestmark = pytest.mark.functional


def _version(spark: SparkSession, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first()["version"]


def _restore(spark: SparkSession, versions: dict[str, int]) -> None:
    for table, version in versions.items():
        if _version(spark, table) != version:
            spark.sql(f"restore table {table} to version as of {version}")


def _summary(spark: SparkSession, pseudonym: str) -> tuple:
    row = spark.sql(
        f"select city, insurer from gold.patient_summary where patient_pseudonym = '{pseudonym}'"
    ).first()
    return None if row is None else tuple(row)


def test_a_value_moved_to_another_column_does_not_open_there(
    tables: list[Path], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: in silver.patients, copy a patient's national id ciphertext over their
    phone's, and their city's over their insurer's (a writer with access to the table,
    or a bug in a model). Guarantee: a PII reader of the masked view sees no phone
    rather than the national id, and gold's build stops instead of publishing the city
    as the insurer."""
    me = spark.sql("select current_user()").first()[0]
    reader = ("--vars", f"{{pii_readers: [{me}]}}")
    dbt.invoke("run", "--select", "privacy_patients_masked", *reader)
    versions = {t: _version(spark, t) for t in ("silver.patients", "gold.patient_summary")}
    try:
        pseudonym, national_id = spark.sql(
            "select patient_pseudonym, national_id from privacy.patients_masked "
            "where national_id is not null and phone is not null "
            "order by patient_pseudonym limit 1"
        ).first()
        spark.sql(
            "update silver.patients set phone_enc = national_id_enc, insurer_enc = city_enc "
            f"where patient_pseudonym = '{pseudonym}'"
        )
        phone = spark.sql(
            f"select phone from privacy.patients_masked where patient_pseudonym = '{pseudonym}'"
        ).first()[0]
        assert phone != national_id, "the national id was read as the phone"
        assert phone is None
        success, errors = dbt.invoke_errors("run", "--select", "gold_patient_summary")
        assert not success, "gold was built from a ciphertext in a column it was not written for"
        assert "gold_patient_summary.insurer" in errors, errors
    finally:
        _restore(spark, versions)
        dbt.invoke("run", "--select", "privacy_patients_masked")


def test_a_key_and_values_moved_to_another_row_do_not_open_there(
    tables: list[Path], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: copy a patient's wrapped key and their city and insurer ciphertexts into
    a new identity (a vault row and a silver row of another pseudonym), so their data
    stays readable under it after their erasure. Guarantee: neither the key nor the
    values open there; gold's build stops instead of publishing them."""
    source = spark.sql(
        "select patient_pseudonym from gold.patient_summary "
        "where city is not null order by patient_pseudonym desc limit 1"
    ).first()[0]
    tables_ = ("privacy.subject_keys", "silver.patients", "gold.patient_summary")
    versions = {t: _version(spark, t) for t in tables_}
    alias = "f" * 64
    # inside the try: a vault row left behind would hold a second copy of the key
    try:
        spark.sql(
            "insert into privacy.subject_keys (subject_id, subject_type, subject_pseudonym, "
            "data_key, created_at) select 'P9999999', subject_type, "
            f"'{alias}', data_key, created_at from privacy.subject_keys "
            f"where subject_pseudonym = '{source}'"
        )
        columns = [f.name for f in spark.table("silver.patients").schema.fields]
        selected = ", ".join(
            f"'{alias}'" if c == "patient_pseudonym" else f"`{c}`" for c in columns
        )
        spark.sql(
            f"insert into silver.patients select {selected} from silver.patients "
            f"where patient_pseudonym = '{source}'"
        )
        success, _ = dbt.invoke_errors("run", "--select", "gold_patient_summary")
        assert _summary(spark, alias) in (None, (None, None)), (
            "gold published a patient's city under another identity"
        )
        assert not success, "gold was built from a key and values moved to another row"
        opens = spark.sql(
            "select gdpr_key_opens(data_key, encode(concat('subject/', subject_pseudonym), "
            f"'utf-8'), 'LAKEHOUSE_KEK') from privacy.subject_keys where subject_pseudonym = '{alias}'"
        ).first()[0]
        assert opens is False, "a wrapped key opened in another subject's row"
    finally:
        _restore(spark, versions)


def _unbind(spark: SparkSession) -> int:
    """Make the shared lakehouse look as one made before bindings: every subject key
    and the tombstone key wrapped without a binding, silver.patients' e-mails encrypted
    without one, the record gone. Done in Python with the suite's key-encryption key,
    as the previous version of the engine wrote them (Spark's aes_encrypt format)."""
    kek = AESGCM(bytes.fromhex(os.environ["LAKEHOUSE_KEK"]))

    def seal(aead: AESGCM, data: bytes, aad: bytes | None) -> bytes:
        iv = os.urandom(12)
        return iv + aead.encrypt(iv, data, aad)

    def open_(aead: AESGCM, sealed: bytes, aad: bytes | None) -> bytes:
        return aead.decrypt(sealed[:12], sealed[12:], aad)

    keys = {
        row["subject_pseudonym"]: open_(
            kek, bytes(row["data_key"]), f"subject/{row['subject_pseudonym']}".encode()
        )
        for row in spark.sql(
            "select subject_pseudonym, data_key from privacy.subject_keys "
            "where left(subject_id, 2) != '__'"
        ).collect()
    }
    stored = spark.sql("select key_value from privacy.system_keys where key_name = 'tombstone'")
    tombstone = open_(kek, bytes(stored.first()[0]), b"system/tombstone")
    spark.createDataFrame(
        [(p, seal(kek, k, None)) for p, k in keys.items()], "p string, k binary"
    ).createOrReplaceTempView("unbound_keys")
    spark.sql(
        "merge into privacy.subject_keys as v using unbound_keys as u "
        "on v.subject_pseudonym = u.p when matched then update set v.data_key = u.k"
    )
    spark.createDataFrame([(seal(kek, tombstone, None),)], "k binary").createOrReplaceTempView(
        "unbound_tombstone"
    )
    spark.sql(
        "merge into privacy.system_keys as s using unbound_tombstone as u "
        "on s.key_name = 'tombstone' when matched then update set s.key_value = u.k"
    )
    emails = []
    for row in spark.sql("select patient_pseudonym, email_enc from silver.patients").collect():
        if row["email_enc"] is None or row["patient_pseudonym"] not in keys:
            continue
        aead = AESGCM(keys[row["patient_pseudonym"]])
        value = open_(
            aead, bytes(row["email_enc"]), f"{row['patient_pseudonym']}/email_enc".encode()
        )
        emails.append((row["patient_pseudonym"], seal(aead, value, None)))
    spark.createDataFrame(emails, "p string, e binary").createOrReplaceTempView("unbound_emails")
    spark.sql(
        "merge into silver.patients as s using unbound_emails as u "
        "on s.patient_pseudonym = u.p when matched then update set s.email_enc = u.e"
    )
    spark.sql(
        "alter table privacy.subject_keys unset tblproperties ('gdpr_lakehouse.ciphertext_binding')"
    )
    return len(emails)


def _readable_emails(spark: SparkSession) -> int:
    return spark.sql(
        "select count(*) from silver.patients p join privacy.subject_keys k "
        "on k.subject_pseudonym = p.patient_pseudonym where cast(gdpr_try_decrypt(p.email_enc, "
        "k.data_key, encode(concat('subject/', k.subject_pseudonym), 'utf-8'), "
        "encode(concat(k.subject_pseudonym, '/email_enc'), 'utf-8'), 'LAKEHOUSE_KEK') as string) "
        "like '%@%'"
    ).first()[0]


def test_a_lakehouse_made_before_bindings_is_refused_until_bound(
    tables: list[Path], dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: run today's engine on a lakehouse an older version made (keys and values
    unbound). Guarantee: every command refuses before any write, naming
    bind_ciphertexts; that operation binds every key and value (the values read the
    same), and a second run changes nothing."""
    emails = _readable_emails(spark)
    assert emails > 0
    unbound = _unbind(spark)
    assert unbound == emails and _readable_emails(spark) == 0
    versions = {t: _version(spark, t) for t in ("silver.patients", "bronze.patients")}
    success, errors = dbt.invoke_errors("run", "--select", "silver_patients")
    assert not success and "dbt run-operation bind_ciphertexts" in errors, errors
    assert {t: _version(spark, t) for t in versions} == versions
    dbt.operation("bind_ciphertexts", {})
    assert _readable_emails(spark) == emails
    recorded = {
        row["key"]: row["value"]
        for row in spark.sql("show tblproperties privacy.subject_keys").collect()
    }
    assert recorded.get("gdpr_lakehouse.ciphertext_binding") == "subject_column_v1"
    opened = spark.sql(
        "select count_if(gdpr_key_opens(key_value, encode('system/tombstone', 'utf-8'), "
        "'LAKEHOUSE_KEK')) from privacy.system_keys where key_name = 'tombstone'"
    ).first()[0]
    assert opened == 1
    before = {t: _version(spark, t) for t in ("privacy.subject_keys", "privacy.system_keys")}
    dbt.operation("bind_ciphertexts", {})
    assert _readable_emails(spark) == emails
    after = {t: _version(spark, t) for t in before}
    # a second run rewrites what it reads but binds nothing new: the keys stay as they are
    assert (
        spark.sql(
            "select count(*) from privacy.subject_keys version as of "
            f"{before['privacy.subject_keys']} as old join privacy.subject_keys as new "
            "using (subject_id) where old.data_key != new.data_key"
        ).first()[0]
        == 0
    ), after
    dbt.invoke("run", "--select", "silver_patients")
