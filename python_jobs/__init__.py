"""gdpr_lakehouse Python jobs: the work SQL cannot reach (streams, purge, scans).

Every job gets its SparkSession from :func:`python_jobs.get_spark`, which reads the
same settings dbt's ``local`` target uses (``profiles.yml``), so the jobs and dbt
always see one warehouse, one metastore and one set of Delta jars.
"""

from typing import Any

__all__ = ["get_spark"]


def __getattr__(name: str) -> Any:
    # Lazy, so `python -m python_jobs.<job>` does not import pyspark before it must.
    if name == "get_spark":
        from python_jobs.spark import get_spark

        return get_spark
    raise AttributeError(name)
