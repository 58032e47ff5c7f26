"""The unit layer needs no JVM: a unit test that starts Spark fails."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dbt_harness import DbtProject
from tests.jinja_harness import Jinja


@pytest.fixture(autouse=True)
def _no_spark_started(request: pytest.FixtureRequest) -> Iterator[None]:
    from pyspark import SparkContext

    # in a full run the functional suites may already hold the session's JVM
    before = SparkContext._active_spark_context
    yield
    if before is None:
        assert SparkContext._active_spark_context is None, (
            f"{request.node.nodeid} started Spark; unit tests render and read files only"
        )


@pytest.fixture(scope="session")
def jinja(dbt: DbtProject) -> Jinja:
    """The macros rendered in plain Jinja (tests/jinja_harness.py), with the graph of
    one `dbt parse` of the project (no JVM)."""
    dbt.invoke("parse")
    manifest = dbt.manifest()
    return Jinja(graph={"nodes": manifest["nodes"], "sources": manifest["sources"]})
