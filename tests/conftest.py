"""Suite-wide state: a throw-away lakehouse folder and one Spark JVM for the session.

LAKEHOUSE_DIR is pointed at a temporary folder before anything can start Spark, so
dbt (in-process, dbt-spark's session method) and python_jobs.get_spark() both build
their one shared SparkSession on the throw-away warehouse, never the user's.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dbt_harness import ROOT, DbtProject

_STATE = Path(tempfile.mkdtemp(prefix="gdpr_lakehouse_test_"))


def pytest_configure(config: pytest.Config) -> None:
    os.environ["LAKEHOUSE_DIR"] = str(_STATE / "lakehouse")
    os.environ["LAKEHOUSE_PROJECT_DIR"] = str(ROOT)
    os.environ["DBT_PROFILES_DIR"] = str(ROOT)
    # the suite's own target/ for dbt and for the jobs that read its manifest
    os.environ["DBT_TARGET_PATH"] = str(_STATE / "target")
    # and its logs/, where purge redacts and forensic_scan looks
    os.environ["DBT_LOG_PATH"] = str(_STATE / "logs")
    os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # One shuffle partition and one scan split per query: the suite's tables are a few
    # hundred rows, and every task costs a (de)serialization of the query plan
    # (~18% of a build's JVM time in a flight recording). `dbt test` on the
    # 120-patient lakehouse, alternated: 148 s and 145 s as the local target ships
    # (4 and 4), 128 s and 140 s with 1 and 1. Every subprocess the suite starts
    # (the CLI, the cluster, the benchmarks) inherits it.
    os.environ.setdefault("LAKEHOUSE_SHUFFLE_PARTITIONS", "1")
    os.environ.setdefault("LAKEHOUSE_PARALLELISM", "1")
    os.environ["LAKEHOUSE_ACTOR"] = "pytest"
    # compiled macro files (python_jobs/macros.py) in the suite's state, not the user's
    os.environ["GDPR_LAKEHOUSE_JINJA_CACHE"] = str(_STATE / "jinja")
    # The suite's own key-encryption key (lakehouses wrap their keys by default), and
    # no key file: the machine's (python -m python_jobs.kek) stays out of the suite,
    # and a test that drops LAKEHOUSE_KEK gets a process without one.
    os.environ["LAKEHOUSE_KEK"] = secrets.token_hex(32)
    os.environ["LAKEHOUSE_KEK_FILE"] = str(_STATE / "no-kek-file")
    os.environ.pop("DBT_TARGET", None)


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
