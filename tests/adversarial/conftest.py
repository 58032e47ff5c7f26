"""The adversarial suite's lakehouse: the session's shared one, built once if missing.

Every module here attacks that lakehouse the way a user who forgets a flag, an operator
who deletes the wrong row, or someone with read access to the tables would, and then
checks the guarantee held. A module that breaks state on purpose puts it back before it
ends, so the suites after it see a sound lakehouse.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from python_jobs.relations import delta_relations
from tests.dbt_harness import DbtProject, build_once

PATIENTS = 120


@pytest.fixture(scope="package")
def tables(dbt: DbtProject, spark: SparkSession, lakehouse_dir: Path) -> list[Path]:
    """The folder of every Delta relation the graph declares, after a build if needed."""
    build_once(dbt, spark, PATIENTS)
    warehouse = lakehouse_dir / "warehouse"
    return [relation.path(warehouse) for relation in delta_relations(dbt.manifest())]
