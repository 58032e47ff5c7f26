"""A lakehouse made with the envelope on, probed the way a table user would.

Run as ``python -m tests.adversarial.envelope_probe`` in its own process: the
envelope needs its own vault, so its own warehouse, metastore and JVM. The caller
sets LAKEHOUSE_DIR, DBT_TARGET_PATH, DBT_LOG_PATH, LAKEHOUSE_KEK and SPARK_USER.
Prints one line ``PROBE <json>``: what each probe returned.
"""

from __future__ import annotations

import json
import os
import sys

from dbt.cli.main import dbtRunner
from pyspark.sql import SparkSession

from python_jobs import generate
from tests.dbt_harness import ROOT

PROJECT = ["--project-dir", str(ROOT), "--profiles-dir", str(ROOT)]


def main() -> int:
    generate.main(["--patients", "12"])
    variables = json.dumps({"key_envelope": True, "pii_readers": [os.environ["SPARK_USER"]]})
    run = dbtRunner().invoke(
        [
            "run",
            "--select",
            "+privacy_patients_masked",
            "+privacy_users_masked",
            "--vars",
            variables,
            *PROJECT,
        ]
    )
    if not run.success:
        print("PROBE " + json.dumps({"error": f"dbt run failed: {run.exception or run.result}"}))
        return 1
    # a table user's query through dbt, against the pipeline's own session
    show = dbtRunner().invoke(
        ["show", "--inline", "select '${env:LAKEHOUSE_KEK}' as probe", *PROJECT]
    )
    shown = (
        [] if not show.success else [list(row) for row in show.result.results[0].agate_table.rows]
    )
    # dbt's own session (the JVM's default one; dbt ran it on another thread)
    spark = SparkSession.builder.getOrCreate()
    view_text = {
        view: "\n".join(row[0] for row in spark.sql(f"show create table {view}").collect())
        for view in ("privacy.patients_masked", "privacy.users_masked")
    }
    counts = spark.sql(
        "select count(*), count(full_name), count(email) from privacy.patients_masked"
    ).first()
    print(
        "PROBE "
        + json.dumps(
            {
                "show": shown,
                "view_text": view_text,
                "patients": counts[0],
                "names_revealed": counts[1],
                "emails_revealed": counts[2],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
