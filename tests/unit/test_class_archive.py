"""The class archive's settings and stamp (python_jobs.class_archive); that every JVM of
the local target maps it is tests/functional/test_class_archive.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from python_jobs import class_archive, jars, spark
from python_jobs.spark import jars_by_path
from tests.dbt_harness import ROOT

DEFAULT = ROOT / ".venv" / "gdpr_lakehouse" / "spark-classes.jsa"


def _archive_flags(options: str) -> list[str]:
    return [flag for flag in options.split() if "SharedArchiveFile" in flag or "cds" in flag]


def test_dbt_and_the_jobs_start_their_jvm_on_one_class_path() -> None:
    """The archive holds classes of the class path it was made on, and a JVM maps it only
    when its own class path starts with that one: dbt's session (profiles.yml as it is)
    and the jobs' (jars_by_path). Not the warm engine's: its Thrift server's jar comes
    between these and Spark's own jars, so it loads its classes itself (once a day)."""
    settings = spark.spark_settings()
    dbt = settings["spark.driver.extraClassPath"]
    assert jars_by_path(settings)["spark.driver.extraClassPath"] == dbt
    assert dbt.split(os.pathsep)[-1] == str(jars.OWN.jar)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, DEFAULT), ("/srv/cds/classes.jsa", Path("/srv/cds/classes.jsa")), ("", None)],
)
def test_the_profile_and_the_job_name_one_archive(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: Path | None
) -> None:
    """LAKEHOUSE_CLASS_ARCHIVE moves it, empty turns it off; the JVM's messages about an
    archive it cannot use are off, and LAKEHOUSE_JAVA_OPTIONS still comes last."""
    monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", "-Xshare:on")
    if value is None:
        monkeypatch.delenv(class_archive.ENV, raising=False)
    else:
        monkeypatch.setenv(class_archive.ENV, value)
    options = spark.spark_settings()["spark.driver.extraJavaOptions"]
    assert class_archive.archive_path() == expected
    if expected is None:
        assert _archive_flags(options) == []
    else:
        assert _archive_flags(options) == [f"-XX:SharedArchiveFile={expected}", "-Xlog:cds*=off"]
    assert options.endswith(" -Xshare:on")


def test_an_archive_is_current_only_with_the_stamp_of_what_it_would_be_made_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAKEHOUSE_JAVA_OPTIONS", raising=False)
    archive = tmp_path / "classes.jsa"
    assert not class_archive.current(archive)  # neither
    archive.write_bytes(b"archived classes")
    assert not class_archive.current(archive)  # no stamp
    stamp = archive.with_name("classes.jsa.stamp")
    stamp.write_text(class_archive.stamp() + "\n")
    assert class_archive.current(archive)
    # another JVM flag (or jar, JDK, pyspark): made again by the next set-up
    monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", "-XX:CompileThresholdScaling=1")
    assert not class_archive.current(archive)
    monkeypatch.delenv("LAKEHOUSE_JAVA_OPTIONS")
    archive.unlink()
    assert not class_archive.current(archive)  # a stamp alone


def test_with_the_setting_empty_set_up_makes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(class_archive.ENV, "")
    assert class_archive.main([]) == 0
    assert "none (LAKEHOUSE_CLASS_ARCHIVE is empty)" in capsys.readouterr().out
    # a project whose .venv is not this Python's: none made there either
    monkeypatch.delenv(class_archive.ENV)
    monkeypatch.setenv("LAKEHOUSE_PROJECT_DIR", str(tmp_path))
    (tmp_path / "dbt_project.yml").write_text("name: adopter\n")
    assert class_archive.main([]) == 0
    assert "is not the venv of this Python" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dbt_project.yml"]


def test_the_workload_is_one_statement_per_unindented_line() -> None:
    statements = class_archive._statements()
    unindented = [
        line for line in class_archive.WORKLOAD.strip().splitlines() if not line.startswith(" ")
    ]
    assert len(statements) == len(unindented) > 20
    assert statements[1].startswith("create table cds.people (") and statements[1].endswith(
        "'delta.enableDeletionVectors' = 'true')"
    )
