"""Attack class: another process on this machine talks to the warm engine's Thrift port.

The warm engine (`make up`) listens on 127.0.0.1, where any local user or process can
connect. Its JVM holds the key-encryption key (the project's SQL extension reads it for
its functions), the whole lakehouse and the erasure macros' privileges. Guarantees held
here:
- a client without the engine's token (a new random one at every `up`) is refused
  before it runs a statement, whatever user name it gives; the key cannot be read
  through the port;
- the token lives in a file only this user can read (`<lakehouse>/engine/token`, mode
  600, in a folder of mode 700), never in the engine's state file or log; the JVM
  holds only its SHA-256;
- dbt, as typed (`dbt run-operation ... --target warm`), finds the token by itself and
  works; so does a client that gives it.
The engine runs in its own lakehouse folder and on a free port: never the user's.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dbt_harness import ROOT, free_port

pytestmark = pytest.mark.functional

KEK_SQL = "select java_method('java.lang.System', 'getenv', 'LAKEHOUSE_KEK')"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    lakehouse = tmp_path_factory.mktemp("engine-access") / "lakehouse"
    port = free_port()
    env = {
        **os.environ,
        "LAKEHOUSE_DIR": str(lakehouse),
        "LAKEHOUSE_ENGINE_PORT": str(port),
        "LAKEHOUSE_DRIVER_MEMORY": "1g",
        "LAKEHOUSE_KEK": os.environ.get("LAKEHOUSE_KEK") or "ab" * 32,
        "DBT_TARGET_PATH": str(lakehouse.parent / "target"),
        "DBT_LOG_PATH": str(lakehouse.parent / "logs"),
    }
    env.pop("DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN", None)

    def engine_command(action: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "python_jobs.engine", action],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    started = engine_command("up")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield {"port": port, "env": env, "folder": lakehouse / "engine"}
    finally:
        engine_command("down")


def _query(port: int, sql: str, **credentials: str) -> list:
    from pyhive import hive

    connection = hive.connect(host="127.0.0.1", port=port, **credentials)
    try:
        cursor = connection.cursor()
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        connection.close()


@pytest.mark.parametrize(
    "credentials",
    [
        {"username": "mallory"},
        {"username": "dbt"},
        {"username": "dbt", "auth": "CUSTOM", "password": "guess"},
        {"username": "dbt", "auth": "CUSTOM", "password": "0" * 64},
    ],
    ids=["no-password", "the-actor-name", "a-guess", "a-well-formed-guess"],
)
def test_a_client_without_the_engines_token_runs_nothing(engine: dict, credentials: dict) -> None:
    """Attack: a local process connects to the engine's port and asks for the key.
    Guarantee: refused before any statement runs."""
    from thrift.transport.TTransport import TTransportException

    with pytest.raises(TTransportException, match="Error validating the login"):
        _query(engine["port"], KEK_SQL, **credentials)


def test_the_token_is_this_users_alone_and_in_no_state_file_or_log(engine: dict) -> None:
    token_file = engine["folder"] / "token"
    # the folder too (the token, the jobs' socket, the JVM's log)
    assert stat.S_IMODE(engine["folder"].stat().st_mode) == 0o700
    mode = token_file.stat().st_mode
    assert stat.S_IMODE(mode) == 0o600, oct(mode)
    assert token_file.stat().st_uid == os.geteuid()
    token = token_file.read_text().strip()
    assert len(token) == 64 and int(token, 16) >= 0
    for name in ("engine.json", "engine.log"):
        assert token not in (engine["folder"] / name).read_text(errors="replace"), name
    # the refusals of the clients before are on record, with their reason
    assert (
        "the password is not this server's token" in (engine["folder"] / "engine.log").read_text()
    )
    # the right token opens it: a client that gives it runs statements
    assert _query(engine["port"], "select 1", username="dbt", auth="CUSTOM", password=token) == [
        (1,)
    ]


# Every way SQL reached a static method by reflection, each aimed at the key
REFLECTION = (
    "select java_method('java.lang.System', 'getenv', 'LAKEHOUSE_KEK')",
    "select reflect('java.lang.System', 'getenv', 'LAKEHOUSE_KEK')",
    "select 1 where exists (select reflect('java.lang.System', 'getenv', 'LAKEHOUSE_KEK'))",
    "create or replace temporary view kek as "
    "select java_method('java.lang.System', 'getenv', 'LAKEHOUSE_KEK') as k",
    # any other static method too: only the macros' retry pause (Thread.sleep) is allowed
    "select java_method('java.lang.System', 'getProperty', 'java.class.path')",
)


def test_no_statement_a_session_runs_returns_the_kek(engine: dict) -> None:
    """Seam: the macros read the key-encryption key with `java_method('java.lang.
    System', 'getenv', ...)`, so any session of the engine (and the cluster's Thrift
    server) could run the same and get the key. Guarantee: the key is used by the
    project's SQL functions inside the JVM, never a value; every reflection is refused
    at analysis (Hive's reflect function too); the functions work and their plan names
    the variable, never the key."""
    from pyhive import hive

    token = (engine["folder"] / "token").read_text().strip()
    kek = engine["env"]["LAKEHOUSE_KEK"]
    connection = hive.connect(
        host="127.0.0.1", port=engine["port"], username="dbt", auth="CUSTOM", password=token
    )
    try:
        cursor = connection.cursor()
        for sql in REFLECTION:
            with pytest.raises(Exception, match="refused in this lakehouse's Spark sessions"):
                cursor.execute(sql)
        cursor.execute(
            "create temporary function hive_reflect as "
            "'org.apache.hadoop.hive.ql.udf.generic.GenericUDFReflect'"
        )
        with pytest.raises(Exception, match="refused in this lakehouse's Spark sessions"):
            cursor.execute("select hive_reflect('java.lang.System', 'getenv', 'LAKEHOUSE_KEK')")
        # the functions: a value encrypted and decrypted under a wrapped key, which the
        # engine opens and never returns; a key wraps in Spark's aes_encrypt format
        wrapped = "gdpr_wrap_key(unhex(sha2('k', 256)), x'01', 'LAKEHOUSE_KEK')"
        cursor.execute(
            f"select hex(gdpr_decrypt(gdpr_encrypt(x'0a0b', k, x'01', x'02', 'LAKEHOUSE_KEK'), k, "
            f"x'01', x'02', 'LAKEHOUSE_KEK')), length(k) from (select {wrapped} as k)"
        )
        assert cursor.fetchall() == [("0A0B", 60)]
        for sql in ("select gdpr_unwrap_key(x'00', 'LAKEHOUSE_KEK')",):
            with pytest.raises(Exception, match="gdpr_unwrap_key"):
                cursor.execute(sql)
        cursor.execute("explain extended select gdpr_wrap_key(x'0a0b', x'', 'LAKEHOUSE_KEK')")
        plan = " ".join(str(row) for row in cursor.fetchall())
        assert "LAKEHOUSE_KEK" in plan and kek.lower() not in plan.lower()
    finally:
        connection.close()


def test_the_thrift_server_writes_no_operation_log(engine: dict) -> None:
    """Hive's Thrift server keeps a log per statement, by default under
    `<java.io.tmpdir>/<user>/operation_logs`, a folder any local user can name first.
    The engine's server keeps none: its location is the engine's private folder, and
    nothing is made there even while a session runs statements."""
    from pyhive import hive

    token = (engine["folder"] / "token").read_text().strip()
    connection = hive.connect(
        host="127.0.0.1", port=engine["port"], username="dbt", auth="CUSTOM", password=token
    )
    try:
        cursor = connection.cursor()
        cursor.execute("select 'P0000001' as subject_id")
        assert cursor.fetchall() == [("P0000001",)]
        assert not (engine["folder"] / "operation_logs").exists()
    finally:
        connection.close()


def test_dbt_as_typed_finds_the_token_by_itself(engine: dict) -> None:
    """`dbt ... --target warm` in a new process, the token nowhere in its environment:
    the venv's start-up hook reads it from the engine's folder."""
    assert "DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN" not in engine["env"]
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("dbt")),
            "run-operation",
            "run_query",
            "--args",
            "{sql: select 41 + 1}",
            "--target",
            "warm",
        ],
        cwd=ROOT,
        env=engine["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    token = (engine["folder"] / "token").read_text().strip()
    assert token not in done.stdout + done.stderr
    # `engine up` parsed the project for the warm target: this first command after it
    # reads that parse instead of parsing every file again
    assert "Unable to do partial parsing" not in done.stdout, done.stdout[-3000:]
    assert token not in (engine["folder"] / "parse.log").read_text(errors="replace")


def test_the_engines_jvm_maps_the_class_archive(engine: dict) -> None:
    """The class archive `make setup` made is mapped by the engine's JVM too: its class
    path starts with the one the archive was made for (the Thrift server's Hive jar at
    its end, python_jobs.engine.dist_classpath)."""
    from python_jobs import class_archive

    archive = class_archive.archive_path()
    assert archive is not None and class_archive.current(archive), "run `make setup`"
    pid = json.loads((engine["folder"] / "engine.json").read_text())["pid"]
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    maps = [Path(f"/proc/{child}/maps").read_text() for child in children]
    assert any(str(archive) in text for text in maps), f"no JVM of {children} maps {archive}"


def _descendants(root: int) -> list[int]:
    """`root` and every process under it (the engine's Python and its Spark JVM)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat_line = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat_line.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def test_every_port_the_engine_listens_on_refuses_a_client_without_its_secret(
    engine: dict,
) -> None:
    """Attack: another local account tries every TCP port the engine's processes listen
    on, found from their own sockets (not a list of expected ports). Guarantee: the
    Thrift port refuses without the token (above), Spark's RPC and block manager without
    Spark's secret, the JVM's Py4J gateway and the Python side's accumulator server
    without PySpark's; no web UI, no REST server; all on loopback."""
    from tests.adversarial.test_spark_ports import listening_sockets, refuses_without_secret

    state = json.loads((engine["folder"] / "engine.json").read_text())
    ports = listening_sockets(_descendants(state["pid"]))
    assert (("127.0.0.1", engine["port"])) in ports, ports
    assert len(ports) >= 3, ports  # Thrift, Spark's RPC, the block manager
    token = (engine["folder"] / "token").read_text().strip()
    for (address, port), pid in sorted(ports.items()):
        assert address == "127.0.0.1", f"pid {pid} listens on {address}:{port}"
        if port == engine["port"]:
            continue
        verdict = refuses_without_secret(port, token)
        assert verdict.startswith("refused"), f"port {port} of pid {pid}: {verdict}"
