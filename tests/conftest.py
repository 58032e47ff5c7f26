"""Suite-wide state: a throw-away lakehouse folder and one Spark JVM for the session.

LAKEHOUSE_DIR is pointed at a temporary folder before anything can start Spark, so
dbt (in-process, dbt-spark's session method) and python_jobs.get_spark() both build
their one shared SparkSession on the throw-away warehouse, never the user's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dbt_harness import DbtProject, isolate

_STATE = Path(tempfile.mkdtemp(prefix="gdpr_lakehouse_test_"))


def pytest_configure(config: pytest.Config) -> None:
    isolate(_STATE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """test_build first: it asserts every commit of every relation comes from its own
    two builds and every count from the landing zone, so it needs a lakehouse no
    other suite has written to (the suites after it reuse what it built). The
    adversarial catalogue after the functional suites (it attacks whatever lakehouse
    they leave, and its erasures must not change the counts they assert), the audit
    suite next to last: it audits the lakehouse the suites before it have ingested
    into, erased from, restored and purged. The business-time suite comes last: its
    builds close days after today and land patients the counts above do not expect.
    A stable sort keeps every other order; tests/lanes.py says which suites share a
    lakehouse in `make test`."""
    items.sort(
        key=lambda item: (
            item.path.name == "test_business_time.py",
            item.path.name == "test_audit.py",
            "adversarial" in item.path.parts,
            item.path.name != "test_build.py",
        )
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_STATE, ignore_errors=True)


@pytest.fixture(scope="session")
def lakehouse_dir() -> Path:
    return Path(os.environ["LAKEHOUSE_DIR"])


@pytest.fixture(scope="session")
def dbt() -> DbtProject:
    return DbtProject(target_path=_STATE / "target", log_path=_STATE / "logs")


@pytest.fixture(scope="session")
def spark(lakehouse_dir: Path) -> Iterator:
    from python_jobs.spark import get_spark

    session = get_spark("gdpr_lakehouse_tests")
    yield session
    session.stop()
