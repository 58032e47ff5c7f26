"""The class archive's settings, stamp and the venv hook that names it to the JVM
(python_jobs.class_archive, python_jobs.kek_hook); that every JVM of the local target
maps it is tests/functional/test_class_archive.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from python_jobs import class_archive, jars, kek_hook, spark
from python_jobs.spark import jars_by_path

JVM = kek_hook.JVM_ARCHIVE_ENV


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


@pytest.mark.parametrize("named", ["/srv/cds/classes.jsa", None])
def test_the_profile_names_the_archive_the_hook_found(
    monkeypatch: pytest.MonkeyPatch, named: str | None
) -> None:
    """The JVM's messages about an archive it cannot use are off, and
    LAKEHOUSE_JAVA_OPTIONS still comes last."""
    monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", "-Xshare:on")
    if named is None:
        monkeypatch.delenv(JVM, raising=False)
    else:
        monkeypatch.setenv(JVM, named)
    options = spark.spark_settings()["spark.driver.extraJavaOptions"]
    expected = [f"-XX:SharedArchiveFile={named}", "-Xlog:cds*=off"] if named else []
    assert _archive_flags(options) == expected
    assert options.endswith(" -Xshare:on")


def _archive(folder: Path, size: int = 1000, recorded: int | None = None) -> Path:
    archive = folder / "spark-classes.jsa"
    archive.write_bytes(b"\0" * size)
    archive.chmod(0o600)
    stamp = archive.with_name(archive.name + ".stamp")
    stamp.write_text(f"{'a' * 64} {size if recorded is None else recorded}\n")
    return archive


def _named(monkeypatch: pytest.MonkeyPatch, setting: str | None) -> str | None:
    monkeypatch.setenv(JVM, "/inherited/from/a/parent.jsa")  # always decided again
    if setting is None:
        monkeypatch.delenv(kek_hook.ARCHIVE_ENV, raising=False)
    else:
        monkeypatch.setenv(kek_hook.ARCHIVE_ENV, setting)
    kek_hook.load_class_archive()
    return os.environ.get(JVM)


def test_the_hook_names_only_a_whole_archive_no_other_user_may_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _archive(tmp_path)
    assert _named(monkeypatch, str(archive)) == str(archive)
    assert _named(monkeypatch, "") is None  # off
    # cut short (a JVM would die of SIGBUS mapping it), or longer than recorded
    assert _named(monkeypatch, str(_archive(tmp_path, recorded=2000))) is None
    assert _named(monkeypatch, str(_archive(tmp_path, size=3000, recorded=1000))) is None
    # writable by the group (the JVM runs what it holds)
    archive = _archive(tmp_path)
    archive.chmod(0o620)
    assert _named(monkeypatch, str(archive)) is None
    archive.chmod(0o640)  # readable is fine
    assert _named(monkeypatch, str(archive)) == str(archive)
    # in a folder whose name has a space: Spark would split the option in two there
    spaced = tmp_path / "with space"
    spaced.mkdir()
    assert _named(monkeypatch, str(_archive(spaced))) is None
    # a link to it, no stamp, nothing there
    link = tmp_path / "link.jsa"
    link.symlink_to(archive)
    link.with_name("link.jsa.stamp").write_text(
        archive.with_name("spark-classes.jsa.stamp").read_text()
    )
    assert _named(monkeypatch, str(link)) is None
    archive.with_name("spark-classes.jsa.stamp").unlink()
    assert _named(monkeypatch, str(archive)) is None
    assert _named(monkeypatch, str(tmp_path / "none.jsa")) is None


def test_by_default_the_archive_is_in_this_venv_and_none_outside_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(kek_hook.ARCHIVE_ENV, raising=False)
    if sys.prefix != sys.base_prefix:
        expected = Path(sys.prefix) / "gdpr_lakehouse" / "spark-classes.jsa"
        assert class_archive.archive_path() == expected
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    assert class_archive.archive_path() is None
    assert class_archive.main([]) == 0
    assert "none (this Python runs in no venv)" in capsys.readouterr().out
    monkeypatch.setenv(kek_hook.ARCHIVE_ENV, "")
    assert class_archive.main([]) == 0
    assert "none (LAKEHOUSE_CLASS_ARCHIVE is empty)" in capsys.readouterr().out


def test_an_archive_is_current_only_with_the_stamp_of_what_it_would_be_made_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAKEHOUSE_JAVA_OPTIONS", raising=False)
    archive = tmp_path / "classes.jsa"
    assert not class_archive.current(archive)  # neither
    archive.write_bytes(b"archived classes")
    assert not class_archive.current(archive)  # no stamp
    stamp = archive.with_name("classes.jsa.stamp")
    stamp.write_text(f"{class_archive.stamp()} {archive.stat().st_size}\n")
    assert class_archive.current(archive)
    # another JVM flag (or jar, JDK, pyspark): made again by the next set-up
    monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", "-XX:CompileThresholdScaling=1")
    assert not class_archive.current(archive)
    monkeypatch.delenv("LAKEHOUSE_JAVA_OPTIONS")
    archive.write_bytes(b"archived classes, damaged")
    assert not class_archive.current(archive)  # not the size recorded
    archive.unlink()
    assert not class_archive.current(archive)  # a stamp alone


def test_the_jvm_that_makes_the_archive_holds_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its classes are what every later JVM maps: made in a throw-away lakehouse, on the
    embedded session, with no key, token or dbt secret in its environment, and with the
    user's JVM flags first (a later -XX flag wins)."""
    monkeypatch.setenv("LAKEHOUSE_KEK", "ab" * 32)
    monkeypatch.setenv("DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN", "cd" * 32)
    monkeypatch.setenv("LAKEHOUSE_SPARK_MASTER", "spark://127.0.0.1:7077")
    monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", "-Xmx2g")
    monkeypatch.setenv(JVM, "/srv/old.jsa")
    made = tmp_path / "made.jsa"
    env = class_archive.training_env(tmp_path, made)
    assert "LAKEHOUSE_KEK" not in env and env["LAKEHOUSE_KEK_FILE"] == ""
    assert not [key for key in env if key.startswith("DBT_ENV_SECRET")]
    assert "LAKEHOUSE_SPARK_MASTER" not in env and JVM not in env
    assert env[kek_hook.ARCHIVE_ENV] == "" and env["LAKEHOUSE_ENGINE"] == "off"
    assert env["LAKEHOUSE_DIR"] == str(tmp_path / "lakehouse")
    assert env["LAKEHOUSE_JAVA_OPTIONS"] == f"-Xmx2g -XX:ArchiveClassesAtExit={made} -Xlog:cds*=off"


def test_the_workload_is_one_statement_per_unindented_line() -> None:
    statements = class_archive._statements()
    unindented = [
        line for line in class_archive.WORKLOAD.strip().splitlines() if not line.startswith(" ")
    ]
    assert len(statements) == len(unindented) > 20
    assert statements[1].startswith("create table cds.people (") and statements[1].endswith(
        "'delta.enableDeletionVectors' = 'true')"
    )


def test_check_fails_on_a_missing_or_stale_archive_and_path_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--check` (what a script asks before relying on it) exits 1 and makes nothing."""
    archive = tmp_path / "spark-classes.jsa"
    monkeypatch.setenv(kek_hook.ARCHIVE_ENV, str(archive))
    assert class_archive.main(["path"]) == 0
    assert capsys.readouterr().out.strip() == str(archive)
    assert class_archive.main(["--check"]) == 1
    assert f"missing or stale: {archive}" in capsys.readouterr().err
    _archive(tmp_path)  # whole, but its stamp is not of what it would be made from
    assert class_archive.main(["--check"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [archive.name, archive.name + ".stamp"]
