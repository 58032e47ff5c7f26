"""The hostile input catalogue (tests/hostile_catalogue.py) on real dbt and Spark.

Each case runs the operation exactly as a user would (`dbt run-operation <macro>
--args <json>`) and must fail with an error that says what was wrong, having changed
nothing: the latest Delta version of every relation the project declares, read from
its transaction log, is the same before and after. Injection, unknown names, wrong
types, empty, oversize, unicode and control characters, for request_erasure,
gdpr_erase, legal_hold, restore_version, table_history, request_access and
restrict_processing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from python_jobs.relations import delta_relations
from tests.dbt_harness import DbtProject, build_once, latest_versions
from tests.hostile_catalogue import CATALOGUE, NEEDS_STATE

pytestmark = pytest.mark.functional

# Every case is refused before any statement runs in tests/unit/test_argument_checks.py
# (plain Jinja, a fake warehouse). Here, on real Spark: the cases only the lakehouse's
# state can answer, and one case per operation end to end.
REAL = NEEDS_STATE + [
    next(case for case in CATALOGUE if case[0] == operation and case not in NEEDS_STATE)
    for operation in (
        "request_erasure",
        "extend_deadline",
        "gdpr_erase",
        "legal_hold",
        "restore_version",
        "table_history",
        "request_access",
        "restrict_processing",
    )
]


@pytest.fixture(scope="module")
def tables(dbt: DbtProject, spark: SparkSession, lakehouse_dir: Path) -> list[Path]:
    build_once(dbt, spark)
    warehouse = lakehouse_dir / "warehouse"
    return [relation.path(warehouse) for relation in delta_relations(dbt.manifest())]


@pytest.mark.parametrize(
    ("macro", "args", "message"),
    REAL,
    ids=[f"{i:02d}-{case[0]}" for i, case in enumerate(REAL)],
)
def test_hostile_input_is_refused_clearly_and_changes_nothing(
    tables: list[Path], dbt: DbtProject, macro: str, args: dict, message: str
) -> None:
    before = latest_versions(tables)
    success, errors = dbt.operation(macro, args, expect_success=False)
    assert not success, f"{macro} {args} was accepted"
    assert message in errors, errors
    assert latest_versions(tables) == before, f"{macro} {args} changed a table"
