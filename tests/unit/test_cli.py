"""The gdpr-lakehouse command, and how the jobs find an adopter's project (no JVM)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from python_jobs import cli, project
from tests.dbt_harness import ROOT

ADOPTER = ROOT / "tests" / "adopter"


def test_help_lists_every_command() -> None:
    script = Path(sys.executable).parent / "gdpr-lakehouse"
    run = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    for command in cli.COMMANDS:
        assert f"\n  {command} " in run.stdout


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_has_its_own_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([command, "--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: gdpr-lakehouse {command} ")


def test_a_plain_install_exposes_the_command(tmp_path: Path) -> None:
    # built from a copy: setuptools writes build/ and egg-info beside the sources
    source = tmp_path / "source"
    for package in ("python_jobs", "demo"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("gdpr_lakehouse-*.whl")
    installed = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(installed)
        entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
        assert "gdpr-lakehouse = python_jobs.cli:entry" in archive.read(entry_points).decode()
        # the engine only: the demo's generator and runner stay in the checkout
        shipped = {n.split("/")[0] for n in archive.namelist()}
        assert shipped == {"python_jobs", wheel.name.split("-py3")[0] + ".dist-info"}, shipped
    run = subprocess.run(
        [sys.executable, "-c", "from python_jobs.cli import entry; entry()", "--help"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "usage: gdpr-lakehouse" in run.stdout


def test_a_folder_without_a_dbt_project_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the command sets it for the jobs it runs; put it back after the test
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(ROOT))
    assert cli.main(["--project-dir", str(tmp_path), "report"]) == 2
    assert f"{tmp_path} is not a dbt project" in capsys.readouterr().err


def test_the_adopters_project_is_found_from_its_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LAKEHOUSE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("DBT_PROFILES_DIR", raising=False)
    monkeypatch.delenv("DBT_TARGET", raising=False)
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path / "crm_state"))
    monkeypatch.chdir(ADOPTER)
    assert project.project_root() == ADOPTER
    assert project.profile_name() == "crm"
    assert project.profiles_file() == ADOPTER / "profiles.yml"
    settings = project.spark_parameters()
    # the adopter's own session target over the engine's settings
    assert settings["spark.sql.warehouse.dir"] == f"{tmp_path}/crm_state/warehouse"
    assert settings["spark.sql.shuffle.partitions"] == "2"
    assert settings["spark.databricks.delta.snapshotPartitions"] == "2"  # the engine's
    assert project.project_vars()["gdpr_lakehouse_demo"] is False


def test_the_engine_settings_come_from_the_package_when_installed_plain(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a plain pip install has no profiles.yml beside python_jobs: the engine's dbt
    # package that `dbt deps` put in the project is read instead
    monkeypatch.setattr(project, "package_root", lambda: tmp_path / "site-packages")
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(tmp_path / "crm"))
    (tmp_path / "crm").mkdir()
    (tmp_path / "crm" / "dbt_project.yml").write_text("name: crm\nprofile: crm\n")
    with pytest.raises(project.ProjectError, match="run `dbt deps`"):
        project.engine_root()
    (tmp_path / "crm" / "dbt_packages").mkdir()
    (tmp_path / "crm" / "dbt_packages" / "gdpr_lakehouse").symlink_to(ROOT)
    assert project.engine_root() == ROOT


def test_the_thrift_servers_this_project_starts_answer_synchronously() -> None:
    """dbt-spark asks a Thrift server whether a statement is done and, when not, sleeps
    its poll interval (5 s by default) before asking again: every statement still
    running at the first poll cost 5-10 s. The warm engine and the loopback cluster
    run each statement inside the call; other servers are polled every second."""
    import yaml

    from python_jobs import cluster, engine

    assert engine.engine_settings(10999)["spark.sql.hive.thriftServer.async"] == "false"
    ports = cluster.Ports(master=7001, thrift=10001, derby=1528)
    assert cluster._thrift_settings(ports)["spark.sql.hive.thriftServer.async"] == "false"
    outputs = yaml.safe_load((ROOT / "profiles.yml").read_text())["gdpr_lakehouse"]["outputs"]
    assert outputs["warm"]["poll_interval"] == outputs["thrift"]["poll_interval"] == 1
