"""A warm local engine: one long-lived Spark JVM that dbt and the jobs share.

    python -m python_jobs.engine up       # or: make up     (then: dbt ... --target warm)
    python -m python_jobs.engine status
    python -m python_jobs.engine target   # prints `warm` while it is up, else `local`
    python -m python_jobs.engine down     # or: make down

Every `dbt` command in the embedded ``local`` target starts a JVM, loads Delta and
opens the metastore before it does anything (~25 s on a laptop). The warm engine does
that once. It is one Python process holding one SparkSession with every setting of
the ``local`` target (profiles.yml: the same warehouse, the same embedded Derby
metastore, the same Delta and SQL settings), and it serves two doors into that JVM:

- **Spark's Thrift server** (HiveThriftServer2, started inside the same JVM) on
  127.0.0.1:$LAKEHOUSE_ENGINE_PORT (default 10009): dbt's ``warm`` target (dbt-spark's
  ``thrift`` method; dbt-spark has no Spark Connect method, which is why the engine
  is a Thrift server, not a Spark Connect server). Any local process can reach that
  port, so it admits only a client whose password is the token the engine makes at
  every start (``$LAKEHOUSE_DIR/engine/token``, this user only; the JVM holds its
  SHA-256 alone: jvm/src ``gdpr_lakehouse.engine.TokenAuthenticator``). dbt finds it
  in DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN, which the venv's start-up hook
  (python_jobs.kek_hook) reads from that file.
- **a Unix socket** (``$LAKEHOUSE_DIR/engine/engine.sock``, this user only) for the
  Python jobs: while the engine is up, ``python -m python_jobs.audit_stream --once``,
  ``purge`` and ``report`` send their arguments there and the engine runs the same
  ``main(argv, spark)`` in its warm JVM, streaming the output back. A job's exit code
  is the client's. ``audit_stream --follow`` keeps its own JVM (it runs for hours, by
  path, beside anything else); ``LAKEHOUSE_ENGINE=off`` makes any job do the same.

One JVM holds the embedded Derby metastore, so while the engine is up the embedded
``local`` target cannot open it: use ``--target warm`` (``make run``/``make audit``
choose it by themselves). Stopped, everything is as before. The key-encryption key
is read by the engine's JVM (the project's SQL extension), so export it before ``up``.

``up`` also runs ``dbt parse --target warm`` for the project beside the JVM's start, so
the first dbt command after it reads that parse instead of parsing every file again
(dbt starts its partial parse over when the target changes).

State: ``$LAKEHOUSE_DIR/engine``: ``engine.json`` (pid, port, socket), ``engine.log``,
``parse.log``, ``token``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.util
import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from python_jobs.processes import HOST
from python_jobs.processes import alive as _alive
from python_jobs.processes import listening as _listening
from python_jobs.processes import tail as _tail
from python_jobs.project import ProjectError, private_folder, prog, state_dir, write_private

DEFAULT_PORT = 10009
# The Thrift server's authenticator (jvm/src, this project's jar) and the system property
# it reads the token's SHA-256 from.
AUTHENTICATOR = "gdpr_lakehouse.engine.TokenAuthenticator"
DIGEST_PROPERTY = "gdpr_lakehouse.engine.token.sha256"
# Jobs whose main(argv, spark) runs in the engine; module -> when it does not.
WARM_JOBS: dict[str, Callable[[list[str]], bool]] = {
    "python_jobs.audit_stream": lambda argv: "--follow" not in argv,
    "python_jobs.purge": lambda argv: True,
    # it asks the catalog where the landing tables are
    "python_jobs.forensic_scan": lambda argv: True,
    "python_jobs.report": lambda argv: True,
}
# dbt's console command (`python -m dbt.cli.main` warns that the module is imported twice)
# `dbt` as the venv's script runs it, its output private as the start-up hook makes a
# dbt process's (python_jobs.kek_hook), whose check of the script's name `-c` misses
DBT_MAIN = (
    "import sys; from python_jobs.kek_hook import private_dbt_output; "
    "private_dbt_output(sys.argv[1:]); from dbt.cli.main import cli; sys.argv[0] = 'dbt'; "
    "sys.exit(cli())"
)
# The caller's environment a job sees in the engine (who acts, which dbt output).
FORWARDED_ENV = (
    "LAKEHOUSE_ACTOR",
    "LAKEHOUSE_PROJECT_DIR",
    "DBT_PROFILES_DIR",
    "DBT_TARGET_PATH",
    "DBT_LOG_PATH",
    "DBT_TARGET",
    "USER",
)


def _private_engine_dir() -> Path:
    """The engine's folder, made (or narrowed) to this user only: it holds the token,
    the jobs' socket and the JVM's log, whose errors can quote the data."""
    private_folder(state_dir(), narrow=False)  # the lakehouse folder, if up makes it
    return private_folder(engine_dir())


def engine_dir() -> Path:
    return state_dir() / "engine"


def _state_file() -> Path:
    return engine_dir() / "engine.json"


def _socket_path() -> Path:
    return engine_dir() / "engine.sock"


def _token_file() -> Path:
    return engine_dir() / "token"


def _write_token() -> str:
    """A new random token for this start, in a file only this user can read (written
    whole under a scratch name, then renamed into place); the token."""
    token = secrets.token_hex(32)
    write_private(_token_file(), token + "\n")
    return token


def use_token() -> None:
    """Give this process's dbt the running engine's token (the venv's start-up hook does
    the same for every new process: python_jobs.kek_hook)."""
    from python_jobs.kek_hook import load_engine_token

    load_engine_token()


def _port() -> int:
    raw = os.environ.get("LAKEHOUSE_ENGINE_PORT", str(DEFAULT_PORT))
    if not raw.isdigit() or not 1024 <= int(raw) <= 65535:
        raise ProjectError(f"LAKEHOUSE_ENGINE_PORT must be a port from 1024 to 65535, got {raw!r}")
    return int(raw)


def read_state() -> dict | None:
    """The running engine's state, or None (no file, or its process is gone)."""
    try:
        state = json.loads(_state_file().read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return state if state.get("ready") and _alive(int(state["pid"])) else None


def running() -> bool:
    return read_state() is not None


# --- the client side: a job sent to the engine ---------------------------------------


def route(module: str, argv: list[str]) -> int | None:
    """Run the job in the warm engine when it is up and the job runs there: its exit
    code. None: run it here (no engine, LAKEHOUSE_ENGINE=off, or not a warm job)."""
    if os.environ.get("LAKEHOUSE_ENGINE", "").lower() == "off":
        return None
    runs_warm = WARM_JOBS.get(module)
    if runs_warm is None or not runs_warm(argv):
        return None
    if read_state() is None:
        return None
    return submit(module, argv)


def submit(module: str, argv: list[str]) -> int:
    """Send one job to the engine, print what it prints, return its exit code."""
    request = {
        "module": module,
        "argv": list(argv),
        "cwd": os.getcwd(),
        "env": {key: os.environ[key] for key in FORWARDED_ENV if key in os.environ},
    }
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        try:
            client.connect(str(_socket_path()))
        except OSError as error:
            raise ProjectError(
                f"the warm engine's socket {_socket_path()} does not answer ({error}); "
                "`make down` then `make up`, or LAKEHOUSE_ENGINE=off to run in a JVM of its own"
            ) from None
        client.sendall(json.dumps(request).encode() + b"\n")
        with client.makefile("r", encoding="utf-8") as replies:
            for line in replies:
                reply = json.loads(line)
                if "exit" in reply:
                    return int(reply["exit"])
                stream = sys.stderr if reply.get("stream") == "err" else sys.stdout
                stream.write(reply["text"])
                stream.flush()
    raise ProjectError(
        "the warm engine closed the connection before the job ended (see engine.log)"
    )


# --- the server side ------------------------------------------------------------------


class _Replies(io.TextIOBase):
    """A job's stdout or stderr, sent to its client as JSON lines."""

    def __init__(self, connection: socket.socket, stream: str, lock: threading.Lock) -> None:
        self.connection, self.stream, self.lock = connection, stream, lock

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            with self.lock, contextlib.suppress(OSError):
                message = {"stream": self.stream, "text": text}
                self.connection.sendall(json.dumps(message).encode() + b"\n")
        return len(text)


@contextlib.contextmanager
def _job_context(request: dict) -> Iterator[None]:
    """The caller's working directory and forwarded environment, for one job."""
    saved_env = {key: os.environ.get(key) for key in FORWARDED_ENV}
    saved_cwd = os.getcwd()
    try:
        for key in FORWARDED_ENV:
            os.environ.pop(key, None)
        for key, value in (request.get("env") or {}).items():
            if key in FORWARDED_ENV:
                os.environ[key] = str(value)
        if request.get("cwd") and Path(request["cwd"]).is_dir():
            os.chdir(request["cwd"])
        yield
    finally:
        os.chdir(saved_cwd)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _run_job(spark, request: dict, out: io.TextIOBase, err: io.TextIOBase) -> int:
    """One job in a session of its own (its SQL settings cannot leak into the next)."""
    from pyspark.errors import PySparkException

    module_name, argv = request.get("module"), request.get("argv")
    if module_name not in WARM_JOBS or not isinstance(argv, list):
        print(f"engine: {module_name!r} is not a job the engine runs", file=err)
        return 2
    session = spark.newSession()
    spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
    name = module_name.rsplit(".", 1)[-1]
    with (
        _job_context(request),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            module = importlib.import_module(module_name)
            return int(module.main([str(a) for a in argv], session) or 0)
        except SystemExit as exit_:  # argparse's errors and --help
            code = exit_.code
            return code if isinstance(code, int) else (0 if code is None else 2)
        except ProjectError as error:
            print(f"{name}: {error}", file=err)
            return 2
        except PySparkException as error:
            print(f"{name}: {str(error).strip()}", file=err)
            return 1
        except Exception as error:  # the engine outlives a job's bug; the client hears of it
            print(f"{name}: {type(error).__name__}: {error}", file=err)
            return 1


def _serve_connection(spark, connection: socket.socket, jobs: threading.Lock) -> None:
    with connection, connection.makefile("r", encoding="utf-8") as requests:
        line = requests.readline()
        if not line:
            return
        send = threading.Lock()
        out, err = _Replies(connection, "out", send), _Replies(connection, "err", send)
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            err.write("engine: a request is one JSON line\n")
            code = 2
        else:
            with jobs:  # one job at a time: each changes the process's cwd and environment
                code = _run_job(spark, request, out, err)
        with contextlib.suppress(OSError):
            connection.sendall(json.dumps({"exit": code}).encode() + b"\n")


def engine_settings(port: int) -> dict[str, str]:
    """The local target's settings, Delta's jars by path (the Thrift server's statement
    threads do not see jars Ivy adds), and the Thrift server's address."""
    from python_jobs.spark import (
        OPERATION_LOG_LOCATION,
        THRIFT_SERVER_SETTINGS,
        jars_by_path,
        spark_settings,
    )

    settings = jars_by_path(spark_settings()) | THRIFT_SERVER_SETTINGS
    settings["spark.app.name"] = "gdpr_lakehouse_engine"
    settings["spark.hadoop.hive.server2.thrift.bind.host"] = HOST
    settings["spark.hadoop.hive.server2.thrift.port"] = str(port)
    # Only a client that gives the token: any local process can reach the port.
    settings["spark.hadoop.hive.server2.authentication"] = "CUSTOM"
    settings["spark.hadoop.hive.server2.custom.authentication.class"] = AUTHENTICATOR
    # no log per statement (THRIFT_SERVER_SETTINGS); were it on, the engine's own folder
    settings[f"spark.hadoop.{OPERATION_LOG_LOCATION}"] = str(engine_dir() / "operation_logs")
    return settings


def dist_classpath() -> str:
    """SPARK_DIST_CLASSPATH for the engine's JVM: the Thrift server's own Hive jar, at
    the end of the class path (Spark's launcher puts it after its own jars), not in the
    driver's extra class path, which comes first. The class path `make setup` archived
    the classes of (python_jobs.class_archive) is then the start of this one, and the
    JVM maps that archive (`engine up` ~5 s against ~8): a JVM whose class path does not
    start with the archive's loads every class itself."""
    from python_jobs.jars import thrift_server_classpath

    return os.pathsep.join(
        filter(None, [os.environ.get("SPARK_DIST_CLASSPATH"), *thrift_server_classpath()])
    )


def serve(port: int) -> int:
    """The engine process: the session, the Thrift server, the job socket; until SIGTERM."""
    from python_jobs.spark import build_session

    _private_engine_dir()
    digest = hashlib.sha256(_write_token().encode()).hexdigest()
    os.environ["SPARK_DIST_CLASSPATH"] = dist_classpath()
    spark = build_session(engine_settings(port))
    jvm = spark._jvm
    # Hive builds the authenticator from a new HiveConf (system properties, not the
    # session's settings): name it there too, and give it the token's digest alone.
    jvm.java.lang.System.setProperty("hive.server2.custom.authentication.class", AUTHENTICATOR)
    jvm.java.lang.System.setProperty(DIGEST_PROPERTY, digest)
    thrift = jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext(
        spark._jsparkSession.sqlContext()
    )
    # the metastore's schema and Delta's first read, before anyone waits on them
    spark.sql("show databases").collect()
    path = _socket_path()
    path.unlink(missing_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket: this user only
    try:
        server.bind(str(path))
    finally:
        os.umask(old_umask)
    server.listen(8)
    stopping = threading.Event()

    def stop(_signum: int, _frame: object) -> None:
        stopping.set()
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)
        server.close()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    state = {
        "pid": os.getpid(),
        "port": port,
        "socket": str(path),
        "lakehouse": str(state_dir()),
        "started_at": time.time(),
        "ready": True,
    }
    _state_file().with_suffix(".tmp").write_text(json.dumps(state, indent=2))
    _state_file().with_suffix(".tmp").replace(_state_file())
    print(f"engine ready: thrift {HOST}:{port}, jobs {path}", flush=True)
    jobs = threading.Lock()
    try:
        while not stopping.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                break
            threading.Thread(
                target=_serve_connection, args=(spark, connection, jobs), daemon=True
            ).start()
    finally:
        _state_file().unlink(missing_ok=True)
        path.unlink(missing_ok=True)
        _token_file().unlink(missing_ok=True)
        with contextlib.suppress(Exception):
            thrift.stop()
        spark.stop()
        print("engine stopped", flush=True)
    return 0


def up(timeout: float = 240) -> dict:
    """Start the engine (a no-op when it is up); return its state once it answers."""
    state = read_state()
    if state is not None:
        use_token()
        print(f"engine already up (pid {state['pid']}, thrift {HOST}:{state['port']})")
        return state
    port = _port()
    if _listening(port):
        raise ProjectError(
            f"port {port} on {HOST} is in use; stop what listens there or choose another "
            "(LAKEHOUSE_ENGINE_PORT)"
        )
    from python_jobs.jars import require_delta_jars

    require_delta_jars()
    folder = _private_engine_dir()
    _state_file().unlink(missing_ok=True)
    log = folder / "engine.log"
    with log.open("w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "python_jobs.engine", "serve", "--port", str(port)],
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "LAKEHOUSE_DIR": str(state_dir())},
        )
    parse = _start_parse(folder)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            state = read_state()
            if state is not None and _listening(port):
                use_token()
                _finish_parse(parse, deadline, folder / "parse.log")
                parse = None
                print(_ready_message(port, log))
                return state
            if process.poll() is not None:
                raise ProjectError(f"the engine exited with {process.returncode}:\n{_tail(log)}")
            time.sleep(0.5)
        process.terminate()
        raise ProjectError(f"the engine did not answer within {timeout:g} s:\n{_tail(log)}")
    finally:
        if parse is not None and parse.poll() is None:  # the engine failed: its parse goes too
            parse.kill()
            parse.wait()


def _ready_message(port: int, log: Path) -> str:
    """`up`'s last line: how dbt reaches the engine, or, when the project's profile has
    no `warm` output, that only the jobs use it (the note before it says what to add)."""
    if _no_warm_output() is not None:
        return (
            f"engine up (thrift {HOST}:{port}): jobs run in it while it is up; dbt keeps to "
            f"its own targets until the profile has a `warm` output. Log: {log}"
        )
    return (
        f"engine up: dbt --target warm (thrift {HOST}:{port}, for clients with the "
        f"token in {_token_file()}); jobs run in it while it is up. "
        f"`export DBT_TARGET=warm` for plain dbt commands. Log: {log}"
    )


def _start_parse(folder: Path) -> subprocess.Popen | None:
    """`dbt parse --target warm` of the project, beside the JVM's start. dbt keeps one
    partial-parse state in its target path and starts it over when the target changes
    (its state check hashes the target's name and connection), so the first dbt command
    after `up`, coming from the `local` target, parsed every file again (~4 s of a
    trivial run-operation's 6.3 s). `--target warm` and DBT_TARGET=warm are one flag to
    dbt, so either form of the next command finds this parse. Its output goes to
    parse.log; a failed parse costs only that command its parse. None: no dbt project
    here (the project dir as the jobs find it), or no dbt beside this Python."""
    from python_jobs.project import project_root

    try:
        root = project_root()
    except ProjectError:
        return None
    if importlib.util.find_spec("dbt.cli.main") is None:
        return None
    missing = _no_warm_output()
    if missing is not None:
        print(missing)
        return None
    with (folder / "parse.log").open("w") as handle:
        return subprocess.Popen(
            [
                sys.executable,
                "-c",
                DBT_MAIN,
                "parse",
                "--target",
                "warm",
                "--project-dir",
                str(root),
            ],
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=root,
        )


def _no_warm_output() -> str | None:
    """What to say when the project's profile has no ``warm`` output (an adopter's,
    docs/guides/adopt.md): dbt cannot reach the engine without one, the jobs still run in
    it, and there is nothing to parse for. None when it has one, or when the profile
    cannot be read here: dbt's own parse then says why in parse.log."""
    import yaml

    from python_jobs.project import profile_outputs

    try:
        path, name, outputs = profile_outputs()
    except (ProjectError, OSError, yaml.YAMLError):
        return None
    if "warm" in outputs:
        return None
    return (
        f"note: profile {name!r} ({path}) has no `warm` output, so dbt cannot use the engine "
        '(the jobs run in it all the same); add the one in docs/guides/adopt.md, "The warm '
        'engine", then `dbt ... --target warm`'
    )


def _finish_parse(parse: subprocess.Popen | None, deadline: float, log: Path) -> None:
    """Wait for the parse `_start_parse` began; say so when it failed."""
    if parse is None:
        return
    try:
        code = parse.wait(timeout=max(deadline - time.monotonic(), 1))
    except subprocess.TimeoutExpired:
        parse.kill()
        parse.wait()
        code = None
    if code != 0:
        print(
            f"note: `dbt parse --target warm` {'timed out' if code is None else f'failed (exit {code})'} "
            f"(its output: {log}); the first dbt command parses the project itself"
        )


def down(timeout: float = 60) -> bool:
    """Stop the engine; False when none was running."""
    try:
        state = json.loads(_state_file().read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        print("engine not running")
        return False
    pid = int(state["pid"])
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(pid) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.3)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    _state_file().unlink(missing_ok=True)
    _socket_path().unlink(missing_ok=True)
    _token_file().unlink(missing_ok=True)
    print("engine down")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.engine"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=["up", "down", "status", "target", "serve"])
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.action == "up":
            up()
        elif args.action == "down":
            down()
        elif args.action == "target":
            print("warm" if running() else "local")
        elif args.action == "serve":
            return serve(args.port or _port())
        else:
            state = read_state()
            if state is None:
                print("engine not running")
                return 1
            print(
                f"engine up: pid {state['pid']}, thrift {HOST}:{state['port']}, {state['socket']}"
            )
        return 0
    except ProjectError as error:
        print(f"engine: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
