"""The lakehouse on a real Spark cluster, driven the way a user drives it.

`python -m python_jobs.cluster up` starts on loopback a standalone master and worker,
a Thrift server with Delta and a Derby network metastore; dbt talks to the Thrift
server (`--target thrift`) and the Python jobs run as applications of the same
master on the same metastore, while the Thrift server holds it. Every step is a
subprocess with the commands of the README; the cluster is stopped whatever happens.

Marked `cluster`: `pytest -m "not cluster"` skips it locally. `make test` runs the
refusals of bad settings and of clients without the cluster's secret; `make test-slow`
the end-to-end run and `down`.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from python_jobs.delta_files import read_snapshot
from tests.dbt_harness import ROOT

pytestmark = pytest.mark.cluster

PATIENTS = 60


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Cluster:
    def __init__(self, state: Path) -> None:
        master, thrift, derby = _free_ports(3)
        self.state = state
        self.env = {
            **os.environ,
            "LAKEHOUSE_DIR": str(state),
            "DBT_PROFILES_DIR": str(ROOT),
            "DBT_TARGET_PATH": str(state / "target"),
            "DBT_LOG_PATH": str(state / "logs"),
            "LAKEHOUSE_ACTOR": "cluster-test",
            "LAKEHOUSE_DRIVER_MEMORY": "2g",
            "LAKEHOUSE_EXECUTOR_MEMORY": "1g",
            "SPARK_MASTER_PORT": str(master),
            "SPARK_THRIFT_PORT": str(thrift),
            "LAKEHOUSE_DERBY_PORT": str(derby),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        }
        self.thrift_port = thrift

    def use_cluster(self) -> None:
        """What `eval "$(python -m python_jobs.cluster env)"` does in a shell."""
        printed = self.python("python_jobs.cluster", "env").stdout
        exports = dict(
            shlex.split(line.removeprefix("export "))[0].split("=", 1)
            for line in printed.splitlines()
            if line.startswith("export ")
        )
        assert exports["LAKEHOUSE_SPARK_MASTER"].startswith("spark://127.0.0.1:")
        assert exports["LAKEHOUSE_METASTORE_URL"].startswith("jdbc:derby://127.0.0.1:")
        self.env.update(exports)

    def run(
        self, *args: str, timeout: int = 900, check: bool = True
    ) -> subprocess.CompletedProcess:
        done = subprocess.run(
            list(args),
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0 or not check, (
            f"{' '.join(args)} exited {done.returncode}\n{done.stdout[-4000:]}\n"
            f"{done.stderr[-4000:]}"
        )
        return done

    def python(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run(sys.executable, "-m", *args, check=check)

    def dbt(self, *args: str) -> subprocess.CompletedProcess:
        return self.run(str(Path(sys.executable).parent / "dbt"), *args)

    def operation(self, macro: str, args: str) -> str:
        """`dbt run-operation <macro> --target thrift --args <args>`; its output."""
        return self.dbt("run-operation", macro, "--target", "thrift", "--args", args).stdout

    def token(self) -> str:
        """The cluster's secret, from the file `up` wrote for this user."""
        return (self.state / "cluster" / "token").read_text().strip()

    def sql(self, statement: str) -> list[dict]:
        """Rows as {column: value}, through the Thrift server (PyHive, as dbt-spark)."""
        from pyhive import hive

        connection = hive.connect(
            host="127.0.0.1",
            port=self.thrift_port,
            username="test",
            auth="CUSTOM",
            password=self.token(),
        )
        try:
            cursor = connection.cursor()
            cursor.execute(statement)
            names = [column[0].split(".")[-1] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        finally:
            connection.close()

    def value(self, statement: str):
        return next(iter(self.sql(statement)[0].values()))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    state = tmp_path_factory.mktemp("cluster-lakehouse")
    running = Cluster(state)
    # a secret of the shell `up` runs in that no process of the cluster needs
    running.env["UNRELATED_CLOUD_SECRET"] = "canary-of-the-caller"
    try:
        up = running.python("python_jobs.cluster", "up")
        assert "cluster up" in up.stdout
        running.use_cluster()
        yield running
    finally:
        running.python("python_jobs.cluster", "down", check=False)


def _applications(cluster: Cluster) -> list[str]:
    log = (cluster.state / "cluster" / "master.log").read_text(errors="replace")
    return [line for line in log.splitlines() if "Registering app " in line]


def test_build_erase_restore_purge_and_comply_on_the_cluster(cluster: Cluster) -> None:
    cluster.python("demo.generate", "--patients", str(PATIENTS), "--seed", "7")
    # the column-level generic tests are proven by the local builds; here the models,
    # snapshot, seeds and the singular (compliance) tests run on the cluster. An
    # --exclude replaces the default selector, so it names the audit completeness test
    # too (it holds only after audit_stream, run below).
    build = cluster.dbt(
        "build",
        "--target",
        "thrift",
        "--exclude",
        "test_type:generic",
        "tag:audit_completeness",
    )
    assert "ERROR=0" in build.stdout

    # the tables are Delta, in the cluster's warehouse, in the shared metastore
    detail = cluster.sql("describe detail bronze.patients")[0]
    assert detail["format"] == "delta"
    assert str(cluster.state / "warehouse") in detail["location"]
    subject, pseudonym = cluster.sql(
        "select k.subject_id, k.subject_pseudonym from privacy.subject_keys k "
        "join bronze.patients b on b.patient_pseudonym = k.subject_pseudonym "
        "order by k.subject_id limit 1"
    )[0].values()
    before = cluster.value("select count(*) from bronze.patients")
    created = min(row["version"] for row in cluster.sql("describe history bronze.patients"))
    count_subject = f"select count(*) from bronze.patients where patient_pseudonym = '{pseudonym}'"

    erase = cluster.operation("gdpr_erase", f"{{subject_ids: [{subject}], reason: cluster test}}")
    assert "Erased 1 request(s)" in erase, erase
    assert cluster.value(count_subject) == 0
    assert (
        cluster.value(f"select status from privacy.erasure_requests where subject_id = '{subject}'")
        == "erased"
    )
    # the vault was purged at once: on a cluster by the OPTIMIZE fallback, not REORG
    vault = cluster.sql("describe history privacy.subject_keys limit 5")
    assert any(row["operation"] == "OPTIMIZE" for row in vault), vault

    restore = cluster.operation(
        "restore_version", f"{{model: bronze_patients, version: {created}}}"
    )
    assert "Restored 1 relation(s)" in restore, restore
    assert cluster.value(count_subject) == 0
    assert cluster.value("select count(*) from bronze.patients") == before - 1

    # Python jobs: applications of the same master, on the metastore the Thrift
    # server holds open
    registered = len(_applications(cluster))
    location = Path(detail["location"].removeprefix("file:"))
    marked_before = read_snapshot(location)
    assert marked_before is not None
    marked = {path for path, dv in marked_before.files.items() if dv}
    assert marked, "the erasure left no deletion vector to purge"
    # the request's own relations, as a controller purges a day's requests (every
    # relation's purge is the local suites'; on the cluster each REORG and VACUUM costs
    # executor round trips, and this one request is what there is to purge)
    request_id = cluster.value(
        f"select request_id from privacy.erasure_requests where subject_id = '{subject}'"
    )
    purge = cluster.python(
        "python_jobs.purge",
        "--request-id",
        request_id,
        "--retain-hours",
        "0",
        "--allow-short-retention",
    )
    assert "Purged" in purge.stdout, purge.stdout
    # every relation with a deletion vector in one local application, not one each
    assert purge.stdout.count("in one local application") == 1, purge.stdout
    # the REORG ran in a local application of its own (python_jobs.reorg): the cluster
    # saw one application, the purge job's
    assert len(_applications(cluster)) == registered + 1
    snapshot = read_snapshot(location)
    assert snapshot is not None and not any(snapshot.files.values())
    # a targeted REORG PURGE, not a rewrite of the table: exactly the files that held
    # deleted rows were rewritten, every other file is the same file
    reorg = [
        row
        for row in cluster.sql("describe history bronze.patients limit 10")
        if row["operation"] in ("REORG", "OPTIMIZE")
    ]
    assert reorg and reorg[0]["operation"] == "REORG", reorg
    metrics = reorg[0]["operationMetrics"]
    metrics = json.loads(metrics) if isinstance(metrics, str) else metrics
    assert int(metrics["numRemovedFiles"]) == len(marked), (metrics, len(marked))
    untouched = set(marked_before.files) - marked
    assert untouched <= set(snapshot.files)
    ids = [
        value
        for path in location.rglob("*.parquet")
        if "_delta_log" not in path.parts
        for value in pq.read_table(path, columns=["patient_pseudonym"])[
            "patient_pseudonym"
        ].to_pylist()
    ]
    assert ids and pseudonym not in ids

    # what the compliance tests name as their fix after an erasure (meta.fix): the
    # anonymous aggregates catch up, the audit log reads the new commits
    cluster.dbt(
        "run",
        "--target",
        "thrift",
        "--select",
        "gold_patients_by_city",
        "gold_encounters_monthly",
        "gold_clicks_hourly",
    )
    cluster.python("python_jobs.audit_stream", "--once")
    tests = cluster.dbt("test", "--target", "thrift", "--select", "tag:compliance")
    assert "ERROR=0" in tests.stdout and "PASS=" in tests.stdout
    # the cluster's Thrift server answered every statement inside the call: dbt never
    # slept on a poll (5 s each at dbt-spark's default interval)
    log = (cluster.state / "logs" / "dbt.log").read_text(errors="replace")
    assert "Poll status" in log and "sleeping" not in log


DERBY_PROBE = """
import java.sql.*;
public class DerbyProbe {
  public static void main(String[] args) {
    try (Connection c = args.length > 1
        ? DriverManager.getConnection(args[0], args[1], args[2])
        : DriverManager.getConnection(args[0])) {
      ResultSet r = c.createStatement().executeQuery("select count(*) from sys.systables");
      r.next();
      System.out.println("OPEN " + r.getInt(1));
    } catch (SQLException e) {
      System.out.println("REFUSED " + e.getSQLState() + " " + e.getMessage());
    }
  }
}
"""


def _derby(cluster: Cluster, tmp_path: Path, *credentials: str) -> str:
    """A Derby network client's answer to a connection to the cluster's metastore."""
    from python_jobs.jars import derby_client_classpath

    source = tmp_path / "DerbyProbe.java"
    source.write_text(DERBY_PROBE)
    java = Path(os.environ["JAVA_HOME"], "bin", "java") if "JAVA_HOME" in os.environ else "java"
    url = cluster.env["LAKEHOUSE_METASTORE_URL"].replace(";create=true", "")
    done = subprocess.run(
        [str(java), "-cp", derby_client_classpath(), str(source), url, *credentials],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout.strip() or done.stderr[-2000:]


def _cluster_processes(cluster: Cluster) -> list[int]:
    """The cluster's processes and their children (spark-class runs java under bash)."""
    state = json.loads((cluster.state / "cluster" / "cluster.json").read_text())
    roots = set(state["pids"].values())
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            session = os.getsid(int(entry.name))
        except OSError:
            continue
        if session in roots:  # each was started in a session of its own
            found.add(int(entry.name))
    return sorted(found)


def test_every_server_of_the_cluster_refuses_a_client_without_its_secret(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Attack: another local account reaches the loopback ports: the Thrift server (SQL as
    this user, with `java_method` at hand), the master (an application is code it runs as
    this user), the Derby metastore (table locations). Guarantee: each refuses a client
    without the secret `up` made, and the secret is on no command line."""
    from pyhive import hive
    from thrift.transport.TTransport import TTransportException

    from tests.adversarial.test_spark_ports import (
        _unauthenticated_rpc,
        http_status,
        listening_sockets,
        refuses_without_secret,
    )

    token = cluster.token()
    folder = cluster.state / "cluster"
    assert folder.stat().st_mode & 0o777 == 0o700
    for name in ("token", "conf/spark-defaults.conf", "derby/derby.properties"):
        assert (folder / name).stat().st_mode & 0o777 == 0o600, name
    # Thrift: no password, a wrong one; the token opens it (Cluster.sql)
    for kwargs in ({}, {"auth": "CUSTOM", "password": "not-the-token"}):
        with pytest.raises(TTransportException):
            hive.connect(host="127.0.0.1", port=cluster.thrift_port, username="mallory", **kwargs)
    assert cluster.value("select 1") == 1
    # no log per statement: were one kept, the cluster's folder, not <tmp>/<user>
    assert not (folder / "operation_logs").exists()
    # the master asks for authentication before it reads a request
    failure = _unauthenticated_rpc(int(cluster.env["SPARK_MASTER_PORT"]))
    assert "Expected SaslMessage" in failure, failure[:400]
    # Derby: no user, APP with a wrong password; the token opens it
    assert _derby(cluster, tmp_path).startswith("REFUSED 08004"), _derby(cluster, tmp_path)
    wrong = _derby(cluster, tmp_path, "APP", "not-the-token")
    assert wrong.startswith("REFUSED 08004"), wrong
    opened = _derby(cluster, tmp_path, "APP", token)
    assert opened.startswith("OPEN "), opened
    # every port any process of the cluster listens on, found from the processes' own
    # sockets (not a list of the ports we expect), refuses a client without the secret
    processes = _cluster_processes(cluster)
    ports = listening_sockets(processes)
    known = {
        cluster.thrift_port: "thrift (refused above)",
        int(cluster.env["LAKEHOUSE_DERBY_PORT"]): "derby (refused above)",
    }
    # master, worker, Thrift server's driver, executors: each an RPC port and a block
    # manager's at least; a web UI or the REST submission server would be more
    assert len(ports) >= 6, ports
    web = []
    for (address, port), pid in sorted(ports.items()):
        assert address == "127.0.0.1", f"pid {pid} listens on {address}:{port}"
        if port in known:
            continue
        verdict = refuses_without_secret(port, token)
        assert verdict.startswith("refused"), f"port {port} of pid {pid}: {verdict}"
        if "HTTP" in verdict:
            web.append(port)
    # the master's and the worker's web UIs (no REST server): the token opens them
    assert len(web) == 2, (web, ports)
    for port in web:
        assert http_status(port, "GET", "/json/", auth=("owner", token)) == 200, port
    # on no command line (any local user reads them): the Thrift server has its digest;
    # every process writes its files (an executor's shuffle and spill files) under umask 077
    assert len(processes) >= 4, processes
    for pid in processes:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if not command:  # a zombie (spark-class's bash after its exec'd child)
            continue
        assert token.encode() not in command, pid
        assert "Umask:\t0077" in status, (pid, command[:200])
        # a worker and the executors it starts run what applications send: they get the
        # environment they need (the KEK for the executors' unwrapping), not the caller's
        if b"deploy.worker.Worker" in command or b"CoarseGrainedExecutorBackend" in command:
            environment = Path(f"/proc/{pid}/environ").read_bytes()
            assert b"UNRELATED_CLOUD_SECRET" not in environment, (pid, command[:200])


def test_down_stops_every_process(cluster: Cluster) -> None:
    """On the module's cluster, after the run above (one cluster start for both: each
    start costs a Derby server, a master, a worker and a Thrift server)."""
    running = cluster
    status = running.python("python_jobs.cluster", "status")
    assert status.stdout.count("running") == 4
    again = running.python("python_jobs.cluster", "up")
    assert "already up" in again.stdout
    running.python("python_jobs.cluster", "down")
    ports = [int(running.env[k]) for k in ("SPARK_MASTER_PORT", "SPARK_THRIFT_PORT")]
    for port in ports:
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0
    gone = running.python("python_jobs.cluster", "status", check=False)
    assert gone.returncode == 1 and "not running" in gone.stdout
    # the secret went with it
    for name in ("token", "conf/spark-defaults.conf", "derby/derby.properties"):
        assert not (running.state / "cluster" / name).exists(), name


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SPARK_THRIFT_PORT", "80; rm -rf /", "is not a port: allowed are 1024 to 65535"),
        ("LAKEHOUSE_DERBY_PORT", "99999", "is not a port: allowed are 1024 to 65535"),
        ("LAKEHOUSE_WORKER_CORES", "-1", "allowed are 1 to 256"),
        ("LAKEHOUSE_WORKER_MEMORY", "8g --conf x=y", "allowed is a size like 8g or 4096m"),
    ],
)
def test_bad_setting_is_refused_and_starts_nothing(
    tmp_path: Path, name: str, value: str, message: str
) -> None:
    running = Cluster(tmp_path)
    running.env[name] = value
    done = running.python("python_jobs.cluster", "up", check=False)
    assert done.returncode == 2
    assert f"{name}={value!r}" in done.stderr and message in done.stderr
    assert not (tmp_path / "cluster" / "cluster.json").exists()
    assert not (tmp_path / "cluster" / "derby").exists()
