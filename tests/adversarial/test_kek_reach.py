"""Attack class: a statement that reads the key-encryption key (KEK) out of the engine.

The KEK wraps every subject's key; with it, every wrapped key a backup or the vault's
history holds opens again. The macros read it with `java_method('java.lang.System',
'getenv', ...)`, so any statement could too: `dbt show --inline`, a notebook on the
same session, a consumer's query. Guarantees held here, on the embedded engine every
`dbt` command and job runs (the warm engine: tests/adversarial/test_engine_access.py):
- every reflection (`java_method`, `reflect`, in a subquery, in a view) is refused at
  analysis, so no statement returns the KEK;
- the project's functions use it inside the JVM: what the macros write is the
  variable's name, and a key wraps and unwraps in Spark's `aes_encrypt` format.
"""

from __future__ import annotations

import os

import pytest
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
    # a key wrapped as before this extension (aes_encrypt) unwraps, and the other way
    assert spark.sql(
        f"select hex(gdpr_unwrap_key(aes_encrypt(x'0a0b', unhex('{kek}'), 'GCM'), "
        "'LAKEHOUSE_KEK')), "
        f"hex(aes_decrypt(gdpr_wrap_key(x'0c0d', 'LAKEHOUSE_KEK'), unhex('{kek}'), 'GCM'))"
    ).first()[:] == ("0A0B", "0C0D")
    assert (
        spark.sql(
            "select gdpr_try_unwrap_key(x'00112233445566778899aabbccddeeff0011223344', "
            "'LAKEHOUSE_KEK')"
        ).first()[0]
        is None
    )
