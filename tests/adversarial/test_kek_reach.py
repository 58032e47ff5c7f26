"""Attack class: a statement that reads the key-encryption key (KEK) out of the engine.

The KEK wraps every subject's key; with it, every wrapped key a backup or the vault's
history holds opens again. The macros read it with `java_method('java.lang.System',
'getenv', ...)`, so any statement could too: `dbt show --inline`, a notebook on the
same session, a consumer's query. Guarantees held here, on the embedded engine every
`dbt` command and job runs (the warm engine: tests/adversarial/test_engine_access.py):
- every reflection (`java_method`, `reflect`, in a subquery, in a view) is refused at
  analysis, so no statement returns the KEK;
- the project's functions use it inside the JVM: what the macros write is the
  variable's name, and keys are wrapped in Spark's `aes_encrypt` format;
- no function returns a key it opens: a stored subject key is used (encrypt,
  decrypt, keyed hash) but never returned in clear.
"""

from __future__ import annotations

import os

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pyspark.sql import SparkSession

from tests.adversarial.test_engine_access import REFLECTION
from tests.dbt_harness import DbtProject

pytestmark = pytest.mark.functional


def test_no_statement_of_the_embedded_engine_returns_the_kek(
    dbt: DbtProject, spark: SparkSession
) -> None:
    kek = os.environ["LAKEHOUSE_KEK"]
    for sql in REFLECTION:
        with pytest.raises(Exception, match="refused in this lakehouse's Spark sessions"):
            spark.sql(sql).collect()
    success, errors = dbt.invoke_errors("show", "--inline", REFLECTION[0])
    assert not success and "refused in this lakehouse's Spark sessions" in errors, errors
    assert kek not in errors
    # the retry pause of the macros (run_with_conflict_retry) is the one call allowed
    assert spark.sql("select java_method('java.lang.Thread', 'sleep', 1L)").first()[0] == "null"
    # a key wrapped as before this extension (aes_encrypt) still serves, and the other way
    # in Spark's aes_encrypt format, with the bindings as additional authenticated data
    assert spark.sql(
        f"select cast(gdpr_decrypt(aes_encrypt(x'0a0b', unhex(sha2('k', 256)), 'GCM', "
        f"'DEFAULT', x'', x'02'), aes_encrypt(unhex(sha2('k', 256)), unhex('{kek}'), 'GCM', "
        f"'DEFAULT', x'', x'01'), x'01', x'02', 'LAKEHOUSE_KEK') as string), "
        f"hex(aes_decrypt(gdpr_wrap_key(x'0c0d', x'01', 'LAKEHOUSE_KEK'), unhex('{kek}'), "
        "'GCM', 'DEFAULT', x'01'))"
    ).first()[:] == ("\n\x0b", "0C0D")
    assert spark.sql(
        "select gdpr_try_decrypt(x'00', x'00112233445566778899aabbccddeeff0011223344', x'', "
        "x'', 'LAKEHOUSE_KEK'), gdpr_key_opens(x'00112233445566778899aabbccddeeff0011223344', "
        "x'', 'LAKEHOUSE_KEK')"
    ).first()[:] == (None, False)


def test_no_statement_returns_a_key_the_vault_stores_wrapped(spark: SparkSession) -> None:
    """A subject's key is stored wrapped; a copy of it in clear outlives its erasure (it
    opens every backup). Any session may call the project's functions with a stored key;
    none returns the key it opens, in any argument position."""
    kek = bytes.fromhex(os.environ["LAKEHOUSE_KEK"])
    plain = os.urandom(32)
    iv = os.urandom(12)
    stored = (iv + AESGCM(kek).encrypt(iv, plain, None)).hex()
    functions = sorted(
        name
        for (name,) in spark.sql("show functions like 'gdpr*'").collect()
        if name.startswith("gdpr_")
    )
    assert "gdpr_wrap_key" in functions, functions
    key, other = f"unhex('{stored}')", "x'00112233'"
    calls = [
        (key,),
        (key, key),
        (other, key),
        (key, other),
        (key, key, key),
        (key, other, other),
        (other, key, other),
        (other, key, other, other),
        (key, key, other, other),
        (key, other, key, key),
    ]
    returned = 0
    for name in functions:
        for arguments in calls:
            sql = f"select {name}({', '.join(arguments)}, 'LAKEHOUSE_KEK')"
            try:
                value = spark.sql(sql).first()[0]
            except Exception as error:  # a wrong arity or type: nothing returned
                assert plain.hex() not in str(error).lower()
                continue
            returned += 1
            seen = bytes(value) if isinstance(value, bytes | bytearray) else str(value).encode()
            assert plain not in seen and plain.hex().encode() not in seen.lower(), sql
    assert returned >= len(functions), "most calls failed: the test would prove nothing"
