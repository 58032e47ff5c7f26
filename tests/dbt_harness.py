"""Drive real dbt in-process (dbtRunner), against this project, with throw-away state.

Every invocation gets the suite's own target/ and logs/ folders so a test run never
touches the user's target/, logs/ or .lakehouse/.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner, dbtRunnerResult

from python_jobs.delta_files import commit_files

ROOT = Path(__file__).resolve().parent.parent

# The table properties dbt_project.yml sets on every Delta relation, at default vars.
BASELINE = {
    "delta.enableChangeDataFeed": "true",
    "delta.enableInCommitTimestamps": "true",
    "delta.enableDeletionVectors": "true",
    "delta.logRetentionDuration": "interval 30 days",
    "delta.deletedFileRetentionDuration": "interval 7 days",
}


def _children_cpu() -> float:
    """CPU seconds so far of this process's child processes still running (the
    in-process Spark's JVM), read from /proc (Linux); 0 elsewhere."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():  # the parent pid
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _timed(args: tuple[str, ...], invoke: Any, argv: list[str]) -> dbtRunnerResult:
    """invoke(argv); with TEST_DBT_TIMINGS set, one line per dbt command appended to
    that file: wall seconds, CPU seconds of this process (dbt's Python: parsing,
    Jinja, the adapter), CPU seconds of the JVM it drives, the test, the command. It shows how
    the suite's time splits between dbt's Python and Spark; never set in `make test`."""
    log = os.environ.get("TEST_DBT_TIMINGS")
    if not log:
        return invoke(argv)
    wall, cpu, jvm = time.perf_counter(), time.process_time(), _children_cpu()
    try:
        return invoke(argv)
    finally:
        spent = (time.perf_counter() - wall, time.process_time() - cpu, _children_cpu() - jvm)
        with open(log, "a") as out:
            test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
            out.write("\t".join(f"{s:.2f}" for s in spent) + f"\t{test}\t{' '.join(args)[:200]}\n")


def free_port() -> int:
    """A loopback port no one listens on now: an engine a test starts never takes the
    user's (LAKEHOUSE_ENGINE_PORT)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class DbtProject:
    target_path: Path
    log_path: Path
    # the target path of the last command: manifest() reads what it parsed
    _last: Path | None = field(default=None, init=False, repr=False)
    # (target path, environment) whose manifest.json a command of this session wrote
    _written: set[tuple[str, str]] = field(default_factory=set, init=False, repr=False)

    def _target_path(self, args: tuple[str, ...]) -> Path:
        """dbt parses the whole project again when a command's --vars differ from the
        last parse saved in its target path (~7 s a time in a CI run, 25 times in the
        shared lane), and again for the next command without them. A command with
        --vars gets a target path of its own for that value, so the suite's target/
        (whose manifest the suites and jobs read) keeps the plain parse, partial
        parsing stays warm for both, and the manifest never holds a test's vars."""
        self._last = self.target_path
        if "--vars" in args:
            value = args[args.index("--vars") + 1]
            digest = hashlib.sha1(value.encode()).hexdigest()[:12]
            self._last = self.target_path.parent / f"{self.target_path.name}-vars-{digest}"
        return self._last

    def _paths(self, args: tuple[str, ...]) -> list[str]:
        return [
            "--project-dir",
            str(ROOT),
            "--profiles-dir",
            str(ROOT),
            "--target-path",
            str(self._target_path(args)),
            "--log-path",
            str(self.log_path),
        ]

    def _argv(self, args: tuple[str, ...]) -> tuple[list[str], tuple[str, str] | None]:
        """The command's arguments, and the key to record once it has written its
        manifest. dbt writes target/manifest.json twice in each command (after its
        parse and after its run; 1.1 s of a warm 4.7 s `dbt run` of one model,
        profiled) and run_results.json once, and no test reads run_results.json.
        The manifest changes only with the project's files, which no test edits, its
        vars (a target path of their own, above) and the environment its env_var()
        calls read: so a command whose target path already holds a manifest this
        session wrote in the same environment writes none (--no-write-json), and
        `parse` always writes one (what build_once asks for)."""
        argv = [*args, *self._paths(args)]
        environment = hashlib.sha1(repr(sorted(os.environ.items())).encode()).hexdigest()
        key = (str(self._last), environment)
        if "--no-write-json" in args or args[:1] == ("parse",):
            return argv, None if "--no-write-json" in args else key
        if key in self._written and self._manifest_stamp() is not None:
            return [*argv, "--no-write-json"], None
        return argv, key

    def _run(self, runner: dbtRunner, args: tuple[str, ...]) -> dbtRunnerResult:
        argv, key = self._argv(args)
        written = self._manifest_stamp()
        result = _timed(args, runner.invoke, argv)
        if key is not None and self._manifest_stamp() not in (None, written):
            self._written.add(key)  # this command wrote it (a failed parse writes none)
        return result

    def _manifest_stamp(self) -> int | None:
        try:
            return (Path(str(self._last)) / "manifest.json").stat().st_mtime_ns
        except OSError:
            return None

    def invoke(self, *args: str, expect_success: bool = True) -> dbtRunnerResult:
        result = self._run(dbtRunner(), args)
        if expect_success and not result.success:
            raise AssertionError(
                f"dbt {' '.join(args)} failed: {result.exception or result.result}"
            )
        return result

    def invoke_errors(self, *args: str) -> tuple[bool, str]:
        """Run a dbt command; (success, every error message dbt logged or raised)."""
        errors: list[str] = []

        def collect(event: Any) -> None:
            if event.info.level == "error":
                errors.append(event.info.msg)

        result = self._run(dbtRunner(callbacks=[collect]), args)
        if result.exception is not None:
            errors.append(str(result.exception))
        return result.success, "\n".join(errors)

    def run_operation(self, macro: str, args: str | None = None) -> tuple[bool, str]:
        """Run an operation; (success, the error messages dbt logged)."""
        return self.invoke_errors(
            "run-operation", macro, *(["--args", args] if args is not None else [])
        )

    def operation(
        self, macro: str, args: dict | None = None, expect_success: bool = True
    ) -> tuple[bool, str]:
        """`dbt run-operation macro --args <json>`; fails the test unless it succeeds,
        when expect_success (the default)."""
        import json

        success, errors = self.run_operation(macro, json.dumps(args) if args is not None else None)
        if expect_success and not success:
            raise AssertionError(f"dbt run-operation {macro} {args} failed: {errors}")
        return success, errors

    # A rendering writes no manifest.json or run_results.json: writing them was ~70% of
    # a warm `dbt compile --inline` (0.83 s, 0.25 s without), and the suites' jobs read
    # the manifest a build or parse wrote, never a rendering's.
    RENDER = ("compile", "--no-populate-cache", "--no-write-json", "--inline")

    def compile_errors(self, sql: str) -> tuple[bool, str]:
        """Render Jinja through dbt; (success, every error message), no connection."""
        return self.invoke_errors(*self.RENDER, sql)

    def compile_inline(self, sql: str) -> str:
        """Render Jinja (a macro call) through dbt itself; no warehouse connection."""
        result = self.invoke(*self.RENDER, sql)
        return result.result.results[0].node.compiled_code.strip()

    def manifest(self) -> dict[str, Any]:
        import json

        return json.loads(((self._last or self.target_path) / "manifest.json").read_text())


def latest_versions(tables: list[Path]) -> dict[str, int]:
    """Each table's newest Delta version, read from its _delta_log (-1: no table)."""
    return {str(table): max(commit_files(table), default=-1) for table in tables}


def build_once(dbt: DbtProject, spark: Any, patients: int = 120) -> None:
    """Land batch 1 and `dbt build`, unless an earlier suite of the session already
    built the lakehouse (then only parse, for a fresh manifest)."""
    from demo import generate

    tables = ("bronze.patients", "bronze.orders", "privacy.erasure_requests")
    if all(spark.catalog.tableExists(table) for table in tables):
        dbt.invoke("parse")
    else:
        generate.main(["--patients", str(patients), "--batch", "1"])
        dbt.invoke("build")


def decrypted(cipher: str, key: str, owner: str | None = None) -> str:
    """SQL: a ciphertext (`alias.column`) opened with a vault key as the vault stores it
    (`alias.data_key` of a vault row), as a string; NULL where that key does not open
    it, or the value was not written for that subject and column. A lakehouse wraps its
    keys with the key-encryption key by default (key_envelope), and the suite's
    lakehouses hold its key in LAKEHOUSE_KEK (tests/conftest.py): the project's SQL
    extension opens the key inside Spark, as the macros do (gdpr_try_decrypt), and no
    statement returns it. The bindings are written out here, as macro key_binding and
    encrypt_pii make them: the owner is the key's row's subject_pseudonym."""
    owner = owner or f"{key.rsplit('.', 1)[0]}.subject_pseudonym"
    column = cipher.rsplit(".", 1)[-1].strip("`").lower()
    return (
        f"cast(gdpr_try_decrypt({cipher}, {key}, encode(concat('subject/', {owner}), 'utf-8'), "
        f"encode(concat({owner}, '/{column}'), 'utf-8'), 'LAKEHOUSE_KEK') as string)"
    )


def opened_key(stored: bytes, pseudonym: str) -> bytes:
    """A vault key as stored, opened in Python with the suite's key-encryption key
    (LAKEHOUSE_KEK) and its binding (its subject's pseudonym, macro key_binding): for
    checks that decrypt outside Spark."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    kek = bytes.fromhex(os.environ["LAKEHOUSE_KEK"])
    binding = f"subject/{pseudonym}".encode()
    return AESGCM(kek).decrypt(bytes(stored[:12]), bytes(stored[12:]), binding)


def record_ref(id_expr: str) -> str:
    """SQL: a source record id as bronze stores it, hashed under the tombstone key
    (macro anonymized_record_id, rendered by python_jobs.macros)."""
    from python_jobs.macros import Macros

    return Macros({}).anonymized_record_id(id_expr, keys="privacy.system_keys")


def tombstone_hash(id_expr: str) -> str:
    """SQL: a subject id as a tombstone holds it, hashed under the tombstone key as the
    pipeline hashes it (macro tombstone_hash, rendered by python_jobs.macros)."""
    from python_jobs.macros import Macros

    return str(Macros({}).tombstone_hash(id_expr, keys="privacy.system_keys")).strip()


def landed_encounters_of(patient_id: str) -> str:
    """SQL predicate on encounter_ref: the encounters landed for this patient. Bronze
    names a patient only by pseudonym, and an erased patient has none left (a patient
    let in again by a fault would get a new one), so their rows are found by the
    encounter ids the hospital sent, hashed as bronze stores them."""
    return (
        f"encounter_ref in (select {record_ref('encounter_id')} from landing.encounters "
        f"where patient_id = '{patient_id}')"
    )


def bronze_encounter_counts() -> str:
    """SQL: (patient_id, encounters) per patient of bronze.encounters, the source id
    read from the vault by pseudonym (patients still held)."""
    return (
        "select k.subject_id as patient_id, count(*) as encounters from bronze.encounters e "
        "inner join privacy.subject_keys k on k.subject_pseudonym = e.patient_pseudonym "
        "group by k.subject_id"
    )


def version_before_erasure(spark: Any, relation: str, subject_id: str) -> int:
    """The version of `relation` just before the subject's erasure (its evidence)."""
    version = spark.sql(
        "select min(version_before) from privacy.erasure_evidence as evidence "
        "inner join privacy.erasure_requests as requests on requests.request_id = evidence.request_id "
        f"where requests.subject_id = '{subject_id}' and evidence.relation = '{relation}'"
    ).first()[0]
    assert version is not None, f"no erasure evidence for {relation}"
    return int(version)


def landed_record_ids(spark: Any, subject_id: str) -> list[str]:
    """The ids the source systems gave the subject's records (encounters, clicks,
    orders), read from the landing zone: each is linked to the person there."""
    rows = spark.sql(
        f"select encounter_id from landing.encounters where patient_id = '{subject_id}' "
        f"union select click_id from landing.clicks where user_id = '{subject_id}' "
        f"union select order_id from landing.orders where user_id = '{subject_id}'"
    ).collect()
    return sorted(row[0] for row in rows if row[0] is not None)


def assert_history_names_by_pseudonym_only(
    spark: Any, relation: str, column: str, subject_id: str, pseudonym: str
) -> None:
    """The version of `relation` before the subject's erasure, and the pre-images its
    erasure left in the Change Data Feed: no value of any column is the source id, nor
    the id the source gave one of the subject's records (an encounter, click or order
    id: looked up in the source, it names the person), and the subject's rows are there
    under `column` = the pseudonym."""
    version = version_before_erasure(spark, relation, subject_id)
    history = spark.sql(f"select * from {relation} version as of {version}")
    erased = spark.sql(
        f"select * from table_changes('{relation}', {version + 1}) "
        "where _change_type in ('delete', 'update_preimage')"
    )
    records = landed_record_ids(spark, subject_id)
    quoted = ", ".join(f"'{record}'" for record in [subject_id, *records])
    for frame in (history, erased):
        values = " or ".join(f"cast(`{c}` as string) in ({quoted})" for c in frame.columns)
        named = frame.where(values).count()
        assert named == 0, (
            f"{relation} names the erased subject {subject_id} (by its id or one of its "
            f"{len(records)} source record ids) in {named} row(s)"
        )
        assert column in frame.columns, f"{relation} has no column {column}"
        mine = frame.where(f"`{column}` = '{pseudonym}'").count()
        assert mine > 0, f"the erased subject's rows are not in the history of {relation}"


def isolate(state: Path) -> None:
    """Point every process setting at a throw-away `state` folder, before anything
    can start Spark: the suite's (and the simulation's) lakehouse, target/, logs/ and
    key-encryption key, never the user's."""
    os.environ["LAKEHOUSE_DIR"] = str(state / "lakehouse")
    os.environ["LAKEHOUSE_PROJECT_DIR"] = str(ROOT)
    os.environ["DBT_PROFILES_DIR"] = str(ROOT)
    # the suite's own target/ for dbt and for the jobs that read its manifest
    os.environ["DBT_TARGET_PATH"] = str(state / "target")
    # and its logs/, where purge redacts and forensic_scan looks
    os.environ["DBT_LOG_PATH"] = str(state / "logs")
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
    os.environ["GDPR_LAKEHOUSE_JINJA_CACHE"] = str(state / "jinja")
    # The suite's own key-encryption key (lakehouses wrap their keys by default), and
    # no key file: the machine's (python -m python_jobs.kek) stays out of the suite,
    # and a test that drops LAKEHOUSE_KEK gets a process without one.
    os.environ["LAKEHOUSE_KEK"] = secrets.token_hex(32)
    os.environ["LAKEHOUSE_KEK_FILE"] = str(state / "no-kek-file")
    os.environ.pop("DBT_TARGET", None)
