"""The warm engine's client side and its arguments (no JVM; tests/functional/test_bench.py
runs the engine itself, through bench/warm.py, end to end)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from python_jobs import engine
from tests.dbt_harness import ROOT


@pytest.fixture
def lakehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))
    monkeypatch.delenv("LAKEHOUSE_ENGINE", raising=False)
    return tmp_path


def _state(lakehouse: Path, pid: int) -> None:
    folder = lakehouse / "engine"
    folder.mkdir(parents=True, exist_ok=True)
    state = {"pid": pid, "port": 10009, "socket": str(folder / "engine.sock"), "ready": True}
    (folder / "engine.json").write_text(json.dumps(state))


def test_without_an_engine_jobs_run_in_their_own_jvm_and_dbt_uses_local(
    lakehouse: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert engine.route("python_jobs.purge", []) is None
    assert engine.main(["target"]) == 0
    assert capsys.readouterr().out == "local\n"
    assert engine.main(["status"]) == 1


def test_a_state_file_left_by_a_dead_engine_is_not_an_engine(lakehouse: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _state(lakehouse, dead.pid)
    assert not engine.running()
    assert engine.route("python_jobs.report", []) is None


def test_which_jobs_run_warm(lakehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live engine whose socket does not answer: a job that runs warm says so and
    names the way out; one that does not run warm never tries the socket."""
    _state(lakehouse, os.getpid())
    assert engine.running()
    with pytest.raises(engine.ProjectError, match=r"does not answer.*LAKEHOUSE_ENGINE=off"):
        engine.route("python_jobs.audit_stream", ["--once"])
    assert engine.route("python_jobs.audit_stream", ["--follow"]) is None  # its own JVM
    assert engine.route("demo.generate", []) is None  # not a warm job
    monkeypatch.setenv("LAKEHOUSE_ENGINE", "off")
    assert engine.route("python_jobs.purge", []) is None


def test_up_with_the_engine_already_up_gives_this_process_its_token(
    lakehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An in-process caller (a test, `make run`) started before the engine: `up` finds it
    running and gives dbt's warm target the live token, replacing an older one."""
    monkeypatch.setenv("DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN", "0" * 64)
    _state(lakehouse, os.getpid())
    token = lakehouse / "engine" / "token"
    token.write_text("c3" * 32 + "\n")
    token.chmod(0o600)
    assert engine.up()["pid"] == os.getpid()
    assert os.environ["DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN"] == "c3" * 32


def test_a_job_needing_the_metastore_refuses_while_the_engine_holds_it(lakehouse: Path) -> None:
    """Two JVMs cannot open one embedded Derby metastore: say so before starting one."""
    from python_jobs import spark

    _state(lakehouse, os.getpid())
    with pytest.raises(engine.ProjectError, match=r"warm engine .* holds the local metastore"):
        spark.get_spark("unit")


@pytest.mark.parametrize("port", ["80", "99999", "ten", ""])
def test_a_bad_port_is_refused_before_anything_starts(lakehouse: Path, port: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "python_jobs.engine", "up"],
        cwd=ROOT,
        env={**os.environ, "LAKEHOUSE_DIR": str(lakehouse), "LAKEHOUSE_ENGINE_PORT": port},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "LAKEHOUSE_ENGINE_PORT must be a port from 1024 to 65535" in run.stderr
    assert not (lakehouse / "engine").exists()


def test_down_without_an_engine_is_a_no_op(
    lakehouse: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert engine.main(["down"]) == 0
    assert capsys.readouterr().out == "engine not running\n"


def test_the_warm_target_reaches_the_engines_port(monkeypatch: pytest.MonkeyPatch) -> None:
    from python_jobs import project

    monkeypatch.setenv("LAKEHOUSE_ENGINE_PORT", "10123")
    monkeypatch.setenv("DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN", "7a" * 32)
    warm = project.profile_target("warm")
    assert (warm["method"], warm["host"], int(warm["port"]), int(warm["threads"])) == (
        "thrift",
        engine.HOST,
        10123,
        1,
    )
    # the engine admits only its token (tests/adversarial/test_engine_access.py)
    assert (warm["auth"], warm["password"]) == ("CUSTOM", "7a" * 32)
    settings = engine.engine_settings(10123)
    assert settings["spark.hadoop.hive.server2.authentication"] == "CUSTOM"
    assert settings["spark.hadoop.hive.server2.custom.authentication.class"] == engine.AUTHENTICATOR


def test_the_thrift_target_sends_the_clusters_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loopback cluster's Thrift server admits only its token (python_jobs.cluster;
    tests/integration/test_thrift_cluster.py); a server without authentication takes any
    password but an empty one: without the variable, the target sends "x"."""
    from python_jobs import project

    monkeypatch.setenv("DBT_ENV_SECRET_SPARK_THRIFT_PASSWORD", "3c" * 32)
    thrift = project.profile_target("thrift")
    assert (thrift["auth"], thrift["password"]) == ("CUSTOM", "3c" * 32)
    monkeypatch.delenv("DBT_ENV_SECRET_SPARK_THRIFT_PASSWORD")
    assert project.profile_target("thrift")["password"] == "x"


_PROBE = """
public class Probe {
    public static void main(String[] args) throws Exception {
        Class.forName("org.apache.hadoop.hive.ql.exec.FunctionRegistry");
        System.out.println("loaded");
    }
}
"""


def _thrift_classpath(server: str, spark_jars: Path) -> str:
    """The server JVM's class path as Spark's launcher orders it: the driver's extra
    class path, Spark's jars, then SPARK_DIST_CLASSPATH (the engine's Hive jar)."""
    if server == "engine":
        extra = engine.engine_settings(10999)["spark.driver.extraClassPath"]
        return os.pathsep.join([extra, str(spark_jars), engine.dist_classpath()])
    from python_jobs import cluster

    return os.pathsep.join([cluster.thrift_driver_classpath(), str(spark_jars)])


@pytest.mark.parametrize("server", ["engine", "cluster"])
def test_the_thrift_servers_class_path_initializes_hives_function_registry(
    server: str, tmp_path: Path
) -> None:
    """Closing a Thrift session can initialize Hive's FunctionRegistry (SessionState.close
    -> Hive.get -> registerAllFunctionsOnce), whose static initializer needs hive-llap-common,
    a jar Spark 4 no longer ships (apache/spark#49736). Without it CloseSession fails with
    NoClassDefFoundError LlapSigner$Signable and the dbt command that closed the session
    exits 2 (seen once in CI on the loopback cluster). Both servers' class path (the
    engine's Hive jar after Spark's own) loads the class: a real JVM, the same class path."""
    import pyspark

    probe = tmp_path / "Probe.java"
    probe.write_text(_PROBE)
    spark_jars = Path(pyspark.__file__).parent / "jars" / "*"
    classpath = _thrift_classpath(server, spark_jars)
    run = subprocess.run(
        ["java", "--add-opens=java.base/java.net=ALL-UNNAMED", "-cp", classpath, str(probe)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout.strip() == "loaded", run.stderr[-2000:]


def test_up_parses_only_a_dbt_project_and_says_when_the_parse_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`up` runs `dbt parse --target warm` beside the JVM's start (engine._start_parse):
    not where no dbt project is; a parse that fails does not stop `up`, it says so."""
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(tmp_path))  # no dbt_project.yml there
    assert engine._start_parse(tmp_path) is None
    failed = subprocess.Popen([sys.executable, "-c", "raise SystemExit(2)"])
    engine._finish_parse(failed, float("inf"), tmp_path / "parse.log")
    assert "`dbt parse --target warm` failed (exit 2)" in capsys.readouterr().out
    parsed = subprocess.Popen([sys.executable, "-c", "pass"])
    engine._finish_parse(parsed, float("inf"), tmp_path / "parse.log")
    assert capsys.readouterr().out == ""


def _project_without_warm_output(tmp_path: Path) -> Path:
    """A dbt project whose profile has a `local` output only, as an adopter's had."""
    project = tmp_path / "crm"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: crm\nprofile: crm\n")
    (project / "profiles.yml").write_text(
        "crm:\n  target: local\n  outputs:\n    local:\n      type: spark\n      method: session\n"
    )
    return project


def test_up_says_when_the_profile_has_no_warm_output_and_parses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An adopter's profile without a `warm` output (tests/adopter before it had one):
    dbt cannot reach the engine, so `up` parses nothing and says what to add, once,
    instead of a failed parse's note at every start. The project's own profile and the
    adopter's have one."""
    project = _project_without_warm_output(tmp_path)
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(project))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(project))
    assert engine._start_parse(tmp_path) is None
    said = capsys.readouterr().out
    assert f"profile 'crm' ({project / 'profiles.yml'}) has no `warm` output" in said
    assert "docs/guides/adopt.md" in said
    assert not (tmp_path / "parse.log").exists()
    for folder in (ROOT, ROOT / "tests" / "adopter"):
        monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(folder))
        monkeypatch.setenv("DBT_PROFILES_DIR", str(folder))
        assert engine._no_warm_output() is None, folder


def test_up_tells_dbt_to_use_the_engine_only_when_the_profile_has_a_warm_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`up`'s last line named `dbt --target warm` and `export DBT_TARGET=warm` to a
    project whose profile has no `warm` output, right after the note saying dbt cannot
    use the engine: a command that could only fail. There it says the jobs run in the
    engine and dbt stays on its own targets."""
    project = _project_without_warm_output(tmp_path)
    log = tmp_path / "engine.log"
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(project))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(project))
    without = engine._ready_message(10009, log)
    assert "--target warm" not in without and "DBT_TARGET" not in without
    assert "jobs run in it while it is up" in without and "has a `warm` output" in without
    assert str(log) in without
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(ROOT))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(ROOT))
    with_warm = engine._ready_message(10009, log)
    assert with_warm.startswith("engine up: dbt --target warm (thrift 127.0.0.1:10009")
    assert "`export DBT_TARGET=warm`" in with_warm and str(log) in with_warm
