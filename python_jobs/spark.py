"""One way to get a SparkSession: the same settings as dbt's ``local`` target.

    from python_jobs import get_spark
    spark = get_spark("my_job")                          # dbt's warehouse + metastore
    spark = get_spark("audit", shared_metastore=False)   # may run while dbt runs

Why two modes: the local target's metastore is an embedded Derby database, which
admits one JVM at a time. A job that must run *while* dbt runs (the audit stream)
takes ``shared_metastore=False``: same warehouse, same Delta settings, but Spark's
in-memory catalog, and it addresses tables by path, resolved from dbt's manifest
(:mod:`python_jobs.relations`). Delta's transaction log, not the metastore, is the
source of truth for a Delta table, and it is safe for readers and writers in several
JVMs at once. Everything else uses the shared metastore and table names, exactly
like dbt.

On the Spark cluster of ``python -m python_jobs.cluster``, the variables its ``env``
prints (LAKEHOUSE_SPARK_MASTER, LAKEHOUSE_METASTORE_URL) make every job an
application of that master on the Derby network metastore the Thrift server shares.

    python -m python_jobs.spark --settings          # print the resolved settings
    python -m python_jobs.spark --sql "show tables in silver"
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from python_jobs.jars import OWN, delta_artifacts, derby_client_classpath, require_delta_jars
from python_jobs.kek_hook import private_umask
from python_jobs.project import ProjectError, private_folder, prog, spark_parameters, state_dir

METASTORE_KEYS = (
    "spark.hadoop.javax.jdo.option.ConnectionURL",
    "spark.hadoop.javax.jdo.option.ConnectionDriverName",
)


# For the Thrift servers this project starts (the warm engine, the loopback cluster):
# each statement runs to its end inside the client's ExecuteStatement call. dbt-spark
# submits asynchronously and, when the first poll finds the statement still running,
# sleeps its poll interval (5 s by default) before asking again: a 0.3 s statement
# then costs 5 s, a 5.1 s one 10 s. With a synchronous server the first poll finds it
# finished. (Servers this project does not start: the `thrift` and `warm` targets
# poll every second, profiles.yml.) And no log per statement (dbt never fetches one):
# Hive keeps it by default under <java.io.tmpdir>/<user>/operation_logs, a folder any
# local user can make first; each server names its own private folder, were it on.
THRIFT_SERVER_SETTINGS = {
    "spark.sql.hive.thriftServer.async": "false",
    "spark.hadoop.hive.server2.logging.operation.enabled": "false",
}
OPERATION_LOG_LOCATION = "hive.server2.logging.operation.log.location"


# Hadoop's own local file system classes, for a session the project's (jvm/src) cannot
# serve: one whose master is not local (a cluster's executors have no such jar), or an
# adopter's profile that replaced the driver's class path the jar is on.
HADOOP_LOCAL_FS = {
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.LocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.LocalFs",
}


def _local_fs_where_it_loads(settings: dict[str, str]) -> None:
    on_class_path = str(OWN.jar) in (settings.get("spark.driver.extraClassPath") or "").split(
        os.pathsep
    )
    if settings.get("spark.master", "local").startswith("local") and on_class_path:
        return
    for key, hadoops in HADOOP_LOCAL_FS.items():
        if settings.get(key, "").startswith("gdpr_lakehouse."):
            settings[key] = hadoops


# Where Spark makes the authentication secret itself (SecurityManager.initializeAuth);
# elsewhere (a standalone master) spark.authenticate needs one configured, shared with
# the workers.
SECRET_MADE_BY_SPARK = ("local", "yarn", "k8s://")
SECRET_SETTINGS = ("spark.authenticate.secret", "spark.authenticate.secret.file")


def _secret_in_spark_defaults() -> bool:
    """True when $SPARK_CONF_DIR/spark-defaults.conf, which spark-submit loads into every
    JVM it starts, sets Spark's secret (the loopback cluster's: python_jobs.cluster). Only
    whether it does: the secret stays in that file, out of these settings and their
    printout."""
    folder = os.environ.get("SPARK_CONF_DIR")
    if not folder:
        return False
    try:
        lines = (Path(folder) / "spark-defaults.conf").read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return any(re.match(r"\s*spark\.authenticate\.secret[\s=:]", line) for line in lines)


def _authentication_where_spark_makes_the_secret(settings: dict[str, str]) -> None:
    """The local target authenticates Spark's own ports (profiles.yml): a session an
    adopter's target lays on a standalone master, with no secret of its own, keeps
    Spark's default rather than failing to start. On a standalone master whose secret
    spark-defaults.conf holds (the loopback cluster's), it authenticates: the master
    refuses an application that does not."""
    master = settings.get("spark.master", "local")
    made_by_spark = master.startswith(SECRET_MADE_BY_SPARK)
    configured = any(key in settings for key in SECRET_SETTINGS)
    if not made_by_spark and _secret_in_spark_defaults():
        settings["spark.authenticate"] = "true"
    elif settings.get("spark.authenticate") == "true" and not (made_by_spark or configured):
        settings["spark.authenticate"] = "false"


def spark_settings(*, shared_metastore: bool = True) -> dict[str, str]:
    """The local target's server_side_parameters, rendered, plus the metastore mode."""
    settings = spark_parameters()
    _local_fs_where_it_loads(settings)
    _authentication_where_spark_makes_the_secret(settings)
    if not shared_metastore:
        settings["spark.sql.catalogImplementation"] = "in-memory"
        for key in METASTORE_KEYS:
            settings.pop(key, None)
    elif settings.get(METASTORE_KEYS[0], "").startswith("jdbc:derby://"):
        # the cluster's Derby network metastore (python -m python_jobs.cluster)
        settings["spark.driver.extraClassPath"] = os.pathsep.join(
            filter(None, [settings.get("spark.driver.extraClassPath"), derby_client_classpath()])
        )
    return settings


def get_spark(app_name: str | None = None, *, shared_metastore: bool = True) -> SparkSession:
    """A SparkSession on dbt's local warehouse, with Delta, from the profile's settings.

    If this process already has a session (dbt in-process, a test), that one is
    returned: one JVM per process.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    settings = spark_settings(shared_metastore=shared_metastore)
    if shared_metastore and settings.get(METASTORE_KEYS[0], "").startswith("jdbc:derby:;"):
        from python_jobs import engine

        if engine.running():
            raise ProjectError(
                "the warm engine (make up) holds the local metastore; this job runs in it "
                "only through its own command, or stop the engine first (make down)"
            )
    if app_name:
        settings["spark.app.name"] = app_name
    return build_session(settings)


def jars_by_path(settings: dict[str, str]) -> dict[str, str]:
    """The settings with Delta's jars by their path in the local Maven repository (the
    engine's profile names them so; an adopter's profile may still resolve them by Ivy
    with spark.jars.packages, which this replaces: the same jars, python_jobs.jars walks
    Delta's POMs, without Ivy's report on every start), and on the driver's own class
    path too, where the Thrift server's threads see them."""
    settings = dict(settings)
    settings.pop("spark.jars.packages", None)
    settings.pop("spark.jars.excludes", None)
    jars = [str(artifact.jar) for artifact in delta_artifacts()]
    listed = [jar for jar in (settings.get("spark.jars") or "").split(",") if jar]
    settings["spark.jars"] = ",".join(dict.fromkeys([*listed, *jars]))
    classpath = (settings.get("spark.driver.extraClassPath") or "").split(os.pathsep)
    settings["spark.driver.extraClassPath"] = os.pathsep.join(
        dict.fromkeys(filter(None, [*jars, *classpath]))
    )
    return settings


def build_session(settings: dict[str, str]) -> SparkSession:
    """A new session (and JVM) from these settings, once Delta's jars are present. The
    process's umask gains 077 first: what the JVM and this process write from here on is
    their owner's only."""
    require_delta_jars()
    # a new lakehouse folder is its owner's only: the metastore makes each schema's
    # folder with its parent's mode (Hive inherits permissions); Spark's files are 600
    private_folder(state_dir(), narrow=False)
    settings = jars_by_path(settings)
    # Python on a cluster's executors: the same interpreter as this driver.
    settings.setdefault("spark.pyspark.python", sys.executable)
    # The JVM inherits this process's umask: Spark makes its scratch folders (shuffle and
    # spill files, under /tmp by default) with it, 755 under a shell's usual 022, and their
    # rows are what the job read. This user's only, as dbt's (python_jobs.kek_hook).
    private_umask()
    builder = SparkSession.builder
    if settings.get("spark.sql.catalogImplementation") == "hive":
        builder = builder.enableHiveSupport()
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.spark"),
        description="Inspect the local lakehouse with the same Spark settings as dbt.",
    )
    parser.add_argument("--settings", action="store_true", help="print the settings and exit")
    parser.add_argument("--sql", action="append", default=[], help="statement to run and show")
    parser.add_argument(
        "--no-shared-metastore",
        action="store_true",
        help="in-memory catalog (tables by path); safe while dbt runs",
    )
    args = parser.parse_args(argv)
    try:
        if args.settings or not args.sql:
            shared = not args.no_shared_metastore
            for key, value in sorted(spark_settings(shared_metastore=shared).items()):
                print(f"{key}={value}")
            return 0
        spark = get_spark("gdpr_lakehouse_sql", shared_metastore=not args.no_shared_metastore)
        for statement in args.sql:
            spark.sql(statement).show(100, truncate=False)
        return 0
    except (ProjectError, PySparkException) as error:
        print(f"error: {str(error).strip()}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
