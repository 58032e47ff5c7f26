"""A real Spark cluster on loopback: standalone master and worker, a Thrift server with
Delta, and a Derby network metastore that the Thrift server and the jobs share.

    python -m python_jobs.cluster up       # or: make cluster-up
    eval "$(python -m python_jobs.cluster env)"
    dbt build --target thrift
    python -m python_jobs.purge            # a job on the same cluster and metastore
    python -m python_jobs.cluster down     # or: make cluster-down
    python -m python_jobs.cluster status

Everything comes from the installed pyspark distribution (``bin/spark-class``,
``bin/spark-submit``, its Thrift server and Derby jars) plus Derby's network server
and client, which ``make setup`` fetched from Maven Central. Nothing listens beyond
127.0.0.1. The Spark settings are the ``local`` target's (profiles.yml, the one
source), so the Thrift server runs the same Delta, warehouse and SQL settings as a
laptop session; only the master and the metastore differ.

Every server admits only a client holding the secret ``up`` makes at each start (256
random bits; any local process can reach a loopback port, and each of these servers runs
what a client sends with this user's rights and environment):

- the Thrift server: the token as the password (``hive.server2.authentication=CUSTOM``,
  jvm/src ``gdpr_lakehouse.engine.TokenAuthenticator``, which holds its SHA-256 alone);
  dbt's ``thrift`` target sends DBT_ENV_SECRET_SPARK_THRIFT_PASSWORD, which the venv's
  start-up hook reads from ``cluster/token``;
- the master, the worker and every application: Spark's shared secret
  (``spark.authenticate``);
- the Derby network server: user APP with the token as password (BUILTIN
  authentication);
- the master's and the worker's web UIs (Spark opens them whatever ``--webui-port``
  says): the token as HTTP basic password (``spark.ui.filters``, jvm/src
  ``gdpr_lakehouse.engine.TokenFilter``, which holds its SHA-256 alone).

The master's REST submission server, which ignores ``spark.authenticate``, is not
opened (``spark.master.rest.enabled false``). The master, the worker and Derby get
only the environment they need (the worker, whose executors unwrap keys, the
key-encryption key too), not the caller's other secrets.

The secret is in three files of the cluster folder (mode 700), each mode 600 and removed
by ``down``: ``token``, ``conf/spark-defaults.conf`` (read by every Spark JVM started with
``SPARK_CONF_DIR`` set to that folder, which ``env`` prints: the daemons, the Thrift
server, the jobs) and ``derby/derby.properties``. It is on no command line (``ps`` shows
the Thrift server only its SHA-256).

State lives in ``$LAKEHOUSE_DIR/cluster``: ``cluster.json`` (ports and process ids),
one log per process, the Derby system and the worker's scratch space. ``up`` on a
running cluster says so and changes nothing; ``down`` on a stopped one is a no-op.

Ports (environment, defaults): SPARK_MASTER_PORT 7077, SPARK_THRIFT_PORT 10000,
LAKEHOUSE_DERBY_PORT 1527. The worker offers LAKEHOUSE_WORKER_CORES (4: two
applications of spark.cores.max 2 at once, over-committing a 2-core laptop) and
LAKEHOUSE_WORKER_MEMORY (8g).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from python_jobs.engine import AUTHENTICATOR, DIGEST_PROPERTY
from python_jobs.jars import (
    OWN,
    cluster_artifacts,
    delta_artifacts,
    derby_client_classpath,
    thrift_server_classpath,
)
from python_jobs.kek_hook import private_umask
from python_jobs.processes import HOST
from python_jobs.processes import alive as _alive
from python_jobs.processes import listening as _listening
from python_jobs.processes import tail as _tail
from python_jobs.project import (
    ProjectError,
    private_folder,
    prog,
    project_vars,
    state_dir,
    write_private,
)

# Settings of the local target the cluster sets itself (jars by path, not by Ivy), and
# the local file system of this project's jar (profiles.yml): the cluster's driver and
# executors keep Hadoop's own, as a cluster elsewhere would.
NOT_FORWARDED = {
    "spark.master",
    "spark.app.name",
    "spark.jars",
    "spark.jars.packages",
    "spark.jars.excludes",
    "spark.driver.extraClassPath",
    "spark.hadoop.fs.file.impl",
    "spark.hadoop.fs.AbstractFileSystem.file.impl",
    # a standalone master makes no secret: Spark's own ports keep its default there
    "spark.authenticate",
}


# jvm/src: admits a web UI request only with the cluster's token (HTTP basic password)
UI_FILTER = "gdpr_lakehouse.engine.TokenFilter"

# What a daemon of the cluster keeps of the caller's environment: a worker runs what
# applications send, and its executors inherit its environment; none of them needs the
# caller's other secrets (cloud credentials, dbt's DBT_ENV_SECRET_*, tokens).
DAEMON_ENVIRONMENT = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TZ",
    "JAVA_HOME",
    "TMPDIR",
)


@dataclass(frozen=True)
class Ports:
    master: int
    thrift: int
    derby: int

    @classmethod
    def from_env(cls) -> Ports:
        values = {}
        for field, name, default in (
            ("master", "SPARK_MASTER_PORT", 7077),
            ("thrift", "SPARK_THRIFT_PORT", 10000),
            ("derby", "LAKEHOUSE_DERBY_PORT", 1527),
        ):
            raw = os.environ.get(name, str(default))
            if not raw.isdigit() or not 1024 <= int(raw) <= 65535:
                raise ProjectError(f"{name}={raw!r} is not a port: allowed are 1024 to 65535")
            values[field] = int(raw)
        if len(set(values.values())) < 3:
            raise ProjectError(f"the cluster's ports must differ: {values}")
        return cls(**values)


def _worker_resources() -> tuple[str, str]:
    cores = os.environ.get("LAKEHOUSE_WORKER_CORES", "4")
    memory = os.environ.get("LAKEHOUSE_WORKER_MEMORY", "8g")
    if not cores.isdigit() or not 1 <= int(cores) <= 256:
        raise ProjectError(f"LAKEHOUSE_WORKER_CORES={cores!r}: allowed are 1 to 256")
    if not re.fullmatch(r"[1-9][0-9]{0,5}[mg]", memory):
        raise ProjectError(
            f"LAKEHOUSE_WORKER_MEMORY={memory!r}: allowed is a size like 8g or 4096m"
        )
    return cores, memory


def cluster_dir() -> Path:
    return state_dir() / "cluster"


# Derby's user: APP, the schema the metastore's tables were made in before the network
# server required a password.
DERBY_USER = "APP"


def token_file() -> Path:
    return cluster_dir() / "token"


def conf_dir() -> Path:
    """SPARK_CONF_DIR of every Spark JVM of the cluster: its spark-defaults.conf holds the
    secret (Spark's, Derby's password), so it is on no command line."""
    return cluster_dir() / "conf"


def _secret_files() -> list[Path]:
    return [
        token_file(),
        conf_dir() / "spark-defaults.conf",
        cluster_dir() / "derby" / "derby.properties",
    ]


def _write_secrets() -> str:
    """A new secret for this start, in the files each server reads it from; the secret."""
    token = secrets.token_hex(32)
    digest = hashlib.sha256(token.encode()).hexdigest()
    write_private(token_file(), token + "\n")
    write_private(
        conf_dir() / "spark-defaults.conf",
        "\n".join(
            [
                "# written by `python -m python_jobs.cluster up`; removed by `down`",
                "spark.authenticate true",
                f"spark.authenticate.secret {token}",
                # the master's REST submission server ignores spark.authenticate (Spark
                # 4.1 turned it on by default): not opened
                "spark.master.rest.enabled false",
                # the master's and the worker's web UIs open whatever --webui-port says:
                # each request needs the token (HTTP basic password)
                f"spark.ui.filters {UI_FILTER}",
                f"spark.{UI_FILTER}.param.sha256 {digest}",
                f"spark.hadoop.javax.jdo.option.ConnectionUserName {DERBY_USER}",
                f"spark.hadoop.javax.jdo.option.ConnectionPassword {token}",
                "",
            ]
        ),
    )
    write_private(
        cluster_dir() / "derby" / "derby.properties",
        "\n".join(
            [
                "# written by `python -m python_jobs.cluster up`; removed by `down`",
                "derby.connection.requireAuthentication=true",
                "derby.authentication.provider=BUILTIN",
                f"derby.user.{DERBY_USER}={token}",
                "",
            ]
        ),
    )
    return token


def _remove_secrets() -> None:
    for path in _secret_files():
        path.unlink(missing_ok=True)


def _state_file() -> Path:
    return cluster_dir() / "cluster.json"


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def environment(ports: Ports) -> dict[str, str]:
    """What a dbt run or a job needs to use the cluster (printed by ``env``)."""
    return {
        "DBT_TARGET": "thrift",
        "SPARK_THRIFT_HOST": HOST,
        "SPARK_THRIFT_PORT": str(ports.thrift),
        "LAKEHOUSE_SPARK_MASTER": f"spark://{HOST}:{ports.master}",
        "LAKEHOUSE_METASTORE_URL": metastore_url(ports.derby),
        "LAKEHOUSE_DIR": str(state_dir()),
        # spark-defaults.conf there: Spark's secret and Derby's password for a job's JVM
        "SPARK_CONF_DIR": str(conf_dir()),
    }


def metastore_url(port: int) -> str:
    return f"jdbc:derby://{HOST}:{port}/metastore_db;create=true"


def _start(name: str, command: list[str], env: dict[str, str]) -> int:
    log = cluster_dir() / f"{name}.log"
    with log.open("ab") as out:
        out.write(f"\n--- {time.strftime('%Y-%m-%dT%H:%M:%S')} {shlex.join(command)}\n".encode())
        out.flush()
        process = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cluster_dir(),
            start_new_session=True,  # its own process group: `down` stops its children too
        )
    return process.pid


def _wait_for(name: str, port: int, pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _listening(port):
            return
        if not _alive(pid) or _zombie(pid):
            break
        time.sleep(0.5)
    tail = _tail(cluster_dir() / f"{name}.log")
    raise ProjectError(f"{name} did not listen on {HOST}:{port} within {timeout:.0f} s:\n{tail}")


def _zombie(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return False


def _read_state() -> dict | None:
    try:
        return json.loads(_state_file().read_text())
    except FileNotFoundError:
        return None


def _write_state(state: dict) -> None:
    path = _state_file()
    path.with_suffix(".tmp").write_text(json.dumps(state, indent=2))
    path.with_suffix(".tmp").replace(path)


def _thrift_settings(ports: Ports) -> dict[str, str]:
    """The local target's Spark settings, rendered with the cluster's metastore, and
    the Thrift server's own (a synchronous server: python_jobs.spark)."""
    from python_jobs.spark import THRIFT_SERVER_SETTINGS, spark_settings

    previous = os.environ.get("LAKEHOUSE_METASTORE_URL")
    os.environ["LAKEHOUSE_METASTORE_URL"] = metastore_url(ports.derby)
    try:
        settings = spark_settings()
    finally:
        if previous is None:
            os.environ.pop("LAKEHOUSE_METASTORE_URL", None)
        else:
            os.environ["LAKEHOUSE_METASTORE_URL"] = previous
    return settings | THRIFT_SERVER_SETTINGS


def up(ports: Ports, *, timeout: float = 180) -> dict:
    state = _read_state()
    if state and all(_alive(pid) for pid in state["pids"].values()):
        print(f"cluster already up ({_state_file()}); `down` first to restart it")
        return state
    if state:
        down()  # a half-dead cluster from a crash: clear it first
    busy = [port for port in (ports.master, ports.thrift, ports.derby) if _listening(port)]
    if busy:
        raise ProjectError(
            f"port(s) {', '.join(map(str, busy))} on {HOST} already in use; stop what listens "
            "there or choose others (SPARK_MASTER_PORT, SPARK_THRIFT_PORT, LAKEHOUSE_DERBY_PORT)"
        )
    cores, memory = _worker_resources()
    thrift_driver_classpath()  # the jars `make setup` fetches: a clear error before anything starts
    home = _spark_home()
    # every process of the cluster inherits it: Spark's scratch folders (an executor's
    # shuffle and spill files, under /tmp) and the logs are this user's only
    private_umask()
    root = private_folder(cluster_dir())
    private_folder(root / "derby")
    private_folder(root / "work")
    private_folder(conf_dir())
    settings = _thrift_settings(ports)
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_NO_DAEMONIZE": "1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOG_DIR": str(root),
        # a conf folder of our own: no spark-defaults from elsewhere, only the secret's,
        # and Spark's default logging (INFO) for the daemons, whose registration we wait for
        "SPARK_CONF_DIR": str(conf_dir()),
    }
    # the master, the worker and Derby: the caller's environment only as far as they
    # need it; a worker's executors unwrap keys, so it also gets the key-encryption key
    daemons = {key: os.environ[key] for key in DAEMON_ENVIRONMENT if key in os.environ}
    daemons |= {key: value for key, value in env.items() if key.startswith(("SPARK_", "PYSPARK_"))}
    daemons["SPARK_DAEMON_CLASSPATH"] = str(OWN.jar)  # the web UIs' filter
    kek = str(project_vars().get("kek_env_var", "LAKEHOUSE_KEK"))
    worker = daemons | ({kek: os.environ[kek]} if kek in os.environ else {})
    state = {"ports": ports.__dict__, "pids": {}, "started_at": time.time()}
    try:
        token = _write_secrets()
        _start_all(state, ports, env, daemons, worker, settings, cores, memory, timeout, token)
    except BaseException:
        down()  # stop what did start: no half cluster is left behind
        raise
    return state


def _start_all(
    state: dict,
    ports: Ports,
    env: dict[str, str],
    daemons: dict[str, str],
    worker: dict[str, str],
    settings: dict[str, str],
    cores: str,
    memory: str,
    timeout: float,
    token: str,
) -> None:
    from python_jobs.spark import OPERATION_LOG_LOCATION

    home = _spark_home()
    root = cluster_dir()
    delta = delta_artifacts()

    net = next(a for a in cluster_artifacts() if a.name == "derbynet")
    derby_jars = [str(p) for p in sorted((home / "jars").glob("derby*.jar"))] + [str(net.jar)]
    java = (
        os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        if "JAVA_HOME" in os.environ
        else "java"
    )
    pid = _start(
        "derby",
        [
            java,
            f"-Dderby.system.home={root / 'derby'}",
            "-Xmx512m",
            "-cp",
            os.pathsep.join(derby_jars),
            "org.apache.derby.drda.NetworkServerControl",
            "start",
            "-h",
            HOST,
            "-p",
            str(ports.derby),
            "-noSecurityManager",
        ],
        daemons,
    )
    state["pids"]["derby"] = pid
    _write_state(state)
    _wait_for("derby", ports.derby, pid, timeout)

    spark_class = str(home / "bin" / "spark-class")
    pid = _start(
        "master",
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            HOST,
            "--port",
            str(ports.master),
            "--webui-port",
            "0",
        ],
        {**daemons, "SPARK_DAEMON_MEMORY": "512m"},
    )
    state["pids"]["master"] = pid
    _write_state(state)
    _wait_for("master", ports.master, pid, timeout)

    master = f"spark://{HOST}:{ports.master}"
    pid = _start(
        "worker",
        [
            spark_class,
            "org.apache.spark.deploy.worker.Worker",
            "--host",
            HOST,
            "--cores",
            cores,
            "--memory",
            memory,
            "--work-dir",
            str(root / "work"),
            "--webui-port",
            "0",
            master,
        ],
        {**worker, "SPARK_DAEMON_MEMORY": "512m"},
    )
    state["pids"]["worker"] = pid
    _write_state(state)
    _wait_for_worker(ports.master, pid, timeout)

    command = [
        str(home / "bin" / "spark-submit"),
        "--master",
        master,
        "--class",
        "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
        "--name",
        "gdpr_lakehouse_thrift",
        # Delta's jars by path, for the executors, and this project's (its SQL extension's
        # functions unwrap keys there); the driver's class path has them too
        "--jars",
        ",".join([*(str(a.jar) for a in delta), str(OWN.jar)]),
        "--driver-class-path",
        thrift_driver_classpath(),
    ]
    for key, value in sorted(settings.items()):
        if key not in NOT_FORWARDED:
            command += ["--conf", f"{key}={value}"]
    # --hiveconf values become system properties, where Hive's authenticator looks: the
    # token's SHA-256 alone (a command line is any local user's to read)
    digest = hashlib.sha256(token.encode()).hexdigest()
    for key, value in (
        ("hive.server2.thrift.bind.host", HOST),
        ("hive.server2.thrift.port", str(ports.thrift)),
        ("hive.server2.authentication", "CUSTOM"),
        ("hive.server2.custom.authentication.class", AUTHENTICATOR),
        (DIGEST_PROPERTY, digest),
        # no log per statement (THRIFT_SERVER_SETTINGS); were it on, the cluster's folder
        (OPERATION_LOG_LOCATION, str(root / "operation_logs")),
    ):
        command += ["--hiveconf", f"{key}={value}"]
    command.append("spark-internal")
    pid = _start("thrift", command, env)
    state["pids"]["thrift"] = pid
    _write_state(state)
    _wait_for("thrift", ports.thrift, pid, timeout)
    _first_query(ports.thrift, token)
    print(
        f"cluster up: master {master}, thrift {HOST}:{ports.thrift}, metastore "
        f"{metastore_url(ports.derby)}; logs in {root}"
    )


def thrift_driver_classpath() -> str:
    """The Thrift server's driver class path beyond Spark's jars: Delta's jars by path
    (its statement threads do not see --packages: ClassNotFoundException
    org.apache.spark.sql.delta.DeltaTableUtils$), Hive's hive-llap-common (CloseSession
    can need it), Derby's network client (the metastore) and this project's jar (the
    token authenticator)."""
    return os.pathsep.join(
        [
            *(str(a.jar) for a in delta_artifacts()),
            str(OWN.jar),
            *thrift_server_classpath(),
            derby_client_classpath(),
        ]
    )


def _wait_for_worker(master_port: int, pid: int, timeout: float) -> None:
    """The worker has registered when the master's log says so."""
    deadline = time.monotonic() + timeout
    log = cluster_dir() / "master.log"
    while time.monotonic() < deadline:
        if "Registering worker" in _tail(log, 200):
            return
        if not _alive(pid) or _zombie(pid):
            break
        time.sleep(0.5)
    raise ProjectError(
        f"the worker did not register with the master within {timeout:.0f} s:\n"
        + _tail(cluster_dir() / "worker.log")
    )


def _first_query(port: int, token: str) -> None:
    """Create the metastore's schema once, before two clients could race to."""
    from pyhive import hive

    connection = hive.connect(
        host=HOST, port=port, username="cluster-up", auth="CUSTOM", password=token
    )
    try:
        cursor = connection.cursor()
        cursor.execute("show databases")
        cursor.fetchall()
    finally:
        connection.close()


def down(*, timeout: float = 60) -> bool:
    """Stop every process of the cluster (Thrift server first, Derby last)."""
    state = _read_state()
    if state is None:
        _remove_secrets()  # an `up` that stopped before it recorded a process
        print("cluster not running")
        return False
    for name in ("thrift", "worker", "master", "derby"):
        pid = state["pids"].get(name)
        if pid is None or not _alive(pid):
            continue
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + timeout
        while _alive(pid) and not _zombie(pid) and time.monotonic() < deadline:
            time.sleep(0.3)
        if _alive(pid) and not _zombie(pid):
            os.killpg(pid, signal.SIGKILL)
    _state_file().unlink(missing_ok=True)
    _remove_secrets()
    print("cluster down")
    return True


def status() -> int:
    state = _read_state()
    if state is None:
        print("cluster not running")
        return 1
    ports = state["ports"]
    up_all = True
    for name, pid in state["pids"].items():
        alive = _alive(pid)
        up_all &= alive
        print(f"{name:<7} pid {pid:<8} {'running' if alive else 'STOPPED'}")
    print(f"ports: master {ports['master']}, thrift {ports['thrift']}, derby {ports['derby']}")
    return 0 if up_all else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.cluster"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=["up", "down", "status", "env"])
    args = parser.parse_args(argv)
    try:
        if args.action == "up":
            up(Ports.from_env())
        elif args.action == "down":
            down()
        elif args.action == "status":
            return status()
        else:
            state = _read_state()
            ports = Ports(**state["ports"]) if state else Ports.from_env()
            for key, value in environment(ports).items():
                print(f"export {key}={shlex.quote(value)}")
        return 0
    except ProjectError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
