"""The Spark JVM's classes, archived once: every later start maps them instead of loading them.

    python -m python_jobs.class_archive            # make or refresh it (make setup runs this)
    python -m python_jobs.class_archive --check    # exit 1 when it is missing or stale
    python -m python_jobs.class_archive path       # where it is

A fresh JVM of the `local` target (each embedded dbt command, each job, each test lane)
loads, verifies and links the classes of Spark, Hive and Delta it needs before its
first statement returns. HotSpot's class data sharing (CDS) keeps them
parsed and verified in an archive that a later JVM maps from disk. `make setup` writes
one: a JVM of the local target's settings runs the statements the project runs (Delta
writes, MERGE, change data, REORG and VACUUM, a stream, a cache) in a throw-away
lakehouse, and the JVM archives every class it loaded when it exits
(-XX:ArchiveClassesAtExit, a dynamic archive over the JDK's own).

The venv's start hook (python_jobs/kek_hook.py, which `make setup` installs) names it
to the local target's JVM (profiles.yml: `-XX:SharedArchiveFile`, from
LAKEHOUSE_JVM_CLASS_ARCHIVE) only when it is a regular file of this user's that no
other user may write (the JVM runs what it holds) and of the size recorded when it was
made: a JVM maps an archive cut short and dies of SIGBUS at start, whatever -Xshare
says. The JVM checks the rest itself: made by another JDK build, or for another class
path (a pyspark or Delta upgrade, a jar rebuilt), it is not used and the JVM loads its
classes as before (its message about that is silenced: `-Xlog:cds*=off`). So the
archive only ever changes how fast a JVM starts, never what it does. This command makes
it again when anything it was made from changed (a stamp beside it). The warm engine's
JVM maps it too: its Thrift server's one extra jar goes at the end of its class path.

Where: ``$LAKEHOUSE_CLASS_ARCHIVE``, default ``gdpr_lakehouse/spark-classes.jsa`` in the
venv running this Python, whose pyspark it is made for (a checkout elsewhere has its
own venv and its own archive; a venv made again has none until `make setup`). Outside
a venv, none unless LAKEHOUSE_CLASS_ARCHIVE names a path. Set it empty to run without
one. Its folder is made 700 and the file 600. ~230 MB on disk.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from python_jobs.jars import jdk_tool
from python_jobs.kek_hook import ARCHIVE_ENV as ENV
from python_jobs.kek_hook import JVM_ARCHIVE_ENV, class_archive_file, usable_class_archive
from python_jobs.project import (
    ProjectError,
    open_private,
    private_folder,
    prog,
    state_dir,
)

# Raised when what the archive is made from changes in a way the stamp cannot see.
WORKLOAD_VERSION = "1"


def archive_path() -> Path | None:
    """Where the archive is (LAKEHOUSE_CLASS_ARCHIVE, else in this venv), or None."""
    return class_archive_file()


def _stamp_path(archive: Path) -> Path:
    return archive.with_name(archive.name + ".stamp")


def _file_facts(path: Path) -> list[object]:
    try:
        facts = path.stat()
    except OSError:
        return [str(path), None]
    return [str(path), facts.st_size, facts.st_mtime_ns]


def stamp() -> str:
    """What the archive is made from: the JVM's build, the driver's class path (each
    jar's size and time, as the JVM itself checks them), pyspark's jars, the JVM flags
    of the profile and this workload's version."""
    import pyspark

    from python_jobs.spark import jars_by_path, spark_settings

    settings = jars_by_path(spark_settings())
    version = subprocess.run(
        [jdk_tool("java"), "-Xshare:auto", "-version"], capture_output=True, text=True, check=False
    ).stderr
    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    facts = {
        "java": [os.path.realpath(jdk_tool("java")), version],
        "classpath": [
            _file_facts(Path(entry))
            for entry in settings.get("spark.driver.extraClassPath", "").split(os.pathsep)
            if entry
        ],
        "pyspark": [pyspark.__version__, [_file_facts(jar) for jar in jars]],
        "options": _options_without_archive(settings.get("spark.driver.extraJavaOptions", "")),
        "workload": WORKLOAD_VERSION,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def _options_without_archive(options: str) -> list[str]:
    return [
        flag
        for flag in options.split()
        if not flag.startswith(("-XX:SharedArchiveFile=", "-Xlog:cds", "-Dderby.stream"))
    ]


def current(archive: Path) -> bool:
    """True when the archive exists and its stamp matches what it would be made from."""
    try:
        recorded = _stamp_path(archive).read_text().split()
    except OSError:
        return False
    return usable_class_archive(archive) and recorded[:1] == [stamp()]


# The statements the project's JVMs run, in a throw-away lakehouse: what gets archived
# is every class they load.
WORKLOAD = """
create schema if not exists cds
create table cds.people (id string, pseudonym string, pii binary, amount int) using delta
    tblproperties ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'true')
insert into cds.people select concat('P', id), sha2(cast(id as string), 256),
    aes_encrypt(cast(id as string), unhex(sha2('k', 256)), 'GCM'), cast(id as int)
    from range(200)
create or replace table cds.totals using delta
    tblproperties ('delta.enableChangeDataFeed' = 'true') as
    select left(pseudonym, 2) as prefix, count(*) as n, sum(amount) as amount
    from cds.people group by 1
merge into cds.people as t using (select 'P1' as id) as s on t.id = s.id when matched then delete
merge into cds.totals as t using (select prefix, n from cds.totals limit 3) as s
    on t.prefix = s.prefix when matched then update set n = s.n + 1 when not matched then insert *
update cds.people set amount = amount + 1 where id = 'P2'
delete from cds.people where id = 'P3'
select count(*), min(cast(aes_decrypt(pii, unhex(sha2('k', 256)), 'GCM') as string)) from cds.people
select * from table_changes('cds.people', 0) where _change_type != 'insert'
describe history cds.people limit 10
describe detail cds.people
describe extended cds.people
show tblproperties cds.people
show table extended in cds like '*'
cache table cds_batch options ('storageLevel' 'MEMORY_ONLY') as select id from cds.people limit 5
select count(*) from cds.people where id in (select id from cds_batch)
uncache table if exists cds_batch
begin declare done boolean default false; while not done do set done = true; end while; end
reorg table cds.people apply (purge)
set spark.databricks.delta.retentionDurationCheck.enabled = false
vacuum cds.people lite retain 0 hours
restore table cds.totals to version as of 0
alter table cds.people set tblproperties ('delta.logRetentionDuration' = 'interval 30 days')
"""


def _train(archive: Path) -> None:
    """In this process (a JVM started with -XX:ArchiveClassesAtExit): run the workload,
    then end the JVM with System.exit, which writes the archive."""
    from python_jobs.spark import get_spark

    spark = get_spark("class archive")
    for statement in _statements():
        spark.sql(statement).collect()
    stream = (
        spark.readStream.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", 0)
        .table("cds.people")
        .writeStream.format("delta")
        .option("checkpointLocation", str(state_dir() / "cds-checkpoint"))
        .trigger(availableNow=True)
        .toTable("cds.changes")
    )
    stream.awaitTermination()
    jvm = spark.sparkContext._jvm
    spark.stop()
    with contextlib.suppress(Exception):  # the gateway goes with the JVM
        jvm.java.lang.System.exit(0)


def _statements() -> list[str]:
    statements, current_lines = [], []
    for line in WORKLOAD.strip().splitlines():
        if line.startswith("    ") and current_lines:
            current_lines.append(line.strip())
            continue
        if current_lines:
            statements.append(" ".join(current_lines))
        current_lines = [line.strip()]
    if current_lines:
        statements.append(" ".join(current_lines))
    return statements


def training_env(scratch: Path, made: Path) -> dict[str, str]:
    """The training process's environment: a throw-away lakehouse under `scratch`, an
    embedded local session (never the warm engine or a cluster), no archive in use, and
    no secret at all (the key-encryption key, the engine's token, dbt's secret
    variables): the JVM whose classes are archived never holds one. (A dynamic archive
    keeps class metadata, not the heap; a grep of one made with the key loaded found
    no trace of it, and now it is not even there to find.)"""
    options = " ".join(
        filter(
            None,
            [
                os.environ.get("LAKEHOUSE_JAVA_OPTIONS", ""),
                f"-XX:ArchiveClassesAtExit={made}",
                "-Xlog:cds*=off",
            ],
        )
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in (
            JVM_ARCHIVE_ENV,
            "LAKEHOUSE_KEK",
            "LAKEHOUSE_METASTORE_URL",
            "LAKEHOUSE_SPARK_MASTER",
        )
        and not key.startswith("DBT_ENV_SECRET")
    }
    env.update(
        {
            "LAKEHOUSE_DIR": str(scratch / "lakehouse"),
            "LAKEHOUSE_ENGINE": "off",
            ENV: "",  # no archive while making one (the hook then names none)
            "LAKEHOUSE_KEK_FILE": "",  # nor a key: the hook reads none
            "LAKEHOUSE_JAVA_OPTIONS": options,
        }
    )
    return env


def make(archive: Path) -> float:
    """Make the archive in a JVM of its own, in a throw-away lakehouse; return seconds."""
    folder = private_folder(archive.parent)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gdpr-lakehouse-cds-") as scratch:
        made = Path(scratch) / "spark-classes.jsa"
        env = training_env(Path(scratch), made)
        done = subprocess.run(
            [sys.executable, "-m", "python_jobs.class_archive", "--train", str(made)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if not made.is_file():
            raise ProjectError(
                f"the JVM wrote no class archive (exit {done.returncode}): "
                + (done.stdout + done.stderr)[-1500:]
            )
        partial = folder / f".{archive.name}.{os.getpid()}"
        try:
            with made.open("rb") as source, open_private(partial) as target:
                shutil.copyfileobj(source, target, 1 << 20)
            os.replace(partial, archive)
        finally:
            partial.unlink(missing_ok=True)
    # what it is made from, and its size: the venv's start hook names to the JVM only
    # an archive of that size (python_jobs.kek_hook.usable_class_archive)
    with open_private(_stamp_path(archive), "w") as out:
        out.write(f"{stamp()} {archive.stat().st_size}\n")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.class_archive"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", nargs="?", choices=["make", "path"], default="make")
    parser.add_argument("--check", action="store_true", help="exit 1 when missing or stale")
    parser.add_argument("--train", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.train:
        _train(args.train)
        return 0
    archive = archive_path()
    if args.action == "path":
        print(archive if archive else "none")
        return 0
    if archive is None:
        why = f"{ENV} is empty" if ENV in os.environ else "this Python runs in no venv"
        print(f"class archive: none ({why}); each JVM loads its classes itself")
        return 0
    try:
        if current(archive):
            print(f"class archive present: {archive}")
            return 0
        if args.check:
            print(f"missing or stale: {archive}", file=sys.stderr)
            return 1
        seconds = make(archive)
    except (ProjectError, OSError) as error:
        # a start without it is slower, never different: set-up goes on
        print(
            f"warning: no class archive made ({error}); each JVM loads its classes itself",
            file=sys.stderr,
        )
        return 0
    size = archive.stat().st_size / 1e6
    print(f"class archive made in {seconds:.0f} s: {archive} ({size:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
