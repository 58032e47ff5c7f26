"""The unit layer needs no JVM: a unit test that starts Spark fails."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


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
